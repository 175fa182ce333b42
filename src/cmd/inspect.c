/* inspect.c — placeholder replaced by the contracts work. */
#include "cmd/cmd.h"
#include <stdio.h>
int cmd_inspect(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    fprintf(stderr, "aka inspect: not built yet\n");
    return 1;
}
