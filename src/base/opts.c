/*
 * opts.c — the command-line machinery of opts.h: defaults, the walk over argv (the
 * only one in aka), checking and storing values (ranges, choices), the environment,
 * subcommands, and the generated help.
 */
#include "base/opts.h"

#include "base/strbuf.h"
#include "base/vec.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void *field(void *base, const struct aka_opt *f)
{
    return (char *)base + f->off;
}

const struct aka_opt *aka_opt_find(const struct aka_opt *table, const char *arg, size_t len)
{
    for (const struct aka_opt *f = table; f->name; f++)
        if (strlen(f->name) == len && strncmp(f->name, arg, len) == 0)
            return f;
    return NULL;
}

static int bad_number(const struct aka_opt *f, const char *src, const char *v, struct aka_err *err)
{
    const char *what = f->kind == AKA_OPT_DBL ? "a number" : "an integer";
    return aka_err_set(err, AKA_EXIT_USAGE, "%s: expected %s in [%.15g, %.15g%s; got '%s'", src,
                       what, f->lo, f->hi, f->hi_open ? ")" : "]", v);
}

static bool out_of_range(const struct aka_opt *f, double d)
{
    return d < f->lo || d > f->hi || (f->hi_open && d >= f->hi);
}

/* Strict numeric parse; no trailing junk, no NaN; the row's range unless `ranged`
 * is false (a default, which may be a sentinel). */
static int set_number(const struct aka_opt *f, void *base, const char *src, const char *v,
                      bool ranged, struct aka_err *err)
{
    char *end = NULL;
    double d;
    errno = 0;
    if (f->kind == AKA_OPT_DBL) {
        d = strtod(v, &end);
    } else {
        long long ll = strtoll(v, &end, 10);
        d = (double)ll;
    }
    if (errno || end == v || *end || !isfinite(d) || (ranged && out_of_range(f, d)))
        return bad_number(f, src, v, err);
    if (f->kind == AKA_OPT_INT)
        *(int *)field(base, f) = (int)d;
    else if (f->kind == AKA_OPT_LONG)
        *(long *)field(base, f) = (long)d;
    else if (f->kind == AKA_OPT_LL)
        *(long long *)field(base, f) = strtoll(v, NULL, 10);
    else
        *(double *)field(base, f) = d;
    return 0;
}

static int set_choice(const struct aka_opt *f, void *base, const char *src, const char *v,
                      struct aka_err *err)
{
    for (int i = 0; f->choices[i]; i++) {
        if (f->nocase ? strcasecmp(v, f->choices[i]) == 0 : strcmp(v, f->choices[i]) == 0) {
            *(const char **)field(base, f) = f->choices[i];
            return 0;
        }
    }
    if (f->nocase && !*v) {
        *(const char **)field(base, f) = "";
        return 0;
    }
    struct strbuf sb = STRBUF_INIT;
    for (int i = 0; f->choices[i]; i++)
        strbuf_addf(&sb, "%s%s", i ? ", " : "", f->choices[i]);
    aka_err_set(err, AKA_EXIT_USAGE, "%s: expected one of %s; got '%s'", src, sb.buf, v);
    strbuf_release(&sb);
    return -1;
}

static int set_value(const struct aka_opt *f, void *base, const char *value, const char *src,
                     bool ranged, struct aka_err *err)
{
    switch (f->kind) {
    case AKA_OPT_STR:
        *(const char **)field(base, f) = value;
        return 0;
    case AKA_OPT_CHOICE:
        return set_choice(f, base, src, value, err);
    case AKA_OPT_LIST:
        strvec_push((struct strvec *)field(base, f), value);
        return 0;
    case AKA_OPT_BOOL:
        *(bool *)field(base, f) = true;
        return 0;
    default:
        return set_number(f, base, src, value, ranged, err);
    }
}

int aka_opt_set(const struct aka_opt *f, void *base, const char *value, const char *source,
                struct aka_err *err)
{
    return set_value(f, base, value, source ? source : f->name, true, err);
}

void aka_opt_defaults(const struct aka_opt *table, void *base)
{
    struct aka_err ignored = AKA_ERR_INIT;
    for (const struct aka_opt *f = table; f->name; f++)
        if (f->def && f->kind != AKA_OPT_LIST && f->kind != AKA_OPT_BOOL)
            set_value(f, base, f->def, f->name, false, &ignored);
}

/* A list from the environment is a JSON array of strings (upstream's format); the
 * strings are kept in the list, so they outlive the parsed document. */
static int env_list(const struct aka_opt *f, void *base, const char *v, struct aka_err *err)
{
    json_error_t jerr;
    json_t *a = json_loads(v, 0, &jerr);
    size_t k;
    json_t *item;
    int rc = json_is_array(a) ? 0 : -1;
    json_array_foreach(a, k, item) if (rc == 0 && !json_is_string(item)) rc = -1;
    if (rc < 0) {
        json_decref(a);
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s (for %s): expected a JSON array of strings; got '%s'", f->env,
                           f->name, v);
    }
    json_array_foreach(a, k, item)
        strvec_push((struct strvec *)field(base, f), json_string_value(item));
    json_decref(a);
    return 0;
}

int aka_opt_apply_env(const struct aka_opt *table, void *base, const bool *given,
                      struct aka_err *err)
{
    for (const struct aka_opt *f = table; f->name; f++) {
        const char *v = f->env ? getenv(f->env) : NULL;
        if (!v || !*v || (given && given[f - table]))
            continue;
        int rc = f->kind == AKA_OPT_LIST ? env_list(f, base, v, err)
                                         : aka_opt_set(f, base, v, f->env, err);
        if (rc < 0)
            return -1;
    }
    return 0;
}

bool aka_opt_given(const struct aka_opt *table, const bool *given, const char *flag)
{
    const struct aka_opt *f = aka_opt_find(table, flag, strlen(flag));
    return f && given[f - table];
}
