/*
 * html_journal.c — the journal panel of `aka report`: each episode's archived
 * journal (runtime/journal.json) as a collapsible block: its state and times,
 * every experiment (hypothesis, change, result, decision, cited wiki
 * records; the evidence objects stay in the file: they are the bulk of a journal
 * and the page must stay light with hundreds of episodes) and the outcome (summary, next
 * directions). All of it is the agent's own text, shown escaped.
 */
#include "base/json.h"
#include "report/internal.h"

#include <string.h>

/* A journal value as text: strings as they are, anything else as compact JSON. */
static void value(json_t *v, struct strbuf *o)
{
    struct strbuf sb = STRBUF_INIT;
    if (!v || json_is_null(v)) {
        strbuf_addstr(o, AKA_HTML_MISSING);
        return;
    }
    if (json_is_string(v))
        strbuf_addstr(&sb, json_string_value(v));
    else
        aka_json_dump_compact(v, &sb);
    aka_html_text(o, sb.buf);
    strbuf_release(&sb);
}

static void experiment(json_t *x, struct strbuf *o)
{
    static const char *const keys[] = {"name",     "hypothesis", "change", "result",
                                       "decision", "wiki_refs",  NULL};
    strbuf_addstr(o, "<tr>");
    for (size_t k = 0; keys[k]; k++) {
        strbuf_addstr(o, "<td>");
        value(json_object_get(x, keys[k]), o);
        strbuf_addstr(o, "</td>");
    }
    strbuf_addstr(o, "</tr>\n");
}

static void experiments(json_t *j, struct strbuf *o)
{
    json_t *x;
    size_t i;
    strbuf_addstr(
        o,
        "<table class=\"journal\"><thead><tr><th>experiment</th><th>hypothesis</th><th>change</th>"
        "<th>result</th><th>decision</th><th>wiki records</th>"
        "</tr></thead><tbody>\n");
    json_array_foreach(json_object_get(j, "experiments"), i, x) experiment(x, o);
    strbuf_addstr(o, "</tbody></table>\n");
}

static void outcome(json_t *j, struct strbuf *o)
{
    json_t *out = json_object_get(j, "outcome"), *d;
    size_t i;
    strbuf_addstr(o, "<p><b>summary:</b> <span class=\"summary\">");
    value(json_object_get(out, "summary"), o);
    strbuf_addstr(o, "</span></p>\n<p><b>next directions:</b></p><ul>");
    json_array_foreach(json_object_get(out, "next_directions"), i, d)
    {
        strbuf_addstr(o, "<li>");
        value(d, o);
        strbuf_addstr(o, "</li>");
    }
    strbuf_addstr(o, "</ul>\n");
}

static void journal(const struct aka_report *r, const struct aka_report_episode *e,
                    struct strbuf *o)
{
    const struct aka_journal *j = &e->j;
    strbuf_addf(o, "<details id=\"journal-e%04ld\"><summary>", e->number);
    aka_html_textf(o, "e%04ld", e->number);
    if (e->version >= 0)
        aka_html_textf(o, " \xe2\x86\x92 v%ld %s", r->versions.v[e->version].rec.version,
                       aka_memory_status_names[r->versions.v[e->version].rec.status]);
    strbuf_addstr(o, ": ");
    if (!e->journal_file) {
        strbuf_addstr(o, "no archived journal (the episode has not ended)</summary></details>\n");
        return;
    }
    aka_html_text(o, j->outcome_summary ? j->outcome_summary : "(no summary)");
    strbuf_addstr(o, "</summary>\n<p>");
    aka_html_textf(o, "state %s, %zu experiment(s), created %s, finalized ",
                   aka_journal_state_names[j->state], j->experiment_count,
                   j->created_at ? j->created_at : "(unknown)");
    aka_html_text(o, j->finalized_at);
    strbuf_addstr(o, "</p>\n");
    experiments(j->json, o);
    outcome(j->json, o);
    strbuf_addstr(o, "</details>\n");
}

void aka_html_journal_panel(const struct aka_report *r, struct strbuf *o)
{
    aka_html_panel(o, "journals", "Episode journals");
    if (!r->episodes.n)
        strbuf_addstr(o, "<p>No episode has started yet.</p>\n");
    for (size_t i = 0; i < r->episodes.n; i++)
        journal(r, &r->episodes.v[i], o);
    strbuf_addstr(o, "</section>\n");
}
