/*
 * harness_flow.c — one evaluation, start to finish, as the judge runs it.
 *
 * 1. Reference phase. The reference runner (./refrun: the runner loop and the
 *    operator's reference, nothing else) runs every (shape, seed) correctness
 *    case and then every shape's timed schedule; the judge keeps its outputs of
 *    every case and of the timed runs it will check, and its timing. The
 *    reference runner is then killed and reaped: no candidate code ever runs
 *    beside it, and nothing the candidate leaves behind can slow it down.
 * 2. Candidate phase. The candidate runner (./candrun) runs the same cases and
 *    the same schedule on the same inputs; the judge compares every case and
 *    every checked timed run with the reference's outputs, checks the inputs
 *    after every run, and cross-checks the timing (harness_timing.c).
 *
 * Correctness, per case: inputs from the seeded generator (seed from the plan);
 * outputs poisoned before the call; every output compared with the tolerance
 * rule of harness_data.c; the inputs must come back bit-identical.
 *
 * A runner that dies (a crash, an exit), stays busy after answering, or leaves
 * threads behind fails the shape with that named; the judge starts a fresh
 * candidate runner for the next shape, so one crash costs one shape, never the
 * evaluation. Any failure of the reference is the operator's (exit code 3).
 */
#define _GNU_SOURCE
#include "harness_core.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HX_DEFAULT_BUDGET ((int64_t)512 << 20)
/* Reference outputs kept for the checked timed runs of one shape: every timed run when
 * they fit, else a secret sample of as many as fit (never fewer than HX_MIN_CHECKED). */
#define HX_CHECK_BUDGET ((int64_t)128 << 20)
#define HX_MIN_CHECKED  2
/* The fewest timed runs a time budget leaves a shape (a median and a spread need 3). */
#define HX_BUDGET_MIN_REPS 3
/* On a device, the share of timed runs whose inputs come back to be compared. */
#define HX_INPUTS_FRACTION 0.1
#define HX_MSG             1536

const hx_target hx_target_c = {"aka.native.c", "cpu_monotonic", 0, 0, HX_MAX_SLOTS};
const hx_target hx_target_cuda = {"aka.native.cuda", "cuda_event", 1, 1, HX_MAX_SLOTS};

/* When the judge started: every progress line says how long the evaluation has run, so
 * `aka eval -v` shows where the time of a slow evaluation went. */
static double g_started_us;

void hx_progress(const char *phase, const hx_shape *sh, long long seed)
{
    hx_log("phase=%s shape=%s seed=%lld at=%.3fs", phase, sh->id, seed,
           (hx_now_us() - g_started_us) * 1e-6);
}

/* ---- layout ---- */

/*
 * How many slots: two (consecutive runs use different addresses), one when two copies of
 * the shape exceed the rotation budget (on a device, at most a quarter of its free
 * memory). Caches need no extra copies: every run's inputs are fresh and, on the CPU,
 * flushed (harness_timing.c).
 */
static int choose_copies(const hx_eval *ev, size_t ws)
{
    const hx_plan *p = ev->plan;
    int64_t budget = p->rotate_budget > 0 ? p->rotate_budget : HX_DEFAULT_BUDGET;
    int k = ev->tg->max_copies;
    if (ev->device_free > 0 && budget > ev->device_free / 4)
        budget = ev->device_free / 4;
    while (k > 1 && (int64_t)ws * k > budget)
        k--;
    return k;
}

static size_t align_up(size_t x)
{
    return (x + HP_DATA_ALIGN - 1) / HP_DATA_ALIGN * HP_DATA_ALIGN;
}

/* Offsets of every tensor of every slot; the secret sample of checked timed runs. */
static int layout(hx_eval *ev, hx_job *j, const hx_shape *sh)
{
    size_t ws = 0, out_bytes = 0, cur = HP_DATA_START;
    int n = ev->plan->warmup + ev->plan->reps;
    for (int t = 0; t < sh->n_in; t++)
        ws += align_up(sh->in[t].bytes);
    for (int t = 0; t < sh->n_out; t++)
        ws += align_up(sh->out[t].bytes), out_bytes += sh->out[t].bytes;
    j->sh = sh;
    j->warmup = ev->plan->warmup, j->reps = ev->plan->reps;
    j->K = choose_copies(ev, ws);
    j->in_off = calloc((size_t)(j->K * sh->n_in), sizeof(uint64_t));
    j->out_off = calloc((size_t)(j->K * sh->n_out), sizeof(uint64_t));
    j->check_of = calloc((size_t)n, sizeof(int));
    j->inputs_back = calloc((size_t)n, 1);
    if (!j->in_off || !j->out_off || !j->check_of || !j->inputs_back)
        return -1;
    for (int r = 0; r < n; r++)
        j->check_of[r] = -1; /* until choose_checked, after the reference's cases */
    for (int k = 0; k < j->K; k++) {
        for (int t = 0; t < sh->n_in; t++) {
            j->in_off[k * sh->n_in + t] = cur;
            cur += align_up(sh->in[t].bytes);
        }
        for (int t = 0; t < sh->n_out; t++) {
            j->out_off[k * sh->n_out + t] = cur;
            cur += align_up(sh->out[t].bytes);
        }
    }
    j->bytes = cur;
    return 0;
}

/* Which runs' inputs come back to be compared. On the CPU every run's (the runner works in
 * the mapping itself: comparing costs a memcmp). On a device a secret sample of at least
 * HX_INPUTS_FRACTION of the timed runs', and no warm-up run's: copying a large shape's
 * inputs back after every run doubled its cost on an H200. The runner learns that a run is
 * sampled only after its call; a kernel that writes its inputs on every run is caught on
 * the first sampled one, and one that writes them on a few runs gains nothing (every run's
 * inputs are fresh). The warm-up runs add nothing to that: a kernel can count its calls,
 * so it knows them, and the correctness cases already compare every input. */
static void choose_inputs_back(hx_eval *ev, hx_job *j, uint64_t *draw)
{
    int want = (int)ceil(HX_INPUTS_FRACTION * j->reps);
    want = want < HX_MIN_CHECKED ? HX_MIN_CHECKED : want;
    for (int r = 0; r < j->warmup + j->reps; r++)
        j->inputs_back[r] = !ev->tg->device || (r >= j->warmup && want >= j->reps);
    for (int drawn = 0; ev->tg->device && drawn < want && want < j->reps;) {
        int r = j->warmup + (int)(hx_mix(draw) % (uint64_t)j->reps);
        if (!j->inputs_back[r])
            j->inputs_back[r] = 1, drawn++;
    }
}

/* Which timed runs get their outputs checked: a partial Fisher-Yates over the timed run
 * indices, driven by the evaluation's secret. */
static void choose_checked(hx_eval *ev, hx_job *j, uint64_t *draw)
{
    int64_t per = 0, fit;
    int n = ev->plan->warmup + ev->plan->reps, *order = malloc((size_t)j->reps * sizeof(int));
    for (int t = 0; t < j->sh->n_out; t++)
        per += (int64_t)j->sh->out[t].bytes;
    fit = per > 0 ? HX_CHECK_BUDGET / per : j->reps;
    j->n_checked = fit >= j->reps ? j->reps : (int)(fit < HX_MIN_CHECKED ? HX_MIN_CHECKED : fit);
    if (j->n_checked > j->reps)
        j->n_checked = j->reps;
    for (int r = 0; r < n; r++)
        j->check_of[r] = -1;
    for (int i = 0; order && i < j->reps; i++)
        order[i] = i;
    for (int i = 0; order && i < j->n_checked; i++) {
        int k = i + (int)(hx_mix(draw) % (uint64_t)(j->reps - i)), tmp = order[i];
        order[i] = order[k], order[k] = tmp;
        j->check_of[j->warmup + order[i]] = i;
    }
    free(order);
}

static int check_names(const hx_shape *sh, char *why, size_t n)
{
    int ok =
        strlen(sh->id) < HP_NAME && sh->n_dims <= HP_MAX_VALUES && sh->n_params <= HP_MAX_VALUES;
    for (int i = 0; i < sh->n_dims; i++)
        ok = ok && strlen(sh->dims[i].name) < HP_NAME;
    for (int i = 0; i < sh->n_params; i++)
        ok = ok && strlen(sh->params[i].name) < HP_NAME;
    for (int t = 0; t < sh->n_in; t++)
        ok = ok && strlen(sh->in[t].name) < HP_NAME;
    for (int t = 0; t < sh->n_out; t++)
        ok = ok && strlen(sh->out[t].name) < HP_NAME;
    if (!ok)
        snprintf(why, n,
                 "shape %.200s: names must be shorter than %d bytes and dims and params at most "
                 "%d",
                 sh->id, HP_NAME, HP_MAX_VALUES);
    return ok ? 0 : -1;
}

/* ---- slots, requests, checks ---- */

/* Input t of a slot from (seed, copy) into the judge's copy and the mapping (see
 * hx_load_slot). */
static void load_tensor(hx_eval *ev, hx_job *j, int slot, int t, uint64_t seed, uint32_t copy,
                        int timed, int keep)
{
    const hx_shape *sh = j->sh;
    unsigned char *shared = ev->run.base + j->in_off[slot * sh->n_in + t];
    if (ev->tg->device && timed && !keep) {
        /* Only staging for the runner's copy to the device: no cache state to avoid and
         * nothing to compare afterwards, so the judge's copy is skipped. */
        hx_fill_timed(shared, &sh->in[t], seed, sh->id, copy);
        return;
    }
    void *priv = j->priv[slot * sh->n_in + t];
    (timed ? hx_fill_timed : hx_fill)(priv, &sh->in[t], seed, sh->id, copy);
    if (!timed)
        hx_probe_apply(priv, &sh->in[t], ev->probe);
    hx_stream_copy(shared, priv, sh->in[t].bytes);
}

void hx_load_slot(hx_eval *ev, hx_job *j, int slot, uint64_t seed, uint32_t copy, int timed,
                  int keep)
{
    ev->run.ctl->gen_key = ev->run.ctl->gen_tensors = 0; /* every input from the mapping */
    j->gen_key[slot] = j->gen_mask[slot] = 0;
    for (int t = 0; t < j->sh->n_in; t++)
        load_tensor(ev, j, slot, t, seed, copy, timed, keep);
}

void hx_gen_slot(hx_eval *ev, hx_job *j, int slot, uint32_t run, int keep)
{
    const hx_shape *sh = j->sh;
    uint64_t x = ev->secret ^ ((uint64_t)run << 32), key = hx_mix(&x), marked = 0;
    for (int t = 0; t < sh->n_in; t++) {
        if (sh->in[t].dtype != AKA_DT_FLOAT32 || t >= 64) {
            load_tensor(ev, j, slot, t, ev->secret, run, 1, keep);
            continue;
        }
        marked |= (uint64_t)1 << t;
    }
    /* Nothing is computed here: a compared run's generated inputs are regenerated while
     * they are compared (hx_check_inputs), with no copy. */
    j->gen_key[slot] = key;
    j->gen_mask[slot] = marked;
    ev->run.ctl->gen_key = key;
    ev->run.ctl->gen_tensors = marked;
}

void hx_poison_slot(hx_eval *ev, hx_job *j, int slot)
{
    const hx_shape *sh = j->sh;
    for (int t = 0; t < sh->n_out; t++)
        hx_stream_fill(ev->run.base + j->out_off[slot * sh->n_out + t],
                       hx_poison_byte(sh->out[t].dtype), sh->out[t].bytes);
}

static const char *status_name(int rc)
{
    switch (rc) {
    case AKA_ERR_SHAPE:
        return "AKA_ERR_SHAPE: a shape the kernel does not support";
    case AKA_ERR_DTYPE:
        return "AKA_ERR_DTYPE: a dtype the kernel does not support";
    case AKA_ERR_UNSUPPORTED:
        return "AKA_ERR_UNSUPPORTED: a parameter value it does not handle";
    case AKA_ERR_LAUNCH:
        return "AKA_ERR_LAUNCH: a launch or runtime error";
    default:
        return "a non-zero status";
    }
}

/* What the judge saw of the process, beyond its answer: 0 fine, 2 replace the runner. */
static int observed(hx_eval *ev, const hx_call *c, char *msg, size_t n)
{
    const char *who = ev->run.who;
    char death[160];
    if (c->outcome == HX_CALL_DIED) {
        hx_runner_death(&ev->run, death, sizeof(death));
        snprintf(msg, n, "%s %s", who, death);
    } else if (c->outcome == HX_CALL_BUSY)
        snprintf(msg, n,
                 "work deferred past timing: %s's process kept running for more than %.0f ms "
                 "after it reported the call done",
                 who, HX_IDLE_LIMIT_US / 1e3);
    else if (c->outcome == HX_CALL_ENV)
        snprintf(msg, n, "the judge lost sight of %s's process (/proc)", who);
    else if (c->threads > ev->max_threads && (ev->candidate || !ev->tg->device))
        snprintf(msg, n,
                 "work deferred past timing: %s left %d thread(s) running after the call "
                 "returned",
                 who, c->threads - ev->max_threads);
    else if (!c->waiting)
        snprintf(msg, n,
                 "timing tampered: %s's process was not waiting for the next request when the "
                 "judge sent it",
                 who);
    else
        return 0;
    return 2;
}

/* One request: 0 ok, 1 the answer is a failure, 2 also replace the runner. */
static int request(hx_eval *ev, int req, int slot, hx_call *c, char *msg, size_t n)
{
    const char *who = ev->run.who;
    int rc = hx_runner_request(&ev->run, req, slot, c);
    /* A device runtime starts threads of its own: the reference runner shows how many. */
    if (!ev->candidate && ev->tg->device && c->threads > ev->max_threads)
        ev->max_threads = c->threads;
    if (observed(ev, c, msg, n) != 0)
        return 2;
    if (rc != 0 || c->status == 0)
        return rc != 0 ? 2 : 0;
    if (c->status == HP_ST_DEVICE_ERROR) {
        snprintf(msg, n, "%s left a device error: %s", who, c->error);
        return 2;
    }
    if (c->status == HP_ST_OFF_STREAM)
        snprintf(msg, n, "%s left work outside params->stream: %s", who, c->error);
    else if (c->status == HP_ST_BAD_REQUEST || c->status == HP_ST_NO_MEMORY ||
             c->status == HP_ST_NO_DEVICE)
        snprintf(msg, n, "%s's runner refused the request: %s", who,
                 c->error[0] ? c->error : "inconsistent request");
    else
        snprintf(msg, n, "%s returned %d (%s)", who, c->status, status_name(c->status));
    return 1;
}

int hx_run_slot(hx_eval *ev, int slot, int inputs_back, hx_call *call, double *prep_us,
                double *fetch_us, char *msg, size_t n)
{
    hx_call c;
    int rc;
    if (ev->tg->device) {
        if ((rc = request(ev, HP_REQ_PREP, slot, &c, msg, n)) != 0)
            return rc;
        *prep_us = c.window_us;
    }
    if ((rc = request(ev, HP_REQ_CALL, slot, call, msg, n)) != 0)
        return rc;
    if (ev->tg->device) {
        int req = inputs_back ? HP_REQ_FETCH : HP_REQ_FETCH_OUT;
        if ((rc = request(ev, req, slot, &c, msg, n)) != 0)
            return rc;
        *fetch_us = c.window_us;
    }
    return 0;
}

static void mismatch_text(const hx_tensor *t, const hx_cmp *c, char *out, size_t n)
{
    char at[160];
    hx_coords(t, c->first_bad, at, sizeof(at));
    snprintf(out, n,
             "output '%s'%s (flat %lld) = %.9g, expected %.9g%s; %lld of %lld elements outside "
             "atol %g + rtol %g*|expected|; max_abs_err %.6g, max_rel_err %.6g",
             t->name, at, (long long)c->first_bad, c->got, c->want,
             c->first_poison ? " (never written: still the poison pattern)" : "", (long long)c->bad,
             (long long)t->numel, t->atol, t->rtol, c->max_abs, c->max_rel);
}

int hx_check_outputs(hx_eval *ev, hx_job *j, int slot, void **want, char *msg, size_t n)
{
    const hx_shape *sh = j->sh;
    int bad = 0;
    for (int t = 0; t < sh->n_out; t++) {
        hx_cmp c;
        /* A private copy first: the runner's memory is compared as it was, once. */
        memcpy(ev->got[t], ev->run.base + j->out_off[slot * sh->n_out + t], sh->out[t].bytes);
        hx_compare(ev->got[t], want[t], &sh->out[t], &c);
        ev->a.compared = 1;
        ev->a.max_abs = fmax(ev->a.max_abs, c.max_abs);
        ev->a.max_rel = fmax(ev->a.max_rel, c.max_rel);
        if (c.bad && !bad++)
            mismatch_text(&sh->out[t], &c, msg, n); /* the first bad tensor */
    }
    return bad;
}

/* The element index where input t of slot first differs from what the judge put there
 * (its copy, or the generated values), or -1. */
static int64_t first_changed(hx_job *j, int slot, int t, const unsigned char *now)
{
    const hx_tensor *in = &j->sh->in[t];
    if (t < 64 && (j->gen_mask[slot] >> t & 1))
        return hx_check_gen(now, in, j->gen_key[slot], (uint32_t)t);
    const unsigned char *was = j->priv[slot * j->sh->n_in + t];
    if (memcmp(now, was, in->bytes) == 0)
        return -1;
    size_t i = 0;
    while (now[i] == was[i])
        i++;
    return (int64_t)(i / hx_dtype_size(in->dtype));
}

int hx_check_inputs(hx_eval *ev, hx_job *j, int slot, char *msg, size_t n)
{
    const hx_shape *sh = j->sh;
    for (int t = 0; t < sh->n_in; t++) {
        int64_t at = first_changed(j, slot, t, ev->run.base + j->in_off[slot * sh->n_in + t]);
        if (at < 0)
            continue;
        char where[160];
        hx_coords(&sh->in[t], at, where, sizeof(where));
        snprintf(msg, n, "input '%s' first changed at %s", sh->in[t].name, where);
        return 1;
    }
    return 0;
}

/* ---- one runner, one shape ---- */

void hx_reference_failed(hx_eval *ev, const hx_shape *sh, const char *fmt, ...)
{
    char msg[HX_MSG];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    hx_fail(&ev->a, sh->id, "reference", "%s; the operator's reference must succeed on every shape",
            msg);
    ev->a.reference_failed = 1;
}

static void *host_alloc(size_t bytes)
{
    return aligned_alloc(64, align_up(bytes ? bytes : 1));
}

static void free_list(void **v, int n)
{
    for (int i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

static void **alloc_list(int n, const hx_tensor *t, int per)
{
    void **v = calloc((size_t)(n > 0 ? n : 1), sizeof(void *));
    for (int i = 0; v && i < n; i++)
        if (!(v[i] = host_alloc(t[i % per].bytes))) {
            free_list(v, i);
            return NULL;
        }
    return v;
}

/* The descriptor of job j for the runner, then SHAPE. */
static int send_shape(hx_eval *ev, hx_job *j, char *msg, size_t n)
{
    const hx_shape *sh = j->sh;
    hx_call c;
    if (hx_runner_grow(&ev->run, j->bytes) != 0) {
        snprintf(msg, n, "cannot grow the shared memory to %zu bytes", j->bytes);
        return 2;
    }
    hp_desc *d = ev->run.desc;
    memset(d, 0, sizeof(*d));
    snprintf(d->shape_id, sizeof(d->shape_id), "%s", sh->id);
    d->n_dims = sh->n_dims, d->n_params = sh->n_params;
    d->n_in = sh->n_in, d->n_out = sh->n_out, d->slots = j->K;
    for (int i = 0; i < sh->n_dims + sh->n_params; i++) {
        const aka_value *v = i < sh->n_dims ? &sh->dims[i] : &sh->params[i - sh->n_dims];
        hp_value *o = i < sh->n_dims ? &d->dims[i] : &d->params[i - sh->n_dims];
        snprintf(o->name, sizeof(o->name), "%s", v->name);
        o->is_float = v->is_float, o->i = v->i, o->f = v->f;
    }
    for (int t = 0; t < sh->n_in + sh->n_out; t++) {
        const hx_tensor *s = t < sh->n_in ? &sh->in[t] : &sh->out[t - sh->n_in];
        hp_tensor *o = t < sh->n_in ? &d->in[t] : &d->out[t - sh->n_in];
        snprintf(o->name, sizeof(o->name), "%s", s->name);
        o->dtype = s->dtype, o->ndim = s->ndim, o->bytes = s->bytes;
        o->poison = hx_poison_byte(s->dtype);
        memcpy(o->shape, s->shape, sizeof(o->shape));
    }
    for (int k = 0; k < j->K; k++) {
        for (int t = 0; t < sh->n_in; t++)
            d->in_off[k][t] = j->in_off[k * sh->n_in + t];
        for (int t = 0; t < sh->n_out; t++)
            d->out_off[k][t] = j->out_off[k * sh->n_out + t];
    }
    return request(ev, HP_REQ_SHAPE, 0, &c, msg, n);
}

/* Whether a runner's window CPU time is read with it asleep at both ends: the CPU
 * latency ("cpu_time") is built on it; the other methods read it for nothing. */
static int cpu_window_asleep(const hx_eval *ev)
{
    return !ev->tg->device && ev->plan->cpu_time;
}

/* How a runner is asked to time (harness_proto.h HP_TIMING_*): kernel spans when the plan
 * says so, except that a candidate follows what the reference runner achieved, so that both
 * roles go through the same path (the cross-check compares their gaps): events without the
 * hold when the reference could not start CUPTI. */
static int timing_ask(const hx_eval *ev)
{
    if (!ev->tg->device || !ev->plan->kernel_span)
        return HP_TIMING_EVENTS;
    return !ev->candidate || ev->span ? HP_TIMING_SPAN : HP_TIMING_EVENTS_UNHELD;
}

/* Say once per role when kernel spans were asked for and a runner could not start CUPTI
 * (its log says why); that runner's calls are timed by events, never lower than a span. */
static void note_span(hx_eval *ev, const char *who)
{
    if (timing_ask(ev) != HP_TIMING_SPAN || ev->run.ctl->timing_span ||
        ev->span_noted[ev->candidate])
        return;
    ev->span_noted[ev->candidate] = 1;
    hx_diagnose(&ev->a, "timing",
                "%s: CUPTI kernel spans unavailable (the job log says why); timed with CUDA "
                "events instead (no hold)",
                who);
}

/* Start a runner and SETUP; 0 ok, else text in msg and the status in *status. */
static int start_runner(hx_eval *ev, const char *path, const char *who, char *msg, size_t n,
                        int *status)
{
    hx_call c;
    *status = 0;
    if (hx_runner_start(&ev->run, path, who, HP_DATA_START, msg, n) != 0) {
        hx_runner_stop(&ev->run);
        return -1;
    }
    ev->have_runner = 1;
    ev->run.cpu_window_asleep = cpu_window_asleep(ev);
    ev->run.ctl->timing_ask = timing_ask(ev);
    if (request(ev, HP_REQ_SETUP, 0, &c, msg, n) != 0) {
        *status = c.status;
        return -1;
    }
    if (!ev->candidate) {
        ev->device_free = ev->run.ctl->device_free;
        ev->span = ev->run.ctl->timing_span;
    }
    note_span(ev, who);
    return 0;
}

static void stop_runner(hx_eval *ev)
{
    if (ev->have_runner)
        hx_runner_stop(&ev->run);
    ev->have_runner = 0;
}

/* A probe case: every output within the supervisor's relative L2 threshold of the
 * reference's (integer outputs exactly). The worst output is the probe's entry in the
 * result's probes[] (DESIGN §4.6); 0 when it passed, else the failure is named. */
static int probe_outputs(hx_eval *ev, hx_job *j, int si, long long seed)
{
    const hx_shape *sh = j->sh;
    const hx_probe *pr = &ev->plan->probes[si];
    int worst = 0, bad = 0;
    double worst_rel = 0, worst_thr = 0;
    for (int t = 0; t < sh->n_out; t++) {
        const hx_tensor *o = &sh->out[t];
        double thr = hx_dtype_is_float(o->dtype) ? ev->plan->rel_l2[o->dtype] : 0;
        memcpy(ev->got[t], ev->run.base + j->out_off[t], o->bytes);
        double rel = hx_rel_l2(ev->got[t], j->ref_case[si * sh->n_out + t], o);
        ev->a.compared = 1;
        if (t == 0 || (rel > thr && !bad) ||
            (!bad && rel / (thr > 0 ? thr : 1) > worst_rel / (worst_thr > 0 ? worst_thr : 1)))
            worst = t, worst_rel = rel, worst_thr = thr;
        bad |= rel > thr;
    }
    char id[2 * HP_NAME + 2];
    snprintf(id, sizeof(id), "%s@%s", pr->name, sh->id);
    json_array_append_new(
        ev->a.probes, json_pack("{s:s, s:s, s:s, s:s, s:I, s:s, s:o, s:f, s:s}", "id", id, "status",
                                bad ? "failed" : "passed", "distribution", pr->name, "shape_id",
                                sh->id, "seed", (json_int_t)seed, "metric", "rel_l2", "value",
                                isfinite(worst_rel) ? json_real(worst_rel) : json_null(),
                                "threshold", worst_thr, "detail", sh->out[worst].name));
    if (bad)
        hx_fail(&ev->a, sh->id, "numerical_probe",
                "numerical probe %s (seed %lld, inputs x%g%+g%s): output '%s' has relative L2 "
                "error %.3g against the reference, above the supervisor's threshold %g for %s",
                pr->name, seed, pr->scale, pr->offset, pr->constant_rows ? ", constant rows" : "",
                sh->out[worst].name, worst_rel, worst_thr, hx_dtype_name(sh->out[worst].dtype));
    return bad;
}

/* One (shape, seed) case on the current runner: 0 passed, 1 failed, 2 replace the runner. */
static int run_case(hx_eval *ev, hx_job *j, int si)
{
    const hx_shape *sh = j->sh;
    long long seed = (long long)ev->plan->seeds[si];
    char msg[HX_MSG];
    double prep, fetch;
    hx_call c;
    int rc;
    hx_progress(ev->candidate ? "candidate" : "reference", sh, seed);
    ev->probe = ev->plan->probes ? &ev->plan->probes[si] : NULL;
    hx_load_slot(ev, j, 0, (uint64_t)seed, 0, 0, 1);
    ev->probe = NULL;
    hx_poison_slot(ev, j, 0);
    if ((rc = hx_run_slot(ev, 0, 1, &c, &prep, &fetch, msg, sizeof(msg))) != 0) {
        if (!ev->candidate)
            hx_reference_failed(ev, sh, "seed %lld: %s", seed, msg);
        else
            hx_fail(&ev->a, sh->id, "candidate_runtime", "seed %lld: %s", seed, msg);
        return rc;
    }
    if (!ev->candidate) {
        for (int t = 0; t < sh->n_out; t++)
            memcpy(j->ref_case[si * sh->n_out + t], ev->run.base + j->out_off[t], sh->out[t].bytes);
        j->ref_call_us = fmax(j->ref_call_us, c.window_us);
        return 0;
    }
    if (ev->plan->probes && probe_outputs(ev, j, si, seed) != 0)
        return 1;
    if (!ev->plan->probes &&
        hx_check_outputs(ev, j, 0, j->ref_case + si * sh->n_out, msg, sizeof(msg))) {
        hx_fail(&ev->a, sh->id, NULL, "seed %lld: %s", seed, msg);
        return 1;
    }
    if (hx_check_inputs(ev, j, 0, msg, sizeof(msg))) {
        hx_fail(&ev->a, sh->id, NULL, "seed %lld: the kernel modified %s; inputs are read-only",
                seed, msg);
        return 1;
    }
    return 0;
}

static int alloc_job(hx_eval *ev, hx_job *j)
{
    const hx_shape *sh = j->sh;
    if (!j->priv)
        j->priv = alloc_list(j->K * sh->n_in, sh->in, sh->n_in);
    if (!ev->candidate) {
        j->ref_case = alloc_list(ev->plan->n_seeds * sh->n_out, sh->out, sh->n_out);
        if (!j->ref_case || hx_timed_alloc(&j->ref, ev->plan->reps) != 0)
            return -1;
    } else if (hx_timed_alloc(&j->cand, ev->plan->reps) != 0)
        return -1;
    return j->priv ? 0 : -1;
}

/*
 * Cut a shape's schedule to the plan's time budget, as the official evaluators bound
 * theirs: a reference that takes 200 ms per call would otherwise spend 5 s of timed runs
 * per runner on one shape, and every campaign's V0 pays it. The count comes from the
 * reference's slowest correctness call (the judge's window, so the candidate cannot
 * shorten its own schedule), with at least HX_BUDGET_MIN_REPS timed runs and one
 * warm-up (when the plan has any); both runners then run the same schedule.
 */
static void budget_schedule(const hx_eval *ev, hx_job *j)
{
    const hx_plan *p = ev->plan;
    if (p->time_budget_us <= 0 || j->ref_call_us <= 0)
        return;
    double fit = floor(p->time_budget_us / j->ref_call_us);
    int min_reps = p->reps < HX_BUDGET_MIN_REPS ? p->reps : HX_BUDGET_MIN_REPS;
    j->reps = fit >= p->reps ? p->reps : fit < min_reps ? min_reps : (int)fit;
    /* Warm-ups: a tenth of the budget, at least one (none when the plan asks for none). */
    int warm = fit / 10 < p->warmup ? (int)(fit / 10) : p->warmup;
    j->warmup = p->warmup > 0 && warm < 1 ? 1 : warm;
    if (j->reps < p->reps)
        hx_log("shape %s: %d timed runs and %d warm-ups of %d and %d fit the %.0f ms budget "
               "(the reference's call: %.1f ms)",
               j->sh->id, j->reps, j->warmup, p->reps, p->warmup, p->time_budget_us / 1e3,
               j->ref_call_us / 1e3);
}

/* Every case and the schedule of one shape on the reference runner; 0 ok. */
static int reference_shape(hx_eval *ev, hx_job *j, uint64_t *draw)
{
    char msg[HX_MSG];
    if (alloc_job(ev, j) != 0) {
        hx_fail(&ev->a, j->sh->id, "harness", "out of memory for the shape's %d buffer copies",
                j->K);
        ev->a.env_failed = 1;
        return -1;
    }
    if (send_shape(ev, j, msg, sizeof(msg)) != 0) {
        hx_reference_failed(ev, j->sh, "%s", msg);
        return -1;
    }
    for (int si = 0; si < ev->plan->n_seeds; si++)
        if (run_case(ev, j, si) != 0)
            return -1;
    if (ev->plan->probes) /* a probe plan checks numbers only: nothing is timed */
        return 0;
    budget_schedule(ev, j);
    choose_checked(ev, j, draw);
    choose_inputs_back(ev, j, draw);
    if (!(j->ref_timed = alloc_list(j->n_checked * j->sh->n_out, j->sh->out, j->sh->n_out))) {
        hx_fail(&ev->a, j->sh->id, "harness", "out of memory for the checked runs' outputs");
        ev->a.env_failed = 1;
        return -1;
    }
    hx_progress("reference-timing", j->sh, (long long)ev->plan->seeds[0]);
    if (hx_schedule(ev, j) != 0)
        return -1;
    hx_pool_reference(ev, j);
    return 0;
}

/* The candidate's schedule and cross-checks; a shape whose timing does not agree with the
 * reference's is timed once more (a loaded machine's noise seldom strikes twice; a cheat
 * does), and fails only when the second attempt disagrees too. 0 when it passed. */
static int candidate_timing(hx_eval *ev, hx_job *j)
{
    hx_progress("candidate-timing", j->sh, (long long)ev->plan->seeds[0]);
    if (hx_schedule(ev, j) != 0)
        return 1;
    if (hx_cross_check(ev, j, 0) == 0)
        return 0;
    hx_progress("candidate-timing-again", j->sh, (long long)ev->plan->seeds[0]);
    return hx_schedule(ev, j) != 0 || hx_cross_check(ev, j, 1) != 0 ? 1 : 0;
}

/* The candidate on one shape; the runner is replaced after any failure. */
static void candidate_shape(hx_eval *ev, hx_job *j)
{
    char msg[HX_MSG];
    int failed = 0, rc = 0;
    if (alloc_job(ev, j) != 0) {
        hx_fail(&ev->a, j->sh->id, "harness", "out of memory for the shape's %d buffer copies",
                j->K);
        return;
    }
    if ((rc = send_shape(ev, j, msg, sizeof(msg))) != 0) {
        hx_fail(&ev->a, j->sh->id, "candidate_runtime", "%s", msg);
        stop_runner(ev);
        return;
    }
    json_object_set_new(ev->a.copies, j->sh->id, json_integer(j->K));
    for (int si = 0; si < ev->plan->n_seeds && rc != 2; si++) {
        rc = run_case(ev, j, si);
        failed |= rc != 0;
        ev->a.passed += rc == 0;
    }
    if (!failed && !ev->plan->probes && candidate_timing(ev, j) != 0)
        failed = 1, ev->a.passed--; /* the first seed's case failed while being timed */
    if (failed)
        stop_runner(ev); /* a fresh process for the next shape */
}

/* ---- the two phases ---- */

static int reference_phase(hx_eval *ev)
{
    const hx_plan *p = ev->plan;
    char msg[HX_MSG];
    uint64_t draw = ev->secret ^ 0x9E3779B97F4A7C15ull;
    int st, i;
    /* No device, no seccomp, no process: the environment's, before any kernel code. */
    if (start_runner(ev, "./refrun", "the reference", msg, sizeof(msg), &st) != 0) {
        hx_log("the reference runner did not start: %s", msg);
        hx_fail(&ev->a, p->shapes[0].id, "harness", "the reference runner did not start: %s", msg);
        ev->a.env_failed = 1;
        return -1;
    }
    for (i = 0; i < p->n_shapes; i++) {
        if (layout(ev, &ev->jobs[i], &p->shapes[i]) != 0) {
            hx_fail(&ev->a, p->shapes[i].id, "harness", "out of memory");
            ev->a.env_failed = 1;
            return -1;
        }
    }
    for (i = 0; i < p->n_shapes; i++)
        if (reference_shape(ev, &ev->jobs[i], &draw) != 0)
            return -1;
    return 0;
}

static void candidate_phase(hx_eval *ev)
{
    char msg[HX_MSG];
    int st;
    ev->candidate = 1;
    fprintf(stderr, "%s\n", HX_CANDIDATE_MARK);
    fflush(stderr);
    for (int i = 0; i < ev->plan->n_shapes; i++) {
        if (!ev->have_runner &&
            start_runner(ev, "./candrun", "the kernel", msg, sizeof(msg), &st) != 0) {
            hx_fail(&ev->a, ev->plan->shapes[i].id, "candidate_runtime", "%s", msg);
            stop_runner(ev);
            continue;
        }
        candidate_shape(ev, &ev->jobs[i]);
    }
}

static void free_job(hx_job *j, const hx_plan *p)
{
    const hx_shape *sh = j->sh;
    if (!sh)
        return;
    free_list(j->priv, j->K * sh->n_in);
    free_list(j->ref_case, p->n_seeds * sh->n_out);
    free_list(j->ref_timed, j->n_checked * sh->n_out);
    hx_timed_free(&j->ref);
    hx_timed_free(&j->cand);
    free(j->in_off);
    free(j->out_off);
    free(j->check_of);
    free(j->inputs_back);
}

/* The pinger's CPU time for one request now, and in *window_us what of it fell between
 * go and done (0 when there is no pinger). */
double hx_ping(hx_eval *ev, double *window_us)
{
    hx_call c;
    char death[128];
    *window_us = 0;
    if (!ev->have_pinger)
        return 0;
    if (hx_runner_request(&ev->pinger, HP_REQ_CALL, 0, &c) != 0) {
        if (hx_runner_alive(&ev->pinger))
            return 0; /* late or busy this once: this run goes uncalibrated */
        hx_runner_death(&ev->pinger, death, sizeof(death));
        hx_log("the pinger %s after %lld requests: the CPU-time checks run uncalibrated", death,
               ev->pings);
        ev->have_pinger = 0;
        return 0;
    }
    ev->pings++;
    *window_us = c.cpu_window_us > 0 ? c.cpu_window_us : 0;
    return c.cpu_us > 0 ? c.cpu_us : 0;
}

/*
 * The pinger, forked before the secret exists (its copy of the judge's memory holds the plan
 * only) and non-dumpable like the judge, so that no runner can open its memory and make it
 * slow, which would lower every run's CPU-time latency (red team pinger_mem.c). Pinged once
 * right away: a pinger that died is known, and logged by hx_ping, before the first run.
 */
static void start_pinger(hx_eval *ev)
{
    char why[512];
    double window;
    ev->have_pinger =
        hx_runner_start(&ev->pinger, NULL, "the pinger", HP_CTL_BYTES, why, sizeof(why)) == 0;
    ev->pinger.cpu_window_asleep = cpu_window_asleep(ev);
    if (ev->have_pinger)
        hx_ping(ev, &window);
    else
        hx_log("no pinger (%s): the CPU-time checks use no calibration", why);
}

static int alloc_scratch(hx_eval *ev)
{
    int n_out = 0;
    size_t most = 1;
    for (int i = 0; i < ev->plan->n_shapes; i++) {
        const hx_shape *sh = &ev->plan->shapes[i];
        n_out = sh->n_out > n_out ? sh->n_out : n_out;
        for (int t = 0; t < sh->n_out; t++)
            most = sh->out[t].bytes > most ? sh->out[t].bytes : most;
    }
    ev->got = calloc((size_t)(n_out > 0 ? n_out : 1), sizeof(void *));
    ev->n_got = n_out;
    for (int t = 0; ev->got && t < n_out; t++)
        if (!(ev->got[t] = host_alloc(most)))
            return -1;
    return ev->got ? 0 : -1;
}

int hx_evaluate(const hx_plan *plan, const hx_target *tg)
{
    hx_eval ev;
    char why[512];
    int rc = HX_EXIT_ENV;
    memset(&ev, 0, sizeof(ev));
    ev.plan = plan, ev.tg = tg, ev.max_threads = 1;
    g_started_us = hx_now_us();
    for (int i = 0; i < plan->n_shapes; i++)
        if (check_names(&plan->shapes[i], why, sizeof(why)) != 0) {
            hx_log("plan: %s", why);
            return HX_EXIT_PLAN;
        }
    start_pinger(&ev);
    ev.jobs = calloc((size_t)plan->n_shapes, sizeof(hx_job));
    if (!ev.jobs || hx_acc_init(&ev.a) != 0 || alloc_scratch(&ev) != 0 || hx_secret(&ev.secret)) {
        hx_log("out of memory, or no getrandom(2), before any runner started");
    } else {
        ev.a.total = (long long)plan->n_shapes * plan->n_seeds;
        rc = reference_phase(&ev);
        stop_runner(&ev); /* reaped before any candidate code starts */
        if (rc == 0)
            candidate_phase(&ev);
        stop_runner(&ev);
        rc = hx_finish(&ev);
        hx_log("done at=%.3fs", (hx_now_us() - g_started_us) * 1e-6);
    }
    hx_runner_stop(&ev.pinger);
    for (int i = 0; ev.jobs && i < plan->n_shapes; i++)
        free_job(&ev.jobs[i], plan);
    free(ev.jobs);
    free_list(ev.got, ev.n_got);
    for (int ph = 0; ph < HX_PH_N; ph++)
        free(ev.pool[ph]);
    hx_acc_free(&ev.a);
    return rc;
}
