/*
 * slurm_state.c — the slurm transport's pure pieces: what a scheduler state means for
 * a job, the parsing of `scontrol -o -d show job` and the sbatch command line of an
 * allocation. Nothing here runs a command (slurm.c does).
 */
#include "sandbox/sandbox.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum aka_slurm_phase aka_slurm_phase(const char *state)
{
    /* States in which the allocation may still start; every other one (PREEMPTED,
     * NODE_FAIL, CANCELLED, TIMEOUT, BOOT_FAIL, DEADLINE, FAILED, OUT_OF_MEMORY,
     * SUSPENDED, COMPLETED, ...) means the node is not, or no longer, ours. Unknown
     * states are ended: a job is never run on an allocation aka cannot vouch for. */
    static const char *const waiting[] = {
        "PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD", NULL};
    if (!state)
        return AKA_SLURM_ENDED;
    if (strcmp(state, "RUNNING") == 0)
        return AKA_SLURM_RUNNING;
    for (const char *const *w = waiting; *w; w++)
        if (strcmp(state, *w) == 0)
            return AKA_SLURM_WAITING;
    return AKA_SLURM_ENDED;
}

/* The value of " KEY=" in line (up to the next space) into out; false when absent. */
static bool field(const char *line, const char *key, char *out, size_t n)
{
    size_t klen = strlen(key);
    for (const char *p = line; (p = strstr(p, key)) != NULL; p += klen) {
        if ((p != line && !isspace((unsigned char)p[-1])) || p[klen] != '=')
            continue;
        const char *v = p + klen + 1;
        size_t len = strcspn(v, " \t\n");
        snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), v);
        return true;
    }
    return false;
}

/* "0-1,3" into ids; false when malformed or too many. */
static bool parse_ranges(const char *s, int *ids, size_t *n)
{
    *n = 0;
    while (*s) {
        char *end;
        long lo = strtol(s, &end, 10), hi = lo;
        if (end == s || lo < 0)
            return false;
        if (*end == '-') {
            s = end + 1;
            hi = strtol(s, &end, 10);
            if (end == s || hi < lo)
                return false;
        }
        for (long i = lo; i <= hi; i++) {
            if (*n >= AKA_SBX_MAX_GPUS || i > 255)
                return false;
            ids[(*n)++] = (int)i;
        }
        if (*end != ',' && *end != '\0')
            return false;
        s = *end == ',' ? end + 1 : end;
    }
    return true;
}

/* The node's GPU indices, from GRES=gpu[:type]:N(IDX:0-1) of the detailed output. */
static int parse_gpu_idx(const char *line, struct aka_slurm_job_info *out, struct aka_err *err)
{
    const char *g = strstr(line, "GRES=gpu");
    const char *idx = g ? strstr(g, "(IDX:") : NULL;
    char list[256];
    if (!idx)
        return 0;
    idx += 5;
    size_t len = strcspn(idx, ")");
    snprintf(list, sizeof(list), "%.*s", (int)(len < sizeof(list) ? len : sizeof(list) - 1), idx);
    if (!parse_ranges(list, out->gpu_ids, &out->n_gpu_ids))
        return aka_err_set(err, AKA_EXIT_ENV,
                           "scontrol: expected a GPU index list such as IDX:0-1; got 'IDX:%s'",
                           list);
    return 0;
}

int aka_slurm_parse_job(const char *line, struct aka_slurm_job_info *out, struct aka_err *err)
{
    memset(out, 0, sizeof(*out));
    if (!field(line, "JobState", out->state, sizeof(out->state)) || !out->state[0])
        return aka_err_set(err, AKA_EXIT_ENV, "scontrol: expected JobState=...; got '%.200s'",
                           line);
    field(line, "Reason", out->reason, sizeof(out->reason));
    return parse_gpu_idx(line, out, err);
}

void aka_slurm_sbatch_argv(const struct aka_sandbox_slurm_opts *o, int gpu_count, long timeout_s,
                           const char *name, struct strvec *argv)
{
    strvec_pushv(argv, (const char *const[]){"sbatch", "--parsable", "--nodes=1", "--ntasks=1",
                                             "--no-requeue", "--output=/dev/null", NULL});
    strvec_pushf(argv, "--partition=%s", o->partition);
    if (o->account && *o->account)
        strvec_pushf(argv, "--account=%s", o->account);
    if (o->qos && *o->qos)
        strvec_pushf(argv, "--qos=%s", o->qos);
    if (o->time && *o->time)
        strvec_pushf(argv, "--time=%s", o->time);
    else /* the job's own limit plus the time to start and end its step, whole minutes */
        strvec_pushf(argv, "--time=%ld", (timeout_s + 300 + 59) / 60);
    if (gpu_count > 0)
        strvec_pushf(argv, "--gres=gpu:%d", gpu_count);
    strvec_pushf(argv, "--job-name=%s", name);
    /* The holder only keeps the allocation; the job runs as a step beside it. */
    strvec_push(argv, "--wrap=exec sleep 2147483647");
}
