/*
 * slurm.c — the slurm transport: one job as one Slurm allocation, run on its node.
 *
 *   stage (as local.c, under a directory the nodes share at the same path)
 *   → sbatch a holder that only sleeps (--gres=gpu:N for N GPUs) → poll scontrol until
 *   the allocation runs (PENDING waits; any other state is the environment's) → srun
 *   --jobid a step: `env -i` the job's clean environment, then the same bwrap argv as the
 *   local transport, with the allocated GPUs' device nodes of that node → ask scontrol
 *   again: an allocation that is no longer RUNNING ended under the job (preempted,
 *   cancelled, node failure, time limit), so whatever the step returned is the
 *   environment's → scancel the allocation → bring artifacts back → remove the stage.
 *
 * The step's stdout comes through srun's pipe (capped by base/proc); its stderr goes to a
 * file of the stage (srun's own messages stay on srun's stderr, apart from the job's).
 * An allocation that ended under the job is retried in a fresh allocation from a fresh
 * stage, up to AKA_SLURM_ATTEMPTS, and never blamed on the candidate. While held
 * (aka_sandbox_transport_hold: ABBA verification), jobs run as steps of one allocation
 * and such an end is not retried. A stop signal ends srun through base/proc, and the
 * allocation is cancelled on the way out.
 */
#include "sandbox/internal.h"

#include "base/fs.h"
#include "base/proc.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CMD_TIMEOUT_MS 60000 /* one sbatch, scontrol or scancel call */
#define POLL_FIRST_MS  100
#define SETTLE_TRIES   25 /* 5 s of COMPLETING */

struct slurm_ctx {
    const struct aka_sandbox_slurm_opts *o;
    bool hold;
    int hold_jobs;    /* how many job timeouts the held allocation must cover */
    char held_id[32]; /* the held allocation, "" when none */
    int held_gpus;
};

struct slurm_job {
    struct slurm_ctx *ctx;
    const struct aka_sandbox_job *job;
    struct aka_sandbox_result *res;
    struct sbx_stage st;
    struct strbuf prefix;
    struct strvec env;
    char id[32]; /* the allocation the job runs in */
    bool owned;  /* cancelled after the job (not the held one) */
    bool held;   /* ran in the held allocation: an end under it is not retried */
    bool retryable;
    struct aka_slurm_job_info info;
};

static const struct aka_sandbox_transport_ops slurm_ops;

/* ---- talking to the scheduler ---- */

/* A scheduler command whose stdout goes to out (may be NULL); -1 (75) unless it exits 0. */
static int sched(const struct strvec *argv, struct strbuf *out, bool after_stop,
                 struct aka_err *err)
{
    struct proc_spec spec;
    struct proc_result pr;
    memset(&spec, 0, sizeof(spec));
    spec.argv = (const char *const *)argv->v;
    spec.out_mode = spec.err_mode = PROC_TO_BUFFER;
    spec.out_cap = spec.err_cap = (size_t)64 << 10;
    spec.timeout_ms = CMD_TIMEOUT_MS;
    spec.after_stop = after_stop;
    proc_result_init(&pr);
    int rc = proc_run(&spec, &pr, err);
    if (rc == 0 && pr.exit_code != 0) {
        strbuf_trim(&pr.err);
        rc = aka_err_set(err, AKA_EXIT_ENV, "%s failed (exit %d): %.300s", argv->v[0], pr.exit_code,
                         pr.err.buf);
    } else if (rc < 0 && !proc_stop_signal()) {
        err->code = AKA_EXIT_ENV;
    }
    if (rc == 0 && out)
        strbuf_add(out, pr.out.buf, pr.out.len);
    proc_result_release(&pr);
    return rc;
}

static int query(const char *id, struct aka_slurm_job_info *info, struct aka_err *err)
{
    struct strvec argv = STRVEC_INIT;
    struct strbuf out = STRBUF_INIT;
    strvec_pushv(&argv, (const char *const[]){"scontrol", "-o", "-d", "show", "job", id, NULL});
    int rc = sched(&argv, &out, false, err);
    if (rc == 0)
        rc = aka_slurm_parse_job(out.buf, info, err);
    strvec_clear(&argv);
    strbuf_release(&out);
    return rc;
}

/* Best effort: an allocation already gone is what we want anyway. Also after a stop
 * signal (after_stop): stopping is exactly when the allocation must go. */
static void cancel(const char *id)
{
    struct strvec argv = STRVEC_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    if (!id[0])
        return;
    strvec_pushv(&argv, (const char *const[]){"scancel", "--quiet", id, NULL});
    sched(&argv, NULL, true, &ignored);
    strvec_clear(&argv);
}

static int submit(struct slurm_job *sj, int n_jobs, struct aka_err *err)
{
    struct strvec argv = STRVEC_INIT;
    struct strbuf out = STRBUF_INIT, name = STRBUF_INIT;
    strbuf_addf(&name, "aka-%s", aka_basename(sj->st.root.buf));
    aka_slurm_sbatch_argv(sj->ctx->o, sj->job->gpu_count, sj->job->timeout_s * n_jobs, name.buf,
                          &argv);
    int rc = sched(&argv, &out, false, err);
    /* --parsable prints "ID" or "ID;CLUSTER". */
    size_t n = strspn(out.buf, "0123456789");
    if (rc == 0 && (n == 0 || n >= sizeof(sj->id)))
        rc = aka_err_set(err, AKA_EXIT_ENV, "sbatch: expected a job id; got '%.100s'", out.buf);
    if (rc == 0)
        snprintf(sj->id, sizeof(sj->id), "%.*s", (int)n, out.buf);
    strvec_clear(&argv);
    strbuf_release(&out);
    strbuf_release(&name);
    return rc;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Until the allocation runs; a state that can no longer start is the environment's. */
static int wait_running(struct slurm_job *sj, struct aka_err *err)
{
    long max = sj->ctx->o->poll_max_ms > 0 ? sj->ctx->o->poll_max_ms : 2000;
    for (long delay = POLL_FIRST_MS;; delay = delay * 2 > max ? max : delay * 2) {
        if (proc_check_stop(err) < 0)
            return -1;
        if (query(sj->id, &sj->info, err) < 0) {
            sj->retryable = !proc_stop_signal(); /* the scheduler cannot vouch for it */
            return -1;
        }
        enum aka_slurm_phase ph = aka_slurm_phase(sj->info.state);
        if (ph == AKA_SLURM_RUNNING)
            return 0;
        if (ph == AKA_SLURM_ENDED) {
            sj->retryable = true;
            return aka_err_set(err, AKA_EXIT_ENV,
                               "environment: slurm allocation %s ended before the job started: "
                               "%s (reason %s)",
                               sj->id, sj->info.state, sj->info.reason);
        }
        sleep_ms(delay);
    }
}

/* The allocation to run in: the held one when it fits, else a fresh one (held when a hold
 * has none yet; a job of another GPU count, such as a health probe, gets its own). */
static int allocate(struct slurm_job *sj, struct aka_err *err)
{
    struct slurm_ctx *c = sj->ctx;
    if (c->hold && c->held_id[0] && c->held_gpus == sj->job->gpu_count) {
        snprintf(sj->id, sizeof(sj->id), "%s", c->held_id);
        sj->held = true;
        return query(sj->id, &sj->info, err);
    }
    bool take_hold = c->hold && !c->held_id[0];
    if (submit(sj, take_hold ? c->hold_jobs : 1, err) < 0)
        return -1;
    sj->owned = !take_hold;
    sj->held = take_hold;
    if (take_hold) {
        snprintf(c->held_id, sizeof(c->held_id), "%s", sj->id);
        c->held_gpus = sj->job->gpu_count;
    }
    return wait_running(sj, err);
}

/* ---- the step ---- */

/* The bwrap argv with the allocated GPUs' nodes of the node (checked there by bwrap). */
static int step_bwrap(struct slurm_job *sj, struct strvec *a, struct aka_err *err)
{
    struct aka_sandbox_job nogpu = *sj->job; /* shallow: read-only, never released */
    struct aka_dev_nodes nodes;
    struct strvec tail = STRVEC_INIT;
    nogpu.gpu_count = 0;
    nogpu.n_gpu_ids = 0;
    if (sbx_bwrap_argv(&nogpu, "bwrap", sj->st.job.buf, sj->st.ctl.buf, sj->prefix.buf, a, err) < 0)
        return -1;
    if (sj->job->gpu_count == 0)
        return 0;
    if ((size_t)sj->job->gpu_count != sj->info.n_gpu_ids)
        return aka_err_set(err, AKA_EXIT_ENV,
                           "environment: slurm allocation %s has %zu GPU(s); the job needs %d",
                           sj->id, sj->info.n_gpu_ids, sj->job->gpu_count);
    if (aka_platform_dev_nodes(sj->job->gpu_vendor, sj->info.gpu_ids, sj->info.n_gpu_ids, &nodes,
                               err) < 0)
        return -1;
    /* Before the jobdir's --remount-ro: the first one is ours (bwrap options come first). */
    size_t at = 0;
    while (at < a->n && strcmp(a->v[at], "--remount-ro") != 0)
        at++;
    for (size_t i = at; i < a->n; i++)
        strvec_push(&tail, a->v[i]);
    while (a->n > at)
        free(a->v[--a->n]);
    for (size_t i = 0; i < nodes.n; i++) {
        strvec_push(a, nodes.v[i].required ? "--dev-bind" : "--dev-bind-try");
        strvec_pushf(a, "/dev/%s", nodes.v[i].name);
        strvec_pushf(a, "/dev/%s", nodes.v[i].name);
    }
    strvec_pushv(a, (const char *const[]){"--ro-bind", "/sys", "/sys", NULL});
    for (size_t i = 0; i < tail.n; i++)
        strvec_push(a, tail.v[i]);
    strvec_clear(&tail);
    return 0;
}

static void err_file(const struct slurm_job *sj, struct strbuf *out)
{
    aka_path_join(out, sj->st.ctl.buf, "step.err");
}

/* srun --jobid ID ... -- env -i ENV... [CUDA_VISIBLE_DEVICES=...] bwrap ... */
static int step_argv(struct slurm_job *sj, struct strvec *a, struct aka_err *err)
{
    struct strbuf ef = STRBUF_INIT;
    err_file(sj, &ef);
    strvec_pushv(a, (const char *const[]){"srun", "--overlap", "--nodes=1", "--ntasks=1",
                                          "--input=none", "--quiet", NULL});
    strvec_pushf(a, "--jobid=%s", sj->id);
    strvec_pushf(a, "--error=%s", ef.buf);
    if (sj->job->gpu_count > 0)
        strvec_pushf(a, "--gres=gpu:%d", sj->job->gpu_count);
    strvec_pushv(a, (const char *const[]){"--", "env", "-i", NULL});
    for (size_t i = 0; i < sj->env.n; i++)
        strvec_push(a, sj->env.v[i]);
    if (sj->job->gpu_count > 0) {
        struct strvec gpu_env = STRVEC_INIT;
        sbx_gpu_env(sj->info.gpu_ids, sj->info.n_gpu_ids, &gpu_env);
        for (size_t i = 0; i < gpu_env.n; i++)
            strvec_push(a, gpu_env.v[i]);
        strvec_clear(&gpu_env);
    }
    strbuf_release(&ef);
    return step_bwrap(sj, a, err);
}

/* The step's stderr file: the first cap bytes kept, every byte counted. */
static void take_err_file(struct slurm_job *sj)
{
    struct strbuf path = STRBUF_INIT;
    struct stat sb;
    err_file(sj, &path);
    int fd = open(path.buf, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    strbuf_release(&path);
    strbuf_reset(&sj->res->err);
    if (fd < 0 || fstat(fd, &sb) < 0) {
        if (fd >= 0)
            close(fd);
        sj->res->err_bytes = 0;
        return;
    }
    size_t cap = sj->job->stderr_cap, size = (size_t)sb.st_size;
    size_t want = size < cap ? size : cap;
    strbuf_grow(&sj->res->err, want);
    ssize_t n = read(fd, sj->res->err.buf, want);
    close(fd);
    sj->res->err.len = n > 0 ? (size_t)n : 0;
    sj->res->err.buf[sj->res->err.len] = '\0';
    sj->res->err_bytes = size;
    sj->res->err_truncated = size > sj->res->err.len;
}

/* srun's own "srun: error:" lines that are not a task's status: the step never ran. */
static bool srun_failed(const struct strbuf *srun_err, char *line, size_t n)
{
    for (const char *p = srun_err->buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        size_t len = strcspn(p, "\n");
        if (strncmp(p, "srun: error:", 12) == 0 && !memmem(p, len, ": task ", 7)) {
            snprintf(line, n, "%.*s", (int)(len < n ? len : n - 1), p);
            return true;
        }
    }
    return false;
}

static int run_step(struct slurm_job *sj, struct strvec *argv, struct proc_result *pr,
                    struct aka_err *err)
{
    struct proc_spec spec;
    memset(&spec, 0, sizeof(spec));
    spec.argv = (const char *const *)argv->v;
    spec.new_session = true;
    spec.out_mode = spec.err_mode = PROC_TO_BUFFER;
    spec.out_cap = sj->job->stdout_cap;
    spec.err_cap = (size_t)64 << 10;
    spec.timeout_ms = sj->job->timeout_s * 1000;
    spec.kill_grace_ms = 5000; /* srun forwards SIGTERM to the step and waits for it */
    if (proc_run(&spec, pr, err) == 0)
        return 0;
    if (!proc_stop_signal())
        err->code = AKA_EXIT_ENV;
    return -1;
}

/* The allocation's state after a step; a COMPLETING one is given a few seconds to say
 * why it ended (PREEMPTED, NODE_FAIL, ...), for the record. */
static int settled_state(struct slurm_job *sj, struct aka_err *err)
{
    for (int k = 0;; k++) {
        if (query(sj->id, &sj->info, err) < 0)
            return -1;
        if (strcmp(sj->info.state, "COMPLETING") != 0 || k == SETTLE_TRIES)
            return 0;
        sleep_ms(POLL_FIRST_MS * 2);
    }
}

/* What the step returned means nothing unless the allocation still runs. */
static int judge_step(struct slurm_job *sj, struct proc_result *pr, struct aka_err *err)
{
    char line[512];
    if (settled_state(sj, err) < 0) {
        sj->retryable = !proc_stop_signal();
        return -1;
    }
    if (aka_slurm_phase(sj->info.state) != AKA_SLURM_RUNNING) {
        sj->retryable = true;
        return aka_err_set(err, AKA_EXIT_ENV,
                           "environment: slurm allocation %s ended under the job: %s (reason %s)",
                           sj->id, sj->info.state, sj->info.reason);
    }
    if (!pr->timed_out && srun_failed(&pr->err, line, sizeof(line)))
        return aka_err_set(err, AKA_EXIT_ENV, "environment: the slurm step did not run (%s)", line);
    struct strbuf srun_err = pr->err; /* the job's stderr is the file's, not srun's */
    strbuf_init(&pr->err, 0);
    sbx_take_proc_result(sj->res, pr);
    strbuf_release(&srun_err);
    take_err_file(sj);
    if (pr->timed_out) /* the step may outlive srun: its allocation goes with it */
        sj->owned = true;
    return 0;
}

/*
 * bwrap exits 1 with "bwrap: ..." when it cannot build the sandbox on the node (a GPU node
 * missing there, no user namespaces), and a command can print the same. As local.c does:
 * the very same step around `true`; when that fails too, the node is broken (75).
 */
static int check_node_sandbox(struct slurm_job *sj, const struct strvec *argv, struct aka_err *err)
{
    const struct aka_sandbox_result *res = sj->res;
    struct strvec probe = STRVEC_INIT;
    struct proc_result pr;
    char line[512];
    if (res->timed_out || res->exit_code != 1 || strncmp(res->err.buf, "bwrap: ", 7) != 0)
        return 0;
    snprintf(line, sizeof(line), "%.*s", (int)strcspn(res->err.buf, "\n"), res->err.buf);
    for (size_t i = 0; i < argv->n - sj->job->argv.n; i++)
        strvec_push(&probe, argv->v[i]);
    strvec_push(&probe, "true");
    proc_result_init(&pr);
    int rc = run_step(sj, &probe, &pr, err);
    bool broken = rc < 0 || pr.exit_code != 0;
    proc_result_release(&pr);
    strvec_clear(&probe);
    if (rc < 0)
        return -1;
    if (broken)
        return aka_err_set(err, AKA_EXIT_ENV,
                           "environment: the sandbox could not be built on the slurm node (%s)",
                           line);
    if (strncmp(res->err.buf, "bwrap: execvp ", 14) == 0)
        sj->res->exit_code = 127; /* what a shell says of a missing command */
    return 0;
}

/* Where the job ran, for the result's notes. */
static void note_allocation(struct slurm_job *sj)
{
    struct strbuf gpus = STRBUF_INIT;
    for (size_t i = 0; i < sj->info.n_gpu_ids; i++)
        strbuf_addf(&gpus, "%s%d", i ? "," : "", sj->info.gpu_ids[i]);
    strvec_pushf(&sj->res->notes, "slurm allocation %s%s, GPUs %s", sj->id,
                 sj->ctx->hold ? " (held for same-allocation runs)" : "",
                 gpus.len ? gpus.buf : "none");
    strbuf_release(&gpus);
}

static int attempt(struct slurm_job *sj, struct aka_err *err)
{
    struct strvec argv = STRVEC_INIT;
    struct proc_result pr;
    proc_result_init(&pr);
    int rc = allocate(sj, err);
    if (rc == 0) {
        note_allocation(sj);
        rc = step_argv(sj, &argv, err);
    }
    if (rc == 0)
        rc = run_step(sj, &argv, &pr, err);
    if (rc == 0)
        rc = judge_step(sj, &pr, err);
    if (rc == 0)
        rc = check_node_sandbox(sj, &argv, err);
    proc_result_release(&pr);
    strvec_clear(&argv);
    return rc;
}

/* ---- the transport's steps ---- */

static int stage(struct slurm_job *sj, struct aka_err *err)
{
    const struct aka_sandbox_job *job = sj->job;
    if (sbx_stage_create(&sj->st, sj->ctx->o->tmp_dir, err) < 0 ||
        sbx_stage_copy_inputs(job, &sj->st, err) < 0)
        return -1;
    strvec_clear(&sj->env);
    sbx_job_env(job, sj->st.job.buf, sj->prefix.buf, &sj->env);
    return 0;
}

/* The allocation is cancelled after the job unless it is the held one and still good. */
static void release_allocation(struct slurm_job *sj, bool failed)
{
    struct slurm_ctx *c = sj->ctx;
    bool held = c->hold && strcmp(sj->id, c->held_id) == 0;
    if (held && (sj->owned || (failed && (sj->retryable || proc_stop_signal())))) {
        c->held_id[0] = '\0'; /* ended, interrupted, or a step may still run there */
        held = false;
    }
    if (!held)
        cancel(sj->id);
    sj->id[0] = '\0';
    sj->owned = false;
}

static int slurm_prepare(const struct aka_sandbox_transport *t, const struct aka_sandbox_job *job,
                         struct aka_sandbox_result *res, void **state, struct aka_err *err)
{
    struct slurm_job *sj = aka_xcalloc(1, sizeof(*sj));
    sj->ctx = t->ctx;
    sj->job = job;
    sj->res = res;
    strbuf_init(&sj->prefix, 0);
    sbx_stage_init(&sj->st);
    *state = sj;
    if (job->isolation != AKA_SBX_BWRAP)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--sandbox slurm runs every job under bwrap on the node; isolation "
                           "none is local only");
    if (proc_check_stop(err) < 0)
        return -1;
    sbx_python_prefix(job, &sj->prefix, &res->notes);
    return stage(sj, err);
}

/* Fresh allocation and fresh stage for each attempt the scheduler ended. */
static int slurm_run(void *state, struct aka_err *err)
{
    struct slurm_job *sj = state;
    for (int k = 1;; k++) {
        sj->retryable = sj->held = false;
        int rc = attempt(sj, err);
        release_allocation(sj, rc < 0);
        bool again =
            rc < 0 && sj->retryable && !sj->held && k < AKA_SLURM_ATTEMPTS && !proc_stop_signal();
        if (!again)
            return rc;
        strvec_pushf(&sj->res->notes, "attempt %d of %d: %s; retried in a fresh allocation", k,
                     AKA_SLURM_ATTEMPTS, err->msg);
        aka_err_clear(err);
        sbx_stage_remove(&sj->st, &sj->res->notes);
        if (stage(sj, err) < 0)
            return -1;
    }
}

static void slurm_collect(void *state)
{
    struct slurm_job *sj = state;
    sbx_collect_artifacts(sj->job, sj->st.job.buf, sj->res);
}

static void slurm_cleanup(void *state)
{
    struct slurm_job *sj = state;
    if (sj->id[0])
        release_allocation(sj, true);
    sbx_stage_remove(&sj->st, &sj->res->notes);
    strbuf_release(&sj->prefix);
    strvec_clear(&sj->env);
    free(sj);
}

static void slurm_describe(const struct aka_sandbox_transport *t, struct strbuf *out)
{
    const struct slurm_ctx *c = t->ctx;
    const char *tmp = c->o->tmp_dir ? c->o->tmp_dir : getenv("TMPDIR");
    strbuf_addf(out, "slurm, partition %s%s%s%s%s, bwrap on the node, jobs in %s (shared)",
                c->o->partition, c->o->account ? ", account " : "",
                c->o->account ? c->o->account : "", c->o->qos ? ", qos " : "",
                c->o->qos ? c->o->qos : "", tmp && *tmp ? tmp : "/tmp");
}

static const struct aka_sandbox_transport_ops slurm_ops = {
    .name = "slurm",
    .prepare = slurm_prepare,
    .run = slurm_run,
    .collect = slurm_collect,
    .cleanup = slurm_cleanup,
    .describe = slurm_describe,
    .probe_health = sbx_probe_job,
};

void aka_sandbox_slurm(struct aka_sandbox_transport *t, const struct aka_sandbox_slurm_opts *opts)
{
    struct slurm_ctx *c = aka_xcalloc(1, sizeof(*c));
    c->o = opts;
    t->ops = &slurm_ops;
    t->ctx = c;
    t->isolation = AKA_SBX_BWRAP;
    t->tmp_dir = opts->tmp_dir;
    t->health_command = NULL;
}

void aka_sandbox_transport_hold(const struct aka_sandbox_transport *t, int n_jobs)
{
    struct slurm_ctx *c = t && t->ops == &slurm_ops ? t->ctx : NULL;
    if (!c)
        return;
    c->hold = n_jobs > 0;
    c->hold_jobs = n_jobs;
    if (!c->hold && c->held_id[0]) {
        cancel(c->held_id);
        c->held_id[0] = '\0';
    }
}

void aka_sandbox_slurm_close(struct aka_sandbox_transport *t)
{
    if (!t || t->ops != &slurm_ops || !t->ctx)
        return;
    aka_sandbox_transport_hold(t, 0);
    free(t->ctx);
    t->ctx = NULL;
    t->ops = NULL;
}
