/*
 * html_tables.c — two table panels of `aka report`: the incumbent's latency per
 * shape against V0 and V1 (the ratio of two records' numbers; a shape slower
 * than either is flagged), and tokens and time per episode and per agent phase
 * (the memory record's episode.tokens and the agent session's own accounting,
 * each with its measurement label).
 */
#include "report/internal.h"

#include <math.h>
#include <string.h>

/* ---- per-shape speedup --------------------------------------------------- */

static const struct aka_shape_map *shapes_of(const struct aka_report *r, long idx)
{
    return idx >= 0 ? &r->versions.v[idx].rec.latency_us_by_shape : NULL;
}

static double lat(const struct aka_shape_map *m, const char *id)
{
    return m ? aka_shape_map_get(m, id) : AKA_MISSING;
}

static void ratio_cell(double base, double inc, struct strbuf *o)
{
    bool ok = aka_measured(base) && aka_measured(inc) && inc > 0;
    double x = ok ? base / inc : AKA_MISSING;
    strbuf_addf(o, "<td class=\"n%s\" data-k=\"%.17g\">", ok && x < 1 ? " bad" : "", ok ? x : -1);
    aka_html_num(o, x, "%.3f\xc3\x97");
    strbuf_addstr(o, "</td>");
}

static void shape_row(const char *id, const struct aka_shape_map *const m[3], struct strbuf *o)
{
    double v0 = lat(m[0], id), v1 = lat(m[1], id), in = lat(m[2], id);
    bool reg0 = aka_measured(v0) && aka_measured(in) && in > v0;
    bool reg1 = aka_measured(v1) && aka_measured(in) && in > v1;
    strbuf_addf(o, "<tr class=\"shape%s\"><td>", reg0 || reg1 ? " regressed" : "");
    aka_html_text(o, id);
    strbuf_addstr(o, "</td>");
    for (int k = 0; k < 3; k++) {
        strbuf_addstr(o, "<td class=\"n\">");
        aka_html_num(o, lat(m[k], id), "%.3f");
        strbuf_addstr(o, "</td>");
    }
    ratio_cell(v0, in, o);
    ratio_cell(v1, in, o);
    strbuf_addstr(o, "<td>");
    if (reg0 || reg1)
        aka_html_textf(o, "regressed vs %s%s%s", reg0 ? "V0" : "", reg0 && reg1 ? " and " : "",
                       reg1 ? "V1" : "");
    strbuf_addstr(o, "</td></tr>\n");
}

/* Whether a map visited before m[k] (the incumbent's, then V1's) has the shape. */
static bool seen(const struct aka_shape_map *const m[3], int k, const char *id)
{
    for (int j = k + 1; j < 3; j++)
        if (m[j] && aka_measured(aka_shape_map_get(m[j], id)))
            return true;
    return false;
}

void aka_html_shapes_panel(const struct aka_report *r, struct strbuf *o)
{
    const struct aka_shape_map *m[3] = {shapes_of(r, aka_report_find(r, 0)),
                                        shapes_of(r, aka_report_find(r, 1)),
                                        shapes_of(r, r->incumbent)};
    aka_html_panel(o, "shapes", "Per-shape speedup of the incumbent");
    if (!m[2]) {
        strbuf_addstr(o, "<p>No incumbent yet.</p></section>\n");
        return;
    }
    strbuf_addstr(o, "<table class=\"sortable\"><thead><tr><th>shape</th><th>V0 \xc2\xb5s</th>"
                     "<th>V1 \xc2\xb5s</th><th>incumbent \xc2\xb5s</th><th>vs V0</th>"
                     "<th>vs V1</th><th>flag</th></tr></thead><tbody>\n");
    /* Shapes in the incumbent's order, then any only V1 or V0 measured. */
    for (int k = 2; k >= 0; k--)
        for (size_t i = 0; m[k] && i < m[k]->n; i++)
            if (aka_measured(m[k]->v[i].value) && !seen(m, k, m[k]->v[i].id))
                shape_row(m[k]->v[i].id, m, o);
    strbuf_addstr(o, "</tbody></table></section>\n");
}

/* ---- tokens and time ----------------------------------------------------- */

static json_t *at(json_t *o, const char *a, const char *b, const char *c)
{
    json_t *x = json_object_get(o, a);
    x = b ? json_object_get(x, b) : x;
    return c ? json_object_get(x, c) : x;
}

static void count_cell(long long v, const char *label, struct strbuf *o)
{
    strbuf_addf(o, "<td class=\"n\" data-k=\"%lld\">", v);
    if (v >= 0)
        strbuf_addf(o, "%lld", v);
    else
        strbuf_addstr(o, AKA_HTML_MISSING);
    if (label) {
        strbuf_addstr(o, " <small>");
        aka_html_text(o, label);
        strbuf_addstr(o, "</small>");
    }
    strbuf_addstr(o, "</td>");
}

static void walls_cell(json_t *session, struct strbuf *o)
{
    json_t *t;
    size_t i;
    strbuf_addstr(o, "<td class=\"n\">");
    if (!json_array_size(json_object_get(session, "turns")))
        strbuf_addstr(o, AKA_HTML_MISSING);
    json_array_foreach(json_object_get(session, "turns"), i, t)
    {
        json_t *w = json_object_get(t, "wall_seconds");
        strbuf_addstr(o, i ? " + " : "");
        aka_html_num(o, json_is_number(w) ? json_number_value(w) : AKA_MISSING, "%.1f s");
    }
    strbuf_addstr(o, "</td>");
}

/* One phase: its tokens and seconds, each only when measured (an "unavailable" phase
 * has no number, whatever a zero in its record says). */
static void phase_cell(json_t *session, const char *phase, struct strbuf *o)
{
    json_t *tok = at(session, "phase_tokens", "phases", phase);
    json_t *sec = at(session, "phase_times", "phases", phase);
    const char *tlabel = json_string_value(json_object_get(tok, "measurement"));
    json_t *total = at(tok, "usage", "total_tokens", NULL);
    bool tok_ok = json_is_integer(total) && !(tlabel && strcmp(tlabel, "unavailable") == 0);
    bool sec_ok = json_is_number(json_object_get(sec, "seconds"));
    strbuf_addstr(o, "<td class=\"n\">");
    if (tok_ok)
        strbuf_addf(o, "%lld tok", (long long)json_integer_value(total));
    else
        strbuf_addstr(o, AKA_HTML_MISSING);
    strbuf_addstr(o, "<br>");
    aka_html_num(o, sec_ok ? json_number_value(json_object_get(sec, "seconds")) : AKA_MISSING,
                 "%.1f s");
    strbuf_addstr(o, "</td>");
}

static void episode_row(const struct aka_report *r, const struct aka_report_episode *e,
                        struct strbuf *o)
{
    const struct aka_report_version *v = e->version >= 0 ? &r->versions.v[e->version] : NULL;
    strbuf_addf(o, "<tr><td data-k=\"%ld\"><a href=\"#journal-e%04ld\">e%04ld</a></td><td>",
                e->number, e->number, e->number);
    if (v)
        aka_html_textf(o, "v%ld %s", v->rec.version, aka_memory_status_names[v->rec.status]);
    else
        strbuf_addstr(o, "no record yet");
    strbuf_addstr(o, "</td><td>");
    aka_html_text(o, v ? v->kind : NULL);
    strbuf_addstr(o, "</td>");
    json_t *total = at(e->session, "usage", "total_tokens", NULL);
    count_cell(v ? v->tokens : -1, NULL, o);
    count_cell(json_is_integer(total) ? (long long)json_integer_value(total) : -1,
               json_string_value(at(e->session, "usage", "measurement", NULL)), o);
    walls_cell(e->session, o);
    for (size_t k = 0; aka_report_phases[k]; k++)
        phase_cell(e->session, aka_report_phases[k], o);
    strbuf_addstr(o, "</tr>\n");
}

void aka_html_tokens_panel(const struct aka_report *r, struct strbuf *o)
{
    aka_html_panel(o, "tokens", "Tokens and wall time per episode and phase");
    if (!r->episodes.n) {
        strbuf_addstr(o, "<p>No episode has started yet.</p></section>\n");
        return;
    }
    strbuf_addstr(o, "<div class=\"wide\"><table class=\"sortable\"><thead><tr><th>episode</th>"
                     "<th>record</th>"
                     "<th>kind</th><th>record tokens</th><th>session tokens</th>"
                     "<th>session wall</th>");
    for (size_t k = 0; aka_report_phases[k]; k++) {
        strbuf_addstr(o, "<th>");
        aka_html_text(o, aka_report_phases[k]);
        strbuf_addstr(o, "</th>");
    }
    strbuf_addstr(o, "</tr></thead><tbody>\n");
    for (size_t i = 0; i < r->episodes.n; i++)
        episode_row(r, &r->episodes.v[i], o);
    strbuf_addstr(o, "</tbody></table></div></section>\n");
}
