/*
 * facts.c — one hardware fact of one chip, by quantity, with its attribution:
 * the ceilings a profile summary is set against (roofline context).
 */
#include "contracts/records.h"
#include "wiki/wiki.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double scaled(const json_t *fact, const char *want_unit)
{
    static const struct {
        const char *unit, *to;
        double scale;
    } t[] = {{"TB/s", "GB/s", 1e3},    {"GB/s", "GB/s", 1},       {"TFLOPS", "TFLOPS", 1},
             {"TFLOP/s", "TFLOPS", 1}, {"PFLOPS", "TFLOPS", 1e3}, {NULL, NULL, 0}};
    const char *unit = json_string_value(json_object_get(fact, "unit"));
    json_t *v = json_object_get(fact, "value");
    for (size_t i = 0; unit && json_is_number(v) && t[i].unit; i++)
        if (strcmp(unit, t[i].unit) == 0 && strcmp(want_unit, t[i].to) == 0)
            return json_number_value(v) * t[i].scale;
    return NAN;
}

int aka_wiki_fact(struct aka_wiki *w, const char *chip, const char *const *quantities,
                  const char *unit, struct aka_wiki_fact *out, struct aka_err *err)
{
    struct aka_wiki_query q = {.chip = chip, .kind = "fact", .limit = AKA_WIKI_LIMIT_MAX};
    struct aka_wiki_result res;
    memset(out, 0, sizeof(*out));
    aka_wiki_result_init(&res);
    int rc = aka_wiki_query(w, &q, &res, err);
    for (size_t qi = 0; rc == 0 && !out->id && quantities[qi]; qi++)
        for (size_t i = 0; i < res.hits.n && !out->id; i++) {
            const json_t *rec = res.hits.v[i].record, *fact = json_object_get(rec, "fact");
            const char *qn = json_string_value(json_object_get(fact, "quantity"));
            double v = scaled(fact, unit);
            if (!qn || strcmp(qn, quantities[qi]) != 0 || isnan(v))
                continue;
            const json_t *src = json_object_get(rec, "source");
            const char *title = json_string_value(json_object_get(src, "title"));
            const char *url = json_string_value(json_object_get(src, "url"));
            out->value = v;
            out->id = aka_xstrdup(json_string_value(json_object_get(rec, "id")));
            out->source = aka_xstrdup(title ? title : url ? url : "measurement");
        }
    aka_wiki_result_release(&res);
    return rc < 0 ? -1 : out->id ? 0 : 1;
}

void aka_wiki_fact_release(struct aka_wiki_fact *f)
{
    free(f->id);
    free(f->source);
    memset(f, 0, sizeof(*f));
}

bool aka_wiki_has_id(const char *id, void *wiki)
{
    struct strvec missing = STRVEC_INIT;
    struct aka_err err = AKA_ERR_INIT;
    const char *ids[] = {id};
    bool ok = id && aka_wiki_check_refs(wiki, ids, 1, &missing, &err) == 0 && missing.n == 0;
    strvec_clear(&missing);
    return ok;
}

int aka_wiki_check_journal(const struct aka_wiki_config *cfg, const char *journal_path,
                           struct aka_err *err)
{
    struct aka_journal j;
    struct aka_wiki *w = NULL;
    if (aka_journal_load(journal_path, &j, err) < 0)
        return -1;
    int rc = aka_wiki_open(cfg, &w, err);
    if (rc == 0)
        rc = aka_journal_check_wiki_refs(journal_path, &j, aka_wiki_has_id, w, err);
    if (w)
        aka_wiki_close(w);
    aka_journal_release(&j);
    return rc;
}
