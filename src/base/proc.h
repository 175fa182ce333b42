/*
 * proc.h — running a child process: argv only, never a shell.
 *
 * The child runs in a new process group (and, when asked, a new session) so
 * that a timeout or a Ctrl-C can end everything it started. On timeout the
 * whole group gets SIGTERM, then SIGKILL after `kill_grace_ms`. Output is
 * captured to files or to memory with byte caps: a candidate that prints
 * 100 MB cannot exhaust the supervisor.
 */
#ifndef AKA_BASE_PROC_H
#define AKA_BASE_PROC_H

#include "base/error.h"
#include "base/strbuf.h"
#include "base/vec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum proc_capture {
    PROC_INHERIT = 0, /* share the parent's stream */
    PROC_NULL,        /* /dev/null */
    PROC_TO_BUFFER,   /* into proc_result.out / .err (capped) */
    PROC_TO_FILE      /* into the file named by out_file / err_file (capped) */
};

struct proc_spec {
    const char *const *argv; /* argv[0] is looked up in PATH when it has no '/' */
    const char *cwd;         /* NULL: inherit */
    /* Environment: when clean_env is set the child gets only `env`; otherwise
     * the parent's environment with `env` entries ("NAME=value") overriding
     * and "NAME" (no '=') entries removed. */
    const char *const *env;
    bool clean_env;
    bool new_session;       /* setsid() instead of only setpgid() */
    const char *stdin_file; /* NULL: /dev/null — children never read our terminal */
    enum proc_capture out_mode, err_mode;
    const char *out_file, *err_file;
    size_t out_cap, err_cap; /* bytes kept; 0 means unlimited. Extra output is drained. */
    long timeout_ms;         /* 0: none */
    long kill_grace_ms;      /* SIGTERM → SIGKILL delay; 0 means 2000 */
    bool after_stop;         /* a short cleanup command (a transport releasing what it holds
                                elsewhere, e.g. scancel): started, and left to its end or its
                                timeout, even after a stop signal */
    /* NULL, or a cgroup's cgroup.procs file: the child moves itself there before exec, so
     * that nothing it starts is ever outside the cgroup's limits (best effort: when the
     * write fails the child runs on, and the caller's own check stays the fallback). */
    const char *cgroup_procs;
};

struct proc_result {
    int exit_code;   /* normalized: the exit status, 128+signal, or 124 on timeout */
    bool exited;     /* ended by exit() */
    int term_signal; /* the signal that ended it, 0 when it exited */
    bool timed_out;  /* the wall-clock limit was hit (exit_code is 124) */
    bool out_truncated, err_truncated;
    size_t out_bytes, err_bytes; /* total bytes the child wrote, kept or not */
    struct strbuf out, err;      /* PROC_TO_BUFFER only */
    pid_t pid;
    double wall_seconds;
};

void proc_result_init(struct proc_result *r);
void proc_result_release(struct proc_result *r);

/*
 * Run to completion. Returns 0 when the child was started and reaped (whatever
 * its status), -1 when it could not be started (err names argv[0] and why;
 * code 75 when the program is missing, since that is the environment).
 *
 * Details of this implementation that callers may rely on:
 *  - `res` is overwritten, not released: release a previous result first.
 *  - The child inherits only fds 0, 1, 2, default signal dispositions and an
 *    empty signal mask; argv[0] is searched in the PATH of the *caller's*
 *    environment even when clean_env is set.
 *  - stdin_file/out_file/err_file are opened by the caller (relative to the
 *    caller's cwd, not spec->cwd); out_file and err_file may be the same file.
 *  - Every failure to start (exec, cwd, fork, files) is code 75; an empty
 *    argv is code 2.
 *  - After the child exits, grandchildren still holding its stdout/stderr get
 *    a short grace, then the group is SIGKILLed and the pipes are closed, so
 *    a background process can never make proc_run hang.
 *  - A capture file that could not be written fails proc_wait (-1, code 75)
 *    with `res` filled in anyway.
 *  - A child that survives SIGKILL for 10 s (stuck in the kernel) fails
 *    proc_wait with code 75 instead of blocking forever; it stays unreaped.
 *  - proc_start turns a default SIGPIPE disposition into SIG_IGN (once,
 *    process-wide), so a capture file on a dead pipe is EPIPE, not death.
 *  - After a stop signal (proc_catch_stop_signals below) proc_start refuses and
 *    proc_wait ends the group and fails, both with code 128+signal; `res` is
 *    filled in anyway. Not for a spec with after_stop.
 */
int proc_run(const struct proc_spec *spec, struct proc_result *res, struct aka_err *err);

/* Started-but-not-waited children, for callers that supervise several at once. */
struct proc_handle;
int proc_start(const struct proc_spec *spec, struct proc_handle **h, struct aka_err *err);
pid_t proc_pid(const struct proc_handle *h);
/* Wait for completion (honours the spec's timeout); frees the handle. */
int proc_wait(struct proc_handle *h, struct proc_result *res, struct aka_err *err);
/*
 * Stop signals for a command that runs its children through proc_wait (`aka eval`,
 * `aka sandbox run`). Afterwards SIGINT, SIGTERM and SIGHUP no longer end the
 * process at once: the first one is recorded, a proc_wait in progress ends its
 * child's whole group (SIGTERM, SIGKILL after the grace) and fails with code
 * 128+signal, and proc_start starts nothing new. Callers unwind through their own
 * cleanup (job directories, temp files) and exit with that code (130, 143, 129).
 * Children still start with default dispositions.
 */
int proc_catch_stop_signals(struct aka_err *err);
/* The stop signal received since proc_catch_stop_signals, 0 when none. */
int proc_stop_signal(void);
/* -1 with code 128+signal ("interrupted by ...") once a stop signal arrived, else 0. */
int proc_check_stop(struct aka_err *err);

/*
 * A heartbeat for long waits: while proc_wait waits on a child, fn(arg, elapsed seconds)
 * is called every every_ms (the first time every_ms after the child started), so a
 * command whose job runs for minutes (`aka eval`, `aka profile`) can say it is alive.
 * Process-wide, like the stop signals; fn NULL or every_ms <= 0 turns it off.
 */
void proc_set_heartbeat(void (*fn)(void *arg, double elapsed_s), void *arg, long every_ms);
/* One wait's heartbeat: proc_wait keeps one for the child it waits on, and a wait of the
 * caller's own that is not on a child (the evaluation broker's poll for its answer, the
 * gateway transport's long-polls) keeps its own: start it when the wait begins, then tick
 * it as often as the wait wakes (at least once a second); a tick beats when one is due,
 * with the seconds since the start. */
struct proc_beat {
    int64_t start_ms, beat_at_ms; /* beat_at_ms -1: no heartbeat */
};
void proc_beat_start(struct proc_beat *w);
void proc_beat_tick(struct proc_beat *w);

/* SIGTERM, then SIGKILL after grace (<= 0: 2000 ms), to the whole process group.
 * Returns early once no live (non-zombie) member remains. */
void proc_kill_group(pid_t pgid, long grace_ms);

/* What /proc/<pid>/stat says of a process: the one parser of that file (the guard,
 * dispatch teardown and crash recovery all read process trees through it). */
struct proc_stat {
    pid_t pid, ppid, pgrp, sid;
    char state;               /* R S D Z X ... */
    unsigned long long start; /* field 22: start time in clock ticks after boot */
};
bool proc_read_stat(pid_t pid, struct proc_stat *out);

/* The start time of pid (/proc/<pid>/stat field 22, clock ticks after boot), 0 when it is
 * gone or unreadable. With the pid it identifies a process across pid reuse. */
unsigned long long proc_start_ticks(pid_t pid);

/*
 * End a group recorded earlier as (pgid, start_ticks of its leader), e.g. by a
 * supervisor that was killed, and the other groups of the session the leader
 * led (an agent runs in its own session). Identity is checked, never a name:
 * when the pid now belongs to a process with another start time, nothing is
 * signalled; only members started no earlier than the leader are ended. SIGTERM,
 * then SIGKILL after grace_ms (<= 0: 2000 ms), then waits until they are gone.
 * Returns 1 when it ended something, 0 when nothing of the group was left (or
 * start_ticks is 0), -1 when a member survived SIGKILL for 10 s.
 */
int proc_end_group_if_same(pid_t pgid, unsigned long long start_ticks, long grace_ms);

/*
 * Start spec's command detached (a daemon: double fork, a session of its own that it
 * does not lead, its own process group, reaped by init); the caller never waits for
 * it. Its stdout and stderr are appended to spec->out_file (NULL: /dev/null); the
 * capture modes are not used. Its pid goes to pid_out.
 */
int proc_spawn_detached(const struct proc_spec *spec, pid_t *pid_out, struct aka_err *err);

#endif
