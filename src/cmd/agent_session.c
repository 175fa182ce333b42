/*
 * agent_session.c — `aka agent-session`: run one agent session through the
 * agent runtime and print its result as JSON. It is the test and debugging
 * entry to src/agents (the campaign engine calls the module directly): flags
 * map one to one onto struct aka_agent_request, and with --handoff-file the
 * session runs under same-thread recovery.
 */
#include "agents/agents.h"
#include "base/json.h"
#include "cmd/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ENV 64

struct opts {
    struct aka_agent_request req;
    struct aka_agent_confinement confine;
    const char *env[MAX_ENV + 1];
    size_t n_env;
    const char *handoff, *skills_worktree, *sandbox;
    int resumes;
    bool help;
};

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: aka agent-session --backend B --worktree DIR --brief FILE --capture DIR\n"
        "                         [--cli PATH] [--resume ID] [--session-id ID]\n"
        "                         [--effort E] [--model M] [--timeout S] [--env NAME=VALUE]...\n"
        "                         [--handoff-file FILE [--handoff-resumes N]]\n"
        "                         [--agent-sandbox bwrap|none [--view DIR]] [--json]\n"
        "       aka agent-session --install-skills DIR --backend B\n\n"
        "Internal: run one coding-agent session exactly as an episode would (guarded,\n"
        "captured, parsed) and print the result as one JSON object. With\n"
        "--handoff-file the same thread is resumed while the handoff is missing or\n"
        "invalid (at most N times, default 2). --agent-sandbox confines it as an episode\n"
        "would (docs/agents.md), with DIR as its read-only campaign view. Exit status:\n"
        "0 when the agent ran\n"
        "(whatever it did: see the JSON), 2 on bad arguments, 75 when it cannot start.\n");
}

static int take(int argc, char **argv, int *i, const char **out)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "aka agent-session: %s: expected a value after it\n", argv[*i]);
        return -1;
    }
    *out = argv[++*i];
    return 0;
}

static int parse_one(struct opts *o, int argc, char **argv, int *i)
{
    static const char *const names[] = {
        "--backend",        "--cli",           "--worktree", "--brief", "--capture",
        "--resume",         "--session-id",    "--effort",   "--model", "--handoff-file",
        "--install-skills", "--agent-sandbox", "--view",     NULL};
    const char **slots[] = {&o->req.backend,     &o->req.cli_path,    &o->req.worktree,
                            &o->req.brief_file,  &o->req.capture_dir, &o->req.resume_session_id,
                            &o->req.session_id,  &o->req.effort,      &o->req.model,
                            &o->handoff,         &o->skills_worktree, &o->sandbox,
                            &o->confine.view_dir};
    const char *v = NULL;
    for (int k = 0; names[k]; k++)
        if (strcmp(argv[*i], names[k]) == 0)
            return take(argc, argv, i, slots[k]);
    if (strcmp(argv[*i], "--timeout") == 0 || strcmp(argv[*i], "--handoff-resumes") == 0) {
        bool timeout = strcmp(argv[*i], "--timeout") == 0;
        char *end;
        if (take(argc, argv, i, &v) < 0)
            return -1;
        long n = strtol(v, &end, 10);
        if (*end || n < 0 || v == end) {
            fprintf(stderr, "aka agent-session: %s: expected a non-negative integer\n", v);
            return -1;
        }
        if (timeout)
            o->req.timeout_s = n;
        else
            o->resumes = (int)n;
        return 0;
    }
    if (strcmp(argv[*i], "--env") == 0) {
        if (take(argc, argv, i, &v) < 0 || o->n_env >= MAX_ENV)
            return -1;
        o->env[o->n_env++] = v;
        return 0;
    }
    if (strcmp(argv[*i], "--json") == 0)
        return 0; /* JSON is the only output */
    if (strcmp(argv[*i], "--help") == 0 || strcmp(argv[*i], "-h") == 0)
        return o->help = true, 0;
    fprintf(stderr, "aka agent-session: %s: unknown argument\n", argv[*i]);
    return -1;
}

static void print_json(json_t *doc)
{
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
    printf("%s\n", text);
    free(text);
    json_decref(doc);
}

static int run(struct opts *o)
{
    struct aka_err err = AKA_ERR_INIT;
    if (o->skills_worktree) {
        if (aka_agent_install_skills(o->req.backend, o->req.repo_root, o->skills_worktree, &err) <
            0)
            return aka_err_report(&err);
        return 0;
    }
    if (!o->handoff) {
        struct aka_agent_result res;
        if (aka_agent_run(&o->req, &res, &err) < 0)
            return aka_err_report(&err);
        print_json(aka_agent_result_to_json(&res));
        return 0;
    }
    struct aka_agent_session_request sreq = {
        .req = o->req,
        .handoff_resumes = o->resumes,
        .handoff_path = o->handoff,
        .check = aka_agent_check_handoff_file,
        .check_data = (void *)o->handoff,
    };
    struct aka_agent_session_result *res = calloc(1, sizeof(*res));
    int rc = res && aka_agent_run_session(&sreq, res, &err) == 0 ? 0 : -1;
    if (rc == 0)
        print_json(aka_agent_session_result_to_json(res));
    free(res);
    return rc == 0 ? 0 : aka_err_report(&err);
}

int cmd_agent_session(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    struct opts o;
    memset(&o, 0, sizeof(o));
    o.resumes = -1;
    for (int i = 1; i < argc; i++)
        if (parse_one(&o, argc, argv, &i) < 0)
            return AKA_EXIT_USAGE;
    if (o.help) {
        usage(stdout);
        return 0;
    }
    o.req.env = o.env;
    o.req.repo_root = ctx->repo_root;
    if (o.sandbox) {
        int mode = strcmp(o.sandbox, "bwrap") == 0 ? 0 : strcmp(o.sandbox, "none") == 0 ? 1 : -1;
        if (mode < 0) {
            fprintf(stderr,
                    "aka agent-session: --agent-sandbox: expected bwrap or none; got '%s'\n",
                    o.sandbox);
            return AKA_EXIT_USAGE;
        }
        o.confine.mode = (enum aka_agent_sandbox)mode;
        o.req.confine = &o.confine;
    }
    if (!o.req.backend) {
        fprintf(stderr, "aka agent-session: --backend: required (see --help)\n");
        return AKA_EXIT_USAGE;
    }
    return run(&o);
}
