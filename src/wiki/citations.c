/*
 * citations.c — which wiki records helped: the wiki_citations a campaign's
 * memory records carry (each cited id with the citing experiment's decision),
 * joined to the outcome of the episode that cited them (the record's status).
 * Read-only, from the canonical memory/v<N>.json files of one workspace.
 */
#include "contracts/records.h"
#include "wiki/wiki.h"
#include "workspace/workspace.h"

#include <string.h>

static void count(json_t *o, const char *key)
{
    json_object_set_new(o, key, json_integer(json_integer_value(json_object_get(o, key)) + 1));
}

static void add_record(json_t *by_id, const json_t *rec)
{
    const char *status = json_string_value(json_object_get(rec, "status"));
    const char *version = json_string_value(json_object_get(rec, "version"));
    json_t *c;
    size_t i;
    json_array_foreach(json_object_get(rec, "wiki_citations"), i, c)
    {
        const char *id = json_string_value(json_object_get(c, "id"));
        const char *disp = json_string_value(json_object_get(c, "disposition"));
        if (!id)
            continue;
        json_t *e = json_object_get(by_id, id);
        if (!e) {
            e = json_pack("{s:s, s:i, s:{}, s:{}, s:[]}", "id", id, "cited", 0, "outcomes",
                          "dispositions", "versions");
            json_object_set_new(by_id, id, e);
        }
        count(e, "cited");
        count(json_object_get(e, "outcomes"), status ? status : "unknown");
        count(json_object_get(e, "dispositions"), disp && *disp ? disp : "(none)");
        json_t *vs = json_object_get(e, "versions");
        json_t *last = json_array_get(vs, json_array_size(vs) - 1);
        if (version && !(last && strcmp(json_string_value(last), version) == 0))
            json_array_append_new(vs, json_string(version));
    }
}

json_t *aka_wiki_citations(const char *ws, struct aka_err *err)
{
    struct aka_memory_listing l;
    struct strbuf dir = STRBUF_INIT, path = STRBUF_INIT;
    aka_ws_path(&dir, ws, AKA_WS_MEMORY);
    int rc = aka_memory_list(dir.buf, &l, err);
    json_t *by_id = json_object(), *out = NULL;
    for (size_t i = 0; rc == 0 && i < l.versions.n; i++) {
        struct aka_memory_record m;
        strbuf_reset(&path);
        aka_ws_memory_path(&path, ws, l.versions.v[i]);
        rc = aka_memory_load(path.buf, &m, err);
        if (rc == 0) {
            add_record(by_id, m.json);
            aka_memory_release(&m);
        }
    }
    if (rc == 0) {
        const char *id;
        json_t *e;
        out = json_array();
        json_object_foreach(by_id, id, e) json_array_append(out, e);
        aka_memory_listing_release(&l);
    }
    json_decref(by_id);
    strbuf_release(&dir);
    strbuf_release(&path);
    return out;
}

static void format_counts(const char *label, const json_t *o, struct strbuf *out)
{
    const char *k;
    json_t *v;
    bool first = true;
    strbuf_addf(out, "; %s: ", label);
    json_object_foreach((json_t *)o, k, v)
    {
        strbuf_addf(out, "%s", first ? "" : ", ");
        strbuf_addf_escaped(out, "%s", k);
        strbuf_addf(out, " x%lld", (long long)json_integer_value(v));
        first = false;
    }
}

void aka_wiki_citations_format(const json_t *cites, struct strbuf *out)
{
    json_t *e;
    size_t i;
    if (!json_array_size(cites))
        strbuf_addstr(out, "no episode has cited a wiki record yet\n");
    json_array_foreach((json_t *)cites, i, e)
    {
        strbuf_addf(out, "%s: cited %lld time(s)", json_string_value(json_object_get(e, "id")),
                    (long long)json_integer_value(json_object_get(e, "cited")));
        format_counts("outcomes", json_object_get(e, "outcomes"), out);
        format_counts("dispositions", json_object_get(e, "dispositions"), out);
        strbuf_addch(out, '\n');
    }
}
