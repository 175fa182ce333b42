/*
 * tuner_internal.h — pieces shared by the tuner's episode driver files
 * (tuner_agent.c, tuner_eval.c, tuner_record.c). Not a public interface.
 */
#ifndef AKA_AGENTS_TUNER_INTERNAL_H
#define AKA_AGENTS_TUNER_INTERNAL_H

#include "agents/tuner.h"
#include "contracts/records.h"
#include "workspace/workspace.h"

/* One episode in progress. */
struct tune_ctx {
    const struct aka_tune_agent_opts *o;
    enum aka_episode_kind kind;
    char *worktree, *workspace, *kernel_rel, *kernel; /* kernel: absolute */
    struct strbuf text;                               /* the incumbent kernel bytes */
    struct strbuf journal, handoff;
    struct aka_knob_space space;
    struct aka_tune_history hist;
    long long episode, memory_version;
    int trials; /* --trials, else $ATREX_AKA_FAST_TRIALS in a fast episode, else 5 */
    char base_commit[AKA_COMMIT_HEX_LEN + 1];
};

/* What one `aka eval` said. */
struct tune_trial {
    size_t idx[AKA_TUNE_MAX_KNOBS];
    bool ran;       /* a verdict came back (exit 0 or 1) */
    bool pass;      /* all_pass */
    double score;   /* performance_score (AKA_MISSING when absent) */
    double latency; /* latency_us_geomean */
    char eval_id[64];
    char sha256[65];
    char failure[256]; /* first failure, or why no verdict */
};

/* tuner_eval.c */
/* Evaluate the worktree kernel: with knobs (native: --tune) or as it is (knobs NULL). */
int tune_eval(struct tune_ctx *c, const size_t *knobs, struct tune_trial *t, struct aka_err *err);
/* Is a better than b by at least pct percent, by score and by latency geomean (each where
 * both measured it; the supervisor's rule)? */
bool tune_better(const struct tune_trial *a, const struct tune_trial *b, double pct);
json_t *tune_trial_json(const struct tune_ctx *c, const struct tune_trial *t, bool with_knobs);

/* tuner_record.c */
int tune_load_history(struct tune_ctx *c, struct aka_err *err);
int tune_journal_open(struct tune_ctx *c, struct aka_err *err);
int tune_journal_add(struct tune_ctx *c, json_t *experiment, struct aka_err *err);
/* Finalize the journal and hand off; commit is NULL unless candidate_ready. */
int tune_finish(struct tune_ctx *c, enum aka_handoff_status st, const char *commit,
                const char *summary, struct aka_err *err);
int tune_commit_kernel(struct tune_ctx *c, const char *message, char *oid, struct aka_err *err);

#endif
