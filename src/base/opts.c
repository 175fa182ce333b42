/*
 * opts.c — the flag-table machinery of opts.h: find a row, check and store a value
 * (ranges, choices), take values from the environment, print help.
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
    return aka_err_set(err, AKA_EXIT_USAGE, "%s: expected %s in [%g, %g%s; got '%s'", src, what,
                       f->lo, f->hi, f->hi_open ? ")" : "]", v);
}

/* Strict numeric parse with the row's range; no trailing junk, no NaN. */
static int set_number(const struct aka_opt *f, void *base, const char *src, const char *v,
                      struct aka_err *err)
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
    if (errno || end == v || *end || !isfinite(d) || d < f->lo || d > f->hi ||
        (f->hi_open && d >= f->hi))
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

int aka_opt_set(const struct aka_opt *f, void *base, const char *value, const char *source,
                struct aka_err *err)
{
    const char *src = source ? source : f->name;
    switch (f->kind) {
    case AKA_OPT_STR:
        *(const char **)field(base, f) = value;
        return 0;
    case AKA_OPT_CHOICE:
        return set_choice(f, base, src, value, err);
    case AKA_OPT_LIST:
        strvec_push((struct strvec *)field(base, f), value);
        return 0;
    default:
        return set_number(f, base, src, value, err);
    }
}

int aka_opt_parse_one(const struct aka_opt *table, void *base, bool *given, int argc, char **argv,
                      int *i, struct aka_err *err)
{
    const char *arg = argv[*i], *eq = strchr(arg, '=');
    if (strncmp(arg, "--", 2) != 0)
        return 0;
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    const struct aka_opt *f = aka_opt_find(table, arg, len);
    if (!f)
        return 0;
    const char *v = eq ? eq + 1 : NULL;
    if (!v) {
        /* "--" ends the flags (`aka sandbox run ... -- CMD`); it is never a value. */
        if (*i + 1 >= argc || strcmp(argv[*i + 1], "--") == 0)
            return aka_err_set(err, AKA_EXIT_USAGE, "%s: expected a value (%s)", f->name,
                               f->metavar);
        v = argv[++*i];
    }
    given[f - table] = true;
    return aka_opt_set(f, base, v, NULL, err) < 0 ? -1 : 1;
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
        if (!v || !*v || given[f - table])
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

void aka_opt_print_help(const struct aka_opt *table, FILE *out)
{
    for (const struct aka_opt *f = table; f->name; f++) {
        char head[64];
        snprintf(head, sizeof(head), "%s %s", f->name, f->metavar);
        fprintf(out, "  %-34s %s\n", head, f->help);
        if (f->kind == AKA_OPT_CHOICE) {
            fprintf(out, "  %-34s choices:", "");
            for (int i = 0; f->choices[i]; i++)
                fprintf(out, " %s", f->choices[i]);
            fputc('\n', out);
        }
        if (f->env)
            fprintf(out, "  %-34s environment: %s\n", "", f->env);
    }
}
