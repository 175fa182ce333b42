/*
 * recovery.h — the recovery module's one public header: the detached monitor that
 * brings a campaign back after the environment stopped it (DESIGN §7).
 *
 * When `aka optimize` ends with code 75 it records its own command line (captured at
 * its start: aka's binary, the asset tree, the working directory, its flags) in a state
 * directory <workspace-parent>/.aka-environment/<id>/ (id: the first 16 hex digits of
 * the sha256 of the workspace path; 0700) and starts a monitor there: a process of its
 * own session (double fork through base/proc), one per state directory (flock on
 * monitor.lock). The monitor polls the health probe every --environment-poll-interval
 * seconds; once it passes it re-runs the recorded command in its directory and waits
 * for the ready/ack handshake (the restarted optimizer writes restart.ready with its
 * pid and the handoff id, the monitor answers restart.ack). It stays with the
 * restarted optimizer: any exit other than a clean 0 sends it back to polling; 0
 * completes the recovery. It never runs anything else: not a file of the workspace,
 * not a command from the worktree.
 *
 * Files of the state directory, each replaced atomically (base/fs):
 *   restart.json       the recorded command (written once per stop, by the optimizer)
 *   state.json         phase (polling|restarting|running|stopped|completed), attempts,
 *                      the last probe, the monitor's and the optimizer's pid identities
 *   stopped.json       present while auto-recovery is disabled (stop-recovery.sh)
 *   restart.ready, restart.ack   the handshake of the current handoff
 *   monitor.lock, monitor.log, restart.log
 *   stop-recovery.sh, recover.sh (0700): `aka recovery stop|resume` for this workspace
 */
#ifndef AKA_RECOVERY_RECOVERY_H
#define AKA_RECOVERY_RECOVERY_H

#include "base/error.h"
#include "base/strbuf.h"
#include "base/vec.h"

#include <jansson.h>
#include <stdbool.h>

/* The command that started a campaign, as a monitor would run it again. */
struct aka_recovery_launch {
    struct strbuf exe, repo_root, cwd;
    struct strvec args; /* the application's argv: "optimize", then its flags */
};

void aka_recovery_launch_init(struct aka_recovery_launch *l);
void aka_recovery_launch_release(struct aka_recovery_launch *l);
/* Capture this process's command (at the campaign's start: cwd before anything runs). */
int aka_recovery_launch_capture(struct aka_recovery_launch *l, int argc, char **argv,
                                const char *repo_root, struct aka_err *err);

/* <parent of ws>/.aka-environment/<id> for the workspace ws. */
int aka_recovery_state_dir(const char *ws, struct strbuf *out, struct aka_err *err);

/*
 * After exit 75: record the launch and the poll interval in ws's state directory, write
 * the two scripts and start the monitor — unless stop-recovery.sh disabled auto-recovery
 * (then *started is false) or a monitor already holds the lock. The directory goes to dir.
 */
int aka_recovery_start(const struct aka_recovery_launch *l, const char *ws, int poll_interval_s,
                       struct strbuf *dir, bool *started, struct aka_err *err);

/* The restarted optimizer's side of the handshake (a no-op unless a monitor started it:
 * AKA_RECOVERY_DIR is set): restart.ready written, restart.ack awaited (at most 30 s). */
int aka_recovery_child_handshake(struct aka_err *err);
/* Whether this process was started by a monitor (which then owns the recovery). */
bool aka_recovery_is_restarted(void);

/* The monitor itself (`aka recovery monitor DIR`, what aka_recovery_start runs). */
int aka_recovery_monitor(const char *state_dir, struct aka_err *err);

/* `aka recovery stop`: disable auto-recovery, end the monitor and the optimizer it
 * restarted (identity-checked), phase stopped. 0 only when nothing of them is left. */
int aka_recovery_stop(const char *ws, struct aka_err *err);
/* `aka recovery resume`: enable auto-recovery again and start the monitor (none when one
 * runs already). Code 2 when the workspace has no recovery state. */
int aka_recovery_resume(const char *ws, struct strbuf *dir, struct aka_err *err);
/* `aka recovery status`: state.json plus "state_dir" and "stopped" (a new reference). */
int aka_recovery_status(const char *ws, json_t **out, struct aka_err *err);

#endif
