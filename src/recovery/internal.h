/*
 * internal.h — helpers shared by the files of the recovery module (callers use
 * recovery.h):
 *   state.c    the state directory: paths, restart.json, state.json, the scripts
 *   monitor.c  the monitor's loop: poll, restart, handshake, supervise
 *   control.c  starting the monitor, stop, resume, status, the optimizer's handshake
 */
#ifndef AKA_RECOVERY_INTERNAL_H
#define AKA_RECOVERY_INTERNAL_H

#include "contracts/records.h"
#include "recovery/recovery.h"
#include "sandbox/sandbox.h"

/* How long the handshake waits for restart.ready, and the optimizer for restart.ack. */
#define RCV_HANDSHAKE_MS 30000
/* The environment a monitor gives the optimizer it restarts. */
#define RCV_ENV_DIR     "AKA_RECOVERY_DIR"
#define RCV_ENV_HANDOFF "AKA_RECOVERY_HANDOFF"

struct rcv_state {
    const char *phase; /* polling | restarting | running | stopped | completed */
    char phase_buf[16];
    const char *ws;
    long long attempts; /* restarts made */
    long long monitor_pid, child_pid;
    unsigned long long monitor_ticks, child_ticks; /* start times: identity across pid reuse */
    char handoff[40];
    int last_exit; /* the restarted optimizer's last status, -1 before any */
    char probe_at[AKA_TIMESTAMP_MAX];
    bool probe_ok;
    char probe_output[AKA_SBX_PROBE_TAIL + 1];
};

void rcv_path(struct strbuf *out, const char *dir, const char *name);
bool rcv_exists(const char *dir, const char *name);
int rcv_write_json(const char *dir, const char *name, const json_t *doc, struct aka_err *err);
/* NULL when missing or not JSON. */
json_t *rcv_read_json(const char *dir, const char *name);
int rcv_remove(const char *dir, const char *name, struct aka_err *err);

json_t *rcv_launch_json(const struct aka_recovery_launch *l, const char *ws, int poll);
/* restart.json into l (initialized by the caller), the workspace (malloc'd) and interval. */
int rcv_launch_load(const char *dir, struct aka_recovery_launch *l, char **ws, int *poll,
                    struct aka_err *err);

int rcv_state_write(const char *dir, const struct rcv_state *s, struct aka_err *err);
/* What state.json says (zeros where it says nothing); s->phase points into s. */
void rcv_state_load(const char *dir, struct rcv_state *s);

int rcv_write_scripts(const char *dir, const struct aka_recovery_launch *l, const char *ws,
                      struct aka_err *err);

#endif
