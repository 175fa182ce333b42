/*
 * internal.h — what the report files share and nothing outside src/report/ uses.
 */
#ifndef AKA_REPORT_INTERNAL_H
#define AKA_REPORT_INTERNAL_H

#include "report/report.h"
#include "workspace/workspace.h"

/* An empty report for workspace ws: every count -1, every number AKA_MISSING. */
void aka_report_init(struct aka_report *r, const char *ws);

/* Load memory/v<N>.json (all of them, ascending), memory/v0.failed.json, then
 * derive speedups vs V0 and the incumbent. */
int aka_report_load_versions(const char *ws, struct aka_report *r, struct aka_err *err);

/* Whether a record of this status moved HEAD: baseline, framework_baseline, promoted. */
bool aka_report_status_moves_head(enum aka_memory_status s);

/* The agent phases, in report order (NULL-terminated). */
extern const char *const aka_report_phases[];
void aka_report_release_episodes(struct aka_report *r);

/* ---- HTML pieces (html.c) -------------------------------------------------- */

/* s as HTML text: & < > " ' as entities, control characters (but \n, \t) as
 * "\xNN"; NULL as a missing mark. */
void aka_html_text(struct strbuf *o, const char *s);
/* printf, then the result as HTML text. */
void aka_html_textf(struct strbuf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A number with fmt, or the missing mark when !aka_measured(v). */
void aka_html_num(struct strbuf *o, double v, const char *fmt);
/* The agent's summary of version i (its episode journal's outcome.summary, else the
 * record's optimization.action_description), or NULL. */
const char *aka_report_summary(const struct aka_report *r, size_t i);
/* The page's head (title, stylesheet) and its end (the inline script). */
void aka_html_begin(struct strbuf *o, const char *title);
void aka_html_end(struct strbuf *o);
/* A section with id and heading. */
void aka_html_panel(struct strbuf *o, const char *id, const char *title);

/* ---- panels ---------------------------------------------------------------- */

void aka_html_latency_panel(const struct aka_report *r, struct strbuf *o);  /* svg.c */
void aka_html_verify_panel(const struct aka_report *r, struct strbuf *o);   /* svg_verify.c */
void aka_html_roofline_panel(const struct aka_report *r, struct strbuf *o); /* svg_verify.c */
void aka_html_shapes_panel(const struct aka_report *r, struct strbuf *o);   /* html_tables.c */
void aka_html_tokens_panel(const struct aka_report *r, struct strbuf *o);   /* html_tables.c */
void aka_html_journal_panel(const struct aka_report *r, struct strbuf *o);  /* html_journal.c */

#define AKA_HTML_MISSING "<span class=\"na\">\xe2\x80\x94</span>"

#endif
