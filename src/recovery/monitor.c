/*
 * monitor.c — the recovery monitor (`aka recovery monitor DIR`, started detached).
 *
 *   polling     run the campaign's health probe (its own transport flags, parsed again
 *               from restart.json) every poll interval until it passes;
 *   restarting  run the recorded command (nothing else) in its directory, in a session
 *               of its own, and wait for restart.ready naming that process and handoff;
 *   running     restart.ack written: stay with the optimizer until it exits. 0 completes
 *               the recovery; anything else (75 again, a crash, SIGKILL) is polling again.
 *   stopped     stopped.json appeared or SIGTERM/SIGINT/SIGHUP arrived: the optimizer's
 *               group is ended (base/proc) and the monitor exits.
 *
 * One monitor per state directory: monitor.lock (flock) is held for its whole life, so a
 * second one (an optimizer that met 75 again, a recover.sh run twice) exits at once.
 */
#include "recovery/internal.h"

#include "base/fs.h"
#include "base/lock.h"
#include "base/proc.h"
#include "evaluator/evaluator.h"
#include "optimize/optimize.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct monitor {
    const char *dir;
    struct aka_recovery_launch l;
    char *ws;
    int poll;
    struct rcv_state st;
    struct aka_optimize_opts o;
    struct aka_sandbox_transport t;
    bool have_t;
    char t_err[AKA_ERR_MSG_MAX]; /* why the transport could not be opened */
    atomic_bool child_done;
};

static void say(const struct monitor *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(const struct monitor *m, const char *fmt, ...)
{
    char now[AKA_TIMESTAMP_MAX];
    va_list ap;
    aka_record_now(now);
    fprintf(stderr, "%s aka recovery [%s]: ", now, m->dir);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

static void save(struct monitor *m, const char *phase)
{
    struct aka_err err = AKA_ERR_INIT;
    m->st.phase = phase;
    if (rcv_state_write(m->dir, &m->st, &err) < 0)
        say(m, "state.json not written: %s", err.msg);
}

static bool stop_requested(const struct monitor *m)
{
    return proc_stop_signal() != 0 || rcv_exists(m->dir, "stopped.json");
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0)
        ;
}

/* One poll interval in 100 ms steps; true when a stop came meanwhile. */
static bool wait_interval(const struct monitor *m)
{
    for (long ms = 0; ms < m->poll * 1000L; ms += 100) {
        if (stop_requested(m))
            return true;
        sleep_ms(100);
    }
    return stop_requested(m);
}

/* The campaign's own transport and platform, from its recorded flags. */
static void open_transport(struct monitor *m)
{
    struct aka_err err = AKA_ERR_INIT;
    aka_optimize_opts_release(&m->o);
    aka_optimize_opts_init(&m->o);
    m->have_t = aka_optimize_opts_parse((int)m->l.args.n, m->l.args.v, &m->o, &err) == 0 &&
                aka_transport_open(&m->o.transport, &m->t, &err) == 0;
    if (!m->have_t)
        snprintf(m->t_err, sizeof(m->t_err), "%s", err.msg);
}

static bool probe(struct monitor *m)
{
    struct aka_sandbox_health h = {0};
    struct aka_err err = AKA_ERR_INIT;
    if (!m->have_t)
        open_transport(m); /* a transport the host lacked may be there now */
    bool ok =
        m->have_t && aka_eval_health(&m->t, m->o.platform, m->o.framework, false, &h, &err) == 0;
    aka_record_now(m->st.probe_at);
    m->st.probe_ok = ok;
    snprintf(m->st.probe_output, sizeof(m->st.probe_output), "%s",
             !m->have_t ? m->t_err
             : ok       ? h.output
                        : err.msg);
    return ok;
}

/* ---- one restart ------------------------------------------------------------------------ */

static void *handshake(void *arg)
{
    struct monitor *m = arg;
    struct aka_err err = AKA_ERR_INIT;
    for (long ms = 0; ms < RCV_HANDSHAKE_MS && !atomic_load(&m->child_done); ms += 100) {
        json_t *ready = rcv_read_json(m->dir, "restart.ready");
        const char *id = json_string_value(json_object_get(ready, "handoff"));
        bool match = id && strcmp(id, m->st.handoff) == 0 &&
                     json_integer_value(json_object_get(ready, "pid")) == m->st.child_pid;
        json_decref(ready);
        if (match) {
            json_t *ack = json_pack("{s:s, s:I}", "handoff", m->st.handoff, "pid",
                                    (json_int_t)m->st.child_pid);
            if (rcv_write_json(m->dir, "restart.ack", ack, &err) < 0)
                say(m, "restart.ack not written: %s", err.msg);
            json_decref(ack);
            save(m, "running");
            say(m, "optimizer %lld is ready (handoff %s)", m->st.child_pid, m->st.handoff);
            return NULL;
        }
        sleep_ms(100);
    }
    if (!atomic_load(&m->child_done))
        say(m, "optimizer %lld did not report ready within %d s", m->st.child_pid,
            RCV_HANDSHAKE_MS / 1000);
    return NULL;
}

static void child_argv(const struct monitor *m, struct strvec *argv)
{
    strvec_pushv(argv, (const char *const[]){m->l.exe.buf, "--repo-root", m->l.repo_root.buf,
                                             m->l.args.v[0], "--", NULL});
    for (size_t i = 1; i < m->l.args.n; i++)
        strvec_push(argv, m->l.args.v[i]);
}

static int start_child(struct monitor *m, struct proc_handle **h, struct aka_err *err)
{
    struct strvec argv = STRVEC_INIT, env = STRVEC_INIT;
    struct strbuf log = STRBUF_INIT;
    char hex[4][9];
    for (int i = 0; i < 4; i++)
        aka_random_hex8(hex[i]);
    snprintf(m->st.handoff, sizeof(m->st.handoff), "%s%s%s%s", hex[0], hex[1], hex[2], hex[3]);
    child_argv(m, &argv);
    strvec_pushf(&env, RCV_ENV_DIR "=%s", m->dir);
    strvec_pushf(&env, RCV_ENV_HANDOFF "=%s", m->st.handoff);
    rcv_path(&log, m->dir, "restart.log");
    struct proc_spec spec = {.argv = (const char *const *)argv.v,
                             .cwd = m->l.cwd.buf,
                             .env = (const char *const *)env.v,
                             .new_session = true,
                             .out_mode = PROC_TO_FILE,
                             .err_mode = PROC_TO_FILE,
                             .out_file = log.buf,
                             .err_file = log.buf};
    int rc =
        rcv_remove(m->dir, "restart.ready", err) < 0 || rcv_remove(m->dir, "restart.ack", err) < 0
            ? -1
            : proc_start(&spec, h, err);
    if (rc == 0) {
        m->st.child_pid = proc_pid(*h);
        m->st.child_ticks = proc_start_ticks(proc_pid(*h));
    }
    strvec_clear(&argv);
    strvec_clear(&env);
    strbuf_release(&log);
    return rc;
}

/* Restart and supervise: 0 completed, 1 back to polling, 2 stopped. */
static int restart(struct monitor *m)
{
    struct proc_handle *h = NULL;
    struct proc_result res;
    struct aka_err err = AKA_ERR_INIT;
    pthread_t th;
    m->st.attempts++;
    if (start_child(m, &h, &err) < 0) {
        say(m, "restart failed: %s", err.msg);
        return stop_requested(m) ? 2 : 1;
    }
    save(m, "restarting");
    say(m, "restart %lld: optimizer %lld started in %s", m->st.attempts, m->st.child_pid,
        m->l.cwd.buf);
    atomic_store(&m->child_done, false);
    bool threaded = pthread_create(&th, NULL, handshake, m) == 0;
    proc_result_init(&res);
    int rc = proc_wait(h, &res, &err); /* a stop signal ends the optimizer's group here */
    atomic_store(&m->child_done, true);
    if (threaded)
        pthread_join(th, NULL);
    m->st.last_exit = rc < 0 ? err.code : res.exit_code;
    m->st.child_pid = 0;
    m->st.child_ticks = 0;
    proc_result_release(&res);
    say(m, "optimizer exited with status %d", m->st.last_exit);
    if (rc < 0 || stop_requested(m))
        return 2;
    return m->st.last_exit == 0 ? 0 : 1;
}

/* ---- the loop ---------------------------------------------------------------------------- */

static int loop(struct monitor *m)
{
    for (;;) {
        if (stop_requested(m))
            return 2;
        save(m, "polling");
        if (!probe(m)) {
            save(m, "polling");
            say(m, "health probe failed; next in %d s: %s", m->poll, m->st.probe_output);
            if (wait_interval(m))
                return 2;
            continue;
        }
        say(m, "health probe passed");
        int rc = restart(m);
        if (rc != 1)
            return rc;
        /* An optimizer that fails at once must not be restarted in a tight loop. */
        save(m, "polling");
        if (wait_interval(m))
            return 2;
    }
}

int aka_recovery_monitor(const char *state_dir, struct aka_err *err)
{
    struct monitor m = {.dir = state_dir};
    struct aka_lock lock = AKA_LOCK_INIT;
    struct strbuf lp = STRBUF_INIT;
    int rc;
    rcv_path(&lp, state_dir, "monitor.lock");
    aka_recovery_launch_init(&m.l);
    aka_optimize_opts_init(&m.o);
    /* `status` probes the lock for an instant: a start at that instant retries. */
    for (int i = 0; (rc = aka_lock_acquire(&lock, lp.buf, false, err)) < 0 && i < 20; i++)
        sleep_ms(100);
    if (rc == 0)
        rc = rcv_launch_load(state_dir, &m.l, &m.ws, &m.poll, err);
    if (rc == 0)
        rc = proc_catch_stop_signals(err);
    if (rc == 0) {
        rcv_state_load(state_dir, &m.st);
        m.st.ws = m.ws;
        m.st.monitor_pid = getpid();
        m.st.monitor_ticks = proc_start_ticks(getpid());
        m.st.last_exit = -1;
        say(&m, "monitor %d started for %s (poll every %d s)", (int)getpid(), m.ws, m.poll);
        int how = loop(&m);
        save(&m, how == 0 ? "completed" : "stopped");
        say(&m, "monitor exits: %s", m.st.phase);
    }
    aka_optimize_opts_release(&m.o);
    aka_recovery_launch_release(&m.l);
    aka_lock_release(&lock);
    free(m.ws);
    strbuf_release(&lp);
    return rc;
}
