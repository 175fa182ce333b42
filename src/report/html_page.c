/*
 * html_page.c — one campaign's report page: the header (what the campaign is,
 * its incumbent, budget counters, whether and why it stopped, a failed V0),
 * the versions table, and the panels in their order.
 */
#include "report/internal.h"

#include <string.h>

static void kv(struct strbuf *o, const char *key, const char *value)
{
    strbuf_addstr(o, "<dt>");
    aka_html_text(o, key);
    strbuf_addstr(o, "</dt><dd>");
    aka_html_text(o, value);
    strbuf_addstr(o, "</dd>\n");
}

static void kv_count(struct strbuf *o, const char *key, long long v)
{
    strbuf_addstr(o, "<dt>");
    aka_html_text(o, key);
    strbuf_addstr(o, "</dt><dd>");
    if (v >= 0)
        strbuf_addf(o, "%lld", v);
    else
        strbuf_addstr(o, AKA_HTML_MISSING);
    strbuf_addstr(o, "</dd>\n");
}

static void identity(const struct aka_report *r, struct strbuf *o)
{
    const struct aka_report_campaign *c = &r->campaign;
    kv(o, "workspace", r->workspace);
    kv(o, "operator", c->op_name);
    kv(o, "operator directory", c->op_dir);
    kv(o, "layout", c->layout);
    kv(o, "framework", c->framework);
    kv(o, "platform", c->platform);
    kv(o, "mode", c->mode);
    kv(o, "agent", c->agent);
    kv(o, "isolation", c->isolation);
    kv(o, "created", c->created_at);
}

static void incumbent(const struct aka_report *r, struct strbuf *o)
{
    strbuf_addstr(o, "<dt>incumbent</dt><dd id=\"incumbent\">");
    if (r->incumbent < 0) {
        strbuf_addstr(o, "none (no version has passed yet)</dd>\n");
        return;
    }
    const struct aka_report_version *v = &r->versions.v[r->incumbent];
    aka_html_textf(o, "v%ld (%s), commit ", v->rec.version, aka_memory_status_names[v->rec.status]);
    aka_html_text(o, v->rec.git_commit_hash);
    strbuf_addstr(o, ", ");
    aka_html_num(o, v->latency_us, "%.3f");
    strbuf_addstr(o, " \xc2\xb5s, ");
    aka_html_num(o, v->speedup_vs_v0, "%.3f");
    strbuf_addstr(o, "\xc3\x97 vs V0</dd>\n");
}

static void progress(const struct aka_report *r, struct strbuf *o)
{
    const struct aka_report_state *s = &r->state;
    kv(o, "state", r->stop_reason ? "stopped" : "not stopped (no stop recorded yet)");
    if (r->stop_reason)
        kv(o, "stop reason", r->stop_reason);
    if (r->live.present) {
        kv(o, "live phase", r->live.phase);
        kv(o, "live updated", r->live.updated_at);
    }
    kv_count(o, "episodes", s->episodes);
    kv_count(o, "accepted", s->accepted);
    kv_count(o, "rejected", s->rejected);
    kv_count(o, "pivoted", s->pivoted);
    kv_count(o, "blocked", s->blocked);
    kv_count(o, "interrupted", s->interrupted);
    kv_count(o, "tokens", s->tokens);
}

static void failed_v0(const struct aka_report *r, struct strbuf *o)
{
    if (!r->has_failed_v0)
        return;
    json_t *qg = json_object_get(r->failed_v0.json, "quality_gate");
    strbuf_addstr(o, "<div id=\"failed-v0\" class=\"bad\">V0 failed: ");
    aka_html_text(o, r->failed_v0_file);
    strbuf_addstr(o, ": ");
    aka_html_text(o, json_string_value(json_object_get(qg, "failure_reason")));
    strbuf_addstr(o, " (");
    aka_html_text(o, r->failed_v0.timestamp);
    strbuf_addstr(o, ")</div>\n");
}

static void version_row(const struct aka_report *r, size_t i, struct strbuf *o)
{
    const struct aka_report_version *v = &r->versions.v[i];
    strbuf_addf(o, "<tr id=\"v%ld\"><td data-k=\"%ld\">v%ld</td><td>", v->rec.version,
                v->rec.version, v->rec.version);
    aka_html_text(o, aka_memory_status_names[v->rec.status]);
    strbuf_addstr(o, "</td><td>");
    aka_html_text(o, v->kind);
    strbuf_addstr(o, "</td><td><code>");
    aka_html_text(o, v->rec.git_commit_hash);
    strbuf_addf(o, "</code></td><td class=\"n\" data-k=\"%.17g\">",
                aka_measured(v->latency_us) ? v->latency_us : -1);
    aka_html_num(o, v->latency_us, "%.3f");
    strbuf_addf(o, "</td><td class=\"n\" data-k=\"%.17g\">",
                aka_measured(v->speedup_vs_v0) ? v->speedup_vs_v0 : -1);
    aka_html_num(o, v->speedup_vs_v0, "%.3f");
    strbuf_addstr(o, "</td><td>");
    if (v->carried_from)
        aka_html_textf(o, "measurement carried from %s; ", v->carried_from);
    aka_html_text(o, aka_report_summary(r, i));
    strbuf_addstr(o, "</td></tr>\n");
}

static void versions_table(const struct aka_report *r, struct strbuf *o)
{
    aka_html_panel(o, "versions", "Versions");
    if (!r->versions.n) {
        strbuf_addstr(o, "<p>No canonical version recorded yet.</p></section>\n");
        return;
    }
    strbuf_addstr(o, "<table class=\"sortable\"><thead><tr><th>version</th><th>status</th>"
                     "<th>kind</th><th>commit</th><th>latency \xc2\xb5s</th><th>vs V0</th>"
                     "<th>summary</th></tr></thead><tbody>\n");
    for (size_t i = 0; i < r->versions.n; i++)
        version_row(r, i, o);
    strbuf_addstr(o, "</tbody></table></section>\n");
}

void aka_report_render_html(const struct aka_report *r, struct strbuf *out)
{
    struct strbuf title = STRBUF_INIT;
    strbuf_addf(&title, "aka report: %s %s %s", r->campaign.op_name ? r->campaign.op_name : "?",
                r->campaign.framework ? r->campaign.framework : "?",
                r->campaign.platform ? r->campaign.platform : "?");
    aka_html_begin(out, title.buf);
    strbuf_addstr(out, "<h1>");
    aka_html_text(out, title.buf);
    strbuf_addstr(out, "</h1>\n<dl class=\"kv\">\n");
    identity(r, out);
    incumbent(r, out);
    progress(r, out);
    strbuf_addstr(out, "</dl>\n");
    failed_v0(r, out);
    aka_html_latency_panel(r, out);
    aka_html_shapes_panel(r, out);
    aka_html_verify_panel(r, out);
    aka_html_roofline_panel(r, out);
    aka_html_tokens_panel(r, out);
    aka_html_journal_panel(r, out);
    versions_table(r, out);
    aka_html_end(out);
    strbuf_release(&title);
}
