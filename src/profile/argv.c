/*
 * argv.c — the Nsight Compute command line of a profile job. Clocks are never
 * touched (--clock-control none), so a profile measures the clocks `aka eval`
 * measures; the CSV raw page is what ncu.c reads.
 */
#include "profile/profile.h"

#include <string.h>

/* Per-kernel metrics of the sol and deep levels, beyond their sections. */
static const char sol_metrics[] = "dram__bytes.sum.per_second,"
                                  "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,"
                                  "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,"
                                  "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,"
                                  "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum,"
                                  "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum,"
                                  "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum,"
                                  "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum,"
                                  "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum,"
                                  "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum";

static void level_args(const char *level, struct strvec *argv)
{
    if (strcmp(level, "survey") == 0) {
        strvec_push(argv, "--metrics");
        strvec_push(argv, "gpu__time_duration.sum");
        return;
    }
    if (strcmp(level, "deep") == 0) {
        strvec_push(argv, "--set");
        strvec_push(argv, "full");
    } else {
        static const char *const sections[] = {"SpeedOfLight", "LaunchStats", "Occupancy",
                                               "WarpStateStats", NULL};
        for (size_t i = 0; sections[i]; i++) {
            strvec_push(argv, "--section");
            strvec_push(argv, sections[i]);
        }
    }
    strvec_push(argv, "--metrics");
    strvec_push(argv, sol_metrics);
}

int aka_profile_ncu_argv(const char *level, const char *kernel_regex, const struct strvec *metrics,
                         struct strvec *argv, struct aka_err *err)
{
    if (strcmp(level, "survey") && strcmp(level, "sol") && strcmp(level, "deep"))
        return aka_err_set(err, AKA_EXIT_USAGE, "--level: expected survey, sol or deep; got '%s'",
                           level);
    if (strcmp(level, "deep") == 0 && !(kernel_regex && *kernel_regex))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--level: deep profiles every section of every launch; it needs "
                           "--kernel-regex");
    /* No --profile-from-start off: the harness does not bracket its calls with
     * cudaProfilerStart/Stop; the job runs one shape, one seed, one warmup and one timed
     * run, and --launch-count caps what a chatty reference could add. */
    static const char *const base[] = {"ncu",
                                       "--launch-count",
                                       "200",
                                       "--clock-control",
                                       "none",
                                       "--csv",
                                       "--page",
                                       "raw",
                                       "--print-units",
                                       "base",
                                       "--target-processes",
                                       "all",
                                       "--kernel-name-base",
                                       "demangled",
                                       NULL};
    strvec_pushv(argv, base);
    if (kernel_regex && *kernel_regex) {
        strvec_push(argv, "--kernel-name");
        strvec_pushf(argv, "regex:%s", kernel_regex);
    }
    level_args(level, argv);
    for (size_t i = 0; metrics && i < metrics->n; i++) {
        strvec_push(argv, "--metrics");
        strvec_push(argv, metrics->v[i]);
    }
    return 0;
}
