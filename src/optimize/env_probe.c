/*
 * env_probe.c — the campaign's own health probes (DESIGN §7): before V0 at every start,
 * and before an episode that did not promote is recorded, so that a candidate is never
 * blamed for a machine that failed its evaluation (or its agent's). A failed probe is
 * code 75: the campaign stops, environment.c records why, and the episode runs again
 * after recovery.
 */
#include "evaluator/evaluator.h"
#include "optimize/internal.h"

int aka_env_preflight(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_err *err)
{
    struct aka_sandbox_health h;
    if (aka_eval_health(r->env.transport, o->platform, o->framework, false, &h, err) < 0)
        return aka_err_prefix(err, "before V0");
    aka_optimize_progress(r, "health: ok%s%s", h.output[0] ? ": " : "", h.output);
    return 0;
}

int aka_env_check_before_blame(struct aka_run *r, const struct aka_optimize_opts *o,
                               const struct aka_episode *ep, struct aka_err *err)
{
    struct aka_sandbox_health h;
    if (ep->status == AKA_MEM_PROMOTED)
        return 0;
    if (aka_eval_health(r->env.transport, o->platform, o->framework, false, &h, err) < 0)
        return aka_err_prefix(err, "episode %ld: before recording it %s", ep->number,
                              aka_memory_status_names[ep->status]);
    return 0;
}
