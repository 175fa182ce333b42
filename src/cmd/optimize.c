/*
 * optimize.c — `aka optimize`: the campaign application.
 *
 * Core has already stripped `--repo-root DIR` and the `--` separator, so
 * `aka optimize --repo-root R -- FLAGS` and `aka optimize FLAGS` arrive here
 * identically. The campaign flags (DESIGN §4.1) are parsed by the campaign
 * engine, which is not part of this build yet: until it lands this command
 * refuses to run rather than pretend to optimize.
 */
#include "base/error.h"
#include "cmd/cmd.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: aka optimize [--repo-root DIR] [--] --op-dir DIR --platform P [flags]\n\n"
                 "Runs an optimization campaign on the operator in --op-dir.\n"
                 "orchestrator/optimize.py FLAGS is the same as aka optimize -- FLAGS.\n");
}

int cmd_optimize(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return AKA_EXIT_OK;
        }
    }
    fprintf(stderr,
            "aka optimize: the campaign engine is not built into this aka yet "
            "(asset tree %s, %d campaign flag%s received)\n",
            ctx->repo_root, argc - 1, argc == 2 ? "" : "s");
    return AKA_EXIT_FAILED;
}
