/*
 * fill_test.c — the native judge's timed-input generator (harness_data.c,
 * hx_fill_timed), built with the judge's own files by tests/integration/native_fill.sh.
 *
 * What must hold for the parallel fill to be safe:
 *   - the values do not depend on how many threads filled them (one thread before
 *     hx_pin, several after), so an evaluation's inputs are the same on any host;
 *   - each 2^20-element chunk has its own stream (no chunk repeats another), every
 *     value is in [-1, 1), and another copy index gives other values;
 *   - the judge's own thread keeps the single CPU hx_pin gave it, and a helper
 *     (hx_pin_helper) runs on the others only: a helper left on the judge's CPU shared
 *     it with the judge's thread and the helpers gained nothing;
 *   - a tensor of one chunk gets the sequential generator's values (chunk 0 is the
 *     stream hx_fill_timed always used);
 *   - hx_fill_gen (what the judge computes for a device-generated timed input) is
 *     hp_gen_f32 element by element, the function the CUDA runner's kernel evaluates,
 *     whoever filled which chunk; other keys and tensor indices give other values;
 *   - hx_check_gen (how the judge compares a generated input that came back) finds
 *     nothing in an untouched tensor and, wherever one element changed (first chunk,
 *     a later chunk, the last element, several chunks at once), the first changed
 *     element's index.
 */
#define _GNU_SOURCE
#include "harness_core.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void check(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok" : "FAIL", what);
    failures += !ok;
}

static hx_tensor tensor(int64_t numel)
{
    static char name[] = "x";
    hx_tensor t;
    memset(&t, 0, sizeof(t));
    t.name = name;
    t.dtype = AKA_DT_FLOAT32;
    t.numel = numel;
    t.bytes = (size_t)numel * 4;
    return t;
}

static float *filled(const hx_tensor *t, uint32_t copy)
{
    float *f = malloc(t->bytes);
    if (!f)
        exit(1);
    hx_fill_timed(f, t, 0x1234, "r4096_c4096", copy);
    return f;
}

/* hx_fill_gen against hp_gen_f32, after hx_pin (the helpers' path where there are CPUs). */
static void check_gen(const hx_tensor *big)
{
    float *g = malloc(big->bytes), *h = malloc(big->bytes);
    if (!g || !h)
        exit(1);
    hx_fill_gen(g, big, 0xABCDEF, 2);
    int same = 1, in_range = 1;
    for (int64_t i = 0; i < big->numel; i++) {
        same &= g[i] == hp_gen_f32(0xABCDEF, 2, (uint64_t)i);
        in_range &= g[i] >= -1.0f && g[i] < 1.0f;
    }
    check(same, "hx_fill_gen is hp_gen_f32 element by element");
    check(in_range, "device-generated values in [-1, 1)");
    hx_fill_gen(h, big, 0xABCDEF, 3);
    check(memcmp(g, h, big->bytes) != 0, "another tensor index, other values");
    hx_fill_gen(h, big, 0xABCDEE, 2);
    check(memcmp(g, h, big->bytes) != 0, "another key, other values");
    double sum = 0;
    for (int64_t i = 0; i < big->numel; i++)
        sum += g[i];
    check(fabs(sum / (double)big->numel) < 0.01, "device-generated values centred on 0");
    free(g), free(h);
}

/* hx_check_gen against one changed element at i (and optionally a later one at k). */
static int64_t changed_at(float *g, const hx_tensor *big, int64_t i, int64_t k)
{
    hx_fill_gen(g, big, 0x5EED, 1);
    uint32_t bits;
    memcpy(&bits, &g[i], sizeof(bits));
    bits ^= 0x80000000u; /* the sign bit */
    memcpy(&g[i], &bits, sizeof(bits));
    if (k >= 0)
        g[k] += 1.0f;
    return hx_check_gen(g, big, 0x5EED, 1);
}

/* A helper's CPUs after hx_pin_helper: none of the judge's, at least one. */
static void *helper_cpus(void *arg)
{
    cpu_set_t *set = arg;
    hx_pin_helper();
    if (sched_getaffinity(0, sizeof(*set), set) != 0)
        CPU_ZERO(set);
    return NULL;
}

static void check_helper_cpus(void)
{
    cpu_set_t judge, helper, both;
    pthread_t tid;
    if (hx_cpus() < 2) {
        printf("note: one CPU here: no helper runs, so none is moved\n");
        return;
    }
    check(sched_getaffinity(0, sizeof(judge), &judge) == 0 &&
              pthread_create(&tid, NULL, helper_cpus, &helper) == 0 && pthread_join(tid, NULL) == 0,
          "a helper thread reports its CPUs");
    CPU_AND(&both, &judge, &helper);
    check(CPU_COUNT(&helper) >= 1 && CPU_COUNT(&both) == 0,
          "a helper runs on CPUs the judge's thread does not hold");
}

static void check_compare(const hx_tensor *big)
{
    float *g = malloc(big->bytes);
    if (!g)
        exit(1);
    hx_fill_gen(g, big, 0x5EED, 1);
    check(hx_check_gen(g, big, 0x5EED, 1) == -1, "an untouched generated input compares equal");
    check(hx_check_gen(g, big, 0x5EED, 2) == 0, "another tensor index differs at element 0");
    int64_t last = big->numel - 1, later = ((int64_t)3 << 20) + 5;
    check(changed_at(g, big, 7, -1) == 7, "a change in the first chunk is found at its index");
    check(changed_at(g, big, later, -1) == later, "a change in a later chunk is found");
    check(changed_at(g, big, last, -1) == last, "a change in the last element is found");
    check(changed_at(g, big, later, 9) == 9, "of two changes, the first one's index");
    free(g);
}

int main(void)
{
    const int64_t chunk = (int64_t)1 << 20, n = 5 * chunk + 12345;
    hx_tensor big = tensor(n), small = tensor(1000);
    double t0 = hx_now_us();
    float *one = filled(&big, 7), *small_one = filled(&small, 7);
    double t1 = hx_now_us();
    hx_pin();
    int cpus = hx_cpus();
    float *many = filled(&big, 7);
    double t2 = hx_now_us();
    float *other = filled(&big, 6);
    printf("fill of %lld floats: %.0f us on one thread, %.0f us on %d CPUs\n", (long long)n,
           t1 - t0, t2 - t1, cpus);
    cpu_set_t mine;
    check(memcmp(one, many, big.bytes) == 0,
          "the same values from one thread and from the judge's helpers");
    if (cpus < 2)
        printf("note: one CPU here: the helpers' path did not run\n");
    check(sched_getaffinity(0, sizeof(mine), &mine) == 0 && (cpus < 2 || CPU_COUNT(&mine) == 1),
          "the judge's thread keeps its one CPU after a parallel fill");
    int in_range = 1;
    for (int64_t i = 0; i < n; i++)
        in_range &= one[i] >= -1.0f && one[i] < 1.0f;
    check(in_range, "every value in [-1, 1)");
    int distinct = 1;
    for (int64_t c = 1; c * chunk < n; c++)
        distinct &= memcmp(one, one + c * chunk, 64 * sizeof(float)) != 0;
    check(distinct, "each chunk has its own stream");
    check(memcmp(one, other, big.bytes) != 0, "another copy index, other values");
    /* Fresh inputs for every run: no chunk of one run's input starts like any chunk of the
     * next run's (a content cache keyed on a few elements never hits). */
    int fresh = 1;
    for (int64_t a = 0; a * chunk < n; a++)
        for (int64_t b = 0; b * chunk < n; b++)
            fresh &= memcmp(one + a * chunk, other + b * chunk, 64 * sizeof(float)) != 0;
    check(fresh, "no chunk of one copy repeats a chunk of another");
    check(memcmp(small_one, one, small.bytes) == 0,
          "a one-chunk tensor's values are chunk 0's stream");
    free(one), free(many), free(other), free(small_one);
    check_gen(&big);
    check_compare(&big);
    check_helper_cpus();
    return failures ? 1 : 0;
}
