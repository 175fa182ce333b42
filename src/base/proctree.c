/*
 * proctree.c — stop signals and the descendant tree of a supervisor (see
 * proctree.h). Linux only: the tree comes from /proc/<pid>/stat.
 */
#include "base/proctree.h"
#include "base/proc.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/* One process as /proc shows it. */
struct pinfo {
    pid_t pid, ppid, pgrp;
    bool live; /* not a zombie */
};

struct ptable {
    struct pinfo *v;
    size_t n, alloc;
};

static bool read_pinfo(const char *name, struct pinfo *p)
{
    struct proc_stat st;
    if (!proc_read_stat((pid_t)atol(name), &st))
        return false;
    *p = (struct pinfo){st.pid, st.ppid, st.pgrp, st.state != 'Z' && st.state != 'X'};
    return true;
}

static void ptable_load(struct ptable *t)
{
    t->n = 0;
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        struct pinfo p;
        if (de->d_name[0] < '1' || de->d_name[0] > '9' || !read_pinfo(de->d_name, &p))
            continue;
        if (t->n == t->alloc) {
            size_t alloc = t->alloc ? 2 * t->alloc : 512;
            struct pinfo *v = realloc(t->v, alloc * sizeof(*v));
            if (!v)
                break; /* a partial table still bounds the work; the next round sees more */
            t->v = v;
            t->alloc = alloc;
        }
        t->v[t->n++] = p;
    }
    if (d)
        closedir(d);
}

/* Mark root's descendants (in[i] true); a fixed point over parent links. */
static void mark_descendants(const struct ptable *t, pid_t root, bool *in)
{
    bool grew = true;
    memset(in, 0, t->n * sizeof(*in));
    while (grew) {
        grew = false;
        for (size_t i = 0; i < t->n; i++) {
            if (in[i])
                continue;
            bool child = t->v[i].ppid == root;
            for (size_t j = 0; !child && j < t->n; j++)
                child = in[j] && t->v[j].pid == t->v[i].ppid;
            if (child)
                in[i] = grew = true;
        }
    }
}

/* Signal the live descendants of root: whole groups, except in root's own group. */
static size_t signal_descendants(pid_t root, int sig)
{
    struct ptable t = {0};
    size_t live = 0;
    pid_t own = getpgid(root);
    ptable_load(&t);
    bool *in = calloc(t.n ? t.n : 1, sizeof(*in));
    if (in)
        mark_descendants(&t, root, in);
    for (size_t i = 0; in && i < t.n; i++) {
        if (!in[i] || !t.v[i].live)
            continue;
        live++;
        if (sig == 0)
            continue;
        if (t.v[i].pgrp > 1 && t.v[i].pgrp != own)
            kill(-t.v[i].pgrp, sig);
        else
            kill(t.v[i].pid, sig);
    }
    free(in);
    free(t.v);
    return live;
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

size_t proc_count_descendants(pid_t root)
{
    return signal_descendants(root, 0);
}

/* Wait up to ms for the tree to empty; the number still alive. */
static size_t wait_empty(pid_t root, long ms)
{
    size_t left = proc_count_descendants(root);
    for (long waited = 0; left && waited < ms; waited += 50) {
        nap_ms(50);
        left = proc_count_descendants(root);
    }
    return left;
}

size_t proc_end_descendants(pid_t root, long grace_ms)
{
    long grace = grace_ms > 0 ? grace_ms : 2000;
    size_t left = proc_count_descendants(root);
    /* Rounds: a process started between the snapshot and the signal is caught by the next. */
    for (int round = 0; left && round < 3; round++) {
        signal_descendants(root, SIGTERM);
        left = wait_empty(root, grace);
        if (left) {
            signal_descendants(root, SIGKILL);
            left = wait_empty(root, 2000);
        }
    }
    return left;
}

static void stop_set(sigset_t *s)
{
    sigemptyset(s);
    sigaddset(s, SIGINT);
    sigaddset(s, SIGTERM);
    sigaddset(s, SIGHUP);
}

int proc_stop_signals_block(struct aka_err *err)
{
    sigset_t s;
    stop_set(&s);
    int e = pthread_sigmask(SIG_BLOCK, &s, NULL);
    if (e != 0)
        return aka_err_set(err, AKA_EXIT_ENV, "cannot block the stop signals: %s", strerror(e));
    return 0;
}

int proc_stop_signal_wait(long timeout_ms)
{
    sigset_t s;
    struct timespec ts = {timeout_ms / 1000, (timeout_ms % 1000) * 1000000L};
    stop_set(&s);
    int sig = sigtimedwait(&s, NULL, &ts);
    return sig > 0 ? sig : 0;
}

bool proc_become_subreaper(void)
{
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
}
