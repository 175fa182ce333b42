/*
 * test_verify_stats.c — the ABBA decision under injected timing noise (DESIGN §5):
 * an identical candidate is never promoted in 100 trials at 3% noise, a truly
 * 10% faster one is promoted in at least 95 of 100; dispersion and per-shape
 * regression limits reject; malformed samples are errors.
 */
#include "aka_test.h"

#include "optimize/optimize.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define REPEATS 2
#define SHAPES  5

/* Box-Muller over a seeded xorshift: reproducible lognormal noise. */
static double gauss(uint64_t *s)
{
    double u[2];
    for (int i = 0; i < 2; i++) {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        u[i] = ((double)(*s >> 11) + 0.5) / 9007199254740992.0;
    }
    return sqrt(-2.0 * log(u[0])) * cos(2.0 * M_PI * u[1]);
}

/* Fill I C C I runs; the candidate's true latency is base / speedup. */
static void simulate(double *lat, double speedup, double noise, uint64_t *seed)
{
    static const double base[SHAPES] = {12.0, 40.0, 150.0, 800.0, 3.5};
    for (size_t r = 0; r < REPEATS; r++)
        for (size_t slot = 0; slot < 4; slot++)
            for (size_t k = 0; k < SHAPES; k++) {
                double truth = (slot == 1 || slot == 2) ? base[k] / speedup : base[k];
                lat[(r * 4 + slot) * SHAPES + k] = truth * exp(noise * gauss(seed));
            }
}

static struct aka_verify_limits limits(void)
{
    struct aka_optimize_opts o;
    struct aka_verify_limits l;
    aka_optimize_opts_init(&o);
    aka_verify_limits_from_opts(&o, &l); /* the defaults a campaign runs with */
    return l;
}

static int promotions(double speedup, double noise, uint64_t seed)
{
    double lat[REPEATS * 4 * SHAPES];
    struct aka_abba_samples s = {REPEATS, SHAPES, lat};
    struct aka_verify_limits l = limits();
    int promoted = 0;
    for (int trial = 0; trial < 100; trial++) {
        struct aka_verify_stats st;
        struct aka_err err = AKA_ERR_INIT;
        simulate(lat, speedup, noise, &seed);
        l.seed = (unsigned long long)trial + 1;
        assert_int_equal(aka_verify_abba(&s, &l, &st, &err), 0);
        promoted += st.promote;
    }
    return promoted;
}

static void test_identical_never_promoted(void **state)
{
    (void)state;
    assert_int_equal(promotions(1.0, 0.03, 0x1234567u), 0);
    assert_int_equal(promotions(1.0, 0.03, 0xdeadbeefu), 0);
}

static void test_ten_percent_faster_promoted(void **state)
{
    (void)state;
    assert_true(promotions(1.10, 0.03, 0x1234567u) >= 95);
    assert_true(promotions(1.10, 0.03, 0xfeedfaceu) >= 95);
}

static void test_slower_never_promoted(void **state)
{
    (void)state;
    assert_int_equal(promotions(0.95, 0.03, 42), 0);
}

static void test_min_improvement_threshold(void **state)
{
    (void)state;
    double lat[REPEATS * 4 * SHAPES];
    uint64_t seed = 7;
    struct aka_abba_samples s = {REPEATS, SHAPES, lat};
    struct aka_verify_limits l = limits();
    struct aka_verify_stats st;
    struct aka_err err = AKA_ERR_INIT;
    simulate(lat, 1.10, 0.0, &seed); /* exactly 10% faster, no noise */
    l.min_improvement_pct = 12.0;
    assert_int_equal(aka_verify_abba(&s, &l, &st, &err), 0);
    assert_false(st.promote);
    assert_true(fabs(st.improvement_pct - 10.0) < 1e-6);
    l.min_improvement_pct = 5.0;
    assert_int_equal(aka_verify_abba(&s, &l, &st, &err), 0);
    assert_true(st.promote);
}

static void test_dispersion_and_regression_limits(void **state)
{
    (void)state;
    double lat[REPEATS * 4 * SHAPES];
    uint64_t seed = 99;
    struct aka_abba_samples s = {REPEATS, SHAPES, lat};
    struct aka_verify_limits l = limits();
    struct aka_verify_stats st;
    struct aka_err err = AKA_ERR_INIT;
    simulate(lat, 2.0, 0.0, &seed);
    for (size_t r = 0; r < REPEATS; r++) /* shape 2: candidate 8% slower */
        for (size_t slot = 1; slot <= 2; slot++)
            lat[(r * 4 + slot) * SHAPES + 2] = 150.0 * 1.08;
    l.max_shape_regression_pct = 5.0;
    assert_int_equal(aka_verify_abba(&s, &l, &st, &err), 0);
    assert_false(st.promote);
    assert_int_equal(st.worst_shape, 2);
    assert_non_null(strstr(st.reason, "regressed"));
    l.max_shape_regression_pct = -1; /* leaderboard: not checked */
    assert_int_equal(aka_verify_abba(&s, &l, &st, &err), 0);
    assert_true(st.promote);
    simulate(lat, 1.5, 0.30, &seed); /* 30% noise: too dispersed to trust */
    assert_int_equal(aka_verify_abba(&s, &l, &st, &err), 0);
    assert_false(st.promote);
}

static void test_malformed_samples(void **state)
{
    (void)state;
    double lat[4] = {1, 1, -1, 1};
    struct aka_abba_samples s = {1, 1, lat};
    struct aka_verify_limits l = limits();
    struct aka_verify_stats st;
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(aka_verify_abba(&s, &l, &st, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    s.lat = NULL;
    assert_int_equal(aka_verify_abba(&s, &l, &st, &err), -1);
    lat[2] = 1;
    s.lat = lat; /* one pair: no spread, never enough evidence */
    lat[1] = lat[2] = 0.5;
    assert_int_equal(aka_verify_abba(&s, &l, &st, &err), 0);
    assert_false(st.promote);
}

/* Latencies of two timing methods are never compared; an unknown side (a record from before
 * records said) is. */
static void test_timing_methods(void **state)
{
    (void)state;
    assert_true(aka_verify_same_timing("cuda_event", "cuda_event"));
    assert_false(aka_verify_same_timing("cuda_event", "cupti_kernel_span"));
    assert_false(aka_verify_same_timing("cupti_kernel_span", "cupti_kernel_span_graph"));
    assert_true(aka_verify_same_timing(NULL, "cupti_kernel_span"));
    assert_true(aka_verify_same_timing("cpu_time", ""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identical_never_promoted),
        cmocka_unit_test(test_ten_percent_faster_promoted),
        cmocka_unit_test(test_slower_never_promoted),
        cmocka_unit_test(test_min_improvement_threshold),
        cmocka_unit_test(test_dispersion_and_regression_limits),
        cmocka_unit_test(test_malformed_samples),
        cmocka_unit_test(test_timing_methods),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
