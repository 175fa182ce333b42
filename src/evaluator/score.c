/*
 * score.c — the performance score's reference in production (issue 14; Atrex-Bench
 * v0.3's objective). When the operator's metadata carries production_performance
 * latencies, a production evaluation scores the candidate against them rather than
 * against the reference timed in the same job: per shape, production µs / candidate
 * µs; performance_score = speedup_vs_ref_mean = their mean, speedup_vs_ref_geomean
 * their geometric mean. The measured reference latencies stay in the result, and the
 * result says which reference the score used ("score_reference") and the production
 * latencies it took, so a record read later is never ambiguous.
 */
#include "evaluator/evaluator.h"

#include <math.h>
#include <stdio.h>

/* 0 with the latencies set; -1 (code 2) naming the metadata field. */
static int production_refs(const struct aka_operator *op, const struct aka_result *r,
                           json_t *by_shape, struct aka_err *err)
{
    char why[512];
    for (size_t i = 0; i < r->latency_us_by_shape.n; i++) {
        const char *sid = r->latency_us_by_shape.v[i].id;
        double us = 0;
        int rc = aka_operator_production_us(op, sid, &us, why, sizeof(why));
        if (rc == 0)
            snprintf(why, sizeof(why),
                     "metadata.json: shapes.%s.production_performance: missing, while other "
                     "shapes have one (a production score needs every shape's)",
                     sid);
        if (rc <= 0)
            return aka_err_set(err, AKA_EXIT_USAGE, "%s", why);
        json_object_set_new(by_shape, sid, json_real(us));
    }
    return 0;
}

int aka_eval_score_production(const struct aka_operator *op, struct aka_result *r,
                              struct aka_err *err)
{
    json_t *by_shape = json_object();
    double sum = 0, logsum = 0;
    size_t n = r->latency_us_by_shape.n, measured = 0;
    if (production_refs(op, r, by_shape, err) < 0) {
        json_decref(by_shape);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        double lat = r->latency_us_by_shape.v[i].value;
        double ref = json_real_value(json_object_get(by_shape, r->latency_us_by_shape.v[i].id));
        if (!aka_measured(lat) || lat <= 0)
            continue;
        sum += ref / lat;
        logsum += log(ref / lat);
        measured++;
    }
    /* A score from only some shapes would not compare with a complete one: none at all. */
    bool complete = n > 0 && measured == n;
    r->performance_score = r->speedup_vs_ref_mean = complete ? sum / (double)n : AKA_MISSING;
    r->speedup_vs_ref_geomean = complete ? exp(logsum / (double)n) : AKA_MISSING;
    if (!r->extra)
        r->extra = json_object();
    json_object_set_new(r->extra, "score_reference", json_string("production_performance"));
    json_object_set_new(r->extra, "production_latency_us_by_shape", by_shape);
    return 0;
}
