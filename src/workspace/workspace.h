/*
 * workspace.h — the one owner of a campaign's files and of the supervisor's commit
 * subjects (DESIGN §2, §4.4). Nothing else in aka knows a path under .aka/ or memory/.
 *
 *   paths      every file of the workspace (.aka/…, memory/…), of an episode worktree
 *              (.aka/BRIEF.md, journal, handoff, evaluations.jsonl) and the worktree
 *              location (paths.c);
 *   subjects   the six commit kinds of the incumbent branch, formatted and parsed in one
 *              place (subject.c);
 *   campaign   .aka/campaign.json: written once with the asset-tree pin, compared on
 *              resume, parsed by exactly one function (campaign.c);
 *   evidence   the operator snapshot (.aka/operator/ and its manifest) and the asset-tree
 *              pin, re-verified before every evaluation (snapshot.c);
 *   memory     canonical records read from committed blobs only, and the one incumbent
 *              rule (memory.c);
 *   commits    every supervisor commit written ahead (.aka/commits.json), made exactly as
 *              recorded, and a history check that accepts only recorded commits
 *              (commits.c);
 *   state      raw reads and atomic writes of .aka/state.json and
 *              .aka/active_episode.json, and the supervisor lock (state.c).
 *
 * Why one owner: evidence the supervisor decides from must come from one place that
 * pins it. A file re-read from the working tree or from the original operator
 * directory is something an agent could have edited (docs/workspace.md).
 */
#ifndef AKA_WORKSPACE_H
#define AKA_WORKSPACE_H

#include "base/error.h"
#include "base/lock.h"
#include "base/strbuf.h"
#include "base/vec.h"
#include "contracts/benchmark.h"
#include "contracts/pins.h"
#include "contracts/records.h"
#include "git/git.h"

#include <jansson.h>
#include <stdbool.h>

/* ---- paths (paths.c) ---------------------------------------------------------------------- */

enum aka_ws_file {
    AKA_WS_STATE_DIR,            /* .aka: supervisor state (ignored by git) */
    AKA_WS_CAMPAIGN,             /* .aka/campaign.json */
    AKA_WS_STATE,                /* .aka/state.json: counters, latches */
    AKA_WS_ACTIVE_EPISODE,       /* .aka/active_episode.json: the episode in flight */
    AKA_WS_LOCK,                 /* .aka/supervisor.lock */
    AKA_WS_COMMITS,              /* .aka/commits.json: the supervisor's commit ledger */
    AKA_WS_EPISODES,             /* .aka/episodes: one e<NNNN> directory per episode */
    AKA_WS_OPERATOR,             /* .aka/operator: the operator snapshot */
    AKA_WS_OPERATOR_MANIFEST,    /* .aka/operator.json: sha256 of every snapshot file */
    AKA_WS_PUBLIC_OPERATOR,      /* .aka/public_operator: generalized mode's public operator */
    AKA_WS_V1_DIR,               /* .aka/v1: the V1 session's copies */
    AKA_WS_V1_GROUPS,            /* .aka/v1/agent_groups.jsonl */
    AKA_WS_PLAN_REVIEWERS,       /* .aka/plan_reviewers.json */
    AKA_WS_PLAN_REVIEWER_PROBES, /* .aka/plan_reviewers */
    AKA_WS_REVIEWER_TOKENS,      /* .aka/reviewer_tokens.jsonl */
    AKA_WS_REVIEWS,              /* .aka/reviews */
    AKA_WS_BROKER_REQUESTS,      /* .aka/broker/requests: an agent's evaluation requests */
    AKA_WS_BROKER_RESULTS,       /* .aka/broker/results: the supervisor's answers */
    AKA_WS_POLICY_REVIEWS,       /* .aka/policy_reviews: production verdicts by kernel digest */
    AKA_WS_SUBMISSION,           /* .aka/submission: staging of solution.json */
    AKA_WS_MEMORY,               /* memory: canonical records */
    AKA_WS_LIVE,                 /* memory/live.json: progress view, never canonical */
    AKA_WS_V0_FAILED,            /* memory/v0.failed.json: never committed */
    AKA_WS_V1_FAILED,            /* memory/v1.failed.json: never committed */
    AKA_WS_FILE_COUNT
};

/* The path of f relative to the workspace ("memory/live.json"). */
const char *aka_ws_rel(enum aka_ws_file f);
/* <ws>/<rel of f> into out (reset first). */
void aka_ws_path(struct strbuf *out, const char *ws, enum aka_ws_file f);
/* memory/v<N>.json, relative and absolute. */
void aka_ws_memory_rel(struct strbuf *out, long version);
void aka_ws_memory_path(struct strbuf *out, const char *ws, long version);
/* <ws>/.aka/episodes/e<NNNN>, and its runtime/ archive of the worktree's evidence. */
void aka_ws_episode_dir(struct strbuf *out, const char *ws, long number);
void aka_ws_episode_archive(struct strbuf *out, const char *episode_dir);
/* <parent of ws>/.aka-worktrees/<name of ws>/<leaf>: worktrees live outside the workspace. */
void aka_ws_worktree_path(struct strbuf *out, const char *ws, const char *leaf);
/* <parent of ws>/.aka-worktrees/<name of ws>: the directory every such worktree is in. */
void aka_ws_worktrees_dir(struct strbuf *out, const char *ws);
/* refs/aka/candidates/<leaf> ("v1", "e0007"): where the canonical repository keeps a
 * candidate fetched by hash from an agent's repository (optimize/candidate.c). */
void aka_ws_candidate_ref(struct strbuf *out, const char *leaf);
/* The workspace's .gitignore: supervisor state and non-canonical views never committed. */
const char *aka_ws_gitignore(void);

/* Files of an episode (or V1) worktree, the agent's side. */
enum aka_wt_file {
    AKA_WT_STATE_DIR,   /* .aka */
    AKA_WT_BRIEF,       /* .aka/BRIEF.md */
    AKA_WT_JOURNAL,     /* .aka/journal.json */
    AKA_WT_HANDOFF,     /* .aka/handoff.json */
    AKA_WT_EVALUATIONS, /* .aka/evaluations.jsonl */
    AKA_WT_TRACE,       /* .aka/trace.jsonl: `aka trace` phase markers (the agent's claim) */
    AKA_WT_PROFILES,    /* .aka/profiles/: `aka profile` summaries (never committed) */
    AKA_WT_FILE_COUNT
};
const char *aka_wt_rel(enum aka_wt_file f);
/* The file name alone ("journal.json"), as archived under an episode directory. */
const char *aka_wt_name(enum aka_wt_file f);
void aka_wt_path(struct strbuf *out, const char *worktree, enum aka_wt_file f);

/* ---- commit subjects (subject.c) ---------------------------------------------------------- */

enum aka_commit_kind {
    AKA_COMMIT_V0_SOURCE,      /* "V0: baseline kernel" */
    AKA_COMMIT_V0_MEASUREMENT, /* "V0: record baseline measurement" */
    AKA_COMMIT_V1_KERNEL, /* "v1: framework baseline (<fw>) replacing the V0 baseline kernel" */
    AKA_COMMIT_V1_PIN,    /* "v1: pin framework baseline <8 hex>" */
    AKA_COMMIT_PROMOTION, /* "episode <E>: promote verified candidate" */
    AKA_COMMIT_OUTCOME,   /* "v<N>: episode <E> <status>" */
    AKA_COMMIT_KIND_COUNT
};

struct aka_commit_subject {
    enum aka_commit_kind kind;
    char framework[32];            /* V1 kernel */
    char kernel_commit[9];         /* V1 pin: the kernel commit's first 8 hex digits */
    long episode, version;         /* promotion: episode; outcome: both */
    enum aka_memory_status status; /* outcome: an episode status other than promoted */
};

/* The subject line of s. */
void aka_ws_subject_format(const struct aka_commit_subject *s, struct strbuf *out);
/* Parse a subject line; false when it is none of the six kinds (exactly as formatted). */
bool aka_ws_subject_parse(const char *subject, struct aka_commit_subject *out);

/* ---- campaign.json (campaign.c) ----------------------------------------------------------- */

#define AKA_CAMPAIGN_SCHEMA "aka.campaign.v1"

/* What a campaign is, as the supervisor starts it. */
struct aka_campaign {
    const char *mode;      /* leaderboard | production */
    const char *framework; /* canonical: C, Cuda, Triton, ... */
    const char *platform;  /* as given to --platform */
    const char *cuda_arch; /* --arch (sm_NN, gfxNNN, zwm890p); NULL or "": the platform's */
    const char *agent;     /* --agent-cli */
    const char *op_dir;    /* absolute path of the original operator directory */
    const char *op_name;
    const char *layout;            /* native | atrex | sol */
    const char *kernel;            /* kernel file name, relative to a worktree */
    const char *sandbox_isolation; /* bwrap | none */
    const char *agent_sandbox;     /* bwrap | none: the agent CLI confined or not */
    const char *policy_reviewer;   /* production: agent | waived | none; NULL: leaderboard */
    const struct aka_benchmark_contract *contract;
    const struct aka_runtime_pins *pins;
    const char *repo_root; /* the asset tree whose runtime/ is pinned (content, not path) */
    const json_t *plugins; /* the wiki plugin set's pin (wiki.h aka_wiki_pin), or NULL */
    /* Generalized production (docs/production.md): the agent works on the public operator
     * (AKA_WS_PUBLIC_OPERATOR) and every supervisor evaluation is masked; pinned with the
     * sha256 of the original's agent_problem.json, so a resume refuses a changed problem. */
    bool generalized;
    const char *agent_problem_sha256; /* 64 hex when generalized */
};

/* The document written to .aka/campaign.json, the asset pin included. NULL with err when
 * the asset tree cannot be read. */
json_t *aka_campaign_to_json(const struct aka_campaign *c, struct aka_err *err);

/*
 * First start: write <ws>/.aka/campaign.json (with the asset-tree manifest). Resume:
 * every pinned field must equal the current one (code 2 naming the field and both
 * values), and the asset tree must still hash as pinned (code 2 naming the file).
 */
int aka_campaign_pin_or_check(const char *ws, const struct aka_campaign *c, struct aka_err *err);

/* Fields of a loaded campaign.json; a mask of them says which a reader requires. */
enum aka_campaign_field {
    AKA_CF_SCHEMA = 1u << 0,
    AKA_CF_MODE = 1u << 1,
    AKA_CF_FRAMEWORK = 1u << 2,
    AKA_CF_PLATFORM = 1u << 3,
    AKA_CF_AGENT = 1u << 4,
    AKA_CF_OP_NAME = 1u << 5,
    AKA_CF_OP_DIR = 1u << 6,
    AKA_CF_LAYOUT = 1u << 7,
    AKA_CF_KERNEL = 1u << 8,
    AKA_CF_ISOLATION = 1u << 9,
};
/* Everything a campaign written by aka optimize has. */
#define AKA_CF_ALL 0x3ffu

struct aka_ws_campaign {
    json_t *doc; /* the whole document (owned); the strings below point into it */
    char *path;  /* the file, as named in messages (owned) */
    const char *schema, *mode, *framework, *platform, *agent, *op_name, *op_dir, *layout;
    const char *kernel; /* checked: a safe path relative to a worktree */
    const char *sandbox_isolation, *cuda_arch, *created_at;
    const char *agent_sandbox; /* bwrap | none; absent in campaigns older than the agent sandbox */
    json_t *assets;            /* {"runtime/...": sha256} pinned at creation, or NULL */
    bool operator_snapshot;    /* the campaign evaluates .aka/operator/ (its manifest required) */
    bool generalized;          /* "generalized": true (absent: false) */
};

/*
 * The one parser of <ws>/.aka/campaign.json. Every field present is type-checked; the
 * fields in `required` must be present (code 2: "FILE: FIELD: required field is
 * missing"); a schema other than aka.campaign.v1 is refused. Release with
 * aka_ws_campaign_release (also after a failure).
 */
int aka_ws_campaign_load(const char *ws, unsigned required, struct aka_ws_campaign *c,
                         struct aka_err *err);
void aka_ws_campaign_release(struct aka_ws_campaign *c);

/* ---- pinned evidence (snapshot.c) --------------------------------------------------------- */

/*
 * The operator snapshot. At a campaign's first start (no campaign.json yet) the original
 * operator directory is copied to .aka/operator/ and a manifest of each file's sha256 is
 * written atomically (.aka/operator.json); later the snapshot is verified against that
 * manifest. A mismatch, a missing manifest or an extra file is code 2 naming the file.
 * dir: the snapshot directory.
 */
int aka_ws_operator_snapshot(const char *ws, const char *original, struct strbuf *dir,
                             struct aka_err *err);
/* The snapshot verified against its manifest (code 2 naming the file); dir: its path. */
int aka_ws_operator_verify(const char *ws, struct strbuf *dir, struct aka_err *err);
/* A snapshot of the directory `original` made into <ws>/.aka/operator with its manifest,
 * whatever is there: for a view, whose snapshot is the public operator (generalized). */
int aka_ws_operator_snapshot_into(const char *ws, const char *original, struct aka_err *err);
/* Whether the original operator directory still holds what the snapshot holds: false with
 * one line naming the first difference in what ("reference.c differs from the V0
 * snapshot"). Never an error: a changed original is reported, never used. */
bool aka_ws_operator_unchanged(const char *ws, const char *original, struct strbuf *what);

/* {"runtime/<path>": sha256} of every file aka ships from <repo_root>/runtime/. */
json_t *aka_ws_assets_manifest(const char *repo_root, struct aka_err *err);
/* The asset tree against a pinned manifest: code 2 naming the first changed, added or
 * missing file. pinned_in names where the pin lives, for the message. */
int aka_ws_assets_verify(const json_t *pinned, const char *repo_root, const char *pinned_in,
                         struct aka_err *err);

/*
 * Before an evaluation job of the campaign at ws: its campaign.json read, the asset tree
 * re-hashed against the campaign's pin and the operator snapshot against its manifest.
 * op_dir: the directory to evaluate against — the snapshot, or for a campaign.json without
 * one (written by hand), its op_dir (relative to ws or absolute).
 */
int aka_ws_eval_inputs(const char *ws, const char *repo_root, struct strbuf *op_dir,
                       struct aka_err *err);

/* ---- the agent's view (view.c) ----------------------------------------------------------- */

/*
 * Create `view` (removed first when there): a directory shaped like the workspace holding
 * copies of what an agent's own aka commands read — campaign.json (op_dir naming the
 * view's snapshot unless original_reachable: an unconfined agent), the operator snapshot and its
 * manifest, memory/, the plan-reviewer cache, the plugins, earlier episodes' archives — an empty
 * reviewer token ledger when the workspace has none, and an empty reviews directory. `aka eval`
 * with ATREX_AKA_WORKSPACE=view runs the same pin checks as in the workspace.
 */
int aka_ws_view_create(const char *ws, const char *view, bool original_reachable,
                       struct aka_err *err);
/* The paths in a view a confined agent may write (`aka ask-reviewer`), appended. */
void aka_ws_view_writable(const char *view, struct strvec *out);
/* After the session: the ledger lines the view gained (JSON objects only) appended to the
 * workspace's ledger (kept as reviewer_tokens.session.jsonl in episode_dir too), and the
 * view's review captures copied to episode_dir/reviews. Best effort: never fails. */
void aka_ws_view_harvest(const char *ws, const char *view, const char *episode_dir);

/* ---- canonical memory (memory.c) ---------------------------------------------------------- */

/* memory/v<N>.json as committed at HEAD, parsed and saying v<N>. Anything else is code 1
 * naming HEAD:memory/v<N>.json: a canonical record is never read from the working tree. */
int aka_ws_memory_at_head(const char *ws, long version, struct aka_memory_record *m,
                          struct aka_err *err);
/* The highest version committed at HEAD (-1: none, or no HEAD yet). */
int aka_ws_latest_version(const char *ws, long *latest, struct aka_err *err);
/*
 * The one incumbent rule: the newest committed record whose status is baseline,
 * framework_baseline or promoted. Every record from the latest down to it is read from
 * HEAD and must parse: an unreadable or inconsistent one fails closed naming the file,
 * never falls back to an older version. 0 with m filled; 1 when no version is committed
 * (m untouched); -1 with err (code 1). latest (may be NULL): the highest version.
 */
int aka_ws_incumbent(const char *ws, struct aka_memory_record *m, long *latest,
                     struct aka_err *err);
/* Validate doc and write memory/v<N>.json atomically (N from its version). */
int aka_ws_memory_write(const char *ws, json_t *doc, struct aka_err *err);
/* After a version commit: memory/v<N>.json parses, says v<N> and equals HEAD's copy byte
 * for byte before any state advances (code 1 otherwise). */
int aka_ws_check_canonical(const char *ws, long version, struct aka_err *err);
/* Whether every committed memory record's working copy equals its committed blob: false
 * with a line naming the first that differs (the supervisor never reads those copies). */
bool aka_ws_memory_unchanged(const char *ws, struct strbuf *what);

/* ---- the supervisor's commits (commits.c) ------------------------------------------------- */

/* A commit about to be made, recorded before it is made (write-ahead). */
struct aka_commit_intent {
    char parent[AKA_GIT_OID_HEX + 1]; /* "" for the root commit */
    char tree[AKA_GIT_OID_HEX + 1];
    char subject[256];
};

/* The index's tree, HEAD as the parent and the subject: recorded in .aka/commits.json. */
int aka_ws_commit_prepare(const char *ws, const struct aka_commit_subject *s,
                          struct aka_commit_intent *in, struct aka_err *err);
/* Make exactly the prepared commit (HEAD moves only while it still is the parent) and
 * record it; its id in oid. */
int aka_ws_commit_make(const char *ws, const struct aka_commit_intent *in, char *oid,
                       struct aka_err *err);
/* Prepare and make (what the staged index holds, with subject s). */
int aka_ws_commit(const char *ws, const struct aka_commit_subject *s, char *oid,
                  struct aka_err *err);
/* Whether rev is exactly the intent: parent, tree, subject and the supervisor's name. */
int aka_ws_commit_matches(const char *ws, const char *rev, const struct aka_commit_intent *in,
                          bool *yes, struct aka_err *err);
/* The intent as JSON ({parent, tree, subject}), and back (false when malformed). */
json_t *aka_ws_intent_to_json(const struct aka_commit_intent *in);
bool aka_ws_intent_from_json(const json_t *j, struct aka_commit_intent *in);
/*
 * Every commit on HEAD's first-parent line must be one this supervisor recorded. A HEAD
 * that is exactly the pending intent (the supervisor stopped between its commit and the
 * record) is recorded now. Anything else is refused (code 1) naming the first such commit,
 * id and subject. A workspace with no commit yet passes.
 */
int aka_ws_history_check(const char *ws, struct aka_err *err);

/* ---- state files and the lock (state.c) --------------------------------------------------- */

/* Create .aka and take .aka/supervisor.lock (code 75 when another supervisor holds it). */
int aka_ws_lock(const char *ws, struct aka_lock *lk, struct aka_err *err);
/* .aka/state.json as an object (owned), or NULL when missing or unreadable. */
json_t *aka_ws_state_doc(const char *ws);
/* Replace .aka/state.json atomically. */
int aka_ws_state_write(const char *ws, const json_t *doc, struct aka_err *err);
/* .aka/active_episode.json: written atomically; loaded (code 1 when unreadable);
 * present?; removed durably. */
int aka_ws_active_write(const char *ws, const json_t *doc, struct aka_err *err);
int aka_ws_active_load(const char *ws, json_t **doc, struct strbuf *path, struct aka_err *err);
bool aka_ws_active_exists(const char *ws);
int aka_ws_active_clear(const char *ws, struct aka_err *err);

#endif
