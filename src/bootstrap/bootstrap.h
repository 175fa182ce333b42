/*
 * bootstrap.h — a campaign's workspace and its first versions (DESIGN §3, §4.3, §4.4, §9).
 *
 *   naming      kernel_opt_<op>_<framework>_<platform>[_production], every part a slug
 *   campaign    .aka/campaign.json (workspace/): the identity and pinned contracts of the
 *               campaign, written once and compared on every resume
 *   workspace   git repository with the visible evaluator inputs, the kernel file,
 *               README.md and .gitignore; a lock so one supervisor runs one campaign
 *   V0          source commit, one measurement, one measurement commit whose
 *               memory/v0.json points at the source commit
 *   V1 (seed)   the operator's seeds/<framework>/ kernel, committed, measured and
 *               pinned in framework_baseline.json
 *
 * The commit subjects are upstream's (reference/anchor-campaign.md §9), written by
 * workspace/ alone, so that recovery and tools recognise each commit kind.
 */
#ifndef AKA_BOOTSTRAP_H
#define AKA_BOOTSTRAP_H

#include "base/error.h"
#include "base/strbuf.h"
#include "contracts/benchmark.h"
#include "contracts/operator.h"
#include "contracts/pins.h"
#include "contracts/records.h"
#include "sandbox/sandbox.h"
#include "workspace/workspace.h"

#include <jansson.h>
#include <stdbool.h>

/* ---- naming (naming.c) ------------------------------------------------------------------- */

/* Lower-case; each run of characters outside [a-z0-9] becomes one '_'; no leading or
 * trailing '_'. An empty result is an error (code 2). */
int aka_slug(const char *in, struct strbuf *out, struct aka_err *err);

/* "kernel_opt_<slug(op)>_<slug(fw)>_<slug(platform)>[_production]". */
int aka_workspace_name(const char *op_name, const char *framework, const char *platform,
                       bool production, struct strbuf *out, struct aka_err *err);

/* The kernel file a layout's candidates live in: kernel.c, kernel.cu or kernel.py. */
const char *aka_kernel_file_name(const struct aka_operator *op);

/* ---- workspace (workspace.c) --------------------------------------------------------------- */

/*
 * Create the workspace files of a fresh campaign: git init, the visible evaluator
 * inputs of the layout, the kernel file (the reference as V0), README.md and
 * .gitignore (.aka/, memory/live.json). Files that already exist are kept, so a
 * rerun after a crash completes a half-made workspace without rewriting it.
 */
int aka_workspace_materialize(const char *ws, const struct aka_operator *op,
                              const struct aka_campaign *c, const char *notes, struct aka_err *err);

/* The visible evaluator inputs of the layout present in op (names, NULL-terminated static). */
void aka_workspace_visible_inputs(const struct aka_operator *op, bool production,
                                  struct strvec *out);

/* ---- V0 and V1 (baseline.c, v1_seed.c) ------------------------------------------------------ */

/* How the bootstrap measures (from the campaign flags). */
struct aka_measure_env {
    const struct aka_sandbox_transport *transport; /* where every measurement runs */
    const char *repo_root; /* asset tree holding runtime/harness (pinned by the campaign) */
    long timeout_s;        /* per evaluation */
    int timed_runs, warmup, multi_seed;             /* < 0: harness defaults; multi_seed <= 0: 1 */
    void (*progress)(const char *line, void *data); /* one line per phase; may be NULL */
    void *progress_data;
    /* How far a measured version is from the platform's ceilings, for its record's
     * "roofline" (a new reference the record takes over). The campaign supplies it: the
     * ceilings come from the wiki and the host, which the bootstrap does not open. NULL
     * leaves V0's and V1's records without one. */
    json_t *(*roofline)(const json_t *performance, void *data);
    void *roofline_data;
};

/* What a version's measurement came to, for the terminal line. */
struct aka_version_summary {
    long version;
    char commit[AKA_COMMIT_HEX_LEN + 1];
    double latency_us_geomean;
    double speedup_vs_ref;
    bool all_pass;
};

/*
 * Build a canonical memory record from an evaluator result: version, status,
 * timestamp, performance (per-shape, geomean, arith mean, measurement_status),
 * correctness, quality_gate, git_commit_hash (commit may be NULL).
 */
json_t *aka_memory_doc_from_result(long version, enum aka_memory_status status,
                                   const struct aka_result *r, const char *commit,
                                   const char *action_category, const char *description);

/*
 * V0 on a materialized workspace. Idempotent: the source commit is made once; a
 * present memory/v0.json means done. A failing measurement leaves
 * memory/v0.failed.json (not committed) and returns -1 with code 1; a rerun
 * retries the measurement.
 */
int aka_bootstrap_v0(const char *ws, const struct aka_campaign *c,
                     const struct aka_measure_env *env, struct aka_version_summary *out,
                     struct aka_err *err);

/* Whether the operator ships seeds/<framework>/<kernel file>; its path goes to out. */
bool aka_seed_kernel_path(const struct aka_operator *op, const char *framework, struct strbuf *out);

/*
 * V1 from the operator's seed kernel (built-in agent): commit the seed as the
 * kernel, measure it with multi-seed correctness, write memory/v1.json, pin
 * framework_baseline.json. Idempotent (a committed pin means done). A failing
 * seed is an error (code 1) and leaves V0 as the incumbent.
 */
int aka_bootstrap_v1_seed(const char *ws, const struct aka_campaign *c, const char *seed_path,
                          const struct aka_measure_env *env, struct aka_version_summary *out,
                          struct aka_err *err);

/*
 * V1 from any kernel file (the seed, or the candidate an agent's V1 session
 * committed in its worktree): the same commit, multi-seed measurement and pin.
 * `what` names the kernel in messages ("seed kernel", "agent's candidate"). On
 * failure HEAD goes back to V0 and memory/v1.failed.json keeps why (code 1).
 */
int aka_bootstrap_v1_commit(const char *ws, const struct aka_campaign *c, const char *kernel_path,
                            const char *what, const struct aka_measure_env *env,
                            struct aka_version_summary *out, struct aka_err *err);

/* Whether framework_baseline.json is committed at HEAD (V1 done). */
bool aka_bootstrap_v1_pinned(const char *ws);

/* memory/v1.failed.json (never committed): why a V1 attempt was refused; r may be NULL. */
void aka_bootstrap_v1_keep_failed(const char *ws, const struct aka_result *r, const char *why);

#endif
