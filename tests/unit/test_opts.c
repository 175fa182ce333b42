/*
 * test_opts.c — the command-line parser of base/opts.h on a table of every kind:
 * defaults before parsing, "--flag VALUE" and "--flag=VALUE", aliases, BOOL and
 * repeatable flags, positional arguments, "--", the environment's place behind the
 * command line, every usage error (one line naming command, flag and what was
 * expected), subcommands, and the help generated from the table.
 */
#include "aka_test.h"

#include "base/opts.h"
#include "base/vec.h"

#include <stdlib.h>
#include <string.h>

struct t_opts {
    const char *name, *color, *env_str;
    int n;
    long big;
    long long huge;
    double ratio;
    struct strvec tags, words;
    bool json, verbose, help;
};

static const char *const colors[] = {"red", "green", NULL};

#define OFF(f) offsetof(struct t_opts, f)

static const struct aka_opt rows[] = {
    {.name = "--name", .off = OFF(name), .def = "anon", .metavar = "S", .help = "a name"},
    {.name = "--color",
     .off = OFF(color),
     .kind = AKA_OPT_CHOICE,
     .choices = colors,
     .def = "red",
     .metavar = "C",
     .help = "a color"},
    {.name = "--n",
     .off = OFF(n),
     .kind = AKA_OPT_INT,
     .lo = 0,
     .hi = 10,
     .def = "3",
     .metavar = "N",
     .help = "a count"},
    {.name = "--big",
     .off = OFF(big),
     .kind = AKA_OPT_LONG,
     .lo = 1,
     .hi = 1e6,
     .def = "-1",
     .metavar = "B",
     .help = "a sentinel default"},
    {.name = "--huge",
     .off = OFF(huge),
     .kind = AKA_OPT_LL,
     .lo = 0,
     .hi = 9e18,
     .def = "7",
     .metavar = "H",
     .help = "a long long"},
    {.name = "--ratio",
     .off = OFF(ratio),
     .kind = AKA_OPT_DBL,
     .lo = 0,
     .hi = 1,
     .hi_open = true,
     .def = "0.5",
     .metavar = "R",
     .help = "a ratio"},
    {.name = "--tag", .off = OFF(tags), .kind = AKA_OPT_LIST, .metavar = "T", .help = "a tag"},
    {.name = "--env-str",
     .off = OFF(env_str),
     .env = "AKA_TEST_OPTS_ENV",
     .metavar = "E",
     .help = "from the environment"},
    {.name = "--json", .off = OFF(json), .kind = AKA_OPT_BOOL, .help = "json"},
    {.name = "--verbose", .alias = "-v", .off = OFF(verbose), .kind = AKA_OPT_BOOL, .help = "more"},
    {.name = NULL},
};

/* Parse args (NULL-terminated, without argv[0]) into o; the parser's return. */
static int parse_with(struct t_opts *o, const char *const *args, bool with_args, bool end_flags,
                      struct aka_err *err)
{
    char *argv[32] = {"t"};
    int argc = 1;
    for (; args[argc - 1]; argc++)
        argv[argc] = (char *)args[argc - 1];
    memset(o, 0, sizeof(*o));
    struct aka_opt_group groups[] = {{.table = rows, .base = o}, {0}};
    static const struct aka_opt_doc doc = {"t", NULL, NULL};
    struct aka_opt_cmd c = {.doc = &doc,
                            .groups = groups,
                            .args = with_args ? &o->words : NULL,
                            .args_end_flags = end_flags,
                            .help = &o->help};
    return aka_opts_parse(&c, argc, argv, 1, err);
}

static int parse(struct t_opts *o, const char *const *args, struct aka_err *err)
{
    return parse_with(o, args, true, false, err);
}

static void release(struct t_opts *o)
{
    strvec_clear(&o->tags);
    strvec_clear(&o->words);
}

static void test_defaults(void **state)
{
    struct t_opts o;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    unsetenv("AKA_TEST_OPTS_ENV");
    assert_int_equal(parse(&o, (const char *const[]){NULL}, &err), 0);
    assert_string_equal(o.name, "anon");
    assert_string_equal(o.color, "red");
    assert_int_equal(o.n, 3);
    assert_int_equal(o.big, -1); /* a sentinel outside the range is stored as is */
    assert_true(o.huge == 7);
    assert_true(o.ratio == 0.5);
    assert_null(o.env_str);
    assert_false(o.json);
    release(&o);
}

static void test_every_kind(void **state)
{
    struct t_opts o;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    const char *const args[] = {
        "--name",  "x",    "--color=green", "--n", "10",      "--big=1000000", "--huge", "12345",
        "--ratio", "0.25", "--tag",         "a",   "--tag=b", "--json",        "-v",     NULL};
    assert_int_equal(parse(&o, args, &err), 0);
    assert_string_equal(o.name, "x");
    assert_string_equal(o.color, "green");
    assert_int_equal(o.n, 10);
    assert_int_equal(o.big, 1000000);
    assert_true(o.huge == 12345);
    assert_true(o.ratio == 0.25);
    assert_int_equal(o.tags.n, 2); /* repeatable, in order */
    assert_string_equal(o.tags.v[0], "a");
    assert_string_equal(o.tags.v[1], "b");
    assert_true(o.json && o.verbose);
    assert_int_equal(o.words.n, 0);
    release(&o);
}

static void test_positional_and_dashdash(void **state)
{
    struct t_opts o;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    const char *const mixed[] = {"one", "--n", "2", "two", "--", "--n", "-v", NULL};
    assert_int_equal(parse(&o, mixed, &err), 0);
    assert_int_equal(o.n, 2);
    assert_false(o.verbose); /* after "--" nothing is a flag */
    assert_int_equal(o.words.n, 4);
    assert_string_equal(o.words.v[2], "--n");
    release(&o);
    /* A command to run: its own flags are its own. */
    const char *const cmd[] = {"--n", "1", "ls", "-l", "--n", NULL};
    assert_int_equal(parse_with(&o, cmd, true, true, &err), 0);
    assert_int_equal(o.n, 1);
    assert_int_equal(o.words.n, 3);
    assert_string_equal(o.words.v[1], "-l");
    release(&o);
}

static void test_environment(void **state)
{
    struct t_opts o;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    setenv("AKA_TEST_OPTS_ENV", "from-env", 1);
    assert_int_equal(parse(&o, (const char *const[]){NULL}, &err), 0);
    assert_string_equal(o.env_str, "from-env");
    release(&o);
    /* The command line wins over the environment. */
    assert_int_equal(parse(&o, (const char *const[]){"--env-str", "typed", NULL}, &err), 0);
    assert_string_equal(o.env_str, "typed");
    release(&o);
    /* An empty variable is not set. */
    setenv("AKA_TEST_OPTS_ENV", "", 1);
    assert_int_equal(parse(&o, (const char *const[]){NULL}, &err), 0);
    assert_null(o.env_str);
    release(&o);
    unsetenv("AKA_TEST_OPTS_ENV");
}

static void expect_error(const char *const *args, bool with_args, const char *want)
{
    struct t_opts o;
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(parse_with(&o, args, with_args, false, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    if (strcmp(err.msg, want) != 0)
        fail_msg("got '%s', want '%s'", err.msg, want);
    release(&o);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error((const char *const[]){"--nope", "1", NULL}, true,
                 "t: --nope: unknown flag (see aka t --help)");
    expect_error((const char *const[]){"--nope=1", NULL}, true,
                 "t: --nope: unknown flag (see aka t --help)");
    expect_error((const char *const[]){"--n", NULL}, true, "t: --n: expected a value (N)");
    expect_error((const char *const[]){"--n", "--", "x", NULL}, true,
                 "t: --n: expected a value (N)");
    expect_error((const char *const[]){"--n", "three", NULL}, true,
                 "t: --n: expected an integer in [0, 10]; got 'three'");
    expect_error((const char *const[]){"--n", "3x", NULL}, true,
                 "t: --n: expected an integer in [0, 10]; got '3x'");
    expect_error((const char *const[]){"--n=11", NULL}, true,
                 "t: --n: expected an integer in [0, 10]; got '11'");
    expect_error((const char *const[]){"--big", "0", NULL}, true,
                 "t: --big: expected an integer in [1, 1000000]; got '0'");
    expect_error((const char *const[]){"--ratio", "1", NULL}, true,
                 "t: --ratio: expected a number in [0, 1); got '1'");
    expect_error((const char *const[]){"--color", "blue", NULL}, true,
                 "t: --color: expected one of red, green; got 'blue'");
    expect_error((const char *const[]){"--json=yes", NULL}, true,
                 "t: --json: takes no value; got 'yes'");
    expect_error((const char *const[]){"stray", NULL}, false,
                 "t: 'stray': unexpected argument (see aka t --help)");
}

static void test_env_errors(void **state)
{
    struct t_opts o;
    struct aka_err err = AKA_ERR_INIT;
    static const struct aka_opt env_rows[] = {{.name = "--n",
                                               .off = OFF(n),
                                               .kind = AKA_OPT_INT,
                                               .lo = 0,
                                               .hi = 10,
                                               .env = "AKA_TEST_OPTS_N",
                                               .metavar = "N",
                                               .help = "n"},
                                              {.name = NULL}};
    char *argv[] = {"t", NULL};
    bool given[2] = {false};
    (void)state;
    memset(&o, 0, sizeof(o));
    struct aka_opt_group groups[] = {{.table = env_rows, .base = &o, .given = given}, {0}};
    static const struct aka_opt_doc doc = {"t", NULL, NULL};
    struct aka_opt_cmd c = {.doc = &doc, .groups = groups};
    setenv("AKA_TEST_OPTS_N", "12", 1);
    assert_int_equal(aka_opts_parse(&c, 1, argv, 1, &err), -1);
    assert_string_equal(err.msg, "t: AKA_TEST_OPTS_N: expected an integer in [0, 10]; got '12'");
    /* A group whose owner applies the environment later is left alone. */
    groups[0].env_later = true;
    err = (struct aka_err)AKA_ERR_INIT;
    assert_int_equal(aka_opts_parse(&c, 1, argv, 1, &err), 0);
    assert_int_equal(o.n, 0);
    assert_false(given[0]);
    unsetenv("AKA_TEST_OPTS_N");
}

static void test_help(void **state)
{
    struct t_opts o;
    struct aka_err err = AKA_ERR_INIT;
    char *text = NULL;
    size_t len = 0;
    (void)state;
    /* --help ends parsing, whatever follows. */
    assert_int_equal(parse(&o, (const char *const[]){"--n", "1", "--help", "--bad", NULL}, &err),
                     1);
    assert_true(o.help);
    release(&o);
    struct aka_opt_group groups[] = {{.table = rows, .base = &o, .title = "options"}, {0}};
    const struct aka_opt_doc doc = {"t", "usage: aka t\n\n", "\nexit 0\n"};
    struct aka_opt_cmd c = {.doc = &doc, .groups = groups};
    FILE *out = open_memstream(&text, &len);
    aka_opts_print_help(&c, out);
    fclose(out);
    static const char *const want[] = {"usage: aka t\n\noptions:\n",
                                       "  --name S ",
                                       "a name (default anon)",
                                       "a color (default red); choices: red, green",
                                       "  --n N ",
                                       "a count (default 3)",
                                       "  --huge H ",
                                       "a long long (default 7)",
                                       "a ratio (default 0.5)",
                                       "a tag (repeatable)",
                                       "environment: AKA_TEST_OPTS_ENV",
                                       "  --json ",
                                       "  -v, --verbose ",
                                       "  -h, --help ",
                                       "\nexit 0\n",
                                       "  --big B                       a sentinel default\n",
                                       "  --color C ",
                                       "  --tag T ",
                                       "  --env-str E ",
                                       "  --ratio R "};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        if (!strstr(text, want[i]))
            fail_msg("help lacks '%s':\n%s", want[i], text);
    free(text);
}

static void test_subcommand_and_handing_on(void **state)
{
    static const char *const names[] = {"query", "show", NULL};
    char *ok[] = {"wiki", "show", "x", NULL}, *bad[] = {"wiki", "frob", NULL}, *none[] = {"wiki"};
    struct aka_err err = AKA_ERR_INIT;
    struct strvec out = STRVEC_INIT;
    (void)state;
    assert_int_equal(aka_opts_subcommand("wiki", names, 3, ok, &err), 1);
    assert_int_equal(aka_opts_subcommand("wiki", names, 2, bad, &err), -1);
    assert_string_equal(err.msg, "wiki: 'frob': unknown subcommand; expected one of query, show "
                                 "(see aka wiki --help)");
    assert_int_equal(aka_opts_subcommand("wiki", names, 1, none, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    char *line[] = {"optimize", "--framework",      "C",   "--op-dir",
                    "d",        "--framework=Cuda", "--x", NULL};
    static const char *const drop[] = {"--framework", NULL};
    aka_opts_argv_without(7, line, 1, drop, &out);
    assert_int_equal(out.n, 3);
    assert_string_equal(out.v[0], "--op-dir");
    assert_string_equal(out.v[2], "--x");
    strvec_clear(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_every_kind),
        cmocka_unit_test(test_positional_and_dashdash),
        cmocka_unit_test(test_environment),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_env_errors),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_subcommand_and_handing_on),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
