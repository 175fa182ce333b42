/*
 * internal.h — the state of one `aka optimize` run, shared by the optimize files.
 */
#ifndef AKA_OPTIMIZE_INTERNAL_H
#define AKA_OPTIMIZE_INTERNAL_H

#include "base/lock.h"
#include "bootstrap/bootstrap.h"
#include "optimize/optimize.h"

struct aka_run {
    struct aka_operator op;
    struct aka_runtime_pins pins;
    struct aka_campaign camp;
    struct aka_measure_env env;
    struct aka_lock lock;
    struct strbuf ws, op_dir_abs;
    FILE *progress;
    bool live_ok; /* the campaign is ours (pinned/checked): live.json may be written */
};

/* One terminal progress line ("aka optimize: ...") and the live view. */
void aka_optimize_progress(struct aka_run *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* memory/live.json: the non-canonical progress view. Failures are ignored on
 * purpose: observability never changes what the campaign does. */
void aka_live_update(struct aka_run *r, const char *phase);

/* The V1 stage per --framework-baseline and the agent (DESIGN §3, §9). */
int aka_optimize_v1(struct aka_run *r, const struct aka_optimize_opts *o,
                    struct aka_version_summary *v1, struct aka_err *err);

/* The episode loop: budget checks at its top, then episodes. */
int aka_optimize_loop(struct aka_run *r, const struct aka_optimize_opts *o, char *stop_reason,
                      size_t stop_len, struct aka_err *err);

#endif
