/*
 * internal.h — helpers shared by the bootstrap's own files (not a public interface).
 */
#ifndef AKA_BOOTSTRAP_INTERNAL_H
#define AKA_BOOTSTRAP_INTERNAL_H

#include "bootstrap/bootstrap.h"
#include "evaluator/evaluator.h"

/* One progress line through env->progress (nothing when it is NULL). */
void aka_bootstrap_progress(const struct aka_measure_env *env, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A measured version's record gets its "roofline" through env->roofline (none when NULL). */
void aka_bootstrap_add_roofline(const struct aka_measure_env *env, json_t *doc);

/*
 * Evaluate <ws>/<kernel_rel> against the campaign's operator. The V0 reference of a
 * PyTorch layout is evaluated as PyTorch; everything else as the campaign's
 * framework. multi_seed: use env->multi_seed (V1) instead of one seed (V0).
 * 0 with a verdict in o, or -1 (err code 2 or 75) without one.
 */
int aka_bootstrap_measure(const char *ws, const struct aka_campaign *c,
                          const struct aka_measure_env *env, const char *kernel_rel,
                          bool framework_kernel, struct aka_eval_outcome *o, struct aka_err *err);

#endif
