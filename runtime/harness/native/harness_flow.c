/*
 * harness_flow.c — one evaluation, start to finish, for either target:
 * correctness of every (shape, seed) case, then timing of every passing shape,
 * then the single RESULT_JSON line (DESIGN §4.6) on the stdout saved at start.
 *
 * Correctness, per case: inputs from the seeded generator; the reference and
 * then the candidate each run on freshly poisoned outputs; every output is
 * compared with the tolerance rule of harness_data.c; the candidate must leave
 * its inputs bit-identical.
 *
 * Timing, per shape, on the first seed: K copies ("slots") of the inputs and
 * outputs (K from choose_copies below). Run i uses slot i mod K, so a slot's
 * bytes have been pushed out of the cache by the other K-1 slots before they are
 * used again. At the start of every round of K runs all outputs are poisoned and
 * the input contents move one slot down (slot s receives slot s+1's bytes), so
 * the same address never holds the same inputs twice in a row: a kernel that
 * caches results by pointer, skips work after the first call, or returns early
 * on a clock is caught, because the candidate's output of EVERY run, warm-up and
 * timed, is checked against the reference output for the inputs it was given.
 * The reference runs the same schedule first; its first round records the
 * reference output of each of the K input contents. Latency = median of the
 * timed runs; the coefficient of variation is reported beside it.
 *
 * A crash (signal) inside an entry point, or a device error, ends the
 * evaluation: the failing shape is named and the rest is reported as not run
 * (the guard itself is in harness_guard.c).
 */
#define _GNU_SOURCE
#include "harness_core.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HX_DEFAULT_BUDGET ((int64_t)512 << 20)
#define HX_LLC_FALLBACK   ((int64_t)32 << 20)
#define HX_LLC_CAP        ((int64_t)256 << 20)
#define HX_MSG            1536

static int g_candidate_started;

/* ---- accumulated result ---- */

typedef struct acc {
    json_t *failures, *diags, *lat, *cv, *ref_lat, *copies;
    long long total, passed;
    double max_abs, max_rel;
    int compared;         /* any element compared (else the error fields are null) */
    int fatal;            /* crash / device error / reference failure: stop */
    int reference_failed; /* exit code 3 */
    int env_failed;       /* out of memory before candidate code: exit code 4 */
    const char *fatal_shape;
} acc;

static void add_failure(acc *a, const char *shape, const char *stage, const char *fmt, ...)
{
    char msg[HX_MSG], line[HX_MSG + 128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(line, sizeof(line), "sid=%s: %s", shape, msg);
    json_array_append_new(a->failures, json_string(line));
    if (stage)
        json_array_append_new(a->diags, json_pack("{s:s, s:s, s:s}", "stage", stage, "shape_id",
                                                  shape, "message", msg));
}

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* ---- per-shape state ---- */

typedef struct run {
    const hx_plan *plan;
    const hx_shape *sh;
    const hx_backend *be;
    acc *a;
    int K, offset;              /* slot s holds input content (s + offset) % K */
    void **din, **dout, **tmp;  /* target buffers: K*n_in, K*n_out, n_in */
    void **hin, **hgot, **href; /* host: n_in, n_out, K*n_out (reference per content) */
    void *hchk;                 /* host scratch for the input check */
    aka_tensor *tin, *tout;
    aka_params params;
} run;

static int64_t system_llc(void)
{
    long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (v <= 0)
        v = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return v > 0 ? (int64_t)v : HX_LLC_FALLBACK;
}

/*
 * How many slots: enough that the other slots together are at least twice the
 * last-level cache (so a slot is evicted before it is reused), at least 2 (so
 * contents can move between addresses), at most the backend's limit and half the
 * number of runs (every schedule spans two rounds or more), and never more bytes
 * than the rotation budget. A shape whose two copies exceed the budget, or a run
 * count below 4, runs from one slot (reported as 1 copy).
 */
static int choose_copies(const hx_plan *p, const hx_backend *be, size_t ws)
{
    int64_t llc = p->llc_bytes > 0 ? p->llc_bytes : system_llc();
    int64_t budget = p->rotate_budget > 0 ? p->rotate_budget : HX_DEFAULT_BUDGET;
    int64_t want = (2 * (llc < HX_LLC_CAP ? llc : HX_LLC_CAP)) / (int64_t)ws + 2;
    int k = want > be->max_copies ? be->max_copies : (int)want;
    if (k < 2)
        k = 2;
    while (k > 2 && (int64_t)ws * k > budget)
        k--;
    if ((int64_t)ws * k > budget || be->max_copies < 2)
        k = 1;
    if (k > (p->warmup + p->reps) / 2) /* at least two rounds, so contents move under it */
        k = (p->warmup + p->reps) / 2;
    return k < 1 ? 1 : k;
}

static size_t shape_bytes(const hx_shape *sh, int *max_in)
{
    size_t ws = 0;
    *max_in = 0;
    for (int t = 0; t < sh->n_in; t++) {
        ws += sh->in[t].bytes;
        if (sh->in[t].bytes > sh->in[*max_in].bytes)
            *max_in = t;
    }
    for (int t = 0; t < sh->n_out; t++)
        ws += sh->out[t].bytes;
    return ws;
}

static void *host_alloc(size_t bytes)
{
    return aligned_alloc(64, (bytes + 63) / 64 * 64);
}

static int alloc_target(run *r)
{
    const hx_shape *sh = r->sh;
    int ok = 1;
    r->din = calloc((size_t)(r->K * sh->n_in), sizeof(void *));
    r->dout = calloc((size_t)(r->K * sh->n_out), sizeof(void *));
    r->tmp = calloc((size_t)sh->n_in, sizeof(void *));
    for (int k = 0; k < r->K; k++) {
        for (int t = 0; t < sh->n_in; t++)
            ok = ok && (r->din[k * sh->n_in + t] = r->be->alloc(sh->in[t].bytes)) != NULL;
        for (int t = 0; t < sh->n_out; t++)
            ok = ok && (r->dout[k * sh->n_out + t] = r->be->alloc(sh->out[t].bytes)) != NULL;
    }
    for (int t = 0; r->K > 1 && t < sh->n_in; t++)
        ok = ok && (r->tmp[t] = r->be->alloc(sh->in[t].bytes)) != NULL;
    return ok ? 0 : -1;
}

static int alloc_host(run *r, int max_in)
{
    const hx_shape *sh = r->sh;
    int ok = 1;
    r->hin = calloc((size_t)sh->n_in, sizeof(void *));
    r->hgot = calloc((size_t)sh->n_out, sizeof(void *));
    r->href = calloc((size_t)(r->K * sh->n_out), sizeof(void *));
    for (int t = 0; t < sh->n_in; t++)
        ok = ok && (r->hin[t] = host_alloc(sh->in[t].bytes)) != NULL;
    for (int t = 0; t < sh->n_out; t++)
        ok = ok && (r->hgot[t] = host_alloc(sh->out[t].bytes)) != NULL;
    for (int k = 0; k < r->K; k++)
        for (int t = 0; t < sh->n_out; t++)
            ok = ok && (r->href[k * sh->n_out + t] = host_alloc(sh->out[t].bytes)) != NULL;
    r->hchk = host_alloc(sh->in[max_in].bytes);
    return ok && r->hchk ? 0 : -1;
}

static void free_run(run *r)
{
    const hx_shape *sh = r->sh;
    for (int i = 0; r->din && i < r->K * sh->n_in; i++)
        if (r->din[i])
            r->be->release(r->din[i]);
    for (int i = 0; r->dout && i < r->K * sh->n_out; i++)
        if (r->dout[i])
            r->be->release(r->dout[i]);
    for (int t = 0; r->tmp && t < sh->n_in; t++)
        if (r->tmp[t])
            r->be->release(r->tmp[t]);
    for (int t = 0; r->hin && t < sh->n_in; t++)
        free(r->hin[t]);
    for (int t = 0; r->hgot && t < sh->n_out; t++)
        free(r->hgot[t]);
    for (int i = 0; r->href && i < r->K * sh->n_out; i++)
        free(r->href[i]);
    free(r->din);
    free(r->dout);
    free(r->tmp);
    free(r->hin);
    free(r->hgot);
    free(r->href);
    free(r->hchk);
    free(r->tin);
    free(r->tout);
}

static void describe(aka_tensor *d, const hx_tensor *t)
{
    memset(d, 0, sizeof(*d));
    memcpy(d->shape, t->shape, sizeof(d->shape));
    d->ndim = t->ndim;
    d->dtype = t->dtype;
    d->name = t->name;
}

static int setup_run(run *r)
{
    const hx_shape *sh = r->sh;
    int max_in;
    size_t ws = shape_bytes(sh, &max_in);
    r->K = choose_copies(r->plan, r->be, ws);
    r->tin = calloc((size_t)sh->n_in, sizeof(aka_tensor));
    r->tout = calloc((size_t)sh->n_out, sizeof(aka_tensor));
    for (int t = 0; t < sh->n_in; t++)
        describe(&r->tin[t], &sh->in[t]);
    for (int t = 0; t < sh->n_out; t++)
        describe(&r->tout[t], &sh->out[t]);
    r->params.abi_version = AKA_NATIVE_ABI_VERSION;
    r->params.shape_id = sh->id;
    r->params.dims = sh->dims;
    r->params.n_dims = sh->n_dims;
    r->params.params = sh->params;
    r->params.n_params = sh->n_params;
    r->params.stream = r->be->stream;
    return alloc_host(r, max_in) < 0 || alloc_target(r) < 0 ? -1 : 0;
}

static void use_slot(run *r, int s)
{
    for (int t = 0; t < r->sh->n_in; t++)
        r->tin[t].data = r->din[s * r->sh->n_in + t];
    for (int t = 0; t < r->sh->n_out; t++)
        r->tout[t].data = r->dout[s * r->sh->n_out + t];
}

static void poison_slot(run *r, int s)
{
    for (int t = 0; t < r->sh->n_out; t++)
        r->be->fill_byte(r->dout[s * r->sh->n_out + t], hx_poison_byte(r->sh->out[t].dtype),
                         r->sh->out[t].bytes);
}

/* Move every input content one slot down: slot s gets slot s+1's bytes. */
static void rotate(run *r)
{
    const hx_shape *sh = r->sh;
    for (int t = 0; t < sh->n_in; t++) {
        size_t b = sh->in[t].bytes;
        r->be->copy(r->tmp[t], r->din[t], b);
        for (int s = 0; s + 1 < r->K; s++)
            r->be->copy(r->din[s * sh->n_in + t], r->din[(s + 1) * sh->n_in + t], b);
        r->be->copy(r->din[(r->K - 1) * sh->n_in + t], r->tmp[t], b);
    }
    r->offset = (r->offset + 1) % r->K;
}

static void download_outputs(run *r, void **dst)
{
    for (int t = 0; t < r->sh->n_out; t++)
        r->be->download(dst[t], r->tout[t].data, r->sh->out[t].bytes);
}

/* ---- outcomes of one call ---- */

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

/* Why a call failed, into msg; returns 1 when the failure ends the evaluation. */
static int call_failure(const run *r, int rc, const char *who, char *msg, size_t n)
{
    const char *dev = r->be->last_error ? r->be->last_error() : NULL;
    if (rc == HX_CRASHED) {
        int sig = hx_last_signal();
        snprintf(msg, n, "%s crashed with signal %d (%s)", who, sig, strsignal(sig));
        return 1;
    }
    if (rc == HX_DEVICE_ERROR) {
        snprintf(msg, n, "%s left a device error: %s", who, dev ? dev : "unknown");
        return 1;
    }
    if (rc == HX_OFF_STREAM) {
        snprintf(msg, n, "%s left work outside params->stream: %s", who, dev ? dev : "unknown");
        return 0;
    }
    snprintf(msg, n, "%s returned %d (%s)", who, rc, status_name(rc));
    return 0;
}

/* The reference failing is the operator's bug, never the candidate's: exit code 3. */
static void reference_failed(run *r, int rc)
{
    char msg[HX_MSG];
    call_failure(r, rc, "the reference", msg, sizeof(msg));
    add_failure(r->a, r->sh->id, "reference",
                "%s; the operator's reference must succeed on "
                "every shape",
                msg);
    r->a->reference_failed = r->a->fatal = 1;
    r->a->fatal_shape = r->sh->id;
}

static void candidate_failed(run *r, int rc, const char *when)
{
    char msg[HX_MSG];
    if (call_failure(r, rc, "the kernel", msg, sizeof(msg))) {
        r->a->fatal = 1;
        r->a->fatal_shape = r->sh->id;
    }
    add_failure(r->a, r->sh->id, "candidate_runtime", "%s: %s", when, msg);
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

/* Compare the downloaded outputs with reference outputs `want`; 0 when all match. */
static int check_outputs(run *r, void **want, const char *when)
{
    int bad = 0;
    for (int t = 0; t < r->sh->n_out; t++) {
        hx_cmp c;
        char text[HX_MSG];
        hx_compare(r->hgot[t], want[t], &r->sh->out[t], &c);
        r->a->compared = 1;
        r->a->max_abs = fmax(r->a->max_abs, c.max_abs);
        r->a->max_rel = fmax(r->a->max_rel, c.max_rel);
        if (c.bad == 0 || bad++)
            continue; /* one failure line per case: the first bad tensor */
        mismatch_text(&r->sh->out[t], &c, text, sizeof(text));
        add_failure(r->a, r->sh->id, NULL, "%s: %s", when, text);
    }
    return bad;
}

/* The candidate must leave its inputs exactly as it got them. */
static int check_inputs(run *r, const char *when)
{
    for (int t = 0; t < r->sh->n_in; t++) {
        const hx_tensor *in = &r->sh->in[t];
        size_t sz = hx_dtype_size(in->dtype);
        r->be->download(r->hchk, r->tin[t].data, in->bytes);
        if (memcmp(r->hchk, r->hin[t], in->bytes) == 0)
            continue;
        size_t i = 0;
        while (((unsigned char *)r->hchk)[i] == ((unsigned char *)r->hin[t])[i])
            i++;
        char at[160];
        hx_coords(in, (int64_t)(i / sz), at, sizeof(at));
        add_failure(r->a, r->sh->id, NULL,
                    "%s: the kernel modified input '%s' (first at %s); "
                    "inputs are read-only",
                    when, in->name, at);
        return 1;
    }
    return 0;
}

static void progress(const char *phase, const run *r, long long seed)
{
    hx_log("phase=%s shape=%s seed=%lld", phase, r->sh->id, seed);
}

/* ---- correctness ---- */

static void load_inputs(run *r, int slot, uint64_t seed, uint32_t copy)
{
    for (int t = 0; t < r->sh->n_in; t++) {
        hx_fill(r->hin[t], &r->sh->in[t], seed, r->sh->id, copy);
        r->be->upload(r->din[slot * r->sh->n_in + t], r->hin[t], r->sh->in[t].bytes);
    }
}

static void mark_candidate_start(void)
{
    if (!g_candidate_started) {
        fprintf(stderr, "%s\n", HX_CANDIDATE_MARK);
        fflush(stderr);
    }
    g_candidate_started = 1;
}

/* One (shape, seed) case; 0 when it passed. */
static int correctness(run *r, hx_entry reference, hx_entry candidate, int j)
{
    long long seed = (long long)r->plan->seeds[j];
    char when[64];
    double us;
    int rc;

    snprintf(when, sizeof(when), "seed %lld", seed);
    load_inputs(r, 0, (uint64_t)seed, 0);
    use_slot(r, 0);
    progress("reference", r, seed);
    poison_slot(r, 0);
    if ((rc = r->be->call(reference, r->tin, r->sh->n_in, r->tout, r->sh->n_out, &r->params,
                          &us)) != 0) {
        reference_failed(r, rc);
        return 1;
    }
    download_outputs(r, r->href); /* content 0's slot of href; timing rewrites it */
    progress("candidate", r, seed);
    mark_candidate_start();
    poison_slot(r, 0);
    if ((rc = r->be->call(candidate, r->tin, r->sh->n_in, r->tout, r->sh->n_out, &r->params,
                          &us)) != 0) {
        candidate_failed(r, rc, when);
        return 1;
    }
    download_outputs(r, r->hgot);
    return check_outputs(r, r->href, when) || check_inputs(r, when) ? 1 : 0;
}

/* ---- timing ---- */

enum { SAVE_REFERENCE, VERIFY_CANDIDATE };

/* Start of a round: move the input contents, poison all outputs. Rotating before the
 * first round too means no round ever sees the address→content map of the one before
 * it, even across the correctness call and the reference's schedule. */
static void new_round(run *r)
{
    if (r->K > 1)
        rotate(r);
    for (int k = 0; k < r->K; k++)
        poison_slot(r, k);
}

/* After run i on slot s: keep (reference) or check (candidate) its outputs. */
static int after_run(run *r, int mode, int i, int s)
{
    int c = (s + r->offset) % r->K, n = r->plan->warmup + r->plan->reps;
    char when[160];
    if (mode == SAVE_REFERENCE) {
        if (i < r->K)
            download_outputs(r, r->href + c * r->sh->n_out);
        return 0;
    }
    download_outputs(r, r->hgot);
    snprintf(when, sizeof(when),
             "timing run %d of %d (input copy %d; outputs must be computed from the inputs of "
             "every call)",
             i + 1, n, c);
    return check_outputs(r, r->href + c * r->sh->n_out, when);
}

/* Warm-up + timed runs of fn on the rotating slots; samples get the timed µs. */
static int schedule(run *r, hx_entry fn, int mode, double *samples)
{
    int n = r->plan->warmup + r->plan->reps, rc;
    double us;
    for (int i = 0; i < n; i++) {
        int s = i % r->K;
        if (s == 0)
            new_round(r);
        use_slot(r, s);
        if (r->be->before_timed)
            r->be->before_timed();
        rc = r->be->call(fn, r->tin, r->sh->n_in, r->tout, r->sh->n_out, &r->params, &us);
        if (rc != 0 && mode == SAVE_REFERENCE) {
            reference_failed(r, rc);
            return 1;
        }
        if (rc != 0) {
            candidate_failed(r, rc, "timing");
            return 1;
        }
        if (after_run(r, mode, i, s))
            return 1;
        if (i >= r->plan->warmup)
            samples[i - r->plan->warmup] = us;
    }
    return 0;
}

/* Time reference then candidate on the first seed; 0 when the candidate stayed correct. */
static int timing(run *r, hx_entry reference, hx_entry candidate)
{
    int reps = r->plan->reps, rc = 1;
    double *ref = calloc((size_t)reps, sizeof(double)),
           *cand = calloc((size_t)reps, sizeof(double));
    const char *id = r->sh->id;

    for (int k = 0; k < r->K; k++)
        load_inputs(r, k, (uint64_t)r->plan->seeds[0], (uint32_t)k);
    r->offset = 0;
    progress("reference-timing", r, (long long)r->plan->seeds[0]);
    if (schedule(r, reference, SAVE_REFERENCE, ref) == 0) {
        progress("candidate-timing", r, (long long)r->plan->seeds[0]);
        rc = schedule(r, candidate, VERIFY_CANDIDATE, cand);
    }
    if (rc == 0) {
        double m = fmax(hx_median(cand, reps), 1e-3), mr = fmax(hx_median(ref, reps), 1e-3);
        json_object_set_new(r->a->lat, id, json_real(m));
        json_object_set_new(r->a->ref_lat, id, json_real(mr));
        json_object_set_new(r->a->cv, id, json_real(hx_cv(cand, reps)));
    }
    json_object_set_new(r->a->copies, id, json_integer(r->K));
    free(ref);
    free(cand);
    return rc;
}

/* ---- the whole evaluation ---- */

static void evaluate_shape(const hx_plan *p, const hx_backend *be, acc *a, const hx_shape *sh,
                           hx_entry reference, hx_entry candidate)
{
    run r;
    int failed = 0;
    memset(&r, 0, sizeof(r));
    r.plan = p, r.sh = sh, r.be = be, r.a = a;
    if (setup_run(&r) < 0) {
        add_failure(a, sh->id, "harness", "out of memory for the shape's %d buffer copies", r.K);
        a->fatal = 1;
        a->fatal_shape = sh->id;
        a->env_failed = !g_candidate_started;
        free_run(&r);
        return;
    }
    for (int j = 0; j < p->n_seeds && !a->fatal; j++) {
        int bad = correctness(&r, reference, candidate, j);
        failed |= bad;
        a->passed += !bad;
    }
    if (!failed && !a->fatal && timing(&r, reference, candidate) != 0 && !a->reference_failed)
        a->passed--; /* the first seed's case failed while being timed */
    free_run(&r);
}

static void aggregates(const hx_plan *p, const acc *a, json_t *o)
{
    double sl = 0, sll = 0, ss = 0, sls = 0;
    int n = 0;
    for (int i = 0; i < p->n_shapes; i++) {
        json_t *c = json_object_get(a->lat, p->shapes[i].id);
        json_t *rf = json_object_get(a->ref_lat, p->shapes[i].id);
        if (!json_is_real(c) || !json_is_real(rf))
            break;
        double us = json_real_value(c), sp = json_real_value(rf) / us;
        sl += us, sll += log(us), ss += sp, sls += log(sp), n++;
    }
    int all = n == p->n_shapes; /* means over a subset of shapes would mislead: null instead */
    json_object_set_new(o, "latency_us_geomean", num_or_null(all ? exp(sll / n) : NAN));
    json_object_set_new(o, "latency_us_arith_mean", num_or_null(all ? sl / n : NAN));
    json_object_set_new(o, "speedup_vs_ref_geomean", num_or_null(all ? exp(sls / n) : NAN));
    json_object_set_new(o, "speedup_vs_ref_mean", num_or_null(all ? ss / n : NAN));
    json_object_set_new(o, "performance_score", num_or_null(all ? ss / n : NAN));
}

/* Every shape appears in the per-shape maps; unmeasured ones as null. */
static json_t *shape_map(const hx_plan *p, json_t *m)
{
    json_t *o = json_object();
    for (int i = 0; i < p->n_shapes; i++) {
        json_t *v = json_object_get(m, p->shapes[i].id);
        json_object_set_new(o, p->shapes[i].id, v ? json_incref(v) : json_null());
    }
    return o;
}

static json_t *result_json(const hx_plan *p, const hx_backend *be, acc *a)
{
    json_t *o = json_object(), *seeds = json_array();
    for (int i = 0; i < p->n_seeds; i++)
        json_array_append_new(seeds, json_integer(p->seeds[i]));
    int all_pass = a->passed == a->total && a->total > 0;
    json_object_set_new(o, "all_pass", json_boolean(all_pass));
    json_object_set_new(o, "total", json_integer(a->total));
    json_object_set_new(o, "passed", json_integer(a->passed));
    json_object_set(o, "failures", a->failures);
    json_object_set_new(o, "latency_us_by_shape", shape_map(p, a->lat));
    aggregates(p, a, o);
    json_object_set_new(o, "max_abs_err", num_or_null(a->compared ? a->max_abs : NAN));
    json_object_set_new(o, "max_rel_err", num_or_null(a->compared ? a->max_rel : NAN));
    json_object_set_new(o, "evaluator", json_string(be->evaluator));
    json_object_set_new(o, "eval_id", json_string(p->eval_id));
    json_object_set_new(o, "kernel_sha256", json_string(p->kernel_sha256));
    json_object_set_new(o, "seeds", seeds);
    json_object_set_new(o, "timing",
                        json_pack("{s:s, s:i, s:i, s:b, s:o}", "method", be->method, "warmup",
                                  p->warmup, "reps", p->reps, "l2_flush", be->l2_flush,
                                  "cv_by_shape", shape_map(p, a->cv)));
    json_object_set(o, "actionable_diagnostics", a->diags);
    json_object_set_new(o, "reference_latency_us_by_shape", shape_map(p, a->ref_lat));
    json_object_set_new(o, "input_copies_by_shape", shape_map(p, a->copies));
    json_object_set_new(o, "operator", json_string(p->op_name));
    return o;
}

static void emit(json_t *o)
{
    char *text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    hx_emit_result(text);
    free(text);
}

static int exit_code(const acc *a)
{
    if (a->reference_failed)
        return HX_EXIT_REFERENCE;
    if (a->env_failed)
        return HX_EXIT_ENV;
    return a->passed == a->total && a->total > 0 ? HX_EXIT_PASS : HX_EXIT_FAIL;
}

int hx_evaluate(const hx_plan *p, const hx_backend *be, hx_entry reference, hx_entry candidate)
{
    acc a;
    int i, rc;
    memset(&a, 0, sizeof(a));
    a.failures = json_array(), a.diags = json_array(), a.lat = json_object();
    a.cv = json_object(), a.ref_lat = json_object(), a.copies = json_object();
    a.total = (long long)p->n_shapes * p->n_seeds;
    for (i = 0; i < p->n_shapes && !a.fatal; i++)
        evaluate_shape(p, be, &a, &p->shapes[i], reference, candidate);
    for (; i < p->n_shapes; i++)
        add_failure(&a, p->shapes[i].id, NULL, "not run: the evaluation stopped at shape %s",
                    a.fatal_shape);
    json_t *o = result_json(p, be, &a);
    emit(o);
    rc = exit_code(&a);
    json_decref(o);
    json_decref(a.failures), json_decref(a.diags), json_decref(a.lat);
    json_decref(a.cv), json_decref(a.ref_lat), json_decref(a.copies);
    return rc;
}
