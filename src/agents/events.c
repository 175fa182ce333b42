/*
 * events.c — normalized agent events and the pieces every stream parser
 * shares: splitting stdout into JSON objects and finding phase-marker
 * receipts in tool output.
 *
 * stdout of a CLI mixes JSON event lines with plain-text noise; a line that
 * does not start with '{' or does not decode to an object is skipped, never an
 * error (reference §1.5). A receipt is only believed when it sits in the
 * output of a successful tool call, which is where `aka trace` prints it; the
 * parsers decide which strings qualify, this file only decodes them.
 */
#include "agents/adapters.h"

#include <stdlib.h>
#include <string.h>

#define RECEIPT_PREFIX "ATREX_TRACE_EVENT="
#define RECEIPT_SCHEMA "atrex.iteration_trace.v1"
/* Receipt strings are nested at most a few levels deep in real events. */
#define RECEIPT_MAX_DEPTH 8

void aka_agent_stream_init(struct aka_agent_stream *s)
{
    memset(s, 0, sizeof(*s));
    aka_token_usage_unavailable(&s->terminal);
}

void aka_agent_stream_release(struct aka_agent_stream *s)
{
    VEC_FREE(s->events);
    strvec_clear(&s->observations);
}

void aka_agent_stream_push_usage(struct aka_agent_stream *s, enum aka_event_kind kind,
                                 const struct aka_token_usage *u)
{
    struct aka_agent_event e;
    memset(&e, 0, sizeof(e));
    e.kind = kind;
    e.usage = *u;
    VEC_PUSH(s->events, e);
    if (kind == AKA_EV_USAGE_DELTA)
        s->usage_delta_observed = true;
}

void aka_agent_stream_observe(struct aka_agent_stream *s, const char *code)
{
    if (strvec_find(&s->observations, code) < 0)
        strvec_push(&s->observations, code);
}

static bool str_is(const json_t *v, const char *want)
{
    return json_is_string(v) && strcmp(json_string_value(v), want) == 0;
}

static bool nonempty_str(const json_t *v)
{
    return json_is_string(v) && json_string_length(v) > 0;
}

/* One "ATREX_TRACE_EVENT={...}" line: push a marker when it is well formed. */
static void take_receipt(struct aka_agent_stream *s, const char *json_text, size_t len)
{
    json_t *r = json_loadb(json_text, len, 0, NULL);
    const char *action = json_string_value(json_object_get(r, "action"));
    json_t *phase = json_object_get(r, "phase"), *id = json_object_get(r, "marker_id");
    bool ok = json_is_object(r) && str_is(json_object_get(r, "schema"), RECEIPT_SCHEMA) &&
              str_is(json_object_get(r, "kind"), "phase_marker") && action &&
              (strcmp(action, "start") == 0 || strcmp(action, "end") == 0) && nonempty_str(phase) &&
              nonempty_str(id);
    if (ok) {
        struct aka_agent_event e;
        memset(&e, 0, sizeof(e));
        e.kind = AKA_EV_PHASE_MARKER;
        e.start = strcmp(action, "start") == 0;
        snprintf(e.phase, sizeof(e.phase), "%s", json_string_value(phase));
        snprintf(e.marker_id, sizeof(e.marker_id), "%s", json_string_value(id));
        aka_token_usage_unavailable(&e.usage);
        VEC_PUSH(s->events, e);
    }
    json_decref(r);
}

static void scan_string(struct aka_agent_stream *s, const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        size_t plen = strlen(RECEIPT_PREFIX);
        if ((size_t)(line_end - p) > plen && memcmp(p, RECEIPT_PREFIX, plen) == 0) {
            size_t n = (size_t)(line_end - p) - plen;
            if (n && p[plen + n - 1] == '\r')
                n--;
            take_receipt(s, p + plen, n);
        }
        p = line_end + (nl ? 1 : 0);
    }
}

static void scan_value(struct aka_agent_stream *s, const json_t *v, int depth)
{
    if (depth > RECEIPT_MAX_DEPTH)
        return;
    if (json_is_string(v)) {
        scan_string(s, json_string_value(v), json_string_length(v));
    } else if (json_is_array(v)) {
        size_t i;
        json_t *item;
        json_array_foreach(v, i, item)
        {
            scan_value(s, item, depth + 1);
        }
    } else if (json_is_object(v)) {
        const char *k;
        json_t *item;
        json_object_foreach((json_t *)v, k, item)
        {
            scan_value(s, item, depth + 1);
        }
    }
}

void aka_agent_stream_scan_receipts(struct aka_agent_stream *s, const json_t *v)
{
    scan_value(s, v, 0);
}

void aka_agent_stream_drop_usage(struct aka_agent_stream *s)
{
    size_t j = 0;
    for (size_t i = 0; i < s->events.n; i++)
        if (s->events.v[i].kind == AKA_EV_PHASE_MARKER)
            s->events.v[j++] = s->events.v[i];
    s->events.n = j;
    s->usage_delta_observed = false;
}

static const char *kind_name(enum aka_event_kind k)
{
    return k == AKA_EV_USAGE_DELTA      ? "usage_delta"
           : k == AKA_EV_TERMINAL_USAGE ? "terminal_usage"
                                        : "phase_marker";
}

json_t *aka_agent_event_to_json(const struct aka_agent_event *e, size_t seq)
{
    json_t *o = json_pack("{s:I, s:s}", "sequence", (json_int_t)seq, "kind", kind_name(e->kind));
    if (e->kind == AKA_EV_PHASE_MARKER) {
        json_object_set_new(o, "phase", json_string(e->phase));
        json_object_set_new(o, "action", json_string(e->start ? "start" : "end"));
        json_object_set_new(o, "marker_id", json_string(e->marker_id));
    } else {
        json_object_set_new(o, "usage", aka_token_usage_to_json(&e->usage));
    }
    return o;
}

void aka_stream_foreach_object(FILE *in, aka_stream_line_fn fn, void *data)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, in)) > 0) {
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != '{')
            continue;
        json_t *obj = json_loadb(p, (size_t)(line + n - p), 0, NULL);
        if (json_is_object(obj))
            fn(obj, data);
        json_decref(obj);
    }
    free(line);
}
