/*
 * policy.c — `aka policy check --framework F --kernel FILE [--json]`: the
 * deterministic source policy of production mode, run alone (src/policy/).
 */
#include "policy/policy.h"
#include "base/error.h"
#include "base/opts.h"
#include "cmd/cmd.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct policy_args {
    const char *framework, *kernel;
    bool json;
};

#define OFF(f) offsetof(struct policy_args, f)

static const char usage_text[] =
    "usage: aka policy check --framework F --kernel FILE [--json]\n\n"
    "Check one kernel source against the production source policy of framework F\n"
    "(triton, gluon, cutedsl, cuda, tilelang, flydsl, c). The source is tokenized\n"
    "(strings and comments are never code), imports and aliases are followed, and\n"
    "every rule of docs/production.md is applied: what F requires (a kernel of F\n"
    "launched from the entry point) and what is forbidden (PyTorch compute, prebuilt\n"
    "kernel libraries, other frameworks, dynamic access, processes, network, files,\n"
    "timers, harness patching, input-keyed caches, evaluator files, structure).\n"
    "A solution.json next to FILE is checked too.\n\n"
    "Each violation prints one line: FILE:LINE:COLUMN: RULE: MESSAGE.\n\n";
static const char notes_text[] =
    "\n--json prints {\"clean\": bool, \"violations\": [{\"rule\", \"file\", \"line\",\n"
    "\"column\", \"message\"}]} instead.\n\n"
    "Exit status: 0 clean, 1 violations, 2 bad input (unknown framework, a missing\n"
    "or unreadable file, a file that does not tokenize).\n";

static const struct aka_opt check_flags[] = {
    {.name = "--framework",
     .off = OFF(framework),
     .metavar = "F",
     .help = "triton, gluon, cutedsl, cuda, tilelang, flydsl or c; required"},
    {.name = "--kernel", .off = OFF(kernel), .metavar = "FILE", .help = "the source; required"},
    {.name = "--json", .off = OFF(json), .kind = AKA_OPT_BOOL, .help = "print one JSON object"},
    {.name = NULL},
};

/* `check` and its flags: 0, 1 after --help, -1 with a usage error. */
static int parse_args(int argc, char **argv, struct policy_args *a, struct aka_err *err)
{
    static const char *const subs[] = {"check", NULL};
    static const struct aka_opt_doc doc = {"policy check", usage_text, notes_text};
    struct aka_opt_group groups[] = {{.table = check_flags, .base = a}, {0}};
    bool help = false;
    struct aka_opt_cmd c = {.doc = &doc, .groups = groups, .help = &help};
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        aka_opts_print_help(&c, stdout);
        return 1;
    }
    if (aka_opts_subcommand("policy", subs, argc, argv, err) < 0)
        return -1;
    int rc = aka_opts_parse(&c, argc, argv, 2, err);
    if (rc != 0)
        return rc;
    if (!a->framework || !a->kernel)
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
    int parsed = parse_args(argc, argv, &a, &err);
    if (parsed != 0)
        return parsed < 0 ? aka_err_report(&err) : 0;
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
