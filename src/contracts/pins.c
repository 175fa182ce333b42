/*
 * pins.c — runtime pins (DESIGN §4.3): the evaluator runtime version and the
 * requirement lines every typed request carries, and the replay check.
 *
 * Why so strict: a typed request is evidence. If a recorded request could be
 * replayed against another evaluator runtime or another set of packages, its
 * result would no longer say anything about the request that was recorded.
 * So every difference between "then" and "now" is an error, in both
 * directions: a pin that disappeared, a pin that changed, and a pin that
 * appeared where none was recorded. None of them falls back to whatever the
 * sandbox happens to provide.
 *
 * The requirements file is text we forward to pip inside the sandbox; we read
 * it as UTF-8 and validate the encoding ourselves (overlongs, surrogates and
 * code points above U+10FFFF are rejected) so that a bad byte is reported
 * here, with its offset and line, instead of as a pip failure on a GPU host.
 */
#include "contracts/pins.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/strbuf.h"
#include "contracts/records.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define REQ_FILE_LIMIT ((size_t)1 << 20) /* a requirements file is a few lines */

/* ---- UTF-8 ---------------------------------------------------------------- */

/* Expected sequence length for lead byte c, its payload bits and the smallest
 * code point that length may encode (anything below is an overlong form). */
static int utf8_lead(unsigned c, unsigned *cp, unsigned *min)
{
    if (c >= 0xC2 && c <= 0xDF) {
        *cp = c & 0x1F, *min = 0x80;
        return 2;
    }
    if (c >= 0xE0 && c <= 0xEF) {
        *cp = c & 0x0F, *min = 0x800;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF7) {
        *cp = c & 0x07, *min = 0x10000;
        return 4;
    }
    return 0;
}

static const char *utf8_bad_lead(unsigned c)
{
    if (c >= 0x80 && c <= 0xBF)
        return "a continuation byte without a lead byte";
    if (c == 0xC0 || c == 0xC1)
        return "an overlong encoding";
    return "a byte that never appears in UTF-8";
}

/* One sequence at s[0..n). Returns its length, or 0 with *why set. */
static size_t utf8_one(const unsigned char *s, size_t n, const char **why)
{
    unsigned cp, min;
    int len = utf8_lead(s[0], &cp, &min);
    if (len == 0) {
        *why = utf8_bad_lead(s[0]);
        return 0;
    }
    for (int k = 1; k < len; k++) {
        if ((size_t)k >= n || (s[k] & 0xC0) != 0x80) {
            *why = "a truncated multi-byte sequence";
            return 0;
        }
        cp = (cp << 6) | (s[k] & 0x3Fu);
    }
    if (cp < min)
        *why = "an overlong encoding";
    else if (cp >= 0xD800 && cp <= 0xDFFF)
        *why = "a UTF-16 surrogate code point";
    else if (cp > 0x10FFFF)
        *why = "a code point beyond U+10FFFF";
    else
        return (size_t)len;
    return 0;
}

/* Returns NULL when s is valid UTF-8 without NUL bytes, else the reason and *bad. */
static const char *utf8_validate(const char *text, size_t n, size_t *bad)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < n;) {
        const char *why = NULL;
        size_t len = 1;
        if (s[i] == 0)
            why = "a NUL byte";
        else if (s[i] >= 0x80)
            len = utf8_one(s + i, n - i, &why);
        if (why) {
            *bad = i;
            return why;
        }
        i += len;
    }
    return NULL;
}

static size_t line_of(const char *s, size_t offset)
{
    size_t line = 1;
    for (size_t i = 0; i < offset; i++)
        line += s[i] == '\n';
    return line;
}

/* ---- requirement lines ---------------------------------------------------- */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* pip's comment rule: '#' at the start of a line or after whitespace; a '#'
 * inside a token (a URL fragment such as "...#egg=x") is not a comment. */
static void strip_comment(struct strbuf *line)
{
    for (size_t i = 0; i < line->len; i++) {
        if (line->buf[i] == '#' && (i == 0 || is_space(line->buf[i - 1]))) {
            strbuf_setlen(line, i);
            return;
        }
    }
}

/* Lines we cannot forward faithfully are refused rather than half-applied. */
static const char *unsupported_line(const struct strbuf *line)
{
    if (line->len && line->buf[line->len - 1] == '\\')
        return "ends with a backslash continuation, which aka does not join; "
               "write the requirement on one line";
    if (!strncmp(line->buf, "-r", 2) || !strncmp(line->buf, "-c", 2) ||
        !strncmp(line->buf, "--requirement", 13) || !strncmp(line->buf, "--constraint", 12))
        return "includes another file, which is not sent to the sandbox; "
               "list its requirements here instead";
    return NULL;
}

static int parse_requirements(const char *path, const char *text, size_t n, struct strvec *out,
                              struct aka_err *err)
{
    struct strbuf line = STRBUF_INIT;
    size_t lineno = 0;
    int rc = 0;

    for (size_t pos = 0; pos < n && rc == 0; lineno++) {
        const char *nl = memchr(text + pos, '\n', n - pos);
        size_t len = nl ? (size_t)(nl - (text + pos)) : n - pos;
        strbuf_reset(&line);
        strbuf_add(&line, text + pos, len);
        pos += len + 1;
        strip_comment(&line);
        strbuf_trim(&line);
        if (line.len == 0)
            continue;
        const char *why = unsupported_line(&line);
        if (why)
            rc = aka_err_set(err, AKA_EXIT_USAGE, "%s=%s:%zu: requirement \"%s\" %s",
                             AKA_ENV_REQUIREMENTS_FILE, path, lineno + 1, line.buf, why);
        else
            strvec_push(out, line.buf);
    }
    strbuf_release(&line);
    return rc;
}

/* ---- loading -------------------------------------------------------------- */

static int read_requirements_file(const char *path, struct strbuf *text, struct aka_err *err)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s=%s: the requirements file %s",
                           AKA_ENV_REQUIREMENTS_FILE, path,
                           errno == ENOENT ? "does not exist" : strerror(errno));
    if (!S_ISREG(st.st_mode))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s=%s: the requirements file is not a regular file",
                           AKA_ENV_REQUIREMENTS_FILE, path);
    if (aka_read_file(path, text, REQ_FILE_LIMIT, err) < 0)
        return aka_err_prefix(err, "%s=%s: cannot read the requirements file",
                              AKA_ENV_REQUIREMENTS_FILE, path);
    return 0;
}

static int load_requirements(const char *path, struct strvec *out, struct aka_err *err)
{
    struct strbuf text = STRBUF_INIT;
    const char *body, *why;
    size_t n, bad = 0;
    int rc = -1;

    if (read_requirements_file(path, &text, err) < 0)
        goto done;
    why = utf8_validate(text.buf, text.len, &bad);
    if (why) {
        aka_err_set(err, AKA_EXIT_USAGE,
                    "%s=%s:%zu: the requirements file is not valid UTF-8: "
                    "%s at byte offset %zu",
                    AKA_ENV_REQUIREMENTS_FILE, path, line_of(text.buf, bad), why, bad);
        goto done;
    }
    /* A UTF-8 byte-order mark is legal at the start and pip ignores it. */
    body = text.buf, n = text.len;
    if (n >= 3 && !memcmp(body, "\xEF\xBB\xBF", 3))
        body += 3, n -= 3;
    rc = parse_requirements(path, body, n, out, err);
done:
    strbuf_release(&text);
    return rc;
}

/* The version is copied verbatim into requests and compared byte for byte. */
static int check_version(const char *v, struct aka_err *err)
{
    for (const unsigned char *p = (const unsigned char *)v; *p; p++)
        if (*p <= ' ' || *p == 0x7F)
            return aka_err_set(err, AKA_EXIT_USAGE,
                               "%s: expected a version without whitespace or control "
                               "characters; got \"%s\"",
                               AKA_ENV_BENCH_VERSION, v);
    return 0;
}

static int runtime_pins_load_impl(const char *bench_version, const char *requirements_file,
                                  struct aka_runtime_pins *out, struct aka_err *err)
{
    memset(out, 0, sizeof(*out));
    /* Empty means "not pinned", as for the environment variables. */
    if (bench_version && *bench_version) {
        if (check_version(bench_version, err) < 0)
            return -1;
        out->bench_version = aka_xstrdup(bench_version);
    }
    if (requirements_file && *requirements_file) {
        out->requirements_file = aka_xstrdup(requirements_file);
        if (load_requirements(requirements_file, &out->requirements, err) < 0) {
            aka_runtime_pins_release(out);
            return -1;
        }
    }
    return 0;
}

int aka_runtime_pins_from_env(struct aka_runtime_pins *out, struct aka_err *err)
{
    return aka_runtime_pins_load(getenv(AKA_ENV_BENCH_VERSION), getenv(AKA_ENV_REQUIREMENTS_FILE),
                                 out, err);
}

void aka_runtime_pins_release(struct aka_runtime_pins *p)
{
    free(p->bench_version);
    free(p->requirements_file);
    strvec_clear(&p->requirements);
    p->bench_version = p->requirements_file = NULL;
}

json_t *aka_runtime_pins_to_json(const struct aka_runtime_pins *p)
{
    json_t *o = json_object(), *reqs = json_array();
    json_object_set_new(o, "atrex_bench_version",
                        p->bench_version ? json_string(p->bench_version) : json_null());
    json_object_set_new(o, "requirements_file",
                        p->requirements_file ? json_string(p->requirements_file) : json_null());
    for (size_t i = 0; i < p->requirements.n; i++)
        json_array_append_new(reqs, json_string(p->requirements.v[i]));
    json_object_set_new(o, "requirements", reqs);
    return o;
}

/* ---- replay --------------------------------------------------------------- */

/* The recorded pins, as read back from a request ("runtime" object). */
struct recorded_pins {
    const char *version; /* NULL: recorded unpinned */
    const char *file;    /* NULL: recorded without a requirements file */
    json_t *reqs;        /* array of strings (maybe empty) */
};

static int parse_recorded(const char *request_file, json_t *recorded, struct recorded_pins *r,
                          struct aka_err *err)
{
    static const char *const keys[] = {"atrex_bench_version", "requirements_file", "requirements",
                                       NULL};
    struct jctx c = {request_file, err};
    size_t i;
    json_t *item;

    memset(r, 0, sizeof(*r));
    if (!recorded || json_is_null(recorded))
        return 0; /* recorded before any pin existed: counts as unpinned */
    if (jexpect_obj(&c, recorded, "runtime") < 0 ||
        jcheck_keys(&c, recorded, "runtime", keys) < 0 ||
        jget_str(&c, recorded, "runtime", "atrex_bench_version", false, &r->version) < 0 ||
        jget_str(&c, recorded, "runtime", "requirements_file", false, &r->file) < 0 ||
        jget_arr(&c, recorded, "runtime", "requirements", false, &r->reqs) < 0)
        return -1;
    json_array_foreach(r->reqs, i, item)
    {
        if (!json_is_string(item))
            return jfail(&c, "runtime.requirements",
                         "expected a list of strings; got %s at index %zu", jtype_name(item), i);
    }
    if (!r->file && r->reqs && json_array_size(r->reqs) > 0)
        return jfail(&c, "runtime.requirements",
                     "expected no requirements when requirements_file is null; got %zu",
                     json_array_size(r->reqs));
    return 0;
}

static int replay_version(const char *file, const char *then, const char *now, struct aka_err *err)
{
    if (then && now && strcmp(then, now) == 0)
        return 0;
    if (!then && !now)
        return 0;
    if (then && !now)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: %s: the request was recorded with runtime %s but no version is "
                           "pinned now",
                           file, AKA_ENV_BENCH_VERSION, then);
    if (!then)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: %s: the request was recorded without a pinned runtime but "
                           "runtime %s is pinned now; unset it to replay this request",
                           file, AKA_ENV_BENCH_VERSION, now);
    return aka_err_set(err, AKA_EXIT_USAGE,
                       "%s: %s: the request was recorded with runtime %s but runtime %s is "
                       "pinned now",
                       file, AKA_ENV_BENCH_VERSION, then, now);
}

static const char *req_at(json_t *reqs, size_t i)
{
    return i < json_array_size(reqs) ? json_string_value(json_array_get(reqs, i)) : NULL;
}

/* Both sides have a requirements file: the parsed lines must be equal, in order. */
static int replay_lines(const char *file, const struct recorded_pins *r,
                        const struct aka_runtime_pins *now, struct aka_err *err)
{
    size_t n_then = json_array_size(r->reqs),
           n = n_then > now->requirements.n ? n_then : now->requirements.n;
    for (size_t i = 0; i < n; i++) {
        const char *a = req_at(r->reqs, i),
                   *b = i < now->requirements.n ? now->requirements.v[i] : NULL;
        if (a && b && strcmp(a, b) == 0)
            continue;
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: %s: requirement %zu differs: recorded %s%s%s, now %s%s%s "
                           "(from %s)",
                           file, AKA_ENV_REQUIREMENTS_FILE, i + 1, a ? "\"" : "", a ? a : "nothing",
                           a ? "\"" : "", b ? "\"" : "", b ? b : "nothing", b ? "\"" : "",
                           now->requirements_file);
    }
    return 0;
}

static int replay_requirements(const char *file, const struct recorded_pins *r,
                               const struct aka_runtime_pins *now, struct aka_err *err)
{
    if (!r->file && !now->requirements_file)
        return 0;
    if (r->file && !now->requirements_file)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: %s: the request was recorded with the requirements of %s but no "
                           "requirements file is configured now",
                           file, AKA_ENV_REQUIREMENTS_FILE, r->file);
    if (!r->file)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: %s: the request was recorded without requirements but %s is "
                           "configured now; unset it to replay this request",
                           file, AKA_ENV_REQUIREMENTS_FILE, now->requirements_file);
    /* The path may move; what must not change is the parsed content. */
    return replay_lines(file, r, now, err);
}

static int runtime_pins_check_replay_impl(const struct aka_runtime_pins *now, json_t *recorded,
                                          const char *request_file, struct aka_err *err)
{
    struct recorded_pins r;
    if (parse_recorded(request_file, recorded, &r, err) < 0)
        return -1;
    if (replay_version(request_file, r.version, now->bench_version, err) < 0)
        return -1;
    return replay_requirements(request_file, &r, now, err);
}

/* ---- public entry points: every error leaves here as one line ---- */

int aka_runtime_pins_load(const char *bench_version, const char *requirements_file,
                          struct aka_runtime_pins *out, struct aka_err *err)
{
    return aka_record_one_line(runtime_pins_load_impl(bench_version, requirements_file, out, err),
                               err);
}

int aka_runtime_pins_check_replay(const struct aka_runtime_pins *now, json_t *recorded,
                                  const char *request_file, struct aka_err *err)
{
    return aka_record_one_line(runtime_pins_check_replay_impl(now, recorded, request_file, err),
                               err);
}
