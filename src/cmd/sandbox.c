/* sandbox.c — placeholder replaced by the sandbox work. */
#include "cmd/cmd.h"
#include <stdio.h>
int cmd_sandbox(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    fprintf(stderr, "aka sandbox: not built yet\n");
    return 1;
}
