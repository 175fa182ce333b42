/*
 * wiki_impl.h — private to src/wiki/: the pieces the wiki's .c files share.
 * Nothing outside the module includes this; the public API is wiki.h.
 */
#ifndef AKA_WIKI_IMPL_H
#define AKA_WIKI_IMPL_H

#include "wiki/wiki.h"

#include <sqlite3.h>

/* Bump when the index layout or the validator changes: old caches rebuild. */
#define WIKI_INDEX_FORMAT "aka-wiki-index/5"
/* Problems kept per plugin: enough to fix a file, not a flood. */
#define WIKI_MAX_PROBLEMS 64

/* ---- vocab.c: closed vocabularies, aliases, spelling folding ---- */

enum wiki_axis { AX_VENDOR, AX_ARCH, AX_CHIP, AX_FRAMEWORK, AX_FAMILY, AX_KIND, AX_COUNT };

const char *wiki_axis_flag(enum wiki_axis ax);  /* "--vendor" ... */
const char *wiki_axis_field(enum wiki_axis ax); /* "vendor" ... */
/* Canonical value for a spelling (exact, folded or alias); NULL if unknown. */
const char *wiki_canon(enum wiki_axis ax, const char *value);
/* True when value is already a canonical value of the axis. */
bool wiki_is_canon(enum wiki_axis ax, const char *value);
/* Nearest canonical value by edit distance over canonical names and aliases. */
const char *wiki_suggest(enum wiki_axis ax, const char *value);
/* Canonical values joined with ", " into out. */
void wiki_axis_list(enum wiki_axis ax, struct strbuf *out);
const char *wiki_arch_vendor(const char *arch); /* canonical arch -> vendor */
const char *wiki_chip_arch(const char *chip);   /* canonical chip -> arch */
/* Extra search words for a scope value (e.g. hopper -> "sm90 h100 h200"). */
const char *wiki_scope_words(enum wiki_axis ax, const char *value);
bool wiki_framework_fits(const char *vendor, const char *framework);
size_t wiki_edit_distance(const char *a, const char *b);
/* Lower-case and drop everything but [a-z0-9]. */
void wiki_fold(const char *in, struct strbuf *out);

/* ---- text.c: one normalisation for indexed text and query text ---- */

/* Normalised tokens, space-separated ("CuTe-DSL rms norm" -> "cutedsl rmsnorm"). */
void wiki_norm_text(const char *in, struct strbuf *out);
/* Query terms: normalised, stop words and duplicates removed. */
void wiki_query_terms(const char *in, struct strvec *terms);

/* ---- record.c: validation of record files ---- */

struct wiki_record {
    char *id, *schema, *kind, *vendor, *arch, *chip, *framework, *family;
    char *title, *tags, *body, *scope; /* index text (normalised) */
    char *json;                        /* compact JSON of the record as written */
    char *alias; /* upstream.id when the import mapped it to another id, else NULL */
    char *file;
    long line;
    struct strvec related;
    bool has_source;
    size_t plugin; /* index into the plugin list */
};

struct wiki_record_list {
    struct wiki_record *v;
    size_t n, alloc;
};

/* Parse and validate; valid records are appended. Returns problems added. */
size_t wiki_parse_records(const char *file, const char *text, size_t len,
                          struct wiki_record_list *out, struct strvec *problems);
void wiki_record_release(struct wiki_record *r);
void wiki_record_list_release(struct wiki_record_list *l);
/* 1-based line of `"id": "<id>"` at or after *offset (advanced past it); 0 if absent. */
long wiki_line_of_id(const char *text, size_t len, const char *id, size_t *offset);

/* ---- plugin.c: discovery, manifests, fingerprints, loading ---- */

/* Every candidate plugin directory with its manifest parsed and fingerprint taken. */
int wiki_discover(const struct aka_wiki_config *cfg, struct aka_wiki_plugin_list *pl,
                  struct aka_err *err);
/* Load and validate the records of every plugin not yet skipped (whole or nothing). */
void wiki_load_all(struct aka_wiki_plugin_list *pl, struct wiki_record_list *recs);
void wiki_plugin_list_release(struct aka_wiki_plugin_list *pl);
void wiki_plugin_skip(struct aka_wiki_plugin *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/*
 * Hash a plugin's files (hidden names skipped, sorted by path). content_key
 * (33 bytes) always gets the fast cache key; sha (65 bytes), when not NULL,
 * gets the sha256 fingerprint over "sha256(content) relpath
" lines.
 */
int wiki_hash_tree(const char *root, char *content_key, char *sha, struct aka_err *err);
/* Fill every plugin's sha256 fingerprint if not yet done. */
void wiki_fill_fingerprints(struct aka_wiki_plugin_list *pl);
/* Set fingerprint over the loaded plugins; cache key over all discovered ones. */
void wiki_set_fingerprint(const struct aka_wiki_plugin_list *pl, char out[AKA_SHA256_HEX_LEN + 1]);
void wiki_cache_key(const struct aka_wiki_plugin_list *pl, char out[33]);
/* The fast (non-cryptographic) 128-bit hash of a buffer, as 32 hex digits. */
void wiki_fast_hex(const void *data, size_t len, char out[33]);
/* Cache directory from the config or the environment. */
int wiki_cache_dir(const struct aka_wiki_config *cfg, struct strbuf *out, struct aka_err *err);

/* ---- index.c: the SQLite index ---- */

int wiki_index_build(const char *path, const char *key, const struct aka_wiki_plugin_list *pl,
                     const struct wiki_record_list *recs, struct aka_err *err);
/* Open read-only; 1 when valid for key, 0 when missing/stale/corrupt (db closed). */
int wiki_index_open(const char *path, const char *key, sqlite3 **db);
/* Bring skip status, problems and counts of the index's plugins into pl. */
int wiki_index_read_plugins(sqlite3 *db, struct aka_wiki_plugin_list *pl, struct aka_err *err);
int wiki_sql_fail(sqlite3 *db, const char *what, struct aka_err *err);

/* ---- import_map.c: one upstream record -> our records (appended to out) ---- */

int wiki_import_kernel(const json_t *up, const char *rel, json_t *out, struct strvec *notes);
int wiki_import_hardware(const json_t *up, const char *rel, json_t *out, struct strvec *notes);

/* ---- the opened wiki (wiki.c) ---- */

struct aka_wiki {
    struct aka_wiki_plugin_list plugins;
    sqlite3 *db;
    char *cache_path;
    bool rebuilt;
    bool fingerprinted; /* sha256 fingerprints computed (lazily) */
    size_t records;
    char fingerprint[AKA_SHA256_HEX_LEN + 1];
};

/* query.c helpers shared with show */
int wiki_hit_from_row(sqlite3_stmt *st, int first_col, struct aka_wiki_hit *hit,
                      struct aka_err *err);

#endif
