/*
 * agents.h — the agent runtime: one coding-agent session (fresh or resumed)
 * in an episode worktree, whatever the backend.
 *
 * This is the only interface the campaign engine uses to drive an agent
 * (DESIGN §2, §4.5). A session is started with a brief in a worktree, runs
 * in its own session/process group with stdin closed and a guard in its
 * environment, and comes back with its exit status (signals and policy kills
 * distinguished), its backend session id (for resume), its token usage with
 * an honest measurement label, and the paths of its captured output.
 *
 * Backends: "claude", "qodercli", "codex", "pi" (external CLIs, driven exactly
 * as each expects) and "builtin" (`aka tune-agent`, the mechanical tuner that
 * follows the same protocol).
 */
#ifndef AKA_AGENTS_H
#define AKA_AGENTS_H

#include "base/error.h"
#include "base/vec.h"

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

/* How much of a token count is real (never guessed; DESIGN §1.3). */
enum aka_token_measurement { AKA_TOKENS_EXACT = 0, AKA_TOKENS_PARTIAL, AKA_TOKENS_UNAVAILABLE };

/* Token counts; -1 means "not reported". total counts cache tokens too. */
struct aka_token_usage {
    long long input, output, cache_read, cache_write, total;
    enum aka_token_measurement measurement;
};

void aka_token_usage_unavailable(struct aka_token_usage *u);
/* a += b with the summing rules of the measurement labels. */
void aka_token_usage_add(struct aka_token_usage *a, const struct aka_token_usage *b);
json_t *aka_token_usage_to_json(const struct aka_token_usage *u);

struct aka_agent_request {
    const char *backend;       /* claude | qodercli | codex | pi | builtin */
    const char *cli_path;      /* the CLI binary; NULL: the backend's default name on PATH */
    const char *worktree;      /* the session's working directory */
    const char *brief_file;    /* the prompt (rendered brief), passed as the CLI expects */
    const char *capture_dir;   /* a fresh directory per invocation: stdout, stderr, events */
    const char *resume_session_id; /* NULL: fresh session; else resume that thread */
    const char *const *env;    /* extra "NAME=VALUE" (ATREX_AKA_WORKSPACE, ...), NULL-terminated */
    long timeout_s;            /* 0: none */
    const char *model;         /* optional model name for backends that take one */
};

struct aka_agent_result {
    int exit_code;          /* normalized; 124 timeout; 126 policy violation */
    bool timed_out;
    int term_signal;        /* 0 when it exited */
    bool policy_violation;  /* the guard killed it */
    char violation[512];    /* why, when policy_violation */
    char session_id[256];   /* backend thread id for resume; "" when unknown */
    struct aka_token_usage usage;
    pid_t pgid;             /* the session's process group (for crash recovery records) */
    double wall_seconds;
};

/* Known backend names, NULL-terminated, in --agent-cli order. */
const char *const *aka_agent_backends(void);

/*
 * Run one invocation to completion. Returns 0 when the agent ran (whatever
 * its exit status: see result), -1 when it could not be started (err: code
 * 75 when the CLI is missing, 2 for a bad request).
 */
int aka_agent_run(const struct aka_agent_request *req, struct aka_agent_result *res,
                  struct aka_err *err);

#endif
