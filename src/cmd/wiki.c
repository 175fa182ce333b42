/* wiki.c — placeholder replaced by the wiki work. */
#include "cmd/cmd.h"
#include <stdio.h>
int cmd_wiki(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    fprintf(stderr, "aka wiki: not built yet\n");
    return 1;
}
