/*
 * stops.c — every reason a campaign stops, checked at the top of the episode
 * loop (upstream invariant 13), in upstream's order:
 *
 *   target-util: vN reached X% of the roofline peak (>= PCT%)
 *   stall: K episodes without promotion
 *   budget: max-iters (vN >= M)
 *   budget: token-budget (T >= B tokens)
 *
 * Everything is read from the workspace (committed memory records, state.json), so the same
 * checks run after an episode and when a stopped campaign is resumed: a rerun
 * whose budgets are still spent stops at once, one with larger budgets goes on.
 * The Triton→Gluon latch lives here too because it changes two of the rules: a
 * pending conversion suppresses the stall stop and turns the budget stops into
 * errors (a mandatory conversion that never landed is a failed campaign).
 */
#include "agents/agents.h"
#include "base/fs.h"
#include "base/json.h"
#include "optimize/internal.h"

#include <string.h>

/* ---- state.json keys beyond the counters ------------------------------------------------- */

static json_t *state_get(const char *ws, const char *key)
{
    json_t *doc = aka_ws_state_doc(ws);
    json_t *v = json_incref(json_object_get(doc, key));
    json_decref(doc);
    return v;
}

int aka_optimize_state_set(const char *ws, const char *key, json_t *value, struct aka_err *err)
{
    json_t *doc = aka_ws_state_doc(ws);
    if (!doc)
        doc = json_object();
    json_object_set_new(doc, key, value);
    int rc = aka_ws_state_write(ws, doc, err);
    json_decref(doc);
    return rc;
}

/* ---- memory ------------------------------------------------------------------------------ */

/* Whether the latest committed record is a blocked outcome (read from HEAD, as every record
 * the supervisor decides from). */
static int latest_is_blocked(const char *ws, long latest, bool *blocked, struct aka_err *err)
{
    struct aka_memory_record m;
    *blocked = false;
    if (latest < 0)
        return 0;
    if (aka_ws_memory_at_head(ws, latest, &m, err) < 0)
        return -1;
    *blocked = m.status == AKA_MEM_BLOCKED;
    aka_memory_release(&m);
    return 0;
}

/* ---- the conversion latch ---------------------------------------------------------------- */

enum aka_conversion aka_conversion_load(const char *ws)
{
    json_t *v = state_get(ws, "conversion");
    const char *name = json_string_value(json_object_get(v, "state"));
    int i = name ? jenum_index(name, aka_conversion_names) : -1;
    json_decref(v);
    return i < 0 ? AKA_CONVERSION_NONE : (enum aka_conversion)i;
}

void aka_stops_init(struct aka_stops *s, const char *ws)
{
    json_t *v = state_get(ws, "conversion");
    memset(s, 0, sizeof(*s));
    s->util_checked = -1;
    s->conversion = aka_conversion_load(ws);
    s->conversion_since = (long)json_integer_value(json_object_get(v, "since_version"));
    json_decref(v);
}

/* Engage the latch, or release it to Gluon once a version after the latch was promoted. */
static int conversion_update(struct aka_run *r, const struct aka_optimize_opts *o,
                             struct aka_stops *s, const struct aka_episode_counters *c,
                             long incumbent, long latest, struct aka_err *err)
{
    enum aka_conversion was = s->conversion;
    bool promoted_since = was == AKA_CONVERSION_PENDING && incumbent > s->conversion_since;
    s->conversion =
        aka_conversion_after(s->conversion, promoted_since ? AKA_MEM_PROMOTED : AKA_MEM_REJECTED);
    s->conversion = aka_conversion_next(o, s->conversion, c);
    if (s->conversion == was)
        return 0;
    if (was == AKA_CONVERSION_NONE)
        s->conversion_since = latest;
    aka_optimize_progress(r, "conversion: %s",
                          s->conversion == AKA_CONVERSION_PENDING
                              ? "Triton->Gluon latched: the next episodes port the incumbent to "
                                "Gluon (accepted at <= 5% slower)"
                              : "the incumbent is Gluon now; the campaign stays Gluon");
    return aka_optimize_state_set(r->ws.buf, "conversion",
                                  json_pack("{s:s, s:I, s:I}", "state",
                                            aka_conversion_names[s->conversion], "since_version",
                                            (json_int_t)s->conversion_since, "consecutive_at_latch",
                                            (json_int_t)c->consecutive),
                                  err);
}

/* ---- target-util ------------------------------------------------------------------------- */

static void util_record(struct aka_run *r, long version, const struct aka_utilization *u)
{
    struct aka_err ignored = AKA_ERR_INIT;
    json_t *side_f = u->flop_pct >= 0 ? json_real(u->flop_pct) : json_null();
    json_t *side_b = u->bandwidth_pct >= 0 ? json_real(u->bandwidth_pct) : json_null();
    /* Observability only: a failed write never changes what the campaign does. */
    aka_optimize_state_set(r->ws.buf, "target_util",
                           json_pack("{s:I, s:f, s:o, s:o, s:s}", "version", (json_int_t)version,
                                     "pct", u->pct, "flop_pct", side_f, "bandwidth_pct", side_b,
                                     "basis", u->basis),
                           &ignored);
}

/* Whether the incumbent reached --target-util; measured once per incumbent version. */
static bool target_util_stop(struct aka_run *r, const struct aka_optimize_opts *o,
                             struct aka_stops *s, const struct aka_memory_record *inc, char *reason,
                             size_t len)
{
    struct aka_utilization u;
    if (o->target_util <= 0 || inc->version == s->util_checked)
        return false;
    if (r->camp.generalized) { /* the roofline needs the private sizes (episode_record.c) */
        if (!s->said_inactive)
            aka_optimize_progress(r, "target-util: inactive for this campaign: its shapes are "
                                     "private (generalized)");
        s->said_inactive = true;
        return false;
    }
    s->util_checked = inc->version;
    if (!s->peaks_loaded)
        aka_hw_peaks_load(r->env.repo_root, r->ws.buf, o->platform, &s->peaks);
    s->peaks_loaded = true;
    aka_utilization_of(&r->op, &inc->latency_us_by_shape, &s->peaks, &u);
    if (!u.known) {
        if (!s->said_inactive)
            aka_optimize_progress(r, "target-util: inactive for this campaign: %s", u.why);
        s->said_inactive = true;
        return false;
    }
    util_record(r, inc->version, &u);
    aka_optimize_progress(r, "target-util: v%ld at %.1f%% of the roofline peak: %s", inc->version,
                          u.pct, u.basis);
    if (u.pct < o->target_util)
        return false;
    snprintf(reason, len, "target-util: v%ld reached %.1f%% of the roofline peak (>= %g%%)",
             inc->version, u.pct, o->target_util);
    return true;
}

/* ---- the loop top ------------------------------------------------------------------------- */

static bool stall_stop(const struct aka_optimize_opts *o, const struct aka_stops *s,
                       const struct aka_episode_counters *c, bool blocked, char *reason, size_t len)
{
    /* A valid blocked outcome does not count toward --max-stall, a pending
     * conversion must be given its episodes, and an admission that would be a goal
     * episode takes precedence over the stall stop (upstream §2.3): sustained stalls
     * are what goal episodes are for. */
    if (o->max_stall <= 0 || c->consecutive < o->max_stall || blocked ||
        s->conversion == AKA_CONVERSION_PENDING ||
        aka_episode_kind_for(o, (long)c->episodes + 1, c) == AKA_EPISODE_GOAL)
        return false;
    snprintf(reason, len, "stall: %lld episodes without promotion", c->consecutive);
    return true;
}

/* Every agent session counts toward --token-budget: V1 and the episodes are in
 * state.json's "tokens"; plan reviewers append to their own ledger because they
 * run inside an agent's session, beside the supervisor's writes of state.json. */
static bool budget_stop(const struct aka_optimize_opts *o, const struct aka_episode_counters *c,
                        long long reviewer_tokens, long latest, char *reason, size_t len)
{
    long long tokens = c->tokens + reviewer_tokens;
    if (latest >= o->max_iters) {
        snprintf(reason, len, "budget: max-iters (v%ld >= %d)", latest, o->max_iters);
        return true;
    }
    if (o->token_budget > 0 && tokens >= o->token_budget) {
        snprintf(reason, len, "budget: token-budget (%lld >= %lld tokens)", tokens,
                 o->token_budget);
        return true;
    }
    return false;
}

int aka_stops_check(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_stops *s,
                    const struct aka_episode_counters *c, char *reason, size_t len,
                    struct aka_err *err)
{
    struct aka_memory_record inc;
    long latest = -1;
    bool blocked = false;
    int found = aka_ws_incumbent(r->ws.buf, &inc, &latest, err);
    if (found < 0) /* an unreadable canonical record: the campaign fails closed */
        return -1;
    bool have = found == 0;
    bool stop = have && target_util_stop(r, o, s, &inc, reason, len);
    long inc_version = have ? inc.version : -1;
    if (have)
        aka_memory_release(&inc);
    if (stop)
        return 1;
    if (conversion_update(r, o, s, c, inc_version, latest, err) < 0 ||
        latest_is_blocked(r->ws.buf, latest, &blocked, err) < 0)
        return -1;
    if (stall_stop(o, s, c, blocked, reason, len))
        return 1;
    if (!budget_stop(o, c, aka_plan_reviewer_tokens(r->ws.buf), latest, reason, len))
        return 0;
    if (s->conversion == AKA_CONVERSION_PENDING)
        return aka_err_set(err, AKA_EXIT_FAILED,
                           "the mandatory Triton->Gluon conversion did not succeed before the "
                           "budget ran out (%s)",
                           reason);
    return 1;
}
