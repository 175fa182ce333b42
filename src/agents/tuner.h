/*
 * tuner.h — the built-in tuner agent (`aka tune-agent`, DESIGN §9).
 *
 * The tuner is an agent like any other: it gets a worktree and a brief, calls
 * `aka eval` (as a subprocess, exactly as an LLM agent would), journals each
 * experiment, commits only the kernel file and writes a handoff. Its "ideas"
 * come from the knobs the kernel declares in comments:
 *
 *     C / CUDA:  / * aka:tune TILE_M in {16, 32, 64} * /   then  #define TILE_M 32
 *                // aka:tune TILE_M in {16, 32, 64}
 *     Python:    # aka:tune BLOCK in {64, 128}             then  BLOCK = 64
 *
 * The incumbent configuration is the kernel's defaults. A configuration is a
 * value index per knob; configurations already recorded (eval records' `tune`
 * maps, kernel hashes, memory records) are never tried again.
 *
 * The pure pieces (parsing, rewriting, history, search order) are exposed for
 * the unit tests; aka_tune_agent_run() is what `aka tune-agent` calls.
 */
#ifndef AKA_AGENTS_TUNER_H
#define AKA_AGENTS_TUNER_H

#include "base/error.h"
#include "base/strbuf.h"
#include "base/vec.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AKA_TUNE_MAX_KNOBS  32
#define AKA_TUNE_MAX_VALUES 64
#define AKA_TUNE_NAME_MAX   64

/* Comment syntax of the kernel file: '#' (Python) or C-like. */
enum aka_tune_lang { AKA_TUNE_LANG_C = 0, AKA_TUNE_LANG_PYTHON };

/* .py → Python; anything else (.c, .cu, .cuh, .h, ...) → C. */
enum aka_tune_lang aka_tune_lang_for(const char *path);

struct aka_knob {
    char name[AKA_TUNE_NAME_MAX];
    struct strvec values; /* as written, in declared order */
    size_t dflt;          /* index of the kernel's default value in values */
    int line;             /* 1-based line of the annotation */
    int def_line;         /* 1-based line of the default definition */
};

struct aka_knob_space {
    struct aka_knob v[AKA_TUNE_MAX_KNOBS];
    size_t n;
    enum aka_tune_lang lang;
};

/*
 * Parse every `aka:tune NAME in {a, b}` annotation in the comments of text and
 * find each knob's default (#define NAME v / NAME = v). Malformed annotations,
 * duplicate knobs or values, a missing default or a default outside the set
 * are code-2 errors reading "LABEL:LINE: ...". Zero knobs is not an error.
 */
int aka_tune_parse(const char *label, const char *text, enum aka_tune_lang lang,
                   struct aka_knob_space *out, struct aka_err *err);
void aka_knob_space_release(struct aka_knob_space *s);

/* The incumbent configuration: each knob's default index. */
void aka_tune_defaults(const struct aka_knob_space *s, size_t *idx);
/* "NAME=VALUE,..." in declaration order: the identity of a configuration. */
void aka_tune_key(const struct aka_knob_space *s, const size_t *idx, struct strbuf *out);
/* {"NAME": "VALUE", ...} */
json_t *aka_tune_json(const struct aka_knob_space *s, const size_t *idx);
/* Number of configurations, saturated at SIZE_MAX. */
size_t aka_tune_space_size(const struct aka_knob_space *s);

/* text with every knob's default definition set to idx's values. */
int aka_tune_rewrite(const char *label, const char *text, const struct aka_knob_space *s,
                     const size_t *idx, struct strbuf *out, struct aka_err *err);

/* ---- what has been tried ----------------------------------------------------------------- */

struct aka_tune_history {
    struct strvec keys;   /* aka_tune_key of every recorded configuration */
    struct strvec hashes; /* sha256 of every recorded kernel (knob-free evaluations) */
};

void aka_tune_history_release(struct aka_tune_history *h);
/* Collect every "tune" object and "kernel_sha256" string anywhere in doc.
 * A "tune" map that does not name every knob of s is ignored (its other values
 * are unknown). */
void aka_tune_history_add_json(struct aka_tune_history *h, const struct aka_knob_space *s,
                               json_t *doc);
void aka_tune_history_add_key(struct aka_tune_history *h, const struct aka_knob_space *s,
                              const size_t *idx);
/* Tried when its key is recorded, or when the kernel rewritten to it (text)
 * has a recorded hash. text may be NULL (keys only). */
bool aka_tune_tried(const struct aka_tune_history *h, const struct aka_knob_space *s,
                    const char *text, const size_t *idx);

/* ---- search order ------------------------------------------------------------------------ */

/*
 * The untried configuration nearest to center (L1 distance in value indexes;
 * distance 1 = one knob moved to a neighbouring value: coordinate descent),
 * ties broken by enumeration order. false when every configuration was tried.
 */
bool aka_tune_nearest(const struct aka_knob_space *s, const struct aka_tune_history *h,
                      const char *text, const size_t *center, size_t *out);
/* A uniformly random untried configuration drawn with *rng (splitmix64). */
bool aka_tune_random(const struct aka_knob_space *s, const struct aka_tune_history *h,
                     const char *text, uint64_t *rng, size_t *out);

/*
 * The next configuration of a search around best (the best measured so far): coordinate
 * descent (aka_tune_nearest), a random restart once every neighbour of best is tried, and
 * with restarts_often a random restart on every even trial. Never a tried configuration;
 * false when none is left.
 */
bool aka_tune_next(const struct aka_knob_space *s, const struct aka_tune_history *h,
                   const char *text, bool restarts_often, int trial, const size_t *best,
                   uint64_t *rng, size_t *out);

/* ---- the agent --------------------------------------------------------------------------- */

enum aka_episode_kind { AKA_EPISODE_FAST = 0, AKA_EPISODE_FULL, AKA_EPISODE_GOAL };

/* The kind named in a brief's title ("# Episode 3 (goal): ..."); fast when none. */
enum aka_episode_kind aka_tune_kind_from_brief(const char *brief);

struct aka_tune_agent_opts {
    const char *worktree;           /* NULL: $ATREX_AKA_WORKTREE, else the current directory */
    const char *brief;              /* the rendered brief (kind, episode, memory version) */
    const char *kind;               /* fast|full|goal; NULL: from the brief */
    const char *aka_bin;            /* the aka binary to call `aka eval` with */
    const char *journal;            /* NULL: <worktree>/.aka/journal.json */
    const char *handoff;            /* NULL: <worktree>/.aka/handoff.json */
    const struct strvec *eval_args; /* extra `aka eval` flags (--shape-id, --timed-runs, ...) */
    int trials;                     /* trials per episode; 0: the default (tuner_agent.c) */
    double min_improvement_pct;     /* a trial must beat the incumbent by this much */
    long long episode;              /* < 0: from $ATREX_AKA_EPISODE or the brief */
    long long memory_version;       /* < 0: from the brief, else latest memory + 1 */
};

/* Run one episode. Returns the exit status (0 once a handoff was written). */
int aka_tune_agent_run(const struct aka_tune_agent_opts *o);

#endif
