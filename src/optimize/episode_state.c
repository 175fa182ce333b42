/*
 * episode_state.c — the supervisor's own bookkeeping around episodes: the
 * counters of state.json and the active-episode record (the write-ahead record
 * of the episode in flight), both stored by workspace/ (atomic replaces).
 *
 * The active record is written before each irreversible step, so a resume can
 * always tell which step an interrupted episode had reached — including, before
 * the version commit, exactly which commit the supervisor is about to make.
 */
#include "base/json.h"
#include "optimize/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *const aka_episode_kind_names[] = {"fast", "full", "goal", NULL};

struct counter_field {
    const char *key;
    size_t off;
};

#define CF(k, f)                                                                                   \
    {                                                                                              \
        k, offsetof(struct aka_episode_counters, f)                                                \
    }
static const struct counter_field fields[] = {
    CF("episodes", episodes),
    CF("accepted", accepted),
    CF("rejected", rejected),
    CF("pivoted", pivoted),
    CF("blocked", blocked),
    CF("protocol_failures", protocol_failures),
    CF("interrupted", interrupted),
    CF("tokens", tokens),
    CF("consecutive_without_promotion", consecutive),
    {NULL, 0},
};

static long long *field_at(struct aka_episode_counters *c, size_t off)
{
    return (long long *)(void *)((char *)c + off);
}

void aka_state_load(const char *ws, struct aka_episode_counters *c)
{
    memset(c, 0, sizeof(*c));
    json_t *doc = aka_ws_state_doc(ws);
    for (size_t i = 0; doc && fields[i].key; i++) {
        json_t *v = json_object_get(doc, fields[i].key);
        if (json_is_integer(v) && json_integer_value(v) >= 0)
            *field_at(c, fields[i].off) = json_integer_value(v);
    }
    json_decref(doc);
}

int aka_state_save(const char *ws, const struct aka_episode_counters *c, struct aka_err *err)
{
    struct aka_episode_counters copy = *c;
    json_t *doc = aka_ws_state_doc(ws);
    if (!doc)
        doc = json_object();
    for (size_t i = 0; fields[i].key; i++)
        json_object_set_new(doc, fields[i].key, json_integer(*field_at(&copy, fields[i].off)));
    int rc = aka_ws_state_write(ws, doc, err);
    json_decref(doc);
    return rc;
}

/* [{pgid, start_ticks}]: the identity a resume checks before it ends a group. */
static json_t *groups_json(const struct aka_episode *ep)
{
    json_t *a = json_array();
    for (size_t i = 0; i < ep->n_groups; i++)
        json_array_append_new(a, json_pack("{s:I, s:I}", "pgid", (json_int_t)ep->groups[i].pgid,
                                           "start_ticks", (json_int_t)ep->groups[i].start_ticks));
    return a;
}

const char *aka_episode_agent_eval(const struct aka_episode *ep)
{
    return ep->agent_eval_brokered ? "broker" : "sandbox";
}

int aka_episode_save_active(const struct aka_run *r, const struct aka_episode *ep,
                            struct aka_err *err)
{
    char now[AKA_TIMESTAMP_MAX];
    aka_record_now(now);
    json_t *doc = json_pack("{s:s, s:I, s:I, s:s, s:s, s:s, s:s, s:s, s:o, s:s}", "schema",
                            "aka.active_episode.v1", "episode", (json_int_t)ep->number,
                            "memory_version", (json_int_t)ep->version, "base_commit", ep->base,
                            "episode_branch", ep->branch.buf, "worktree", ep->worktree.buf, "mode",
                            aka_episode_kind_names[ep->kind], "phase", ep->phase, "agent_pgid",
                            ep->pgid > 0 ? json_integer(ep->pgid) : json_null(), "updated_at", now);
    if (ep->candidate[0])
        json_object_set_new(doc, "candidate_commit", json_string(ep->candidate));
    json_object_set_new(doc, "agent_groups", groups_json(ep));
    if (ep->kind == AKA_EPISODE_FAST && ep->fast_trials > 0) /* the gate a resume applies */
        json_object_set_new(doc, "fast_trials", json_integer(ep->fast_trials));
    /* Where the agent's evaluations run: the record a resume writes says what ran, whatever
     * --agent-eval the resuming command was given. */
    json_object_set_new(doc, "agent_eval", json_string(aka_episode_agent_eval(ep)));
    if (ep->probes) /* the probe plan a resume runs again (episode_probe.c) */
        json_object_set_new(doc, "probes", json_incref(ep->probes));
    if (ep->has_intent) /* the version commit about to be made */
        json_object_set_new(doc, "version_commit", aka_ws_intent_to_json(&ep->intent));
    int rc = doc ? aka_ws_active_write(r->ws.buf, doc, err)
                 : aka_err_set(err, AKA_EXIT_FAILED, "episode %ld: cannot build the active record",
                               ep->number);
    json_decref(doc);
    return rc;
}

bool aka_episode_active_exists(const char *ws)
{
    return aka_ws_active_exists(ws);
}

int aka_episode_clear_active(const char *ws, struct aka_err *err)
{
    return aka_ws_active_clear(ws, err);
}

void aka_episode_set_status(struct aka_episode *ep, enum aka_memory_status st, const char *fmt, ...)
{
    va_list ap;
    ep->status = st;
    va_start(ap, fmt);
    vsnprintf(ep->violation, sizeof(ep->violation), fmt, ap);
    va_end(ap);
}
