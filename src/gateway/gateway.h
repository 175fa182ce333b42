/*
 * gateway.h — the gateway module's one public header: `aka gateway serve`, an HTTP
 * server that queues typed sandbox jobs (eval, profile, dev) from aka clients on
 * other machines or other campaigns, persists them in SQLite and runs them through
 * the local Bubblewrap transport on FIFO workers that each own their GPUs
 * (DESIGN §4.8, docs/gateway.md).
 *
 * The gateway is trusted infrastructure; the jobs it runs are not. Every /v1 route
 * needs the bearer token, the listener is loopback-only unless allow_remote, and
 * what a job may ship, run and bring back is decided by the sandbox module's
 * rules exactly as for a local evaluation.
 */
#ifndef AKA_GATEWAY_GATEWAY_H
#define AKA_GATEWAY_GATEWAY_H

#include "base/error.h"
#include "base/strbuf.h"
#include "base/vec.h"

#include <stdbool.h>
#include <stddef.h>

#define AKA_GW_MAX_WORKERS 64

struct aka_gateway_opts {
    const char *host;          /* listen address (an IPv4 or IPv6 literal, or localhost) */
    int port;                  /* 0: any free port (written to <state>/listen) */
    const char *state_dir;     /* jobs.db, token, job directories */
    const char *token_file;    /* NULL: <state>/token, created 0600 at first start */
    const char *work_dir;      /* job inputs and sandbox stages; NULL: <state>/work (on a
                                  tmpfs, removing a job directory costs no disk I/O) */
    int workers;               /* FIFO workers, 1..64 */
    struct strvec gpus;        /* physical GPU indices, split evenly over the workers */
    struct strvec aliases;     /* GPU tokens accepted in spec.target_hardware besides "local" */
    const char *bench_version; /* the evaluator runtime this gateway serves (NULL: any) */
    size_t max_request;        /* bytes of one request body (413 beyond) */
    size_t max_output;         /* bytes of stdout + stderr + artifacts one job may bring back */
    bool allow_remote;         /* listen on a non-loopback address */
    const char *bwrap;         /* NULL: bwrap from PATH */
    bool isolation_none;       /* run jobs without Bubblewrap (said in every result) */
};

/* Check the options (code 2 naming the flag). */
int aka_gateway_check(const struct aka_gateway_opts *o, struct aka_err *err);

/*
 * Serve until SIGINT or SIGTERM: jobs running then fail with reason scheduler_stopped,
 * queued ones stay queued for the next start. Code 75 when the state directory is
 * locked by another gateway or the address cannot be bound.
 */
int aka_gateway_serve(const struct aka_gateway_opts *o, struct aka_err *err);

/* The default state directory: $XDG_STATE_HOME/aka/gateway, else ~/.local/state/aka/gateway. */
void aka_gateway_default_state(struct strbuf *out);

#endif
