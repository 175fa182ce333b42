/*
 * proc.c — the process runner (see proc.h): fork + execvpe (never a shell),
 * one process group per child, capped capture through poll(), and timeouts
 * that end the whole group.
 *
 * Why the wait loop cannot hang
 * -----------------------------
 * The loop waits on three kinds of events only: data/EOF on our pipes, the
 * child's exit (a pidfd, or a short tick where pidfds are unavailable) and
 * deadlines. A grandchild that inherits the child's stdout and outlives it
 * would keep our pipe open forever, so once the direct child is reaped the
 * pipes get ORPHAN_GRACE_MS to reach EOF. After that the group is SIGKILLed
 * (everything left in it is a stray of a finished job), whatever is already
 * buffered is drained with a bounded number of non-blocking reads, and our
 * read ends are closed. This holds even when the holder escaped the group
 * with setsid() and cannot be signalled: we simply stop reading. On timeout
 * the same rule applies after the SIGKILL escalation. So every run ends at
 * most timeout + grace + ORPHAN_GRACE_MS after it started (or child exit +
 * ORPHAN_GRACE_MS without a timeout). The one thing SIGKILL cannot end is a
 * child stuck in uninterruptible sleep; we give up on it after UNKILLABLE_MS.
 *
 * A stop signal (proc_catch_stop_signals) is one more event of the loop: the
 * handler only records the signal and writes a byte to a self-pipe that poll()
 * watches, and the loop then ends the child's group the way a timeout does, so
 * a caller that was told "interrupted" knows nothing of the job is left.
 *
 * proc_start() also blocks until the child has exec'd (or failed to): the
 * child reports exec errors through a close-on-exec pipe, and EOF on that pipe
 * means exec succeeded. By then the child has also finished setpgid/setsid, so
 * no kill(-pgid) can ever race with the child joining its group.
 */
#include "base/proc.h"
#include "base/fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define DEFAULT_GRACE_MS 2000
/* How long leftover group members may hold our pipes after the child is gone. */
#define ORPHAN_GRACE_MS 200
/* How long a SIGKILLed child may take to die before we stop waiting for it. */
#define UNKILLABLE_MS 10000
/* Re-check interval when no file descriptor can wake poll() for the event. */
#define TICK_MS    10
#define READ_CHUNK 65536
/* Bound on the final drain, so a writer in another session cannot keep us busy. */
#define DRAIN_MAX_READS 64
/* Bound on the fallback close-on-exec loop when close_range() is unavailable. */
#define FD_SWEEP_MAX 65536

/* Stages the child reports through the exec-status pipe. */
enum { STAGE_SETUP = 1, STAGE_CHDIR, STAGE_EXEC };

struct stream {
    int fd;      /* our read end of the pipe; -1 when not piped or closed */
    int file_fd; /* PROC_TO_FILE destination; -1 otherwise */
    enum proc_capture mode;
    size_t cap, kept, total;
    bool truncated;
    int write_errno; /* first failure writing file_fd */
    char *file_name; /* for messages about file_fd */
    struct strbuf buf;
};

struct proc_handle {
    pid_t pid; /* also the process group id */
    int pidfd; /* readable when the child exits; -1 when unsupported */
    char *name;
    struct stream out, err;
    struct timespec start, end;
    int64_t deadline_ms, kill_at_ms, reaped_at_ms, escalated_at_ms;
    struct proc_beat beat; /* the heartbeat while it waits (proc_set_heartbeat) */
    long grace_ms;
    bool reaped, timed_out, escalated;
    bool ending;     /* the group got SIGTERM (timeout or stop signal); SIGKILL follows */
    int stopped_by;  /* the stop signal that ended the child, 0 when none did */
    bool after_stop; /* proc_spec's: a stop signal does not end it */
    int status;
};

/* Everything the child needs, prepared before fork so the child never allocates. */
struct child_plan {
    const char *const *argv;
    char *const *envp;
    const char *cwd;
    bool new_session;
    int fds[3];    /* what becomes fd 0, 1, 2; -1 to inherit */
    int report_fd; /* write end of the exec-status pipe */
    int sweep_max; /* upper bound for the close-on-exec fallback */
    const char *cgroup_procs;
};

/* The first stop signal received after proc_catch_stop_signals, and the self-pipe its
 * handler writes to so that a poll() in progress wakes up. */
static volatile sig_atomic_t stop_sig;
static int stop_pipe[2] = {-1, -1};

/* proc_set_heartbeat's; every_ms 0: off. */
static struct {
    void (*fn)(void *arg, double elapsed_s);
    void *arg;
    long every_ms;
} heartbeat;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* ---- process group liveness ------------------------------------------- */

/* The fields of /proc/<pid>/stat this file needs. */
bool proc_read_stat(pid_t pid, struct proc_stat *out)
{
    char path[64], buf[1024];
    int ppid, pgrp, sid;
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    /* "pid (comm) S ppid pgrp session ...": comm may hold spaces and ')', so parse after the
     * last ')'. Fields 7..21 are skipped to reach the start time (field 22). */
    char *p = strrchr(buf, ')');
    if (!p || sscanf(p + 1,
                     " %c %d %d %d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d "
                     "%llu",
                     &out->state, &ppid, &pgrp, &sid, &out->start) != 5)
        return false;
    out->pid = pid;
    out->ppid = (pid_t)ppid;
    out->pgrp = (pid_t)pgrp;
    out->sid = (pid_t)sid;
    return true;
}

static bool live_state(char state)
{
    return state != 'Z' && state != 'X';
}

/* True when /proc/<pid>/stat shows a non-zombie member of group pgid. */
static bool proc_member_live(const char *pid, pid_t pgid)
{
    struct proc_stat f;
    return proc_read_stat((pid_t)atol(pid), &f) && f.pgrp == pgid && live_state(f.state);
}

/*
 * Does group pgid still have a member that is not a zombie? kill(-pgid, 0)
 * alone counts zombies (including our own unreaped child), which would make
 * every grace period run to its end, so we confirm through /proc.
 */
static bool group_alive(pid_t pgid)
{
    if (kill(-pgid, 0) < 0)
        return false; /* ESRCH: gone; EPERM: nothing we could signal anyway */
    DIR *d = opendir("/proc");
    if (!d)
        return true; /* cannot tell: assume alive, the grace period still bounds us */
    bool live = false;
    struct dirent *de;
    while (!live && (de = readdir(d)) != NULL)
        if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
            live = proc_member_live(de->d_name, pgid);
    closedir(d);
    return live;
}

void proc_kill_group(pid_t pgid, long grace_ms)
{
    if (pgid <= 1)
        return; /* kill(0) / kill(-1) would hit our own group or every process */
    if (grace_ms <= 0)
        grace_ms = DEFAULT_GRACE_MS;
    if (kill(-pgid, SIGTERM) < 0)
        return;
    int64_t until = now_ms() + grace_ms;
    while (group_alive(pgid) && now_ms() < until)
        sleep_ms(TICK_MS);
    if (group_alive(pgid))
        kill(-pgid, SIGKILL);
}

/* ---- ending a recorded group by identity ------------------------------- */

unsigned long long proc_start_ticks(pid_t pid)
{
    struct proc_stat f;
    return pid > 0 && proc_read_stat(pid, &f) ? f.start : 0;
}

/*
 * The process groups that still hold a live member of the recorded group or
 * session `id` started no earlier than its leader. Linux never hands out a pid
 * that is still some process's group or session id, so while any such member
 * lives, `id` cannot name a newer, unrelated group.
 */
struct pid_list {
    pid_t *v;
    size_t n, alloc;
};

static void recorded_groups(pid_t id, unsigned long long start, struct pid_list *groups)
{
    groups->n = 0;
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        struct proc_stat f;
        if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
            !proc_read_stat((pid_t)atol(de->d_name), &f) || !live_state(f.state) ||
            (f.pgrp != id && f.sid != id) || f.start < start)
            continue;
        bool seen = false;
        for (size_t i = 0; i < groups->n && !seen; i++)
            seen = groups->v[i] == f.pgrp;
        if (!seen && f.pgrp > 1)
            VEC_PUSH(*groups, (pid_t)f.pgrp);
    }
    if (d)
        closedir(d);
}

/* Signal every group until none is left or `until` passes; true when none is left. */
static bool signal_until_gone(pid_t id, unsigned long long start, int sig, int64_t until)
{
    struct pid_list groups = {0};
    recorded_groups(id, start, &groups);
    while (groups.n > 0 && now_ms() < until) {
        for (size_t i = 0; i < groups.n; i++)
            kill(-groups.v[i], sig);
        sleep_ms(TICK_MS);
        recorded_groups(id, start, &groups);
    }
    bool gone = groups.n == 0;
    VEC_FREE(groups);
    return gone;
}

int proc_end_group_if_same(pid_t pgid, unsigned long long start_ticks, long grace_ms)
{
    if (pgid <= 1 || start_ticks == 0)
        return 0; /* no identity to check: never signal on a guess */
    unsigned long long now_start = proc_start_ticks(pgid);
    if (now_start != 0 && now_start != start_ticks)
        return 0; /* the pid belongs to a newer process: the recorded group is long gone */
    struct pid_list groups = {0};
    recorded_groups(pgid, start_ticks, &groups);
    size_t found = groups.n;
    VEC_FREE(groups);
    if (found == 0)
        return 0;
    if (grace_ms <= 0)
        grace_ms = DEFAULT_GRACE_MS;
    if (signal_until_gone(pgid, start_ticks, SIGTERM, now_ms() + grace_ms))
        return 1;
    return signal_until_gone(pgid, start_ticks, SIGKILL, now_ms() + UNKILLABLE_MS) ? 1 : -1;
}

/* ---- stop signals ------------------------------------------------------ */

static void on_stop_signal(int sig)
{
    int saved = errno;
    if (!stop_sig)
        stop_sig = sig;
    if (stop_pipe[1] >= 0) {
        ssize_t n = write(stop_pipe[1], "", 1);
        (void)n; /* a full pipe already wakes the loop */
    }
    errno = saved;
}

int proc_catch_stop_signals(struct aka_err *err)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa;
    if (stop_pipe[0] < 0 && pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
        return aka_err_set(err, AKA_EXIT_ENV, "cannot create the stop-signal pipe: %s",
                           strerror(errno));
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = SA_RESTART; /* plain reads and writes go on; poll() wakes through the pipe */
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        if (sigaction(sigs[i], &sa, NULL) < 0)
            return aka_err_set(err, AKA_EXIT_ENV, "cannot catch %s: %s", strsignal(sigs[i]),
                               strerror(errno));
    return 0;
}

int proc_stop_signal(void)
{
    return stop_sig;
}

int proc_check_stop(struct aka_err *err)
{
    int sig = stop_sig;
    if (!sig)
        return 0;
    return aka_err_set(err, 128 + sig, "interrupted by %s: the job's processes were ended",
                       sig == SIGINT    ? "SIGINT"
                       : sig == SIGTERM ? "SIGTERM"
                                        : "SIGHUP");
}

static void drain_stop_pipe(void)
{
    char buf[64];
    while (stop_pipe[0] >= 0 && read(stop_pipe[0], buf, sizeof(buf)) > 0)
        ;
}

/* ---- the child side (between fork and exec: async-signal-safe calls only) */

static void child_fail(int report_fd, int stage) __attribute__((noreturn));
static void child_fail(int report_fd, int stage)
{
    int msg[2] = {stage, errno};
    ssize_t n = write(report_fd, msg, sizeof(msg));
    (void)n; /* nothing left to do if even this fails */
    _exit(127);
}

/* Default dispositions and an empty mask: exec keeps ignored signals and the
 * mask, and a child that inherits a blocked SIGTERM could not be timed out. */
static void child_reset_signals(void)
{
    struct sigaction sa;
    sigset_t none;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++)
        sigaction(sig, &sa, NULL); /* EINVAL for SIGKILL/SIGSTOP/libc-reserved: fine */
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Mark every fd >= lowfd close-on-exec so the child inherits only 0, 1, 2
 * (a leaked lock fd would keep a workspace lock alive in a stray child). */
static void child_cloexec_from(int lowfd, int sweep_max)
{
#if defined(SYS_close_range) && defined(CLOSE_RANGE_CLOEXEC)
    if (syscall(SYS_close_range, (unsigned)lowfd, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
        return;
#endif
    for (int fd = lowfd; fd < sweep_max; fd++)
        fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* Join the cgroup before exec ("0" moves the writer): a command cannot fork before it is
 * inside, as it could while a parent moved it in after the start. */
static void child_join_cgroup(const char *procs)
{
    int fd = procs ? open(procs, O_WRONLY | O_CLOEXEC) : -1;
    if (fd < 0)
        return;
    ssize_t n = write(fd, "0", 1);
    (void)n; /* best effort: see proc_spec.cgroup_procs */
    close(fd);
}

static void child_exec(const struct child_plan *p) __attribute__((noreturn));
static void child_exec(const struct child_plan *p)
{
    int moved[3], rep;
    child_reset_signals();
    /* Move every fd we need above 2 first so the dup2 calls cannot clobber one another. */
    rep = fcntl(p->report_fd, F_DUPFD_CLOEXEC, 3);
    if (rep < 0)
        _exit(127);
    if ((p->new_session ? setsid() : setpgid(0, 0)) < 0)
        child_fail(rep, STAGE_SETUP);
    for (int i = 0; i < 3; i++) {
        moved[i] = p->fds[i] < 0 ? -1 : fcntl(p->fds[i], F_DUPFD_CLOEXEC, 3);
        if (p->fds[i] >= 0 && moved[i] < 0)
            child_fail(rep, STAGE_SETUP);
    }
    for (int i = 0; i < 3; i++)
        if (moved[i] >= 0 && dup2(moved[i], i) < 0) /* dup2 clears FD_CLOEXEC on i */
            child_fail(rep, STAGE_SETUP);
    child_cloexec_from(3, p->sweep_max);
    if (p->cwd && chdir(p->cwd) < 0)
        child_fail(rep, STAGE_CHDIR);
    child_join_cgroup(p->cgroup_procs);
    /* execvpe searches the PATH of *our* environment, not envp: a clean env
     * still finds programs the way the supervisor would. */
    execvpe(p->argv[0], (char *const *)p->argv, p->envp);
    child_fail(rep, STAGE_EXEC);
}

/* ---- parent-side setup ------------------------------------------------- */

static size_t env_name_len(const char *entry)
{
    const char *eq = strchr(entry, '=');
    return eq ? (size_t)(eq - entry) : strlen(entry);
}

static void env_remove(struct strvec *env, const char *name, size_t len)
{
    size_t j = 0;
    for (size_t i = 0; i < env->n; i++) {
        if (env_name_len(env->v[i]) == len && strncmp(env->v[i], name, len) == 0)
            free(env->v[i]);
        else
            env->v[j++] = env->v[i];
    }
    env->n = j;
    if (env->v)
        env->v[j] = NULL;
}

static void build_env(const struct proc_spec *spec, struct strvec *env)
{
    if (!spec->clean_env)
        strvec_pushv(env, (const char *const *)environ);
    for (const char *const *e = spec->env; e && *e; e++) {
        env_remove(env, *e, env_name_len(*e));
        if (strchr(*e, '=')) /* "NAME" alone means: remove NAME */
            strvec_push(env, *e);
    }
    if (!env->v) { /* execve wants a real (empty) array, not NULL */
        env->v = aka_xcalloc(1, sizeof(*env->v));
        env->alloc = 1;
    }
}

/*
 * Respect a SIGPIPE handler the application installed, but turn the default
 * (terminate) into "ignore": writing captured output to a FIFO or pipe whose
 * reader died must be an EPIPE error, not the death of the supervisor.
 */
static void ignore_sigpipe(void)
{
    struct sigaction old, sa;
    if (sigaction(SIGPIPE, NULL, &old) < 0 || (old.sa_flags & SA_SIGINFO) ||
        old.sa_handler != SIG_DFL)
        return;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
}

static void stream_init(struct stream *s, enum proc_capture mode, size_t cap)
{
    memset(s, 0, sizeof(*s));
    s->fd = s->file_fd = -1;
    s->mode = mode;
    s->cap = cap;
    strbuf_init(&s->buf, 0);
}

static struct proc_handle *handle_new(const struct proc_spec *spec)
{
    struct proc_handle *h = aka_xcalloc(1, sizeof(*h));
    h->pid = -1;
    h->pidfd = -1;
    h->name = aka_xstrdup(spec->argv[0]);
    stream_init(&h->out, spec->out_mode, spec->out_cap);
    stream_init(&h->err, spec->err_mode, spec->err_cap);
    h->grace_ms = spec->kill_grace_ms > 0 ? spec->kill_grace_ms : DEFAULT_GRACE_MS;
    h->after_stop = spec->after_stop;
    h->deadline_ms = h->kill_at_ms = h->reaped_at_ms = h->escalated_at_ms = -1;
    clock_gettime(CLOCK_MONOTONIC, &h->start);
    if (spec->timeout_ms > 0)
        h->deadline_ms = now_ms() + spec->timeout_ms;
    proc_beat_start(&h->beat);
    return h;
}

static void handle_free(struct proc_handle *h)
{
    close_fd(&h->pidfd);
    close_fd(&h->out.fd);
    close_fd(&h->err.fd);
    close_fd(&h->out.file_fd);
    close_fd(&h->err.file_fd);
    strbuf_release(&h->out.buf);
    strbuf_release(&h->err.buf);
    free(h->out.file_name);
    free(h->err.file_name);
    free(h->name);
    free(h);
}

static int open_or_fail(const char *name, const char *path, int flags, struct aka_err *err)
{
    int fd = open(path, flags | O_CLOEXEC, 0644);
    if (fd < 0)
        aka_err_set(err, AKA_EXIT_ENV, "%s: cannot open %s: %s", name, path, strerror(errno));
    return fd;
}

/* Set up one output stream; *child_fd receives what the child's fd 1 or 2 becomes. */
static int open_output(struct proc_handle *h, struct stream *s, const char *file, int *child_fd,
                       struct aka_err *err)
{
    int p[2];
    *child_fd = -1;
    if (s->mode == PROC_INHERIT)
        return 0;
    if (s->mode == PROC_NULL)
        return (*child_fd = open_or_fail(h->name, "/dev/null", O_WRONLY, err)) < 0 ? -1 : 0;
    if (s->mode == PROC_TO_FILE) {
        if (!file)
            return aka_err_set(err, AKA_EXIT_USAGE, "%s: output file not given", h->name);
        /* O_APPEND: out and err may name the same file and must not overwrite each other. */
        s->file_fd = open_or_fail(h->name, file, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, err);
        if (s->file_fd < 0)
            return -1;
        s->file_name = aka_xstrdup(file);
    }
    if (pipe2(p, O_CLOEXEC) < 0)
        return aka_err_set(err, AKA_EXIT_ENV, "%s: pipe: %s", h->name, strerror(errno));
    /* Only our end is non-blocking: the child expects an ordinary blocking stdout. */
    fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
    s->fd = p[0];
    *child_fd = p[1];
    return 0;
}

static int open_child_fds(const struct proc_spec *spec, struct proc_handle *h, int fds[3],
                          struct aka_err *err)
{
    fds[0] =
        open_or_fail(h->name, spec->stdin_file ? spec->stdin_file : "/dev/null", O_RDONLY, err);
    if (fds[0] < 0)
        return -1;
    if (open_output(h, &h->out, spec->out_file, &fds[1], err) < 0)
        return -1;
    return open_output(h, &h->err, spec->err_file, &fds[2], err);
}

static int exec_error(const struct proc_handle *h, const struct proc_spec *spec, int stage, int e,
                      struct aka_err *err)
{
    if (stage == STAGE_EXEC && e == ENOENT)
        return aka_err_set(err, AKA_EXIT_ENV, "%s: program not found%s", h->name,
                           strchr(h->name, '/') ? "" : " in PATH");
    if (stage == STAGE_EXEC)
        return aka_err_set(err, AKA_EXIT_ENV, "%s: cannot execute: %s", h->name, strerror(e));
    if (stage == STAGE_CHDIR)
        return aka_err_set(err, AKA_EXIT_ENV, "%s: cannot enter working directory %s: %s", h->name,
                           spec->cwd, strerror(e));
    return aka_err_set(err, AKA_EXIT_ENV, "%s: cannot set up the child process: %s", h->name,
                       strerror(e));
}

/* Block until the child has exec'd (EOF on the close-on-exec pipe) or reported why not. */
static int await_exec(struct proc_handle *h, const struct proc_spec *spec, int rfd,
                      struct aka_err *err)
{
    int msg[2];
    ssize_t n;
    do
        n = read(rfd, msg, sizeof(msg));
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof(msg))
        return 0;
    while (waitpid(h->pid, &h->status, 0) < 0 && errno == EINTR)
        ;
    h->reaped = true;
    return exec_error(h, spec, msg[0], msg[1], err);
}

static int fork_child(const struct child_plan *plan, struct proc_handle *h, struct aka_err *err)
{
    sigset_t all, old;
    /* Block everything across fork so none of our handlers runs in the child
     * before it has reset the dispositions. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t pid = fork();
    if (pid == 0)
        child_exec(plan);
    int e = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid < 0)
        return aka_err_set(err, AKA_EXIT_ENV, "%s: cannot fork: %s", h->name, strerror(e));
    h->pid = pid;
    /* Also from the parent, so the group exists whoever runs first. Not with
     * new_session: a group leader may not call setsid(). */
    if (!plan->new_session)
        setpgid(pid, pid);
    return 0;
}

static void plan_init(struct child_plan *plan, const struct proc_spec *spec)
{
    long open_max = sysconf(_SC_OPEN_MAX);
    memset(plan, 0, sizeof(*plan));
    plan->argv = spec->argv;
    plan->cwd = spec->cwd;
    plan->new_session = spec->new_session;
    plan->cgroup_procs = spec->cgroup_procs;
    plan->fds[0] = plan->fds[1] = plan->fds[2] = plan->report_fd = -1;
    plan->sweep_max = open_max > 0 && open_max < FD_SWEEP_MAX ? (int)open_max : FD_SWEEP_MAX;
}

static int start_child(const struct proc_spec *spec, struct proc_handle *h, struct aka_err *err)
{
    struct strvec env = STRVEC_INIT;
    struct child_plan plan;
    int report[2] = {-1, -1}, rc = -1;

    plan_init(&plan, spec);
    if (open_child_fds(spec, h, plan.fds, err) < 0)
        goto out;
    if (pipe2(report, O_CLOEXEC) < 0) {
        aka_err_set(err, AKA_EXIT_ENV, "%s: pipe: %s", h->name, strerror(errno));
        goto out;
    }
    build_env(spec, &env);
    plan.envp = env.v;
    plan.report_fd = report[1];
    if (fork_child(&plan, h, err) < 0)
        goto out;
    close_fd(&report[1]); /* so that read() sees EOF once the child has exec'd */
    rc = await_exec(h, spec, report[0], err);
out:
    for (int i = 0; i < 3; i++)
        close_fd(&plan.fds[i]);
    close_fd(&report[0]);
    close_fd(&report[1]);
    strvec_clear(&env);
    return rc;
}

int proc_start(const struct proc_spec *spec, struct proc_handle **out, struct aka_err *err)
{
    struct proc_handle *h;
    *out = NULL;
    if (!spec->argv || !spec->argv[0] || !spec->argv[0][0]) {
        /* Not `return aka_err_set()`: static analysis does not follow variadic calls. */
        aka_err_set(err, AKA_EXIT_USAGE, "proc: empty argv");
        return -1;
    }
    if (!spec->after_stop && proc_check_stop(err) < 0)
        return -1; /* stopping: start nothing new (but the cleanup that stopping needs) */
    ignore_sigpipe();
    h = handle_new(spec);
    if (start_child(spec, h, err) < 0) {
        handle_free(h);
        return -1;
    }
#ifdef SYS_pidfd_open
    h->pidfd = (int)syscall(SYS_pidfd_open, h->pid, 0); /* close-on-exec by default */
#endif
    *out = h;
    return 0;
}

pid_t proc_pid(const struct proc_handle *h)
{
    return h->pid;
}

/* ---- the wait loop ----------------------------------------------------- */

/* Account for n bytes of output: keep what fits under the cap, count all. */
static void stream_take(struct stream *s, const char *data, size_t n)
{
    size_t keep = n;
    s->total += n;
    if (s->cap && s->kept + n > s->cap) {
        keep = s->cap - s->kept;
        s->truncated = true;
    }
    if (!keep)
        return;
    if (s->mode == PROC_TO_BUFFER)
        strbuf_add(&s->buf, data, keep);
    else if (s->file_fd >= 0 && !s->write_errno && aka_write_all(s->file_fd, data, keep) < 0)
        s->write_errno = errno;
    s->kept += keep;
}

/* One read: 1 = data, 0 = EOF (fd closed), -1 = nothing available now. */
static int stream_read(struct stream *s)
{
    char chunk[READ_CHUNK];
    ssize_t n = read(s->fd, chunk, sizeof(chunk));
    if (n > 0) {
        stream_take(s, chunk, (size_t)n);
        return 1;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return -1;
    close_fd(&s->fd); /* EOF, or an error that will not go away */
    return 0;
}

static void stream_drain_close(struct stream *s)
{
    for (int i = 0; s->fd >= 0 && i < DRAIN_MAX_READS; i++)
        if (stream_read(s) < 0)
            break;
    close_fd(&s->fd);
}

static bool streams_open(const struct proc_handle *h)
{
    return h->out.fd >= 0 || h->err.fd >= 0;
}

static int try_reap(struct proc_handle *h, int64_t now, struct aka_err *err)
{
    pid_t r = waitpid(h->pid, &h->status, WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR))
        return 0;
    if (r < 0) /* ECHILD: someone else reaped it (SIGCHLD ignored?) */
        return aka_err_set(err, AKA_EXIT_ENV, "%s: waitpid: %s", h->name, strerror(errno));
    h->reaped = true;
    h->reaped_at_ms = now;
    clock_gettime(CLOCK_MONOTONIC, &h->end);
    close_fd(&h->pidfd); /* it stays readable forever; polling it again would spin */
    return 0;
}

/* SIGTERM to the group now, SIGKILL at the end of the grace. */
static void begin_ending(struct proc_handle *h, int64_t now)
{
    h->ending = true;
    kill(-h->pid, SIGTERM);
    h->kill_at_ms = now + h->grace_ms;
}

/* The wall-clock limit and stop signals: either ends the whole group. */
static void enforce_limits(struct proc_handle *h, int64_t now)
{
    if (!h->ending && !h->reaped && h->deadline_ms >= 0 && now >= h->deadline_ms) {
        h->timed_out = true;
        begin_ending(h, now);
    }
    if (!h->ending && !h->reaped && stop_sig && !h->after_stop) {
        h->stopped_by = stop_sig;
        begin_ending(h, now);
    }
    if (!h->ending || h->escalated)
        return;
    if (now >= h->kill_at_ms) {
        kill(-h->pid, SIGKILL);
        h->escalated = true;
    } else if (h->reaped && !group_alive(h->pid)) {
        h->escalated = true; /* everyone obeyed SIGTERM: nothing left to kill */
    }
    if (h->escalated)
        h->escalated_at_ms = now;
}

/* When the child is gone (and, after a timeout or stop, the group was escalated), the
 * time after which pipes still open are held by strays; -1 while not yet. */
static int64_t orphan_deadline(const struct proc_handle *h)
{
    if (!h->reaped || (h->ending && !h->escalated))
        return -1;
    int64_t from =
        h->ending && h->escalated_at_ms > h->reaped_at_ms ? h->escalated_at_ms : h->reaped_at_ms;
    return from + ORPHAN_GRACE_MS;
}

static void close_orphaned_pipes(struct proc_handle *h, int64_t now)
{
    int64_t at = orphan_deadline(h);
    if (at < 0 || now < at || !streams_open(h))
        return;
    /* Checked first: once the group is empty its id may be reused by strangers. */
    if (group_alive(h->pid))
        kill(-h->pid, SIGKILL);
    stream_drain_close(&h->out);
    stream_drain_close(&h->err);
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

void proc_set_heartbeat(void (*fn)(void *arg, double elapsed_s), void *arg, long every_ms)
{
    heartbeat.fn = fn;
    heartbeat.arg = arg;
    heartbeat.every_ms = fn && every_ms > 0 ? every_ms : 0;
}

void proc_beat_start(struct proc_beat *w)
{
    w->start_ms = now_ms();
    w->beat_at_ms = heartbeat.every_ms > 0 ? w->start_ms + heartbeat.every_ms : -1;
}

void proc_beat_tick(struct proc_beat *w)
{
    int64_t now = now_ms();
    if (w->beat_at_ms < 0 || now < w->beat_at_ms)
        return;
    if (heartbeat.fn)
        heartbeat.fn(heartbeat.arg, (double)(now - w->start_ms) / 1e3);
    /* Turned off meanwhile: -1, never a deadline in the past that poll would spin on. */
    w->beat_at_ms = heartbeat.every_ms > 0 ? now + heartbeat.every_ms : -1;
}

/* The heartbeat, when one is due and the child still runs. */
static void beat(struct proc_handle *h)
{
    if (!h->reaped)
        proc_beat_tick(&h->beat);
}

static int poll_timeout(const struct proc_handle *h, int64_t now)
{
    int64_t wake = INT64_MAX, orphan = orphan_deadline(h);
    if (!h->reaped && h->pidfd < 0)
        wake = now + TICK_MS; /* no pidfd: poll waitpid() */
    if (!h->reaped && h->beat.beat_at_ms >= 0)
        wake = min64(wake, h->beat.beat_at_ms);
    if (!h->reaped && !h->ending && h->deadline_ms >= 0)
        wake = min64(wake, h->deadline_ms);
    if (h->ending && !h->escalated)
        wake = min64(wake, h->reaped ? min64(now + TICK_MS, h->kill_at_ms) : h->kill_at_ms);
    if (h->escalated && !h->reaped)
        wake = min64(wake, h->escalated_at_ms + UNKILLABLE_MS);
    if (orphan >= 0 && streams_open(h))
        wake = min64(wake, orphan);
    if (wake == INT64_MAX)
        return -1;
    return wake <= now ? 0 : (int)min64(wake - now, INT_MAX);
}

/* Append fd to the poll set; who[] remembers which stream (if any) it belongs to. */
static void watch(struct pollfd *pfd, struct stream **who, nfds_t *n, int fd, struct stream *s)
{
    pfd[*n] = (struct pollfd){fd, POLLIN, 0};
    who[(*n)++] = s;
}

static void poll_once(struct proc_handle *h, int timeout)
{
    struct pollfd pfd[4];
    struct stream *who[4];
    nfds_t n = 0;
    if (h->out.fd >= 0)
        watch(pfd, who, &n, h->out.fd, &h->out);
    if (h->err.fd >= 0)
        watch(pfd, who, &n, h->err.fd, &h->err);
    if (h->pidfd >= 0 && !h->reaped)
        watch(pfd, who, &n, h->pidfd, NULL);
    if (stop_pipe[0] >= 0 && !h->ending)
        watch(pfd, who, &n, stop_pipe[0], NULL); /* the signal itself is in stop_sig */
    if (poll(pfd, n, timeout) <= 0)
        return; /* timeout or EINTR: the loop re-evaluates everything */
    drain_stop_pipe();
    for (nfds_t i = 0; i < n; i++)
        if (who[i] && (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
            stream_read(who[i]);
}

/*
 * A child in uninterruptible sleep (a wedged GPU driver call, a dead NFS
 * server) survives SIGKILL until the kernel lets go. We cannot reap it, but we
 * must not wait forever either: give up and report the environment as broken.
 */
static bool unkillable(const struct proc_handle *h, int64_t now)
{
    return h->escalated && !h->reaped && now >= h->escalated_at_ms + UNKILLABLE_MS;
}

static int wait_loop(struct proc_handle *h, struct aka_err *err)
{
    for (;;) {
        int64_t now = now_ms();
        if (!h->reaped && try_reap(h, now, err) < 0)
            return -1;
        enforce_limits(h, now);
        close_orphaned_pipes(h, now);
        beat(h);
        if (h->reaped && !streams_open(h) && (!h->ending || h->escalated))
            return 0;
        if (unkillable(h, now))
            return aka_err_set(err, AKA_EXIT_ENV,
                               "%s: pid %ld still alive %d ms after SIGKILL (stuck in the kernel?)",
                               h->name, (long)h->pid, UNKILLABLE_MS);
        poll_once(h, poll_timeout(h, now));
    }
}

/* ---- results ----------------------------------------------------------- */

void proc_result_init(struct proc_result *r)
{
    memset(r, 0, sizeof(*r));
    strbuf_init(&r->out, 0);
    strbuf_init(&r->err, 0);
    r->pid = -1;
}

void proc_result_release(struct proc_result *r)
{
    strbuf_release(&r->out);
    strbuf_release(&r->err);
    proc_result_init(r);
}

static void fill_result(struct proc_handle *h, struct proc_result *res)
{
    int st = h->status;
    proc_result_init(res); /* overwrite, never free: callers may pass an uninitialized result */
    res->pid = h->pid;
    res->exited = h->reaped && WIFEXITED(st);
    res->term_signal = h->reaped && WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    res->exit_code = res->exited ? WEXITSTATUS(st) : 128 + res->term_signal;
    res->timed_out = h->timed_out;
    if (h->timed_out)
        res->exit_code = AKA_EXIT_TIMEOUT;
    res->out_truncated = h->out.truncated;
    res->err_truncated = h->err.truncated;
    res->out_bytes = h->out.total;
    res->err_bytes = h->err.total;
    res->wall_seconds = (double)(h->end.tv_sec - h->start.tv_sec) +
                        (double)(h->end.tv_nsec - h->start.tv_nsec) / 1e9;
    /* Hand the buffers over rather than copying megabytes of output. */
    res->out = h->out.buf;
    res->err = h->err.buf;
    strbuf_init(&h->out.buf, 0);
    strbuf_init(&h->err.buf, 0);
}

/* A capture file we could not write means the record is incomplete: fail closed. */
static int capture_errors(const struct proc_handle *h, struct aka_err *err)
{
    const struct stream *bad = h->out.write_errno ? &h->out : h->err.write_errno ? &h->err : NULL;
    if (!bad)
        return 0;
    return aka_err_set(err, AKA_EXIT_ENV, "%s: cannot write captured output to %s: %s", h->name,
                       bad->file_name, strerror(bad->write_errno));
}

int proc_wait(struct proc_handle *h, struct proc_result *res, struct aka_err *err)
{
    int rc = wait_loop(h, err);
    if (rc < 0) {
        /* We lost track of the child: make sure nothing of it survives us. */
        kill(-h->pid, SIGKILL);
        clock_gettime(CLOCK_MONOTONIC, &h->end);
    }
    fill_result(h, res);
    if (rc == 0)
        rc = capture_errors(h, err);
    if (rc == 0 && h->stopped_by)
        rc = proc_check_stop(err); /* the result is the signal's doing, not the child's */
    handle_free(h);
    return rc;
}

int proc_run(const struct proc_spec *spec, struct proc_result *res, struct aka_err *err)
{
    struct proc_handle *h;
    proc_result_init(res);
    if (proc_start(spec, &h, err) < 0)
        return -1;
    return proc_wait(h, res, err);
}

/*
 * A daemon: the intermediate child leaves our session (setsid) and starts the real
 * child through proc_start in a group of its own in that session, then exits. The
 * real child is no session leader (it can never gain a controlling terminal), nobody
 * waits for it but init, and nothing we end later (a Ctrl-C, our group) reaches it.
 */
int proc_spawn_detached(const struct proc_spec *spec, pid_t *pid_out, struct aka_err *err)
{
    int fds[2];
    pid_t got = -1;
    if (pipe2(fds, O_CLOEXEC) < 0)
        return aka_err_set(err, AKA_EXIT_ENV, "pipe: %s", strerror(errno));
    pid_t mid = fork();
    if (mid < 0) {
        close(fds[0]);
        close(fds[1]);
        return aka_err_set(err, AKA_EXIT_ENV, "fork: %s", strerror(errno));
    }
    if (mid == 0) {
        struct proc_spec s = *spec;
        struct proc_handle *h = NULL;
        struct aka_err ignored = AKA_ERR_INIT;
        pid_t pid = -1;
        /* Output straight into the log: a capture pipe would die with this process. */
        int log = open(spec->out_file ? spec->out_file : "/dev/null",
                       O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        s.new_session = false;
        s.out_mode = s.err_mode = PROC_INHERIT;
        if (log >= 0 && dup2(log, 1) >= 0 && dup2(log, 2) >= 0 && setsid() >= 0 &&
            proc_start(&s, &h, &ignored) == 0)
            pid = proc_pid(h);
        if (aka_write_all(fds[1], &pid, sizeof(pid)) < 0)
            _exit(1);
        _exit(pid > 0 ? 0 : 1);
    }
    close(fds[1]);
    ssize_t n;
    do
        n = read(fds[0], &got, sizeof(got));
    while (n < 0 && errno == EINTR);
    close(fds[0]);
    while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
        ;
    if (n != (ssize_t)sizeof(got) || got <= 0)
        return aka_err_set(err, AKA_EXIT_ENV, "%s: could not be started detached", spec->argv[0]);
    *pid_out = got;
    return 0;
}
