/*
 * policy.c — `aka policy check --framework F --kernel FILE [--json]`: the
 * deterministic source policy of production mode, run alone (src/policy/).
 */
#include "policy/policy.h"
#include "base/error.h"
#include "cmd/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct policy_args {
    const char *framework, *kernel;
    bool json, help;
};

static void usage(FILE *out)
{
    fprintf(out, "usage: aka policy check --framework F --kernel FILE [--json]\n\n"
                 "Check one kernel source against the production source policy of framework F\n"
                 "(triton, gluon, cutedsl, cuda, tilelang, flydsl, c). The source is tokenized\n"
                 "(strings and comments are never code), imports and aliases are followed, and\n"
                 "every rule of docs/production.md is applied: what F requires (a kernel of F\n"
                 "launched from the entry point) and what is forbidden (PyTorch compute, prebuilt\n"
                 "kernel libraries, other frameworks, dynamic access, processes, network, files,\n"
                 "timers, harness patching, input-keyed caches, evaluator files, structure).\n"
                 "A solution.json next to FILE is checked too.\n\n"
                 "Each violation prints one line: FILE:LINE:COLUMN: RULE: MESSAGE.\n"
                 "--json prints {\"clean\": bool, \"violations\": [{\"rule\", \"file\", \"line\",\n"
                 "\"column\", \"message\"}]} instead.\n\n"
                 "Exit status: 0 clean, 1 violations, 2 bad input (unknown framework, a missing\n"
                 "or unreadable file, a file that does not tokenize).\n");
}

/* The flags after `check`; -1 with a usage error. */
static int parse_args(int argc, char **argv, struct policy_args *a, struct aka_err *err)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        a->help = true;
        return 0;
    }
    if (argc < 2 || strcmp(argv[1], "check") != 0)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "policy: expected the subcommand check (see aka policy --help)");
    for (int i = 2; i < argc; i++) {
        int r;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            a->help = true;
        else if (strcmp(argv[i], "--json") == 0)
            a->json = true;
        else if ((r = cmd_flag_value(argc, argv, &i, "--framework", &a->framework, err)) != 0 ||
                 (r = cmd_flag_value(argc, argv, &i, "--kernel", &a->kernel, err)) != 0) {
            if (r < 0)
                return -1;
        } else {
            return aka_err_set(err, AKA_EXIT_USAGE, "policy check: unknown argument \"%s\"",
                               argv[i]);
        }
    }
    if (!a->help && (!a->framework || !a->kernel))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "policy check: expected --framework F and --kernel FILE");
    return 0;
}

int cmd_policy(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    struct aka_err err = AKA_ERR_INIT;
    struct policy_args a = {0};
    struct aka_policy_report rep;
    (void)ctx;
    if (parse_args(argc, argv, &a, &err) < 0)
        return aka_err_report(&err);
    if (a.help) {
        usage(stdout);
        return 0;
    }
    if (aka_policy_check(a.framework, a.kernel, &rep, &err) < 0)
        return aka_err_report(&err);
    if (a.json) {
        char *out = aka_policy_report_json(&rep);
        printf("%s\n", out);
        free(out);
    } else {
        for (size_t k = 0; k < rep.n; k++)
            printf("%s:%d:%d: %s: %s\n", rep.v[k].file, rep.v[k].line, rep.v[k].column,
                   rep.v[k].rule, rep.v[k].message);
        if (rep.n == 0)
            printf("%s: clean (%s)\n", a.kernel, a.framework);
    }
    int rc = rep.n ? AKA_EXIT_FAILED : AKA_EXIT_OK;
    aka_policy_report_free(&rep);
    return rc;
}
