/*
 * internal.h — the state of one `aka optimize` run, shared by the optimize files.
 */
#ifndef AKA_OPTIMIZE_INTERNAL_H
#define AKA_OPTIMIZE_INTERNAL_H

#include "agents/agents.h"
#include "base/lock.h"
#include "base/sha256.h"
#include "bootstrap/bootstrap.h"
#include "evaluator/evaluator.h"
#include "git/git.h"
#include "optimize/optimize.h"
#include "workspace/workspace.h"

/* The Triton→Gluon conversion latch (schedule.c; DESIGN §3, §6). */
enum aka_conversion { AKA_CONVERSION_NONE, AKA_CONVERSION_PENDING, AKA_CONVERSION_GLUON };

struct aka_run {
    struct aka_operator op;
    struct aka_runtime_pins pins;
    struct aka_campaign camp;
    struct aka_measure_env env;
    struct aka_lock lock;
    struct strbuf ws, op_dir_abs; /* op_dir_abs: the original, which names the campaign only */
    struct strbuf warned;         /* warnings already given, one per line (drift.c) */
    FILE *progress;
    bool live_ok;  /* the campaign is ours (pinned/checked): live.json may be written */
    int max_iters; /* the version budget, for progress lines ("episode k/N") */
    enum aka_conversion conversion;         /* the latch as the loop top left it */
    json_t *plugin_pin;                     /* the wiki plugin set as pinned (plugins.c) */
    struct strvec plugin_skills;            /* the pinned plugins' skill directories */
    struct strvec plugin_instructions;      /* their instruction files (absolute) */
    struct strvec plugin_instruction_names; /* "plugin/relative-path" of each */
    /* generalized production: the original's agent_problem.json sha256 (pinned), and the
     * public operator (.aka/public_operator/, loaded) the workspace's visible inputs come from */
    char agent_problem_sha256[AKA_SHA256_HEX_LEN + 1];
    struct aka_operator public_op;
};

/* Pin the wiki plugin set into campaign.json (first start) or verify it (resume: a changed,
 * added or removed plugin is refused, code 2, named); also campaign.json's other pins. */
int aka_optimize_pin_plugins(struct aka_run *r, struct aka_err *err);
/* Append the pinned plugins' instruction files to a brief. */
int aka_optimize_plugin_brief(const struct aka_run *r, struct strbuf *brief, struct aka_err *err);

/* One terminal progress line ("aka optimize: ...") and the live view. */
void aka_optimize_progress(struct aka_run *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* memory/live.json: the non-canonical progress view. Failures are ignored on
 * purpose: observability never changes what the campaign does. */
void aka_live_update(struct aka_run *r, const char *phase);

/* The V1 stage per --framework-baseline and the agent (DESIGN §3, §9). */
int aka_optimize_v1(struct aka_run *r, const struct aka_optimize_opts *o,
                    struct aka_version_summary *v1, struct aka_err *err);

/* Pinned evidence the supervisor does not read, compared with what it does (drift.c): a
 * changed original operator directory or working copy of a committed record gets one
 * warning line (once per change). Returns the operator line ("" when unchanged). */
const char *aka_optimize_check_drift(struct aka_run *r, struct strbuf *operator_line);

/* The episode loop: budget checks at its top, then episodes. */
int aka_optimize_loop(struct aka_run *r, const struct aka_optimize_opts *o, char *stop_reason,
                      size_t stop_len, struct aka_err *err);

/* ---- episodes (episode*.c; DESIGN §3, §4.4, §5) ------------------------------------------ */

/* .aka/state.json counters; other keys in the file are kept on save. */
struct aka_episode_counters {
    long long episodes, accepted, rejected, pivoted, blocked, protocol_failures, interrupted;
    long long tokens, consecutive; /* consecutive: episodes without promotion in a row */
};

enum aka_episode_kind { AKA_EPISODE_FAST, AKA_EPISODE_FULL, AKA_EPISODE_GOAL };
extern const char *const aka_episode_kind_names[];

/* Agent groups one episode keeps: one per turn, and a session has at most
 * 1 + AKA_AGENT_MAX_HANDOFF_RESUMES (32) turns; beyond, the oldest (long
 * finished) are forgotten first. */
#define AKA_EPISODE_MAX_GROUPS 40

/* One episode in flight: identity, then what the supervisor found out. */
struct aka_episode {
    long number, version;
    enum aka_episode_kind kind;
    int fast_trials; /* fast: the --fast-trials it started with (kept across a resume), else 0 */
    char base[AKA_GIT_OID_HEX + 1], candidate[AKA_GIT_OID_HEX + 1];
    struct strbuf worktree, branch, dir; /* dir: the episode's directory (workspace/) */
    /* The version commit about to be made, written ahead into the active record: a resume
     * accepts a HEAD advance only when it is exactly this (episode_recover.c). */
    struct aka_commit_intent intent;
    bool has_intent;
    const char *phase;
    long long pgid; /* the agent's process group, 0 while unknown */
    /* Every agent invocation's group with its leader's start time, in start order: the
     * active record keeps them so a resume ends them by identity (DESIGN §7). */
    struct aka_agent_group {
        long long pgid;
        unsigned long long start_ticks;
    } groups[AKA_EPISODE_MAX_GROUPS];
    size_t n_groups;
    enum aka_memory_status status;
    char violation[1024];
    json_t *verification; /* the record's "verification" object (owned) */
    json_t *policy;       /* production: the record's "policy" object (owned), else NULL */
    json_t *probes;       /* production: the numerical probes' {plan, result} (owned), else NULL */
    json_t *promoted_doc; /* memory record of a verified candidate (owned), else NULL */
    long long tokens;
    char session_id[256];
    bool recovered_handoff;   /* recovery finished the agent's late handoff (episode_recover.c) */
    bool agent_eval_brokered; /* the agent's `aka eval` went through the supervisor's broker
                                 (kept in the active record: a resume records what ran) */
};

/* state.json: a missing or unreadable file is a fresh campaign (all zero). */
void aka_state_load(const char *ws, struct aka_episode_counters *c);
int aka_state_save(const char *ws, const struct aka_episode_counters *c, struct aka_err *err);

/* "broker" or "sandbox": where the episode's agent evaluations run (the record's and the
 * active record's agent_eval). */
const char *aka_episode_agent_eval(const struct aka_episode *ep);
/* .aka/active_episode.json: written (atomically) before each irreversible step. */
int aka_episode_save_active(const struct aka_run *r, const struct aka_episode *ep,
                            struct aka_err *err);
bool aka_episode_active_exists(const char *ws);
int aka_episode_clear_active(const char *ws, struct aka_err *err);

/* The kind episode `number` gets (DESIGN §3 scheduling). */
enum aka_episode_kind aka_episode_kind_for(const struct aka_optimize_opts *o, long number,
                                           const struct aka_episode_counters *c);

/* The Triton→Gluon conversion latch (schedule.c; DESIGN §3, §6), persisted in
 * .aka/state.json ("conversion") so that a resumed campaign keeps it. */
extern const char *const aka_conversion_names[];
enum aka_conversion aka_conversion_next(const struct aka_optimize_opts *o, enum aka_conversion cur,
                                        const struct aka_episode_counters *c);
enum aka_conversion aka_conversion_after(enum aka_conversion cur, enum aka_memory_status status);
/* Latched conversion acceptance: candidate at most 5% slower than the incumbent. */
bool aka_conversion_parity(double candidate_us, double incumbent_us);
/* Structure check while latched: the kernel source imports Gluon. */
bool aka_kernel_imports_gluon(const char *source);
/* The persisted latch of a workspace (stops.c); NONE when never latched. */
enum aka_conversion aka_conversion_load(const char *ws);
/* Episode hooks (conversion.c): the brief's conversion directive (pending only); a
 * candidate that does not import Gluon is rejected (pending or latched); a pending
 * conversion that did not win is accepted at parity (recorded in verification). */
int aka_conversion_brief(const struct aka_run *r, const struct aka_optimize_opts *o,
                         struct strbuf *brief, struct aka_err *err);
void aka_conversion_check_candidate(const struct aka_run *r, struct aka_episode *ep);
bool aka_conversion_accepts(const struct aka_run *r, double candidate_us, double incumbent_us,
                            json_t *verification);

/* Stop rules evaluated at the loop top (stops.c): target-util, stall, budgets. */
struct aka_stops {
    struct aka_hw_peaks peaks;
    bool peaks_loaded, said_inactive;
    long util_checked; /* the incumbent version last measured against the roofline */
    enum aka_conversion conversion;
    long conversion_since; /* latest version when the latch engaged */
};
void aka_stops_init(struct aka_stops *s, const char *ws);
/* 1 (reason filled) to stop, 0 to run an episode, -1 with err (a latched conversion
 * that ran out of budget is an error, not a stop). */
int aka_stops_check(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_stops *s,
                    const struct aka_episode_counters *c, char *reason, size_t len,
                    struct aka_err *err);

/* A progress line about an episode: "episode k/N (kind) phase, best latency X us,
 * speedup Y.YYx vs V0: detail" where k is the version it makes (loop.c). */
void aka_episode_progress(struct aka_run *r, const struct aka_episode *ep, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The episode's outcome and its one-line reason in ep->violation (episode_state.c). */
void aka_episode_set_status(struct aka_episode *ep, enum aka_memory_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Run the agent session and classify its handoff (episode_assess.c). */
int aka_episode_session(struct aka_run *r, const struct aka_optimize_opts *o,
                        struct aka_episode *ep, struct aka_err *err);
/* Terminal assessment of a candidate_ready handoff; sets ep->status on failure. */
int aka_episode_check_candidate(struct aka_run *r, struct aka_episode *ep, struct aka_err *err);
/* Production's source gate before verification (episode_policy.c): the deterministic
 * policy, then the policy reviewer; a rejection sets ep->status, ep->policy says what
 * was decided. 0 in leaderboard mode or when the candidate is not to be verified. */
int aka_episode_policy(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_episode *ep,
                       struct aka_err *err);
/* Who reviews a production candidate's source: "agent", "waived" or "none" (campaign.json);
 * NULL in leaderboard mode. */
const char *aka_episode_policy_reviewer(const struct aka_optimize_opts *o);

/* The CPU stand-in of a distributed operator (cpu_stand_in.c): a Python-layout operator on
 * --platform cpu, its ranks on Gloo. */
bool aka_cpu_stand_in(const char *platform, const char *arch, const struct aka_operator *op);
/* 0 unless the campaign is a CPU stand-in whose operator (which: "the operator", "the
 * campaign's snapshot") lacks a valid distributed contract or whose framework is not
 * PyTorch: then -1, code 2, the operator and the contract named. */
int aka_cpu_stand_in_check(const struct aka_optimize_opts *o, const struct aka_operator *op,
                           const char *which, struct aka_err *err);
/* The record's typed entry for the distributed exception: {kind: "distributed", world_size,
 * launcher, backend, ranks_backend, reason, skipped: [...], enforced: [...]}. */
json_t *aka_distributed_exception_json(const struct aka_benchmark_contract *c, bool stand_in);
/* After the session: a candidate is assessed, then verified (phase "verifying") and, in
 * production, probed (phases "probing", "probed"). */
int aka_episode_assess(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_episode *ep,
                       struct aka_err *err);
/* Recovery: does the worktree hold a handoff that completes this episode (the session's own
 * check, the fast gate included)? If so, ep->status (and candidate) are set from it. */
bool aka_episode_late_handoff(const struct aka_run *r, struct aka_episode *ep);

/* Production's numerical probes of a verified candidate (episode_probe.c): the plan in
 * ep->probes and the active record, then the judge's run; a failure rejects, named. */
int aka_episode_probe(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_episode *ep,
                      struct aka_err *err);

/* Set one key of .aka/state.json, keeping the others (the counters belong to
 * episode_state.c). Steals value (stops.c). */
int aka_optimize_state_set(const char *ws, const char *key, json_t *value, struct aka_err *err);

/* The request of an evaluation the supervisor runs itself (verification, the submission
 * check): the operator snapshot and asset tree re-verified (op_dir receives the snapshot's
 * path, which req points into), the campaign's framework, platform and limits. */
int aka_supervisor_request(struct aka_run *r, const struct aka_optimize_opts *o, const char *kernel,
                           struct aka_eval_request *req, struct strbuf *op_dir,
                           struct aka_err *err);

/* Fast or ABBA verification of ep->candidate (episode_verify.c). */
int aka_episode_verify(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_episode *ep,
                       struct aka_err *err);

/* A version record's "roofline": how far its latencies are from the platform's ceilings (a
 * new reference). Not in a generalized campaign: bytes and flops per shape come from the
 * private sizes, and the record is the agent's to read (episode_record.c). */
json_t *aka_version_roofline(const struct aka_run *r, const json_t *performance);

/* The one canonical commit of the episode, then cleanup (episode_record.c). */
int aka_episode_record(struct aka_run *r, struct aka_episode *ep, struct aka_err *err);

/* After the canonical commit: counters (once per episode), state.json, active record gone. */
int aka_episode_finish(struct aka_run *r, const struct aka_episode *ep,
                       struct aka_episode_counters *c, struct aka_err *err);
void aka_episode_release(struct aka_episode *ep);

/* An episode left in flight by a stopped supervisor (episode_recover.c): a version
 * already committed is proven and finished; otherwise, with HEAD still at the base, a
 * valid late handoff is assessed, verified and recorded, else the episode is recorded as
 * interrupted; anything else is refused (code 1). */
int aka_episode_recover(struct aka_run *r, const struct aka_optimize_opts *o,
                        struct aka_episode_counters *c, struct aka_err *err);

/* The environment failed (environment.c): the episode in flight's agents ended; at the
 * resume, the episode discarded (no record, no count; 1 when HEAD moved past its base). */
void aka_episode_end_active_agents(struct aka_run *r);
int aka_episode_discard(struct aka_run *r, struct aka_err *err);

/* <ws>/.aka/environment-failure.json (environment.c): written (atomically) when the campaign
 * stops with code 75; at the next start its episode is discarded, then it is removed. */
int aka_env_marker_write(struct aka_run *r, const struct aka_err *cause, struct aka_err *err);
int aka_env_marker_settle(struct aka_run *r, struct aka_err *err);
/* An episode that did not promote is recorded only on a healthy machine: else code 75. */
int aka_env_check_before_blame(struct aka_run *r, const struct aka_optimize_opts *o,
                               const struct aka_episode *ep, struct aka_err *err);
/* The health probe before V0 (and before anything else the campaign runs). */
int aka_env_preflight(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_err *err);

/* Archive the worktree's evidence and remove it (the branch stays); prune when it is gone. */
int aka_episode_drop_worktree(struct aka_run *r, const struct aka_episode *ep, struct aka_err *err);

/* ---- the agent's repository, its view and the candidate's return (candidate.c) ---------- */

/* <tree>.view: the read-only campaign view of a session in tree. */
void aka_candidate_view_path(const char *tree, struct strbuf *out);
/* The agent's own repository at tree: base and its history fetched from the workspace,
 * `branch` checked out at base, an agent identity for its commits. */
int aka_candidate_repo_create(const struct aka_run *r, const char *tree, const char *branch,
                              const char *base, struct aka_err *err);
/* The view (recreated) of the session in tree: aka_ws_view_create at <tree>.view. */
int aka_candidate_view_create(const struct aka_run *r, const char *tree, struct aka_err *err);
/* After a session: the reviewer-ledger lines the agent's `aka ask-reviewer` added in the view
 * go to the workspace's ledger (they count toward --token-budget), its review captures to
 * dir/reviews. Best effort: a missing or garbled view loses only those. */
void aka_candidate_view_harvest(const struct aka_run *r, const char *tree, const char *dir);
/* The tree and its view gone (missing ones are fine); a path that is not directly below
 * the campaign's trees directory is refused. */
int aka_candidate_remove(const struct aka_run *r, const char *tree, struct aka_err *err);

/* The agent sandbox of a session in a tree (--agent-sandbox and its paths). */
struct aka_candidate_sandbox {
    struct strbuf view;
    struct strvec deny, read_only, writable;
    struct aka_agent_confinement c;
    /* The agent's `aka eval` is served by the supervisor (evaluator/broker.c), started by
     * aka_candidate_sandbox_start: a remote transport, a GPU campaign under --agent-eval
     * auto, or --agent-eval broker (aka_agent_eval_brokered). */
    bool brokered;
    struct aka_eval_broker_base broker_base;
    struct aka_eval_broker *broker;
};
void aka_candidate_sandbox_init(struct aka_candidate_sandbox *s, const struct aka_run *r,
                                const struct aka_optimize_opts *o, const char *tree);
/* Whether the supervisor serves the agent's `aka eval` (--agent-eval auto|sandbox|broker,
 * a GPU platform, a remote transport, the generalized mode). */
bool aka_agent_eval_brokered(const char *agent_eval, bool gpu, bool remote, bool generalized);
/* Right before the session: start the evaluation broker when the sandbox is brokered. */
int aka_candidate_sandbox_start(struct aka_candidate_sandbox *s, struct aka_run *r,
                                struct aka_err *err);
/* After the session: stop the broker (an evaluation it is running finishes first). */
void aka_candidate_sandbox_release(struct aka_candidate_sandbox *s);

/* A handoff's candidate, taken from the tree into the canonical repository. */
struct aka_candidate_take {
    const char *tree, *branch, *base;
    const char *candidate; /* 40 hex, from the handoff */
    const char *ref;       /* refs/aka/candidates/<name> */
};
/* Fetch it by hash (hooks off, objects checked), then: it is the tree's HEAD on its branch,
 * it descends from base, and the tree's kernel file is the committed one. false with the
 * reason in why when any of this fails. */
bool aka_candidate_take(const struct aka_run *r, const struct aka_candidate_take *t, char *why,
                        size_t n);

/* One whole episode; ep's status says how it ended (episode.c). */
int aka_episode_run(struct aka_run *r, const struct aka_optimize_opts *o,
                    struct aka_episode_counters *c, enum aka_memory_status *status,
                    struct aka_err *err);

#endif
