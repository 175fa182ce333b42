/*
 * adapters.h — the pieces of the agent runtime below aka_agent_run(): token
 * usage mapping, normalized events, one command-line builder and one stream
 * parser per backend, the Codex rollout ledger, the process-guard rules and
 * the phase-token summarizer.
 *
 * The campaign engine never needs this header (it uses agents.h). It exists
 * so that each piece is a pure function of its inputs that the unit tests can
 * call on recorded streams without spawning anything (reference §12).
 */
#ifndef AKA_AGENTS_ADAPTERS_H
#define AKA_AGENTS_ADAPTERS_H

#include "agents/agents.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/vec.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* ---- token usage (usage.c) ----------------------------------------------- */

/* Which key aliases a usage mapping is read with. */
enum aka_usage_dialect {
    AKA_USAGE_ANTHROPIC, /* total = official, else every component incl. cache */
    AKA_USAGE_OPENAI,    /* cached_input_tokens is part of input: total = in + out */
    AKA_USAGE_PI         /* input/output/cacheRead/cacheWrite/totalTokens */
};
/* Read a usage object; unavailable when it holds no usable count. */
void aka_usage_from_json(const json_t *obj, enum aka_usage_dialect d, struct aka_token_usage *u);
/* total - part, componentwise; -1 (error) when part exceeds total anywhere. */
int aka_usage_subtract(const struct aka_token_usage *total, const struct aka_token_usage *part,
                       struct aka_token_usage *out);
bool aka_usage_exceeds(const struct aka_token_usage *a, const struct aka_token_usage *b);

/* ---- normalized events (events.c) ----------------------------------------- */

enum aka_event_kind { AKA_EV_USAGE_DELTA, AKA_EV_TERMINAL_USAGE, AKA_EV_PHASE_MARKER };

struct aka_agent_event {
    enum aka_event_kind kind;
    struct aka_token_usage usage; /* usage kinds */
    bool start;                   /* marker: start (true) or end */
    char phase[64], marker_id[80];
};

/* What a parser makes of one invocation's stdout. */
struct aka_agent_stream {
    struct {
        struct aka_agent_event *v;
        size_t n, alloc;
    } events;
    struct aka_token_usage terminal; /* unavailable when none */
    bool usage_delta_capable;        /* the backend reports per-call usage at all */
    bool usage_delta_observed;       /* ... and this stream had some */
    char session_id[256];            /* codex: the thread id from thread.started */
    bool transient_api_error;        /* claude: a known transient API failure */
    struct strvec observations;      /* short codes */
};

void aka_agent_stream_init(struct aka_agent_stream *s);
void aka_agent_stream_release(struct aka_agent_stream *s);
void aka_agent_stream_push_usage(struct aka_agent_stream *s, enum aka_event_kind kind,
                                 const struct aka_token_usage *u);
/* Find "ATREX_TRACE_EVENT=" receipts in every string of v (any depth). */
void aka_agent_stream_scan_receipts(struct aka_agent_stream *s, const json_t *v);
void aka_agent_stream_observe(struct aka_agent_stream *s, const char *code);
/* Drop usage events (keep markers) and renumber: used by the qoder zero rule. */
void aka_agent_stream_drop_usage(struct aka_agent_stream *s);
json_t *aka_agent_event_to_json(const struct aka_agent_event *e, size_t seq);

/* Call fn for every stdout line that is a JSON object (others are noise). */
typedef void (*aka_stream_line_fn)(json_t *obj, void *data);
void aka_stream_foreach_object(FILE *in, aka_stream_line_fn fn, void *data);

/* ---- backends (claude.c, qodercli.c, codex.c, pi.c, builtin.c) ----------- */

/* How the prompt reaches the CLI. */
enum aka_prompt_mode {
    AKA_PROMPT_ARGV,    /* the text is the last argv element */
    AKA_PROMPT_STDIN,   /* the CLI reads it from stdin (the brief file) */
    AKA_PROMPT_FILE_REF /* a short argv prompt points at the brief file */
};

/* Briefs larger than this never go on the command line (MAX_ARG_STRLEN is 128 KiB). */
#define AKA_ARGV_PROMPT_MAX ((size_t)96 * 1024)

struct aka_cmdline {
    const char *cli;    /* argv[0] */
    const char *prompt; /* ARGV: the text; FILE_REF: the brief's path */
    enum aka_prompt_mode prompt_mode;
    const char *session_id; /* the supervisor's UUID (claude, qodercli, pi) */
    const char *resume_id;  /* NULL: fresh */
    const char *effort;     /* validated */
    const char *settings;   /* NULL or the resolved settings string */
    const char *model;      /* NULL or a model name */
    const char *aka_bin;    /* builtin: the aka binary */
};

struct aka_adapter {
    const char *id;
    const char *settings_var; /* ATREX_<BACKEND>_SESSION_SETTINGS */
    bool can_resume;
    bool own_session_id;             /* the supervisor picks the id (not codex) */
    enum aka_prompt_mode large_mode; /* how a brief over AKA_ARGV_PROMPT_MAX is passed */
    bool brief_by_path;              /* always FILE_REF with the brief's path (builtin) */
    int (*build_argv)(const struct aka_cmdline *c, struct strvec *argv, struct aka_err *err);
    void (*parse)(FILE *in, struct aka_agent_stream *s);
};

const struct aka_adapter *aka_adapter_find(const char *id);
extern const struct aka_adapter aka_adapter_claude, aka_adapter_qodercli, aka_adapter_codex,
    aka_adapter_pi, aka_adapter_builtin;

/* Settings string: the backend's variable, else ATREX_SESSION_SETTINGS. `env`
 * ("NAME=VALUE", NULL-terminated) wins over the process environment. NULL when
 * neither is set or both are empty. */
const char *aka_agent_settings(const struct aka_adapter *a, const char *const *env);
/* NAME's value in env, else getenv(NAME). */
const char *aka_agent_env_lookup(const char *const *env, const char *name);
bool aka_agent_effort_valid(const char *effort);

/* Parse stdout of one invocation, in memory (tests) or from the capture file. */
void aka_agent_parse_buf(const struct aka_adapter *a, const char *buf, size_t len,
                         struct aka_agent_stream *s);
int aka_agent_parse_file(const struct aka_adapter *a, const char *path, struct aka_agent_stream *s,
                         struct aka_err *err);

/* The Claude-like parser shared by claude and qodercli. */
void aka_claude_like_parse(FILE *in, struct aka_agent_stream *s);
bool aka_claude_is_transient_error(const json_t *ev);

/* ---- Codex rollout ledger (codex_ledger.c) -------------------------------- */

struct aka_codex_ledger {
    char home[4096];                   /* CODEX_HOME */
    char path[4096];                   /* the rollout file, "" until found */
    long long offset;                  /* bytes already accounted for */
    struct aka_token_usage cumulative; /* the thread's cumulative usage at offset */
    double since;                      /* unix time the invocation started */
    bool resumed_from_file;            /* cumulative was read from the thread's earlier file */
};

/* Before an invocation: remember where the thread's rollout ends now. */
void aka_codex_ledger_prepare(struct aka_codex_ledger *l, const char *codex_home,
                              const char *resume_thread, double since);
/* After it: replace s's events by the ledger's per-call deltas and markers.
 * On failure s is untouched and a "codex_ledger_unavailable:<why>" code is
 * recorded in s->observations. `worktree` finds the rollout when stdout gave
 * no thread id. */
int aka_codex_ledger_apply(struct aka_codex_ledger *l, const char *worktree,
                           struct aka_agent_stream *s);

/* ---- process guard rules (guard_rules.c, guard_python.c) ------------------ */

struct aka_guard_config {
    char screen[128];           /* protected gateway screen session name */
    char state_dir[4096];       /* protected gateway state directory */
    struct strvec config_files; /* protected gateway configuration files */
};
void aka_guard_config_init(struct aka_guard_config *c, const char *const *env);
void aka_guard_config_release(struct aka_guard_config *c);

/* The reason argv breaks the process policy, or NULL. */
const char *aka_guard_check_argv(const char *const *argv, size_t argc,
                                 const struct aka_guard_config *c);
/* A GPU device query (rocminfo, ...) that maps the GPU runtime only to list
 * devices: the poller's library check does not apply to it. */
bool aka_guard_gpu_query_tool(const char *const *argv, size_t argc);
/* The reason `python -c CODE` is refused on the host, or NULL. */
const char *aka_guard_check_python_code(const char *code);

/* ---- phase token attribution (phases.c) ----------------------------------- */

json_t *aka_agent_phase_tokens(const struct aka_agent_stream *s);
/* Combine per-invocation summaries into the session's (reference §8.4). */
json_t *aka_agent_phase_tokens_aggregate(json_t *const *per_invocation, size_t n, bool resumed,
                                         bool resume_qualified);

#endif
