/*
 * environment.c — a campaign that the machine, not a candidate, stopped (DESIGN §7).
 *
 * The health probes (env_probe.c) run before V0 and before an episode that did not
 * promote is recorded. When anything ends the campaign with code 75 (the transport
 * could not run a job, a failed evaluation followed by a failed probe, a full disk),
 * the agents of the episode in flight are ended, its worktree is kept, and
 * <ws>/.aka/environment-failure.json records why (durable: base/fs's atomic write).
 * Nothing is recorded against a candidate. The next start finds the marker, discards
 * that episode (no record, no count: it runs again) and removes the marker; a crash in
 * between repeats only idempotent steps.
 */
#include "base/fs.h"
#include "base/json.h"
#include "evaluator/evaluator.h"
#include "optimize/internal.h"

#include <string.h>
#include <unistd.h>

#define MARKER_NAME  "environment-failure.json"
#define DETAIL_CHARS 2000

static void marker_path(const char *ws, struct strbuf *out)
{
    struct strbuf dir = STRBUF_INIT;
    aka_ws_path(&dir, ws, AKA_WS_STATE_DIR);
    aka_path_join(out, dir.buf, MARKER_NAME);
    strbuf_release(&dir);
}

/* The last DETAIL_CHARS of s. */
static const char *tail(const char *s)
{
    size_t n = strlen(s);
    return n > DETAIL_CHARS ? s + n - DETAIL_CHARS : s;
}

/* The active record's episode number, or 0. */
static long active_episode(const char *ws)
{
    struct strbuf p = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    json_t *doc = NULL;
    long n = 0;
    if (aka_ws_active_exists(ws) && aka_ws_active_load(ws, &doc, &p, &ignored) == 0)
        n = (long)json_integer_value(json_object_get(doc, "episode"));
    json_decref(doc);
    strbuf_release(&p);
    return n;
}

int aka_env_marker_write(struct aka_run *r, const struct aka_err *cause, struct aka_err *err)
{
    const struct aka_env_failure *f = aka_env_last_failure();
    struct strbuf p = STRBUF_INIT;
    char now[AKA_TIMESTAMP_MAX];
    long episode = active_episode(r->ws.buf);
    aka_record_now(now);
    aka_episode_end_active_agents(r);
    json_t *doc = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:o}", "schema", "aka.environment_failure.v1",
        "reason", f ? aka_env_class_name(f->cls) : "environment", "detail", tail(cause->msg),
        "command", f ? f->command : "", "probe_output", f ? f->probe_output : "", "detected_at",
        f ? f->detected_at : now, "pid", (json_int_t)getpid(), "episode",
        episode > 0 ? json_integer(episode) : json_null());
    marker_path(r->ws.buf, &p);
    int rc = aka_json_write_file(p.buf, doc, err);
    json_decref(doc);
    if (rc == 0)
        aka_optimize_progress(r,
                              "environment failure recorded in %s; the worktree is kept and "
                              "nothing was recorded against a candidate",
                              p.buf);
    strbuf_release(&p);
    return rc;
}

int aka_env_marker_settle(struct aka_run *r, struct aka_err *err)
{
    struct strbuf p = STRBUF_INIT, dir = STRBUF_INIT;
    json_t *doc = NULL;
    int rc = 0;
    marker_path(r->ws.buf, &p);
    if (!aka_exists(p.buf))
        goto out;
    if (aka_json_load_file(p.buf, &doc, err) < 0) {
        rc = -1;
        goto out;
    }
    aka_optimize_progress(r, "resuming after an environment failure (%s, %s)",
                          json_string_value(json_object_get(doc, "reason")),
                          json_string_value(json_object_get(doc, "detected_at")));
    if (aka_ws_active_exists(r->ws.buf) && aka_episode_discard(r, err) < 0)
        rc = -1;
    aka_ws_path(&dir, r->ws.buf, AKA_WS_STATE_DIR);
    if (rc == 0 && (aka_remove_tree(p.buf, err) < 0 || aka_fsync_dir(dir.buf, err) < 0))
        rc = -1;
out:
    json_decref(doc);
    strbuf_release(&p);
    strbuf_release(&dir);
    return rc;
}

bool aka_optimize_env_stopped(const char *ws)
{
    struct strbuf p = STRBUF_INIT;
    marker_path(ws, &p);
    bool yes = aka_is_file(p.buf);
    strbuf_release(&p);
    return yes;
}
