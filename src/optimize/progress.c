/*
 * progress.c — progress lines ("aka optimize: ...") and the live view
 * (memory/live.json). A leaf of the module: the loop, the episodes, the stop
 * rules and the drift check call it, it calls none of them.
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

void aka_live_update(struct aka_run *r, const char *phase)
{
    if (!r->live_ok)
        return;
    char now[AKA_TIMESTAMP_MAX];
    struct strbuf p = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    long latest = -1;
    aka_record_now(now);
    aka_ws_latest_version(r->ws.buf, &latest, &ignored);
    json_t *doc = json_pack("{s:s, s:b, s:s, s:s, s:I, s:s}", "schema", "aka.live.v1", "canonical",
                            0, "phase", phase, "workspace", r->ws.buf, "latest_version",
                            (json_int_t)latest, "updated_at", now);
    aka_ws_path(&p, r->ws.buf, AKA_WS_MEMORY);
    bool ready = aka_is_dir(p.buf);
    aka_ws_path(&p, r->ws.buf, AKA_WS_LIVE);
    if (doc && ready)
        aka_json_write_file(p.buf, doc, &ignored);
    json_decref(doc);
    strbuf_release(&p);
}

/* The incumbent's geomean latency and V0's, from the committed records (0 when unknown). */
static void best_latency(const char *ws, double *best_us, double *v0_us)
{
    struct aka_err ignored = AKA_ERR_INIT;
    struct aka_memory_record m;
    *best_us = *v0_us = 0;
    if (aka_ws_incumbent(ws, &m, NULL, &ignored) == 0) {
        *best_us = m.latency_us_geomean;
        aka_memory_release(&m);
    }
    if (aka_ws_memory_at_head(ws, 0, &m, &ignored) == 0) {
        *v0_us = m.latency_us_geomean;
        aka_memory_release(&m);
    }
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
