/*
 * agent_session.c — `aka agent-session`: run one agent session through the
 * agent runtime and print its result as JSON. It is the test and debugging
 * entry to src/agents (the campaign engine calls the module directly): flags
 * map one to one onto struct aka_agent_request, and with --handoff-file the
 * session runs under same-thread recovery.
 */
#include "agents/agents.h"
#include "base/json.h"
#include "base/opts.h"
#include "cmd/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct opts {
    struct aka_agent_request req;
    struct aka_agent_confinement confine;
    struct strvec env;
    const char *handoff, *skills_worktree, *sandbox;
    int resumes;
    bool json;
};

static const char usage_text[] =
    "usage: aka agent-session --backend B --worktree DIR --brief FILE --capture DIR\n"
    "                         [--cli PATH] [--resume ID] [--session-id ID]\n"
    "                         [--effort E] [--model M] [--timeout S] [--env NAME=VALUE]...\n"
    "                         [--handoff-file FILE [--handoff-resumes N]]\n"
    "                         [--agent-sandbox bwrap|none [--view DIR] [--gpus N]] [--json]\n"
    "       aka agent-session --install-skills DIR --backend B\n\n"
    "Internal: run one coding-agent session exactly as an episode would (guarded,\n"
    "captured, parsed) and print the result as one JSON object. With\n"
    "--handoff-file the same thread is resumed while the handoff is missing or\n"
    "invalid (at most N times, default 2). --agent-sandbox confines it as an episode\n"
    "would (docs/agents.md), with DIR as its read-only campaign view.\n\n";
static const char notes_text[] = "\nExit status: 0 when the agent ran (whatever it did: see the "
                                 "JSON), 2 on bad arguments,\n75 when it cannot start.\n";

#define OFF(f) offsetof(struct opts, f)
#define STR(flag, field, meta, text)                                                               \
    {                                                                                              \
        .name = flag, .off = OFF(field), .metavar = meta, .help = text                             \
    }

static const struct aka_opt flags[] = {
    STR("--backend", req.backend, "B", "the agent backend (claude, codex, qodercli, pi, builtin)"),
    STR("--cli", req.cli_path, "PATH", "the agent CLI executable"),
    STR("--worktree", req.worktree, "DIR", "the episode worktree the agent works in"),
    STR("--brief", req.brief_file, "FILE", "the brief given to the agent"),
    STR("--capture", req.capture_dir, "DIR", "where the session's output is captured"),
    STR("--resume", req.resume_session_id, "ID", "resume this agent session"),
    STR("--session-id", req.session_id, "ID", "the new session's id"),
    STR("--effort", req.effort, "E", "the agent's reasoning effort"),
    STR("--model", req.model, "M", "the agent's model"),
    STR("--handoff-file", handoff, "FILE",
        "resume the thread while this handoff is missing or "
        "invalid"),
    STR("--install-skills", skills_worktree, "DIR",
        "install the backend's skills into DIR "
        "and exit"),
    STR("--view", confine.view_dir, "DIR", "the read-only campaign view of a confined agent"),
    {.name = "--timeout",
     .off = OFF(req.timeout_s),
     .kind = AKA_OPT_LONG,
     .lo = 0,
     .hi = 1e15,
     .def = "0",
     .metavar = "S",
     .help = "wall-clock limit of the session in seconds (0: none)"},
    {.name = "--gpus",
     .off = OFF(confine.gpu_count),
     .kind = AKA_OPT_INT,
     .lo = 0,
     .hi = 1,
     .def = "0",
     .metavar = "N",
     .help = "NVIDIA GPUs a confined agent's own `aka eval` gets, as in a GPU campaign (0 or 1)"},
    {.name = "--handoff-resumes",
     .off = OFF(resumes),
     .kind = AKA_OPT_INT,
     .lo = 0,
     .hi = 1e6,
     .def = "-1",
     .metavar = "N",
     .help = "same-thread resumes after a missing handoff (default 2)"},
    {.name = "--env",
     .off = OFF(env),
     .kind = AKA_OPT_LIST,
     .metavar = "NAME=VALUE",
     .help = "extra environment of the agent"},
    {.name = "--agent-sandbox",
     .off = OFF(sandbox),
     .kind = AKA_OPT_CHOICE,
     .choices = aka_agent_sandbox_names,
     .metavar = "M",
     .help = "confine the agent as an episode would (default: not confined)"},
    {.name = "--json",
     .off = OFF(json),
     .kind = AKA_OPT_BOOL,
     .help = "accepted: JSON is the only output"},
    {.name = NULL},
};

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
    struct opts o = {.env = STRVEC_INIT};
    struct aka_err err = AKA_ERR_INIT;
    struct aka_opt_group groups[] = {{.table = flags, .base = &o}, {0}};
    static const struct aka_opt_doc doc = {"agent-session", usage_text, notes_text};
    struct aka_opt_cmd c = {.doc = &doc, .groups = groups};
    int rc = aka_opts_parse(&c, argc, argv, 1, &err);
    if (rc == 0 && !o.req.backend)
        rc = aka_err_set(&err, AKA_EXIT_USAGE, "agent-session: --backend: required (see --help)");
    if (rc != 0) {
        strvec_clear(&o.env);
        return rc < 0 ? aka_err_report(&err) : 0;
    }
    o.req.env = (const char *const *)o.env.v;
    o.req.repo_root = ctx->repo_root;
    if (o.sandbox) {
        o.confine.mode =
            strcmp(o.sandbox, "none") == 0 ? AKA_AGENT_SANDBOX_NONE : AKA_AGENT_SANDBOX_BWRAP;
        o.req.confine = &o.confine;
        o.confine.gpu_vendor = AKA_VENDOR_NVIDIA; /* only read with --gpus 1 */
    }
    rc = run(&o);
    strvec_clear(&o.env);
    return rc;
}
