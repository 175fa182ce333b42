/*
 * index.c — the page `aka report DIR` writes beside its campaigns' reports
 * when DIR's children are workspaces (a multi-framework dispatch's parent):
 * one sortable row per campaign with its identity, incumbent, speedup, version
 * count and stop state, linking to that campaign's report file.
 */
#include "report/internal.h"

static void cell_text(struct strbuf *o, const char *s)
{
    strbuf_addstr(o, "<td>");
    aka_html_text(o, s);
    strbuf_addstr(o, "</td>");
}

static void cell_num(struct strbuf *o, double v, const char *fmt)
{
    strbuf_addf(o, "<td class=\"n\" data-k=\"%.17g\">", aka_measured(v) ? v : -1);
    aka_html_num(o, v, fmt);
    strbuf_addstr(o, "</td>");
}

static void row(const struct aka_report_index_row *x, struct strbuf *o)
{
    const struct aka_report *r = x->r;
    const struct aka_report_version *inc = r->incumbent >= 0 ? &r->versions.v[r->incumbent] : NULL;
    strbuf_addstr(o, "<tr class=\"campaign\"><td><a href=\"");
    aka_html_text(o, x->href);
    strbuf_addstr(o, "\">");
    aka_html_text(o, x->name);
    strbuf_addstr(o, "</a></td>");
    cell_text(o, r->campaign.op_name);
    cell_text(o, r->campaign.framework);
    cell_text(o, r->campaign.platform);
    strbuf_addstr(o, "<td>");
    if (inc)
        aka_html_textf(o, "v%ld", inc->rec.version);
    else
        strbuf_addstr(o, r->has_failed_v0 ? "none (V0 failed)" : "none");
    strbuf_addstr(o, "</td>");
    cell_num(o, inc ? inc->latency_us : AKA_MISSING, "%.3f");
    cell_num(o, inc ? inc->speedup_vs_v0 : AKA_MISSING, "%.3f\xc3\x97");
    strbuf_addf(o, "<td class=\"n\" data-k=\"%zu\">%zu</td>", r->versions.n, r->versions.n);
    cell_text(o, r->stop_reason ? r->stop_reason : "not stopped");
    strbuf_addstr(o, "</tr>\n");
}

void aka_report_render_index(const char *dir, const struct aka_report_index_row *rows, size_t n,
                             struct strbuf *out)
{
    struct strbuf title = STRBUF_INIT;
    strbuf_addf(&title, "aka report: %zu campaign(s) in %s", n, dir);
    aka_html_begin(out, title.buf);
    strbuf_addstr(out, "<h1>");
    aka_html_text(out, title.buf);
    strbuf_addstr(out, "</h1>\n<table class=\"sortable\" id=\"campaigns\"><thead><tr>"
                       "<th>workspace</th><th>operator</th><th>framework</th><th>platform</th>"
                       "<th>incumbent</th><th>latency \xc2\xb5s</th><th>vs V0</th>"
                       "<th>versions</th><th>stop</th></tr></thead><tbody>\n");
    for (size_t i = 0; i < n; i++)
        row(&rows[i], out);
    strbuf_addstr(out, "</tbody></table>\n");
    aka_html_end(out);
    strbuf_release(&title);
}
