/*
 * phases.c — which phase of the agent's work spent which tokens (reference
 * §8.3–8.4), from the normalized events of an invocation: per-call usage
 * deltas interleaved with phase-marker receipts.
 *
 * A delta belongs to the phase open when it arrives; the delta just before a
 * `start` (the model call that issued the start command) is pulled into that
 * phase. Markers that do not nest (overlapping starts, mismatched or orphan
 * ends, unknown phases, phases never closed) make the affected tokens
 * unattributed and leave a reason code; they are never guessed into a phase.
 * The result is reconciled against the terminal usage: what no phase holds is
 * "orchestration", and the label is exact only when every token of an exact
 * terminal sits in a cleanly marked phase.
 */
#include "agents/adapters.h"

#include <string.h>

#define NPHASES 7

const char *const aka_agent_phases[] = {"profile",     "research",  "planning",  "implementation",
                                        "correctness", "benchmark", "recording", NULL};

struct phase_acc {
    struct aka_token_usage sum;
    json_t *intervals;
};

struct walk {
    struct phase_acc ph[NPHASES];
    int active, stack[8];
    size_t depth; /* the invalid stack: while non-empty nothing is attributed */
    struct aka_token_usage interval, pending, observed;
    bool has_pending;
    json_t *codes;
};

static int phase_index(const char *name)
{
    for (int i = 0; aka_agent_phases[i]; i++)
        if (strcmp(aka_agent_phases[i], name) == 0)
            return i;
    return -1;
}

static void code(struct walk *w, const char *c)
{
    size_t i;
    json_t *v;
    json_array_foreach(w->codes, i, v)
    {
        if (strcmp(json_string_value(v), c) == 0)
            return;
    }
    json_array_append_new(w->codes, json_string(c));
}

static void on_delta(struct walk *w, const struct aka_token_usage *u)
{
    aka_token_usage_add(&w->observed, u);
    if (w->depth)
        return;
    if (w->active >= 0) {
        aka_token_usage_add(&w->interval, u);
    } else {
        w->pending = *u;
        w->has_pending = true;
    }
}

static void on_invalid_marker(struct walk *w, int p, bool start)
{
    if (start) {
        code(w, "overlapping_phase");
        if (w->depth < 8)
            w->stack[w->depth++] = p;
        return;
    }
    for (size_t i = w->depth; i-- > 0;)
        if (w->stack[i] == p) {
            if (i + 1 != w->depth)
                code(w, "mismatched_phase_end");
            w->depth = i;
            return;
        }
    code(w, "orphan_phase_end");
}

static void close_interval(struct walk *w)
{
    struct phase_acc *a = &w->ph[w->active];
    json_array_append_new(a->intervals, json_pack("{s:I, s:o}", "index",
                                                  (json_int_t)json_array_size(a->intervals) + 1,
                                                  "usage", aka_token_usage_to_json(&w->interval)));
    aka_token_usage_add(&a->sum, &w->interval);
    w->active = -1;
}

static void on_marker(struct walk *w, const struct aka_agent_event *e)
{
    int p = phase_index(e->phase);
    bool had_pending = w->has_pending;
    w->has_pending = false;
    if (p < 0) {
        code(w, "invalid_phase_marker");
    } else if (w->depth) {
        on_invalid_marker(w, p, e->start);
    } else if (e->start && w->active < 0) {
        w->active = p;
        if (had_pending)
            w->interval = w->pending;
        else
            aka_token_usage_zero(&w->interval);
    } else if (e->start) {
        code(w, "overlapping_phase");
        w->stack[0] = w->active;
        w->stack[1] = p;
        w->depth = 2;
        w->active = -1;
    } else if (w->active < 0) {
        code(w, "orphan_phase_end");
    } else if (w->active == p) {
        close_interval(w);
    } else {
        code(w, "mismatched_phase_end");
        w->stack[0] = w->active;
        w->depth = 1;
        w->active = -1;
    }
}

static json_t *phases_json(const struct walk *w, bool observed)
{
    json_t *o = json_object();
    for (int i = 0; i < NPHASES; i++) {
        const struct phase_acc *a = &w->ph[i];
        size_t n = a->intervals ? json_array_size(a->intervals) : 0;
        json_t *p = json_pack(
            "{s:o, s:I, s:s, s:o, s:o}", "usage",
            n ? aka_token_usage_to_json(&a->sum) : json_null(), "interval_count", (json_int_t)n,
            "measurement", n ? aka_token_measurement_name(a->sum.measurement) : "unavailable",
            "reason",
            n ? json_null() : json_string(observed ? "phase_not_marked" : "phase_not_observed"),
            "intervals", n ? json_incref(a->intervals) : json_array());
        json_object_set_new(o, aka_agent_phases[i], p);
    }
    return o;
}

static struct aka_token_usage attributed_sum(const struct walk *w)
{
    struct aka_token_usage sum;
    aka_token_usage_zero(&sum);
    for (int i = 0; i < NPHASES; i++)
        if (w->ph[i].intervals && json_array_size(w->ph[i].intervals))
            aka_token_usage_add(&sum, &w->ph[i].sum);
    return sum;
}

static json_t *coverage_of(const struct aka_token_usage *attr, const struct aka_token_usage *term)
{
    if (term->total == 0)
        return attr->total == 0 ? json_real(1.0) : json_null();
    /* Six decimals, rounded half up (both counts are non-negative); no libm. */
    long long millionths = (attr->total * 1000000LL + term->total / 2) / term->total;
    return json_real((double)millionths / 1e6);
}

/* Attributed vs observed vs terminal: status, orchestration, coverage, label. */
static void reconcile(struct walk *w, const struct aka_token_usage *term, json_t *out)
{
    struct aka_token_usage attr = attributed_sum(w), orch;
    const char *status, *label = attr.total > 0 ? "partial" : "unavailable";
    json_t *orch_json = json_null(), *cov = json_null();
    if (term->total < 0) {
        code(w, "terminal_usage_unavailable");
        status = "unavailable";
        if (aka_usage_subtract(&w->observed, &attr, &orch) == 0)
            orch_json = aka_token_usage_to_json(&orch);
    } else if (aka_usage_exceeds(&attr, term) || aka_usage_exceeds(&w->observed, term)) {
        code(w, "usage_delta_exceeds_terminal");
        status = "inconsistent";
    } else {
        status = "reconciled";
        aka_usage_subtract(term, &attr, &orch);
        orch_json = aka_token_usage_to_json(&orch);
        cov = coverage_of(&attr, term);
        if (json_is_real(cov) && json_real_value(cov) == 1.0 && json_array_size(w->codes) == 0 &&
            term->measurement == AKA_TOKENS_EXACT && attr.measurement == AKA_TOKENS_EXACT)
            label = "exact";
        json_object_set_new(out, "accounted_coverage", json_real(1.0));
    }
    json_object_set_new(out, "attributed", aka_token_usage_to_json(&attr));
    json_object_set_new(out, "orchestration", orch_json);
    json_object_set_new(out, "coverage", cov);
    json_object_set_new(out, "semantic_phase_coverage", json_copy(cov));
    json_object_set_new(out, "reconciliation_status", json_string(status));
    json_object_set_new(out, "measurement", json_string(label));
}

static void walk_init(struct walk *w)
{
    memset(w, 0, sizeof(*w));
    for (int i = 0; i < NPHASES; i++) {
        aka_token_usage_zero(&w->ph[i].sum);
        w->ph[i].intervals = json_array();
    }
    w->active = -1;
    aka_token_usage_zero(&w->observed);
    w->codes = json_array();
}

static void walk_release(struct walk *w)
{
    for (int i = 0; i < NPHASES; i++)
        json_decref(w->ph[i].intervals);
    json_decref(w->codes);
}

/* No per-call usage: nothing can be attributed; say so. */
static json_t *not_observed(const struct aka_agent_stream *s, struct walk *w)
{
    json_t *out = json_object();
    code(w,
         s->usage_delta_capable ? "backend_usage_delta_unobserved" : "backend_has_no_usage_delta");
    bool term = s->terminal.total >= 0;
    json_object_set_new(out, "phases", phases_json(w, false));
    json_object_set_new(out, "unattributed",
                        term ? aka_token_usage_to_json(&s->terminal) : json_null());
    json_object_set_new(out, "coverage", term ? json_real(0.0) : json_null());
    json_object_set_new(out, "reconciliation_status",
                        json_string(term ? "reconciled" : "unavailable"));
    json_object_set_new(out, "measurement", json_string("unavailable"));
    return out;
}

json_t *aka_agent_phase_tokens(const struct aka_agent_stream *s)
{
    struct walk w;
    json_t *out;
    walk_init(&w);
    if (!s->usage_delta_capable || !s->usage_delta_observed) {
        out = not_observed(s, &w);
    } else {
        for (size_t i = 0; i < s->events.n; i++) {
            const struct aka_agent_event *e = &s->events.v[i];
            if (e->kind == AKA_EV_USAGE_DELTA)
                on_delta(&w, &e->usage);
            else if (e->kind == AKA_EV_PHASE_MARKER)
                on_marker(&w, e);
        }
        if (w.active >= 0 || w.depth)
            code(&w, "unclosed_phase");
        w.active = -1;
        out = json_object();
        json_object_set_new(out, "phases", phases_json(&w, true));
        json_object_set_new(
            out, "unattributed",
            aka_token_usage_to_json(&(struct aka_token_usage){0, 0, 0, 0, 0, AKA_TOKENS_EXACT}));
        reconcile(&w, &s->terminal, out);
    }
    json_object_set_new(out, "terminal_usage", aka_token_usage_to_json(&s->terminal));
    json_object_set_new(out, "reason_codes", json_incref(w.codes));
    walk_release(&w);
    return out;
}

/* ---- combining the invocations of a session -------------------------------- */

static long long count_of(const json_t *u, const char *key)
{
    json_t *v = json_object_get(u, key);
    return json_is_integer(v) ? json_integer_value(v) : -1;
}

static void usage_of(const json_t *u, struct aka_token_usage *out)
{
    aka_token_usage_unavailable(out);
    if (!json_is_object(u))
        return;
    *out = (struct aka_token_usage){
        count_of(u, "input_tokens"),      count_of(u, "output_tokens"),
        count_of(u, "cache_read_tokens"), count_of(u, "cache_write_tokens"),
        count_of(u, "total_tokens"),      AKA_TOKENS_UNAVAILABLE};
    const char *m = json_string_value(json_object_get(u, "measurement"));
    out->measurement = m && strcmp(m, "exact") == 0     ? AKA_TOKENS_EXACT
                       : m && strcmp(m, "partial") == 0 ? AKA_TOKENS_PARTIAL
                                                        : AKA_TOKENS_UNAVAILABLE;
}

static void union_codes(json_t *into, const json_t *from)
{
    size_t i;
    json_t *v;
    json_array_foreach(from, i, v)
    {
        bool dup = false;
        size_t j;
        json_t *w;
        json_array_foreach(into, j, w) dup = dup || json_equal(v, w);
        if (!dup)
            json_array_append(into, v);
    }
}

static json_t *aggregate_phase(json_t *const *inv, size_t n, const char *name)
{
    struct aka_token_usage sum, one;
    json_int_t intervals = 0;
    size_t with = 0;
    aka_token_usage_zero(&sum);
    for (size_t i = 0; i < n; i++) {
        json_t *p = json_object_get(json_object_get(inv[i], "phases"), name);
        json_t *count = json_object_get(p, "interval_count");
        if (!json_is_integer(count) || json_integer_value(count) == 0)
            continue;
        usage_of(json_object_get(p, "usage"), &one);
        aka_token_usage_add(&sum, &one);
        intervals += json_integer_value(count);
        with++;
    }
    if (with && with < n && sum.measurement == AKA_TOKENS_EXACT)
        sum.measurement = AKA_TOKENS_PARTIAL; /* some turns had none: cannot be sure */
    return json_pack("{s:o, s:I, s:s}", "usage", with ? aka_token_usage_to_json(&sum) : json_null(),
                     "interval_count", intervals, "measurement",
                     with ? aka_token_measurement_name(sum.measurement) : "unavailable");
}

json_t *aka_agent_phase_tokens_aggregate(json_t *const *inv, size_t n, bool resumed,
                                         bool resume_qualified)
{
    json_t *out = json_object(), *phases = json_object(), *codes = json_array();
    struct aka_token_usage term, one;
    bool inconsistent = false, any_partial = false;
    aka_token_usage_zero(&term);
    if (n == 0) {
        json_array_append_new(codes, json_string("structured_usage_unavailable"));
        aka_token_usage_unavailable(&term);
    }
    for (size_t i = 0; i < n; i++) {
        usage_of(json_object_get(inv[i], "terminal_usage"), &one);
        if (one.total < 0)
            json_array_append_new(codes, json_string("attempt_terminal_usage_unavailable"));
        aka_token_usage_add(&term, &one);
        union_codes(codes, json_object_get(inv[i], "reason_codes"));
        const char *st = json_string_value(json_object_get(inv[i], "reconciliation_status"));
        inconsistent = inconsistent || (st && strcmp(st, "inconsistent") == 0);
        const char *m = json_string_value(json_object_get(inv[i], "measurement"));
        any_partial = any_partial || !m || strcmp(m, "exact") != 0;
    }
    if (resumed && !resume_qualified)
        json_array_append_new(codes,
                              json_string("same_session_resume_usage_semantics_unqualified"));
    for (int i = 0; aka_agent_phases[i]; i++)
        json_object_set_new(phases, aka_agent_phases[i],
                            aggregate_phase(inv, n, aka_agent_phases[i]));
    const char *label = any_partial || json_array_size(codes) ? "partial" : "exact";
    if (n == 0)
        label = "unavailable";
    json_object_set_new(out, "terminal_usage", aka_token_usage_to_json(&term));
    json_object_set_new(out, "phases", phases);
    json_object_set_new(out, "reason_codes", codes);
    json_object_set_new(out, "invocation_count", json_integer((json_int_t)n));
    json_object_set_new(out, "reconciliation_status",
                        json_string(inconsistent ? "inconsistent" : "aggregated"));
    json_object_set_new(out, "measurement", json_string(label));
    return out;
}
