/*
 * result.c — the result object, its JSON form, and the transport-independent
 * entry point aka_sandbox_run() (validate, then drive a transport through its steps).
 */
#include "sandbox/internal.h"

#include "base/json.h"
#include "base/proc.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

void sbx_take_proc_result(struct aka_sandbox_result *res, struct proc_result *pr)
{
    struct strbuf tmp;
    res->exit_code = pr->exit_code;
    res->term_signal = pr->term_signal;
    res->timed_out = pr->timed_out;
    res->out_bytes = pr->out_bytes;
    res->err_bytes = pr->err_bytes;
    res->out_truncated = pr->out_truncated;
    res->err_truncated = pr->err_truncated;
    res->wall_seconds = pr->wall_seconds;
    /* Swap rather than copy: the buffers can be megabytes. */
    tmp = res->out;
    res->out = pr->out;
    pr->out = tmp;
    tmp = res->err;
    res->err = pr->err;
    pr->err = tmp;
}

void aka_sandbox_result_init(struct aka_sandbox_result *r)
{
    memset(r, 0, sizeof(*r));
    strbuf_init(&r->out, 0);
    strbuf_init(&r->err, 0);
    snprintf(r->isolation, sizeof(r->isolation), "none");
    snprintf(r->pids_limit, sizeof(r->pids_limit), "none");
}

void aka_sandbox_result_release(struct aka_sandbox_result *r)
{
    strbuf_release(&r->out);
    strbuf_release(&r->err);
    strvec_clear(&r->artifacts);
    strvec_clear(&r->artifacts_refused);
    strvec_clear(&r->notes);
}

const char *aka_sandbox_status_name(enum aka_sandbox_status s)
{
    switch (s) {
    case AKA_SBX_COMPLETED:
        return "completed";
    case AKA_SBX_REFUSED:
        return "refused";
    case AKA_SBX_ENV_FAILED:
        return "environment_error";
    case AKA_SBX_INTERRUPTED:
        return "interrupted";
    }
    return "?";
}

static json_t *strvec_json(const struct strvec *sv)
{
    json_t *a = json_array();
    for (size_t i = 0; i < sv->n; i++) {
        json_array_append_new(a, aka_json_text(sv->v[i], strlen(sv->v[i])));
    }
    return a;
}

static json_t *timing_json(const struct aka_sandbox_result *r)
{
    return json_pack("{s:f, s:f, s:f, s:f}", "setup_seconds", r->setup_seconds, "wall_seconds",
                     r->wall_seconds, "cleanup_seconds", r->cleanup_seconds, "overhead_seconds",
                     r->setup_seconds + r->cleanup_seconds);
}

json_t *aka_sandbox_result_to_json(const struct aka_sandbox_job *job,
                                   const struct aka_sandbox_result *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "schema", json_string("aka.sandbox.result.v1"));
    json_object_set_new(o, "transport", json_string(r->transport[0] ? r->transport : "?"));
    json_object_set_new(o, "isolation", json_string(r->isolation));
    json_object_set_new(o, "status", json_string(aka_sandbox_status_name(r->status)));
    json_object_set_new(o, "kind", json_string(aka_sandbox_kind_name(job->kind)));
    json_object_set_new(o, "command", strvec_json(&job->argv));
    json_object_set_new(o, "gpu_count", json_integer(job->gpu_count));
    json_object_set_new(o, "exit_code", json_integer(r->exit_code));
    json_object_set_new(o, "signal", json_integer(r->term_signal));
    json_object_set_new(o, "timed_out", json_boolean(r->timed_out));
    json_object_set_new(o, "stdout", aka_json_text(r->out.buf, r->out.len));
    json_object_set_new(o, "stderr", aka_json_text(r->err.buf, r->err.len));
    json_object_set_new(o, "stdout_bytes", json_integer((json_int_t)r->out_bytes));
    json_object_set_new(o, "stderr_bytes", json_integer((json_int_t)r->err_bytes));
    json_object_set_new(o, "stdout_truncated", json_boolean(r->out_truncated));
    json_object_set_new(o, "stderr_truncated", json_boolean(r->err_truncated));
    json_object_set_new(o, "artifacts", strvec_json(&r->artifacts));
    json_object_set_new(o, "artifacts_refused", strvec_json(&r->artifacts_refused));
    json_object_set_new(o, "notes", strvec_json(&r->notes));
    json_object_set_new(o, "pids_limit", json_string(r->pids_limit));
    json_object_set_new(o, "timing", timing_json(r));
    json_object_set_new(o, "error",
                        r->status == AKA_SBX_COMPLETED ? json_null() : json_string(r->error));
    return o;
}

/* Record a failure that stopped the job in the result as well as in err. */
static void mark_failed(struct aka_sandbox_result *res, const struct aka_err *err)
{
    res->status = err->code == AKA_EXIT_ENV ? AKA_SBX_ENV_FAILED
                  : err->code > 128         ? AKA_SBX_INTERRUPTED
                                            : AKA_SBX_REFUSED;
    res->exit_code = err->code ? err->code : AKA_EXIT_FAILED;
    snprintf(res->error, sizeof(res->error), "%s", err->msg);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* prepare → run → collect → cleanup; a stop signal at any point: nothing comes back. */
static int drive(const struct aka_sandbox_transport *t, const struct aka_sandbox_job *job,
                 struct aka_sandbox_result *res, struct aka_err *err)
{
    const struct aka_sandbox_transport_ops *ops = t->ops;
    void *state = NULL;
    double t0 = now_s(), t1, t2;
    int rc = ops->prepare(t, job, res, &state, err);
    t1 = now_s();
    if (rc == 0)
        rc = ops->run(state, err);
    t2 = now_s();
    if (proc_check_stop(err) < 0)
        rc = -1;
    if (rc == 0)
        ops->collect(state);
    if (state)
        ops->cleanup(state);
    res->setup_seconds = t1 - t0;
    res->cleanup_seconds = now_s() - t2;
    return rc;
}

int aka_sandbox_run(const struct aka_sandbox_transport *t, const struct aka_sandbox_job *job,
                    struct aka_sandbox_result *res, struct aka_err *err)
{
    snprintf(res->transport, sizeof(res->transport), "%s", t->ops->name);
    snprintf(res->isolation, sizeof(res->isolation), "%s",
             job->isolation == AKA_SBX_NONE ? "none" : "bwrap");
    if (aka_sandbox_job_validate(job, err) < 0 || drive(t, job, res, err) < 0) {
        mark_failed(res, err);
        return -1;
    }
    res->status = AKA_SBX_COMPLETED;
    return 0;
}

void aka_sandbox_transport_describe(const struct aka_sandbox_transport *t, struct strbuf *out)
{
    t->ops->describe(t, out);
}
