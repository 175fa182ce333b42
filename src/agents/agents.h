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
#include "base/strbuf.h"
#include "base/vec.h"
#include "platform/platform.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
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

/*
 * The agent sandbox (confine.c; docs/agents.md). With bwrap the CLI runs under
 * Bubblewrap and sees its worktree (writable), the view directory and the
 * asset tree's runtime/ (read-only), its own state directory, and nothing else
 * of the host; none runs it as a plain process (unsafe, and said so by the
 * caller). Both set ATREX_AKA_AGENT_SANDBOX in the agent's environment.
 */
enum aka_agent_sandbox { AKA_AGENT_SANDBOX_BWRAP = 0, AKA_AGENT_SANDBOX_NONE };
extern const char *const aka_agent_sandbox_names[]; /* "bwrap", "none", NULL */

struct aka_agent_confinement {
    enum aka_agent_sandbox mode;
    const char *view_dir;         /* read-only: what the agent's aka commands read; may be NULL */
    const char *const *read_only; /* more host paths bound read-only (NULL-terminated or NULL) */
    const char *const *writable;  /* ... and writable */
    const char *const *deny;      /* never reachable: a bind inside one is refused (code 2), one
                                     below a bound directory is covered by an empty tmpfs */
    int gpu_count;                /* GPUs shown (those the agent's `aka eval` uses); 0: none */
    enum aka_vendor gpu_vendor;   /* whose device nodes they are (platform.h) */
    const char *bwrap;            /* NULL: bwrap on PATH */
};

struct aka_agent_request {
    const char *backend;           /* claude | qodercli | codex | pi | builtin */
    const char *cli_path;          /* the CLI binary; NULL: the backend's default name on PATH */
    const char *worktree;          /* the session's working directory */
    const char *brief_file;        /* the prompt (rendered brief), passed as the CLI expects */
    const char *capture_dir;       /* a fresh directory per invocation: stdout, stderr, events */
    const char *resume_session_id; /* NULL: fresh session; else resume that thread */
    const char *const *env; /* extra "NAME=VALUE" (ATREX_AKA_WORKSPACE, ...), NULL-terminated */
    long timeout_s;         /* 0: none */
    const char *model;      /* optional model name for backends that take one */
    /* Added by the runtime implementation (all optional; zero/NULL = default). */
    const char *effort;     /* low|medium|high|xhigh|max; NULL: max */
    const char *repo_root;  /* asset tree holding runtime/guard; NULL: $ATREX_AKA_HOME */
    const char *session_id; /* fresh claude/qodercli/pi session: the UUID to use; NULL: new */
    /* Optional: called right after each invocation's process is spawned (every turn of a
     * session, fresh or resumed), before it is waited for, with its process group (= its
     * session: the agent runs in its own) and the leader's start time (/proc stat field 22).
     * A supervisor records both so that, should it be killed, a resume can end the agent by
     * identity (DESIGN §7). */
    void (*on_start)(void *data, pid_t pgid, unsigned long long start_ticks);
    void *on_start_data;
    /* NULL: a plain process, as before the agent sandbox (reviewer probes). The trace file
     * ($ATREX_AKA_TRACE_FILE) of a confined session must lie in its worktree. */
    const struct aka_agent_confinement *confine;
};

struct aka_agent_result {
    int exit_code; /* normalized; 124 timeout; 126 policy violation */
    bool timed_out;
    int term_signal;       /* 0 when it exited */
    bool policy_violation; /* the guard killed it */
    char violation[512];   /* why, when policy_violation */
    char session_id[256];  /* backend thread id for resume; "" when unknown */
    struct aka_token_usage usage;
    pid_t pgid; /* the session's process group (for crash recovery records) */
    double wall_seconds;
    /* Added by the runtime implementation. */
    unsigned long long pgid_start_ticks;      /* the leader's start time (/proc stat field 22),
                                                 so a recorded group is only ever killed by identity */
    char observation_errors[512];             /* comma-separated short codes ("" when none) */
    struct aka_token_usage stream_cumulative; /* codex: the thread's cumulative usage on stdout */
    bool transient_api_error;    /* the stream reported a known transient API failure */
    bool usage_delta_observed;   /* per-call usage was seen (phase attribution possible) */
    double violation_latency_ms; /* offending process start (or file change) -> all dead; -1 */
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

/* ---- added by the runtime implementation -------------------------------- */

/* Every count 0, measurement exact: the start of a sum. */
void aka_token_usage_zero(struct aka_token_usage *u);
const char *aka_token_measurement_name(enum aka_token_measurement m);
/* The result as one JSON object (usage, exit, violation, session id, ...). */
json_t *aka_agent_result_to_json(const struct aka_agent_result *res);
/* Can this backend continue the same thread (`--resume` / `exec resume`)? */
bool aka_agent_can_resume(const char *backend);

/*
 * Same-thread recovery (`--handoff-resumes`). Runs a fresh (or resumed)
 * session, then asks `check` whether the episode ended properly. When it did
 * not (no valid handoff), or the turn timed out, was ended by SIGTERM or hit a
 * known transient API error, the SAME thread is resumed with a diagnosis turn,
 * at most `handoff_resumes` times. Never after a policy kill; a backend that
 * cannot resume stops with the diagnosis. Each invocation gets its own capture
 * directory <capture_dir>/invocation-<k>; tokens of all turns are summed.
 */
#define AKA_AGENT_DEFAULT_HANDOFF_RESUMES 2
#define AKA_AGENT_MAX_HANDOFF_RESUMES     32

/* Is the episode complete? Return true, or false with a one-line diagnosis. */
typedef bool (*aka_agent_check_fn)(void *data, char *diagnosis, size_t size);

struct aka_agent_session_request {
    struct aka_agent_request req; /* capture_dir: the session's directory */
    int handoff_resumes;          /* < 0: AKA_AGENT_DEFAULT_HANDOFF_RESUMES */
    const char *handoff_path;     /* optional: a stale file here is removed first */
    aka_agent_check_fn check;     /* NULL: every exit-0 turn is complete */
    void *check_data;
};

struct aka_agent_session_result {
    struct aka_agent_result last; /* the last invocation */
    struct aka_token_usage usage; /* summed over invocations */
    int exit_code;                /* 0 once the check passed, else the last turn's */
    bool timed_out, complete;
    int invocations, resume_count;
    char session_id[256];
    char diagnosis[1024]; /* why it is not complete ("" when complete) */
    struct aka_agent_result inv[AKA_AGENT_MAX_HANDOFF_RESUMES + 1];
};

int aka_agent_run_session(const struct aka_agent_session_request *sreq,
                          struct aka_agent_session_result *res, struct aka_err *err);
json_t *aka_agent_session_result_to_json(const struct aka_agent_session_result *res);

/* A ready-made check: data is the handoff.json path (contracts' validation). */
bool aka_agent_check_handoff_file(void *data, char *diagnosis, size_t size);

/*
 * Phase markers (`aka trace`). The trace file is $ATREX_AKA_TRACE_FILE; one
 * JSON line is appended per marker. When the append happened, the receipt line
 * "ATREX_TRACE_EVENT={...}" is written into `receipt` (empty otherwise) for
 * the agent's tool output, where the stream parsers find it.
 */
extern const char *const aka_agent_phases[]; /* the 7 phases, NULL-terminated */
int aka_trace_phase(const char *trace_file, const char *action, const char *phase,
                    struct strbuf *receipt, struct aka_err *err);
int aka_trace_source_read(const char *trace_file, const char *kind, const char *ref,
                          struct aka_err *err);
/* Per-phase wall time from a trace file, labelled exact/partial/unavailable. */
json_t *aka_trace_phase_times(const char *trace_file);

/* Copy runtime/skills into the worktree where `backend` looks for them. */
int aka_agent_install_skills(const char *backend, const char *repo_root, const char *worktree,
                             struct aka_err *err);
/* The pinned plugins' skill directories (absolute), each under its basename in the backend's
 * skills directory; a name that is already installed is an error (code 2). */
int aka_agent_install_plugin_skills(const char *backend, const char *worktree,
                                    const struct strvec *dirs, struct aka_err *err);
/* The sentence a brief uses to tell this backend where its skills are. */
const char *aka_agent_skills_hint(const char *backend);

/* {{name}} templates; an unknown or malformed placeholder is an error (code 2). */
struct aka_brief_var {
    const char *name, *value;
};
int aka_brief_render(const char *template_path, const struct aka_brief_var *vars,
                     struct strbuf *out, struct aka_err *err);

/* ---- plan reviewers (reviewers.c, review.c; reference §9) ------------------ */

/*
 * Codex and Qoder, asked for a second opinion on a frozen plan. Which of them
 * a campaign may use is probed once (before its first episode) and cached in
 * <workspace>/.aka/plan_reviewers.json; a valid cache is reused across
 * restarts, and a reviewer found unavailable (by the probe or by a failed
 * review later) is never tried again in that campaign.
 */
enum aka_reviewer { AKA_REVIEWER_CODEX = 0, AKA_REVIEWER_QODER, AKA_REVIEWERS };
extern const char *const aka_reviewer_names[]; /* "codex", "qoder", NULL */

struct aka_reviewer_state {
    bool available;
    char status[64];  /* available, current_backend, timeout, unavailable[_exit_N], ... */
    char reason[512]; /* one line */
};

struct aka_plan_reviewers {
    char checked_at[40]; /* UTC, ISO 8601 */
    char agent_cli[32];  /* the campaign's backend when probed */
    long probe_timeout_s;
    struct aka_reviewer_state r[AKA_REVIEWERS];
    bool probed; /* this call ran the probe (no valid cache before) */
};

#define AKA_PLAN_REVIEW_PROBE_TIMEOUT_S 120 /* ATREX_PLAN_REVIEW_PROBE_TIMEOUT */
#define AKA_PLAN_REVIEW_TIMEOUT_S       600 /* ATREX_ASK_{CODEX,QODER}_TIMEOUT */

/* The cache, when it exists and is valid (0); -1 otherwise. */
int aka_plan_reviewers_load(const char *workspace, struct aka_plan_reviewers *pr);
/*
 * The campaign-start call: reuse the cache, or probe both reviewers (each by
 * running its CLI through the agent runtime on a tiny prompt, in a temporary
 * directory, with a short timeout) and write it. A reviewer that is the
 * campaign's own backend is "current_backend"; with the built-in agent nobody
 * is probed. Reviewer failures are results, not errors: -1 only for a bad
 * ATREX_PLAN_REVIEW_PROBE_TIMEOUT (code 2) or a cache that cannot be written.
 */
int aka_plan_reviewers_ensure(const char *workspace, const char *backend, const char *repo_root,
                              struct aka_plan_reviewers *pr, struct aka_err *err);
/* ATREX_PLAN_REVIEW_{CODEX,QODER}_{ENABLED,REASON} for an agent session. */
void aka_plan_reviewers_env(const struct aka_plan_reviewers *pr, struct strvec *env);
/* Tokens every reviewer call of the campaign used (probes and reviews), from
 * the append-only <workspace>/.aka/reviewer_tokens.jsonl; 0 when none. */
long long aka_plan_reviewer_tokens(const char *workspace);

struct aka_review_request {
    enum aka_reviewer reviewer;
    const char *plan;            /* the plan to review (required) */
    const char *const *evidence; /* optional files, NULL-terminated */
    const char *workspace;       /* the campaign (cache, ledger, captures); NULL: none */
    const char *repo_root;       /* asset tree (the session guard) */
    long timeout_s;              /* 0: ATREX_ASK_<R>_TIMEOUT, else 600 */
};

enum aka_review_outcome {
    AKA_REVIEW_DONE = 0, /* the review is in text */
    AKA_REVIEW_SKIPPED,  /* the caller's own backend is this reviewer */
    AKA_REVIEW_DISABLED, /* unavailable in this campaign: text says why */
    AKA_REVIEW_FAILED,   /* the reviewer failed (now disabled): text says why */
    AKA_REVIEW_REJECTED  /* it answered, but changed its inputs or missed sections */
};

struct aka_review_result {
    enum aka_review_outcome outcome;
    struct strbuf text;           /* the review, or the one-line skip/disabled/failure note */
    struct aka_token_usage usage; /* what the call used (recorded in the ledger) */
    int exit_code;                /* for the command: 0, 1, 3 or 124 */
};

/* Ask one reviewer (reference §9.2/9.3). -1 only for bad input (code 2). */
int aka_plan_review(const struct aka_review_request *rq, struct aka_review_result *res,
                    struct aka_err *err);
void aka_review_result_release(struct aka_review_result *res);

/* ---- the production policy reviewer (policy_review.c; issue 14) ------------ */

/* The five checks runtime/prompts/policy_review.md asks for, in its order. */
extern const char *const aka_policy_review_checks[];

struct aka_policy_review_request {
    const char *workspace;          /* the campaign: verdict cache and captures (required) */
    const char *backend, *cli_path; /* the campaign's agent backend; cli_path NULL: on PATH */
    const char *framework;          /* as the campaign names it */
    const char *kernel_name;        /* the kernel's file name, e.g. "kernel.py" */
    const struct strbuf *source;    /* the committed candidate kernel */
    long timeout_s;                 /* --production-review-timeout */
    const char *repo_root;          /* asset tree: the prompt and the session guard */
    const struct aka_agent_confinement *confine; /* NULL: a plain process */
};

struct aka_policy_review_result {
    bool pass;        /* only a complete verdict of "pass" passes */
    bool cached;      /* the verdict for this source was already in the cache */
    char outcome[16]; /* pass | reject | late | missing | malformed | mutating | unavailable */
    char reason[768]; /* one line: the verdict's summary, or what went wrong */
    char digest[65];  /* sha256 of the source: the cache key */
    struct aka_token_usage usage;
};

/*
 * Review one candidate kernel in a fresh session of the campaign's backend. Anything
 * but a complete, schema-valid "pass" verdict is a rejection (fail closed). -1 only
 * when the request is incomplete or the cache cannot be written (code 2 / 1).
 */
int aka_policy_review(const struct aka_policy_review_request *rq,
                      struct aka_policy_review_result *res, struct aka_err *err);
/* Check a verdict document; 0 when valid (pass set from it), else -1 with why (one line). */
int aka_policy_verdict_check(json_t *doc, bool *pass, char *why, size_t size);

/* The model's final message in a captured stdout of `backend` ("" when none). */
int aka_agent_final_message(const char *backend, const char *stdout_path, struct strbuf *out,
                            struct aka_err *err);

#endif
