/*
 * opts_cli.c — the walk over a command line (aka_opts_parse: the one loop over argv
 * in aka), subcommands, and the --help text generated from the tables.
 */
#include "base/opts.h"

#include "base/strbuf.h"
#include "base/vec.h"

#include <stdlib.h>
#include <string.h>

/* The row argv names ("--flag", "--flag=V" or an alias), with its group. */
static const struct aka_opt *lookup(const struct aka_opt_cmd *c, const char *arg,
                                    const struct aka_opt_group **group)
{
    const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    for (const struct aka_opt_group *g = c->groups; g->table; g++) {
        for (const struct aka_opt *f = g->table; f->name; f++) {
            if ((strlen(f->name) == len && strncmp(f->name, arg, len) == 0) ||
                (f->alias && strcmp(f->alias, arg) == 0)) {
                *group = g;
                return f;
            }
        }
    }
    return NULL;
}

/* rc < 0: the error names the command first. */
static int failed(const struct aka_opt_cmd *c, int rc, struct aka_err *err)
{
    if (rc < 0 && *c->doc->name)
        aka_err_prefix(err, "%s", c->doc->name);
    return rc < 0 ? -1 : 0;
}

/* argv[*i] is a flag: store its value (the next argument unless "=VALUE"). */
static int parse_flag(const struct aka_opt_cmd *c, bool **given, int argc, char **argv, int *i,
                      struct aka_err *err)
{
    const char *arg = argv[*i];
    const struct aka_opt_group *g = NULL;
    const struct aka_opt *f = lookup(c, arg, &g);
    const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
    const char *v = eq ? eq + 1 : NULL;
    if (!f)
        return failed(c,
                      aka_err_set(err, AKA_EXIT_USAGE, "%.*s: unknown flag (see aka%s%s --help)",
                                  (int)strcspn(arg, "="), arg, *c->doc->name ? " " : "",
                                  c->doc->name),
                      err);
    if (f->kind == AKA_OPT_BOOL && v)
        return failed(
            c, aka_err_set(err, AKA_EXIT_USAGE, "%s: takes no value; got '%s'", f->name, v), err);
    /* "--" ends the flags (`aka sandbox run ... -- CMD`); it is never a value. */
    if (f->kind != AKA_OPT_BOOL && !v) {
        if (*i + 1 >= argc || strcmp(argv[*i + 1], "--") == 0)
            return failed(c,
                          aka_err_set(err, AKA_EXIT_USAGE, "%s: expected a value (%s)", f->name,
                                      f->metavar ? f->metavar : "VALUE"),
                          err);
        v = argv[++*i];
    }
    given[g - c->groups][f - g->table] = true;
    return failed(c, aka_opt_set(f, g->base, v ? v : "", NULL, err), err);
}

static int positional(const struct aka_opt_cmd *c, const char *arg, struct aka_err *err)
{
    if (!c->args || (c->max_args && c->args->n >= c->max_args))
        return failed(c,
                      aka_err_set(err, AKA_EXIT_USAGE,
                                  "'%s': unexpected argument (see aka%s%s --help)", arg,
                                  *c->doc->name ? " " : "", c->doc->name),
                      err);
    strvec_push(c->args, arg);
    return 0;
}

static bool is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

static int help(const struct aka_opt_cmd *c)
{
    if (c->help)
        *c->help = true;
    if (c->doc->usage)
        aka_opts_print_help(c, stdout);
    return 1;
}

static int apply_env(const struct aka_opt_cmd *c, bool **given, struct aka_err *err)
{
    for (const struct aka_opt_group *g = c->groups; g->table; g++)
        if (!g->env_later && aka_opt_apply_env(g->table, g->base, given[g - c->groups], err) < 0)
            return failed(c, -1, err);
    return 0;
}

#define MAX_GROUPS 8

/* Which flags were typed, per group: the group's own array, or one of ours (freed by
 * release_given), so that a typed flag wins over its variable either way. */
static void init_given(const struct aka_opt_cmd *c, bool **given, bool **owned)
{
    size_t k = 0;
    for (const struct aka_opt_group *g = c->groups; g->table; g++, k++) {
        size_t rows = 0;
        if (k == MAX_GROUPS)
            abort(); /* a command's own table is wrong: no user input gets here */
        while (g->table[rows].name)
            rows++;
        owned[k] = g->given ? NULL : aka_xcalloc(rows + 1, sizeof(bool));
        given[k] = g->given ? g->given : owned[k];
        aka_opt_defaults(g->table, g->base);
    }
}

static int release_given(bool **owned, int rc)
{
    for (size_t k = 0; k < MAX_GROUPS; k++)
        free(owned[k]);
    return rc;
}

int aka_opts_parse(const struct aka_opt_cmd *c, int argc, char **argv, int first,
                   struct aka_err *err)
{
    bool flags = true, *given[MAX_GROUPS] = {NULL}, *owned[MAX_GROUPS] = {NULL};
    init_given(c, given, owned);
    for (int i = first; i < argc; i++) {
        const char *arg = argv[i];
        int rc;
        const struct aka_opt_group *g;
        if (flags && (c->help || c->doc->usage) && is_help(arg))
            return release_given(owned, help(c)); /* --help wins over everything else */
        if (flags && strcmp(arg, "--") == 0 && c->args) {
            flags = false;
            continue;
        }
        if (flags && c->stop_at_unknown && !lookup(c, arg, &g))
            flags = false;
        if (flags && arg[0] == '-' && arg[1]) {
            rc = parse_flag(c, given, argc, argv, &i, err);
        } else {
            rc = positional(c, arg, err);
            flags = flags && !c->args_end_flags;
        }
        if (rc < 0)
            return release_given(owned, -1);
    }
    return release_given(owned, apply_env(c, given, err));
}

int aka_opts_subcommand(const char *cmd, const char *const *names, int argc, char **argv,
                        struct aka_err *err)
{
    struct strbuf sb = STRBUF_INIT;
    for (int k = 0; argc >= 2 && names[k]; k++)
        if (strcmp(argv[1], names[k]) == 0)
            return k;
    for (int k = 0; names[k]; k++)
        strbuf_addf(&sb, "%s%s", k ? ", " : "", names[k]);
    if (argc >= 2)
        aka_err_set(err, AKA_EXIT_USAGE,
                    "%s: '%s': unknown subcommand; expected one of %s (see aka %s --help)", cmd,
                    argv[1], sb.buf, cmd);
    else
        aka_err_set(err, AKA_EXIT_USAGE, "%s: expected a subcommand, one of %s (see aka %s --help)",
                    cmd, sb.buf, cmd);
    strbuf_release(&sb);
    return -1;
}

void aka_opts_argv_without(int argc, char **argv, int first, const char *const *drop,
                           struct strvec *out)
{
    for (int i = first; i < argc; i++) {
        bool dropped = false;
        for (size_t k = 0; drop[k] && !dropped; k++) {
            size_t n = strlen(drop[k]);
            if (strncmp(argv[i], drop[k], n) == 0 && (argv[i][n] == '\0' || argv[i][n] == '=')) {
                dropped = true;
                i += argv[i][n] == '\0'; /* and its value */
            }
        }
        if (!dropped)
            strvec_push(out, argv[i]);
    }
}

/* A default a user would recognise: not empty, and not a sentinel outside the range
 * (such a row's help says what "not given" means). */
static bool shown_default(const struct aka_opt *f)
{
    if (!f->def || !*f->def || f->kind == AKA_OPT_LIST || f->kind == AKA_OPT_BOOL)
        return false;
    if (f->kind == AKA_OPT_STR || f->kind == AKA_OPT_CHOICE)
        return true;
    double d = strtod(f->def, NULL);
    return d >= f->lo && d <= f->hi;
}

/* The row's description: help, default, choices, environment variable. */
static void describe(const struct aka_opt *f, struct strbuf *sb)
{
    strbuf_addstr(sb, f->help);
    if (shown_default(f))
        strbuf_addf(sb, " (default %s)", f->def);
    for (int i = 0; f->kind == AKA_OPT_CHOICE && f->choices[i]; i++)
        strbuf_addf(sb, "%s%s", i ? ", " : "; choices: ", f->choices[i]);
    if (f->kind == AKA_OPT_LIST)
        strbuf_addstr(sb, " (repeatable)");
    if (f->env)
        strbuf_addf(sb, "; environment: %s", f->env);
}

#define HELP_COL   32 /* where descriptions start */
#define HELP_WIDTH 100

/* "  HEAD  DESCRIPTION", the description wrapped at word boundaries. */
static void help_line(FILE *out, const char *head, const char *text)
{
    int col = fprintf(out, "  %s", head);
    if (col >= HELP_COL - 1)
        col = fprintf(out, "\n%*s", HELP_COL - 1, "") - 1;
    else
        col += fprintf(out, "%*s", HELP_COL - 1 - col, "");
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, " ");
        if (col + 1 + (int)n > HELP_WIDTH && col > HELP_COL)
            col = fprintf(out, "\n%*s", HELP_COL - 1, "") - 1;
        col += fprintf(out, " %.*s", (int)n, p);
        p += n;
        p += strspn(p, " ");
    }
    fputc('\n', out);
}

void aka_opt_print_help(const struct aka_opt *table, FILE *out)
{
    for (const struct aka_opt *f = table; f->name; f++) {
        struct strbuf head = STRBUF_INIT, text = STRBUF_INIT;
        if (f->alias)
            strbuf_addf(&head, "%s, ", f->alias);
        strbuf_addstr(&head, f->name);
        if (f->kind != AKA_OPT_BOOL)
            strbuf_addf(&head, " %s", f->metavar ? f->metavar : "VALUE");
        describe(f, &text);
        help_line(out, head.buf, text.buf);
        strbuf_release(&head);
        strbuf_release(&text);
    }
}

void aka_opts_print_help(const struct aka_opt_cmd *c, FILE *out)
{
    if (c->doc->usage)
        fputs(c->doc->usage, out);
    for (const struct aka_opt_group *g = c->groups; g->table; g++) {
        if (g->title)
            fprintf(out, "%s%s:\n", g == c->groups ? "" : "\n", g->title);
        aka_opt_print_help(g->table, out);
    }
    help_line(out, "-h, --help", "show this help");
    if (c->doc->notes)
        fputs(c->doc->notes, out);
}
