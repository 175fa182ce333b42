/*
 * kernel.c — per-kernel accumulation shared by the parsers: launches of one
 * kernel are averaged field by field (a field a launch did not collect does
 * not count as zero), then kernels are sorted by duration and given a bound.
 */
#include "profile/internal.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

const char *const aka_profile_field_names[] = {
    "duration_ns",   "compute_sol_pct", "memory_sol_pct", "dram_pct", "dram_gbps",
    "occupancy_pct", "registers",       "smem_bytes",     "flop",     NULL};
const char *const aka_profile_bound_names[] = {"unknown", "memory", "compute", "latency", NULL};

void aka_profile_summary_init(struct aka_profile_summary *s)
{
    memset(s, 0, sizeof(*s));
}

void aka_profile_summary_release(struct aka_profile_summary *s)
{
    for (size_t i = 0; i < s->kernels.n; i++) {
        struct aka_profile_kernel *k = &s->kernels.v[i];
        for (size_t j = 0; j < k->stalls.n; j++)
            free(k->stalls.v[j].name);
        free(k->stalls.v);
        free(k->name);
        free(k->launch);
    }
    free(s->kernels.v);
    free(s->source);
    memset(s, 0, sizeof(*s));
}

static bool same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

struct aka_profile_kernel *aka_profile_kernel_get(struct aka_profile_summary *s, const char *name,
                                                  const char *launch)
{
    for (size_t i = 0; i < s->kernels.n; i++)
        if (strcmp(s->kernels.v[i].name, name) == 0 && same(s->kernels.v[i].launch, launch))
            return &s->kernels.v[i];
    if (s->kernels.n == s->kernels.alloc) {
        s->kernels.alloc = s->kernels.alloc ? 2 * s->kernels.alloc : 8;
        s->kernels.v = aka_xrealloc(s->kernels.v, s->kernels.alloc * sizeof(*s->kernels.v));
    }
    struct aka_profile_kernel *k = &s->kernels.v[s->kernels.n++];
    memset(k, 0, sizeof(*k));
    k->name = aka_xstrdup(name);
    k->launch = launch ? aka_xstrdup(launch) : NULL;
    return k;
}

void aka_profile_kernel_add(struct aka_profile_kernel *k, enum aka_profile_field f, double v)
{
    k->acc[f].sum += v;
    k->acc[f].n++;
}

void aka_profile_kernel_stall(struct aka_profile_kernel *k, const char *reason, double v)
{
    struct aka_profile_stall *st = NULL;
    for (size_t i = 0; i < k->stalls.n && !st; i++)
        if (strcmp(k->stalls.v[i].name, reason) == 0)
            st = &k->stalls.v[i];
    if (!st) {
        if (k->stalls.n == k->stalls.alloc) {
            k->stalls.alloc = k->stalls.alloc ? 2 * k->stalls.alloc : 8;
            k->stalls.v = aka_xrealloc(k->stalls.v, k->stalls.alloc * sizeof(*k->stalls.v));
        }
        st = &k->stalls.v[k->stalls.n++];
        memset(st, 0, sizeof(*st));
        st->name = aka_xstrdup(reason);
    }
    st->acc.sum += v;
    st->acc.n++;
}

/* Memory- or compute-bound when that unit is near its peak, else latency-bound. */
static enum aka_profile_bound bound_of(const struct aka_profile_kernel *k)
{
    double c = k->v[AKA_PF_COMPUTE_SOL_PCT], m = k->v[AKA_PF_MEMORY_SOL_PCT];
    if (isnan(c) || isnan(m))
        return AKA_BOUND_UNKNOWN;
    if (fmax(c, m) < AKA_PROFILE_LATENCY_SOL_PCT)
        return AKA_BOUND_LATENCY;
    return m >= c ? AKA_BOUND_MEMORY : AKA_BOUND_COMPUTE;
}

static int by_stall(const void *a, const void *b)
{
    double x = ((const struct aka_profile_stall *)a)->value;
    double y = ((const struct aka_profile_stall *)b)->value;
    return x < y ? 1 : x > y ? -1 : 0;
}

static int by_duration(const void *a, const void *b)
{
    double x = ((const struct aka_profile_kernel *)a)->v[AKA_PF_DURATION_NS];
    double y = ((const struct aka_profile_kernel *)b)->v[AKA_PF_DURATION_NS];
    return x < y ? 1 : x > y ? -1 : 0;
}

void aka_profile_finalize(struct aka_profile_summary *s)
{
    for (size_t i = 0; i < s->kernels.n; i++) {
        struct aka_profile_kernel *k = &s->kernels.v[i];
        for (int f = 0; f < AKA_PF_COUNT; f++)
            k->v[f] = k->acc[f].n ? k->acc[f].sum / (double)k->acc[f].n : NAN;
        for (size_t j = 0; j < k->stalls.n; j++)
            k->stalls.v[j].value = k->stalls.v[j].acc.sum / (double)k->stalls.v[j].acc.n;
        if (k->stalls.n)
            qsort(k->stalls.v, k->stalls.n, sizeof(*k->stalls.v), by_stall);
        k->bound = bound_of(k);
    }
    if (s->kernels.n)
        qsort(s->kernels.v, s->kernels.n, sizeof(*s->kernels.v), by_duration);
}
