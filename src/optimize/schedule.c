/*
 * schedule.c — which kind of episode comes next, and the Triton→Gluon
 * conversion latch (DESIGN §3, §6): pure functions of the flags and the
 * persisted counters, so that a resumed campaign schedules exactly what the
 * stopped one would have, and unit tests can walk every transition.
 */
#include "optimize/internal.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

const char *const aka_conversion_names[] = {"none", "pending", "gluon", NULL};

/* Fast for the first --fast-episodes, goal after sustained stalls, full otherwise. */
enum aka_episode_kind aka_episode_kind_for(const struct aka_optimize_opts *o, long number,
                                           const struct aka_episode_counters *c)
{
    if (c->episodes >= o->goal_after_episodes && c->consecutive > o->goal_after_stalls)
        return AKA_EPISODE_GOAL;
    if (number >= 1 && number <= o->fast_episodes)
        return AKA_EPISODE_FAST;
    return AKA_EPISODE_FULL;
}

/*
 * The latch is monotone (upstream invariant 14): once a Triton campaign has
 * --convert-after episodes without promotion it stays pending, failed
 * conversions do not release it, and only a promotion (of a Gluon kernel: the
 * assessment insists on one) moves it on, to Gluon for good. Never with the
 * built-in tuner: it sets the seed's declared knobs and writes no code, so a
 * mandatory port would only turn its stalled campaign into a failed one (the
 * rope campaign of 2026-12-06 ended so, exit 1, after three stalled episodes).
 */
enum aka_conversion aka_conversion_next(const struct aka_optimize_opts *o, enum aka_conversion cur,
                                        const struct aka_episode_counters *c)
{
    if (cur != AKA_CONVERSION_NONE)
        return cur;
    if (o->convert_after > 0 && strcasecmp(o->framework, "Triton") == 0 &&
        strcmp(o->agent_cli, "builtin") != 0 && c->consecutive >= o->convert_after)
        return AKA_CONVERSION_PENDING;
    return AKA_CONVERSION_NONE;
}

enum aka_conversion aka_conversion_after(enum aka_conversion cur, enum aka_memory_status status)
{
    if (cur == AKA_CONVERSION_PENDING && status == AKA_MEM_PROMOTED)
        return AKA_CONVERSION_GLUON;
    return cur;
}

/* A conversion is a port, not an optimization: it may be up to 5% slower (upstream
 * CONVERT_PERF_TOL), never more, and only with positive measured latencies. */
bool aka_conversion_parity(double candidate_us, double incumbent_us)
{
    return candidate_us > 0 && incumbent_us > 0 && candidate_us <= incumbent_us * 1.05;
}

static bool word_at(const char *p, const char *w)
{
    size_t n = strlen(w);
    return strncmp(p, w, n) == 0 && !(isalnum((unsigned char)p[n]) || p[n] == '_');
}

/* One logical line: does it import Gluon ("from triton.experimental import gluon",
 * "import triton.experimental.gluon", "from triton.experimental.gluon import ...")? */
static bool line_imports_gluon(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (!word_at(p, "import") && !word_at(p, "from"))
        return false;
    for (const char *q = p; q + 5 <= end; q++)
        if (strncmp(q, "gluon", 5) == 0 &&
            (q == p || !(isalnum((unsigned char)q[-1]) || q[-1] == '_')) &&
            !(q + 5 < end && (isalnum((unsigned char)q[5]) || q[5] == '_')))
            return true;
    return false;
}

/* The structure check of a latched campaign: the kernel source imports Gluon. */
bool aka_kernel_imports_gluon(const char *source)
{
    for (const char *p = source; p && *p;) {
        const char *end = strchr(p, '\n');
        if (!end)
            end = p + strlen(p);
        if (line_imports_gluon(p, end))
            return true;
        p = *end ? end + 1 : end;
    }
    return false;
}
