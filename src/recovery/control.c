/*
 * control.c — everything around the monitor: the command an optimizer records at its
 * start, starting the monitor after exit 75, the restarted optimizer's half of the
 * handshake, and `aka recovery stop|resume|status`.
 *
 * Stop is durable before it acts: stopped.json is written first (a monitor started
 * later exits at once, an optimizer that meets 75 again starts none), then the monitor
 * gets SIGTERM (it ends the optimizer's group itself) and, should anything survive, the
 * recorded optimizer group is ended by identity (pid and start time, base/proc).
 */
#include "recovery/internal.h"

#include "base/fs.h"
#include "base/lock.h"
#include "base/proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void aka_recovery_launch_init(struct aka_recovery_launch *l)
{
    strbuf_init(&l->exe, 0);
    strbuf_init(&l->repo_root, 0);
    strbuf_init(&l->cwd, 0);
    l->args = (struct strvec)STRVEC_INIT;
}

void aka_recovery_launch_release(struct aka_recovery_launch *l)
{
    strbuf_release(&l->exe);
    strbuf_release(&l->repo_root);
    strbuf_release(&l->cwd);
    strvec_clear(&l->args);
}

int aka_recovery_launch_capture(struct aka_recovery_launch *l, int argc, char **argv,
                                const char *repo_root, struct aka_err *err)
{
    char cwd[4096];
    if (!getcwd(cwd, sizeof(cwd)))
        return aka_err_set(err, AKA_EXIT_ENV, "cannot read the current directory");
    strbuf_addstr(&l->cwd, cwd);
    if (aka_realpath("/proc/self/exe", &l->exe, err) < 0 ||
        aka_realpath(repo_root, &l->repo_root, err) < 0)
        return -1;
    strvec_pushv(&l->args, (const char *const *)argv);
    (void)argc; /* argv is NULL-terminated (core builds it) */
    return 0;
}

bool aka_recovery_is_restarted(void)
{
    const char *d = getenv(RCV_ENV_DIR);
    return d && *d;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0)
        ;
}

/* ---- starting the monitor ------------------------------------------------------------------ */

static int spawn_monitor(const char *dir, const char *exe, const char *repo_root,
                         struct aka_err *err)
{
    struct strbuf log = STRBUF_INIT;
    pid_t pid;
    rcv_path(&log, dir, "monitor.log");
    const char *argv[] = {exe, "--repo-root", repo_root, "recovery", "monitor", dir, NULL};
    /* RCV_ENV_DIR removed: the monitor is not an optimizer it restarted. */
    const char *env[] = {RCV_ENV_DIR, RCV_ENV_HANDOFF, NULL};
    struct proc_spec spec = {.argv = argv, .cwd = dir, .env = env, .out_file = log.buf};
    int rc = proc_spawn_detached(&spec, &pid, err);
    strbuf_release(&log);
    return rc;
}

/* Is a monitor holding the lock? */
static bool monitor_running(const char *dir)
{
    struct aka_lock lock = AKA_LOCK_INIT;
    struct strbuf p = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    rcv_path(&p, dir, "monitor.lock");
    bool held = aka_lock_acquire(&lock, p.buf, false, &ignored) < 0;
    aka_lock_release(&lock);
    strbuf_release(&p);
    return held;
}

static int start_in(const struct aka_recovery_launch *l, const char *ws, int poll_interval_s,
                    const char *dir, bool *started, struct aka_err *err);

int aka_recovery_start(const struct aka_recovery_launch *l, const char *ws, int poll_interval_s,
                       struct strbuf *dir, bool *started, struct aka_err *err)
{
    struct strbuf real = STRBUF_INIT;
    *started = false;
    if (aka_realpath(ws, &real, err) < 0 || aka_recovery_state_dir(ws, dir, err) < 0 ||
        aka_mkdir_p(dir->buf, 0700, err) < 0) {
        strbuf_release(&real);
        return -1;
    }
    int rc = start_in(l, real.buf, poll_interval_s, dir->buf, started, err);
    strbuf_release(&real);
    return rc;
}

/* The state directory exists: record, write the scripts, spawn unless disabled or running. */
static int start_in(const struct aka_recovery_launch *l, const char *ws, int poll_interval_s,
                    const char *dir, bool *started, struct aka_err *err)
{
    json_t *doc = rcv_launch_json(l, ws, poll_interval_s);
    int rc = rcv_write_json(dir, "restart.json", doc, err);
    json_decref(doc);
    if (rc == 0)
        rc = rcv_write_scripts(dir, l, ws, err);
    if (rc < 0 || rcv_exists(dir, "stopped.json") || monitor_running(dir))
        return rc;
    struct rcv_state st = {.phase = "polling", .ws = ws, .last_exit = -1};
    if (rcv_state_write(dir, &st, err) < 0 ||
        spawn_monitor(dir, l->exe.buf, l->repo_root.buf, err) < 0)
        return -1;
    *started = true;
    return 0;
}

/* ---- the restarted optimizer's side ------------------------------------------------------- */

int aka_recovery_child_handshake(struct aka_err *err)
{
    const char *dir = getenv(RCV_ENV_DIR), *id = getenv(RCV_ENV_HANDOFF);
    if (!aka_recovery_is_restarted())
        return 0;
    if (!id || !*id)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s is set but %s is not", RCV_ENV_DIR,
                           RCV_ENV_HANDOFF);
    json_t *ready = json_pack("{s:s, s:I}", "handoff", id, "pid", (json_int_t)getpid());
    int rc = rcv_write_json(dir, "restart.ready", ready, err);
    json_decref(ready);
    for (long ms = 0; rc == 0 && ms < RCV_HANDSHAKE_MS; ms += 100) {
        json_t *ack = rcv_read_json(dir, "restart.ack");
        const char *got = json_string_value(json_object_get(ack, "handoff"));
        bool ok = got && strcmp(got, id) == 0;
        json_decref(ack);
        if (ok)
            return 0;
        sleep_ms(100);
    }
    if (rc == 0)
        fprintf(stderr,
                "aka optimize: the recovery monitor did not acknowledge (%s/restart.ack); "
                "going on unsupervised\n",
                dir);
    return rc;
}

/* ---- stop, resume, status ---------------------------------------------------------------- */

static int existing_dir(const char *ws, struct strbuf *dir, struct aka_err *err)
{
    if (aka_recovery_state_dir(ws, dir, err) < 0)
        return -1;
    if (!rcv_exists(dir->buf, "restart.json"))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: no recovery state for this workspace (%s/restart.json is missing)",
                           ws, dir->buf);
    return 0;
}

int aka_recovery_stop(const char *ws, struct aka_err *err)
{
    struct strbuf dir = STRBUF_INIT;
    struct rcv_state st = {0};
    char now[AKA_TIMESTAMP_MAX];
    int rc = existing_dir(ws, &dir, err);
    aka_record_now(now);
    json_t *doc = json_pack("{s:s, s:s, s:I}", "schema", "aka.recovery.stopped.v1", "requested_at",
                            now, "requester_pid", (json_int_t)getpid());
    if (rc == 0)
        rc = rcv_write_json(dir.buf, "stopped.json", doc, err);
    json_decref(doc);
    if (rc == 0) {
        rcv_state_load(dir.buf, &st);
        /* The monitor ends its optimizer on SIGTERM; it gets time for that. */
        if (st.monitor_pid > 1 &&
            proc_end_group_if_same((pid_t)st.monitor_pid, st.monitor_ticks, 15000) < 0)
            rc = aka_err_set(err, AKA_EXIT_FAILED, "monitor %lld survives SIGKILL", st.monitor_pid);
        rcv_state_load(dir.buf, &st); /* the optimizer it had, if it could not end it */
        if (rc == 0 && st.child_pid > 1 &&
            proc_end_group_if_same((pid_t)st.child_pid, st.child_ticks, 5000) < 0)
            rc = aka_err_set(err, AKA_EXIT_FAILED, "optimizer %lld survives SIGKILL", st.child_pid);
    }
    if (rc == 0 && monitor_running(dir.buf))
        rc = aka_err_set(err, AKA_EXIT_FAILED, "%s/monitor.lock: still held", dir.buf);
    if (rc == 0) {
        st.ws = ws;
        st.child_pid = st.monitor_pid = 0;
        st.child_ticks = st.monitor_ticks = 0;
        st.phase = "stopped";
        rc = rcv_state_write(dir.buf, &st, err);
    }
    strbuf_release(&dir);
    return rc;
}

int aka_recovery_resume(const char *ws, struct strbuf *dir, struct aka_err *err)
{
    struct aka_recovery_launch l;
    char *w = NULL;
    int poll = 0;
    aka_recovery_launch_init(&l);
    int rc = existing_dir(ws, dir, err);
    if (rc == 0)
        rc = rcv_launch_load(dir->buf, &l, &w, &poll, err);
    if (rc == 0)
        rc = rcv_remove(dir->buf, "stopped.json", err);
    if (rc == 0 && !monitor_running(dir->buf)) {
        struct rcv_state st = {.phase = "polling", .ws = ws, .last_exit = -1};
        rcv_state_load(dir->buf, &st);
        st.phase = "polling";
        st.ws = ws;
        rc = rcv_state_write(dir->buf, &st, err) < 0
                 ? -1
                 : spawn_monitor(dir->buf, l.exe.buf, l.repo_root.buf, err);
    }
    free(w);
    aka_recovery_launch_release(&l);
    return rc;
}

int aka_recovery_status(const char *ws, json_t **out, struct aka_err *err)
{
    struct strbuf dir = STRBUF_INIT;
    int rc = existing_dir(ws, &dir, err);
    if (rc == 0) {
        json_t *doc = rcv_read_json(dir.buf, "state.json");
        *out = doc ? doc : json_object();
        json_object_set_new(*out, "state_dir", json_string(dir.buf));
        json_object_set_new(*out, "stopped", json_boolean(rcv_exists(dir.buf, "stopped.json")));
        json_object_set_new(*out, "monitor_running", json_boolean(monitor_running(dir.buf)));
    }
    strbuf_release(&dir);
    return rc;
}
