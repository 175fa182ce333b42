/*
 * proctree.h — a supervisor of several children: the stop signals it waits
 * for, and ending every process it started, however deep.
 *
 * `aka optimize` without --framework runs one child campaign per framework;
 * each child starts evaluators and agents in process groups and sessions of
 * their own. Ending the children's groups alone would leave those running, so
 * the supervisor becomes a child subreaper (orphans of its descendants are
 * reparented to it, not to init) and ends its whole descendant tree, found in
 * /proc by parent pid, group by group.
 */
#ifndef AKA_BASE_PROCTREE_H
#define AKA_BASE_PROCTREE_H

#include "base/error.h"

#include <stdbool.h>
#include <sys/types.h>

/*
 * Block SIGINT, SIGTERM and SIGHUP in the calling thread (threads created
 * afterwards inherit the mask), so that proc_stop_signal_wait receives them.
 * Children started through base/proc get an empty mask, as always.
 */
int proc_stop_signals_block(struct aka_err *err);

/* Wait up to timeout_ms for one of the blocked stop signals: its number, or 0. */
int proc_stop_signal_wait(long timeout_ms);

/* Orphaned descendants are reparented to this process (prctl); false when refused. */
bool proc_become_subreaper(void);

/* How many live (non-zombie) descendants of root there are (root excluded). */
size_t proc_count_descendants(pid_t root);

/*
 * End every live descendant of root: snapshot the tree first (so a dying parent
 * cannot hide its children), SIGTERM every group it spans (a member of root's
 * own group gets the signal alone), SIGKILL after grace_ms (<= 0: 2000 ms), and
 * repeat for anything started meanwhile. Returns the number of descendants
 * still alive at the end (0: all gone).
 */
size_t proc_end_descendants(pid_t root, long grace_ms);

#endif
