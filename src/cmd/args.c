/*
 * args.c — the flag-value parsing shared by the subcommands (see cmd.h).
 */
#include "base/error.h"
#include "cmd/cmd.h"

#include <string.h>

int cmd_flag_value(int argc, char **argv, int *i, const char *name, const char **out,
                   struct aka_err *err)
{
    size_t n = strlen(name);
    const char *s = argv[*i];
    if (strncmp(s, name, n) != 0)
        return 0;
    if (s[n] == '=') {
        *out = s + n + 1;
        return 1;
    }
    if (s[n] != '\0')
        return 0; /* a longer flag that merely starts with name */
    if (*i + 1 >= argc) {
        aka_err_set(err, AKA_EXIT_USAGE, "%s: expected a value", name);
        return -1;
    }
    *out = argv[++*i];
    return 1;
}
