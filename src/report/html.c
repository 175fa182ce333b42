/*
 * html.c — the page of `aka report`: escaping, the stylesheet, the campaign
 * header (identity, incumbent, budget, live/stop state, failed V0), the
 * versions table, and the order of the panels (the panels live in svg.c,
 * svg_verify.c, html_tables.c and html_journal.c).
 *
 * Everything a record says reaches the page through aka_html_text: an agent's
 * summary is untrusted text and must stay text. The page names no URL but its
 * own anchors, and carries no time but the records' own, so the same workspace
 * state gives the same bytes.
 */
#include "report/internal.h"

#include <stdarg.h>
#include <string.h>

/* ---- escaping ------------------------------------------------------------ */

static void add_char(struct strbuf *o, unsigned char c)
{
    static const char *const ent[] = {
        ['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&quot;", ['\''] = "&#39;"};
    if (c < sizeof(ent) / sizeof(ent[0]) && ent[c])
        strbuf_addstr(o, ent[c]);
    else if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
        strbuf_addf(o, "\\x%02x", c);
    else
        strbuf_addch(o, c);
}

void aka_html_text(struct strbuf *o, const char *s)
{
    if (!s) {
        strbuf_addstr(o, AKA_HTML_MISSING);
        return;
    }
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        add_char(o, *p);
}

void aka_html_textf(struct strbuf *o, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    aka_html_text(o, sb.buf);
    strbuf_release(&sb);
}

void aka_html_num(struct strbuf *o, double v, const char *fmt)
{
    if (!aka_measured(v)) {
        strbuf_addstr(o, AKA_HTML_MISSING);
        return;
    }
    aka_html_textf(o, fmt, v);
}

void aka_html_panel(struct strbuf *o, const char *id, const char *title)
{
    strbuf_addf(o, "<section id=\"%s\"><h2>", id);
    aka_html_text(o, title);
    strbuf_addstr(o, "</h2>\n");
}

const char *aka_report_summary(const struct aka_report *r, size_t i)
{
    for (size_t k = 0; k < r->episodes.n; k++) {
        const struct aka_report_episode *e = &r->episodes.v[k];
        if (e->version == (long)i && e->journal_file && e->j.outcome_summary)
            return e->j.outcome_summary;
    }
    return r->versions.v[i].description;
}

/* ---- the page ------------------------------------------------------------ */

static const char style[] =
    "<style>\n"
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:1000px;color:#222;"
    "padding:0 1em}\n"
    /* Off-screen panels are laid out when scrolled to: a campaign of hundreds of
     * versions opens as fast as a short one (docs/measurements.md, issue 18). */
    "section+section{content-visibility:auto;contain-intrinsic-size:auto 600px}\n"
    "h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.8em}\n"
    "table{border-collapse:collapse;margin:.5em 0}td,th{padding:2px 8px;text-align:left;"
    "border-bottom:1px solid #eee;vertical-align:top}\n"
    "th{background:#f4f4f4}table.sortable th{cursor:pointer}td.n{text-align:right;"
    "font-variant-numeric:tabular-nums}\n"
    ".na{color:#999}.bad{color:#b00;font-weight:bold}.good{color:#070}\n"
    "dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px}dl.kv dt{color:#555}"
    "dl.kv dd{margin:0}\n"
    "svg{background:#fcfcfc;border:1px solid #ddd;display:block;margin:.5em 0}\n"
    "svg text{font-size:11px;fill:#444}.grid{stroke:#e4e4e4}.axis{stroke:#888}\n"
    ".s-baseline,.s-framework_baseline{fill:#1f5fbf}.s-promoted{fill:#1a8f3a}"
    ".s-rejected{fill:#fff;stroke:#c0392b;stroke-width:2}.s-pivot{fill:#e08a00}"
    ".s-blocked,.s-interrupted,.s-invalid_handoff,.s-failed{fill:#777}\n"
    ".inc{fill:none;stroke:#1a8f3a;stroke-width:1.5;stroke-dasharray:4 3}"
    ".thr{stroke:#c0392b;stroke-width:2;stroke-dasharray:5 3}.ci{stroke:#1f5fbf;stroke-width:6}"
    ".est{fill:#111}.ceil{stroke:#111;stroke-width:2}.bar{fill:#1f5fbf}.bar2{fill:#e08a00}"
    ".r-incumbent{fill:#1f5fbf}.r-candidate{fill:#e08a00}.r-fail{fill:#c0392b}\n"
    "details{margin:.3em 0;border:1px solid #ddd;padding:.3em .6em}summary{cursor:pointer}\n"
    ".journal td{white-space:pre-wrap}.wide{overflow-x:auto}\n"
    "</style>\n";

/* Table sort on a heading click (numbers by data-k), and the page's own render time
 * (load event after a forced layout) for the measurement in docs/measurements.md. */
static const char script[] =
    "<script>\n"
    "document.querySelectorAll('table.sortable th').forEach(function(th,c){"
    "th.onclick=function(){var b=th.closest('table').tBodies[0],up=th.dataset.up!=='1';"
    "th.dataset.up=up?'1':'0';var rows=Array.prototype.slice.call(b.rows);"
    "function k(r){var d=r.cells[c];var v=d.dataset.k;return v!==undefined?parseFloat(v):"
    "d.textContent;}"
    "rows.sort(function(x,y){var a=k(x),z=k(y);var o=a<z?-1:a>z?1:0;return up?o:-o;});"
    "rows.forEach(function(r){b.appendChild(r);});};});\n"
    "addEventListener('load',function(){void document.body.offsetHeight;"
    "document.documentElement.setAttribute('data-render-ms',performance.now().toFixed(1));});\n"
    "</script>\n";

void aka_html_begin(struct strbuf *o, const char *title)
{
    strbuf_addstr(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width\">\n<title>");
    aka_html_text(o, title);
    strbuf_addstr(o, "</title>\n");
    strbuf_addstr(o, style);
    strbuf_addstr(o, "</head><body>\n");
}

void aka_html_end(struct strbuf *o)
{
    strbuf_addstr(o, script);
    strbuf_addstr(o, "</body></html>\n");
}
