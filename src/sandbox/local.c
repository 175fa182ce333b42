/*
 * local.c — the local transport: one job on this machine, start to finish.
 *
 *   stage (mkdtemp, copy the allowlist in) → bwrap argv and clean environment
 *   → pids cgroup → run through base/proc (timeout: SIGTERM then SIGKILL to the
 *   group; bwrap --die-with-parent and the PID namespace take every descendant
 *   with it) → classify → bring artifacts back → remove the stage.
 *
 * A missing bwrap refuses the job with exit 75 (the environment lacks the
 * sandbox) unless the job asked for isolation "none", which then runs the
 * command directly in the job directory with the same clean environment and
 * limits, and every result says "isolation": "none". So does an allocation the
 * host cannot give (a GPU that is not there) or an unusable temp directory,
 * in either mode, before anything is created.
 *
 * A stop signal caught through base/proc (`aka eval`, `aka sandbox run`) ends
 * the command's group inside proc_wait; the job then fails with code 128+signal
 * and the stage and cgroup are removed on the way out like after any job.
 */
#include "sandbox/internal.h"

#include "base/fs.h"
#include "base/proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct local_job {
    const struct aka_sandbox_job *job; /* &gjob once prepare has chosen the GPUs */
    struct aka_sandbox_job gjob;       /* the caller's job with this host's GPU ids (shallow) */
    struct aka_sandbox_result *res;
    const struct aka_sandbox_local_opts *opts;
    struct sbx_stage st;
    struct sbx_cgroup cg;
    struct strbuf bwrap, prefix;
    struct strvec argv, env;
};

static int find_bwrap(struct local_job *lj, struct aka_err *err)
{
    const char *given = lj->opts ? lj->opts->bwrap : NULL;
    if (sbx_find_in_path(given ? given : "bwrap", getenv("PATH"), &lj->bwrap) == 0)
        return 0;
    return aka_err_set(err, AKA_EXIT_ENV,
                       "bubblewrap (bwrap) was not found%s%s; the job was refused. Install "
                       "bubblewrap, or pass --sandbox-isolation none to run without isolation "
                       "(recorded in the result)",
                       given ? " at " : " in PATH", given ? given : "");
}

/* Isolation none: argv[0] resolved in the job's PATH, as bwrap would inside. */
static int none_argv(struct local_job *lj)
{
    struct strbuf exe = STRBUF_INIT;
    const char *p = lj->env.v[0] + 5; /* sbx_job_env puts PATH first */
    int rc = sbx_find_in_path(lj->job->argv.v[0], p, &exe);
    if (rc == 0) {
        strvec_push(&lj->argv, exe.buf);
        for (size_t i = 1; i < lj->job->argv.n; i++)
            strvec_push(&lj->argv, lj->job->argv.v[i]);
    }
    strbuf_release(&exe);
    return rc;
}

static int prepare(struct local_job *lj, struct aka_err *err)
{
    if (sbx_pick_local_gpus(lj->job, &lj->gjob, err) < 0)
        return -1;
    const struct aka_sandbox_job *job = lj->job = &lj->gjob;
    bool bwrap = job->isolation == AKA_SBX_BWRAP;
    if ((bwrap && find_bwrap(lj, err) < 0) || sbx_check_gpus(job, err) < 0 ||
        proc_check_stop(err) < 0)
        return -1;
    if (sbx_stage_create(&lj->st, lj->opts ? lj->opts->tmp_dir : NULL, err) < 0 ||
        sbx_stage_copy_inputs(job, &lj->st, err) < 0)
        return -1;
    /* Also without isolation, so that python3 means the same interpreter either way. */
    sbx_python_prefix(job, &lj->prefix, &lj->res->notes);
    sbx_job_env(job, lj->st.job.buf, lj->prefix.buf, &lj->env);
    if (job->gpu_count >= 2)
        sbx_gpu_env(job->gpu_ids, job->n_gpu_ids, &lj->env);
    if (bwrap)
        return sbx_bwrap_argv(job, lj->bwrap.buf, lj->st.job.buf, lj->st.ctl.buf, lj->prefix.buf,
                              &lj->argv, err);
    strvec_push(&lj->res->notes, "isolation none: the command ran directly on the host (no "
                                 "namespaces; host files and network were reachable)");
    return 0;
}

static void fill_spec(const struct local_job *lj, const struct strvec *argv, struct proc_spec *spec)
{
    memset(spec, 0, sizeof(*spec));
    spec->argv = (const char *const *)argv->v;
    spec->cwd = lj->st.job.buf;
    /* bwrap itself gets only the job's environment: nothing of aka's (tokens,
     * SSH agent sockets) reaches it, and it passes exactly this on. */
    spec->env = (const char *const *)lj->env.v;
    spec->clean_env = true;
    spec->new_session = true;
    spec->out_mode = spec->err_mode = PROC_TO_BUFFER;
    spec->out_cap = lj->job->stdout_cap;
    spec->err_cap = lj->job->stderr_cap;
    spec->timeout_ms = lj->job->timeout_s * 1000;
    spec->kill_grace_ms = 2000;
    /* bwrap and everything inside start in the pids cgroup (pids.c): none can fork first. */
    spec->cgroup_procs = lj->cg.procs.len ? lj->cg.procs.buf : NULL;
}

/* A run that failed is the machine's problem (75), unless a stop signal ended it. */
static int run_failed(struct aka_err *err)
{
    if (!proc_stop_signal())
        err->code = AKA_EXIT_ENV;
    return -1;
}

static int execute(struct local_job *lj, const struct strvec *argv, struct proc_result *pr,
                   struct aka_err *err)
{
    struct proc_spec spec;
    struct proc_handle *h = NULL;
    fill_spec(lj, argv, &spec);
    if (proc_start(&spec, &h, err) < 0)
        return run_failed(err); /* could not even start bwrap */
    sbx_cgroup_adopt(&lj->cg, proc_pid(h));
    if (lj->opts && lj->opts->started)
        lj->opts->started(lj->opts->started_arg, proc_pid(h));
    if (proc_wait(h, pr, err) < 0)
        return run_failed(err);
    return 0;
}

/* The first line of text, for messages. */
static void first_line(const struct strbuf *text, char *out, size_t n)
{
    size_t len = strcspn(text->buf, "\n");
    snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), text->buf);
}

/*
 * bwrap exits 1 with "bwrap: ..." when it cannot build the sandbox, and a
 * command can print the same. Re-run the very same sandbox around `true`: when
 * that fails as well the environment is broken (75); when it works the failure
 * was the command's own and stays an ordinary result.
 */
static int check_sandbox_health(struct local_job *lj, struct aka_err *err)
{
    const struct aka_sandbox_result *res = lj->res;
    struct strvec argv = STRVEC_INIT;
    struct proc_result pr;
    struct aka_err probe_err = AKA_ERR_INIT;
    char line[512];

    if (lj->job->isolation != AKA_SBX_BWRAP || res->timed_out || res->exit_code != 1 ||
        strncmp(res->err.buf, "bwrap: ", 7) != 0)
        return 0;
    /* Everything up to and including the "--" that precedes the job's command. */
    for (size_t i = 0; i < lj->argv.n - lj->job->argv.n; i++)
        strvec_push(&argv, lj->argv.v[i]);
    strvec_push(&argv, "true");
    proc_result_init(&pr);
    int rc = execute(lj, &argv, &pr, &probe_err);
    bool broken = rc < 0 || pr.exit_code != 0;
    proc_result_release(&pr);
    strvec_clear(&argv);
    if (!broken) {
        /* bwrap could not exec the command: report it the way a shell would. */
        if (strncmp(res->err.buf, "bwrap: execvp ", 14) == 0)
            lj->res->exit_code = 127;
        return 0;
    }
    first_line(&res->err, line, sizeof(line));
    return aka_err_set(err, AKA_EXIT_ENV, "the sandbox could not be built (%s)", line);
}

/* Isolation none and a command that is not there: what a shell would say. */
static void command_not_found(struct local_job *lj)
{
    lj->res->exit_code = 127;
    strbuf_addf(&lj->res->err, "aka sandbox: %s: command not found in " SBX_PATH "\n",
                lj->job->argv.v[0]);
    lj->res->err_bytes = lj->res->err.len;
}

static int run_command(struct local_job *lj, struct aka_err *err)
{
    struct proc_result pr;
    const struct aka_sandbox_job *job = lj->job;

    if (job->isolation == AKA_SBX_NONE && none_argv(lj) < 0) {
        command_not_found(lj);
        return 0;
    }
    if (sbx_cgroup_create(&lj->cg, aka_basename(lj->st.root.buf), job->pids_max))
        snprintf(lj->res->pids_limit, sizeof(lj->res->pids_limit), "cgroup");
    proc_result_init(&pr);
    int rc = execute(lj, &lj->argv, &pr, err);
    if (rc == 0) {
        sbx_take_proc_result(lj->res, &pr);
        /* Without a PID namespace, end whatever the command left in its group. */
        if (job->isolation == AKA_SBX_NONE && pr.pid > 0)
            proc_kill_group(pr.pid, 100);
    }
    proc_result_release(&pr);
    return rc == 0 ? check_sandbox_health(lj, err) : -1;
}

/* The steps of the transport interface (sandbox.h); aka_sandbox_run drives them. */
static int local_prepare(const struct aka_sandbox_transport *t, const struct aka_sandbox_job *job,
                         struct aka_sandbox_result *res, void **state, struct aka_err *err)
{
    struct local_job *lj = aka_xcalloc(1, sizeof(*lj));
    lj->job = job;
    lj->res = res;
    lj->opts = t->ctx;
    strbuf_init(&lj->bwrap, 0);
    strbuf_init(&lj->prefix, 0);
    sbx_stage_init(&lj->st);
    sbx_cgroup_init(&lj->cg);
    *state = lj;
    return prepare(lj, err);
}

static int local_run(void *state, struct aka_err *err)
{
    return run_command(state, err);
}

static void local_collect(void *state)
{
    struct local_job *lj = state;
    sbx_collect_artifacts(lj->job, lj->st.job.buf, lj->res);
}

/* Stopped at any point: nothing came back, everything is still removed. */
static void local_cleanup(void *state)
{
    struct local_job *lj = state;
    sbx_stage_remove(&lj->st, &lj->res->notes);
    sbx_cgroup_destroy(&lj->cg, &lj->res->notes);
    strbuf_release(&lj->bwrap);
    strbuf_release(&lj->prefix);
    strvec_clear(&lj->argv);
    strvec_clear(&lj->env);
    free(lj);
}

static void local_describe(const struct aka_sandbox_transport *t, struct strbuf *out)
{
    const struct aka_sandbox_local_opts *o = t->ctx;
    const char *tmp = o && o->tmp_dir ? o->tmp_dir : getenv("TMPDIR");
    strbuf_addf(out, "local, isolation %s, jobs in %s",
                t->isolation == AKA_SBX_NONE ? "none" : "bwrap", tmp && *tmp ? tmp : "/tmp");
}

static const struct aka_sandbox_transport_ops local_ops = {
    .name = "local",
    .prepare = local_prepare,
    .run = local_run,
    .collect = local_collect,
    .cleanup = local_cleanup,
    .describe = local_describe,
    .probe_health = sbx_probe_job,
};

void aka_sandbox_local(struct aka_sandbox_transport *t, const struct aka_sandbox_local_opts *opts)
{
    t->ops = &local_ops;
    t->ctx = (void *)opts;
    t->isolation = AKA_SBX_BWRAP;
    t->tmp_dir = opts ? opts->tmp_dir : NULL;
    t->health_command = NULL;
}
