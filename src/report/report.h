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
 * Nothing here writes, creates or locks a file: a person may run `aka status`
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
};

/* .aka/campaign.json (strings point into the document). */
struct aka_report_campaign {
    const char *schema, *mode, *framework, *platform, *agent;
    const char *op_name, *op_dir, *layout, *kernel, *isolation;
    const char *created_at; /* NULL when absent */
};

/* .aka/state.json counters (upstream SupervisorState names); -1 when absent. */
struct aka_report_state {
    bool present;
    long long episodes, accepted, rejected, pivoted, blocked, protocol_failures, interrupted;
    long long tokens, stall; /* stall = consecutive_without_promotion */
    const char *stop_reason; /* NULL when absent */
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

#endif
