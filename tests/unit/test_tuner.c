/*
 * test_tuner.c — the built-in tuner's pure pieces (agents/tuner.h): knob
 * annotations in C and Python comments, malformed ones rejected with
 * file:line, defaults rewritten, neighbour order, the never-repeat rule, random
 * restarts at a local optimum, and compiler flags as knobs (a closed table: no
 * flag that changes numerics beyond one rounding is ever produced).
 */
#include "aka_test.h"

#include "agents/tuner.h"
#include "agents/tuner_internal.h"
#include "base/fs.h"
#include "base/sha256.h"
#include "evaluator/evaluator.h"

#include <string.h>

static const char c_kernel[] =
    "/*\n"
    " * A kernel. aka:tune BLOCK in {1, 2, 4}\n"
    " */\n"
    "// aka:tune UNROLL in {a,b}\n"
    "#ifndef BLOCK\n"
    "#define BLOCK 2 /* the default */\n"
    "#endif\n"
    "#ifndef UNROLL\n"
    "#  define UNROLL b\n"
    "#endif\n"
    "/* aka:tune VEC in {8, 16, 32} */ int x; // aka:tune is prose here? no\n";

static void parse_ok(const char *text, enum aka_tune_lang lang, struct aka_knob_space *s)
{
    struct aka_err err = AKA_ERR_INIT;
    int rc = aka_tune_parse("k", text, lang, s, &err);
    if (rc < 0)
        print_error("%s\n", err.msg);
    assert_int_equal(rc, 0);
}

static void expect_parse_error(const char *text, enum aka_tune_lang lang, const char *want)
{
    struct aka_knob_space s;
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(aka_tune_parse("kernel.c", text, lang, &s, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    if (!strstr(err.msg, want))
        print_error("got: %s\nwant: %s\n", err.msg, want);
    assert_non_null(strstr(err.msg, want));
}

static void test_parse_c_comment_styles(void **state)
{
    (void)state;
    struct aka_knob_space s;
    /* The last line has two comments: the second one's aka:tune is malformed prose. */
    expect_parse_error(c_kernel, AKA_TUNE_LANG_C, "kernel.c:11: malformed annotation");
    const char *end = strstr(c_kernel, "int x;");
    char text[sizeof(c_kernel)];
    snprintf(text, sizeof(text), "%.*s\n#define VEC 16\n", (int)(end - c_kernel), c_kernel);
    parse_ok(text, AKA_TUNE_LANG_C, &s);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.v[0].name, "BLOCK");
    assert_int_equal(s.v[0].line, 2);
    assert_int_equal(s.v[0].values.n, 3);
    assert_int_equal(s.v[0].dflt, 1);
    assert_int_equal(s.v[0].def_line, 6);
    assert_string_equal(s.v[1].name, "UNROLL");
    assert_string_equal(s.v[1].values.v[1], "b");
    assert_int_equal(s.v[1].dflt, 1);
    assert_string_equal(s.v[2].name, "VEC");
    assert_int_equal(s.v[2].dflt, 1);
    assert_int_equal(aka_tune_space_size(&s), 18);
    aka_knob_space_release(&s);
}

static void test_parse_python_and_code_ignored(void **state)
{
    (void)state;
    struct aka_knob_space s;
    const char *py = "import triton\n"
                     "# aka:tune BLOCK in {64, 128, 256}\n"
                     "BLOCK = 128\n"
                     "#aka:tune NUM_WARPS in {4,8}\n"
                     "NUM_WARPS: int = 8  # warps per program\n"
                     "x = 'aka:tune NOT in {1}'\n"
                     "def f():\n"
                     "    BLOCK2 = 3\n";
    parse_ok(py, AKA_TUNE_LANG_PYTHON, &s);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.v[0].name, "BLOCK");
    assert_int_equal(s.v[0].dflt, 1);
    assert_string_equal(s.v[1].name, "NUM_WARPS");
    assert_int_equal(s.v[1].dflt, 1);
    aka_knob_space_release(&s);
    /* '//' is not a comment in Python, '#' is not one in C. */
    parse_ok("// aka:tune X in {1}\n", AKA_TUNE_LANG_PYTHON, &s);
    assert_int_equal(s.n, 0);
    parse_ok("#define Y 1 # aka:tune Y in {1}\n", AKA_TUNE_LANG_C, &s);
    assert_int_equal(s.n, 0);
    assert_int_equal(aka_tune_lang_for("k/kernel.py"), AKA_TUNE_LANG_PYTHON);
    assert_int_equal(aka_tune_lang_for("kernel.cu"), AKA_TUNE_LANG_C);
}

static void test_malformed_annotations(void **state)
{
    (void)state;
    enum aka_tune_lang c = AKA_TUNE_LANG_C;
    expect_parse_error("\n// aka:tune B {1, 2}\n#define B 1\n", c, "kernel.c:2: malformed");
    expect_parse_error("// aka:tune B in 1, 2\n#define B 1\n", c, "expected '{'");
    expect_parse_error("// aka:tune B in {1,,2}\n#define B 1\n", c, "expected a value");
    expect_parse_error("// aka:tune B in {1, 2\n#define B 1\n", c, "expected ',' or '}'");
    expect_parse_error("// aka:tune B in {1, 1}\n#define B 1\n", c, "listed twice");
    expect_parse_error("// aka:tune B in {1} x\n#define B 1\n", c, "unexpected text");
    expect_parse_error("// aka:tune 9B in {1}\n", c, "expected a knob name");
    expect_parse_error("// aka:tune B in {1}\n// aka:tune B in {2}\n#define B 1\n", c,
                       "kernel.c:2: malformed annotation: this knob is already declared");
    expect_parse_error("\n\n/* aka:tune B in {1, 2} */\n", c, "kernel.c:3: knob B has no default");
    expect_parse_error("// aka:tune B in {1, 2}\n\n#define B 3\n", c,
                       "kernel.c:3: the default 3 of knob B is not in its set (line 1)");
    expect_parse_error("# aka:tune B in {1, 2}\nB == 1\n", AKA_TUNE_LANG_PYTHON, "no default");
}

static void test_rewrite_defaults(void **state)
{
    (void)state;
    struct aka_knob_space s, again;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf out = STRBUF_INIT;
    const char *text = "/* aka:tune T in {16, 32, 64} */\n#ifndef T\n#define T 32 // tile\n"
                       "#endif\n// aka:tune U in {0, 1}\n#define U 0\nint t = T;";
    parse_ok(text, AKA_TUNE_LANG_C, &s);
    size_t idx[2] = {2, 1};
    assert_int_equal(aka_tune_rewrite("k", text, &s, idx, &out, &err), 0);
    assert_string_equal(out.buf, "/* aka:tune T in {16, 32, 64} */\n#ifndef T\n#define T 64 // "
                                 "tile\n#endif\n// aka:tune U in {0, 1}\n#define U 1\nint t = T;");
    parse_ok(out.buf, AKA_TUNE_LANG_C, &again);
    assert_int_equal(again.v[0].dflt, 2);
    assert_int_equal(again.v[1].dflt, 1);
    aka_knob_space_release(&again);
    /* The file changed under the parsed space: refused, never a silent half-rewrite. */
    assert_int_equal(aka_tune_rewrite("k", "#define X 1\n", &s, idx, &out, &err), -1);
    assert_non_null(strstr(err.msg, "changed since it was parsed"));
    aka_knob_space_release(&s);

    const char *py = "# aka:tune BLOCK in {64, 128}\nBLOCK: int = 64  # rows\n";
    parse_ok(py, AKA_TUNE_LANG_PYTHON, &s);
    size_t one = 1;
    assert_int_equal(aka_tune_rewrite("k", py, &s, &one, &out, &err), 0);
    assert_string_equal(out.buf, "# aka:tune BLOCK in {64, 128}\nBLOCK: int = 128  # rows\n");
    aka_knob_space_release(&s);
    strbuf_release(&out);
}

static const char grid[] = "// aka:tune A in {1, 2, 3}\n#define A 2\n"
                           "// aka:tune B in {x, y}\n#define B x\n";

static void test_neighbours_in_order(void **state)
{
    (void)state;
    struct aka_knob_space s;
    struct aka_tune_history h = {STRVEC_INIT, STRVEC_INIT};
    struct strbuf key = STRBUF_INIT;
    size_t center[2], next[2];
    /* Distance 1 first (A down, A up, B up), then distance 2, then nothing. */
    static const char *const want[] = {"A=1,B=x", "A=3,B=x", "A=2,B=y", "A=1,B=y", "A=3,B=y", NULL};
    parse_ok(grid, AKA_TUNE_LANG_C, &s);
    aka_tune_defaults(&s, center);
    aka_tune_history_add_key(&h, &s, center);
    for (const char *const *w = want; *w; w++) {
        assert_true(aka_tune_nearest(&s, &h, grid, center, next));
        aka_tune_key(&s, next, &key);
        assert_string_equal(key.buf, *w);
        aka_tune_history_add_key(&h, &s, next);
    }
    assert_false(aka_tune_nearest(&s, &h, grid, center, next));
    strbuf_release(&key);
    aka_tune_history_release(&h);
    aka_knob_space_release(&s);
}

static void test_never_repeat(void **state)
{
    (void)state;
    struct aka_knob_space s;
    struct aka_tune_history h = {STRVEC_INIT, STRVEC_INIT};
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf bytes = STRBUF_INIT;
    char hex[AKA_SHA256_HEX_LEN + 1];
    size_t idx[2] = {0, 1}, next[2];
    parse_ok(grid, AKA_TUNE_LANG_C, &s);
    /* A record evaluated without knobs is recognised by the hash of the rewritten kernel. */
    assert_int_equal(aka_tune_rewrite("k", grid, &s, idx, &bytes, &err), 0);
    aka_sha256_hex(bytes.buf, bytes.len, hex);
    json_t *doc = json_pack("{s:[{s:{s:i, s:s}}, {s:{s:s}}, {s:{s:s, s:s}}], s:{s:s}}", "runs",
                            "tune", "A", 3, "B", "x", "tune", "A", "1", "tune", "A", "9", "B", "x",
                            "result", "kernel_sha256", hex);
    aka_tune_history_add_json(&h, &s, doc);
    json_decref(doc);
    assert_int_equal(h.keys.n, 1); /* {A:1} is incomplete and A=9 is not in the space */
    assert_string_equal(h.keys.v[0], "A=3,B=x");
    assert_true(aka_tune_tried(&h, &s, grid, idx));
    assert_false(aka_tune_tried(&h, &s, NULL, idx)); /* keys only */
    /* Random draws never return a recorded configuration, and stop when none is left. */
    uint64_t rng = 7;
    for (int i = 0; i < 4; i++) {
        assert_true(aka_tune_random(&s, &h, grid, &rng, next));
        assert_false(aka_tune_tried(&h, &s, grid, next));
        aka_tune_history_add_key(&h, &s, next);
    }
    assert_false(aka_tune_random(&s, &h, grid, &rng, next));
    strbuf_release(&bytes);
    aka_tune_history_release(&h);
    aka_knob_space_release(&s);
}

/* The bundled native seeds declare the spaces the built-in agent tunes (issue: bundled C
 * matmul and softmax declare tuning spaces). */
static void test_bundled_seeds(void **state)
{
    (void)state;
    static const struct {
        const char *path;
        size_t knobs, configs;
    } seeds[] = {/* every bundled seed: the built-in agent tunes each of them */
                 {"examples/ops/matmul/seeds/C/kernel.c", 8, 1296},
                 {"examples/ops/row_softmax/seeds/C/kernel.c", 2, 8},
                 {"examples/ops/vector_add/seeds/C/kernel.c", 1, 4},
                 {"examples/ops/row_sum_cuda/seeds/Cuda/kernel.cu", 1, 4},
                 {"examples/ops/rmsnorm/seeds/Triton/kernel.py", 1, 3},
                 {"examples/ops/silu_and_mul/seeds/Triton/kernel.py", 1, 3},
                 {"examples/ops/rope/seeds/Triton/kernel.py", 6, 10752}};
    for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
        struct strbuf path = STRBUF_INIT, text = STRBUF_INIT;
        struct aka_knob_space s;
        struct aka_err err = AKA_ERR_INIT;
        strbuf_addf(&path, "%s/%s", AKA_SOURCE_DIR, seeds[i].path);
        assert_int_equal(aka_read_file(path.buf, &text, 1 << 20, &err), 0);
        parse_ok(text.buf, aka_tune_lang_for(path.buf), &s);
        assert_int_equal(s.n, seeds[i].knobs);
        assert_int_equal(aka_tune_space_size(&s), seeds[i].configs);
        aka_knob_space_release(&s);
        strbuf_release(&path);
        strbuf_release(&text);
    }
}

/* A whole search over the bundled matmul seed's space: never a configuration twice, and
 * once a centre's neighbours are all tried the next trial jumps (a random restart). */
static void test_search_restarts_never_repeats(void **state)
{
    (void)state;
    struct strbuf path = STRBUF_INIT, text = STRBUF_INIT, key = STRBUF_INIT;
    struct aka_knob_space s;
    struct aka_tune_history h = {STRVEC_INIT, STRVEC_INIT};
    struct aka_err err = AKA_ERR_INIT;
    size_t best[AKA_TUNE_MAX_KNOBS], next[AKA_TUNE_MAX_KNOBS];
    uint64_t rng = 42;
    int far = 0;
    strbuf_addf(&path, "%s/examples/ops/matmul/seeds/C/kernel.c", AKA_SOURCE_DIR);
    assert_int_equal(aka_read_file(path.buf, &text, 1 << 20, &err), 0);
    parse_ok(text.buf, AKA_TUNE_LANG_C, &s);
    aka_tune_defaults(&s, best);
    aka_tune_history_add_key(&h, &s, best);
    for (int t = 0; t < 200; t++) {
        assert_true(aka_tune_next(&s, &h, text.buf, false, t, best, &rng, next));
        aka_tune_key(&s, next, &key);
        assert_int_equal(strvec_find(&h.keys, key.buf), -1);
        size_t d = 0;
        for (size_t i = 0; i < s.n; i++)
            d += next[i] > best[i] ? next[i] - best[i] : best[i] - next[i];
        assert_true(t >= 11 || d == 1); /* the 11 neighbours first */
        far += d >= 4;
        aka_tune_history_add_key(&h, &s, next);
    }
    /* Then restarts: a descent alone would creep through the hundreds of configurations
     * within distance 3 before any farther one. */
    assert_true(far >= 100);
    assert_int_equal(h.keys.n, 201);
    strbuf_release(&key);
    strbuf_release(&path);
    strbuf_release(&text);
    aka_tune_history_release(&h);
    aka_knob_space_release(&s);
}

/* Flags no knob may ever produce: each changes results beyond the rounding of one op. */
static bool forbidden_flag(const char *f)
{
    static const char *const bad[] = {"-ffast-math",
                                      "-Ofast",
                                      "-funsafe-math-optimizations",
                                      "-fassociative-math",
                                      "-freciprocal-math",
                                      "-ffinite-math-only",
                                      "-fno-signed-zeros",
                                      "-fno-trapping-math",
                                      "-fcx-limited-range",
                                      "-fno-rounding-math",
                                      NULL};
    for (const char *const *b = bad; *b; b++)
        if (strcmp(f, *b) == 0)
            return true;
    return f[0] != '-' || strstr(f, "fast-math") || strstr(f, "unsafe");
}

/* Every configuration of the bundled matmul seed, rewritten as the tuner commits it and
 * turned into flags as the evaluator does: only table flags, none forbidden. */
static void test_cc_flags_of_every_config(void **state)
{
    (void)state;
    struct strbuf path = STRBUF_INIT, text = STRBUF_INIT, out = STRBUF_INIT;
    struct aka_knob_space s;
    struct aka_err err = AKA_ERR_INIT;
    size_t idx[AKA_TUNE_MAX_KNOBS];
    int fma = 0;
    strbuf_addf(&path, "%s/examples/ops/matmul/seeds/C/kernel.c", AKA_SOURCE_DIR);
    assert_int_equal(aka_read_file(path.buf, &text, 1 << 20, &err), 0);
    parse_ok(text.buf, AKA_TUNE_LANG_C, &s);
    for (size_t e = 0; e < aka_tune_space_size(&s); e++) {
        struct strvec flags = STRVEC_INIT;
        size_t x = e;
        for (size_t i = s.n; i-- > 0; x /= s.v[i].values.n)
            idx[i] = x % s.v[i].values.n;
        assert_int_equal(aka_tune_rewrite("k", text.buf, &s, idx, &out, &err), 0);
        assert_int_equal(aka_cc_knob_flags("kernel.c", out.buf, NULL, &flags, &err), 0);
        for (size_t f = 0; f < flags.n; f++) {
            assert_false(forbidden_flag(flags.v[f]));
            fma += strcmp(flags.v[f], "-ffp-contract=fast") == 0;
        }
        strvec_clear(&flags);
    }
    assert_int_equal(fma, 1296 / 2); /* the knobs do reach the flags */
    for (size_t i = 0; i < aka_cc_knob_count(); i++) {
        const char *flag = NULL;
        for (size_t v = 0; aka_cc_knob_at(i, v, &flag); v++)
            assert_true(!flag || !forbidden_flag(flag));
    }
    strbuf_release(&out);
    strbuf_release(&path);
    strbuf_release(&text);
    aka_knob_space_release(&s);
}

static void test_cc_flags_bad_input(void **state)
{
    (void)state;
    struct aka_err err = AKA_ERR_INIT;
    struct strvec flags = STRVEC_INIT, tune = STRVEC_INIT;
    const char *k = "int x;\n#define AKA_CC_OPT O3\n#  define AKA_CC_ARCH native\n";
    assert_int_equal(aka_cc_knob_flags("k.c", k, NULL, &flags, &err), 0);
    assert_int_equal(flags.n, 2);
    assert_string_equal(flags.v[0], "-O3");
    assert_string_equal(flags.v[1], "-march=native");
    strvec_clear(&flags);
    strvec_push(&tune, "AKA_CC_OPT=O2"); /* --tune wins over the kernel's default */
    assert_int_equal(aka_cc_knob_flags("k.c", k, &tune, &flags, &err), 0);
    assert_string_equal(flags.v[0], "-O2");
    strvec_clear(&flags);
    assert_int_equal(aka_cc_knob_flags("k.c", "\n#define AKA_CC_OPT Ofast\n", NULL, &flags, &err),
                     -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    assert_string_equal(err.msg, "k.c:2: AKA_CC_OPT: expected one of O2, O3; got 'Ofast'");
    strvec_clear(&tune);
    strvec_push(&tune, "AKA_CC_MATH=fast");
    assert_int_equal(aka_cc_knob_flags("k.c", "", &tune, &flags, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "--tune AKA_CC_MATH=fast: AKA_CC_MATH: expected a compiler "
                                    "knob (one of AKA_CC_OPT, "));
    assert_int_equal(flags.n, 0);
    strvec_clear(&tune);
}

static void test_kind_from_brief(void **state)
{
    (void)state;
    assert_int_equal(aka_tune_kind_from_brief("# Episode 3 (goal): x\n(full)"), AKA_EPISODE_GOAL);
    assert_int_equal(aka_tune_kind_from_brief("# Episode 3 (full): x"), AKA_EPISODE_FULL);
    assert_int_equal(aka_tune_kind_from_brief("# Episode 3 (fast): x"), AKA_EPISODE_FAST);
    assert_int_equal(aka_tune_kind_from_brief("no title\n(goal)"), AKA_EPISODE_FAST);
}

/* A winner beats the incumbent by its score and by its latency geomean, as the supervisor's
 * fast verification asks; one measure alone decides only when the other is missing. */
static void test_better_by_score_and_latency(void **state)
{
    (void)state;
    struct tune_trial inc = {.pass = true, .score = 10.0, .latency = 20.0};
    struct tune_trial t = inc;
    t.score = 11.9, t.latency = 23.0; /* +19% by score, 15% slower (row_sum_cuda's v2) */
    assert_false(tune_better(&t, &inc, 1.0));
    t.latency = 19.0; /* faster too */
    assert_true(tune_better(&t, &inc, 1.0));
    assert_false(tune_better(&t, &inc, 10.0)); /* 5% faster is not 10% */
    t.score = AKA_MISSING;                     /* latency alone */
    assert_true(tune_better(&t, &inc, 1.0));
    t.latency = AKA_MISSING;
    assert_false(tune_better(&t, &inc, 1.0)); /* nothing comparable */
    t = inc, t.pass = false, t.score = 100.0, t.latency = 1.0;
    assert_false(tune_better(&t, &inc, 1.0)); /* a failing trial never wins */
    inc.pass = false;
    t.pass = true;
    assert_true(tune_better(&t, &inc, 1.0)); /* anything passing beats a failing incumbent */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_c_comment_styles),
        cmocka_unit_test(test_parse_python_and_code_ignored),
        cmocka_unit_test(test_malformed_annotations),
        cmocka_unit_test(test_rewrite_defaults),
        cmocka_unit_test(test_neighbours_in_order),
        cmocka_unit_test(test_never_repeat),
        cmocka_unit_test(test_bundled_seeds),
        cmocka_unit_test(test_kind_from_brief),
        cmocka_unit_test(test_search_restarts_never_repeats),
        cmocka_unit_test(test_cc_flags_of_every_config),
        cmocka_unit_test(test_cc_flags_bad_input),
        cmocka_unit_test(test_better_by_score_and_latency),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
