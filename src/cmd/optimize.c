/*
 * optimize.c — `aka optimize`: the campaign application.
 *
 * Core has already stripped `--repo-root DIR` and the `--` separator, so
 * `aka optimize --repo-root R -- FLAGS` and `aka optimize FLAGS` arrive here
 * identically. Parse, validate, check the host — all before anything is
 * written — open the evaluation transport from the shared transport flags
 * (sandbox/sandbox.h), then hand over to the campaign engine (optimize/optimize.h): one
 * campaign for a named --framework, else one child campaign per framework.
 */
#include "optimize/optimize.h"
#include "cmd/cmd.h"

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

int cmd_optimize(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    struct aka_optimize_opts o;
    struct aka_sandbox_transport t;
    struct aka_err err = AKA_ERR_INIT;
    char reason[256] = "";
    int rc;
    aka_optimize_opts_init(&o);
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
    rc = aka_optimize_run(&o, &t, ctx->repo_root, stderr, reason, sizeof(reason), &err);
    if (rc != AKA_EXIT_OK)
        aka_err_report(&err);
    else
        print_stopped(reason);
    aka_optimize_opts_release(&o);
    return rc;
}
