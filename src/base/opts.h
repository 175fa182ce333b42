/*
 * opts.h — table-driven command-line flags: one descriptor per flag says where its
 * value goes, how it is checked, which environment variable stands in for it, and
 * what --help says about it.
 *
 * A table is an array of struct aka_opt ending with a row whose name is NULL; each
 * row's `off` is an offset into the struct the caller hands in as `base`. Several
 * tables can serve one command (`aka optimize` parses its own and the transport
 * table of sandbox.h), so that a flag shared by commands is described once.
 */
#ifndef AKA_BASE_OPTS_H
#define AKA_BASE_OPTS_H

#include "base/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum aka_opt_kind {
    AKA_OPT_STR = 0, /* const char * pointing into argv or the environment */
    AKA_OPT_CHOICE,  /* const char * pointing at the matching choices[] entry */
    AKA_OPT_INT,     /* int, in [lo, hi] */
    AKA_OPT_LONG,    /* long, in [lo, hi] */
    AKA_OPT_LL,      /* long long, in [lo, hi] */
    AKA_OPT_DBL,     /* double, in [lo, hi] (or [lo, hi) with hi_open) */
    AKA_OPT_LIST     /* struct strvec, one entry per occurrence (the environment: a JSON array) */
};

struct aka_opt {
    const char *name;           /* "--flag" */
    size_t off;                 /* of the value in the caller's struct */
    const char *const *choices; /* AKA_OPT_CHOICE: NULL-terminated */
    double lo, hi;              /* numeric range */
    enum aka_opt_kind kind;
    bool hi_open; /* [lo, hi) instead of [lo, hi] */
    const char *metavar, *help;
    const char *env; /* environment variable read when the flag is absent (NULL: none) */
    bool nocase;     /* choices match case-insensitively; "" is accepted as "not set" */
};

/* The row for "--flag" (len bytes of arg), or NULL. */
const struct aka_opt *aka_opt_find(const struct aka_opt *table, const char *arg, size_t len);

/* Check and store one value; code 2 naming the flag (or `source`, e.g. an environment
 * variable, when not NULL) and what was expected. */
int aka_opt_set(const struct aka_opt *f, void *base, const char *value, const char *source,
                struct aka_err *err);

/*
 * argv[*i] is "--flag VALUE" or "--flag=VALUE" of this table: store the value, mark
 * given[row] and advance *i past the value; 1. Not a flag of this table: 0. A bad or
 * missing value: -1 with code 2.
 */
int aka_opt_parse_one(const struct aka_opt *table, void *base, bool *given, int argc, char **argv,
                      int *i, struct aka_err *err);

/* For every row with an environment variable whose flag was not given: take the
 * variable's value when it is set and non-empty (code 2 naming the variable when it
 * is bad). given[row] is left alone: a value from the environment was not typed. */
int aka_opt_apply_env(const struct aka_opt *table, void *base, const bool *given,
                      struct aka_err *err);

/* Whether "--flag" of this table appeared (given indexed like the table). */
bool aka_opt_given(const struct aka_opt *table, const bool *given, const char *flag);

/* One help line per row (with its choices and environment variable). */
void aka_opt_print_help(const struct aka_opt *table, FILE *out);

#endif
