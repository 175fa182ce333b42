/*
 * check.c — `aka wiki check`: validate every discovered plugin afresh (the
 * cache is bypassed: check must judge the files, not an index of them) and
 * list every problem: manifest and schema errors, missing sources, duplicate
 * ids, and related ids that point at no loaded record.
 */
#include "wiki/wiki_impl.h"

#include <string.h>

void aka_wiki_check_report_init(struct aka_wiki_check_report *rep)
{
    memset(rep, 0, sizeof(*rep));
    rep->stats = json_pack("{s:{}, s:{}}", "by_kind", "by_vendor");
}

void aka_wiki_check_report_release(struct aka_wiki_check_report *rep)
{
    strvec_clear(&rep->problems);
    json_decref(rep->stats);
    rep->stats = NULL;
}

static bool id_loaded(const struct wiki_record_list *recs, const char *id)
{
    for (size_t i = 0; i < recs->n; i++)
        if (strcmp(recs->v[i].id, id) == 0)
            return true;
    return false;
}

static void dangling(const struct wiki_record_list *recs, struct aka_wiki_check_report *rep)
{
    for (size_t i = 0; i < recs->n; i++) {
        const struct wiki_record *r = &recs->v[i];
        for (size_t j = 0; j < r->related.n; j++)
            if (!id_loaded(recs, r->related.v[j]))
                strvec_pushf(&rep->problems,
                             "%s:%ld: related: \"%s\" (in record %s) is not "
                             "the id of any loaded record",
                             r->file, r->line, r->related.v[j], r->id);
    }
}

static void bump(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    json_object_set_new(obj, key, json_integer(v ? json_integer_value(v) + 1 : 1));
}

static void stats(const struct wiki_record_list *recs, struct aka_wiki_check_report *rep)
{
    json_t *by_kind = json_object_get(rep->stats, "by_kind");
    json_t *by_vendor = json_object_get(rep->stats, "by_vendor");
    for (size_t i = 0; i < recs->n; i++) {
        bump(by_kind, recs->v[i].kind);
        bump(by_vendor, recs->v[i].vendor);
    }
    rep->records = recs->n;
}

int aka_wiki_check(const struct aka_wiki_config *cfg, struct aka_wiki_check_report *rep,
                   struct aka_err *err)
{
    struct aka_wiki_plugin_list pl = {0};
    struct wiki_record_list recs = {0};
    if (wiki_discover(cfg, &pl, err) < 0)
        return -1;
    wiki_load_all(&pl, &recs);
    for (size_t i = 0; i < pl.n; i++) {
        const struct aka_wiki_plugin *p = &pl.v[i];
        if (!p->skipped) {
            rep->plugins++;
            continue;
        }
        strvec_pushf(&rep->problems, "plugin %s (%s) is skipped:", p->name ? p->name : p->root,
                     aka_wiki_origin_name(p->origin));
        for (size_t j = 0; j < p->problems.n; j++)
            strvec_pushf(&rep->problems, "  %s", p->problems.v[j]);
    }
    dangling(&recs, rep);
    stats(&recs, rep);
    wiki_record_list_release(&recs);
    wiki_plugin_list_release(&pl);
    return 0;
}
