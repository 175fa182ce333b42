/*
 * query.c — ranked retrieval: FTS5 BM25 with field weights plus structured
 * scope filters, the any-term fallback, and the empty-result diagnosis.
 *
 * Filter semantics (why "any"/"generic" match): a record scoped to framework
 * "any" is advice for every framework, so --framework triton keeps it; a
 * vendor "generic" record (an algorithm such as online softmax) is valid on
 * every vendor. Vendor lines are never crossed: --vendor amd keeps amd and
 * generic records only, and an arch or chip filter keeps arch-neutral records
 * only of its own vendor.
 */
#include "wiki/wiki_impl.h"

#include <stdlib.h>
#include <string.h>

/* bm25 weights, positional over fts(title, tags, body, scope): a term in the
 * title says more about a record than the same term deep in its body. */
#define BM25 "bm25(fts, 10.0, 5.0, 1.0, 3.0)"

struct filters {
    const char *v[AX_COUNT]; /* canonical values; NULL: no filter */
};

void aka_wiki_result_init(struct aka_wiki_result *res)
{
    memset(res, 0, sizeof(*res));
    res->filters = json_object();
    res->mode = "filters-only";
}

void aka_wiki_hit_release(struct aka_wiki_hit *hit)
{
    json_decref(hit->record);
    free(hit->plugin);
    free(hit->plugin_version);
    free(hit->file);
    memset(hit, 0, sizeof(*hit));
}

void aka_wiki_result_release(struct aka_wiki_result *res)
{
    for (size_t i = 0; i < res->hits.n; i++)
        aka_wiki_hit_release(&res->hits.v[i]);
    VEC_FREE(res->hits);
    json_decref(res->filters);
    strvec_clear(&res->terms);
    strvec_clear(&res->notes);
    strvec_clear(&res->empty_because);
    res->filters = NULL;
}

static int resolve_filters(const struct aka_wiki_query *q, struct filters *f, json_t *out,
                           struct aka_err *err)
{
    const char *raw[AX_COUNT] = {q->vendor, q->arch, q->chip, q->framework, q->family, q->kind};
    for (int ax = 0; ax < AX_COUNT; ax++) {
        f->v[ax] = raw[ax] ? wiki_canon((enum wiki_axis)ax, raw[ax]) : NULL;
        if (raw[ax] && !f->v[ax]) {
            struct strbuf list = STRBUF_INIT;
            wiki_axis_list((enum wiki_axis)ax, &list);
            aka_err_set(err, AKA_EXIT_USAGE,
                        "%s: unknown value \"%s\"; did you mean \"%s\"? (valid: %s)",
                        wiki_axis_flag((enum wiki_axis)ax), raw[ax],
                        wiki_suggest((enum wiki_axis)ax, raw[ax]), list.buf);
            strbuf_release(&list);
            return -1;
        }
        if (f->v[ax])
            json_object_set_new(out, wiki_axis_field((enum wiki_axis)ax), json_string(f->v[ax]));
    }
    return 0;
}

/* " AND <condition>" per filter not in skip_mask; parameters in order. */
static void filter_sql(const struct filters *f, unsigned skip_mask, struct strbuf *sql,
                       struct strvec *params)
{
    for (int ax = 0; ax < AX_COUNT; ax++) {
        const char *v = f->v[ax];
        if (!v || (skip_mask & (1u << ax)))
            continue;
        if (ax == AX_ARCH && strcmp(v, "any")) {
            strbuf_addstr(sql, " AND (r.arch = ? OR (r.arch = 'any' AND r.vendor IN (?, "
                               "'generic')))");
            strvec_push(params, v);
            strvec_push(params, wiki_arch_vendor(v));
        } else if (ax == AX_CHIP && strcmp(v, "any")) {
            const char *arch = wiki_chip_arch(v);
            strbuf_addstr(sql, " AND (r.chip = ? OR (r.chip = 'any' AND r.arch IN (?, 'any') "
                               "AND r.vendor IN (?, 'generic')))");
            strvec_push(params, v);
            strvec_push(params, arch);
            strvec_push(params, wiki_arch_vendor(arch));
        } else if (ax == AX_KIND || ax == AX_ARCH || ax == AX_CHIP) {
            strbuf_addf(sql, " AND r.%s = ?", wiki_axis_field((enum wiki_axis)ax));
            strvec_push(params, v);
        } else {
            strbuf_addf(sql, " AND r.%s IN (?, '%s')", wiki_axis_field((enum wiki_axis)ax),
                        ax == AX_VENDOR ? "generic" : "any");
            strvec_push(params, v);
        }
    }
}

/* Terms as an FTS5 expression. Terms are [a-z0-9]+ so quoting is enough. */
static void match_expr(const struct strvec *terms, const char *op, struct strbuf *out)
{
    strbuf_reset(out);
    for (size_t i = 0; i < terms->n; i++)
        strbuf_addf(out, "%s\"%s\"", i ? op : "", terms->v[i]);
}

/*
 * How many filters a record matches exactly rather than through "any" or
 * "generic": a --framework triton query should list Triton records before
 * framework-neutral ones of similar relevance. Values are canonical names
 * from our own vocabulary tables, so inlining them as literals is safe.
 */
static void specificity_sql(const struct filters *f, struct strbuf *out)
{
    strbuf_addstr(out, "(0");
    for (int ax = 0; ax < AX_KIND; ax++)
        if (f->v[ax])
            strbuf_addf(out, " + (r.%s = '%s')", wiki_axis_field((enum wiki_axis)ax), f->v[ax]);
    strbuf_addch(out, ')');
}

static void select_sql(const char *match, const struct filters *f, unsigned skip, bool count,
                       struct strbuf *sql, struct strvec *params)
{
    struct strbuf spec = STRBUF_INIT;
    specificity_sql(f, &spec);
    strbuf_reset(sql);
    if (count)
        strbuf_addstr(sql, "SELECT count(*)");
    else if (match) /* bm25 is negative: scaling it up ranks a record higher */
        strbuf_addf(sql, "SELECT r.json, p.name, p.version, r.file, r.line, %s * (1.0 + 0.5 * %s)",
                    BM25, spec.buf);
    else
        strbuf_addf(sql, "SELECT r.json, p.name, p.version, r.file, r.line, -1.0 * %s", spec.buf);
    if (match) {
        strbuf_addstr(sql, " FROM fts JOIN rec r ON r.rid = fts.rowid JOIN plugin p ON p.idx = "
                           "r.plugin WHERE fts MATCH ?");
        strvec_push(params, match);
    } else {
        strbuf_addstr(sql, " FROM rec r JOIN plugin p ON p.idx = r.plugin WHERE 1");
    }
    filter_sql(f, skip, sql, params);
    if (!count)
        strbuf_addstr(sql, match ? " ORDER BY 6, r.id LIMIT ?"
                                 : " ORDER BY 6, CASE r.kind WHEN 'fact' THEN 0 WHEN 'technique' "
                                   "THEN 1 WHEN 'pitfall' THEN 2 ELSE 3 END, r.id LIMIT ?");
    strbuf_release(&spec);
}

static int prepare(sqlite3 *db, const struct strbuf *sql, const struct strvec *params,
                   sqlite3_stmt **st, struct aka_err *err)
{
    if (sqlite3_prepare_v2(db, sql->buf, -1, st, NULL) != SQLITE_OK)
        return wiki_sql_fail(db, "prepare query", err);
    for (size_t i = 0; i < params->n; i++)
        sqlite3_bind_text(*st, (int)i + 1, params->v[i], -1, SQLITE_TRANSIENT);
    return 0;
}

int wiki_hit_from_row(sqlite3_stmt *st, int c, struct aka_wiki_hit *hit, struct aka_err *err)
{
    const char *js = (const char *)sqlite3_column_text(st, c);
    json_error_t je;
    memset(hit, 0, sizeof(*hit));
    hit->record = js ? json_loads(js, 0, &je) : NULL;
    if (!hit->record)
        return aka_err_set(err, AKA_EXIT_FAILED, "wiki index: a stored record is not JSON");
    hit->plugin = aka_xstrdup((const char *)sqlite3_column_text(st, c + 1));
    hit->plugin_version = aka_xstrdup((const char *)sqlite3_column_text(st, c + 2));
    hit->file = aka_xstrdup((const char *)sqlite3_column_text(st, c + 3));
    hit->line = (long)sqlite3_column_int64(st, c + 4);
    hit->score = sqlite3_column_double(st, c + 5);
    return 0;
}

static int run_hits(struct aka_wiki *w, const char *match, const struct filters *f, int limit,
                    struct aka_wiki_result *res, struct aka_err *err)
{
    struct strbuf sql = STRBUF_INIT, lim = STRBUF_INIT;
    struct strvec params = STRVEC_INIT;
    sqlite3_stmt *st = NULL;
    select_sql(match, f, 0, false, &sql, &params);
    strbuf_addf(&lim, "%d", limit);
    strvec_push(&params, lim.buf);
    int rc = prepare(w->db, &sql, &params, &st, err), s = SQLITE_DONE;
    while (rc == 0 && (s = sqlite3_step(st)) == SQLITE_ROW) {
        struct aka_wiki_hit hit;
        rc = wiki_hit_from_row(st, 0, &hit, err);
        if (rc == 0)
            VEC_PUSH(res->hits, hit);
    }
    if (rc == 0 && s != SQLITE_DONE)
        rc = wiki_sql_fail(w->db, "query", err);
    sqlite3_finalize(st);
    strbuf_release(&sql);
    strbuf_release(&lim);
    strvec_clear(&params);
    return rc;
}

static long run_count(struct aka_wiki *w, const char *match, const struct filters *f, unsigned skip,
                      struct aka_err *err)
{
    struct strbuf sql = STRBUF_INIT;
    struct strvec params = STRVEC_INIT;
    sqlite3_stmt *st = NULL;
    long n = -1;
    select_sql(match, f, skip, true, &sql, &params);
    if (prepare(w->db, &sql, &params, &st, err) == 0 && sqlite3_step(st) == SQLITE_ROW)
        n = (long)sqlite3_column_int64(st, 0);
    else if (!err->code)
        wiki_sql_fail(w->db, "count", err);
    sqlite3_finalize(st);
    strbuf_release(&sql);
    strvec_clear(&params);
    return n;
}

/* Re-run without each filter in turn and say which one emptied the result. */
static int diagnose(struct aka_wiki *w, const char *match, const struct filters *f,
                    struct aka_wiki_result *res, struct aka_err *err)
{
    unsigned all = 0;
    for (int ax = 0; ax < AX_COUNT; ax++) {
        if (!f->v[ax])
            continue;
        all |= 1u << ax;
        long n = run_count(w, match, f, 1u << ax, err);
        if (n < 0)
            return -1;
        if (n > 0)
            strvec_pushf(&res->empty_because, "%s %s emptied it: without it, %ld record(s) match",
                         wiki_axis_flag((enum wiki_axis)ax), f->v[ax], n);
    }
    if (res->empty_because.n)
        return 0;
    long text_only = run_count(w, match, f, all, err);
    if (text_only < 0)
        return -1;
    if (text_only == 0)
        strvec_pushf(&res->empty_because, "%s",
                     match ? "no record matches the text, even "
                             "without filters"
                           : "the wiki holds no records");
    else
        strvec_pushf(&res->empty_because,
                     "no single filter explains it: without filters %ld "
                     "record(s) match; together the filters exclude them all",
                     text_only);
    return 0;
}

int aka_wiki_query(struct aka_wiki *w, const struct aka_wiki_query *q, struct aka_wiki_result *res,
                   struct aka_err *err)
{
    struct filters f;
    struct strbuf match = STRBUF_INIT;
    int limit = q->limit > 0 ? q->limit : AKA_WIKI_LIMIT_DEFAULT;
    if (limit > AKA_WIKI_LIMIT_MAX)
        limit = AKA_WIKI_LIMIT_MAX;
    if (resolve_filters(q, &f, res->filters, err) < 0)
        return -1;
    wiki_query_terms(q->text, &res->terms);
    int rc = 0;
    if (res->terms.n) {
        res->mode = "all-terms";
        match_expr(&res->terms, " AND ", &match);
        rc = run_hits(w, match.buf, &f, limit, res, err);
        if (rc == 0 && res->hits.n == 0 && res->terms.n > 1) {
            res->mode = "any-term";
            match_expr(&res->terms, " OR ", &match);
            rc = run_hits(w, match.buf, &f, limit, res, err);
            if (rc == 0 && res->hits.n)
                strvec_push(&res->notes, "no record contains every term; these match some of "
                                         "them, best first");
        }
    } else {
        rc = run_hits(w, NULL, &f, limit, res, err);
    }
    if (rc == 0 && res->hits.n == 0)
        rc = diagnose(w, res->terms.n ? match.buf : NULL, &f, res, err);
    strbuf_release(&match);
    return rc;
}

/* The id closest to a mistyped one, for the "did you mean" of show. */
static char *nearest_id(sqlite3 *db, const char *id)
{
    sqlite3_stmt *st = NULL;
    char *best = NULL;
    size_t best_d = (size_t)-1;
    if (sqlite3_prepare_v2(db, "SELECT id FROM rec", -1, &st, NULL) == SQLITE_OK)
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *cand = (const char *)sqlite3_column_text(st, 0);
            size_t d = wiki_edit_distance(id, cand);
            if (d < best_d) {
                best_d = d;
                free(best);
                best = aka_xstrdup(cand);
            }
        }
    sqlite3_finalize(st);
    return best;
}

int aka_wiki_show(struct aka_wiki *w, const char *id, struct aka_wiki_hit *hit, struct aka_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc;
    if (sqlite3_prepare_v2(
            w->db,
            "SELECT r.json, p.name, p.version, r.file, r.line, 0.0 FROM "
            "rec r JOIN plugin p ON p.idx = r.plugin WHERE r.id = ?1 OR r.rid = "
            "(SELECT rid FROM alias WHERE name = ?1) ORDER BY r.id = ?1 DESC LIMIT 1",
            -1, &st, NULL) != SQLITE_OK)
        return wiki_sql_fail(w->db, "show", err);
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        rc = wiki_hit_from_row(st, 0, hit, err);
    } else {
        char *near = nearest_id(w->db, id);
        rc = aka_err_set(err, AKA_EXIT_USAGE, "wiki: no record has id \"%s\"%s%s%s", id,
                         near ? " (did you mean \"" : "", near ? near : "", near ? "\"?)" : "");
        free(near);
    }
    sqlite3_finalize(st);
    return rc;
}
