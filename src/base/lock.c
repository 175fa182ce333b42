/*
 * lock.c — exclusive advisory locks with flock(2) (see lock.h).
 *
 * flock rather than fcntl/POSIX record locks: a POSIX lock is dropped when the
 * process closes *any* descriptor of the file (a library reading the lock file
 * would silently unlock us), while a flock lives exactly as long as our open
 * file description. The descriptor is close-on-exec so that a child process we
 * start can never keep the lock alive after we die.
 */
#include "base/lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* Read the pid a holder wrote into the file; 0 when unknown. */
static long read_holder(int fd)
{
    char buf[32];
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *end;
    long pid = strtol(buf, &end, 10);
    return end != buf && pid > 0 ? pid : 0;
}

static int held_error(const char *path, int fd, struct aka_err *err)
{
    long pid = read_holder(fd);
    if (pid)
        return aka_err_set(err, AKA_EXIT_ENV, "%s: held by pid %ld", path, pid);
    /* The holder has the lock but has not written its pid yet (or never will). */
    return aka_err_set(err, AKA_EXIT_ENV, "%s: held by another process", path);
}

static int take(int fd, bool wait)
{
    int rc;
    do
        rc = flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB));
    while (rc < 0 && errno == EINTR);
    return rc;
}

static void record_pid(int fd)
{
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
    /* Only informative (for the "held by" message), so failures are ignored. */
    if (ftruncate(fd, 0) == 0 && pwrite(fd, buf, (size_t)n, 0) < 0)
        return;
}

int aka_lock_acquire(struct aka_lock *lk, const char *path, bool wait, struct aka_err *err)
{
    lk->fd = -1;
    lk->path = NULL;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return aka_err_set(err, AKA_EXIT_ENV, "%s: cannot open lock file: %s", path,
                           strerror(errno));
    if (take(fd, wait) < 0) {
        int e = errno;
        int rc = e == EWOULDBLOCK
                     ? held_error(path, fd, err)
                     : aka_err_set(err, AKA_EXIT_ENV, "%s: cannot lock: %s", path, strerror(e));
        close(fd);
        return rc;
    }
    record_pid(fd);
    lk->fd = fd;
    lk->path = aka_xstrdup(path);
    return 0;
}

void aka_lock_release(struct aka_lock *lk)
{
    if (lk->fd >= 0) {
        /* Clear the pid while still holding the lock: after close, a new holder may write. */
        if (ftruncate(lk->fd, 0) < 0) {
            /* nothing useful to do; the next holder overwrites it */
        }
        close(lk->fd);
    }
    free(lk->path);
    lk->fd = -1;
    lk->path = NULL;
}
