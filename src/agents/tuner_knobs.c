/*
 * tuner_knobs.c — the knob space a kernel declares (`aka:tune` annotations),
 * its defaults, and rewriting those defaults.
 *
 * Annotations live in comments only, so that a knob is documentation the
 * compiler ignores and a kernel stays valid with or without the tuner. The
 * default of each knob is its definition in the file (#define NAME v for C and
 * CUDA, a module-level NAME = v for Python): that is the configuration the
 * supervisor evaluates, so it is the incumbent, and rewriting it is how a
 * chosen configuration becomes a self-contained kernel.
 */
#include "agents/tuner.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

enum aka_tune_lang aka_tune_lang_for(const char *path)
{
    const char *dot = path ? strrchr(path, '.') : NULL;
    return dot && strcmp(dot, ".py") == 0 ? AKA_TUNE_LANG_PYTHON : AKA_TUNE_LANG_C;
}

void aka_knob_space_release(struct aka_knob_space *s)
{
    for (size_t i = 0; i < s->n; i++)
        strvec_clear(&s->v[i].values);
    s->n = 0;
}

/* ---- comments ------------------------------------------------------------------------------ */

/* The comment text of one line (segments joined by a space); *in_block carries a C block
 * comment across lines. String literals are not tracked: kernels do not put comment
 * openers in strings, and a stray match only yields a malformed-annotation error. */
static void comment_text(const char *s, size_t n, enum aka_tune_lang lang, bool *in_block,
                         struct strbuf *out)
{
    strbuf_reset(out);
    for (size_t i = 0; i < n; i++) {
        if (*in_block) {
            if (s[i] == '*' && i + 1 < n && s[i + 1] == '/') {
                *in_block = false;
                strbuf_addch(out, ' ');
                i++;
            } else {
                strbuf_addch(out, s[i]);
            }
        } else if (lang == AKA_TUNE_LANG_PYTHON && s[i] == '#') {
            strbuf_add(out, s + i + 1, n - i - 1);
            return;
        } else if (lang == AKA_TUNE_LANG_C && s[i] == '/' && i + 1 < n && s[i + 1] == '/') {
            strbuf_add(out, s + i + 2, n - i - 2);
            return;
        } else if (lang == AKA_TUNE_LANG_C && s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
            *in_block = true;
            i++;
        }
    }
}

/* ---- one annotation ------------------------------------------------------------------------ */

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

static bool ident_char(int c, bool first)
{
    return isalpha(c) || c == '_' || (!first && isdigit(c));
}

static bool value_char(int c)
{
    return isalnum(c) || c == '_' || c == '.' || c == '+' || c == '-';
}

/* NAME after "aka:tune"; returns the position after it, or NULL. */
static const char *parse_name(const char *p, struct aka_knob *k)
{
    size_t n = 0;
    p = skip_ws(p);
    while (ident_char((unsigned char)p[n], n == 0))
        n++;
    if (n == 0 || n >= sizeof(k->name))
        return NULL;
    memcpy(k->name, p, n);
    k->name[n] = '\0';
    return p + n;
}

/* "{a, b, c}" with nothing but blanks after it; the values go to k. */
static const char *parse_set(const char *p, struct aka_knob *k)
{
    p = skip_ws(p);
    if (*p++ != '{')
        return "expected '{' after 'in'";
    for (;;) {
        size_t n = 0;
        p = skip_ws(p);
        while (value_char((unsigned char)p[n]))
            n++;
        if (n == 0)
            return "expected a value (digits, letters, '_', '.', '+', '-')";
        char *v = aka_xstrndup(p, n);
        bool dup = strvec_find(&k->values, v) >= 0;
        if (!dup && k->values.n < AKA_TUNE_MAX_VALUES)
            strvec_push(&k->values, v);
        free(v);
        if (dup)
            return "a value is listed twice";
        if (k->values.n >= AKA_TUNE_MAX_VALUES)
            return "too many values (at most 64)";
        p = skip_ws(p + n);
        if (*p == '}')
            break;
        if (*p++ != ',')
            return "expected ',' or '}' after a value";
    }
    p = skip_ws(p + 1);
    return *p && *p != '\r' ? "unexpected text after '}'" : NULL;
}

/* The text after "aka:tune": "NAME in {v, ...}". NULL or what is wrong. */
static const char *parse_annotation(const char *p, struct aka_knob *k)
{
    p = parse_name(p, k);
    if (!p)
        return "expected a knob name (an identifier) after aka:tune";
    p = skip_ws(p);
    if (strncmp(p, "in", 2) != 0 || (p[2] != ' ' && p[2] != '\t' && p[2] != '{'))
        return "expected 'in' after the knob name";
    return parse_set(p + 2, k);
}

/* ---- default definitions ------------------------------------------------------------------- */

/* Does line [s, s+n) define name? Then [*vs, *ve) is the value's span. */
static bool find_def(const char *s, size_t n, const char *name, enum aka_tune_lang lang, size_t *vs,
                     size_t *ve)
{
    size_t len = strlen(name), i = 0, end;
    if (lang == AKA_TUNE_LANG_C) {
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i >= n || s[i++] != '#')
            return false;
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (n - i < 6 || strncmp(s + i, "define", 6) != 0)
            return false;
        i += 6;
        if (i >= n || (s[i] != ' ' && s[i] != '\t'))
            return false;
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
    }
    if (n - i < len || strncmp(s + i, name, len) != 0 ||
        (i + len < n && ident_char(s[i + len], false)))
        return false;
    i += len;
    if (lang == AKA_TUNE_LANG_PYTHON) {
        while (i < n && s[i] != '=' && s[i] != '#')
            i++; /* an optional ": int" annotation */
        if (i >= n || s[i] != '=' || (i + 1 < n && s[i + 1] == '='))
            return false;
        i++;
    }
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    for (end = i; end < n && value_char((unsigned char)s[end]);)
        end++;
    *vs = i;
    *ve = end;
    return end > i;
}

/* Each knob's definition line and default index. */
static int find_defaults(const char *label, const char *text, struct aka_knob_space *s,
                         struct aka_err *err)
{
    for (size_t k = 0; k < s->n; k++) {
        struct aka_knob *kb = &s->v[k];
        const char *p = text;
        size_t vs = 0, ve = 0;
        int line = 1;
        for (; *p; line++) {
            const char *nl = strchr(p, '\n');
            size_t n = nl ? (size_t)(nl - p) : strlen(p);
            if (find_def(p, n, kb->name, s->lang, &vs, &ve)) {
                char *v = aka_xstrndup(p + vs, ve - vs);
                long at = strvec_find(&kb->values, v);
                kb->def_line = line;
                if (at < 0)
                    aka_err_set(err, AKA_EXIT_USAGE,
                                "%s:%d: the default %s of knob %s is not in its set (line %d)",
                                label, line, v, kb->name, kb->line);
                free(v);
                if (at < 0)
                    return -1;
                kb->dflt = (size_t)at;
                break;
            }
            p = nl ? nl + 1 : p + n;
        }
        if (!kb->def_line)
            return aka_err_set(err, AKA_EXIT_USAGE, "%s:%d: knob %s has no default (%s)", label,
                               kb->line, kb->name,
                               s->lang == AKA_TUNE_LANG_C ? "#ifndef/#define NAME VALUE"
                                                          : "a module-level NAME = VALUE");
    }
    return 0;
}

/* ---- the whole file ------------------------------------------------------------------------ */

static int add_annotation(const char *label, int line, const char *at, struct aka_knob_space *s,
                          struct aka_err *err)
{
    struct aka_knob k;
    memset(&k, 0, sizeof(k));
    k.line = line;
    const char *why = parse_annotation(at + strlen("aka:tune"), &k);
    for (size_t i = 0; !why && i < s->n; i++)
        if (strcmp(s->v[i].name, k.name) == 0)
            why = "this knob is already declared";
    if (!why && s->n >= AKA_TUNE_MAX_KNOBS)
        why = "too many knobs (at most 32)";
    if (why) {
        strvec_clear(&k.values);
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s:%d: malformed annotation: %s (expected 'aka:tune NAME in {v1, "
                           "v2, ...}')",
                           label, line, why);
    }
    s->v[s->n++] = k;
    return 0;
}

int aka_tune_parse(const char *label, const char *text, enum aka_tune_lang lang,
                   struct aka_knob_space *out, struct aka_err *err)
{
    struct strbuf com = STRBUF_INIT;
    bool in_block = false;
    int line = 1, rc = 0;
    memset(out, 0, sizeof(*out));
    out->lang = lang;
    for (const char *p = text; *p && rc == 0; line++) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        comment_text(p, n, lang, &in_block, &com);
        const char *at = strstr(com.buf ? com.buf : "", "aka:tune");
        if (at)
            rc = add_annotation(label, line, at, out, err);
        p = nl ? nl + 1 : p + n;
    }
    strbuf_release(&com);
    if (rc == 0)
        rc = find_defaults(label, text, out, err);
    if (rc < 0)
        aka_knob_space_release(out);
    return rc;
}

/* ---- configurations ------------------------------------------------------------------------ */

void aka_tune_defaults(const struct aka_knob_space *s, size_t *idx)
{
    for (size_t i = 0; i < s->n; i++)
        idx[i] = s->v[i].dflt;
}

void aka_tune_key(const struct aka_knob_space *s, const size_t *idx, struct strbuf *out)
{
    strbuf_reset(out);
    for (size_t i = 0; i < s->n; i++)
        strbuf_addf(out, "%s%s=%s", i ? "," : "", s->v[i].name, s->v[i].values.v[idx[i]]);
}

json_t *aka_tune_json(const struct aka_knob_space *s, const size_t *idx)
{
    json_t *o = json_object();
    for (size_t i = 0; i < s->n; i++)
        json_object_set_new(o, s->v[i].name, json_string(s->v[i].values.v[idx[i]]));
    return o;
}

size_t aka_tune_space_size(const struct aka_knob_space *s)
{
    size_t total = 1;
    for (size_t i = 0; i < s->n; i++) {
        if (total > SIZE_MAX / s->v[i].values.n)
            return SIZE_MAX;
        total *= s->v[i].values.n;
    }
    return total;
}

/* The knob whose default is defined on this line, or -1. */
static long knob_at_line(const struct aka_knob_space *s, int line)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].def_line == line)
            return (long)i;
    return -1;
}

/* Copy line [p, p+n) into out, with knob k's value replaced when k >= 0. */
static int rewrite_line(const char *label, int line, const char *p, size_t n,
                        const struct aka_knob_space *s, long k, const size_t *idx,
                        struct strbuf *out, struct aka_err *err)
{
    size_t vs = 0, ve = 0;
    if (k < 0) {
        strbuf_add(out, p, n);
        return 0;
    }
    if (!find_def(p, n, s->v[k].name, s->lang, &vs, &ve))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s:%d: the definition of knob %s changed since it was parsed", label,
                           line, s->v[k].name);
    strbuf_add(out, p, vs);
    strbuf_addstr(out, s->v[k].values.v[idx[k]]);
    strbuf_add(out, p + ve, n - ve);
    return 0;
}

int aka_tune_rewrite(const char *label, const char *text, const struct aka_knob_space *s,
                     const size_t *idx, struct strbuf *out, struct aka_err *err)
{
    int line = 1;
    size_t done = 0;
    strbuf_reset(out);
    for (const char *p = text; *p; line++) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        long k = knob_at_line(s, line);
        if (rewrite_line(label, line, p, n, s, k, idx, out, err) < 0)
            return -1;
        done += k >= 0;
        if (nl)
            strbuf_addch(out, '\n');
        p = nl ? nl + 1 : p + n;
    }
    /* Every knob must land in the file, or the committed kernel would not be the tuned one. */
    if (done != s->n)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: the definition of a knob changed since it was parsed (%zu of %zu "
                           "found)",
                           label, done, s->n);
    return 0;
}
