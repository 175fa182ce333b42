/*
 * episode_verify.c — does the candidate beat the incumbent? (DESIGN §5)
 *
 *   fast        the agent must have left a passing `aka eval` record in the
 *               worktree's evaluations.jsonl whose kernel_sha256 is the hash
 *               of the committed candidate kernel (upstream's evidence rule);
 *               then the supervisor evaluates those committed bytes once
 *               itself (the agent could have written the record) and that
 *               result must beat the committed incumbent record (HEAD's blob,
 *               never the working copy) by score and by its own latency:
 *               turnaround over statistical rigour;
 *   full, goal  same-allocation ABBA: the supervisor itself evaluates the
 *               incumbent and candidate kernel bytes (taken from their
 *               commits, never from the worktree) I C C I per repeat, every
 *               run must pass, and aka_verify_abba decides.
 *
 * Either way every number behind the decision lands in ep->verification, the
 * memory record's "verification" object, and a candidate that is not proven
 * faster is rejected (fail closed).
 */
#include "base/fs.h"
#include "base/json.h"
#include "base/sha256.h"
#include "evaluator/evaluator.h"
#include "optimize/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* json_object_update that consumes the reference to src. */
static void merge(json_t *dst, json_t *src)
{
    json_object_update(dst, src);
    json_decref(src);
}

static void reject(struct aka_episode *ep, const char *why)
{
    ep->status = AKA_MEM_REJECTED;
    snprintf(ep->violation, sizeof(ep->violation), "%s", why);
}

static int candidate_blob(struct aka_run *r, const struct aka_episode *ep, const char *rev,
                          struct strbuf *out, struct aka_err *err)
{
    struct aka_git g;
    aka_git_open(&g, r->ws.buf); /* the episode branch is in the workspace's object store */
    int rc = aka_git_show_blob(&g, rev, r->camp.kernel, out, err);
    aka_git_close(&g);
    return rc;
}

/* ---- fast --------------------------------------------------------------------------------- */

struct fast_scan {
    const char *sha;
    json_t *best; /* newest matching result object (borrowed reference kept alive) */
};

static bool complete_pass(json_t *res)
{
    struct aka_result r;
    struct aka_err ignored = AKA_ERR_INIT;
    if (aka_result_from_json("evaluations.jsonl", res, &r, &ignored) < 0)
        return false;
    bool ok = r.all_pass && r.latency_us_by_shape.n > 0 && aka_measured(r.latency_us_geomean);
    for (size_t i = 0; ok && i < r.latency_us_by_shape.n; i++)
        ok = aka_measured(r.latency_us_by_shape.v[i].value);
    aka_result_release(&r);
    return ok;
}

/*
 * The record measured exactly the committed bytes on every shape: no --tune
 * knobs (those compile different code from the same file, so a fast knob run
 * must not vouch for a slow committed default) and no --shape-id subset.
 */
static bool measured_as_committed(json_t *obj)
{
    json_t *tune = json_object_get(obj, "tune"), *shapes = json_object_get(obj, "shape_ids");
    return (!tune || (json_is_object(tune) && json_object_size(tune) == 0)) &&
           (!shapes || (json_is_array(shapes) && json_array_size(shapes) == 0));
}

static int scan_line(json_t *obj, size_t lineno, void *data, struct aka_err *err)
{
    (void)lineno;
    (void)err;
    struct fast_scan *s = data;
    json_t *res = json_object_get(obj, "result");
    const char *sha = json_string_value(json_object_get(obj, "kernel_sha256"));
    if (sha && strcmp(sha, s->sha) == 0 && json_is_true(json_object_get(obj, "all_pass")) &&
        measured_as_committed(obj) && json_is_object(res) && complete_pass(res)) {
        json_decref(s->best);
        s->best = json_incref(res); /* later lines are newer */
    }
    return 0;
}

int aka_supervisor_request(struct aka_run *r, const struct aka_optimize_opts *o, const char *kernel,
                           struct aka_eval_request *req, struct strbuf *op_dir, struct aka_err *err)
{
    /* The operator snapshot and the pinned asset tree, re-verified before every job. */
    if (aka_ws_eval_inputs(r->ws.buf, r->env.repo_root, op_dir, err) < 0)
        return -1;
    *req = (struct aka_eval_request){
        .op_dir = op_dir->buf,
        .kernel = kernel,
        .framework = r->camp.framework,
        .platform = r->camp.platform,
        .cuda_arch = r->camp.cuda_arch,
        .repo_root = r->env.repo_root,
        .multi_seed = 1,
        .timed_runs = -1,
        .warmup = -1,
        .timeout_s = o->verify_run_timeout,
        .production_score = aka_optimize_is_production(o),
        .generalized = r->camp.generalized,
    };
    return 0;
}

/* One evaluation run by the supervisor itself (fast re-run, ABBA runs). out must be
 * initialized; the caller releases it. */
static int supervisor_eval(struct aka_run *r, const struct aka_optimize_opts *o, const char *kernel,
                           struct aka_eval_outcome *out, struct aka_err *err)
{
    struct strbuf op_dir = STRBUF_INIT;
    struct aka_eval_request req;
    int rc = aka_supervisor_request(r, o, kernel, &req, &op_dir, err);
    if (rc == 0)
        rc = aka_evaluate(r->env.transport, &req, out, err);
    strbuf_release(&op_dir);
    return rc;
}

/* The kernel's own geomean latency change; "not measured" when either side lacks it. */
static double improvement_by_latency(const struct aka_result *c, const struct aka_memory_record *m,
                                     const char **basis)
{
    *basis = "latency_us_geomean";
    if (!aka_measured(c->latency_us_geomean) || !aka_measured(m->latency_us_geomean) ||
        !(m->latency_us_geomean > 0))
        return AKA_MISSING;
    return 100.0 * (m->latency_us_geomean - c->latency_us_geomean) / m->latency_us_geomean;
}

/* Score = mean over shapes of reference/candidate (DESIGN §5); latency when a score is missing. */
static double improvement(const struct aka_result *c, const struct aka_memory_record *m,
                          const char **basis)
{
    if (aka_measured(c->performance_score) && aka_measured(m->performance_score) &&
        m->performance_score > 0) {
        *basis = "performance_score";
        return 100.0 * (c->performance_score / m->performance_score - 1.0);
    }
    return improvement_by_latency(c, m, basis);
}

/* The candidate's result against the committed incumbent record (workspace/: one rule, read
 * from HEAD's blobs; an unreadable canonical record is an error, never a fallback). */
static int fast_decide(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_episode *ep,
                       const struct aka_result *c, const char *sha, struct aka_err *err)
{
    struct aka_memory_record m;
    const char *basis = "none";
    int found = aka_ws_incumbent(r->ws.buf, &m, NULL, err);
    if (found < 0)
        return -1;
    if (found > 0) {
        reject(ep, "fast verification: no complete passing canonical incumbent record");
        return 0;
    }
    long iv = m.version;
    /* Latencies of two timing methods are not comparable (a CUPTI kernel span leaves out
     * the ~3 us an event pair adds): a method that changed is a rejection, never a win. */
    if (!aka_verify_same_timing(m.timing_method, c->timing.method)) {
        char why[256];
        snprintf(why, sizeof(why),
                 "fast verification: the candidate was timed by %s and the incumbent v%ld by %s; "
                 "latencies of different timing methods are not compared",
                 c->timing.method, iv, m.timing_method);
        reject(ep, why);
        aka_memory_release(&m);
        return 0;
    }
    double pct = improvement(c, &m, &basis);
    merge(ep->verification,
          json_pack("{s:s, s:o, s:o, s:o, s:o, s:I}", "basis", basis, "candidate_latency_us",
                    num_or_null(c->latency_us_geomean), "incumbent_latency_us",
                    num_or_null(m.latency_us_geomean), "candidate_score",
                    num_or_null(c->performance_score), "incumbent_score",
                    num_or_null(m.performance_score), "incumbent_version", (json_int_t)iv));
    json_object_set_new(ep->verification, "improvement_pct", num_or_null(pct));
    /* The score is relative to the reference, which every run re-times: a noisy
     * reference can lift a score while the kernel itself got slower (seen on the
     * H200: rmsnorm +32% by score, 21% slower by geomean latency). So the kernel's
     * own latency must improve by the same margin too. */
    const char *lat_basis = NULL;
    double lat_pct = improvement_by_latency(c, &m, &lat_basis);
    json_object_set_new(ep->verification, "latency_improvement_pct", num_or_null(lat_pct));
    bool faster = pct > o->min_improvement_pct &&
                  (!aka_measured(lat_pct) || lat_pct > o->min_improvement_pct);
    if (!faster &&
        !aka_conversion_accepts(r, c->latency_us_geomean, m.latency_us_geomean, ep->verification)) {
        char why[256];
        if (!(pct > o->min_improvement_pct))
            snprintf(why, sizeof(why), "fast verification: %+.2f%% (%s) is not above %.2f%%", pct,
                     basis, o->min_improvement_pct);
        else
            snprintf(why, sizeof(why),
                     "fast verification: %+.2f%% by %s but %+.2f%% by %s, not above %.2f%%", pct,
                     basis, lat_pct, lat_basis, o->min_improvement_pct);
        reject(ep, why);
    } else {
        ep->promoted_doc = aka_memory_doc_from_result(
            ep->version, AKA_MEM_PROMOTED, c, ep->candidate, "fast_episode",
            "fast episode: the supervisor's evaluation beat the canonical incumbent");
        json_object_set_new(ep->verification, "kernel_sha256", json_string(sha));
    }
    aka_memory_release(&m);
    return 0;
}

/* The committed candidate's bytes at <episode>/verify/candidate/<kernel>. */
static int stage_candidate(struct aka_run *r, struct aka_episode *ep, const struct strbuf *blob,
                           struct strbuf *path, struct aka_err *err)
{
    strbuf_addf(path, "%s/verify/candidate", ep->dir.buf);
    int rc = aka_mkdir_p(path->buf, 0755, err);
    strbuf_addf(path, "/%s", r->camp.kernel);
    return rc < 0 ? -1 : aka_write_file_atomic(path->buf, blob->buf, blob->len, 0644, err);
}

/*
 * Fast verification. The agent's hash-matched record is required (it proves the
 * protocol was followed), but the agent runs on the host and could have written
 * that file itself: the numbers that decide are the supervisor's own evaluation
 * of the committed bytes, run here through the same sandbox.
 */
static int fast_rerun(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_episode *ep,
                      const struct strbuf *blob, const char *sha, struct aka_err *err)
{
    struct strbuf kernel = STRBUF_INIT;
    struct aka_eval_outcome out;
    aka_eval_outcome_init(&out);
    int rc = stage_candidate(r, ep, blob, &kernel, err);
    if (rc == 0)
        rc = supervisor_eval(r, o, kernel.buf, &out, err);
    if (rc == 0) {
        json_object_set_new(ep->verification, "supervisor_eval_id", json_string(out.eval_id));
        if (!out.result.all_pass || strcmp(out.kernel_sha256, sha) != 0)
            reject(ep, "fast verification: the supervisor's own evaluation of the committed "
                       "candidate did not pass");
        else
            rc = fast_decide(r, o, ep, &out.result, sha, err);
    }
    aka_eval_outcome_release(&out);
    strbuf_release(&kernel);
    return rc;
}

static int verify_fast(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_episode *ep,
                       struct aka_err *err)
{
    struct strbuf blob = STRBUF_INIT, path = STRBUF_INIT;
    char sha[AKA_SHA256_HEX_LEN + 1];
    struct fast_scan s = {.sha = sha};
    struct aka_err scan_err = AKA_ERR_INIT;
    int rc = candidate_blob(r, ep, ep->candidate, &blob, err);
    if (rc == 0) {
        aka_sha256_hex(blob.buf, blob.len, sha);
        aka_wt_path(&path, ep->worktree.buf, AKA_WT_EVALUATIONS);
        /* A garbled log is evidence we cannot trust: reject, never crash the campaign. */
        if (aka_is_file(path.buf) && aka_jsonl_foreach(path.buf, scan_line, &s, &scan_err) < 0)
            reject(ep, scan_err.msg);
        else if (!s.best)
            reject(ep, "fast verification: no complete passing `aka eval` record for the "
                       "committed candidate kernel (sha256 mismatch or failed evaluation)");
        else
            rc = fast_rerun(r, o, ep, &blob, sha, err);
    }
    json_decref(s.best);
    strbuf_release(&blob);
    strbuf_release(&path);
    return rc;
}

/* ---- ABBA --------------------------------------------------------------------------------- */

struct abba {
    struct strbuf kernel[2]; /* 0: incumbent, 1: candidate */
    double *lat;
    struct strvec shapes;
    json_t *runs;
    json_t *last_cand;       /* memory doc of the last candidate run */
    char first_failure[512]; /* why the first run that did not pass failed, "" if none did */
    char method[40];         /* the first run's timing method; every run must share it */
};

static int write_snapshots(struct aka_run *r, struct aka_episode *ep, struct abba *a,
                           struct aka_err *err)
{
    static const char *const sides[] = {"incumbent", "candidate"};
    int rc = 0;
    for (int i = 0; rc == 0 && i < 2; i++) {
        struct strbuf blob = STRBUF_INIT;
        strbuf_addf(&a->kernel[i], "%s/verify/%s", ep->dir.buf, sides[i]);
        rc = aka_mkdir_p(a->kernel[i].buf, 0755, err);
        strbuf_addf(&a->kernel[i], "/%s", r->camp.kernel);
        if (rc == 0)
            rc = candidate_blob(r, ep, i ? ep->candidate : ep->base, &blob, err);
        if (rc == 0)
            rc = aka_write_file_atomic(a->kernel[i].buf, blob.buf, blob.len, 0644, err);
        strbuf_release(&blob);
    }
    return rc;
}

/* Per-shape latencies of run `idx` into the samples; the first run fixes the shape order. */
static bool take_latencies(struct abba *a, const struct aka_optimize_opts *o,
                           const struct aka_result *res, size_t idx)
{
    if (a->shapes.n == 0) {
        for (size_t i = 0; i < res->latency_us_by_shape.n; i++)
            strvec_push(&a->shapes, res->latency_us_by_shape.v[i].id);
        a->lat = a->shapes.n ? calloc(4 * (size_t)o->verify_repeats * a->shapes.n, sizeof(double))
                             : NULL;
    }
    if (!a->lat || a->shapes.n != res->latency_us_by_shape.n)
        return false;
    double *dst = a->lat + idx * a->shapes.n;
    for (size_t s = 0; s < a->shapes.n; s++) {
        dst[s] = aka_shape_map_get(&res->latency_us_by_shape, a->shapes.v[s]);
        if (!aka_measured(dst[s]) || !(dst[s] > 0))
            return false;
    }
    return true;
}

/* Run (rep, slot) into the verification's runs; one that did not pass carries its own
 * first failure, so a rejected verification can be read from its record. */
static void record_run(struct abba *a, size_t rep, int slot, const struct aka_eval_outcome *out)
{
    const char *side = slot == 1 || slot == 2 ? "candidate" : "incumbent"; /* I C C I */
    json_t *run = json_pack("{s:I, s:s, s:b, s:o, s:s}", "repeat", (json_int_t)rep, "revision",
                            side, "all_pass", out->result.all_pass, "latency_us_geomean",
                            num_or_null(out->result.latency_us_geomean), "eval_id", out->eval_id);
    if (!out->result.all_pass && out->result.failures.n > 0) {
        const char *why = out->result.failures.v[0];
        json_object_set_new(run, "failure", json_string(why));
        if (!a->first_failure[0])
            snprintf(a->first_failure, sizeof(a->first_failure), "%s run %zu: %s", side,
                     rep * 4 + (size_t)slot + 1, why);
    }
    json_array_append_new(a->runs, run);
}

/* Every run of one verification was timed the same way (the first fixes the method): a CUPTI
 * kernel span and an event time of the same kernel differ by the event's cost, so a run
 * timed otherwise fails the verification instead of deciding it. */
static bool same_method(struct abba *a, size_t idx, const struct aka_result *res)
{
    const char *m = res->timing.method ? res->timing.method : "";
    if (!a->method[0])
        snprintf(a->method, sizeof(a->method), "%s", m);
    if (aka_verify_same_timing(a->method, m))
        return true;
    if (!a->first_failure[0])
        snprintf(a->first_failure, sizeof(a->first_failure),
                 "run %zu was timed by %s after runs timed by %s (latencies of different timing "
                 "methods are not compared)",
                 idx + 1, m, a->method);
    return false;
}

static int one_run(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_episode *ep,
                   struct abba *a, size_t rep, int slot, bool *ok, struct aka_err *err)
{
    int side = slot == 1 || slot == 2; /* I C C I */
    struct aka_eval_outcome out;
    aka_eval_outcome_init(&out);
    int rc = supervisor_eval(r, o, a->kernel[side].buf, &out, err);
    if (rc == 0) {
        size_t idx = rep * 4 + (size_t)slot;
        *ok = out.result.all_pass && take_latencies(a, o, &out.result, idx) &&
              same_method(a, idx, &out.result);
        record_run(a, rep, slot, &out);
        if (side && *ok) {
            json_decref(a->last_cand);
            a->last_cand = aka_memory_doc_from_result(ep->version, AKA_MEM_PROMOTED, &out.result,
                                                      ep->candidate, "episode",
                                                      "episode: ABBA-verified candidate");
        }
    }
    aka_eval_outcome_release(&out);
    return rc;
}

static void abba_decide(const struct aka_optimize_opts *o, struct aka_episode *ep, struct abba *a)
{
    struct aka_verify_limits lim;
    struct aka_verify_stats st;
    struct aka_err e = AKA_ERR_INIT;
    struct aka_abba_samples s = {
        .repeats = (size_t)o->verify_repeats, .shapes = a->shapes.n, .lat = a->lat};
    aka_verify_limits_from_opts(o, &lim);
    if (!aka_optimize_is_production(o))
        lim.max_shape_regression_pct = -1; /* leaderboard: no per-shape guard */
    if (aka_verify_abba(&s, &lim, &st, &e) < 0) {
        reject(ep, e.msg);
        return;
    }
    merge(ep->verification,
          json_pack("{s:o, s:o, s:o, s:o, s:o, s:s}", "improvement_pct",
                    num_or_null(st.improvement_pct), "ci_low_pct", num_or_null(st.ci_low_pct),
                    "ci_high_pct", num_or_null(st.ci_high_pct), "dispersion_pct",
                    num_or_null(st.dispersion_pct), "worst_shape_pct",
                    num_or_null(st.worst_shape_pct), "decision", st.reason));
    if (!st.promote) {
        char why[256];
        snprintf(why, sizeof(why), "ABBA verification: %s", st.reason);
        reject(ep, why);
    } else {
        ep->promoted_doc = json_incref(a->last_cand);
    }
}

static int verify_abba(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_episode *ep,
                       struct aka_err *err)
{
    struct abba a = {.kernel = {STRBUF_INIT, STRBUF_INIT}, .runs = json_array()};
    bool all_ok = true;
    int rc = write_snapshots(r, ep, &a, err);
    aka_optimize_progress(r, "episode %ld: ABBA verification, %d x I C C I", ep->number,
                          o->verify_repeats);
    /* Same allocation: on a transport that allocates per job (slurm), every run is a step
     * of one allocation, so incumbent and candidate share the node and its GPUs. */
    aka_sandbox_transport_hold(r->env.transport, 4 * o->verify_repeats);
    for (size_t rep = 0; rc == 0 && rep < (size_t)o->verify_repeats; rep++)
        for (int slot = 0; rc == 0 && slot < 4; slot++) {
            bool ok = false;
            rc = one_run(r, o, ep, &a, rep, slot, &ok, err);
            all_ok = all_ok && ok;
        }
    aka_sandbox_transport_hold(r->env.transport, 0);
    json_object_set(ep->verification, "runs", a.runs);
    json_object_set_new(ep->verification, "shapes", json_integer((json_int_t)a.shapes.n));
    if (rc == 0 && !all_ok) {
        char why[768];
        snprintf(why, sizeof(why),
                 "ABBA verification: not every incumbent and candidate run passed with complete "
                 "per-shape latencies%s%s",
                 a.first_failure[0] ? "; " : "", a.first_failure);
        reject(ep, why);
    } else if (rc == 0)
        abba_decide(o, ep, &a);
    /* A pending Gluon conversion that did not win is accepted at parity; the ABBA point
     * estimate gives the latency ratio (improvement = incumbent/candidate - 1). */
    json_t *pct = json_object_get(ep->verification, "improvement_pct");
    if (rc == 0 && all_ok && !ep->promoted_doc && a.last_cand && json_is_number(pct) &&
        aka_conversion_accepts(r, 1.0, 1.0 + json_number_value(pct) / 100.0, ep->verification)) {
        ep->status = AKA_MEM_PROMOTED;
        ep->violation[0] = '\0';
        ep->promoted_doc = json_incref(a.last_cand);
    }
    strbuf_release(&a.kernel[0]);
    strbuf_release(&a.kernel[1]);
    strvec_clear(&a.shapes);
    free(a.lat);
    json_decref(a.runs);
    json_decref(a.last_cand);
    return rc;
}

int aka_episode_verify(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_episode *ep,
                       struct aka_err *err)
{
    struct strbuf drift = STRBUF_INIT;
    bool fast = ep->kind == AKA_EPISODE_FAST;
    ep->verification =
        json_pack("{s:s, s:I, s:o, s:o, s:o, s:o, s:f}", "method",
                  fast ? "single_evaluator" : "same_allocation_abba", "abba_pairs",
                  (json_int_t)(fast ? 0 : o->verify_repeats), "improvement_pct", json_null(),
                  "ci_low_pct", json_null(), "ci_high_pct", json_null(), "dispersion_pct",
                  json_null(), "min_improvement_pct", o->min_improvement_pct);
    /* An edited original operator is said in the record too: what was evaluated instead. */
    if (*aka_optimize_check_drift(r, &drift))
        json_object_set_new(ep->verification, "original_operator_changed", json_string(drift.buf));
    strbuf_release(&drift);
    int rc = fast ? verify_fast(r, o, ep, err) : verify_abba(r, o, ep, err);
    if (rc == 0)
        json_object_set_new(ep->verification, "passed", json_boolean(ep->promoted_doc != NULL));
    return rc;
}
