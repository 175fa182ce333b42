/*
 * opts.h — table-driven command lines: every command of aka declares its flags as
 * rows of a table and hands argv to aka_opts_parse, which is the only code in aka
 * that walks a command line.
 *
 * A row says where the flag's value goes, how it is checked (kind, range, choices),
 * its default, the environment variable that stands in for it, and what --help says
 * about it; the parser applies the defaults, parses, applies the environment and
 * generates the help from the same rows. A table is an array of struct aka_opt
 * ending with a row whose name is NULL; each row's `off` is an offset into the
 * struct a group hands in as `base`. Several tables (groups) can serve one command
 * (`aka eval` parses its own and the transport table of sandbox.h), so that a flag
 * shared by commands is described once.
 */
#ifndef AKA_BASE_OPTS_H
#define AKA_BASE_OPTS_H

#include "base/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct strvec;

enum aka_opt_kind {
    AKA_OPT_STR = 0, /* const char * pointing into argv, the environment or `def` */
    AKA_OPT_CHOICE,  /* const char * pointing at the matching choices[] entry */
    AKA_OPT_INT,     /* int, in [lo, hi] */
    AKA_OPT_LONG,    /* long, in [lo, hi] */
    AKA_OPT_LL,      /* long long, in [lo, hi] */
    AKA_OPT_DBL,     /* double, in [lo, hi] (or [lo, hi) with hi_open) */
    AKA_OPT_LIST,    /* struct strvec, one entry per occurrence (the environment: a JSON array) */
    AKA_OPT_BOOL     /* bool, set by the flag alone; it takes no value */
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
    /* The value before parsing, as it would be typed (NULL: the field stays zero or
     * NULL). Stored without the range check, so a sentinel such as -1 "not given"
     * may lie outside the range a user may type. */
    const char *def;
    const char *alias; /* a short spelling, "-v" (NULL: none) */
};

/* One table and the struct its offsets point into. */
struct aka_opt_group {
    const struct aka_opt *table; /* NULL ends a command's list of groups */
    void *base;
    bool *given;       /* indexed like table: which flags were typed (NULL: not kept
                          beyond parsing, where a typed flag still wins over its variable) */
    const char *title; /* heading of this group in --help (NULL: none) */
    /* The owner applies the environment itself, later (the transport flags, whose
     * environment an episode may forbid): the parser leaves it alone. */
    bool env_later;
};

/* What a command says of itself: fixed per command, so usually a static const. */
struct aka_opt_doc {
    const char *name; /* "eval", "wiki query": every error names it ("": aka itself) */
    /* --help: the usage lines and description before the generated flag lines, and
     * what follows them (exit status, notes); NULL: none. */
    const char *usage, *notes;
};

/* A command line: its flag groups (at most 8) and what may follow them. */
struct aka_opt_cmd {
    const struct aka_opt_doc *doc;
    const struct aka_opt_group *groups;
    /* Positional arguments, and every argument after "--" (NULL: none allowed). */
    struct strvec *args;
    size_t max_args;     /* at most this many positional arguments (0: any number) */
    bool args_end_flags; /* the first positional argument ends the flags (a command to run) */
    /* The first argument that is not a flag of these tables ends the flags, and goes
     * with the rest to args (core's own flags, in front of an application's). */
    bool stop_at_unknown;
    bool *help; /* set by --help or -h, which end parsing (help and usage NULL: they are
                   not this command's, as any other argument) */
};

/*
 * Apply every group's defaults, parse argv[first..argc) ("--flag VALUE",
 * "--flag=VALUE", "-v" aliases, BOOL flags, repeatable LIST flags, positional
 * arguments, "--"), then the environment for flags not given: 0. --help or -h: the
 * help on stdout (when the command has usage text) and 1. Errors are -1 with code 2,
 * one line naming the command, the flag and what was expected.
 */
int aka_opts_parse(const struct aka_opt_cmd *c, int argc, char **argv, int first,
                   struct aka_err *err);

/* Store every row's default (the parser does this itself; for structs filled
 * without a command line). */
void aka_opt_defaults(const struct aka_opt *table, void *base);

/* The index of argv[1] in names (a subcommand); -1 with code 2 naming the command
 * and the expected names when it is missing or unknown. */
int aka_opts_subcommand(const char *cmd, const char *const *names, int argc, char **argv,
                        struct aka_err *err);

/* argv[first..argc) without the flags in drop ("--flag VALUE" and "--flag=VALUE"):
 * a command line handed on to a child with some flags replaced. */
void aka_opts_argv_without(int argc, char **argv, int first, const char *const *drop,
                           struct strvec *out);

/* The row for "--flag" (len bytes of arg), or NULL. */
const struct aka_opt *aka_opt_find(const struct aka_opt *table, const char *arg, size_t len);

/* Check and store one value; code 2 naming the flag (or `source`, e.g. an environment
 * variable, when not NULL) and what was expected. */
int aka_opt_set(const struct aka_opt *f, void *base, const char *value, const char *source,
                struct aka_err *err);

/* For every row with an environment variable whose flag was not given: take the
 * variable's value when it is set and non-empty (code 2 naming the variable when it
 * is bad). given[row] is left alone: a value from the environment was not typed. */
int aka_opt_apply_env(const struct aka_opt *table, void *base, const bool *given,
                      struct aka_err *err);

/* Whether "--flag" of this table appeared (given indexed like the table). */
bool aka_opt_given(const struct aka_opt *table, const bool *given, const char *flag);

/* One help line per row, with its default, choices and environment variable. */
void aka_opt_print_help(const struct aka_opt *table, FILE *out);

/* The command's usage text, every group under its title, -h/--help, its notes. */
void aka_opts_print_help(const struct aka_opt_cmd *c, FILE *out);

#endif
