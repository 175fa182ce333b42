/*
 * lock.h — advisory file locks (flock) that guard a workspace or a monitor.
 *
 * A lock belongs to an open file description and dies with the process, so a
 * supervisor killed with SIGKILL never leaves a stale lock behind. The lock file
 * records the holder's pid for the "already running" message.
 */
#ifndef AKA_BASE_LOCK_H
#define AKA_BASE_LOCK_H

#include "base/error.h"
#include <stdbool.h>

struct aka_lock {
    int fd;
    char *path;
};
/* A lock not (yet) held; releasing it is a no-op. (clang-format 14 would
 * explode the brace initializer over five lines.) */
/* clang-format off */
#define AKA_LOCK_INIT {-1, NULL}
/* clang-format on */

/*
 * Take an exclusive lock on path (created if missing). With wait=false an
 * already-held lock is an error (code 75) naming the holder's pid:
 * "PATH: held by pid N". On failure lk is left as AKA_LOCK_INIT. Releasing
 * truncates the pid record but keeps the file (unlinking would let two
 * processes lock two different inodes under one name).
 */
int aka_lock_acquire(struct aka_lock *lk, const char *path, bool wait, struct aka_err *err);
void aka_lock_release(struct aka_lock *lk);

#endif
