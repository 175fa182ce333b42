/*
 * json.h — reading and writing JSON through jansson with errors a person can act on.
 *
 * Syntax errors come back as "FILE:LINE:COLUMN: invalid JSON: REASON". Field
 * errors come back as "FILE: FIELD: expected ...; got ..." where FIELD is a
 * JSON-path-like name ("inputs[2].dtype", "benchmark_contract.distributed_evaluation").
 * jansson does not keep positions of values after parsing, so field errors name
 * the field, not the line; the field path is unambiguous within one file.
 *
 * Documents are loaded with duplicate keys rejected: a second "world_size" in
 * the same object is a contradiction, not a preference.
 */
#ifndef AKA_BASE_JSON_H
#define AKA_BASE_JSON_H

#include "base/error.h"
#include "base/strbuf.h"
#include "base/vec.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Where a value came from, for error messages. */
struct jctx {
    const char *file;    /* the file (or a label such as "RESULT_JSON line") */
    struct aka_err *err; /* where errors go; every failing call fills it */
};

/* Load a file / a buffer; exit code 2 on syntax error or missing file. */
int aka_json_load_file(const char *path, json_t **out, struct aka_err *err);
int aka_json_load_buf(const char *label, const char *buf, size_t len, json_t **out,
                      struct aka_err *err);

/*
 * Call fn once per non-blank line of a JSON Lines file. `lineno` is 1-based.
 * Each line must be a JSON object; errors read "FILE:LINE:COLUMN: ...".
 * fn returns 0 to continue, -1 (with err set) to stop.
 */
typedef int (*aka_jsonl_fn)(json_t *obj, size_t lineno, void *data, struct aka_err *err);
int aka_jsonl_foreach(const char *path, aka_jsonl_fn fn, void *data, struct aka_err *err);

/* Append rec as one compact line to a JSONL ledger: one write(2) with O_APPEND,
 * so concurrent writers (an agent's `aka eval`s, reviewers, trace markers) never
 * interleave. durable: fsync the file, and its directory when the file is new.
 * Errors name the file and what failed; code 75 (an environment failure). */
int aka_jsonl_append(const char *path, const json_t *rec, bool durable, struct aka_err *err);

/* "parent.key" (or "key" at the root) and "parent[i]", written into out. */
void jpath_key(struct strbuf *out, const char *parent, const char *key);
void jpath_index(struct strbuf *out, const char *parent, size_t index);

/* A short name of a value's JSON type for "got ..." phrases. */
const char *jtype_name(const json_t *v);

/* Report "FILE: PATH: MESSAGE" with code 2. Always returns -1. */
int jfail(const struct jctx *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Typed field getters. `path` names obj itself ("" for the root). A missing
 * optional field leaves *out untouched and returns 0; a missing required field
 * or a value of the wrong type is an error (-1).
 */
int jget_str(const struct jctx *c, json_t *obj, const char *path, const char *key, bool required,
             const char **out);
int jget_int(const struct jctx *c, json_t *obj, const char *path, const char *key, bool required,
             long long *out);
int jget_num(const struct jctx *c, json_t *obj, const char *path, const char *key, bool required,
             double *out);
int jget_bool(const struct jctx *c, json_t *obj, const char *path, const char *key, bool required,
              bool *out);
int jget_obj(const struct jctx *c, json_t *obj, const char *path, const char *key, bool required,
             json_t **out);
int jget_arr(const struct jctx *c, json_t *obj, const char *path, const char *key, bool required,
             json_t **out);

/* The value itself must be an object / array (e.g. the document root). */
int jexpect_obj(const struct jctx *c, json_t *v, const char *path);
int jexpect_arr(const struct jctx *c, json_t *v, const char *path);

/* Reject keys of obj not in the NULL-terminated allowed list (typo guard). */
int jcheck_keys(const struct jctx *c, json_t *obj, const char *path, const char *const *allowed);

/* Index of s in the NULL-terminated list, or -1. */
int jenum_index(const char *s, const char *const *choices);
/* Require obj.key to be one of choices; *out_index receives its index. */
int jget_enum(const struct jctx *c, json_t *obj, const char *path, const char *key, bool required,
              const char *const *choices, int *out_index);

/*
 * Serialize with sorted keys and 2-space indent (stable bytes for Git) and
 * replace path atomically. Errors name the file.
 */
int aka_json_write_file(const char *path, const json_t *v, struct aka_err *err);
/* A JSON array of the strings of sv (NULL: empty); invalid UTF-8 entries are skipped. */
json_t *aka_json_string_array(const struct strvec *sv);
/* Bytes a program wrote (stdout, stderr) as a JSON string, every line and control
 * character kept (JSON escapes them), invalid UTF-8 replaced by U+FFFD. */
json_t *aka_json_text(const char *buf, size_t len);

/* Compact, sorted-keys serialization into sb (no trailing newline). */
void aka_json_dump_compact(const json_t *v, struct strbuf *sb);

#endif
