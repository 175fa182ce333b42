/*
 * wiki.c — opening the wiki: discovery, the cache decision, pinning, and the
 * journal-citation check.
 *
 * The fast path of a query is: list the plugin locations, hash every plugin
 * file (the cache key), open the index read-only and find its key matches. No
 * record JSON is parsed on that path; validation happens once, when the key
 * changes and the index is rebuilt.
 */
#include "base/fs.h"
#include "wiki/wiki_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The index file for a plugin configuration: one file per set of plugin
 * roots, replaced in place when their content changes (no stale files pile up). */
static int cache_path(const struct aka_wiki_config *cfg, const struct aka_wiki_plugin_list *pl,
                      struct strbuf *out, struct aka_err *err)
{
    struct strbuf dir = STRBUF_INIT, roots = STRBUF_INIT;
    char hex[33];
    int rc = wiki_cache_dir(cfg, &dir, err);
    if (rc == 0)
        rc = aka_mkdir_p(dir.buf, 0755, err);
    for (size_t i = 0; i < pl->n; i++)
        strbuf_addf(&roots, "%s\n", pl->v[i].root);
    wiki_fast_hex(roots.buf, roots.len, hex);
    hex[16] = '\0';
    strbuf_reset(out);
    strbuf_addf(out, "%s/wiki-%s.sqlite", dir.buf, hex);
    strbuf_release(&dir);
    strbuf_release(&roots);
    return rc;
}

static void report_skipped(const struct aka_wiki_plugin_list *pl)
{
    for (size_t i = 0; i < pl->n; i++) {
        const struct aka_wiki_plugin *p = &pl->v[i];
        if (!p->skipped)
            continue;
        fprintf(stderr, "aka: wiki: skipped plugin %s (%s): %s\n", p->name ? p->name : p->root,
                aka_wiki_origin_name(p->origin), p->problems.n ? p->problems.v[0] : "unusable");
        if (p->problems.n > 1)
            fprintf(stderr, "aka: wiki:   ... and %zu more problem(s); see 'aka wiki check'\n",
                    p->problems.n - 1);
    }
}

static int rebuild(struct aka_wiki *w, const char *key, struct aka_err *err)
{
    struct wiki_record_list recs = {0};
    wiki_load_all(&w->plugins, &recs);
    int rc = wiki_index_build(w->cache_path, key, &w->plugins, &recs, err);
    wiki_record_list_release(&recs);
    w->rebuilt = true;
    return rc;
}

static int count_records(struct aka_wiki *w, struct aka_err *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(w->db, "SELECT CAST(v AS INTEGER) FROM meta WHERE k = 'records'", -1,
                           &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return wiki_sql_fail(w->db, "count records", err);
    }
    w->records = (size_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return 0;
}

static int open_index(const struct aka_wiki_config *cfg, struct aka_wiki *w, struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    char key[33];
    int rc = cache_path(cfg, &w->plugins, &path, err);
    w->cache_path = strbuf_detach(&path, NULL);
    if (rc < 0)
        return -1;
    wiki_cache_key(&w->plugins, key);
    if (!wiki_index_open(w->cache_path, key, &w->db)) {
        if (rebuild(w, key, err) < 0)
            return -1;
        if (!wiki_index_open(w->cache_path, key, &w->db))
            return aka_err_set(err, AKA_EXIT_FAILED, "%s: cannot open the index just built",
                               w->cache_path);
    }
    return wiki_index_read_plugins(w->db, &w->plugins, err) < 0 || count_records(w, err) < 0 ? -1
                                                                                             : 0;
}

int aka_wiki_open(const struct aka_wiki_config *cfg, struct aka_wiki **out, struct aka_err *err)
{
    struct aka_wiki *w = aka_xcalloc(1, sizeof(*w));
    *out = NULL;
    if (wiki_discover(cfg, &w->plugins, err) < 0 || open_index(cfg, w, err) < 0) {
        aka_wiki_close(w);
        return -1;
    }
    if (!cfg->quiet)
        report_skipped(&w->plugins);
    *out = w;
    return 0;
}

void aka_wiki_close(struct aka_wiki *w)
{
    if (!w)
        return;
    sqlite3_close(w->db);
    wiki_plugin_list_release(&w->plugins);
    free(w->cache_path);
    free(w);
}

/* sha256 of every plugin file: only pinning and listing pay for it. */
static void fingerprint(struct aka_wiki *w)
{
    if (w->fingerprinted)
        return;
    wiki_fill_fingerprints(&w->plugins);
    wiki_set_fingerprint(&w->plugins, w->fingerprint);
    w->fingerprinted = true;
}

const struct aka_wiki_plugin_list *aka_wiki_plugins(struct aka_wiki *w)
{
    fingerprint(w);
    return &w->plugins;
}

size_t aka_wiki_record_count(const struct aka_wiki *w)
{
    return w->records;
}

const char *aka_wiki_cache_path(const struct aka_wiki *w)
{
    return w->cache_path;
}

bool aka_wiki_cache_rebuilt(const struct aka_wiki *w)
{
    return w->rebuilt;
}

const char *aka_wiki_fingerprint(struct aka_wiki *w)
{
    fingerprint(w);
    return w->fingerprint;
}

json_t *aka_wiki_pin(struct aka_wiki *w)
{
    json_t *list = json_array();
    fingerprint(w);
    for (size_t i = 0; i < w->plugins.n; i++) {
        const struct aka_wiki_plugin *p = &w->plugins.v[i];
        if (!p->skipped)
            json_array_append_new(list,
                                  json_pack("{s:s, s:s, s:s, s:s}", "name", p->name, "version",
                                            p->version, "origin", aka_wiki_origin_name(p->origin),
                                            "fingerprint", p->fingerprint));
    }
    return json_pack("{s:s, s:o}", "fingerprint", w->fingerprint, "plugins", list);
}

/* The pinned entry for name, or NULL. */
static json_t *pinned_entry(const json_t *plugins, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach(plugins, i, e)
    {
        const char *n = json_string_value(json_object_get(e, "name"));
        if (n && strcmp(n, name) == 0)
            return e;
    }
    return NULL;
}

static int pin_diff(const struct aka_wiki *w, const json_t *plugins, struct aka_err *err)
{
    size_t i;
    json_t *e;
    for (i = 0; i < w->plugins.n; i++) {
        const struct aka_wiki_plugin *p = &w->plugins.v[i];
        json_t *pe = p->skipped ? NULL : pinned_entry(plugins, p->name);
        const char *fp = json_string_value(json_object_get(pe, "fingerprint"));
        if (!p->skipped && !pe)
            return aka_err_set(err, AKA_EXIT_FAILED,
                               "wiki: plugin %s (%s) was added after the "
                               "plugin set was pinned",
                               p->name, p->root);
        if (pe && (!fp || strcmp(fp, p->fingerprint)))
            return aka_err_set(err, AKA_EXIT_FAILED,
                               "wiki: plugin %s (%s) changed since it was "
                               "pinned (fingerprint %.12s, pinned %.12s)",
                               p->name, p->root, p->fingerprint, fp ? fp : "none");
    }
    json_array_foreach(plugins, i, e)
    {
        const char *n = json_string_value(json_object_get(e, "name"));
        bool found = false;
        for (size_t j = 0; n && j < w->plugins.n; j++)
            found |= !w->plugins.v[j].skipped && strcmp(w->plugins.v[j].name, n) == 0;
        if (!found)
            return aka_err_set(err, AKA_EXIT_FAILED,
                               "wiki: pinned plugin %s is missing or "
                               "no longer loads",
                               n ? n : "(unnamed)");
    }
    return 0;
}

int aka_wiki_pin_verify(struct aka_wiki *w, const json_t *pin, struct aka_err *err)
{
    fingerprint(w);
    const char *fp = json_string_value(json_object_get(pin, "fingerprint"));
    json_t *plugins = json_object_get(pin, "plugins");
    if (!fp || !json_is_array(plugins))
        return aka_err_set(err, AKA_EXIT_USAGE, "wiki pin: expected {fingerprint, plugins[]}");
    if (pin_diff(w, plugins, err) < 0)
        return -1;
    if (strcmp(fp, w->fingerprint) != 0)
        return aka_err_set(err, AKA_EXIT_FAILED,
                           "wiki: plugin set fingerprint %.12s differs "
                           "from the pinned %.12s (order or versions changed)",
                           w->fingerprint, fp);
    return 0;
}

int aka_wiki_pin_verify_kept(struct aka_wiki *w, const json_t *pin, struct strvec *added,
                             struct aka_err *err)
{
    json_t *plugins = json_object_get(pin, "plugins"), *e;
    size_t i;
    fingerprint(w);
    if (!json_is_array(plugins))
        return aka_err_set(err, AKA_EXIT_USAGE, "wiki pin: expected {fingerprint, plugins[]}");
    json_array_foreach(plugins, i, e)
    {
        const char *n = json_string_value(json_object_get(e, "name"));
        const char *fp = json_string_value(json_object_get(e, "fingerprint"));
        const struct aka_wiki_plugin *p = NULL;
        for (size_t j = 0; n && j < w->plugins.n && !p; j++)
            if (!w->plugins.v[j].skipped && strcmp(w->plugins.v[j].name, n) == 0)
                p = &w->plugins.v[j];
        if (!p)
            return aka_err_set(err, AKA_EXIT_FAILED,
                               "wiki: pinned plugin %s is missing or no longer loads",
                               n ? n : "(unnamed)");
        if (!fp || strcmp(fp, p->fingerprint) != 0)
            return aka_err_set(err, AKA_EXIT_FAILED,
                               "wiki: plugin %s (%s) changed since it was pinned (fingerprint "
                               "%.12s, pinned %.12s)",
                               p->name, p->root, p->fingerprint, fp ? fp : "none");
    }
    for (i = 0; i < w->plugins.n; i++)
        if (!w->plugins.v[i].skipped && !pinned_entry(plugins, w->plugins.v[i].name))
            strvec_push(added, w->plugins.v[i].name);
    return 0;
}

int aka_wiki_open_pinned(const struct aka_wiki_config *cfg, const json_t *pin,
                         struct aka_wiki **out, struct aka_err *err)
{
    if (aka_wiki_open(cfg, out, err) < 0)
        return -1;
    if (aka_wiki_pin_verify(*out, pin, err) < 0) {
        aka_wiki_close(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

int aka_wiki_check_refs(struct aka_wiki *w, const char *const *ids, size_t n,
                        struct strvec *missing, struct aka_err *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(w->db,
                           "SELECT 1 FROM rec WHERE id = ?1 UNION ALL SELECT 1 FROM alias WHERE "
                           "name = ?1",
                           -1, &st, NULL) != SQLITE_OK)
        return wiki_sql_fail(w->db, "check refs", err);
    for (size_t i = 0; i < n; i++) {
        sqlite3_bind_text(st, 1, ids[i] ? ids[i] : "", -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_ROW)
            strvec_push(missing, ids[i] ? ids[i] : "(null)");
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return 0;
}
