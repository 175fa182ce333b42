/*
 * loop.c — progress lines, the live view and the top of the episode loop.
 *
 * Every stop rule is checked at the loop top (stops.c), from what is on disk,
 * so a stopped campaign rerun with a larger budget simply goes on. Between the
 * checks, one episode at a time (episode.c).
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

/* The incumbent's geomean latency and V0's, from the records (0 when unknown). */
static void best_latency(const char *ws, double *best_us, double *v0_us)
{
    struct strbuf p = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    struct aka_memory_record m;
    long latest;
    *best_us = *v0_us = 0;
    if (aka_incumbent_load(ws, &m, &latest) == 0) {
        *best_us = m.latency_us_geomean;
        aka_memory_release(&m);
    }
    aka_path_join(&p, ws, "memory/v0.json");
    if (aka_memory_load(p.buf, &m, &ignored) == 0) {
        *v0_us = m.latency_us_geomean;
        aka_memory_release(&m);
    }
    strbuf_release(&p);
}

void aka_episode_progress(struct aka_run *r, const struct aka_episode *ep, const char *fmt, ...)
{
    char detail[384];
    double best, v0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    best_latency(r->ws.buf, &best, &v0);
    aka_optimize_progress(r,
                          "episode %ld/%d (%s) %s, best latency %.3f us, speedup %.2fx vs V0: %s",
                          ep->version, r->max_iters, aka_episode_kind_names[ep->kind], ep->phase,
                          best, best > 0 && v0 > 0 ? v0 / best : 0.0, detail);
}

int aka_optimize_loop(struct aka_run *r, const struct aka_optimize_opts *o, char *stop_reason,
                      size_t stop_len, struct aka_err *err)
{
    struct aka_stops stops;
    r->max_iters = o->max_iters;
    aka_stops_init(&stops, r->ws.buf);
    for (;;) {
        struct aka_episode_counters c;
        enum aka_memory_status st = AKA_MEM_INTERRUPTED;
        aka_state_load(r->ws.buf, &c);
        /* An episode left in flight is settled before any budget is read: its version may
         * be on disk but not yet committed. */
        if (aka_episode_active_exists(r->ws.buf) && aka_episode_recover(r, o, &c, err) < 0)
            return -1;
        int stop = aka_stops_check(r, o, &stops, &c, stop_reason, stop_len, err);
        if (stop < 0)
            return -1;
        if (stop > 0)
            break;
        r->conversion = stops.conversion;
        if (aka_episode_run(r, o, &c, &st, err) < 0)
            return -1;
    }
    aka_optimize_progress(r, "stop: %s", stop_reason);
    return 0;
}
