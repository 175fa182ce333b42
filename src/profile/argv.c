/*
 * argv.c — the Nsight Compute command line of a profile job. Clocks are never
 * touched (--clock-control none), so a profile measures the clocks `aka eval`
 * measures; the CSV raw page is what ncu.c reads.
 */
#include "profile/profile.h"

#include "base/fs.h"

#include <stdlib.h>
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

/* A metric is one ncu metric name (or a comma-separated list, or "regex:..." of them): never
 * an option of its own, so a brokered agent's ask cannot add a flag to the command line. */
static int check_metric(const char *m, struct aka_err *err)
{
    size_t n = strlen(m);
    bool ok = n > 0 && n <= 256 && m[0] != '-';
    for (size_t i = 0; ok && i < n; i++)
        ok = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:,^$*+?()[]|",
                    m[i]) != NULL;
    return ok ? 0
              : aka_err_set(err, AKA_EXIT_USAGE,
                            "--metric: expected an ncu metric name (letters, digits, '_', '.', "
                            "':', ',' or regex characters; at most 256 bytes, not starting with "
                            "'-'); got '%.80s'",
                            m);
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
    if (kernel_regex && (strlen(kernel_regex) > 256 || strchr(kernel_regex, '\n')))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--kernel-regex: expected one line of at most 256 bytes");
    for (size_t i = 0; metrics && i < metrics->n; i++)
        if (check_metric(metrics->v[i], err) < 0)
            return -1;
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

int aka_profile_command(const char *platform, const char *level, const char *kernel_regex,
                        const struct strvec *metrics, struct strvec *argv, struct strbuf *dir,
                        struct aka_err *err)
{
    struct strbuf tool = STRBUF_INIT;
    int rc = aka_profile_ncu_argv(level, kernel_regex, metrics, argv, err);
    if (rc == 0) /* this machine first: no profiler or no GPU is exit 75 wherever it runs */
        rc = aka_profile_environment(platform, NULL, &tool, err);
    if (rc == 0 && strcmp(aka_basename(tool.buf), "ncu") != 0)
        rc = aka_err_set(err, AKA_EXIT_FAILED,
                         "profile: live profiles with %s are not built yet; save its CSV and use "
                         "--from-report FILE",
                         aka_basename(tool.buf));
    if (rc == 0)
        rc = aka_profile_tool_dir(tool.buf, dir, err);
    if (rc == 0) {
        free(argv->v[0]);
        argv->v[0] = strbuf_detach(&tool, NULL);
    }
    strbuf_release(&tool);
    return rc;
}
