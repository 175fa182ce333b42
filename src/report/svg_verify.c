/*
 * svg_verify.c — two panels of `aka report`: each verification the records
 * carry (its bootstrap interval and point estimate against the promotion
 * threshold, and its ABBA runs' latencies in order), and the roofline position
 * of V0, V1 and the incumbent against the ceilings their records name. Only
 * the records' numbers are drawn: an absent interval or roofline says "not
 * recorded", it is never filled in.
 */
#include "report/internal.h"

#include <math.h>
#include <string.h>

#define VW 640.0
#define VH 56.0
#define VM 40.0

/* ---- verification -------------------------------------------------------- */

struct span {
    double lo, hi;
};

static void widen(struct span *s, double v)
{
    if (aka_measured(v)) {
        s->lo = fmin(s->lo, v);
        s->hi = fmax(s->hi, v);
    }
}

static double sx(const struct span *s, double v)
{
    return VM + (VW - 2 * VM) * (v - s->lo) / (s->hi - s->lo);
}

/* Interval [ci_low, ci_high], estimate and threshold on one percent axis. */
static void interval_svg(const struct aka_report_verification *v, long ver, struct strbuf *o)
{
    struct span s = {0, 0};
    widen(&s, v->ci_low_pct);
    widen(&s, v->ci_high_pct);
    widen(&s, v->improvement_pct);
    widen(&s, v->min_improvement_pct);
    double pad = fmax((s.hi - s.lo) * 0.1, 0.5);
    s.lo -= pad;
    s.hi += pad;
    strbuf_addf(o,
                "<svg class=\"interval\" data-v=\"%ld\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
                "height=\"%.0f\">",
                ver, VW, VH, VW, VH);
    strbuf_addf(o, "<line class=\"axis\" x1=\"%.0f\" x2=\"%.0f\" y1=\"40\" y2=\"40\"/>", VM,
                VW - VM);
    for (int k = 0; k <= 4; k++) {
        double t = s.lo + (s.hi - s.lo) * k / 4;
        strbuf_addf(o, "<text x=\"%.1f\" y=\"53\" text-anchor=\"middle\">%+.2f%%</text>", sx(&s, t),
                    t);
    }
    if (aka_measured(v->min_improvement_pct))
        strbuf_addf(o,
                    "<line class=\"thr\" x1=\"%.1f\" x2=\"%.1f\" y1=\"4\" y2=\"40\"><title>"
                    "promotion threshold %+.2f%%</title></line>",
                    sx(&s, v->min_improvement_pct), sx(&s, v->min_improvement_pct),
                    v->min_improvement_pct);
    if (aka_measured(v->ci_low_pct) && aka_measured(v->ci_high_pct))
        strbuf_addf(o,
                    "<line class=\"ci\" x1=\"%.1f\" x2=\"%.1f\" y1=\"22\" y2=\"22\"><title>"
                    "bootstrap interval %+.2f%% .. %+.2f%%</title></line>",
                    sx(&s, v->ci_low_pct), sx(&s, v->ci_high_pct), v->ci_low_pct, v->ci_high_pct);
    if (aka_measured(v->improvement_pct))
        strbuf_addf(o,
                    "<circle class=\"est\" cx=\"%.1f\" cy=\"22\" r=\"4\"><title>estimate "
                    "%+.2f%%</title></circle>",
                    sx(&s, v->improvement_pct), v->improvement_pct);
    strbuf_addstr(o, "</svg>\n");
}

/* The latency of each ABBA run in order, incumbent and candidate coloured apart. */
static void runs_svg(json_t *runs, long ver, struct strbuf *o)
{
    struct span s = {INFINITY, -INFINITY};
    json_t *run;
    size_t i, n = json_array_size(runs);
    json_array_foreach(runs, i, run)
        widen(&s, json_number_value(json_object_get(run, "latency_us_geomean")));
    if (!n || !isfinite(s.lo)) {
        strbuf_addstr(o, "<p>No ABBA run latency recorded.</p>\n");
        return;
    }
    double pad = fmax((s.hi - s.lo) * 0.1, s.hi * 0.01);
    s.lo -= pad;
    s.hi += pad;
    strbuf_addf(o,
                "<svg class=\"runs\" data-v=\"%ld\" viewBox=\"0 0 %.0f 90\" width=\"%.0f\" "
                "height=\"90\">",
                ver, VW, VW);
    json_array_foreach(runs, i, run)
    {
        json_t *lat = json_object_get(run, "latency_us_geomean");
        const char *rev = json_string_value(json_object_get(run, "revision"));
        bool pass = json_is_true(json_object_get(run, "all_pass"));
        if (!json_is_number(lat))
            continue;
        double x = VM + (VW - 2 * VM) * ((double)i + 0.5) / (double)n;
        double y = 80 - 70 * (json_number_value(lat) - s.lo) / (s.hi - s.lo);
        strbuf_addf(o, "<circle class=\"run r-%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"><title>",
                    pass ? rev : "fail", x, y);
        aka_html_textf(o, "run %zu: %s, %.3f \xc2\xb5s%s", i + 1, rev, json_number_value(lat),
                       pass ? "" : ", did not pass");
        strbuf_addstr(o, "</title></circle>");
    }
    strbuf_addf(o,
                "<text x=\"4\" y=\"12\">%.4g \xc2\xb5s</text><text x=\"4\" y=\"84\">%.4g "
                "\xc2\xb5s</text></svg>\n",
                s.hi, s.lo);
}

static void verify_facts(const struct aka_report_version *v, struct strbuf *o)
{
    const struct aka_report_verification *x = &v->verify;
    strbuf_addstr(o, "<dl class=\"kv\"><dt>method</dt><dd>");
    aka_html_text(o, x->method);
    strbuf_addstr(o, "</dd><dt>verdict</dt><dd>");
    aka_html_text(o, x->passed < 0 ? NULL : x->passed ? "passed" : "not passed");
    strbuf_addstr(o, "</dd><dt>decision</dt><dd>");
    aka_html_text(o, x->decision);
    strbuf_addstr(o, "</dd><dt>ABBA pairs</dt><dd>");
    if (x->abba_pairs >= 0)
        strbuf_addf(o, "%lld", x->abba_pairs);
    else
        strbuf_addstr(o, AKA_HTML_MISSING);
    strbuf_addstr(o, "</dd><dt>improvement</dt><dd>");
    aka_html_num(o, x->improvement_pct, "%+.2f%%");
    strbuf_addstr(o, "</dd><dt>bootstrap interval</dt><dd>");
    if (aka_measured(x->ci_low_pct) && aka_measured(x->ci_high_pct))
        aka_html_textf(o, "%+.2f%% .. %+.2f%%", x->ci_low_pct, x->ci_high_pct);
    else
        strbuf_addstr(o, "not recorded");
    strbuf_addstr(o, "</dd><dt>threshold</dt><dd>");
    aka_html_num(o, x->min_improvement_pct, "%+.2f%%");
    strbuf_addstr(o, "</dd><dt>dispersion</dt><dd>");
    aka_html_num(o, x->dispersion_pct, "%.2f%%");
    strbuf_addstr(o, "</dd></dl>\n");
}

void aka_html_verify_panel(const struct aka_report *r, struct strbuf *o)
{
    size_t shown = 0;
    aka_html_panel(o, "verification", "Verifications");
    for (size_t i = 0; i < r->versions.n; i++) {
        const struct aka_report_version *v = &r->versions.v[i];
        if (!v->verify.present)
            continue;
        strbuf_addf(o, "<div class=\"verify\" id=\"verify-v%ld\"><h3>", v->rec.version);
        aka_html_textf(o, "v%ld %s", v->rec.version, aka_memory_status_names[v->rec.status]);
        strbuf_addstr(o, "</h3>\n");
        verify_facts(v, o);
        interval_svg(&v->verify, v->rec.version, o);
        if (v->verify.runs)
            runs_svg(v->verify.runs, v->rec.version, o);
        strbuf_addstr(o, "</div>\n");
        shown++;
    }
    if (!shown)
        strbuf_addstr(o, "<p>No version record carries a verification yet.</p>\n");
    strbuf_addstr(o, "</section>\n");
}

/* ---- roofline ------------------------------------------------------------ */

static void side(json_t *rf, const char *got, const char *peak, const char *pct, const char *what,
                 double y, struct strbuf *o)
{
    json_t *g = json_object_get(rf, got), *p = json_object_get(rf, peak),
           *c = json_object_get(rf, pct);
    strbuf_addf(o, "<text x=\"4\" y=\"%.0f\">", y + 12);
    aka_html_text(o, what);
    strbuf_addstr(o, ": ");
    aka_html_num(o, json_is_number(g) ? json_number_value(g) : AKA_MISSING, "%.4g");
    strbuf_addstr(o, " of ");
    aka_html_num(o, json_is_number(p) ? json_number_value(p) : AKA_MISSING, "%.4g");
    strbuf_addstr(o, " (");
    aka_html_num(o, json_is_number(c) ? json_number_value(c) : AKA_MISSING, "%.1f%%");
    strbuf_addstr(o, ")</text>");
    if (json_is_number(c)) /* the bar is clipped at the ceiling; the text keeps the number */
        strbuf_addf(o,
                    "<rect class=\"bar roof\" x=\"260\" y=\"%.0f\" width=\"%.1f\" height=\"12\"/>",
                    y + 2, 3.5 * fmin(fmax(json_number_value(c), 0), 100));
    strbuf_addf(o, "<line class=\"ceil\" x1=\"610\" x2=\"610\" y1=\"%.0f\" y2=\"%.0f\"/>", y,
                y + 16);
}

static void roofline_of(const struct aka_report *r, long idx, const char *label, struct strbuf *o)
{
    strbuf_addstr(o, "<h3>");
    aka_html_text(o, label);
    strbuf_addstr(o, "</h3>\n");
    json_t *rf = idx >= 0 ? r->versions.v[idx].roofline : NULL;
    const char *unknown = json_string_value(json_object_get(rf, "unknown"));
    if (!rf || unknown) {
        strbuf_addstr(o, "<p class=\"roof-none\">not recorded");
        if (unknown) {
            strbuf_addstr(o, ": ");
            aka_html_text(o, unknown);
        }
        strbuf_addstr(o, "</p>\n");
        return;
    }
    strbuf_addstr(o, "<svg viewBox=\"0 0 640 44\" width=\"640\" height=\"44\">");
    side(rf, "gflop_per_s", "peak_gflop_per_s", "flop_pct", "GFLOP/s", 2, o);
    side(rf, "gb_per_s", "peak_gb_per_s", "bandwidth_pct", "GB/s", 24, o);
    strbuf_addstr(o, "</svg>\n<p>ceilings and sources: ");
    aka_html_text(o, json_string_value(json_object_get(rf, "basis")));
    strbuf_addstr(o, "</p>\n");
}

void aka_html_roofline_panel(const struct aka_report *r, struct strbuf *o)
{
    struct strbuf label = STRBUF_INIT;
    aka_html_panel(o, "roofline", "Roofline position");
    strbuf_addstr(o, "<p>Achieved rate against the platform's ceiling (the black line is 100%), "
                     "from each record's <code>roofline</code>.</p>\n");
    roofline_of(r, aka_report_find(r, 0), "V0", o);
    roofline_of(r, aka_report_find(r, 1), "V1", o);
    if (r->incumbent >= 0)
        strbuf_addf(&label, "incumbent v%ld", r->versions.v[r->incumbent].rec.version);
    else
        strbuf_addstr(&label, "incumbent (none yet)");
    roofline_of(r, r->incumbent, label.buf, o);
    strbuf_addstr(o, "</section>\n");
    strbuf_release(&label);
}
