/*
 * render.c — turning hits, results and plugin lists into JSON and text, so
 * that the command layer only prints. Attribution is rendered with every hit,
 * in both forms: record id, plugin, plugin version, file:line, source.
 */
#include "base/json.h"
#include "wiki/wiki_impl.h"

#include <math.h>
#include <string.h>

#define BODY_PREVIEW 360

static const char *str_at(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

json_t *aka_wiki_hit_json(const struct aka_wiki_hit *hit)
{
    json_t *out = json_deep_copy(hit->record);
    json_t *source = json_object_get(hit->record, "source");
    json_t *attr =
        json_pack("{s:s, s:s, s:s, s:s, s:I, s:O}", "record_id", str_at(hit->record, "id"),
                  "plugin", hit->plugin, "plugin_version", hit->plugin_version, "file", hit->file,
                  "line", (json_int_t)hit->line, "source", source ? source : json_null());
    json_object_set_new(out, "attribution", attr);
    if (hit->score != 0.0 && isfinite(hit->score))
        json_object_set_new(out, "score", json_real(hit->score));
    return out;
}

static void format_value(const json_t *v, struct strbuf *out)
{
    if (json_is_string(v))
        strbuf_addstr(out, json_string_value(v));
    else if (json_is_integer(v))
        strbuf_addf(out, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        strbuf_addf(out, "%g", json_real_value(v));
    else if (json_is_boolean(v))
        strbuf_addstr(out, json_is_true(v) ? "yes" : "no");
}

static void format_source(const json_t *src, struct strbuf *out)
{
    if (strcmp(str_at(src, "kind"), "measurement") == 0) {
        strbuf_addf(out, "measurement by %s on %s: %s", str_at(src, "by"), str_at(src, "date"),
                    str_at(src, "method"));
        return;
    }
    strbuf_addf(out, "%s", str_at(src, "title"));
    if (*str_at(src, "section"))
        strbuf_addf(out, ", %s", str_at(src, "section"));
    if (*str_at(src, "url"))
        strbuf_addf(out, " <%s>", str_at(src, "url"));
    if (*str_at(src, "ref"))
        strbuf_addf(out, " [%s]", str_at(src, "ref"));
}

static void format_scope(const json_t *scope, struct strbuf *out)
{
    static const char *const keys[] = {"vendor", "arch", "chip", "framework", "family"};
    int n = 0;
    for (size_t i = 0; i < 5; i++) {
        const char *v = str_at(scope, keys[i]);
        if (*v && strcmp(v, "any"))
            strbuf_addf(out, "%s%s=%s", n++ ? " " : "", keys[i], v);
    }
}

void aka_wiki_hit_format(const struct aka_wiki_hit *hit, bool full, struct strbuf *out)
{
    const json_t *r = hit->record;
    const json_t *fact = json_object_get(r, "fact");
    const char *body = str_at(r, "body");
    strbuf_addf(out, "%s  [%s] %s\n  scope:  ", str_at(r, "id"), str_at(r, "kind"),
                str_at(r, "title"));
    format_scope(json_object_get(r, "scope"), out);
    if (fact) {
        strbuf_addf(out, "\n  fact:   %s = ", str_at(fact, "quantity"));
        format_value(json_object_get(fact, "value"), out);
        if (*str_at(fact, "unit"))
            strbuf_addf(out, " %s", str_at(fact, "unit"));
    }
    if (full || strlen(body) <= BODY_PREVIEW)
        strbuf_addf(out, "\n  %s", body);
    else
        strbuf_addf(out, "\n  %.*s... (aka wiki show %s)", BODY_PREVIEW, body, str_at(r, "id"));
    if (full) {
        const json_t *rel = json_object_get(r, "related"), *v;
        size_t i;
        json_array_foreach(rel, i, v)
            strbuf_addf(out, "%s%s", i ? ", " : "\n  related: ", json_string_value(v));
    }
    strbuf_addstr(out, "\n  source: ");
    format_source(json_object_get(r, "source"), out);
    strbuf_addf(out, "\n  from:   plugin %s %s, %s:%ld\n", hit->plugin, hit->plugin_version,
                hit->file, hit->line);
}

json_t *aka_wiki_result_json(const struct aka_wiki_result *res)
{
    json_t *terms = json_array(), *recs = json_array(), *notes = json_array(),
           *empty = json_array();
    for (size_t i = 0; i < res->terms.n; i++)
        json_array_append_new(terms, json_string(res->terms.v[i]));
    for (size_t i = 0; i < res->hits.n; i++)
        json_array_append_new(recs, aka_wiki_hit_json(&res->hits.v[i]));
    for (size_t i = 0; i < res->notes.n; i++)
        json_array_append_new(notes, json_string(res->notes.v[i]));
    for (size_t i = 0; i < res->empty_because.n; i++)
        json_array_append_new(empty, json_string(res->empty_because.v[i]));
    return json_pack("{s:{s:o, s:O, s:s}, s:I, s:o, s:o, s:o}", "query", "terms", terms, "filters",
                     res->filters, "mode", res->mode, "count", (json_int_t)res->hits.n, "notes",
                     notes, "empty_because", empty, "records", recs);
}

void aka_wiki_result_format(const struct aka_wiki_result *res, struct strbuf *out)
{
    for (size_t i = 0; i < res->notes.n; i++)
        strbuf_addf(out, "note: %s\n", res->notes.v[i]);
    if (res->hits.n == 0) {
        strbuf_addstr(out, "no results\n");
        for (size_t i = 0; i < res->empty_because.n; i++)
            strbuf_addf(out, "  %s\n", res->empty_because.v[i]);
        return;
    }
    for (size_t i = 0; i < res->hits.n; i++) {
        strbuf_addf(out, "%s%zu. ", i ? "\n" : "", i + 1);
        aka_wiki_hit_format(&res->hits.v[i], false, out);
    }
}

json_t *aka_wiki_plugins_json(const struct aka_wiki_plugin_list *pl)
{
    json_t *loaded = json_array(), *skipped = json_array();
    for (size_t i = 0; i < pl->n; i++) {
        const struct aka_wiki_plugin *p = &pl->v[i];
        json_t *o = json_pack("{s:s?, s:s?, s:s, s:s, s:s}", "name", p->name, "version", p->version,
                              "origin", aka_wiki_origin_name(p->origin), "root", p->root,
                              "fingerprint", p->fingerprint);
        if (p->skipped) {
            json_object_set_new(o, "problems", aka_json_string_array(&p->problems));
            json_array_append_new(skipped, o);
            continue;
        }
        json_object_set_new(o, "records", json_integer((json_int_t)p->record_count));
        json_object_set_new(o, "record_dirs", aka_json_string_array(&p->record_dirs));
        json_object_set_new(o, "skills", aka_json_string_array(&p->skills));
        json_object_set_new(o, "instructions", aka_json_string_array(&p->instructions));
        json_object_set_new(o, "tools", aka_json_string_array(&p->tools));
        json_array_append_new(loaded, o);
    }
    return json_pack("{s:o, s:o}", "plugins", loaded, "skipped", skipped);
}

void aka_wiki_plugins_format(const struct aka_wiki_plugin_list *pl, struct strbuf *out)
{
    for (size_t i = 0; i < pl->n; i++) {
        const struct aka_wiki_plugin *p = &pl->v[i];
        if (p->skipped)
            continue;
        strbuf_addf(out,
                    "%s %s (%s) %zu records, %zu skills, %zu instructions, %zu tools\n"
                    "  root: %s\n  fingerprint: %s\n",
                    p->name, p->version, aka_wiki_origin_name(p->origin), p->record_count,
                    p->skills.n, p->instructions.n, p->tools.n, p->root, p->fingerprint);
    }
    for (size_t i = 0; i < pl->n; i++) {
        const struct aka_wiki_plugin *p = &pl->v[i];
        if (!p->skipped)
            continue;
        strbuf_addf(out, "skipped: %s (%s)\n", p->root, aka_wiki_origin_name(p->origin));
        for (size_t j = 0; j < p->problems.n; j++)
            strbuf_addf(out, "  %s\n", p->problems.v[j]);
    }
}
