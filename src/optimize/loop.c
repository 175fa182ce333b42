/*
 * loop.c — progress lines, the live view and the top of the episode loop.
 *
 * Budgets are mechanical and checked at the loop top (upstream invariant 13):
 * the highest canonical version against --max-iters, the persisted token count
 * in .aka/state.json against --token-budget. Because both are read from disk,
 * a stopped campaign rerun with a larger budget simply goes on. Between the
 * checks, one episode at a time (episode.c); --max-stall after each.
 */
#include "base/fs.h"
#include "base/json.h"
#include "optimize/internal.h"

#include <stdarg.h>
#include <string.h>

void aka_optimize_progress(struct aka_run *r, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    r->env.progress(line, r);
}

static long latest_version(const char *ws)
{
    struct aka_memory_listing l = {0};
    struct strbuf dir = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    aka_path_join(&dir, ws, "memory");
    long v = aka_memory_list(dir.buf, &l, &ignored) < 0 ? -1 : aka_memory_latest(&l);
    aka_memory_listing_release(&l);
    strbuf_release(&dir);
    return v;
}

void aka_live_update(struct aka_run *r, const char *phase)
{
    if (!r->live_ok)
        return;
    char now[AKA_TIMESTAMP_MAX];
    struct strbuf p = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    aka_record_now(now);
    json_t *doc = json_pack("{s:s, s:b, s:s, s:s, s:I, s:s}", "schema", "aka.live.v1", "canonical",
                            0, "phase", phase, "workspace", r->ws.buf, "latest_version",
                            (json_int_t)latest_version(r->ws.buf), "updated_at", now);
    aka_path_join(&p, r->ws.buf, "memory");
    bool ready = aka_is_dir(p.buf);
    strbuf_addstr(&p, "/live.json");
    if (doc && ready)
        aka_json_write_file(p.buf, doc, &ignored);
    json_decref(doc);
    strbuf_release(&p);
}

static long long state_tokens(const char *ws)
{
    struct strbuf p = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    json_t *doc = NULL;
    long long tokens = 0;
    aka_path_join(&p, ws, ".aka/state.json");
    if (aka_is_file(p.buf) && aka_json_load_file(p.buf, &doc, &ignored) == 0)
        tokens = json_integer_value(json_object_get(doc, "tokens"));
    json_decref(doc);
    strbuf_release(&p);
    return tokens;
}

/* The loop-top budgets; true (with the reason) when the campaign must stop. */
static bool budget_stop(struct aka_run *r, const struct aka_optimize_opts *o, char *reason,
                        size_t len)
{
    long latest = latest_version(r->ws.buf);
    long long tokens = state_tokens(r->ws.buf);
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

int aka_optimize_loop(struct aka_run *r, const struct aka_optimize_opts *o, char *stop_reason,
                      size_t stop_len, struct aka_err *err)
{
    for (;;) {
        struct aka_episode_counters c;
        enum aka_memory_status st = AKA_MEM_INTERRUPTED;
        aka_state_load(r->ws.buf, &c);
        /* An episode left in flight is settled before any budget is read: its version may
         * be on disk but not yet committed. */
        if (aka_episode_active_exists(r->ws.buf) && aka_episode_recover(r, &c, err) < 0)
            return -1;
        if (budget_stop(r, o, stop_reason, stop_len))
            break;
        if (aka_episode_run(r, o, &c, &st, err) < 0)
            return -1;
        /* A valid blocked outcome does not count toward --max-stall (upstream §2.3). */
        if (st != AKA_MEM_BLOCKED && o->max_stall > 0 && c.consecutive >= o->max_stall) {
            snprintf(stop_reason, stop_len, "stall: %lld episodes without promotion",
                     c.consecutive);
            break;
        }
    }
    aka_optimize_progress(r, "stop: %s", stop_reason);
    return 0;
}
