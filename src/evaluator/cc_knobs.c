/*
 * cc_knobs.c — compiler flags as tuning knobs of a native C kernel.
 *
 * A kernel declares them like any knob (`aka:tune AKA_CC_OPT in {O2, O3}` and
 * `#define AKA_CC_OPT O2`); the evaluator turns each AKA_CC_* value into at most
 * one compiler flag from the closed table below, taken from `--tune` when given,
 * else from the kernel's own #define (so a committed kernel keeps its flags). No
 * other flag can be produced: a value outside the table is bad input (code 2),
 * never passed through. Nothing in the table changes the numerics beyond the
 * rounding of one operation: no -ffast-math, -Ofast or any of its parts
 * (reassociation, reciprocals, finite-math or signed-zero assumptions).
 * -ffp-contract=fast fuses a*b+c into one FMA, which rounds once instead of twice:
 * within any operator tolerance that admits a different summation order.
 */
#include "evaluator/evaluator.h"

#include <ctype.h>
#include <string.h>

struct cc_value {
    const char *value, *flag; /* flag NULL: the compiler's default, no flag */
};

static const struct {
    const char *name;
    struct cc_value v[4];
} cc_table[] = {
    {"AKA_CC_OPT", {{"O2", "-O2"}, {"O3", "-O3"}, {NULL, NULL}}},
    /* The kernel is compiled on the host that runs it (CPU platform, inside its sandbox). */
    {"AKA_CC_ARCH", {{"generic", NULL}, {"native", "-march=native"}, {NULL, NULL}}},
    {"AKA_CC_FMA", {{"off", "-ffp-contract=off"}, {"on", "-ffp-contract=fast"}, {NULL, NULL}}},
    {"AKA_CC_UNROLL", {{"off", NULL}, {"on", "-funroll-loops"}, {NULL, NULL}}},
    {"AKA_CC_VEC",
     {{"default", NULL},
      {"dynamic", "-fvect-cost-model=dynamic"},
      {"off", "-fno-tree-vectorize"},
      {NULL, NULL}}},
};
#define CC_N (sizeof(cc_table) / sizeof(cc_table[0]))

bool aka_cc_knob_name(const char *name)
{
    return strncmp(name, "AKA_CC_", 7) == 0;
}

static int knob_index(const char *name)
{
    for (size_t i = 0; i < CC_N; i++)
        if (strcmp(cc_table[i].name, name) == 0)
            return (int)i;
    return -1;
}

static void expected_names(struct strbuf *sb)
{
    for (size_t i = 0; i < CC_N; i++)
        strbuf_addf(sb, "%s%s", i ? ", " : "", cc_table[i].name);
}

static void expected_values(int k, struct strbuf *sb)
{
    for (size_t i = 0; cc_table[k].v[i].value; i++)
        strbuf_addf(sb, "%s%s", i ? ", " : "", cc_table[k].v[i].value);
}

int aka_cc_knob_flag(const char *where, const char *name, const char *value, const char **flag,
                     struct aka_err *err)
{
    struct strbuf sb = STRBUF_INIT;
    int k = knob_index(name), rc;
    if (k < 0) {
        expected_names(&sb);
        rc = aka_err_set(err, AKA_EXIT_USAGE, "%s: %s: expected a compiler knob (one of %s)", where,
                         name, sb.buf);
        strbuf_release(&sb);
        return rc;
    }
    for (size_t i = 0; cc_table[k].v[i].value; i++)
        if (strcmp(cc_table[k].v[i].value, value) == 0) {
            *flag = cc_table[k].v[i].flag;
            return 0;
        }
    expected_values(k, &sb);
    rc = aka_err_set(err, AKA_EXIT_USAGE, "%s: %s: expected one of %s; got '%s'", where, name,
                     sb.buf, value);
    strbuf_release(&sb);
    return rc;
}

size_t aka_cc_knob_count(void)
{
    return CC_N;
}

const char *aka_cc_knob_at(size_t i, size_t v, const char **flag)
{
    if (i >= CC_N || v >= sizeof(cc_table[i].v) / sizeof(cc_table[i].v[0]) ||
        !cc_table[i].v[v].value)
        return NULL;
    *flag = cc_table[i].v[v].flag;
    return cc_table[i].v[v].value;
}

const char *aka_cc_knob_name_at(size_t i)
{
    return i < CC_N ? cc_table[i].name : NULL;
}

/* "#define NAME VALUE" on one line: NAME and VALUE copied out; false when it is not one. */
static bool define_line(const char *p, const char *end, char *name, size_t nn, char *value,
                        size_t vn)
{
    size_t len;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p == end || *p++ != '#')
        return false;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if ((size_t)(end - p) < 7 || strncmp(p, "define", 6) != 0 || !isspace((unsigned char)p[6]))
        return false;
    p += 6;
    char *outs[2] = {name, value};
    size_t caps[2] = {nn, vn};
    for (int f = 0; f < 2; f++) {
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        for (len = 0; p + len < end && !isspace((unsigned char)p[len]); len++)
            ;
        if (len == 0 || len >= caps[f])
            return false;
        memcpy(outs[f], p, len);
        outs[f][len] = '\0';
        p += len;
    }
    return true;
}

static int add_flag(const char *where, const char *name, const char *value, struct strvec *seen,
                    struct strvec *out, struct aka_err *err)
{
    const char *flag = NULL;
    if (strvec_find(seen, name) >= 0)
        return 0; /* the first definition wins (#ifndef guards make it the only one) */
    if (aka_cc_knob_flag(where, name, value, &flag, err) < 0)
        return -1;
    strvec_push(seen, name);
    if (flag)
        strvec_push(out, flag);
    return 0;
}

int aka_cc_knob_flags(const char *label, const char *text, const struct strvec *tune,
                      struct strvec *out, struct aka_err *err)
{
    struct strvec seen = STRVEC_INIT;
    char name[64], value[64], where[512];
    int line = 1, rc = 0;
    for (size_t i = 0; tune && i < tune->n && rc == 0; i++) {
        const char *eq = strchr(tune->v[i], '=');
        snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - tune->v[i]) : 0, tune->v[i]);
        snprintf(where, sizeof(where), "--tune %s", tune->v[i]);
        if (eq && aka_cc_knob_name(name))
            rc = add_flag(where, name, eq + 1, &seen, out, err);
    }
    for (const char *p = text; rc == 0 && p && *p; line++) {
        const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
        snprintf(where, sizeof(where), "%s:%d", label, line);
        if (define_line(p, end, name, sizeof(name), value, sizeof(value)) && aka_cc_knob_name(name))
            rc = add_flag(where, name, value, &seen, out, err);
        p = nl ? nl + 1 : end;
    }
    strvec_clear(&seen);
    return rc;
}
