/*
 * report.h — what a campaign workspace says about itself, read-only (DESIGN §2 report/, §4.4).
 *
 * The report module loads a workspace's summary into a typed model and renders
 * it for `aka status` and `aka memory`:
 *
 *   campaign   .aka/campaign.json: identity pinned at the first start
 *   versions   every canonical memory/v<N>.json, in numeric order (v2 before v10)
 *   failed V0  memory/v0.failed.json, when V0's measurement failed (never canonical)
 *   live       memory/live.json, the non-canonical progress view
 *   state      .aka/state.json, the supervisor's counters (absent before episode 1)
 *
 * Nothing here writes, creates or locks a file in a workspace (`aka report`
 * writes only the output files it is given): a person may run `aka status`
 * beside a running supervisor, and an agent runs `aka memory` inside an
 * episode. Every number shown comes from a record; a number a record does not
 * carry is AKA_MISSING and printed as "—", never derived from something else.
 * Malformed input fails the whole load with exit code 2 and one line
 * "FILE: FIELD: expected ...; got ...": a summary built around a garbled record
 * would present a guess as history.
 */
#ifndef AKA_REPORT_H
#define AKA_REPORT_H

#include "base/error.h"
#include "base/strbuf.h"
#include "contracts/records.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define AKA_STATUS_SCHEMA "aka.status.v1"

/* ---- finding the workspace ----------------------------------------------- */

/*
 * The workspace a command works on: `arg` when given, else $ATREX_AKA_WORKSPACE
 * when set and non-empty, else the current directory when it holds
 * .aka/campaign.json (or, with need_campaign false, a memory/ directory).
 * Anything else is code 2 with a message saying what was looked for.
 */
int aka_report_find_workspace(const char *arg, bool need_campaign, struct strbuf *out,
                              struct aka_err *err);

/* ---- the model ----------------------------------------------------------- */

/* The statistics behind a full/goal verification, as the record carries them. */
struct aka_report_verification {
    bool present;           /* the record has a "verification" object */
    const char *method;     /* e.g. "same_allocation_abba"; NULL when absent */
    long long abba_pairs;   /* -1 when absent */
    double improvement_pct; /* AKA_MISSING when absent (all four) */
    double ci_low_pct, ci_high_pct;
    double dispersion_pct;
    double min_improvement_pct; /* the promotion threshold; AKA_MISSING when absent */
    int passed;                 /* 1 / 0; -1 when absent */
    const char *decision;       /* NULL when absent */
    json_t *runs;               /* runs[] {repeat, revision, all_pass, latency_us_geomean}
                                   (borrowed, each entry type-checked); NULL when absent */
};

/* One canonical version and what the report derives from it. */
struct aka_report_version {
    char *file;                   /* memory/v<N>.json path as loaded (owned) */
    struct aka_memory_record rec; /* owned */
    const char *kind;             /* long_horizon.mode (fast|full|goal|...); NULL when absent */
    const char *carried_from;     /* performance.carried_from_version; NULL when absent */
    const char *description;      /* optimization.action_description; NULL when absent */
    double latency_us;            /* geomean, else latency_us, else AKA_MISSING */
    double speedup_vs_v0;         /* geomean of V0/vN over common shapes; AKA_MISSING if none */
    size_t speedup_shapes;        /* shapes in both V0 and this version */
    size_t speedup_of;            /* shapes in either of them */
    struct aka_report_verification verify;
    json_t *roofline;  /* the record's "roofline" (borrowed, checked); NULL when absent */
    long long episode; /* episode.number; -1 when absent */
    long long tokens;  /* episode.tokens; -1 when absent */
};

/* One .aka/episodes/e<NNNN>/ directory and the records the report reads in it. */
struct aka_report_episode {
    long number;          /* the N of e<NNNN> */
    long version;         /* index into versions of the record of this episode, or -1 */
    char *journal_file;   /* runtime/journal.json (owned); NULL when absent */
    char *session_file;   /* agent/session.json (owned); NULL when absent */
    struct aka_journal j; /* valid when journal_file is set */
    json_t *session;      /* owned; every field the HTML reads type-checked; NULL when absent */
};

/* .aka/campaign.json (strings point into the document). */
struct aka_report_campaign {
    const char *schema, *mode, *framework, *platform, *agent;
    const char *op_name, *op_dir, *layout, *kernel, *isolation;
    const char *created_at; /* NULL when absent */
};

/* The SOL submission finalization wrote and how it fared as submitted (state.json
 * "submission", written by optimize/campaign.c); present false when none was written.
 * Strings are borrowed from the state document. */
struct aka_report_submission {
    bool present;
    const char *path, *check; /* check: "passed", "failed" or "unchecked" */
    const char *checked_by, *note, *detail;
};

/* .aka/state.json counters (upstream SupervisorState names); -1 when absent. */
struct aka_report_state {
    bool present;
    long long episodes, accepted, rejected, pivoted, blocked, protocol_failures, interrupted;
    long long tokens, stall; /* stall = consecutive_without_promotion */
    const char *stop_reason; /* NULL when absent */
    struct aka_report_submission submission;
};

/* memory/live.json. */
struct aka_report_live {
    bool present;
    const char *phase, *updated_at; /* NULL when absent */
    long long latest_version;       /* -1 when absent */
};

struct aka_report {
    char *workspace; /* as given (owned) */
    bool has_campaign;
    json_t *campaign_doc, *state_doc, *live_doc; /* owned; NULL when not loaded */
    struct aka_report_campaign campaign;
    struct aka_report_state state;
    struct aka_report_live live;
    struct {
        struct aka_report_version *v;
        size_t n, alloc;
    } versions;           /* ascending version */
    bool has_failed_v0;   /* memory/v0.failed.json was present and loaded */
    char *failed_v0_file; /* owned */
    struct aka_memory_record failed_v0;
    struct {
        struct aka_report_episode *v;
        size_t n, alloc;
    } episodes;              /* ascending number; filled by aka_report_load_episodes only */
    long incumbent;          /* index into versions of the version HEAD holds, or -1 */
    const char *stop_reason; /* state.stop_reason, else live's "stop: ..." phase, else NULL */
};

/*
 * Load everything `aka status` shows. campaign.json is required (its schema must
 * be aka.campaign.v1); state.json, live.json, v0.failed.json and memory/ may be
 * absent. On error the report is released and err holds one line, code 2.
 */
int aka_report_load(const char *ws, struct aka_report *out, struct aka_err *err);

/* Only the memory directory (for `aka memory list`): no campaign.json needed. */
int aka_report_load_memory(const char *ws, struct aka_report *out, struct aka_err *err);

void aka_report_release(struct aka_report *r);

/*
 * Add every .aka/episodes/e<NNNN>/ with its runtime/journal.json and
 * agent/session.json (either may be absent: an episode in flight has neither),
 * joined to the version whose episode.number is N. A malformed file is code 2
 * "FILE: FIELD: ..." (for `aka report`; `aka status` does not read them).
 */
int aka_report_load_episodes(struct aka_report *r, struct aka_err *err);

/*
 * Speedup of `v` over `base`: the geometric mean over the shapes present (and
 * measured) in both of base/v. *common receives that count and *of the count
 * of shapes in either map; AKA_MISSING when no shape is common.
 */
double aka_report_speedup(const struct aka_shape_map *base, const struct aka_shape_map *v,
                          size_t *common, size_t *of);

/* Index into r->versions of version n, or -1. */
long aka_report_find(const struct aka_report *r, long n);

/* ---- single records for `aka memory` ------------------------------------- */

/* Load <ws>/memory/v<n>.json; a missing file is code 2 naming it and the versions present. */
int aka_report_load_record(const char *ws, long n, struct aka_memory_record *out,
                           struct aka_err *err);

/* The highest canonical version that is not masked (masked records are hidden from
 * agents, upstream memory_manager latest); code 1 when there is none. */
int aka_report_load_latest(const char *ws, struct aka_memory_record *out, struct aka_err *err);

/* "v7" or "7" → 7; -1 for anything else (leading zeros, signs, junk). */
long aka_report_parse_version(const char *s);

/* ---- rendering ----------------------------------------------------------- */

/* The header lines of `aka status` (campaign, incumbent, budget, stop). */
void aka_report_render_header(const struct aka_report *r, struct strbuf *out);
/* The versions table with a heading row; "—" for every missing number. */
void aka_report_render_table(const struct aka_report *r, struct strbuf *out);
/* `aka memory list`: one line per version. */
void aka_report_render_list(const struct aka_report *r, struct strbuf *out);

/* One version as JSON (missing numbers null). */
json_t *aka_report_version_to_json(const struct aka_report_version *v);
/* The whole report as one object (schema aka.status.v1). */
json_t *aka_report_to_json(const struct aka_report *r);

/* ---- HTML (`aka report`) ------------------------------------------------- */

/*
 * One self-contained HTML page of a loaded report (episodes loaded too): inline
 * CSS and SVG, one small inline script (table sort, a render-time stamp), no
 * URL outside the page. Every text from a record is HTML-escaped. The same
 * workspace state gives the same bytes: no time but the records' own.
 */
void aka_report_render_html(const struct aka_report *r, struct strbuf *out);

/* One row of a multi-campaign index: the child's directory name and its report. */
struct aka_report_index_row {
    const char *name; /* the child directory's name */
    const char *href; /* the child's report file, relative to the index */
    const struct aka_report *r;
};

/* The index page of a directory of workspaces: one sortable row per campaign. */
void aka_report_render_index(const char *dir, const struct aka_report_index_row *rows, size_t n,
                             struct strbuf *out);

/*
 * Load ws with its episodes and write its page to out_file (atomically; nothing
 * is written when a record is malformed: code 2, one line "FILE: FIELD: ...").
 * written receives the path; *points the latency chart's point count.
 */
int aka_report_write_one(const char *ws, const char *out_file, struct strvec *written,
                         size_t *points, struct aka_err *err);

/* Whether dir is no workspace itself and has child workspaces (their names, sorted,
 * in children). */
bool aka_report_is_index_dir(const char *dir, struct strvec *children);

/*
 * For a directory of workspaces: load every child (all before any write), then
 * write out_dir/<child>.html for each and out_dir/index.html linking them.
 */
int aka_report_write_index(const char *dir, const char *out_dir, struct strvec *written,
                           struct aka_err *err);

/* Run `xdg-open path` (30 s at most); code 1 when it cannot start or fails. */
int aka_report_open(const char *path, struct aka_err *err);

/* Number of points the latency chart draws for r (versions with a measured latency). */
size_t aka_report_latency_points(const struct aka_report *r);

#endif
