/*
 * index.c — the SQLite index: FTS5 over normalised text plus a plain table of
 * scope columns for the structured filters.
 *
 * Built in memory, serialised, and written with aka_write_file_atomic (temp
 * file, fsync, rename): a reader never sees a half-built index, and two
 * processes that rebuild at once each rename a complete file. The meta row
 * "key" ties the file to the content it was built from; a missing, stale or
 * unreadable file is simply rebuilt — the cache is never a source of truth.
 */
#include "base/fs.h"
#include "wiki/wiki_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const schema_sql =
    "PRAGMA page_size=4096;"
    "CREATE TABLE meta(k TEXT PRIMARY KEY, v TEXT NOT NULL);"
    "CREATE TABLE plugin(idx INTEGER PRIMARY KEY, name TEXT, version TEXT, origin TEXT,"
    " root TEXT, content_key TEXT, skipped INTEGER, problems TEXT, records INTEGER);"
    "CREATE TABLE rec(rid INTEGER PRIMARY KEY, plugin INTEGER, id TEXT UNIQUE NOT NULL,"
    " schema TEXT, kind TEXT, vendor TEXT, arch TEXT, chip TEXT, framework TEXT, family TEXT,"
    " file TEXT, line INTEGER, json TEXT NOT NULL);"
    "CREATE TABLE related(rid INTEGER, target TEXT);"
    "CREATE TABLE alias(name TEXT PRIMARY KEY, rid INTEGER NOT NULL);"
    /* Column order matters: bm25() weights are positional (query.c). */
    "CREATE VIRTUAL TABLE fts USING fts5(title, tags, body, scope,"
    " tokenize='porter unicode61');";

int wiki_sql_fail(sqlite3 *db, const char *what, struct aka_err *err)
{
    return aka_err_set(err, AKA_EXIT_FAILED, "wiki index: %s: %s", what,
                       db ? sqlite3_errmsg(db) : "out of memory");
}

static int exec(sqlite3 *db, const char *sql, struct aka_err *err)
{
    return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : wiki_sql_fail(db, sql, err);
}

static void bind_text(sqlite3_stmt *st, int col, const char *s)
{
    sqlite3_bind_text(st, col, s ? s : "", -1, SQLITE_STATIC);
}

static int step_done(sqlite3 *db, sqlite3_stmt *st, const char *what, struct aka_err *err)
{
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : wiki_sql_fail(db, what, err);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc;
}

static int put_plugins(sqlite3 *db, const struct aka_wiki_plugin_list *pl, struct aka_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "INSERT INTO plugin VALUES(?,?,?,?,?,?,?,?,?)", -1, &st,
                                NULL) == SQLITE_OK
                 ? 0
                 : wiki_sql_fail(db, "prepare plugin", err);
    for (size_t i = 0; rc == 0 && i < pl->n; i++) {
        const struct aka_wiki_plugin *p = &pl->v[i];
        struct strbuf probs = STRBUF_INIT;
        for (size_t j = 0; j < p->problems.n; j++)
            strbuf_addf(&probs, "%s%s", j ? "\n" : "", p->problems.v[j]);
        sqlite3_bind_int64(st, 1, (sqlite3_int64)i);
        bind_text(st, 2, p->name);
        bind_text(st, 3, p->version);
        bind_text(st, 4, aka_wiki_origin_name(p->origin));
        bind_text(st, 5, p->root);
        bind_text(st, 6, p->content_key);
        sqlite3_bind_int(st, 7, p->skipped);
        bind_text(st, 8, probs.buf);
        sqlite3_bind_int64(st, 9, (sqlite3_int64)p->record_count);
        rc = step_done(db, st, "insert plugin", err);
        strbuf_release(&probs);
    }
    sqlite3_finalize(st);
    return rc;
}

static int put_record(sqlite3 *db, sqlite3_stmt *rec, sqlite3_stmt *fts, sqlite3_stmt *rel,
                      const struct wiki_record *r, sqlite3_int64 rid, struct aka_err *err)
{
    const char *cols[] = {r->id,   r->schema,    r->kind,   r->vendor, r->arch,
                          r->chip, r->framework, r->family, r->file};
    sqlite3_bind_int64(rec, 1, rid);
    sqlite3_bind_int64(rec, 2, (sqlite3_int64)r->plugin);
    for (int c = 0; c < 9; c++)
        bind_text(rec, 3 + c, cols[c]);
    sqlite3_bind_int64(rec, 12, r->line);
    bind_text(rec, 13, r->json);
    if (step_done(db, rec, "insert record", err) < 0)
        return -1;
    sqlite3_bind_int64(fts, 1, rid);
    bind_text(fts, 2, r->title);
    bind_text(fts, 3, r->tags);
    bind_text(fts, 4, r->body);
    bind_text(fts, 5, r->scope);
    if (step_done(db, fts, "insert fts", err) < 0)
        return -1;
    for (size_t i = 0; i < r->related.n; i++) {
        sqlite3_bind_int64(rel, 1, rid);
        bind_text(rel, 2, r->related.v[i]);
        if (step_done(db, rel, "insert related", err) < 0)
            return -1;
    }
    return 0;
}

/* Upstream ids the import mapped (wiki_impl.h: alias) still find their record. */
static int put_aliases(sqlite3 *db, const struct wiki_record_list *recs, struct aka_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO alias VALUES(?,?)", -1, &st, NULL) ==
                     SQLITE_OK
                 ? 0
                 : wiki_sql_fail(db, "prepare alias", err);
    for (size_t i = 0; rc == 0 && i < recs->n; i++) {
        if (!recs->v[i].alias)
            continue;
        bind_text(st, 1, recs->v[i].alias);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)i + 1);
        rc = step_done(db, st, "insert alias", err);
    }
    sqlite3_finalize(st);
    return rc;
}

static int put_records(sqlite3 *db, const struct wiki_record_list *recs, struct aka_err *err)
{
    sqlite3_stmt *rec = NULL, *fts = NULL, *rel = NULL;
    int rc = 0;
    if (sqlite3_prepare_v2(db, "INSERT INTO rec VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &rec,
                           NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO fts(rowid,title,tags,body,scope) VALUES(?,?,?,?,?)", -1,
                           &fts, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO related VALUES(?,?)", -1, &rel, NULL) != SQLITE_OK)
        rc = wiki_sql_fail(db, "prepare record", err);
    for (size_t i = 0; rc == 0 && i < recs->n; i++)
        rc = put_record(db, rec, fts, rel, &recs->v[i], (sqlite3_int64)i + 1, err);
    sqlite3_finalize(rec);
    sqlite3_finalize(fts);
    sqlite3_finalize(rel);
    return rc;
}

/* meta: the key this index was built for, and the record count (so that a
 * query need not scan the record table to report it). */
static int put_meta(sqlite3 *db, const char *key, size_t records, struct aka_err *err)
{
    sqlite3_stmt *st = NULL;
    char count[32];
    snprintf(count, sizeof(count), "%zu", records);
    if (sqlite3_prepare_v2(db, "INSERT INTO meta VALUES('key', ?), ('records', ?)", -1, &st,
                           NULL) != SQLITE_OK)
        return wiki_sql_fail(db, "prepare meta", err);
    bind_text(st, 1, key);
    bind_text(st, 2, count);
    int rc = step_done(db, st, "insert meta", err);
    sqlite3_finalize(st);
    return rc;
}

/* Serialise the in-memory database and replace path with it atomically. */
static int write_db(sqlite3 *db, const char *path, struct aka_err *err)
{
    sqlite3_int64 size = 0;
    unsigned char *bytes = sqlite3_serialize(db, "main", &size, 0);
    if (!bytes)
        return wiki_sql_fail(db, "serialize", err);
    int rc = aka_write_file_atomic(path, bytes, (size_t)size, 0644, err);
    sqlite3_free(bytes);
    return rc;
}

int wiki_index_build(const char *path, const char *key, const struct aka_wiki_plugin_list *pl,
                     const struct wiki_record_list *recs, struct aka_err *err)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open(":memory:", &db) == SQLITE_OK ? 0 : wiki_sql_fail(db, "open", err);
    if (rc == 0)
        rc = exec(db, schema_sql, err);
    if (rc == 0)
        rc = exec(db, "BEGIN", err);
    if (rc == 0)
        rc = put_plugins(db, pl, err);
    if (rc == 0)
        rc = put_records(db, recs, err);
    if (rc == 0)
        rc = put_aliases(db, recs, err);
    if (rc == 0)
        rc = put_meta(db, key, recs->n, err);
    if (rc == 0)
        rc = exec(db, "COMMIT; INSERT INTO fts(fts) VALUES('optimize');", err);
    if (rc == 0)
        rc = write_db(db, path, err);
    sqlite3_close(db);
    return rc;
}

int wiki_index_open(const char *path, const char *key, sqlite3 **db)
{
    sqlite3_stmt *st = NULL;
    int valid = 0;
    *db = NULL;
    if (!aka_is_file(path))
        return 0;
    if (sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(*db, "SELECT v FROM meta WHERE k='key'", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *v = sqlite3_column_text(st, 0);
        valid = v && strcmp((const char *)v, key) == 0;
    }
    sqlite3_finalize(st);
    if (!valid) {
        sqlite3_close(*db);
        *db = NULL;
    }
    return valid;
}

/* Apply one plugin row of the index to the matching discovered plugin. */
static void apply_plugin_row(sqlite3_stmt *st, struct aka_wiki_plugin_list *pl)
{
    size_t idx = (size_t)sqlite3_column_int64(st, 0);
    if (idx >= pl->n)
        return;
    struct aka_wiki_plugin *p = &pl->v[idx];
    const char *probs = (const char *)sqlite3_column_text(st, 2);
    p->skipped = sqlite3_column_int(st, 1) != 0;
    p->record_count = (size_t)sqlite3_column_int64(st, 3);
    strvec_clear(&p->problems);
    for (const char *s = probs; s && *s;) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        char *line = aka_xstrndup(s, len);
        strvec_push(&p->problems, line);
        free(line);
        s = nl ? nl + 1 : NULL;
    }
}

int wiki_index_read_plugins(sqlite3 *db, struct aka_wiki_plugin_list *pl, struct aka_err *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT idx, skipped, problems, records FROM plugin", -1, &st,
                           NULL) != SQLITE_OK)
        return wiki_sql_fail(db, "read plugins", err);
    while (sqlite3_step(st) == SQLITE_ROW)
        apply_plugin_row(st, pl);
    sqlite3_finalize(st);
    return 0;
}
