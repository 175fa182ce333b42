/*
 * internal.h — what the files of the gateway module share (callers use gateway.h):
 *   store.c    the SQLite job table: submit (idempotent), claim, finish, cancel, views,
 *              and the recovery of jobs a killed gateway left running
 *   request.c  a request body: validation (4xx naming the field) and the sandbox job it
 *              describes, written out under the job's directory
 *   clocks.c   opt-in GPU clock locking through nvidia-smi
 *   worker.c   the FIFO workers: claim, run through the local transport, record
 *   http.c     the routes (libmicrohttpd), the bearer token, limits, long-poll
 *   serve.c    startup: state directory, token, lock, database, workers, listener
 */
#ifndef AKA_GATEWAY_INTERNAL_H
#define AKA_GATEWAY_INTERNAL_H

#include "gateway/gateway.h"
#include "sandbox/sandbox.h"

#include <jansson.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <sys/types.h>

#define GW_SERVER_HEADER  "aka-gateway/1 (atrex-local-gateway compatible)"
#define GW_WAIT_DEFAULT_S 30
#define GW_WAIT_MAX_S     300

/* ---- store.c ---- */
struct gw_store {
    sqlite3 *db;
    pthread_mutex_t mu;
    pthread_cond_t changed; /* broadcast on every job change: workers and long-polls wake */
    uint64_t gen;           /* bumped with each broadcast */
};

enum gw_submit { GW_SUBMIT_NEW = 0, GW_SUBMIT_SAME, GW_SUBMIT_CONFLICT };

struct gw_new_job {
    const char *kind; /* eval | profile | dev */
    const char *body; /* the request as received */
    const char *body_sha256;
    const char *idempotency_key; /* NULL: none */
    const char *user, *trace_id;
    int lock_clocks;
};

/* What a worker claimed: the job id and its request body. */
struct gw_claim {
    char id[32];
    char kind[16];
    char *body;
};

/* Open (creating) path, WAL; jobs a previous gateway left running become failed
 * (scheduler_restarted) and their process groups are ended; one note each. */
int gw_store_open(struct gw_store *st, const char *path, struct strvec *notes, struct aka_err *err);
void gw_store_close(struct gw_store *st);
/* Insert, or find the job with the same (kind, idempotency key); id gets the job's id. */
int gw_store_submit(struct gw_store *st, const struct gw_new_job *nj, char id[32],
                    enum gw_submit *out, struct aka_err *err);
/* The oldest queued job, now running on worker w: 1, 0 when none is queued. */
int gw_store_claim(struct gw_store *st, int w, struct gw_claim *c);
/* The job's process group leader; false when the job is no longer running (cancelled). */
bool gw_store_set_pid(struct gw_store *st, const char *id, pid_t pid, unsigned long long start);
/* A running job's end: status succeeded|failed, result and error objects (NULL: null). A job
 * cancelled meanwhile stays cancelled (the result is kept). */
void gw_store_finish(struct gw_store *st, const char *id, const char *status, json_t *result,
                     json_t *error);
/* Cancel: queued → cancelled; running → cancelled and *pid its group (0 when not started
 * yet); 0, or -1 when there is no such job. */
int gw_store_cancel(struct gw_store *st, const char *id, pid_t *pid);
/* The job's status alone (cheap: what a long-poll checks on each wake-up); 0: no such job. */
int gw_store_status(struct gw_store *st, const char *id, char status[16]);
/* The job view (NULL: no such job). */
json_t *gw_store_view(struct gw_store *st, const char *id);
/* The job views matching kind and status (NULL: any), newest first unless ascending. */
json_t *gw_store_list(struct gw_store *st, const char *kind, const char *status, int limit,
                      bool ascending);
uint64_t gw_store_gen(struct gw_store *st);
/* Wait until the generation differs from gen or deadline_ms (CLOCK_MONOTONIC) passes. */
void gw_store_wait(struct gw_store *st, uint64_t gen, int64_t deadline_ms);
int64_t gw_now_ms(void);
/* Is status a terminal one? */
bool gw_terminal(const char *status);
/* A failed job's error object ({error_class, reason, message, details, trace_id}). */
json_t *gw_error(const char *cls, const char *reason, const char *message);

/* ---- request.c ---- */
/* What a worker can give a job. */
struct gw_limits {
    int max_gpus;                 /* GPUs of one worker */
    size_t max_output;            /* stdout + stderr + artifacts */
    const struct strvec *aliases; /* accepted target_hardware tokens besides "local" */
    const char *bench_version;    /* served evaluator runtime (NULL: any) */
};
/*
 * Validate a request body for kind; the HTTP status (400 malformed, 413 too large, 422
 * invalid) and a message naming the field on failure, 0 when valid.
 */
int gw_request_check(const char *kind, json_t *body, const struct gw_limits *lim, char *msg,
                     size_t n);
/* The sandbox job the (valid) request describes: its files written below dir/in, its
 * artifacts landing in dir/out; gpu_ids are the worker's. */
int gw_request_job(json_t *body, const char *dir, const int *gpu_ids, size_t n_gpus,
                   const struct gw_limits *lim, struct aka_sandbox_job *job, struct aka_err *err);
/* The result object of a finished job: the sandbox result, plus the artifact files
 * (base64) read from the job's artifact directory within the output limit. */
json_t *gw_result_json(const struct aka_sandbox_job *job, const struct aka_sandbox_result *res,
                       size_t max_output, bool *too_large);

/* ---- clocks.c ---- */
/* Lock each GPU's graphics clock to its highest supported one (nvidia-smi); code 75. */
int gw_clocks_lock(const int *gpus, size_t n, struct strvec *notes, struct aka_err *err);
void gw_clocks_reset(const int *gpus, size_t n, struct strvec *notes);

/* ---- worker.c ---- */
struct gw_server;
struct gw_worker {
    struct gw_server *srv;
    int index;
    int gpus[AKA_SBX_MAX_GPUS];
    size_t n_gpus;
    pthread_t thread;
    bool started;
    char work[4096]; /* its staging directory: job directories are made here */
};
int gw_workers_start(struct gw_server *srv, struct aka_err *err);
void gw_workers_join(struct gw_server *srv);

/* ---- http.c ---- */
int gw_http_start(struct gw_server *srv, struct aka_err *err);
void gw_http_stop(struct gw_server *srv);

/* ---- serve.c: the server everything above shares ---- */
struct gw_server {
    const struct aka_gateway_opts *o;
    struct gw_store store;
    struct strbuf state, jobs_dir, work_dir, token; /* jobs_dir, work_dir: below --work-dir */
    struct gw_worker workers[AKA_GW_MAX_WORKERS];
    int n_workers;
    volatile int stopping;
    struct MHD_Daemon *mhd;
    int port; /* the bound port */
};

#endif
