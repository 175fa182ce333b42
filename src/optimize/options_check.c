/*
 * options_check.c — combination rules of the `aka optimize` flags and the host checks.
 *
 * Single values are range-checked while parsing (options.c); what is here needs
 * several flags at once: the transport's own rules (sandbox.h) and what the
 * campaign adds to them, the ABBA allocation-fit rule, platform vs framework,
 * the dispatcher's suffix. Each failure names the flag a person has to change.
 */
#include "base/fs.h"
#include "bootstrap/bootstrap.h"
#include "evaluator/evaluator.h"
#include "optimize/optimize.h"
#include "platform/platform.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int usage(struct aka_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int usage(struct aka_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    aka_err_vset(err, AKA_EXIT_USAGE, fmt, ap);
    va_end(ap);
    return -1;
}

/* What the campaign adds to the transport's own rules (sandbox.h): a remote host
 * evaluates one framework, so dispatch stays local. */
static int check_transport(struct aka_optimize_opts *o, struct aka_err *err)
{
    if (aka_transport_opts_validate(&o->transport, o->platform, err) < 0)
        return -1;
    if (o->transport.kind == AKA_TRANSPORT_SSH && !*o->framework)
        return usage(err, "--framework: required with --sandbox-ssh %s (no dispatch over SSH)",
                     o->transport.ssh);
    return 0;
}

/*
 * The allocation-fit rule. Upstream runs a whole verification in one remote job and
 * requires runs * --verify-run-timeout + 30 <= --sandbox-timeout. Here the unit of
 * evidence is one I C C I block (verify_stats.c pairs runs only within a block), so
 * only a block has to share an allocation: a remote transport holds each block in a
 * job of its own, and 4 * --verify-run-timeout + 30 must fit --sandbox-timeout
 * (defaults: 4*120+30 = 510 <= 600), whatever --verify-repeats says. The local
 * sandbox runs each run as its own job on the same host and GPU, so there is no
 * allocation to fit (docs/campaign.md, "Departures").
 */
static int check_allocation(const struct aka_optimize_opts *o, struct aka_err *err)
{
    if (o->transport.kind == AKA_TRANSPORT_LOCAL)
        return 0;
    long need = 4L * o->verify_run_timeout + 30;
    if (need > o->sandbox_timeout)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--verify-run-timeout %d needs a --sandbox-timeout of at least "
                           "4*%d+30 = %ld s (one I C C I block per remote job) with --sandbox "
                           "%s; got %d",
                           o->verify_run_timeout, o->verify_run_timeout, need, o->transport.sandbox,
                           o->sandbox_timeout);
    return 0;
}

/* A framework that belongs to another vendor's set (FlyDSL on NVIDIA, CuteDSL on AMD). */
static bool other_vendors_framework(const struct aka_platform *p, const char *fw)
{
    for (int v = AKA_VENDOR_CPU; v <= AKA_VENDOR_PPU; v++) {
        struct aka_platform other = {.vendor = (enum aka_vendor)v};
        if (aka_platform_has_framework(&other, fw))
            return !aka_platform_has_framework(p, fw);
    }
    return false;
}

/* The platform and --arch must parse (platform.h), and the platform carry the framework. */
static int check_target(const struct aka_optimize_opts *o, struct aka_err *err)
{
    struct aka_platform p;
    if (aka_platform_parse(o->platform, o->arch, &p, err) < 0)
        return -1;
    const char *fw = o->framework;
    /* PyTorch on the CPU: only the stand-in of a distributed operator, which the campaign
     * checks once the operator is loaded (cpu_stand_in.c). */
    if (p.vendor == AKA_VENDOR_CPU && *fw && strcmp(fw, "C") != 0 && strcmp(fw, "PyTorch") != 0)
        return usage(err,
                     "--framework %s: --platform cpu runs C kernels (and PyTorch for the stand-in "
                     "of a distributed operator)",
                     fw);
    if (p.vendor != AKA_VENDOR_CPU && strcmp(fw, "PyTorch") == 0)
        return usage(err,
                     "--framework PyTorch: only with --platform cpu, as the stand-in of a "
                     "distributed operator (docs/platforms.md); got --platform %s",
                     o->platform);
    if (p.vendor != AKA_VENDOR_CPU && strcmp(fw, "C") == 0)
        return usage(err, "--framework C: C kernels run on --platform cpu; got --platform %s",
                     o->platform);
    if (*fw && other_vendors_framework(&p, fw))
        return usage(err, "--framework %s: not a framework of --platform %s (%s runs %s)", fw,
                     o->platform, aka_vendor_label(p.vendor), aka_platform_frameworks_text(&p));
    return 0;
}

static int check_required(const struct aka_optimize_opts *o, struct aka_err *err)
{
    if (!o->op_dir || !*o->op_dir)
        return usage(err, "--op-dir: required (the operator directory)");
    if (!o->platform || !*o->platform)
        return usage(err, "--platform: required (%s)", aka_platform_forms());
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

/* Generalized production hides the exact shapes from the agent: a confined agent only, since
 * an unconfined one could read the operator directory (docs/production.md). */
static int check_generalized(const struct aka_optimize_opts *o, struct aka_err *err)
{
    if (!o->generalized)
        return 0;
    if (strcmp(o->optimization_mode, "production") != 0)
        return usage(err, "--generalized: expected --optimization-mode production; got %s",
                     o->optimization_mode);
    if (strcmp(o->agent_sandbox, "none") == 0)
        return usage(err, "--generalized: expected --agent-sandbox bwrap; got none (an "
                          "unconfined agent could read the operator's private shapes)");
    return 0;
}

int aka_optimize_opts_validate(struct aka_optimize_opts *o, struct aka_err *err)
{
    if (check_required(o, err) < 0 || check_target(o, err) < 0 || check_transport(o, err) < 0 ||
        check_allocation(o, err) < 0 || check_generalized(o, err) < 0)
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
    return check_agent_sandbox(o, err);
}
