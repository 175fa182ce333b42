/*
 * options_check.c — combination rules of the `aka optimize` flags and the host checks.
 *
 * Single values are range-checked while parsing (options.c); what is here needs
 * several flags at once: which sandbox transport the flags imply and whether
 * its own flags fit it, the ABBA allocation-fit rule, platform vs framework,
 * the dispatcher's suffix. Each failure names the flag a person has to change.
 */
#include "base/fs.h"
#include "bootstrap/bootstrap.h"
#include "optimize/optimize.h"
#include "evaluator/evaluator.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool given(const struct aka_optimize_opts *o, const char *flag)
{
    return aka_optimize_opt_given(o, flag);
}

static int usage(struct aka_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int usage(struct aka_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    aka_err_vset(err, AKA_EXIT_USAGE, fmt, ap);
    va_end(ap);
    return -1;
}

/* The transport the flags ask for; --sandbox-url/--sandbox-profile imply gateway,
 * --sandbox-ssh implies ssh, and an explicit --sandbox must agree. */
static int resolve_transport(struct aka_optimize_opts *o, struct aka_err *err)
{
    int n = given(o, "--sandbox-url") + given(o, "--sandbox-profile") + given(o, "--sandbox-ssh");
    if (n > 1)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--sandbox-url, --sandbox-profile and --sandbox-ssh are mutually "
                           "exclusive; give at most one");
    const char *implied = given(o, "--sandbox-ssh") ? "ssh" : n ? "gateway" : NULL;
    const char *why = given(o, "--sandbox-ssh")   ? "--sandbox-ssh"
                      : given(o, "--sandbox-url") ? "--sandbox-url"
                                                  : "--sandbox-profile";
    if (implied && given(o, "--sandbox") && strcmp(o->sandbox, implied) != 0)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: requires --sandbox %s; got --sandbox %s", why,
                           implied, o->sandbox);
    if (implied)
        o->sandbox = implied;
    if (strcmp(o->sandbox, "gateway") == 0 && !n)
        return usage(err, "--sandbox gateway: needs --sandbox-url or --sandbox-profile");
    return 0;
}

static int check_ssh(const struct aka_optimize_opts *o, struct aka_err *err)
{
    static const char *const only_ssh[] = {"--sandbox-ssh-gpu", "--sandbox-ssh-runtime-bind",
                                           "--sandbox-ssh-init", "--sandbox-health-command", NULL};
    bool ssh = strcmp(o->sandbox, "ssh") == 0;
    for (int i = 0; only_ssh[i]; i++)
        if (!ssh && given(o, only_ssh[i]))
            return usage(err, "%s: only applies to --sandbox ssh; got --sandbox %s", only_ssh[i],
                         o->sandbox);
    if (!ssh)
        return 0;
    const char *t = o->sandbox_ssh;
    if (!t || !*t)
        return usage(err, "--sandbox ssh: needs --sandbox-ssh USER@HOST");
    for (const char *p = t; *p; p++)
        if (isspace((unsigned char)*p))
            return usage(err, "--sandbox-ssh: expected USER@HOST without whitespace; got '%s'", t);
    if (t[0] == '-')
        return usage(err, "--sandbox-ssh: a host may not start with '-'; got '%s'", t);
    if (o->sandbox_ssh_gpu < 0)
        return usage(err, "--sandbox-ssh-gpu: required with --sandbox-ssh %s", t);
    if (!*o->framework)
        return usage(err, "--framework: required with --sandbox-ssh %s (no dispatch over SSH)", t);
    if (given(o, "--sandbox-health-command") && !*o->sandbox_health_command)
        return usage(err, "--sandbox-health-command: expected a non-empty command");
    return 0;
}

static int check_slurm(const struct aka_optimize_opts *o, struct aka_err *err)
{
    static const char *const only_slurm[] = {"--slurm-partition", "--slurm-account", "--slurm-qos",
                                             "--slurm-time", NULL};
    bool slurm = strcmp(o->sandbox, "slurm") == 0;
    for (int i = 0; only_slurm[i]; i++)
        if (!slurm && given(o, only_slurm[i]))
            return usage(err, "%s: only applies to --sandbox slurm; got --sandbox %s",
                         only_slurm[i], o->sandbox);
    if (slurm && (!o->slurm_partition || !*o->slurm_partition))
        return usage(err, "--sandbox slurm: needs --slurm-partition P");
    if (given(o, "--sandbox-isolation") && strcmp(o->sandbox, "local") != 0)
        return usage(err, "--sandbox-isolation: only applies to --sandbox local; got --sandbox %s",
                     o->sandbox);
    return 0;
}

/* Upstream's allocation-fit rule, counted in our runs: a whole ABBA verification
 * (--verify-repeats blocks of I C C I, so 4 runs per repeat) must fit the one job
 * allocation a remote transport holds it in. The local sandbox runs each ABBA run
 * as its own job on the same host and GPU, so there is no allocation to fit
 * (docs/campaign.md, "Departures"). */
static int check_allocation(const struct aka_optimize_opts *o, struct aka_err *err)
{
    if (strcmp(o->sandbox, "local") == 0)
        return 0;
    long need = 4L * o->verify_repeats * o->verify_run_timeout + 30;
    if (need > o->sandbox_timeout)
        return aka_err_set(
            err, AKA_EXIT_USAGE,
            "--verify-repeats %d and --verify-run-timeout %d need a --sandbox-timeout "
            "of at least 4*%d*%d+30 = %ld s (4 runs per I C C I repeat) with --sandbox %s; "
            "got %d",
            o->verify_repeats, o->verify_run_timeout, o->verify_repeats, o->verify_run_timeout,
            need, o->sandbox, o->sandbox_timeout);
    return 0;
}

/* The platform must be one the evaluator knows, and carry the framework's kernels. */
static int check_target(const struct aka_optimize_opts *o, struct aka_err *err)
{
    struct aka_platform p;
    struct aka_err perr = AKA_ERR_INIT;
    if (aka_platform_parse(o->platform, &p, &perr) < 0)
        return aka_err_set(err, AKA_EXIT_USAGE, "--platform: %s", perr.msg);
    const char *fw = o->framework;
    if (p.kind == AKA_PLATFORM_CPU && *fw && strcmp(fw, "C") != 0)
        return usage(err, "--framework %s: --platform cpu runs only C kernels", fw);
    if (p.kind != AKA_PLATFORM_CPU && strcmp(fw, "C") == 0)
        return usage(err, "--framework C: C kernels run on --platform cpu; got --platform %s",
                     o->platform);
    return 0;
}

static int check_required(const struct aka_optimize_opts *o, struct aka_err *err)
{
    if (!o->op_dir || !*o->op_dir)
        return usage(err, "--op-dir: required (the operator directory)");
    if (!o->platform || !*o->platform)
        return usage(err, "--platform: required (cpu, nvidia/<gpu>, nvidia/sm_NN)");
    if (o->goal && !*o->goal)
        return usage(err, "--goal: expected a non-empty text");
    if (*o->workspace_suffix) {
        struct strbuf s = STRBUF_INIT;
        struct aka_err serr = AKA_ERR_INIT;
        int bad =
            aka_slug(o->workspace_suffix, &s, &serr) < 0 || strcmp(s.buf, o->workspace_suffix) != 0;
        strbuf_release(&s);
        if (bad)
            return usage(err,
                         "--workspace-suffix: expected a slug ([a-z0-9_], no leading or "
                         "trailing _); got '%s'",
                         o->workspace_suffix);
    }
    return 0;
}

int aka_optimize_opts_validate(struct aka_optimize_opts *o, struct aka_err *err)
{
    if (check_required(o, err) < 0 || check_target(o, err) < 0 || resolve_transport(o, err) < 0 ||
        check_ssh(o, err) < 0 || check_slurm(o, err) < 0 || check_allocation(o, err) < 0)
        return -1;
    return 0;
}

static bool on_path(const char *name)
{
    const char *path = getenv("PATH");
    if (!path)
        return false;
    struct strbuf dir = STRBUF_INIT;
    bool found = false;
    for (const char *p = path; !found; p++) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        strbuf_reset(&dir);
        strbuf_add(&dir, n ? p : ".", n ? n : 1);
        strbuf_addf(&dir, "/%s", name);
        found = access(dir.buf, X_OK) == 0;
        if (!end)
            break;
        p = end;
    }
    strbuf_release(&dir);
    return found;
}

/* Each --agent-*-path: an existing path that the bind rules of the sandbox allow (no broad
 * root, system tree, home or credential directory). */
static int check_agent_paths(const struct strvec *paths, const char *flag, struct aka_err *err)
{
    struct strbuf real = STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < paths->n; i++) {
        struct aka_err why = AKA_ERR_INIT;
        if (aka_realpath(paths->v[i], &real, &why) < 0 ||
            aka_sandbox_check_bind_source(real.buf, NULL, &why) < 0)
            rc = usage(err, "%s %s: %s", flag, paths->v[i], why.msg);
    }
    strbuf_release(&real);
    return rc;
}

/* The agent sandbox needs bwrap: a missing one is the host's problem (75), never a silent
 * fallback to an unconfined agent. */
static int check_agent_sandbox(const struct aka_optimize_opts *o, struct aka_err *err)
{
    struct strbuf bwrap = STRBUF_INIT;
    int rc = check_agent_paths(&o->agent_read_only_paths, "--agent-read-only-path", err) < 0 ||
                     check_agent_paths(&o->agent_writable_paths, "--agent-writable-path", err) < 0
                 ? -1
                 : 0;
    if (rc == 0 && strcmp(o->agent_sandbox, "bwrap") == 0 &&
        aka_sandbox_find_bwrap(NULL, &bwrap, err) < 0)
        rc = aka_err_prefix(err, "--agent-sandbox bwrap (the default) needs bubblewrap; install "
                                 "it, or pass --agent-sandbox none to run the agent unconfined "
                                 "(unsafe)");
    strbuf_release(&bwrap);
    return rc;
}

int aka_optimize_opts_check_host(const struct aka_optimize_opts *o, struct aka_err *err)
{
    if (!aka_is_dir(o->op_dir))
        return usage(err, "--op-dir: %s is not a directory", o->op_dir);
    /* A missing --workspace is created; an existing one must be a directory. */
    if (*o->workspace && aka_exists(o->workspace) && !aka_is_dir(o->workspace))
        return usage(err,
                     "--workspace %s: not a directory; expected the directory in which the "
                     "campaign workspace is created",
                     o->workspace);
    if (o->agent_cli_path && *o->agent_cli_path && access(o->agent_cli_path, X_OK) != 0)
        return usage(err, "--agent-cli-path %s: not an executable file", o->agent_cli_path);
    if (strcmp(o->agent_cli, "builtin") != 0 && !(o->agent_cli_path && *o->agent_cli_path) &&
        !on_path(o->agent_cli))
        return usage(err, "--agent-cli %s: '%s' is not on PATH", o->agent_cli, o->agent_cli);
    if (strcmp(o->sandbox, "local") != 0)
        return usage(err, "--sandbox %s: this aka build has only the local transport", o->sandbox);
    return check_agent_sandbox(o, err);
}
