/*
 * health.c — health probes (DESIGN §7): a shell command that checks the machine,
 * run where a transport runs its jobs.
 *
 * The probe is an ordinary job of the transport — the same isolation, the GPU nodes
 * the evaluation gets, python3's prefix bound as for an evaluation — so a probe that
 * passes says that an evaluation's environment works, not some other one. It ships
 * nothing: no candidate code ever runs in it. It first writes 1 MiB into its job
 * directory, which lives on the same disk as every evaluation's: a full disk fails
 * the probe whatever the command prints (and whatever a candidate printed).
 */
#include "sandbox/internal.h"

#include <stdio.h>
#include <string.h>

#define DISK_CHECK "head -c 1048576 /dev/zero >.aka-health-space && rm -f .aka-health-space"

/* The last AKA_SBX_PROBE_TAIL bytes of a, then b. */
static void keep_tail(struct aka_sandbox_health *h, const struct strbuf *a, const struct strbuf *b)
{
    struct strbuf all = STRBUF_INIT;
    strbuf_add(&all, a->buf, a->len);
    strbuf_add(&all, b->buf, b->len);
    strbuf_trim(&all);
    size_t n = all.len > AKA_SBX_PROBE_TAIL ? AKA_SBX_PROBE_TAIL : all.len;
    snprintf(h->output, sizeof(h->output), "%s", all.buf + all.len - n);
    strbuf_release(&all);
}

static int probe_job(const struct aka_sandbox_transport *t, const struct aka_sandbox_probe *p,
                     struct aka_sandbox_job *job, struct aka_err *err)
{
    struct strbuf cmd = STRBUF_INIT;
    strbuf_addstr(&cmd, DISK_CHECK);
    if (p->command && *p->command)
        strbuf_addf(&cmd, " && (%s)", p->command);
    job->isolation = t->isolation;
    job->timeout_s = AKA_SBX_PROBE_TIMEOUT_S;
    job->stdout_cap = job->stderr_cap = (size_t)64 << 10;
    job->gpu_count = p->gpu_count;
    job->gpu_vendor = p->gpu_vendor;
    job->detect_python = true; /* the interpreter evaluations use, torch included */
    job->in_agent_sandbox = p->in_agent_sandbox;
    strvec_pushv(&job->argv, (const char *const[]){"sh", "-c", cmd.buf, NULL});
    strbuf_release(&cmd);
    return aka_sandbox_job_validate(job, err);
}

int sbx_probe_job(const struct aka_sandbox_transport *t, const struct aka_sandbox_probe *p,
                  struct aka_sandbox_health *h)
{
    struct aka_sandbox_job job;
    struct aka_sandbox_result res;
    struct aka_err err = AKA_ERR_INIT;
    aka_sandbox_job_init(&job, AKA_SBX_CHECK);
    aka_sandbox_result_init(&res);
    int rc = probe_job(t, p, &job, &err);
    if (rc == 0)
        rc = aka_sandbox_run(t, &job, &res, &err);
    if (rc < 0) {
        h->ok = false;
        h->exit_code = err.code ? err.code : AKA_EXIT_ENV;
        snprintf(h->output, sizeof(h->output), "%s", err.msg);
    } else {
        h->ok = res.exit_code == 0 && !res.timed_out;
        h->exit_code = res.exit_code;
        keep_tail(h, &res.out, &res.err);
    }
    aka_sandbox_result_release(&res);
    aka_sandbox_job_release(&job);
    return 0;
}

void aka_sandbox_probe_health(const struct aka_sandbox_transport *t,
                              const struct aka_sandbox_probe *p, struct aka_sandbox_health *h)
{
    memset(h, 0, sizeof(*h));
    if (!t->ops->probe_health) {
        h->ok = true;
        snprintf(h->output, sizeof(h->output), "the %s transport has no health probe",
                 t->ops->name);
        return;
    }
    t->ops->probe_health(t, p, h);
}
