/*
 * loop.c — the top of the episode loop.
 *
 * Every stop rule is checked at the loop top (stops.c), from what is on disk,
 * so a stopped campaign rerun with a larger budget simply goes on. Between the
 * checks, one episode at a time (episode.c).
 */
#include "optimize/internal.h"

int aka_optimize_loop(struct aka_run *r, const struct aka_optimize_opts *o, char *stop_reason,
                      size_t stop_len, struct aka_err *err)
{
    struct aka_stops stops;
    struct strbuf drift = STRBUF_INIT;
    int rc = -1;
    r->max_iters = o->max_iters;
    aka_stops_init(&stops, r->ws.buf);
    for (;;) {
        struct aka_episode_counters c;
        enum aka_memory_status st = AKA_MEM_INTERRUPTED;
        aka_state_load(r->ws.buf, &c);
        aka_optimize_check_drift(r, &drift);
        /* An episode left in flight is settled before any budget is read: its version may
         * be on disk but not yet committed. */
        if (aka_episode_active_exists(r->ws.buf) && aka_episode_recover(r, o, &c, err) < 0)
            break;
        int stop = aka_stops_check(r, o, &stops, &c, stop_reason, stop_len, err);
        if (stop != 0) {
            rc = stop < 0 ? -1 : 0;
            break;
        }
        r->conversion = stops.conversion;
        if (aka_episode_run(r, o, &c, &st, err) < 0)
            break;
    }
    strbuf_release(&drift);
    if (rc == 0)
        aka_optimize_progress(r, "stop: %s", stop_reason);
    return rc;
}
