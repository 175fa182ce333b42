/*
 * judge_runner.c — the judge's side of one runner process: starting it with
 * nothing but the shared mapping, one request cycle of harness_proto.h, what
 * the judge observes from outside, and the end of it.
 *
 * What the judge measures of one request, with its own CLOCK_MONOTONIC:
 *   wake    arm → ready   the runner woke up and answered
 *   window  go → done     the request itself (the CPU latency)
 *   post    done → asleep the runner is seen not running in /proc/<pid>/stat
 * and, from the kernel's accounting, the runner's process CPU clock each time
 * it is seen asleep (exact then: no thread of it is running). The difference
 * between two such readings is every CPU cycle the runner spent on one request,
 * wherever it hid them: before answering ready, after reporting done, or in a
 * signal handler between requests. An honest runner sleeps between requests
 * and spins at most HP_GO_SPIN_US waiting for go, so that CPU time exceeds the
 * window by a few microseconds only. The thread count comes from the /proc read.
 *
 * How many microseconds is "a few" depends on the machine and the moment (waking a
 * sleeping virtual CPU costs tens of them): the pinger, a child of the judge that answers
 * every request at once through the same handshake on the runners' CPUs, is asked right
 * before each timed call, and the median of its recent answers is what an honest runner's
 * overhead costs now (harness_timing.c, ping_now).
 *
 * Waiting: for a call expected to take over 1 ms (the previous call's window),
 * FUTEX_WAIT first through 80% of it less 200 us; then a spin with a pause
 * instruction for up to 5 ms (the judge and the runners sit on different CPUs,
 * see hx_pin), then FUTEX_WAIT in 10 ms slices;
 * between slices, and every ~1024 spins, waitpid tells whether the runner died.
 * The judge never yields while it times: a yield hands its CPU to another task
 * for a whole time slice, and the window would hold that slice. It still can be
 * preempted on a loaded machine; its own thread CPU clock says by how much
 * (hx_call.disturbed_us), and harness_timing.c leaves such runs out of the
 * statistics.
 */
#define _GNU_SOURCE
#include "harness_core.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define SPIN_US        5000.0
#define DOZE_MIN_US    1000.0 /* calls expected shorter than this are spun on from the start */
#define DOZE_MARGIN_US 200.0
#define SLEEP_SLICE_NS 10000000L

/* ---- start and stop ---- */

/* In the forked child: the runner gets stdin /dev/null, stdout and stderr on the job's
 * stderr, the mapping as HP_FD, and no other descriptor. Never returns. */
static void exec_runner(int memfd, const char *path)
{
    char *argv[] = {(char *)path, NULL};
    int devnull = open("/dev/null", O_RDONLY);
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    hx_pin_runner();
    if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(2, 1) < 0)
        _exit(127);
    if (memfd == HP_FD ? fcntl(HP_FD, F_SETFD, 0) < 0 : dup2(memfd, HP_FD) < 0)
        _exit(127);
    if (syscall(SYS_close_range, HP_FD + 1, ~0U, 0) != 0)
        for (long fd = HP_FD + 1; fd < sysconf(_SC_OPEN_MAX); fd++)
            close((int)fd);
    execv(path, argv);
    _exit(127);
}

static int map_runner(hx_runner *r, size_t bytes)
{
    if (r->base)
        munmap(r->base, r->bytes);
    r->base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, r->memfd, 0);
    if (r->base == MAP_FAILED) {
        r->base = NULL;
        return -1;
    }
    r->bytes = bytes;
    r->ctl = (hp_ctl *)r->base;
    r->desc = (hp_desc *)(r->base + HP_CTL_BYTES);
    return 0;
}

int hx_runner_grow(hx_runner *r, size_t bytes)
{
    if (bytes <= r->bytes)
        return 0;
    return ftruncate(r->memfd, (off_t)bytes) == 0 ? map_runner(r, bytes) : -1;
}

/* The pinger's whole life: answer every request at once, the way a runner does. */
static void pinger_loop(hp_ctl *ctl)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    hx_pin_runner();
    syscall(SYS_close_range, 3, ~0U, 0); /* the saved stdout, the memfd: the mapping stays */
    for (uint32_t seq = 1;; seq++) {
        hp_wait_word(&ctl->arm, seq, 0);
        hp_signal(&ctl->ready, seq);
        hp_wait_word(&ctl->go, seq, hp_go_spin(ctl));
        ctl->status = 0;
        ctl->reported_us = 0;
        hp_signal(&ctl->done, seq);
    }
}

int hx_runner_start(hx_runner *r, const char *path, const char *who, size_t bytes, char *why,
                    size_t n)
{
    char proc[64];
    memset(r, 0, sizeof(*r));
    r->path = path, r->who = who, r->pid = -1, r->stat_fd = -1;
    /* Sealed against shrinking: a runner truncating it cannot make the judge fault. */
    r->memfd = memfd_create("aka-runner", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (r->memfd < 0 || ftruncate(r->memfd, (off_t)bytes) != 0 ||
        fcntl(r->memfd, F_ADD_SEALS, F_SEAL_SHRINK) != 0 || map_runner(r, bytes) != 0) {
        snprintf(why, n, "cannot create the runner's shared memory: %s", strerror(errno));
        return -1;
    }
    r->ctl->magic = HP_MAGIC;
    r->ctl->version = HP_VERSION;
    fflush(stderr);
    if ((r->pid = fork()) < 0) {
        snprintf(why, n, "cannot start %s: %s", path ? path : "the pinger", strerror(errno));
        return -1;
    }
    if (r->pid == 0 && !path)
        pinger_loop(r->ctl);
    if (r->pid == 0)
        exec_runner(r->memfd, path);
    snprintf(proc, sizeof(proc), "/proc/%d/stat", (int)r->pid);
    if ((r->stat_fd = open(proc, O_RDONLY | O_CLOEXEC)) < 0 ||
        clock_getcpuclockid(r->pid, &r->cpu) != 0) {
        snprintf(why, n, "cannot observe %s (%s): %s", who, proc, strerror(errno));
        return -1;
    }
    return 0;
}

int hx_runner_alive(hx_runner *r)
{
    int st;
    if (r->exited || r->pid <= 0)
        return 0;
    if (waitpid(r->pid, &st, WNOHANG) == r->pid) {
        r->exited = 1;
        r->wstatus = st;
        return 0;
    }
    return 1;
}

void hx_runner_death(const hx_runner *r, char *out, size_t n)
{
    if (r->exited && WIFSIGNALED(r->wstatus))
        snprintf(out, n, "crashed with signal %d (%s)", WTERMSIG(r->wstatus),
                 strsignal(WTERMSIG(r->wstatus)));
    else if (r->exited && WIFEXITED(r->wstatus))
        snprintf(out, n, "ended its process with exit status %d", WEXITSTATUS(r->wstatus));
    else
        snprintf(out, n, "stopped answering");
}

void hx_runner_stop(hx_runner *r)
{
    if (r->pid > 0 && !r->exited) {
        kill(r->pid, SIGKILL);
        while (waitpid(r->pid, &r->wstatus, 0) < 0 && errno == EINTR)
            ;
        r->exited = 1;
    }
    if (r->base)
        munmap(r->base, r->bytes);
    if (r->memfd >= 0)
        close(r->memfd);
    if (r->stat_fd >= 0)
        close(r->stat_fd);
    r->base = NULL, r->memfd = r->stat_fd = -1;
}

/* ---- observing ---- */

static double cpu_us(const hx_runner *r)
{
    struct timespec ts;
    if (clock_gettime(r->cpu, &ts) != 0)
        return -1;
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* The state letter and thread count of /proc/<pid>/stat; -1 when unreadable. The
 * command name may hold spaces and parentheses, so fields count from the last ')'. */
static int read_stat(const hx_runner *r, char *state, int *threads)
{
    char buf[1024], *p, *save = NULL;
    ssize_t got = pread(r->stat_fd, buf, sizeof(buf) - 1, 0);
    int field = 0;
    if (got <= 0)
        return -1;
    buf[got] = '\0';
    if (!(p = strrchr(buf, ')')))
        return -1;
    for (char *tok = strtok_r(p + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        if (++field == 1)
            *state = tok[0];
        else if (field == 18) { /* num_threads, field 20 of the whole line */
            *threads = atoi(tok);
            return 0;
        }
    }
    return -1;
}

/* Wait until the runner is seen not running; HX_CALL_* outcome. */
static int wait_asleep(hx_runner *r, hx_call *c)
{
    double t0 = hx_now_us(), t;
    char state = '?';
    for (;;) {
        if (read_stat(r, &state, &c->threads) < 0)
            return hx_runner_alive(r) ? HX_CALL_ENV : HX_CALL_DIED;
        if (state == 'Z' || state == 'X')
            return hx_runner_alive(r) ? HX_CALL_ENV : HX_CALL_DIED;
        if (state != 'R')
            return HX_CALL_OK;
        if ((t = hx_now_us() - t0) > HX_IDLE_LIMIT_US)
            return HX_CALL_BUSY;
        if (t > 10000)
            usleep(100);
        else if (t > 50)
            sched_yield();
    }
}

/* Sleep on w (FUTEX_WAIT) for at most us, unless it already holds n; 1 when n arrived
 * while the judge slept (it then saw it a wake-up late, and the runner paid the wake). */
static int doze(hp_word *w, uint32_t n, double us, double *slept)
{
    uint32_t v = hp_load(&w->v);
    time_t sec = (time_t)(us / 1e6);
    struct timespec t = {sec, (long)((us - 1e6 * (double)sec) * 1000)};
    double s0 = hx_now_us();
    if (v == n || us <= 0)
        return 0;
    hp_store(&w->sleeping, 1);
    if (hp_load(&w->v) == v)
        hp_futex_wait(&w->v, v, &t);
    hp_store(&w->sleeping, 0);
    *slept += hx_now_us() - s0;
    return hp_load(&w->v) == n;
}

/* Wait until the runner publishes n in w; -1 when it died first. *slept gets the wall
 * time spent asleep in FUTEX_WAIT (voluntarily off the CPU), *woke whether n arrived
 * while the judge slept. A call expected to take expect_us (over DOZE_MIN_US) is slept
 * through for 80% of it, less a margin, and then spun on up to half of it, so that long
 * calls do not keep a CPU spinning and still end while the judge watches. */
static int wait_word(hx_runner *r, hp_word *w, uint32_t n, double expect_us, double *slept,
                     int *woke)
{
    double t0 = hx_now_us(), spin = SPIN_US;
    *slept = 0, *woke = 0;
    if (expect_us > DOZE_MIN_US) {
        *woke = doze(w, n, 0.8 * expect_us - DOZE_MARGIN_US, slept);
        spin = fmax(SPIN_US, 0.5 * expect_us);
    }
    for (unsigned i = 1; hp_load(&w->v) != n; i++) {
        hp_pause();
        if (i % 1024)
            continue;
        if (!hx_runner_alive(r))
            return hp_load(&w->v) == n ? 0 : -1;
        if (hx_now_us() - t0 > spin)
            break;
    }
    while (hp_load(&w->v) != n) {
        struct timespec slice = {0, SLEEP_SLICE_NS};
        *woke |= doze(w, n, (double)slice.tv_nsec / 1e3, slept);
        if (!hx_runner_alive(r))
            return hp_load(&w->v) == n ? 0 : -1;
    }
    return 0;
}

static double thread_cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* The reply, copied once out of memory the runner can still write. */
static void read_reply(const hx_runner *r, hx_call *c)
{
    volatile hp_ctl *ctl = r->ctl;
    c->status = ctl->status;
    c->reported_us = ctl->reported_us;
    for (size_t i = 0; i + 1 < sizeof(c->error); i++) {
        char ch = ctl->error[i];
        if (!ch)
            break;
        c->error[i] = (ch >= 0x20 && ch < 0x7f) ? ch : '?';
    }
}

int hx_runner_request(hx_runner *r, int req, int slot, hx_call *c)
{
    hp_ctl *ctl = r->ctl;
    double t_arm, t_go, t_done, cpu_arm, cpu0, slept;
    int woke;
    memset(c, 0, sizeof(*c));
    c->waiting = 1;
    if (!hx_runner_alive(r)) {
        c->outcome = HX_CALL_DIED;
        return -1;
    }
    uint32_t n = ++r->seq;
    ctl->req = req, ctl->slot = slot, ctl->status = 0, ctl->reported_us = 0;
    ctl->go_spin_us = r->cpu_window_asleep ? 0 : (int32_t)HP_GO_SPIN_US;
    cpu_arm = thread_cpu_us();
    t_arm = hx_now_us();
    hp_store(&ctl->arm.v, n);
    if (hp_futex_wake(&ctl->arm.v) < 1 && n > 1)
        c->waiting = 0; /* it was not asleep on the request word */
    if (wait_word(r, &ctl->ready, n, 0, &slept, &woke) < 0) {
        c->outcome = HX_CALL_DIED;
        return -1;
    }
    c->wake_us = hx_now_us() - t_arm;
    /* Preempted while the runner waited for go: it spun (up to HP_GO_SPIN_US) meanwhile. */
    c->wake_disturbed_us = c->wake_us - (thread_cpu_us() - cpu_arm) - slept;
    /* Another process's CPU clock is brought up to date when that process is switched
     * out or at a scheduler tick, not when it is read: read while the runner runs, it can
     * lag by a tick (a 4k vector_add read 0.00 us). With cpu_window_asleep the runner
     * sleeps on go and the clock is read once it is seen asleep: exact. */
    if (r->cpu_window_asleep && (c->outcome = wait_asleep(r, c)) != HX_CALL_OK)
        return -1;
    double run0 = cpu_us(r);
    cpu0 = thread_cpu_us();
    t_go = hx_now_us();
    hp_signal(&ctl->go, n);
    if (wait_word(r, &ctl->done, n, req == HP_REQ_CALL ? r->expect_us : 0, &slept, &woke) < 0) {
        c->outcome = HX_CALL_DIED;
        return -1;
    }
    t_done = hx_now_us();
    double cpu_done = cpu_us(r); /* may lag (above); exact only when read asleep */
    c->window_us = t_done - t_go;
    if (req == HP_REQ_CALL)
        r->expect_us = c->window_us;
    else if (req == HP_REQ_SHAPE)
        r->expect_us = 0;
    /* Time the judge was off its CPU without choosing to be: it may have seen done late. */
    c->disturbed_us = c->window_us - (thread_cpu_us() - cpu0) - slept;
    c->woke_judge = woke;
    c->outcome = wait_asleep(r, c);
    c->post_us = hx_now_us() - t_done;
    double cpu = cpu_us(r);
    c->cpu_window_us = (r->cpu_window_asleep ? cpu : cpu_done) - run0;
    c->cpu_us = cpu - r->cpu_idle_us;
    r->cpu_idle_us = cpu;
    read_reply(r, c);
    return c->outcome == HX_CALL_OK ? 0 : -1;
}
