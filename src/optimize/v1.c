/*
 * v1.c — the V1 stage: a framework-native baseline that replaces V0 as the
 * incumbent before optimization starts (DESIGN §3, §6, §9).
 *
 * Whether V1 is wanted follows --framework-baseline and the mode; the built-in
 * agent always starts from the operator's seed kernel because a reference
 * declares no knobs to tune.
 */
#include "optimize/internal.h"

#include <string.h>

static bool v1_wanted(const struct aka_optimize_opts *o)
{
    if (strcmp(o->framework_baseline, "never") == 0)
        return false;
    /* The built-in agent needs the seed's knobs, in either mode (DESIGN §9). */
    if (strcmp(o->agent_cli, "builtin") == 0)
        return true;
    return strcmp(o->framework_baseline, "always") == 0 || aka_optimize_is_production(o);
}

int aka_optimize_v1(struct aka_run *r, const struct aka_optimize_opts *o,
                    struct aka_version_summary *v1, struct aka_err *err)
{
    struct strbuf seed = STRBUF_INIT;
    int rc = 0;
    if (!v1_wanted(o)) {
        aka_optimize_progress(r, "V1: skipped (--framework-baseline %s, %s mode)",
                              o->framework_baseline, o->optimization_mode);
    } else if (strcmp(o->agent_cli, "builtin") != 0) {
        rc = aka_err_set(err, AKA_EXIT_FAILED,
                         "V1: a framework baseline written by --agent-cli %s needs the agent "
                         "session stage, which this aka build does not have yet; use "
                         "--framework-baseline never or --agent-cli builtin",
                         o->agent_cli);
    } else if (!aka_seed_kernel_path(&r->op, o->framework, &seed)) {
        aka_optimize_progress(r, "V1: %s has no seed kernel %s; the campaign starts from V0",
                              r->op.name, seed.buf);
    } else {
        rc = aka_bootstrap_v1_seed(r->ws.buf, &r->camp, seed.buf, &r->env, v1, err);
        if (rc == 0 && v1->version == 1)
            aka_optimize_progress(r, "V1 recorded: latency %.3f us (commit %.12s)",
                                  v1->latency_us_geomean, v1->commit);
        else if (rc == 0)
            aka_optimize_progress(r, "V1: already pinned (framework_baseline.json at HEAD)");
    }
    strbuf_release(&seed);
    return rc;
}
