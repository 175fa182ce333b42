/*
 * worker.c — the FIFO workers. Each thread owns its GPUs and its own staging
 * directory; it claims the oldest queued job, writes the request's files below the
 * job's directory, runs the job through the local transport (Bubblewrap, as a local
 * evaluation would), records the outcome and removes the job's directory.
 *
 * The job's process group leader is recorded as soon as it starts, so a cancel (or a
 * restart after a crash) can end that group; a cancel that came before the start ends
 * it right there. What failed is kept apart in the job's error: the request
 * (invalid_request), the machine (environment), the gateway stopping (interrupted) —
 * never confused with the command's own exit status, which is in the result.
 */
#include "gateway/internal.h"

#include "base/fs.h"
#include "base/proc.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct running {
    struct gw_worker *w;
    const char *id;
};

/* The job's group leader started: record it; a job cancelled meanwhile ends now. */
static void on_started(void *arg, int pid)
{
    struct running *r = arg;
    if (!gw_store_set_pid(&r->w->srv->store, r->id, pid, proc_start_ticks(pid)))
        kill(-pid, SIGKILL);
}

static const char *status_for(const struct aka_sandbox_job *job,
                              const struct aka_sandbox_result *res)
{
    /* upstream: a dev job succeeds when its command does; a typed job whenever it ran (the
     * candidate's verdict is in the result, not in the job's status) */
    return job->kind == AKA_SBX_DEV && res->exit_code != 0 ? "failed" : "succeeded";
}

static json_t *failure(const struct aka_sandbox_result *res)
{
    if (res->status == AKA_SBX_REFUSED)
        return gw_error("invalid_request", "job_refused", res->error);
    if (res->status == AKA_SBX_INTERRUPTED)
        return gw_error("interrupted", "scheduler_stopped", res->error);
    return gw_error("environment", "environment_failed", res->error);
}

static void record(struct gw_worker *w, const char *id, const struct aka_sandbox_job *job,
                   const struct aka_sandbox_result *res)
{
    bool too_large = false;
    json_t *result = gw_result_json(job, res, w->srv->o->max_output, &too_large), *error = NULL;
    const char *status = status_for(job, res);
    if (res->status != AKA_SBX_COMPLETED) {
        status = "failed";
        error = failure(res);
    } else if (too_large) {
        status = "failed";
        error = gw_error("job", "output_too_large",
                         "the job's output is over the gateway's --max-output-mb; what fits is "
                         "in the result, artifacts were not returned");
    } else if (!strcmp(status, "failed")) {
        error = gw_error("job", "command_failed", "the command exited with a nonzero status");
    }
    gw_store_finish(&w->srv->store, id, status, result, error);
    json_decref(result);
    json_decref(error);
}

static int run_job(struct gw_worker *w, const char *id, struct aka_sandbox_job *job, bool lock,
                   struct aka_sandbox_result *res, struct aka_err *err)
{
    struct running r = {w, id};
    struct aka_sandbox_local_opts lo = {
        .tmp_dir = w->work, .bwrap = w->srv->o->bwrap, .started = on_started, .started_arg = &r};
    struct aka_sandbox_transport t;
    aka_sandbox_local(&t, &lo);
    t.isolation = job->isolation;
    if (lock && gw_clocks_lock(w->gpus, w->n_gpus, &res->notes, err) < 0) {
        gw_clocks_reset(w->gpus, w->n_gpus, &res->notes);
        res->status = AKA_SBX_ENV_FAILED;
        snprintf(res->error, sizeof(res->error), "lock_clocks: %s", err->msg);
        return -1;
    }
    int rc = aka_sandbox_run(&t, job, res, err);
    if (lock)
        gw_clocks_reset(w->gpus, w->n_gpus, &res->notes);
    return rc;
}

static void run_claim(struct gw_worker *w, const struct gw_claim *c)
{
    const struct aka_gateway_opts *o = w->srv->o;
    struct gw_limits lim = {(int)w->n_gpus, o->max_output, &o->aliases, o->bench_version};
    struct aka_sandbox_job job;
    struct aka_sandbox_result res;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf dir = STRBUF_INIT;
    json_t *body = json_loads(c->body, 0, NULL);
    aka_path_join(&dir, w->srv->jobs_dir.buf, c->id);
    aka_sandbox_job_init(&job, AKA_SBX_DEV);
    job.isolation = o->isolation_none ? AKA_SBX_NONE : AKA_SBX_BWRAP;
    aka_sandbox_result_init(&res);
    if (!body || aka_mkdir_p(dir.buf, 0700, &err) < 0 ||
        gw_request_job(body, dir.buf, w->gpus, w->n_gpus, &lim, &job, &err) < 0) {
        res.status = err.code == AKA_EXIT_ENV ? AKA_SBX_ENV_FAILED : AKA_SBX_REFUSED;
        snprintf(res.error, sizeof(res.error), "%s", body ? err.msg : "stored request unreadable");
    } else {
        run_job(w, c->id, &job, json_is_true(json_object_get(body, "lock_clocks")), &res, &err);
    }
    record(w, c->id, &job, &res);
    aka_remove_tree(dir.buf, NULL);
    strbuf_release(&dir);
    aka_sandbox_result_release(&res);
    aka_sandbox_job_release(&job);
    json_decref(body);
}

static void *worker_main(void *arg)
{
    struct gw_worker *w = arg;
    struct gw_store *st = &w->srv->store;
    while (!w->srv->stopping && !proc_stop_signal()) {
        uint64_t gen = gw_store_gen(st);
        struct gw_claim c = {0};
        if (!gw_store_claim(st, w->index, &c)) {
            gw_store_wait(st, gen, gw_now_ms() + 500);
            continue;
        }
        run_claim(w, &c);
        free(c.body);
    }
    return NULL;
}

int gw_workers_start(struct gw_server *srv, struct aka_err *err)
{
    for (int i = 0; i < srv->n_workers; i++) {
        struct gw_worker *w = &srv->workers[i];
        w->srv = srv;
        w->index = i;
        snprintf(w->work, sizeof(w->work), "%s/w%d", srv->work_dir.buf, i);
        if (aka_mkdir_p(w->work, 0700, err) < 0 || aka_sandbox_check_tmp(w->work, err) < 0)
            return -1;
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
            return aka_err_set(err, AKA_EXIT_ENV, "cannot start worker %d", i);
        w->started = true;
    }
    return 0;
}

void gw_workers_join(struct gw_server *srv)
{
    pthread_mutex_lock(&srv->store.mu);
    srv->store.gen++;
    pthread_cond_broadcast(&srv->store.changed);
    pthread_mutex_unlock(&srv->store.mu);
    for (int i = 0; i < srv->n_workers; i++)
        if (srv->workers[i].started)
            pthread_join(srv->workers[i].thread, NULL);
}
