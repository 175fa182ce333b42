/*
 * verify_stats.c — the statistics behind a full/goal verification (DESIGN §5).
 *
 * Pure functions of the ABBA latencies, so that the decision can be tested with
 * injected noise. The unit of evidence is a paired per-shape log-ratio within
 * one repeat (I C C I): drift across the allocation affects both sides of a pair
 * alike. The interval must clear --min-improvement-pct by its *lower* bound:
 * a point estimate above the threshold is not evidence when noise could put it
 * there. The lower bound is the smaller of a percentile bootstrap bound and a
 * Student-t bound, because with few pairs the bootstrap alone is too optimistic.
 */
#include "optimize/optimize.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64: a small, fixed generator so every decision can be reproduced. */
static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double lat(const struct aka_abba_samples *s, size_t r, size_t slot, size_t shape)
{
    return s->lat[(r * 4 + slot) * s->shapes + shape];
}

/* Two-sided Student-t quantile for confidence c and df degrees of freedom
 * (Cornish-Fisher expansion around the normal quantile; ample for a bound). */
static double t_quantile(double c, double df)
{
    double p = 1.0 - (1.0 - c) / 2.0, t = p - 0.5, r = sqrt(-2.0 * log(1.0 - p));
    double z = r - (2.515517 + 0.802853 * r + 0.010328 * r * r) /
                       (1 + 1.432788 * r + 0.189269 * r * r + 0.001308 * r * r * r);
    (void)t;
    double z3 = z * z * z, z5 = z3 * z * z;
    return z + (z3 + z) / (4 * df) + (5 * z5 + 16 * z3 + 3 * z) / (96 * df * df);
}

static double bootstrap_low(const double *x, size_t n, const struct aka_verify_limits *lim)
{
    double *means = aka_xcalloc((size_t)lim->resamples, sizeof(double));
    uint64_t seed = lim->seed;
    for (int b = 0; b < lim->resamples; b++) {
        double sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += x[next_rand(&seed) % n];
        means[b] = sum / (double)n;
    }
    qsort(means, (size_t)lim->resamples, sizeof(double), cmp_double);
    size_t k = (size_t)floor((1.0 - lim->confidence) / 2.0 * lim->resamples);
    double low = means[k];
    free(means);
    return low;
}

/* Coefficient of variation (percent) of one shape over the runs of one side. */
static double side_cv(const struct aka_abba_samples *s, size_t shape, bool candidate)
{
    double sum = 0, sq = 0;
    size_t n = 0;
    for (size_t r = 0; r < s->repeats; r++)
        for (size_t slot = 0; slot < 4; slot++)
            if ((slot == 1 || slot == 2) == candidate) {
                double v = lat(s, r, slot, shape);
                sum += v;
                sq += v * v;
                n++;
            }
    double mean = sum / (double)n, var = (sq - sum * mean) / (double)(n - 1);
    return var > 0 ? 100.0 * sqrt(var) / mean : 0.0;
}

static double dispersion(const struct aka_abba_samples *s)
{
    size_t n = 2 * s->shapes;
    double *cv = aka_xcalloc(n, sizeof(double));
    for (size_t k = 0; k < s->shapes; k++) {
        cv[2 * k] = side_cv(s, k, false);
        cv[2 * k + 1] = side_cv(s, k, true);
    }
    qsort(cv, n, sizeof(double), cmp_double);
    double med = n % 2 ? cv[n / 2] : (cv[n / 2 - 1] + cv[n / 2]) / 2.0;
    free(cv);
    return med;
}

static int check_samples(const struct aka_abba_samples *s, const struct aka_verify_limits *l,
                         struct aka_err *err)
{
    if (!s->lat || s->repeats < 1 || s->shapes < 1)
        return aka_err_set(err, AKA_EXIT_USAGE, "ABBA samples: expected >= 1 repeat and shape");
    if (l->resamples < 100 || !(l->confidence > 0.5 && l->confidence < 1.0))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "verification limits: expected >= 100 resamples and a confidence "
                           "in (0.5, 1)");
    for (size_t i = 0; i < s->repeats * 4 * s->shapes; i++)
        if (!(s->lat[i] > 0) || !isfinite(s->lat[i]))
            return aka_err_set(err, AKA_EXIT_USAGE,
                               "ABBA samples: latency %zu is %g; expected a finite number > 0", i,
                               s->lat[i]);
    return 0;
}

/* Paired log-ratios x[r*shapes+k] and per-shape mean improvements. */
static void pairs(const struct aka_abba_samples *s, double *x, double *per_shape)
{
    for (size_t k = 0; k < s->shapes; k++)
        per_shape[k] = 0;
    for (size_t r = 0; r < s->repeats; r++)
        for (size_t k = 0; k < s->shapes; k++) {
            double inc = 0.5 * (log(lat(s, r, 0, k)) + log(lat(s, r, 3, k)));
            double cand = 0.5 * (log(lat(s, r, 1, k)) + log(lat(s, r, 2, k)));
            x[r * s->shapes + k] = inc - cand;
            per_shape[k] += (inc - cand) / (double)s->repeats;
        }
}

static void decide(struct aka_verify_stats *o, const struct aka_verify_limits *l)
{
    o->promote = false;
    if (!(o->ci_low_pct > l->min_improvement_pct))
        snprintf(o->reason, sizeof(o->reason),
                 "improvement %.2f%% has a lower bound %.2f%%, not above %.2f%%",
                 o->improvement_pct, o->ci_low_pct, l->min_improvement_pct);
    else if (o->dispersion_pct > l->max_dispersion_pct)
        snprintf(o->reason, sizeof(o->reason), "run-to-run dispersion %.2f%% exceeds %.2f%%",
                 o->dispersion_pct, l->max_dispersion_pct);
    else if (l->max_shape_regression_pct >= 0 && o->worst_shape_pct < -l->max_shape_regression_pct)
        snprintf(o->reason, sizeof(o->reason), "shape %zu regressed %.2f%% (limit %.2f%%)",
                 o->worst_shape, -o->worst_shape_pct, l->max_shape_regression_pct);
    else {
        o->promote = true;
        snprintf(o->reason, sizeof(o->reason), "improvement CI [%.2f%%, %.2f%%] above %.2f%%",
                 o->ci_low_pct, o->ci_high_pct, l->min_improvement_pct);
    }
}

int aka_verify_abba(const struct aka_abba_samples *s, const struct aka_verify_limits *lim,
                    struct aka_verify_stats *out, struct aka_err *err)
{
    if (check_samples(s, lim, err) < 0)
        return -1;
    size_t n = s->repeats * s->shapes;
    double *x = aka_xcalloc(n, sizeof(double));
    double *per_shape = aka_xcalloc(s->shapes, sizeof(double));
    double sum = 0, sq = 0;
    pairs(s, x, per_shape);
    for (size_t i = 0; i < n; i++)
        sum += x[i];
    double mean = sum / (double)n;
    for (size_t i = 0; i < n; i++)
        sq += (x[i] - mean) * (x[i] - mean);
    /* One pair carries no spread: the t bound is then -infinity (no evidence). */
    double se = n > 1 ? sqrt(sq / (double)(n - 1) / (double)n) : INFINITY;
    double t_low = n > 1 ? mean - t_quantile(lim->confidence, (double)(n - 1)) * se : -INFINITY;
    double b_low = bootstrap_low(x, n, lim), low = t_low < b_low ? t_low : b_low;
    memset(out, 0, sizeof(*out));
    out->mean_log_ratio = mean;
    out->improvement_pct = 100.0 * (exp(mean) - 1.0);
    out->ci_low_pct = 100.0 * (exp(low) - 1.0);
    out->ci_high_pct = 100.0 * (exp(2 * mean - low) - 1.0);
    out->dispersion_pct = dispersion(s);
    out->worst_shape_pct = INFINITY;
    for (size_t k = 0; k < s->shapes; k++) {
        double pct = 100.0 * (exp(per_shape[k]) - 1.0);
        if (pct < out->worst_shape_pct) {
            out->worst_shape_pct = pct;
            out->worst_shape = k;
        }
    }
    decide(out, lim);
    free(x);
    free(per_shape);
    return 0;
}

bool aka_verify_same_timing(const char *a, const char *b)
{
    return !a || !*a || !b || !*b || strcmp(a, b) == 0;
}

void aka_verify_limits_from_opts(const struct aka_optimize_opts *o, struct aka_verify_limits *l)
{
    l->min_improvement_pct = o->min_improvement_pct;
    l->max_dispersion_pct = o->max_dispersion_pct;
    l->max_shape_regression_pct =
        aka_optimize_is_production(o) ? o->max_shape_regression_pct : -1.0;
    l->resamples = 2000;
    /* 99.9% two-sided: a campaign runs hundreds of verifications, and a false
     * promotion is permanent while a missed one is retried by the next episode. */
    l->confidence = 0.999;
    l->seed = 0x616b61u;
}
