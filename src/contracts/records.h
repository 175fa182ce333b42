/*
 * records.h — the evidence records of a campaign, typed and validated:
 *
 *   evaluator result   one RESULT_JSON=<object> line on an evaluator's stdout (DESIGN §4.6)
 *   memory record      memory/v<N>.json, the canonical record of version N (DESIGN §3, §4.4)
 *   episode journal    journal.json in an episode worktree: experiments and the outcome
 *   handoff            handoff.json beside it: how the agent ended the episode
 *
 * Field names follow the upstream formats (reference/anchor-campaign.md §3.2–3.4)
 * so that existing tools read our files; docs/contracts.md has the field tables.
 *
 * Conventions shared by every record:
 *   - Loaders validate types and cross-field consistency and fail with exit
 *     code 2 and one line "FILE: FIELD.PATH: expected ...; got ...".
 *   - A missing measurement is NaN in a struct (AKA_MISSING, test with
 *     aka_measured) and null in JSON, never 0: a zero latency would read as
 *     "infinitely fast", a zero error as "exact".
 *   - Writers validate first and replace the file atomically
 *     (aka_json_write_file); a failed write or validation leaves the old file.
 *   - Strings in structs point into the owned `json` document where noted, or
 *     are owned copies (freed by the *_release function).
 */
#ifndef AKA_CONTRACTS_RECORDS_H
#define AKA_CONTRACTS_RECORDS_H

#include "base/error.h"
#include "base/json.h"
#include "base/strbuf.h"
#include "base/vec.h"

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* ---- shared helpers ------------------------------------------------------ */

#define AKA_MISSING NAN
static inline bool aka_measured(double v)
{
    return !isnan(v);
}

#define AKA_COMMIT_HEX_LEN 40
#define AKA_TIMESTAMP_MAX  40

/* Exactly len lower-case hex digits (a commit id is 40, a sha256 64). */
bool aka_record_is_hex(const char *s, size_t len);
/* ISO-8601 date-time: YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM). */
bool aka_record_is_timestamp(const char *s);
/* The current UTC time as "YYYY-MM-DDTHH:MM:SSZ". */
void aka_record_now(char out[AKA_TIMESTAMP_MAX]);
/* Report "FILE: PATH: expected WANT; got VALUE" (VALUE rendered compactly, or
 * "nothing (the field is missing)" when got is NULL). Always returns -1. */
int aka_record_expected(const struct jctx *c, const char *path, const char *want,
                        const json_t *got);

/*
 * Keep an error message on one line: control characters that came from the
 * input (a key with a newline, a failure string with a tab) are written as
 * escapes (\n, \t, \xNN; strbuf_add_escaped). Returns rc, so public functions end with
 * `return aka_record_one_line(impl(...), err);`.
 */
int aka_record_one_line(int rc, struct aka_err *err);

/* A per-shape map (latency_us_by_shape, cv_by_shape) in document order. */
struct aka_shape_value {
    char *id;
    double value; /* AKA_MISSING when the shape was not measured */
};
struct aka_shape_map {
    struct aka_shape_value *v;
    size_t n, alloc;
};
/* Add or replace id's value. */
void aka_shape_map_set(struct aka_shape_map *m, const char *id, double value);
/* The value for id, or AKA_MISSING. */
double aka_shape_map_get(const struct aka_shape_map *m, const char *id);
void aka_shape_map_release(struct aka_shape_map *m);

/* ---- evaluator result (result.c) ------------------------------------------ */

#define AKA_RESULT_PREFIX "RESULT_JSON="

struct aka_diagnostic {
    char *stage;    /* e.g. compile_import, candidate_runtime */
    char *shape_id; /* NULL when not tied to a shape */
    char *message;
};

enum aka_probe_status { AKA_PROBE_PASSED, AKA_PROBE_FAILED, AKA_PROBE_INCOMPLETE };

/* One supplemental numerical probe (DESIGN §6): an input distribution run
 * through the immutable evaluator and judged against a supervisor threshold. */
struct aka_probe {
    char *id; /* unique within the result */
    enum aka_probe_status status;
    char *distribution; /* NULL or e.g. "scaled_1e4", "cancellation" */
    char *shape_id;     /* NULL or the shape it ran on */
    long long seed;
    bool has_seed;
    char *metric;     /* NULL or e.g. "rel_l2" */
    double value;     /* the measured metric, AKA_MISSING if none */
    double threshold; /* AKA_MISSING if none */
    char *detail;     /* NULL or a one-line explanation */
};

struct aka_timing {
    bool present;
    char *method; /* e.g. "cuda_event", "cuda_graph", "cpu_monotonic", "none" */
    long long warmup, reps;
    bool l2_flush;
    struct aka_shape_map cv_by_shape; /* coefficient of variation per shape */
    /* A time-budgeted schedule (docs/evaluator.md): the budget of a shape's timed runs per
     * runner (0: none recorded) and how many timed runs each shape got within it. */
    long long time_budget_ms;
    struct aka_shape_map reps_by_shape;
};

struct aka_result {
    bool all_pass;
    long long total, passed; /* correctness cases */
    struct strvec failures;  /* one line per failure; empty iff all_pass (unless masked) */
    bool masked;             /* generalized production: details withheld (hidden_case_details) */
    struct aka_shape_map latency_us_by_shape;
    double latency_us_geomean, latency_us_arith_mean;
    double speedup_vs_ref_geomean, speedup_vs_ref_mean, performance_score;
    double max_abs_err, max_rel_err;
    char *evaluator;     /* NULL or e.g. "aka/native-c", "atrex-bench/run_eval" */
    char *eval_id;       /* NULL or the evaluator's run id */
    char *kernel_sha256; /* NULL or 64 lower-case hex: the measured bytes */
    struct {
        long long *v;
        size_t n, alloc;
    } seeds;
    struct aka_timing timing;
    struct {
        struct aka_diagnostic *v;
        size_t n, alloc;
    } diagnostics;   /* actionable_diagnostics */
    bool has_probes; /* probes[] present (numerical probes ran) */
    struct {
        struct aka_probe *v;
        size_t n, alloc;
    } probes;
    json_t *extra; /* other top-level fields (upstream extensions), kept for round trips */
};

/* Empty result: counts 0, every measurement AKA_MISSING, no strings. */
void aka_result_init(struct aka_result *r);
void aka_result_release(struct aka_result *r);

/*
 * Find the one line of `text` that starts with RESULT_JSON= (optionally after
 * an upstream-style "[tag] " prefix), parse and validate it. Zero such lines
 * or more than one is an error that says which lines; a JSON syntax error
 * reads "LABEL:LINE:COLUMN: invalid JSON: ..." with the stdout line and the
 * column within it. Field errors read "LABEL:LINE: FIELD: expected ...".
 */
int aka_result_parse_output(const char *label, const char *text, size_t len, struct aka_result *out,
                            struct aka_err *err);
/* Parse and validate one result object (e.g. evaluations.jsonl's "result"). */
int aka_result_from_json(const char *label, json_t *obj, struct aka_result *out,
                         struct aka_err *err);
/* Cross-field consistency only (counts, all_pass, failures, sha, finiteness). */
int aka_result_validate(const char *label, const struct aka_result *r, struct aka_err *err);

/* Build the JSON object (missing measurements as null). */
json_t *aka_result_to_json(const struct aka_result *r);
/* "RESULT_JSON=<compact sorted JSON>\n" appended to out. */
void aka_result_format_line(const struct aka_result *r, struct strbuf *out);
/* Validate, then print the line to f and flush; -1 (nothing printed) if invalid. */
int aka_result_print(FILE *f, const struct aka_result *r, struct aka_err *err);

/* Builders for harnesses written in C (strings are copied). */
void aka_result_add_failure(struct aka_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void aka_result_add_diagnostic(struct aka_result *r, const char *stage, const char *shape_id,
                               const char *message);
void aka_result_set_string(char **field, const char *value);

/* ---- memory record (memory.c) --------------------------------------------- */

enum aka_memory_status {
    AKA_MEM_BASELINE,           /* V0: the evaluator-supported baseline */
    AKA_MEM_FRAMEWORK_BASELINE, /* V1: framework-native kernel accepted */
    AKA_MEM_PROMOTED,           /* an episode's candidate became the incumbent */
    AKA_MEM_REJECTED,           /* candidate_ready, but verification or policy said no */
    AKA_MEM_PIVOT,
    AKA_MEM_BLOCKED,
    AKA_MEM_INVALID_HANDOFF,
    AKA_MEM_INTERRUPTED,
    AKA_MEM_FAILED, /* V1 attempt that did not pass */
    AKA_MEM_STATUS_COUNT
};
/* NULL-terminated, indexed by enum aka_memory_status. */
extern const char *const aka_memory_status_names[];

struct aka_memory_record {
    json_t *json; /* the whole document (owned); unknown fields are preserved */
    long version; /* N of "v<N>" */
    enum aka_memory_status status;
    bool masked;
    const char *timestamp;          /* into json */
    const char *git_commit_hash;    /* into json; NULL when null */
    const char *quality_gate;       /* PASS | FAIL | TIMEOUT_FAIL */
    const char *correctness;        /* PASS | FAIL | TIMEOUT_FAIL | UNKNOWN */
    const char *measurement_status; /* NULL, complete, incomplete, not_evaluated_or_incomplete */
    double latency_us, latency_us_geomean, latency_us_arith_mean;
    double speedup_vs_ref_geomean, performance_score;
    struct aka_shape_map latency_us_by_shape;
    /* into json; NULL when the record does not say (older records): how the latencies were
     * timed (the result's timing.method). Latencies of two methods are never compared. */
    const char *timing_method;
};

/* Validate a document and fill the typed view (takes a new reference to doc). */
int aka_memory_from_json(const char *label, json_t *doc, struct aka_memory_record *out,
                         struct aka_err *err);
/* Load memory/v<N>.json; the N in the file name must equal the record's version. */
int aka_memory_load(const char *path, struct aka_memory_record *out, struct aka_err *err);
/* Validate doc and replace <memory_dir>/v<N>.json atomically (N from doc's version). */
int aka_memory_write(const char *memory_dir, json_t *doc, struct aka_err *err);
void aka_memory_release(struct aka_memory_record *r);

/* The canonical versions present in a memory directory, ascending (v2 before v10). */
struct aka_memory_listing {
    struct {
        long *v;
        size_t n, alloc;
    } versions;
    bool has_failed_v0; /* memory/v0.failed.json: V0 diagnostics, never canonical */
};
/* A missing directory is an empty listing; "v01.json", "v3_512.json" and other
 * names are not canonical and are skipped. */
int aka_memory_list(const char *memory_dir, struct aka_memory_listing *out, struct aka_err *err);
/* Highest version, or -1 when there is none. */
long aka_memory_latest(const struct aka_memory_listing *l);
void aka_memory_listing_release(struct aka_memory_listing *l);

/* ---- what a campaign learns (memory_digest.c) ----------------------------- */

#define AKA_MEMORY_MAX_EXPERIMENTS 24  /* experience keeps the latest ones */
#define AKA_MEMORY_FIELD_CAP       600 /* bytes per compacted string */
#define AKA_MEMORY_MAX_DIRECTIONS  3
#define AKA_MEMORY_PROFILE_CAP     2000
#define AKA_MEMORY_DIGEST_LINE     300  /* bytes per digest line */
#define AKA_MEMORY_DIGEST_CAP      4096 /* bytes of digest in one brief */
#define AKA_MEMORY_DIGEST_RECORDS  5    /* episodes a brief looks back on */

/* experience{experiment_count, recorded_experiment_count, experiments[]} of a journal. */
json_t *aka_memory_experience(const json_t *journal);
/* open_directions[{direction, rationale}] (at most 3) from the journal's outcome. */
json_t *aka_memory_open_directions(const json_t *journal);
/* profile_evidence{tool_used, evidence_summary, bottleneck_type, evidence_chain}: from the
 * profile summary the agent cited (aka profile --json), or "not_profiled" when NULL. */
json_t *aka_memory_profile_evidence(const json_t *journal, const json_t *profile);
/* wiki_citations[{id, experiment, disposition}]: every wiki_refs[] id the journal cites, with
 * the citing experiment's decision (how the record was used). */
json_t *aka_memory_wiki_citations(const json_t *journal);
/* The brief's digest of records (oldest first): status and failure, directions, dead
 * ends with their evidence, the profile's bound; newest first, at most cap bytes. */
void aka_memory_digest(const json_t *const *records, size_t n, size_t cap, struct strbuf *out);

/* ---- episode journal (journal.c) ------------------------------------------ */

#define AKA_JOURNAL_SCHEMA_VERSION 1

enum aka_journal_state {
    AKA_JOURNAL_IN_PROGRESS,
    AKA_JOURNAL_CANDIDATE_READY,
    AKA_JOURNAL_PIVOT,
    AKA_JOURNAL_BLOCKED
};
extern const char *const aka_journal_state_names[]; /* NULL-terminated */

/* What identifies an episode: fixed at creation, checked at the end. */
struct aka_episode_ids {
    long long episode;        /* 0 for the V1 framework-baseline session */
    long long memory_version; /* N of the memory/v<N>.json this episode will produce */
    const char *base_commit;  /* incumbent HEAD the worktree started from (40 hex) */
    const char *episode_branch;
};

struct aka_journal {
    json_t *json;               /* owned */
    struct aka_episode_ids ids; /* strings into json */
    enum aka_journal_state state;
    size_t experiment_count;
    const char *created_at;       /* into json */
    const char *finalized_at;     /* NULL while in progress */
    const char *candidate_commit; /* NULL unless candidate_ready */
    const char *outcome_summary;  /* NULL while in progress */
};

/* Create a fresh in_progress journal (refuses to overwrite an existing file).
 * `now` is an ISO-8601 time, or NULL for the current time. */
int aka_journal_create(const char *path, const struct aka_episode_ids *ids, const char *now,
                       struct aka_err *err);
int aka_journal_from_json(const char *label, json_t *doc, struct aka_journal *out,
                          struct aka_err *err);
int aka_journal_load(const char *path, struct aka_journal *out, struct aka_err *err);
void aka_journal_release(struct aka_journal *j);

/* Append one experiment (a non-empty object; "timestamp" added if absent);
 * the journal must be in_progress. */
int aka_journal_append(const char *path, json_t *experiment, const char *now, struct aka_err *err);
/* Finalize to candidate_ready/pivot/blocked with outcome {summary, next_directions[]}.
 * candidate_commit is required for (and only for) candidate_ready. Finalizing
 * again to the same state replaces the outcome; another state is an error. */
int aka_journal_finalize(const char *path, enum aka_journal_state state, json_t *outcome,
                         const char *candidate_commit, const char *now, struct aka_err *err);

/* Every wiki_refs[] id cited by an experiment must exist (DESIGN §8). */
typedef bool (*aka_wiki_ref_exists_fn)(const char *record_id, void *data);
int aka_journal_check_wiki_refs(const char *label, const struct aka_journal *j,
                                aka_wiki_ref_exists_fn exists, void *data, struct aka_err *err);

/* ---- handoff (handoff.c) -------------------------------------------------- */

enum aka_handoff_status { AKA_HANDOFF_CANDIDATE_READY, AKA_HANDOFF_PIVOT, AKA_HANDOFF_BLOCKED };
extern const char *const aka_handoff_status_names[]; /* NULL-terminated */

struct aka_handoff {
    enum aka_handoff_status status;
    char candidate_commit[AKA_COMMIT_HEX_LEN + 1];  /* "" unless candidate_ready */
    char last_trial_commit[AKA_COMMIT_HEX_LEN + 1]; /* "" when absent */
};

int aka_handoff_from_json(const char *label, json_t *doc, struct aka_handoff *out,
                          struct aka_err *err);
/* Missing, empty, invalid JSON (line:column), not an object, bad status,
 * candidate_ready without a commit: each a distinct one-line diagnosis. */
int aka_handoff_load(const char *path, struct aka_handoff *out, struct aka_err *err);
json_t *aka_handoff_to_json(const struct aka_handoff *h);

/*
 * Terminal validation: the journal must belong to this episode (`expect`, may be
 * NULL to skip the identity check), be finalized in the handoff's state with at
 * least one experiment and an outcome, and for candidate_ready carry exactly
 * the handoff's candidate commit.
 */
int aka_handoff_check_journal(const char *handoff_label, const struct aka_handoff *h,
                              const char *journal_label, const struct aka_journal *j,
                              const struct aka_episode_ids *expect, struct aka_err *err);
/* `aka handoff`: load the journal, run the terminal validation, then write
 * handoff.json atomically. Nothing is written when any check fails. */
int aka_handoff_submit(const char *handoff_path, const char *journal_path,
                       const struct aka_handoff *h, const struct aka_episode_ids *expect,
                       struct aka_err *err);
/* The same, and then every wiki_refs[] id of the journal must pass `exists`. */
int aka_handoff_submit_cited(const char *handoff_path, const char *journal_path,
                             const struct aka_handoff *h, const struct aka_episode_ids *expect,
                             aka_wiki_ref_exists_fn exists, void *data, struct aka_err *err);

#endif
