/*
 * svg.c — the versions charts of `aka report`, drawn as inline SVG: latency
 * (log scale, µs) and speedup vs V0 of every version, one marker per version
 * whose shape and colour say its status (promoted, rejected, pivot, blocked,
 * baseline), the incumbent's path as a dashed step line, and a native SVG
 * <title> per marker as the hover (status, numbers, the agent's summary, the
 * commit). A version whose record carries no number has no marker.
 */
#include "report/internal.h"

#include <math.h>
#include <string.h>

#define W  900.0
#define H  300.0
#define ML 70.0
#define MR 20.0
#define MT 15.0
#define MB 40.0

struct axis {
    double lo, hi; /* data range (log10 values when log) */
    bool log;
};

static double ax_y(const struct axis *a, double v)
{
    double t = a->log ? log10(v) : v;
    return MT + (H - MT - MB) * (1.0 - (t - a->lo) / (a->hi - a->lo));
}

static double ax_x(size_t i, size_t n)
{
    return ML + (W - ML - MR) * ((double)i + 0.5) / (double)n;
}

typedef double (*value_fn)(const struct aka_report_version *v);

static double latency_of(const struct aka_report_version *v)
{
    return aka_measured(v->latency_us) && v->latency_us > 0 ? v->latency_us : AKA_MISSING;
}

static double speedup_of(const struct aka_report_version *v)
{
    return aka_measured(v->speedup_vs_v0) && v->speedup_vs_v0 > 0 ? v->speedup_vs_v0 : AKA_MISSING;
}

/* The range of the values (with 1.0 for speedups, so the V0 line is in view); false if none. */
static bool range(const struct aka_report *r, value_fn f, bool with_one, struct axis *a)
{
    double lo = with_one ? 1 : INFINITY, hi = with_one ? 1 : -INFINITY;
    for (size_t i = 0; i < r->versions.n; i++) {
        double v = f(&r->versions.v[i]);
        if (aka_measured(v)) {
            lo = fmin(lo, v);
            hi = fmax(hi, v);
        }
    }
    if (!isfinite(lo))
        return false;
    a->lo = log10(lo) - 0.05;
    a->hi = log10(hi) + 0.05;
    a->log = true;
    return true;
}

static void grid(const struct axis *a, const char *unit, struct strbuf *o)
{
    for (int k = 0; k <= 4; k++) {
        double t = a->lo + (a->hi - a->lo) * k / 4.0, y = ax_y(a, pow(10, t));
        strbuf_addf(o, "<line class=\"grid\" x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\"/>", ML,
                    W - MR, y, y);
        strbuf_addf(o, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%.4g%s</text>\n", ML - 4,
                    y + 4, pow(10, t), unit);
    }
}

static void x_labels(const struct aka_report *r, struct strbuf *o)
{
    size_t n = r->versions.n, step = n > 20 ? (n + 19) / 20 : 1;
    for (size_t i = 0; i < n; i += step)
        strbuf_addf(o, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">v%ld</text>", ax_x(i, n),
                    H - MB + 16, r->versions.v[i].rec.version);
    strbuf_addf(o, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">version</text>\n",
                (ML + W - MR) / 2, H - 6);
}

/* The incumbent's path: a step through every version that moved HEAD. */
static void incumbent_steps(const struct aka_report *r, value_fn f, const struct axis *a,
                            struct strbuf *o)
{
    size_t n = r->versions.n;
    bool open = false;
    double y = 0;
    for (size_t i = 0; i < n; i++) {
        const struct aka_report_version *v = &r->versions.v[i];
        if (!aka_report_status_moves_head(v->rec.status) || !aka_measured(f(v)))
            continue;
        double x = ax_x(i, n);
        if (open)
            strbuf_addf(o, " %.1f,%.1f", x, y);
        else
            strbuf_addstr(o, "<polyline class=\"inc\" points=\"");
        y = ax_y(a, f(v));
        strbuf_addf(o, " %.1f,%.1f", x, y);
        open = true;
    }
    if (open)
        strbuf_addf(o, " %.1f,%.1f\"/>\n", W - MR, y);
}

static void hover(const struct aka_report *r, size_t i, struct strbuf *o)
{
    const struct aka_report_version *v = &r->versions.v[i];
    strbuf_addstr(o, "<title>");
    aka_html_textf(o, "v%ld %s", v->rec.version, aka_memory_status_names[v->rec.status]);
    if (v->kind)
        aka_html_textf(o, " (%s)", v->kind);
    strbuf_addstr(o, "\nlatency ");
    aka_html_num(o, v->latency_us, "%.3f \xc2\xb5s");
    strbuf_addstr(o, ", speedup vs V0 ");
    aka_html_num(o, v->speedup_vs_v0, "%.3f\xc3\x97");
    if (v->carried_from)
        aka_html_textf(o, " (measurement carried from %s)", v->carried_from);
    strbuf_addstr(o, "\ncommit ");
    aka_html_text(o, v->rec.git_commit_hash ? v->rec.git_commit_hash : "none (HEAD unchanged)");
    strbuf_addstr(o, "\n");
    aka_html_text(o, aka_report_summary(r, i) ? aka_report_summary(r, i) : "(no summary)");
    strbuf_addstr(o, "</title>");
}

/* One marker: circles for versions that moved HEAD and for rejected ones (hollow),
 * a diamond for a pivot, a square for blocked and the other outcomes. */
static void marker(const struct aka_report *r, size_t i, double x, double y, const char *cls,
                   struct strbuf *o)
{
    enum aka_memory_status s = r->versions.v[i].rec.status;
    const char *name = aka_memory_status_names[s];
    long ver = r->versions.v[i].rec.version;
    if (aka_report_status_moves_head(s) || s == AKA_MEM_REJECTED)
        strbuf_addf(o, "<circle class=\"%s s-%s\" data-v=\"%ld\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\">",
                    cls, name, ver, x, y);
    else if (s == AKA_MEM_PIVOT)
        strbuf_addf(o, "<path class=\"%s s-%s\" data-v=\"%ld\" d=\"M%.1f %.1fl6 6l-6 6l-6 -6z\">",
                    cls, name, ver, x, y - 6);
    else
        strbuf_addf(o,
                    "<rect class=\"%s s-%s\" data-v=\"%ld\" x=\"%.1f\" y=\"%.1f\" width=\"10\" "
                    "height=\"10\">",
                    cls, name, ver, x - 5, y - 5);
    hover(r, i, o);
    strbuf_addf(o, "</%s>\n",
                aka_report_status_moves_head(s) || s == AKA_MEM_REJECTED ? "circle"
                : s == AKA_MEM_PIVOT                                     ? "path"
                                                                         : "rect");
}

static size_t chart(const struct aka_report *r, value_fn f, const char *id, const char *unit,
                    struct strbuf *o)
{
    struct axis a;
    size_t n = r->versions.n, drawn = 0;
    if (!range(r, f, f == speedup_of, &a)) {
        strbuf_addf(o, "<p id=\"%s-none\">No version record carries this number yet.</p>\n", id);
        return 0;
    }
    strbuf_addf(o,
                "<svg id=\"%s\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
                "role=\"img\">\n",
                id, W, H, W, H);
    grid(&a, unit, o);
    x_labels(r, o);
    if (f == speedup_of)
        strbuf_addf(o, "<line class=\"thr\" x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\"/>\n",
                    ML, W - MR, ax_y(&a, 1), ax_y(&a, 1));
    incumbent_steps(r, f, &a, o);
    for (size_t i = 0; i < n; i++) {
        double v = f(&r->versions.v[i]);
        if (aka_measured(v)) {
            marker(r, i, ax_x(i, n), ax_y(&a, v), f == latency_of ? "pt" : "sp", o);
            drawn++;
        }
    }
    strbuf_addstr(o, "</svg>\n");
    return drawn;
}

size_t aka_report_latency_points(const struct aka_report *r)
{
    size_t k = 0;
    for (size_t i = 0; i < r->versions.n; i++)
        k += aka_measured(latency_of(&r->versions.v[i]));
    return k;
}

static const char legend[] =
    "<p class=\"legend\"><svg width=\"560\" height=\"22\" style=\"display:inline;border:0\">"
    "<circle class=\"s-baseline\" cx=\"10\" cy=\"11\" r=\"5\"/><text x=\"20\" y=\"15\">baseline"
    "</text><circle class=\"s-promoted\" cx=\"100\" cy=\"11\" r=\"5\"/><text x=\"110\" y=\"15\">"
    "promoted</text><circle class=\"s-rejected\" cx=\"190\" cy=\"11\" r=\"5\"/><text x=\"200\" "
    "y=\"15\">rejected</text><path class=\"s-pivot\" d=\"M280 5l6 6l-6 6l-6 -6z\"/><text "
    "x=\"292\" y=\"15\">pivot</text><rect class=\"s-blocked\" x=\"355\" y=\"6\" width=\"10\" "
    "height=\"10\"/><text x=\"370\" y=\"15\">blocked / other</text><line class=\"inc\" x1=\"460\" "
    "x2=\"490\" y1=\"11\" y2=\"11\"/><text x=\"494\" y=\"15\">HEAD</text></svg></p>\n";

void aka_html_latency_panel(const struct aka_report *r, struct strbuf *o)
{
    aka_html_panel(o, "latency", "Incumbent latency and speedup over versions");
    strbuf_addstr(o, "<p>Latency geomean of every version record (\xc2\xb5s, log scale; "
                     "rejected and pivot records carry the incumbent's measurement). Hover a "
                     "marker for the episode's summary and commit.</p>\n");
    strbuf_addstr(o, legend);
    size_t k = chart(r, latency_of, "latency-chart", " \xc2\xb5s", o);
    strbuf_addf(o,
                "<p id=\"latency-points\" data-points=\"%zu\">%zu of %zu versions carry a "
                "latency.</p>\n",
                k, k, r->versions.n);
    strbuf_addstr(o, "<h3>Speedup vs V0 (geomean over shared shapes, log scale)</h3>\n");
    chart(r, speedup_of, "speedup-chart", "\xc3\x97", o);
    strbuf_addstr(o, "</section>\n");
}
