/*
 * schedule.c — which kind of episode comes next (DESIGN §3): fast for the
 * first --fast-episodes, goal after sustained stalls, full otherwise.
 */
#include "optimize/internal.h"

enum aka_episode_kind aka_episode_kind_for(const struct aka_optimize_opts *o, long number,
                                           const struct aka_episode_counters *c)
{
    if (c->episodes >= o->goal_after_episodes && c->consecutive > o->goal_after_stalls)
        return AKA_EPISODE_GOAL;
    if (number >= 1 && number <= o->fast_episodes)
        return AKA_EPISODE_FAST;
    return AKA_EPISODE_FULL;
}
