/*
 * trace.c — the episode trace file behind `aka trace` (DESIGN §4.5): phase
 * markers and source reads appended as JSON lines, and per-phase wall time
 * read back from them.
 *
 * A marker does two things, as upstream's iteration_trace does: it appends a
 * record to $ATREX_AKA_TRACE_FILE, and only when that append happened it
 * prints a receipt line "ATREX_TRACE_EVENT={...}" that the agent's tool
 * output carries into the CLI's event stream. The receipt is what token
 * attribution reads (phases.c); the file is what time attribution reads. An
 * agent cannot forge a receipt by writing it in its reply: parsers only
 * believe receipts in the output of a successful tool call.
 *
 * Appends are one write(2) of one line with O_APPEND, so markers from
 * concurrent tool calls interleave by line, never inside one.
 */
#include "agents/internal.h"
#include "base/json.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define TRACE_SCHEMA   "aka.trace.v1"
#define RECEIPT_SCHEMA "atrex.iteration_trace.v1"
#define REF_MAX        1000

static const char *const source_kinds[] = {"wiki",    "memory", "reference", "doc", "code",
                                           "profile", "web",    "paper",     NULL};

static void marker_id(char out[33])
{
    unsigned char b[16] = {0};
    if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        memcpy(b, &ts, sizeof(ts) < sizeof(b) ? sizeof(ts) : sizeof(b));
    }
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static void iso_now(char *out, size_t size)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    char base[32];
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, size, "%s.%03ldZ", base, ts.tv_nsec / 1000000L);
}

/* The fields every trace record carries. */
static json_t *record_base(const char *event)
{
    char when[48];
    struct timespec mono;
    clock_gettime(CLOCK_MONOTONIC, &mono);
    iso_now(when, sizeof(when));
    json_t *r =
        json_pack("{s:s, s:s, s:s, s:f, s:f, s:s}", "schema", TRACE_SCHEMA, "event", event,
                  "timestamp", when, "unix_seconds", aka_agent_unix_now(), "monotonic_seconds",
                  (double)mono.tv_sec + (double)mono.tv_nsec / 1e9, "source", "agent_marker");
    static const char *const ids[][2] = {{"attempt_id", "ATREX_AKA_ATTEMPT_ID"},
                                         {"episode", "ATREX_AKA_EPISODE"},
                                         {"workspace", "ATREX_AKA_WORKSPACE"}};
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        const char *v = getenv(ids[i][1]);
        json_object_set_new(r, ids[i][0], v && *v ? json_string(v) : json_null());
    }
    return r;
}

static int check_phase(const char *action, const char *phase, struct aka_err *err)
{
    if (!action || (strcmp(action, "start") != 0 && strcmp(action, "end") != 0))
        return aka_err_set(err, AKA_EXIT_USAGE, "trace action: expected start or end");
    for (int i = 0; phase && aka_agent_phases[i]; i++)
        if (strcmp(aka_agent_phases[i], phase) == 0)
            return 0;
    return aka_err_set(err, AKA_EXIT_USAGE,
                       "phase \"%s\": expected one of profile, research, planning, "
                       "implementation, correctness, benchmark, recording",
                       phase ? phase : "");
}

int aka_trace_phase(const char *trace_file, const char *action, const char *phase,
                    struct strbuf *receipt, struct aka_err *err)
{
    char id[33];
    strbuf_reset(receipt);
    if (check_phase(action, phase, err) < 0)
        return -1;
    if (!trace_file || !*trace_file)
        return 0; /* not in a session: nothing recorded, so no receipt either */
    marker_id(id);
    bool start = strcmp(action, "start") == 0;
    json_t *rec = record_base(start ? "phase_started" : "phase_completed");
    json_object_set_new(rec, "phase", json_string(phase));
    json_object_set_new(rec, "action", json_string(action));
    json_object_set_new(rec, "marker_id", json_string(id));
    json_object_set_new(rec, "measurement", json_string("explicit"));
    int rc = aka_jsonl_append(trace_file, rec, false, err);
    json_decref(rec);
    if (rc < 0)
        return -1;
    json_t *r = json_pack("{s:s, s:s, s:s, s:s, s:s}", "action", action, "kind", "phase_marker",
                          "marker_id", id, "phase", phase, "schema", RECEIPT_SCHEMA);
    strbuf_addstr(receipt, "ATREX_TRACE_EVENT=");
    aka_json_dump_compact(r, receipt);
    json_decref(r);
    return 0;
}

int aka_trace_source_read(const char *trace_file, const char *kind, const char *ref,
                          struct aka_err *err)
{
    bool known = false;
    for (int i = 0; kind && source_kinds[i]; i++)
        known = known || strcmp(kind, source_kinds[i]) == 0;
    if (!known)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "source kind \"%s\": expected one of wiki, memory, reference, doc, "
                           "code, profile, web, paper",
                           kind ? kind : "");
    if (!ref || !*ref || strlen(ref) > REF_MAX || strchr(ref, '\n'))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "source reference: expected one line of 1 to %d characters", REF_MAX);
    if (!trace_file || !*trace_file)
        return 0;
    json_t *rec = record_base("source_read");
    json_object_set_new(rec, "kind", json_string(kind));
    json_object_set_new(rec, "ref", json_string(ref));
    int rc = aka_jsonl_append(trace_file, rec, false, err);
    json_decref(rec);
    return rc;
}

/* ---- per-phase wall time ---------------------------------------------------- */

struct times {
    double seconds[16];
    long intervals[16];
    int active;
    double since, first, last;
    json_t *codes, *reads;
};

static int index_of(const char *phase)
{
    for (int i = 0; phase && aka_agent_phases[i]; i++)
        if (strcmp(aka_agent_phases[i], phase) == 0)
            return i;
    return -1;
}

static void time_code(struct times *t, const char *c)
{
    size_t i;
    json_t *v;
    json_array_foreach(t->codes, i, v)
    {
        if (strcmp(json_string_value(v), c) == 0)
            return;
    }
    json_array_append_new(t->codes, json_string(c));
}

static void time_marker(struct times *t, int p, bool start, double at)
{
    if (p < 0) {
        time_code(t, "invalid_phase_marker");
    } else if (start && t->active >= 0) {
        time_code(t, "overlapping_phase"); /* the open interval is not trusted */
        t->active = p;
        t->since = at;
    } else if (start) {
        t->active = p;
        t->since = at;
    } else if (t->active < 0) {
        time_code(t, "orphan_phase_end");
    } else if (t->active != p) {
        time_code(t, "mismatched_phase_end");
        t->active = -1;
    } else {
        t->seconds[p] += at - t->since;
        t->intervals[p]++;
        t->active = -1;
    }
}

static void time_record(struct times *t, const json_t *rec)
{
    const char *event = json_string_value(json_object_get(rec, "event"));
    json_t *at = json_object_get(rec, "unix_seconds");
    if (!event || !json_is_number(at))
        return;
    double when = json_number_value(at);
    t->first = t->first ? t->first : when;
    t->last = when;
    if (strcmp(event, "source_read") == 0) {
        const char *kind = json_string_value(json_object_get(rec, "kind"));
        json_int_t n = json_integer_value(json_object_get(t->reads, kind ? kind : "?"));
        json_object_set_new(t->reads, kind ? kind : "?", json_integer(n + 1));
    } else if (strcmp(event, "phase_started") == 0 || strcmp(event, "phase_completed") == 0) {
        time_marker(t, index_of(json_string_value(json_object_get(rec, "phase"))),
                    strcmp(event, "phase_started") == 0, when);
    }
}

static json_t *times_json(struct times *t)
{
    json_t *phases = json_object();
    double marked = 0;
    long total = 0;
    for (int i = 0; aka_agent_phases[i]; i++) {
        marked += t->seconds[i];
        total += t->intervals[i];
        json_object_set_new(phases, aka_agent_phases[i],
                            json_pack("{s:o, s:I}", "seconds",
                                      t->intervals[i] ? json_real(t->seconds[i]) : json_null(),
                                      "interval_count", (json_int_t)t->intervals[i]));
    }
    if (t->active >= 0)
        time_code(t, "unclosed_phase");
    const char *label = total == 0                       ? "unavailable"
                        : json_array_size(t->codes) == 0 ? "exact"
                                                         : "partial";
    return json_pack("{s:o, s:f, s:f, s:O, s:O, s:s}", "phases", phases, "marked_seconds", marked,
                     "span_seconds", t->last - t->first, "source_reads", t->reads, "reason_codes",
                     t->codes, "measurement", label);
}

json_t *aka_trace_phase_times(const char *trace_file)
{
    struct times t;
    memset(&t, 0, sizeof(t));
    t.active = -1;
    t.codes = json_array();
    t.reads = json_object();
    FILE *f = trace_file ? fopen(trace_file, "re") : NULL;
    char *line = NULL;
    size_t cap = 0;
    while (f && getline(&line, &cap, f) > 0) {
        json_t *rec = json_loads(line, 0, NULL);
        if (json_is_object(rec))
            time_record(&t, rec);
        else
            time_code(&t, "malformed_trace_line");
        json_decref(rec);
    }
    free(line);
    if (f)
        fclose(f);
    else
        time_code(&t, "trace_file_missing");
    json_t *out = times_json(&t);
    json_decref(t.codes);
    json_decref(t.reads);
    return out;
}
