/*
 * optimize.c — `aka optimize`: the campaign application.
 *
 * Core has already stripped `--repo-root DIR` and the `--` separator, so
 * `aka optimize --repo-root R -- FLAGS` and `aka optimize FLAGS` arrive here
 * identically. Parse, validate, check the host — all before anything is
 * written — open the evaluation transport from the shared transport flags
 * (sandbox/sandbox.h), then hand over to the campaign engine (optimize/optimize.h): one
 * campaign for a named --framework, else one child campaign per framework.
 * A campaign that ends with 75 (the environment) hands over to the recovery monitor
 * (recovery/recovery.h) with the command line captured here at its start, unless
 * --no-auto-recovery, or a monitor started this one and owns the recovery already.
 */
#include "optimize/optimize.h"
#include "cmd/cmd.h"
#include "recovery/recovery.h"

#include <stdio.h>
#include <string.h>

/* The reason can quote a goal or a record: escaped, it cannot drive the terminal. */
static void print_stopped(const char *reason)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_add_escaped(&sb, reason, strlen(reason));
    printf("campaign stopped: %s\n", sb.buf);
    strbuf_release(&sb);
}

/* After 75: the monitor, started detached; one line says where it keeps its state. */
static void hand_over(const struct aka_recovery_launch *l, const struct aka_optimize_opts *o,
                      const char *ws)
{
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf dir = STRBUF_INIT;
    bool started = false;
    if (o->no_auto_recovery || aka_recovery_is_restarted() || !*ws || !aka_optimize_env_stopped(ws))
        return;
    if (aka_recovery_start(l, ws, o->environment_poll_interval, &dir, &started, &err) < 0)
        fprintf(stderr, "aka optimize: the recovery monitor was not started: %s\n", err.msg);
    else if (started)
        fprintf(stderr,
                "aka optimize: recovery monitor started (state in %s; stop it with "
                "%s/stop-recovery.sh)\n",
                dir.buf, dir.buf);
    else
        fprintf(stderr,
                "aka optimize: no recovery monitor started (one runs already, or "
                "stop-recovery.sh disabled it: run %s/recover.sh)\n",
                dir.buf);
    strbuf_release(&dir);
}

static int run_one(struct aka_optimize_opts *o, const struct aka_sandbox_transport *t,
                   const struct aka_recovery_launch *l, const struct aka_app_ctx *ctx)
{
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf ws = STRBUF_INIT;
    char reason[256] = "";
    int rc =
        aka_recovery_child_handshake(&err) < 0
            ? -1
            : aka_optimize_run(o, t, ctx->repo_root, stderr, reason, sizeof(reason), &ws, &err);
    if (rc == -1)
        rc = aka_err_report(&err);
    else if (rc != AKA_EXIT_OK)
        aka_err_report(&err);
    else
        print_stopped(reason);
    if (rc == AKA_EXIT_ENV)
        hand_over(l, o, ws.buf);
    strbuf_release(&ws);
    return rc;
}

int cmd_optimize(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    struct aka_optimize_opts o;
    struct aka_sandbox_transport t;
    struct aka_err err = AKA_ERR_INIT;
    struct aka_recovery_launch launch;
    int rc;
    aka_optimize_opts_init(&o);
    aka_recovery_launch_init(&launch);
    if (aka_optimize_opts_parse(argc, argv, &o, &err) < 0 ||
        (!o.help && aka_optimize_opts_check_host(&o, &err) < 0)) {
        aka_optimize_opts_release(&o);
        fprintf(stderr, "aka optimize: usage error (nothing was written)\n");
        return aka_err_report(&err);
    }
    if (o.help) {
        aka_optimize_print_help(stdout);
        aka_optimize_opts_release(&o);
        return AKA_EXIT_OK;
    }
    /* Usage is settled; a transport this host cannot give is its problem (75). */
    if (aka_transport_open(&o.transport, &t, &err) < 0) {
        aka_optimize_opts_release(&o);
        return aka_err_report(&err);
    }
    if (strcmp(o.agent_sandbox, "none") == 0)
        fprintf(stderr, "aka optimize: warning: --agent-sandbox none is unsafe: the agent runs "
                        "unconfined and can reach the workspace, the operator and your home "
                        "(recorded in the campaign and every episode)\n");
    if (!*o.framework) {
        rc = aka_optimize_dispatch(&o, argc, argv, ctx->repo_root, stderr, &err) < 0
                 ? aka_err_report(&err)
                 : AKA_EXIT_OK;
        aka_optimize_opts_release(&o);
        return rc;
    }
    /* The command a recovery monitor would re-run, as it is now (cwd before anything). */
    if (aka_recovery_launch_capture(&launch, argc, argv, ctx->repo_root, &err) < 0)
        rc = aka_err_report(&err);
    else
        rc = run_one(&o, &t, &launch, ctx);
    aka_recovery_launch_release(&launch);
    aka_optimize_opts_release(&o);
    return rc;
}
