/*
 * harness_timing.c — the timed schedule, run the same way for the reference
 * runner and the candidate runner, and the cross-checks of the candidate's
 * timing against the reference's.
 *
 * Schedule, per shape: warm-up runs, then timed runs, on K slots (run r uses
 * slot r mod K, so consecutive runs never share an address). Every run gets
 * FRESH inputs from the evaluation's secret seed (getrandom, never written
 * anywhere a runner can read before its run), written while the runner sleeps,
 * and poisoned outputs, both written with stores that bypass the caches
 * (hx_stream_copy), so each run starts from memory as a kernel does in a real
 * program, and no run finds what the judge just wrote in the judge's cache. After
 * every run (on a device: every warm-up run and a secret sample of the timed runs,
 * choose_inputs_back) the inputs must be the judge's copy, bit for bit. A secret sample of the
 * timed runs (hx_job.check_of; every run when the outputs fit in 128 MiB) is checked against the
 * reference runner's outputs for the same inputs, which it computed in the reference phase. The
 * runner cannot tell a checked run from another.
 *
 * Latency: on the CPU, when the plan asks for "cpu_time" (single-threaded CPU kernels, the
 * native default), the CPU time the runner's process spent on the whole request beyond
 * what the pinger needed for the same handshake; else ("wall") the judge's own clock
 * around the call (go → done) plus that CPU time outside it (work moved out of the window
 * is charged, not only looked for); on a device the runner's CUDA events. Cross-checks
 * (hx_cross_check), each a failure named "timing tampered":
 *   - every timed run: the runner's own number must lie inside the judge's
 *     window around the call (it is measured inside it);
 *   - per shape, against the reference runner's distribution (phases[] below):
 *     the gap between the judge's window and the runner's number (a patched
 *     clock, events that do not cover the work); the runner's CPU time per
 *     call beyond the window (work moved before the call, after it, or between
 *     calls: the kernel's accounting sees it wherever it runs); on a device the
 *     PREP and FETCH requests (work hidden in the copies).
 * Reference and candidate go through the same code, the same requests and the
 * same waits, so an honest kernel sees the reference's distribution. Runs in
 * which the judge itself was preempted (it may have seen "done" late) are left
 * out of every statistic, the latency included.
 */
#define _GNU_SOURCE
#include "harness_core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HX_MSG   1536
#define SPREAD_K 4.0
/* A timed run counts as clean when the judge lost at most this much of its window to
 * preemption (us, or this fraction of the window); the statistics use clean runs only,
 * unless fewer than a quarter of the runs (and 3) are clean. */
#define HX_DISTURB_US  2.0
#define HX_DISTURB_REL 0.005
/* cpu_time: the quantile of a shape's timed runs that is its latency (shape_latency). */
#define HX_CPU_TIME_QUANTILE 0.1

/*
 * What is compared, per timed run:
 *   gap     CPU: the runner's CPU time over the whole request, less what the pinger
 *           needs for the same handshake (ping_now), minus the runner's own
 *           reported time (>= 0). An honest single-threaded call uses at most its wall
 *           time and the rest is the handshake, so this is about 0; a patched clock
 *           leaves out the call itself. Preemption of the runner cannot raise it (it
 *           adds wall time, not CPU time). Device: the judge's window minus the events.
 *   excess  the same CPU time, less the pinger's, minus the judge's window (>= 0): work
 *           moved before "ready", after a forged "done", or between calls.
 * Limits: the candidate's median over its clean runs must not exceed base + max(spread,
 * floor, rel x base) (on the CPU the floor is at least half the runner's CPU time on
 * the request: phase_limit says why): base the reference runner's median on the same shape, spread
 * SPREAD_K x (its p90 - median). For the CPU-time quantities, whose honest part (waking,
 * answering) does not depend on the shape, base is the 90th percentile of the reference's
 * runs over every shape and spread is base again: a loaded machine can disturb every run
 * of one shape and adds heavy tails, which a pooled upper decile and twice it absorb.
 * A shape that fails these limits is timed once more, fresh; it fails when both attempts
 * do, and its latency comes from the attempt that passed (harness_flow.c).
 */
/* What the result's timing.method says: the target's, "cupti_kernel_span" when the reference
 * runner timed by kernel span, or on the CPU "cpu_time". */
const char *hx_timing_method(const hx_eval *ev)
{
    if (ev->tg->device && ev->span)
        return "cupti_kernel_span";
    return !ev->tg->device && ev->plan->cpu_time ? "cpu_time" : ev->tg->method;
}

static const struct {
    const char *name, *what;
    double floor_cpu, floor_dev, rel, rel_call_cpu;
    int pooled_cpu, pooled_dev;
} phases[HX_PH_N] = {
    [HX_PH_GAP] = {"gap", "the runner's own clock missed part of each call", 100, 20, 0, 0.5, 1, 0},
    [HX_PH_EXCESS] = {"excess_cpu",
                      "the kernel's process used more CPU time per call than the judge's window "
                      "around it (work moved before or after the timed call)",
                      100, 30, 0, 0.5, 1, 1},
    [HX_PH_PREP] = {"prep",
                    "the request before each timed call (inputs to the device, poison, L2 flush) "
                    "took longer than the reference's",
                    0, 50, 0.25, 0, 0, 0},
    [HX_PH_FETCH] = {"fetch",
                     "the request after each timed call (outputs back from the device) took longer "
                     "than the reference's",
                     0, 50, 0.25, 0, 0, 0},
};

static int pooled(const hx_eval *ev, int ph)
{
    return ev->tg->device ? phases[ph].pooled_dev : phases[ph].pooled_cpu;
}

int hx_timed_alloc(hx_timed *t, int reps)
{
    double **all[] = {&t->latency, &t->reported, &t->window, &t->cpu,
                      &t->ph[0],   &t->ph[1],    &t->ph[2],  &t->ph[3]};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (!(*all[i] = calloc((size_t)reps, sizeof(double))))
            return -1;
    return (t->clean = calloc((size_t)reps, sizeof(int))) ? 0 : -1;
}

void hx_timed_free(hx_timed *t)
{
    free(t->latency);
    free(t->reported);
    free(t->window);
    free(t->cpu);
    for (int i = 0; i < HX_PH_N; i++)
        free(t->ph[i]);
    free(t->clean);
    memset(t, 0, sizeof(*t));
}

/*
 * A run's latency with "cpu_time": the runner process's CPU time from go to done (every
 * thread; read with the runner asleep at both ends, judge_runner.c), less the pinger's
 * for the same empty handshake (waking on go, answering done, falling asleep), but never
 * below the runner's own figure (which can only make it slower, and keeps its resolution
 * where the two CPU readings' difference is noise); plus what the runner used outside
 * the window beyond the pinger's own outside (work moved before ready or after done is
 * charged, as with wall). The kernel's accounting, read by the judge: preemption by
 * other tasks on a shared host adds wall time, not CPU time. The pinger's noise enters
 * the second term clamped at 0, not as a signed error on the whole run.
 */
static double cpu_time_latency(const hx_call *c, double rep)
{
    double inside = fmax(rep, c->cpu_window_us - c->ping_window_us);
    double outside = (c->cpu_us - c->cpu_window_us) - (c->ping_us - c->ping_window_us);
    return inside + fmax(0, outside);
}

static void record(hx_eval *ev, hx_timed *tm, int k, const hx_call *c, double prep, double fetch)
{
    double rep = isfinite(c->reported_us) ? c->reported_us : -1;
    tm->window[k] = c->window_us;
    tm->clean[k] =
        !c->woke_judge && c->disturbed_us <= fmax(HX_DISTURB_US, HX_DISTURB_REL * c->window_us);
    tm->reported[k] = rep;
    /* What the pinger needs for the same handshake (ping_now) is not the kernel's. */
    double over = c->cpu_us - c->ping_us;
    tm->cpu[k] = over;
    tm->ph[HX_PH_GAP][k] = ev->tg->device ? c->window_us - rep : fmax(0, over - rep);
    /* Negative only when the runner was preempted inside the window, which hides nothing:
     * clamped, so a loaded machine's preemptions do not drag the reference's baseline down. */
    tm->ph[HX_PH_EXCESS][k] = fmax(0, over - c->window_us);
    /* CPU, wall: the run is charged its excess too. Work moved out of the window then buys
     * nothing, whatever the threshold of the check, and an honest runner pays only the
     * handshake noise the pinger did not see, as the reference's runner does.
     * CPU, cpu_time: cpu_time_latency(). */
    if (ev->tg->device)
        tm->latency[k] = rep;
    else if (ev->plan->cpu_time)
        tm->latency[k] = cpu_time_latency(c, rep);
    else
        tm->latency[k] = c->window_us + tm->ph[HX_PH_EXCESS][k];
    tm->ph[HX_PH_PREP][k] = prep;
    tm->ph[HX_PH_FETCH][k] = fetch;
}

static void run_name(const hx_job *j, int r, char *out, size_t n)
{
    if (r < j->warmup)
        snprintf(out, n, "warm-up run %d of %d", r + 1, j->warmup);
    else
        snprintf(out, n, "timed run %d of %d", r - j->warmup + 1, j->reps);
}

/* After run r on slot s: inputs, then (checked runs) the outputs. 0 when fine. */
static int after_run(hx_eval *ev, hx_job *j, int r, int s)
{
    const hx_shape *sh = j->sh;
    char msg[HX_MSG], what[64];
    int ci = j->check_of[r];
    run_name(j, r, what, sizeof(what));
    if (ev->candidate && j->inputs_back[r] && hx_check_inputs(ev, j, s, msg, sizeof(msg))) {
        hx_fail(&ev->a, sh->id, NULL,
                "inputs modified during a %s (shape %s, %s): %s; inputs are read-only",
                r < j->warmup ? "warm-up run" : "timed run", sh->id, what, msg);
        return 1;
    }
    if (ci < 0)
        return 0;
    void **want = j->ref_timed + ci * sh->n_out;
    if (!ev->candidate) {
        for (int t = 0; t < sh->n_out; t++)
            memcpy(want[t], ev->run.base + j->out_off[s * sh->n_out + t], sh->out[t].bytes);
        return 0;
    }
    if (hx_check_outputs(ev, j, s, want, msg, sizeof(msg))) {
        hx_fail(&ev->a, sh->id, NULL, "output of a timed run is wrong (shape %s, %s): %s", sh->id,
                what, msg);
        return 1;
    }
    return 0;
}

/* Fresh inputs for run r and poisoned outputs in slot s (written past every cache); the
 * judge keeps its own copy of the inputs only where it compares them after the run. On a
 * device the runner generates the float32 ones in place (hx_gen_slot). */
static void prepare(hx_eval *ev, hx_job *j, int r, int s)
{
    int keep = ev->candidate && j->inputs_back[r];
    if (ev->tg->device)
        hx_gen_slot(ev, j, s, 1 + (uint32_t)r, keep);
    else
        hx_load_slot(ev, j, s, ev->secret, 1 + (uint32_t)r, 1, keep);
    hx_poison_slot(ev, j, s);
}

/* Where one schedule's wall time went, for `aka eval -v` (a slow evaluation names its
 * cost: the judge's preparation, the runner's round trips, the judge's checks). */
typedef struct schedule_cost {
    double prepare_us, runner_us, checks_us;
    int inputs_back;
} schedule_cost;

static void log_cost(const hx_eval *ev, const hx_job *j, const schedule_cost *c)
{
    hx_log("schedule shape=%s %s: %d runs, prepare %.0f ms, runner %.0f ms, checks %.0f ms "
           "(%d with inputs compared; fills and compares on up to %d of %d CPUs)",
           j->sh->id, ev->candidate ? "candidate" : "reference", j->warmup + j->reps,
           c->prepare_us * 1e-3, c->runner_us * 1e-3, c->checks_us * 1e-3, c->inputs_back,
           hx_fill_threads_used(), hx_cpus());
}

/*
 * The pinger's cost for the handshake, subtracted from every run: the median of its last
 * PING_RECENT answers (warm-up runs' included), its window and its outside separately.
 * One ping carries its own noise, always upward (an interrupt or a cold CPU's wake-up
 * charged to the pinger); subtracted run by run and then read at a low quantile
 * (HX_CPU_TIME_QUANTILE), it selected the runs whose ping was noisiest, and every runner
 * was under-charged by that tail (CI, 2026-12-06: 60 us of work after a forged "done"
 * charged 27 us). The median of the recent pings still follows the machine's state.
 */
#define PING_RECENT 9
typedef struct {
    double window[PING_RECENT], outside[PING_RECENT];
    int n;
} ping_recent;

static void ping_now(hx_eval *ev, ping_recent *p, double *us_out, double *window_out)
{
    double window, us = hx_ping(ev, &window);
    if (us > 0) { /* 0: no pinger, or it did not answer this once */
        p->window[p->n % PING_RECENT] = window;
        p->outside[p->n % PING_RECENT] = fmax(0, us - window);
        p->n++;
    }
    int n = p->n < PING_RECENT ? p->n : PING_RECENT;
    *window_out = n ? hx_quantile(p->window, n, 0.5) : 0;
    *us_out = n ? *window_out + hx_quantile(p->outside, n, 0.5) : 0;
}

int hx_schedule(hx_eval *ev, hx_job *j)
{
    ping_recent pings = {.n = 0};
    int n = j->warmup + j->reps;
    hx_timed *tm = ev->candidate ? &j->cand : &j->ref;
    schedule_cost cost = {0};
    for (int r = 0; r < n; r++) {
        int s = r % j->K, rc;
        double prep = 0, fetch = 0, t0 = hx_now_us(), t1, t2;
        char msg[HX_MSG], what[64];
        hx_call c;
        prepare(ev, j, r, s);
        double ping, ping_window;
        ping_now(ev, &pings, &ping, &ping_window);
        t1 = hx_now_us();
        if ((rc = hx_run_slot(ev, s, j->inputs_back[r], &c, &prep, &fetch, msg, sizeof(msg))) !=
            0) {
            run_name(j, r, what, sizeof(what));
            if (!ev->candidate)
                hx_reference_failed(ev, j->sh, "%s: %s", what, msg);
            else
                hx_fail(&ev->a, j->sh->id, "candidate_runtime", "%s: %s", what, msg);
            return rc;
        }
        t2 = hx_now_us();
        if (after_run(ev, j, r, s) != 0)
            return 1;
        cost.prepare_us += t1 - t0, cost.runner_us += t2 - t1, cost.checks_us += hx_now_us() - t2;
        cost.inputs_back += ev->candidate && j->inputs_back[r];
        c.ping_us = ping;
        c.ping_window_us = ping_window;
        if (r >= j->warmup)
            record(ev, tm, r - j->warmup, &c, prep, fetch);
    }
    log_cost(ev, j, &cost);
    return 0;
}

/* ---- cross-checks ---- */

/* The clean samples of v (all of them when too few are clean); returns how many. */
static int pick(const hx_timed *t, const double *v, int reps, double *out)
{
    int n = 0;
    for (int k = 0; k < reps; k++)
        if (t->clean[k])
            out[n++] = v[k];
    if (n >= 3 && n >= reps / 4)
        return n;
    memcpy(out, v, (size_t)reps * sizeof(double));
    return reps;
}

static double picked_quantile(const hx_timed *t, const double *v, int reps, double q, double *buf)
{
    int n = pick(t, v, reps, buf);
    return hx_quantile(buf, n, q);
}

/*
 * The reference's baseline for phase ph (*base) and the candidate's limit.
 *
 * rel_call_cpu: on the CPU no number the verdict uses depends on these checks: the
 * latency is the judge's own window plus the run's excess CPU time (record()), so a runner
 * clock that misses part of a call, or work moved out of the window, buys nothing. The
 * checks name a runner that tampers. What an honest runner's CPU time adds around a call
 * (waking, page faults, the handshake the pinger did not see) grows with the machine's
 * load, so on the CPU the limit is wide: at least 100 us (a 2-core VM under a parallel
 * test suite showed honest medians of 20-50 us) and at least half the runner's own CPU
 * time on the request: its clock saw less than half of what it ran, or the judge's window
 * held less than half of it. Half of the CPU time, not of the window: a preempted runner's
 * window grows while its CPU time does not, and at load 10 a patched clock hiding 99% of
 * a 3 ms call was seen with a gap of only half its window.
 */
static double phase_limit(const hx_eval *ev, int ph, const hx_job *j, double *buf, double *base)
{
    double floor_us = ev->tg->device ? phases[ph].floor_dev : phases[ph].floor_cpu, spread = 0;
    if (!ev->tg->device && phases[ph].rel_call_cpu > 0)
        floor_us = fmax(floor_us, phases[ph].rel_call_cpu *
                                      picked_quantile(&j->cand, j->cand.cpu, j->reps, 0.5, buf));
    if (pooled(ev, ph) && ev->n_pool[ph] > 0) {
        *base = hx_quantile(ev->pool[ph], ev->n_pool[ph], 0.9);
        spread = *base; /* honest CPU overhead is heavy-tailed on a loaded machine */
    } else {
        int n = pick(&j->ref, j->ref.ph[ph], j->reps, buf);
        *base = hx_median(buf, n);
        spread = SPREAD_K * (hx_quantile(buf, n, 0.9) - *base);
    }
    return *base + fmax(spread, fmax(floor_us, phases[ph].rel * *base));
}

/* The reference's runs of a shape join the pools the cross-checks use over every shape. */
void hx_pool_reference(hx_eval *ev, const hx_job *j)
{
    int reps = j->reps;
    for (int ph = 0; ph < HX_PH_N; ph++) {
        double *grown =
            pooled(ev, ph) ? realloc(ev->pool[ph], (size_t)(ev->n_pool[ph] + reps) * sizeof(double))
                           : NULL;
        if (!grown)
            continue;
        ev->pool[ph] = grown;
        for (int k = 0; k < reps; k++)
            ev->pool[ph][ev->n_pool[ph]++] = j->ref.ph[ph][k];
    }
}

/* The runner's own number must lie inside the judge's window: it was taken inside it. */
static int check_runs(hx_eval *ev, hx_job *j, int report)
{
    const hx_timed *c = &j->cand;
    for (int k = 0; k < j->reps; k++) {
        double slack = fmax(1.0, 1e-3 * c->window[k]);
        if (c->reported[k] >= 0 && c->reported[k] <= c->window[k] + slack)
            continue;
        if (report)
            hx_fail(&ev->a, j->sh->id, NULL,
                    "timing tampered: timed run %d of %d: the runner reported %.3f us, but the "
                    "judge's clock saw %.3f us around the whole call",
                    k + 1, j->reps, c->reported[k], c->window[k]);
        return 1;
    }
    return 0;
}

static int count_clean(const hx_timed *t, int reps)
{
    int n = 0;
    for (int k = 0; k < reps; k++)
        n += t->clean[k];
    return n;
}

/*
 * A shape's latency from its timed runs. Wall clock: the median of the clean runs. CPU
 * time: other tasks on a shared host only ever add to a run's CPU time (they evict its
 * caches, share its core's pipeline and memory), never take from it, so a low quantile
 * is the kernel's own cost and the upper ones are the neighbours'; on the 2-vCPU
 * development VM the 10th percentile of 25 runs moved by about 1% from batch to batch
 * where the median moved by 30%. It is used only when every timed run's output was
 * checked: otherwise a kernel that skipped its work on a few unchecked runs would set it.
 * The judge's own preemption does not touch a CPU time, so every run counts.
 */
static double shape_latency(const hx_eval *ev, const hx_job *j, const hx_timed *t, double *buf)
{
    int reps = j->reps;
    if (ev->tg->device || !ev->plan->cpu_time)
        return picked_quantile(t, t->latency, reps, 0.5, buf);
    return hx_quantile(t->latency, reps, j->n_checked >= reps ? HX_CPU_TIME_QUANTILE : 0.5);
}

/* The candidate's timing against the reference's; the shape's numbers into the result. */
int hx_cross_check(hx_eval *ev, hx_job *j, int report)
{
    const char *id = j->sh->id;
    int reps = j->reps, bad = check_runs(ev, j, report), n;
    double *buf = malloc((size_t)reps * sizeof(double));
    json_t *o =
        json_pack("{s:i, s:i, s:i}", "attempts", report ? 2 : 1, "clean_runs",
                  count_clean(&j->cand, reps), "reference_clean_runs", count_clean(&j->ref, reps));
    if (!buf) {
        json_decref(o);
        return 1;
    }
    for (int ph = 0; ph < HX_PH_N; ph++) {
        if (!ev->tg->device && (ph == HX_PH_PREP || ph == HX_PH_FETCH))
            continue;
        double ref, got = picked_quantile(&j->cand, j->cand.ph[ph], reps, 0.5, buf);
        double lim = phase_limit(ev, ph, j, buf, &ref);
        const char *base = pooled(ev, ph) ? "90th percentile over every shape" : "median";
        json_object_set_new(o, phases[ph].name,
                            json_pack("{s:f, s:f, s:f}", "candidate_median_us", got, "reference_us",
                                      ref, "limit_us", lim));
        if (got <= lim || bad++ || !report)
            continue;
        hx_fail(&ev->a, id, NULL,
                "timing tampered: %s (median %.1f us over %d timed runs, measured twice; the "
                "reference's runner through the same path: %s %.1f us; limit %.1f us)",
                phases[ph].what, got, reps, base, ref, lim);
    }
    json_object_set_new(ev->a.cross, id, o);
    json_object_set_new(ev->a.checked, id, json_integer(j->n_checked));
    json_object_set_new(ev->a.runner_lat, id,
                        json_real(picked_quantile(&j->cand, j->cand.reported, reps, 0.5, buf)));
    if (!bad) {
        double lat = shape_latency(ev, j, &j->cand, buf), ref = shape_latency(ev, j, &j->ref, buf);
        n = pick(&j->cand, j->cand.latency, reps, buf);
        json_object_set_new(
            o, "latency_statistic",
            json_string(ev->plan->cpu_time && !ev->tg->device && j->n_checked >= reps
                            ? "p10 of every timed run's CPU time"
                            : "median"));
        json_object_set_new(ev->a.lat, id, json_real(fmax(lat, 1e-3)));
        json_object_set_new(ev->a.ref_lat, id, json_real(fmax(ref, 1e-3)));
        json_object_set_new(ev->a.cv, id, json_real(hx_cv(buf, n)));
    }
    free(buf);
    return bad ? 1 : 0;
}
