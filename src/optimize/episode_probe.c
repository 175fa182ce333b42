/*
 * episode_probe.c — production's numerical probes between a verified candidate and its
 * promotion (issue 14).
 *
 * A candidate that is correct on the evaluator's own inputs can still be wrong on inputs
 * its author never saw: a kernel that branches on magnitude, overflows at scale, or
 * cancels catastrophically when a row's variance is near zero. Before a production
 * candidate is promoted, the judge (the harnesses, never the candidate) runs bounded
 * supplemental inputs chosen here, by the supervisor: another seed, every float input
 * x1e-3 and x1e3, constant rows, large negative values and near-zero variance, on the
 * operator's smallest and largest shape and one rotating shape (rotation keyed on the
 * episode number). Each output must stay within the supervisor's relative L2 threshold
 * of the reference's on the same inputs (integer outputs exactly). A failure rejects the
 * candidate with the probe named; the message is the record's violation, which the next
 * episode's brief shows the agent.
 *
 * The plan is written into the active record (phase "probing") before the probes run and
 * the results (phase "probed") before the promotion is recorded, so a supervisor stopped
 * in between resumes with the same plan; the results are redone, like verification.
 */
#include "base/json.h"
#include "evaluator/evaluator.h"
#include "optimize/internal.h"

#include <stdio.h>
#include <string.h>

/* The supervisor's probes: name, seed offset, scale, offset, pattern. */
static const struct probe_def {
    const char *name;
    long long seed; /* plus the episode number for "other_seed" */
    double scale, offset;
    const char *pattern;
} probe_defs[] = {
    {"other_seed", 1000, 1.0, 0.0, "none"},   {"magnitude_1e-3", 1, 1e-3, 0.0, "none"},
    {"magnitude_1e3", 2, 1e3, 0.0, "none"},   {"constant_rows", 3, 1.0, 0.0, "constant_rows"},
    {"large_negative", 4, 1.0, -1e3, "none"}, {"near_zero_variance", 5, 1e-4, 1.0, "none"},
};

/* Relative L2 thresholds per float dtype: far above what an honest kernel's rounding and
 * summation order give at each precision, far below a wrong result's error. */
static json_t *thresholds(void)
{
    return json_pack("{s:f, s:f, s:f, s:f}", "float32", 1e-4, "float64", 1e-9, "float16", 1e-2,
                     "bfloat16", 2e-2);
}

/* A shape's size for the choice of smallest and largest: the product of its resolved
 * dims (native, SOL), else of the positive integers in its kwargs (Atrex). */
static double kw_size(json_t *v)
{
    double n = 1;
    size_t i;
    const char *k;
    json_t *x;
    if (json_is_integer(v) && json_integer_value(v) > 0)
        return (double)json_integer_value(v);
    if (json_is_array(v))
        json_array_foreach(v, i, x) n *= kw_size(x);
    if (json_is_object(v))
        json_object_foreach(v, k, x) n *= kw_size(x);
    return n;
}

static double shape_size(const struct aka_shape *s)
{
    double n = 1;
    for (size_t i = 0; i < s->dims.n; i++)
        n *= s->dims.v[i].value > 0 ? (double)s->dims.v[i].value : 1;
    if (s->dims.n == 0)
        n = kw_size(s->input_kwargs) * kw_size(s->init_kwargs);
    return n;
}

/* Smallest, largest and the rotating one (episode number over the others), distinct. */
static json_t *choose_shapes(const struct aka_operator *op, long episode)
{
    size_t lo = 0, hi = 0, n = op->shapes.n;
    for (size_t i = 1; i < n; i++) {
        lo = shape_size(&op->shapes.v[i]) < shape_size(&op->shapes.v[lo]) ? i : lo;
        hi = shape_size(&op->shapes.v[i]) > shape_size(&op->shapes.v[hi]) ? i : hi;
    }
    json_t *ids = json_array();
    json_array_append_new(ids, json_string(op->shapes.v[lo].id));
    if (hi != lo)
        json_array_append_new(ids, json_string(op->shapes.v[hi].id));
    size_t others = n - json_array_size(ids), k = others ? (size_t)episode % others : 0;
    for (size_t i = 0; others && i < n; i++)
        if (i != lo && i != hi && k-- == 0) {
            json_array_append_new(ids, json_string(op->shapes.v[i].id));
            break;
        }
    return ids;
}

static json_t *make_plan(const struct aka_run *r, long episode)
{
    json_t *cases = json_array();
    for (size_t i = 0; i < sizeof(probe_defs) / sizeof(probe_defs[0]); i++) {
        const struct probe_def *d = &probe_defs[i];
        long long seed = d->seed + (strcmp(d->name, "other_seed") == 0 ? episode : 0);
        json_array_append_new(cases, json_pack("{s:s, s:I, s:f, s:f, s:s}", "name", d->name, "seed",
                                               (json_int_t)seed, "scale", d->scale, "offset",
                                               d->offset, "pattern", d->pattern));
    }
    return json_pack("{s:o, s:{s:s, s:I}, s:o, s:o}", "shapes", choose_shapes(&r->op, episode),
                     "rotation", "keyed_on", "episode", "value", (json_int_t)episode, "rel_l2",
                     thresholds(), "cases", cases);
}

/* One evaluation of the staged candidate with the plan's shapes and cases. */
static int run_probes(struct aka_run *r, const struct aka_optimize_opts *o, const char *kernel,
                      json_t *plan, struct aka_eval_outcome *out, struct aka_err *err)
{
    struct strbuf op_dir = STRBUF_INIT;
    struct strvec ids = {0};
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(plan, "shapes"), i, v)
        strvec_push(&ids, json_string_value(v));
    json_t *probes = json_pack("{s:O, s:O}", "rel_l2", json_object_get(plan, "rel_l2"), "cases",
                               json_object_get(plan, "cases"));
    int rc = aka_ws_eval_inputs(r->ws.buf, r->env.repo_root, &op_dir, err);
    struct aka_eval_request req = {
        .op_dir = op_dir.buf,
        .kernel = kernel,
        .framework = r->camp.framework,
        .platform = r->camp.platform,
        .cuda_arch = r->camp.cuda_arch,
        .repo_root = r->env.repo_root,
        .shape_ids = &ids,
        .timed_runs = -1,
        .warmup = -1,
        .timeout_s = o->verify_run_timeout,
        .probes = probes,
        .generalized = r->camp.generalized,
    };
    if (rc == 0)
        rc = aka_evaluate(r->env.transport, &req, out, err);
    json_decref(probes);
    strvec_clear(&ids);
    strbuf_release(&op_dir);
    return rc;
}

/* The judge's own account of each probe (id, status, metric, value, threshold), as its
 * result line gave it: the record shows what was measured, not only the verdict. */
static json_t *judge_probes(const struct aka_result *res)
{
    json_t *all = aka_result_to_json(res);
    json_t *p = json_object_get(all, "probes");
    json_t *out = json_is_array(p) ? json_incref(p) : json_array();
    json_decref(all);
    return out;
}

static void reject(struct aka_episode *ep, const struct aka_eval_outcome *out)
{
    const char *why = out->result.failures.n ? out->result.failures.v[0] : "no result";
    aka_episode_set_status(ep, AKA_MEM_REJECTED,
                           "numerical probes: %s. The kernel must stay correct on the judge's "
                           "supplemental inputs (other seeds, every float input x1e-3 and x1e3, "
                           "constant rows, large negative values, near-zero variance; "
                           "docs/production.md)",
                           why);
    json_decref(ep->promoted_doc);
    ep->promoted_doc = NULL;
}

int aka_episode_probe(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_episode *ep,
                      struct aka_err *err)
{
    if (!aka_optimize_is_production(o) || ep->status != AKA_MEM_PROMOTED || !ep->promoted_doc)
        return 0;
    json_t *plan = json_object_get(ep->probes, "plan");
    bool resumed = plan != NULL; /* from the active record of a stopped supervisor */
    if (!resumed) {
        json_decref(ep->probes);
        ep->probes = json_pack("{s:o}", "plan", make_plan(r, ep->number));
    }
    json_object_set_new(ep->probes, "plan_from", json_string(resumed ? "active record" : "new"));
    struct strbuf kernel = STRBUF_INIT;
    struct aka_eval_outcome out;
    aka_eval_outcome_init(&out);
    strbuf_addf(&kernel, "%s/verify/candidate/%s", ep->dir.buf, r->camp.kernel);
    ep->phase = "probing";
    aka_episode_progress(r, ep, "numerical probes of %.12s", ep->candidate);
    int rc = aka_episode_save_active(r, ep, err);
    if (rc == 0)
        rc = run_probes(r, o, kernel.buf, json_object_get(ep->probes, "plan"), &out, err);
    if (rc == 0) {
        json_object_set_new(ep->probes, "result",
                            json_pack("{s:b, s:s, s:o, s:o}", "passed", out.result.all_pass,
                                      "eval_id", out.eval_id, "failures",
                                      aka_json_string_array(&out.result.failures), "probes",
                                      judge_probes(&out.result)));
        if (!out.result.all_pass)
            reject(ep, &out);
        ep->phase = "probed";
        rc = aka_episode_save_active(r, ep, err);
    }
    aka_eval_outcome_release(&out);
    strbuf_release(&kernel);
    return rc;
}
