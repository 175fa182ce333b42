/*
 * abba_decide.c — bench/abba_trials.sh's decision step: the campaign's own ABBA
 * statistics (aka_verify_abba, src/optimize/verify_stats.c) on latencies measured
 * outside a campaign, with the limits a default `aka optimize` uses (99.9% interval).
 *
 * usage: abba_decide FILE
 *   FILE: JSON {"repeats": R, "shapes": S, "lat": [R*4*S numbers]}, ordered
 *         [repeat][slot I C C I][shape], latencies in µs.
 * Prints "promote|reject improvement% ci_low% dispersion% reason".
 */
#include "base/json.h"
#include "optimize/optimize.h"

#include <stdio.h>
#include <stdlib.h>

/* verify_stats.c is compiled in alone; its limits-from-flags helper (unused here) names
 * this, which lives with the whole option parser. */
bool aka_optimize_is_production(const struct aka_optimize_opts *o)
{
    (void)o;
    return false;
}

int main(int argc, char **argv)
{
    struct aka_err err = AKA_ERR_INIT;
    json_t *doc = NULL;
    if (argc != 2 || aka_json_load_file(argv[1], &doc, &err) < 0) {
        fprintf(stderr, "usage: abba_decide FILE (%s)\n", err.msg);
        return 2;
    }
    json_t *lat = json_object_get(doc, "lat");
    size_t n = json_array_size(lat);
    double *v = calloc(n ? n : 1, sizeof(double));
    for (size_t i = 0; i < n; i++)
        v[i] = json_number_value(json_array_get(lat, i));
    struct aka_abba_samples s = {
        .repeats = (size_t)json_integer_value(json_object_get(doc, "repeats")),
        .shapes = (size_t)json_integer_value(json_object_get(doc, "shapes")),
        .lat = v};
    /* What aka_verify_limits_from_opts makes of aka optimize's defaults (leaderboard,
     * --min-improvement-pct 0, --max-dispersion-pct 10); set here because that function
     * drags in the whole option parser. */
    struct aka_verify_limits lim = {.min_improvement_pct = 0,
                                    .max_dispersion_pct = 10,
                                    .max_shape_regression_pct = -1.0,
                                    .resamples = 2000,
                                    .confidence = 0.999,
                                    .seed = 0x616b61u};
    struct aka_verify_stats st;
    if (s.repeats * 4 * s.shapes != n || aka_verify_abba(&s, &lim, &st, &err) < 0) {
        fprintf(stderr, "abba_decide: %s\n", err.msg[0] ? err.msg : "sample count mismatch");
        return 2;
    }
    printf("%s %.2f %.2f %.2f %s\n", st.promote ? "promote" : "reject", st.improvement_pct,
           st.ci_low_pct, st.dispersion_pct, st.reason);
    free(v);
    json_decref(doc);
    return 0;
}
