/*
 * registry.c — the list of aka applications and the top-level dispatcher.
 *
 * Adding a subcommand means one line in `apps` and one file in src/cmd/.
 */
#include "base/fs.h"
#include "base/opts.h"
#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef AKA_VERSION
#define AKA_VERSION "0.0.0"
#endif

static const struct aka_app apps[] = {
    {"eval", "Evaluate a kernel against its operator in the sandbox", cmd_eval},
    {"inspect", "Detect an operator's layout and validate every contract it carries", cmd_inspect},
    {"optimize", "Run an optimization campaign on an operator", cmd_optimize},
    {"sandbox", "Run a command as a sandbox job (isolated, allowlisted, time-limited)",
     cmd_sandbox},
    {"wiki", "Query the GPU wiki: hardware facts, techniques and pitfalls with sources", cmd_wiki},
    {"status", "Show a campaign: identity, incumbent, budget and every version", cmd_status},
    {"report", "Write a campaign's report: one self-contained HTML page (or an index)", cmd_report},
    {"memory", "Read canonical memory records: latest, show vN, list", cmd_memory},
    {"trace", "Record phase markers and source reads of an agent session", cmd_trace},
    {"journal", "Record an episode's experiments and outcome in its journal", cmd_journal},
    {"handoff", "End an agent's episode: check the journal, write handoff.json", cmd_handoff},
    {"agent-session", "(internal) Run one guarded coding-agent session; print JSON",
     cmd_agent_session},
    {"tune-agent", "The built-in agent: tune the kernel's aka:tune knobs", cmd_tune_agent},
    {"ask-codex", "Ask Codex for an independent review of a frozen plan", cmd_ask_codex},
    {"ask-qoder", "Ask Qoder for an independent review of a frozen plan", cmd_ask_qoder},
    {"policy", "Check a kernel source against the production source policy", cmd_policy},
    {"profile", "Profile the kernel (ncu, rocprofv3, PPU) or re-summarize an export", cmd_profile},
    {"recovery", "Show, stop or resume the recovery monitor of a campaign (exit 75)", cmd_recovery},
    {"doctor", "Check that a campaign can start here (sandbox, tools, GPU, transport)", cmd_doctor},
    {"gateway", "Serve sandbox jobs to other machines over HTTP (aka gateway serve)", cmd_gateway},
    {"plan-reviewers", "(internal) Probe a campaign's plan reviewers once; print the cache",
     cmd_plan_reviewers},
    {NULL, NULL, NULL},
};

const struct aka_app *aka_apps(void)
{
    return apps;
}

const struct aka_app *aka_app_find(const char *name)
{
    for (const struct aka_app *a = apps; a->name; a++)
        if (strcmp(a->name, name) == 0)
            return a;
    return NULL;
}

/* Core's own flags: before the application name, and (--repo-root) right after it. */
struct core_args {
    const char *repo_root;
    bool version, help;
    struct strvec rest; /* the application and its arguments */
};

static const struct aka_opt global_flags[] = {
    {.name = "--version",
     .off = offsetof(struct core_args, version),
     .kind = AKA_OPT_BOOL,
     .help = "print aka's version"},
    {.name = "--repo-root",
     .off = offsetof(struct core_args, repo_root),
     .metavar = "DIR",
     .help = "the asset tree (default: $ATREX_AKA_HOME, then the installed share/aka, then "
             "the source tree aka was built from)"},
    {.name = NULL},
};

static void print_help(FILE *out)
{
    fprintf(out, "usage: aka [--version] [--help] <application> [--repo-root DIR] [--] [flags]\n\n"
                 "aka supervises GPU-kernel optimization campaigns: it measures a baseline,\n"
                 "lets coding agents propose kernels in isolated Git worktrees, and promotes\n"
                 "only what it verified itself.\n\n"
                 "applications:\n");
    for (const struct aka_app *a = apps; a->name; a++)
        fprintf(out, "  %-12s %s\n", a->name, a->summary);
    struct aka_opt_group groups[] = {{.table = global_flags, .title = "flags"}, {0}};
    static const struct aka_opt_doc doc = {"", NULL, NULL};
    struct aka_opt_cmd c = {.doc = &doc, .groups = groups};
    fputc('\n', out);
    aka_opts_print_help(&c, out);
    fprintf(out, "\nRun 'aka <application> --help' for its flags.\n");
}

/*
 * Strip core's own options that may follow the application name:
 * `--repo-root DIR` / `--repo-root=DIR`, then an optional `--`. What remains
 * (from the first argument that is not core's) belongs to the application.
 */
static int strip_core_options(int argc, char **argv, struct core_args *a, struct aka_err *err)
{
    /* global_flags without its first row: after the name only --repo-root is core's. */
    struct aka_opt_group groups[] = {{.table = global_flags + 1, .base = a}, {0}};
    const struct aka_opt_doc doc = {argv[0], NULL, NULL};
    struct aka_opt_cmd c = {
        .doc = &doc, .groups = groups, .args = &a->rest, .stop_at_unknown = true};
    return aka_opts_parse(&c, argc, argv, 1, err);
}

static int run_app(const struct aka_app *app, int argc, char **argv, const char *repo_flag)
{
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf root = STRBUF_INIT;
    struct core_args a = {.repo_root = repo_flag, .rest = STRVEC_INIT};
    struct strvec app_argv = STRVEC_INIT;
    int rc = strip_core_options(argc, argv, &a, &err);
    if (rc < 0 || aka_resolve_repo_root(a.repo_root, &root, &err) < 0) {
        strbuf_release(&root);
        strvec_clear(&a.rest);
        return aka_err_report(&err);
    }
    /* The application sees its own name as argv[0] followed by its flags. */
    strvec_push(&app_argv, argv[0]);
    for (size_t i = 0; i < a.rest.n; i++)
        strvec_push(&app_argv, a.rest.v[i]);
    struct aka_app_ctx ctx = {root.buf, AKA_VERSION};
    rc = app->run((int)app_argv.n, app_argv.v, &ctx);
    strvec_clear(&app_argv);
    strvec_clear(&a.rest);
    strbuf_release(&root);
    return rc;
}

/* `aka help [APP]`. */
static int help_for(const struct core_args *a)
{
    if (a->rest.n < 2) {
        print_help(stdout);
        return 0;
    }
    const struct aka_app *app = aka_app_find(a->rest.v[1]);
    if (!app) {
        fprintf(stderr, "aka: '%s' is not an aka application (see 'aka --help')\n", a->rest.v[1]);
        return AKA_EXIT_USAGE;
    }
    char *help_argv[] = {a->rest.v[1], "--help", NULL};
    return run_app(app, 2, help_argv, a->repo_root);
}

static int dispatch(const struct core_args *a)
{
    if (strcmp(a->rest.v[0], "help") == 0)
        return help_for(a);
    const struct aka_app *app = aka_app_find(a->rest.v[0]);
    if (!app) {
        fprintf(stderr, "aka: '%s' is not an aka application (see 'aka --help')\n", a->rest.v[0]);
        return AKA_EXIT_USAGE;
    }
    return run_app(app, (int)a->rest.n, a->rest.v, a->repo_root);
}

int aka_main(int argc, char **argv)
{
    struct core_args a = {.rest = STRVEC_INIT};
    struct aka_err err = AKA_ERR_INIT;
    struct aka_opt_group groups[] = {{.table = global_flags, .base = &a}, {0}};
    static const struct aka_opt_doc doc = {"", NULL, NULL};
    struct aka_opt_cmd c = {
        .doc = &doc, .groups = groups, .args = &a.rest, .args_end_flags = true, .help = &a.help};
    int rc = aka_opts_parse(&c, argc, argv, 1, &err);
    if (rc < 0) {
        aka_err_report(&err);
        fputc('\n', stderr);
        print_help(stderr);
        rc = AKA_EXIT_USAGE;
    } else if (a.help) {
        print_help(stdout);
        rc = 0;
    } else if (a.version) {
        printf("aka %s\n", AKA_VERSION);
        rc = 0;
    } else if (!a.rest.n) {
        print_help(stderr);
        rc = AKA_EXIT_USAGE;
    } else {
        rc = dispatch(&a);
    }
    strvec_clear(&a.rest);
    return rc;
}
