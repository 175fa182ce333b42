/*
 * registry.c — the list of aka applications and the top-level dispatcher.
 *
 * Adding a subcommand means one line in `apps` and one file in src/cmd/.
 */
#include "base/fs.h"
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

static void print_help(FILE *out)
{
    fprintf(out, "usage: aka [--version] [--help] <application> [--repo-root DIR] [--] [flags]\n\n"
                 "aka supervises GPU-kernel optimization campaigns: it measures a baseline,\n"
                 "lets coding agents propose kernels in isolated Git worktrees, and promotes\n"
                 "only what it verified itself.\n\n"
                 "applications:\n");
    for (const struct aka_app *a = apps; a->name; a++)
        fprintf(out, "  %-12s %s\n", a->name, a->summary);
    fprintf(out, "\nRun 'aka <application> --help' for its flags.\n"
                 "--repo-root DIR selects the asset tree (default: $ATREX_AKA_HOME, then\n"
                 "the installed share/aka, then the source tree aka was built from).\n");
}

/*
 * Strip core's own options that may follow the application name:
 * `--repo-root DIR` / `--repo-root=DIR`, then an optional `--`. What remains
 * belongs to the application. Returns the index of the first application
 * argument, or -1 on a usage error.
 */
static int strip_core_options(int argc, char **argv, const char **repo_root, struct aka_err *err)
{
    int i = 1;
    while (i < argc) {
        if (strcmp(argv[i], "--repo-root") == 0) {
            if (i + 1 >= argc)
                return aka_err_set(err, AKA_EXIT_USAGE, "--repo-root: expected a directory");
            *repo_root = argv[i + 1];
            i += 2;
        } else if (strncmp(argv[i], "--repo-root=", 12) == 0) {
            *repo_root = argv[i] + 12;
            i++;
        } else {
            break;
        }
    }
    if (i < argc && strcmp(argv[i], "--") == 0)
        i++;
    return i;
}

static int run_app(const struct aka_app *app, int argc, char **argv, const char *repo_flag)
{
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf root = STRBUF_INIT;
    const char *repo_root = repo_flag;
    int first = strip_core_options(argc, argv, &repo_root, &err);
    int rc;

    if (first < 0 || aka_resolve_repo_root(repo_root, &root, &err) < 0) {
        strbuf_release(&root);
        return aka_err_report(&err);
    }
    /* The application sees its own name as argv[0] followed by its flags. */
    int app_argc = argc - first + 1;
    char **app_argv = aka_xcalloc((size_t)app_argc + 1, sizeof(char *));
    app_argv[0] = argv[0];
    for (int i = first; i < argc; i++)
        app_argv[i - first + 1] = argv[i];
    struct aka_app_ctx ctx = {root.buf, AKA_VERSION};
    rc = app->run(app_argc, app_argv, &ctx);
    free(app_argv);
    strbuf_release(&root);
    return rc;
}

int aka_main(int argc, char **argv)
{
    const char *repo_flag = NULL;
    int i = 1;

    /* Global options before the application name. */
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            print_help(stdout);
            return 0;
        }
        if (strcmp(argv[i], "--version") == 0) {
            printf("aka %s\n", AKA_VERSION);
            return 0;
        }
        if (strcmp(argv[i], "--repo-root") == 0 && i + 1 < argc) {
            repo_flag = argv[++i];
            continue;
        }
        fprintf(stderr, "aka: unknown option '%s'\n\n", argv[i]);
        print_help(stderr);
        return AKA_EXIT_USAGE;
    }
    if (i >= argc) {
        print_help(stderr);
        return AKA_EXIT_USAGE;
    }
    if (strcmp(argv[i], "help") == 0) {
        if (i + 1 >= argc) {
            print_help(stdout);
            return 0;
        }
        const struct aka_app *app = aka_app_find(argv[i + 1]);
        if (!app) {
            fprintf(stderr, "aka: '%s' is not an aka application (see 'aka --help')\n",
                    argv[i + 1]);
            return AKA_EXIT_USAGE;
        }
        char *help_argv[] = {argv[i + 1], "--help", NULL};
        return run_app(app, 2, help_argv, repo_flag);
    }
    const struct aka_app *app = aka_app_find(argv[i]);
    if (!app) {
        fprintf(stderr, "aka: '%s' is not an aka application (see 'aka --help')\n", argv[i]);
        return AKA_EXIT_USAGE;
    }
    return run_app(app, argc - i, argv + i, repo_flag);
}
