/*
 * json.c — jansson with file/line/column and field-path errors (see json.h).
 */
#include "base/json.h"
#include "base/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JSON_LOAD_FLAGS JSON_REJECT_DUPLICATES

static int load_failed(const char *label, const json_error_t *je, struct aka_err *err)
{
    return aka_err_set(err, AKA_EXIT_USAGE, "%s:%d:%d: invalid JSON: %s", label, je->line,
                       je->column, je->text);
}

int aka_json_load_buf(const char *label, const char *buf, size_t len, json_t **out,
                      struct aka_err *err)
{
    json_error_t je;
    *out = json_loadb(buf, len, JSON_LOAD_FLAGS, &je);
    if (!*out)
        return load_failed(label, &je, err);
    return 0;
}

int aka_json_load_file(const char *path, json_t **out, struct aka_err *err)
{
    struct strbuf text = STRBUF_INIT;
    int rc;

    *out = NULL;
    if (aka_read_file(path, &text, AKA_READ_LIMIT_DEFAULT, err) < 0)
        return -1;
    rc = aka_json_load_buf(path, text.buf, text.len, out, err);
    strbuf_release(&text);
    return rc;
}

int aka_jsonl_foreach(const char *path, aka_jsonl_fn fn, void *data, struct aka_err *err)
{
    struct strbuf text = STRBUF_INIT;
    size_t lineno = 0;
    int rc = 0;

    if (aka_read_file(path, &text, AKA_READ_LIMIT_DEFAULT, err) < 0)
        return -1;
    /* memchr over text.len, not strchr: a NUL byte must reach the parser and be
     * reported, not silently end the file. */
    const char *end = text.buf + text.len;
    for (const char *line = text.buf; line && line < end && rc == 0;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t len = nl ? (size_t)(nl - line) : (size_t)(end - line);
        size_t i = 0;
        lineno++;
        while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
            i++;
        if (i < len) {
            json_error_t je;
            json_t *obj = json_loadb(line, len, JSON_LOAD_FLAGS, &je);
            if (!obj) {
                rc = aka_err_set(err, AKA_EXIT_USAGE, "%s:%zu:%d: invalid JSON: %s", path, lineno,
                                 je.column, je.text);
            } else if (!json_is_object(obj)) {
                rc = aka_err_set(err, AKA_EXIT_USAGE,
                                 "%s:%zu: expected a JSON object on each line; got %s", path,
                                 lineno, jtype_name(obj));
            } else {
                rc = fn(obj, lineno, data, err);
            }
            json_decref(obj);
        }
        line = nl ? nl + 1 : NULL;
    }
    strbuf_release(&text);
    return rc;
}

void jpath_key(struct strbuf *out, const char *parent, const char *key)
{
    strbuf_reset(out);
    if (parent && *parent)
        strbuf_addf(out, "%s.%s", parent, key);
    else
        strbuf_addstr(out, key);
}

void jpath_index(struct strbuf *out, const char *parent, size_t index)
{
    strbuf_reset(out);
    strbuf_addf(out, "%s[%zu]", parent ? parent : "", index);
}

const char *jtype_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    }
    return "an unknown value";
}

int jfail(const struct jctx *c, const char *path, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (path && *path)
        return aka_err_set(c->err, AKA_EXIT_USAGE, "%s: %s: %s", c->file, path, msg);
    return aka_err_set(c->err, AKA_EXIT_USAGE, "%s: %s", c->file, msg);
}

/*
 * Look up obj.key. Returns 1 when present (in *v), 0 when absent and optional,
 * -1 when absent and required. A JSON null counts as absent: upstream files use
 * null for "not set".
 */
static int lookup(const struct jctx *c, json_t *obj, const char *path, const char *key,
                  bool required, json_t **v)
{
    *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    if (*v && !json_is_null(*v))
        return 1;
    if (!required)
        return 0;
    struct strbuf p = STRBUF_INIT;
    jpath_key(&p, path, key);
    jfail(c, p.buf, "required field is missing");
    strbuf_release(&p);
    return -1;
}

static int wrong_type(const struct jctx *c, const char *path, const char *key, const char *want,
                      const json_t *got)
{
    struct strbuf p = STRBUF_INIT;
    jpath_key(&p, path, key);
    jfail(c, p.buf, "expected %s; got %s", want, jtype_name(got));
    strbuf_release(&p);
    return -1;
}

int jget_str(const struct jctx *c, json_t *obj, const char *path, const char *key, bool required,
             const char **out)
{
    json_t *v;
    int r = lookup(c, obj, path, key, required, &v);
    if (r <= 0)
        return r;
    if (!json_is_string(v))
        return wrong_type(c, path, key, "a string", v);
    *out = json_string_value(v);
    return 0;
}

int jget_int(const struct jctx *c, json_t *obj, const char *path, const char *key, bool required,
             long long *out)
{
    json_t *v;
    int r = lookup(c, obj, path, key, required, &v);
    if (r <= 0)
        return r;
    if (!json_is_integer(v))
        return wrong_type(c, path, key, "an integer", v);
    *out = json_integer_value(v);
    return 0;
}

int jget_num(const struct jctx *c, json_t *obj, const char *path, const char *key, bool required,
             double *out)
{
    json_t *v;
    int r = lookup(c, obj, path, key, required, &v);
    if (r <= 0)
        return r;
    if (!json_is_number(v))
        return wrong_type(c, path, key, "a number", v);
    *out = json_number_value(v);
    return 0;
}

int jget_bool(const struct jctx *c, json_t *obj, const char *path, const char *key, bool required,
              bool *out)
{
    json_t *v;
    int r = lookup(c, obj, path, key, required, &v);
    if (r <= 0)
        return r;
    if (!json_is_boolean(v))
        return wrong_type(c, path, key, "true or false", v);
    *out = json_is_true(v);
    return 0;
}

int jget_obj(const struct jctx *c, json_t *obj, const char *path, const char *key, bool required,
             json_t **out)
{
    json_t *v;
    int r = lookup(c, obj, path, key, required, &v);
    if (r <= 0)
        return r;
    if (!json_is_object(v))
        return wrong_type(c, path, key, "an object", v);
    *out = v;
    return 0;
}

int jget_arr(const struct jctx *c, json_t *obj, const char *path, const char *key, bool required,
             json_t **out)
{
    json_t *v;
    int r = lookup(c, obj, path, key, required, &v);
    if (r <= 0)
        return r;
    if (!json_is_array(v))
        return wrong_type(c, path, key, "an array", v);
    *out = v;
    return 0;
}

int jexpect_obj(const struct jctx *c, json_t *v, const char *path)
{
    if (json_is_object(v))
        return 0;
    return jfail(c, path, "expected an object; got %s", jtype_name(v));
}

int jexpect_arr(const struct jctx *c, json_t *v, const char *path)
{
    if (json_is_array(v))
        return 0;
    return jfail(c, path, "expected an array; got %s", jtype_name(v));
}

static void join_choices(struct strbuf *sb, const char *const *choices)
{
    for (size_t i = 0; choices[i]; i++)
        strbuf_addf(sb, "%s%s", i ? ", " : "", choices[i]);
}

int jcheck_keys(const struct jctx *c, json_t *obj, const char *path, const char *const *allowed)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        if (jenum_index(key, allowed) >= 0)
            continue;
        struct strbuf p = STRBUF_INIT, list = STRBUF_INIT;
        jpath_key(&p, path, key);
        join_choices(&list, allowed);
        jfail(c, p.buf, "unknown field (known fields: %s)", list.buf);
        strbuf_release(&p);
        strbuf_release(&list);
        return -1;
    }
    return 0;
}

int jenum_index(const char *s, const char *const *choices)
{
    for (int i = 0; choices[i]; i++)
        if (strcmp(s, choices[i]) == 0)
            return i;
    return -1;
}

int jget_enum(const struct jctx *c, json_t *obj, const char *path, const char *key, bool required,
              const char *const *choices, int *out_index)
{
    const char *s = NULL;
    if (jget_str(c, obj, path, key, required, &s) < 0)
        return -1;
    if (!s)
        return 0;
    int idx = jenum_index(s, choices);
    if (idx < 0) {
        struct strbuf p = STRBUF_INIT, list = STRBUF_INIT;
        jpath_key(&p, path, key);
        join_choices(&list, choices);
        jfail(c, p.buf, "expected one of %s; got \"%s\"", list.buf, s);
        strbuf_release(&p);
        strbuf_release(&list);
        return -1;
    }
    *out_index = idx;
    return 0;
}

json_t *aka_json_string_array(const struct strvec *sv)
{
    json_t *a = json_array();
    for (size_t i = 0; sv && i < sv->n; i++)
        json_array_append_new(a, json_string(sv->v[i]));
    return a;
}

json_t *aka_json_text(const char *buf, size_t len)
{
    struct strbuf clean = STRBUF_INIT;
    const unsigned char *p = (const unsigned char *)buf;
    for (size_t i = 0; i < len;) {
        size_t k = aka_utf8_len(p + i, len - i);
        if (k == 0) {
            strbuf_addstr(&clean, "\xEF\xBF\xBD");
            i++;
        } else {
            strbuf_add(&clean, p + i, k);
            i += k;
        }
    }
    json_t *s = json_stringn(clean.buf, clean.len);
    strbuf_release(&clean);
    return s ? s : json_string("");
}

static int dump_cb(const char *buf, size_t size, void *data)
{
    strbuf_add(data, buf, size);
    return 0;
}

void aka_json_dump_compact(const json_t *v, struct strbuf *sb)
{
    json_dump_callback(v, dump_cb, sb, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY);
}

int aka_json_write_file(const char *path, const json_t *v, struct aka_err *err)
{
    struct strbuf sb = STRBUF_INIT;
    int rc;
    json_dump_callback(v, dump_cb, &sb, JSON_SORT_KEYS | JSON_INDENT(2) | JSON_ENCODE_ANY);
    strbuf_addch(&sb, '\n');
    rc = aka_write_file_atomic(path, sb.buf, sb.len, 0644, err);
    strbuf_release(&sb);
    return rc;
}

/* The directory part of path ("." when it has none). */
static void parent_dir(const char *path, struct strbuf *dir)
{
    const char *slash = strrchr(path, '/');
    strbuf_reset(dir);
    if (!slash)
        strbuf_addch(dir, '.');
    else
        strbuf_add(dir, path, slash == path ? 1 : (size_t)(slash - path));
}

int aka_jsonl_append(const char *path, const json_t *rec, bool durable, struct aka_err *err)
{
    struct strbuf line = STRBUF_INIT, dir = STRBUF_INIT;
    bool existed = aka_exists(path);
    int rc = 0;
    aka_json_dump_compact(rec, &line);
    strbuf_addch(&line, '\n');
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0 || aka_write_all(fd, line.buf, line.len) < 0 || (durable && fsync(fd) < 0))
        rc =
            aka_err_set(err, AKA_EXIT_ENV, "%s: cannot append a record: %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    parent_dir(path, &dir);
    if (rc == 0 && durable && !existed)
        rc = aka_fsync_dir(dir.buf, err);
    strbuf_release(&line);
    strbuf_release(&dir);
    return rc;
}
