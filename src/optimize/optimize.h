/*
 * optimize.h — the campaign engine's public interface: `aka optimize` flags,
 * the campaign run, and the verification statistics (DESIGN §3, §4.1, §5).
 *
 * The flags keep upstream names and defaults (reference/anchor-campaign.md §1,
 * anchor-v03.md §13). Parsing and validation are separate from running so that
 * every usage error is found before a single file is written: cmd/optimize.c
 * parses, validates, checks the host, and only then calls aka_optimize_run.
 */
#ifndef AKA_OPTIMIZE_H
#define AKA_OPTIMIZE_H

#include "base/error.h"
#include "base/strbuf.h"
#include "base/vec.h"
#include "sandbox/sandbox.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* ---- flags (options.c) ------------------------------------------------------------------ */

#define AKA_OPT_MAX_FLAGS 64

struct aka_optimize_opts {
    /* operator and target */
    const char *op_dir, *platform, *framework, *arch, *notes, *goal;
    const char *optimization_mode;  /* leaderboard | production */
    const char *agent_cli;          /* claude | qodercli | codex | pi | builtin */
    const char *agent_cli_path;     /* the agent CLI binary; "": the backend's name on PATH */
    const char *framework_baseline; /* auto | always | never */
    const char *workspace, *workspace_suffix;
    /* budgets and episode schedule */
    int max_iters, fast_episodes, fast_trials, max_stall, convert_after, handoff_resumes;
    int goal_after_episodes, goal_after_stalls;
    long long token_budget;
    double target_util;
    long framework_baseline_timeout, production_review_timeout;
    long agent_timeout; /* per episode agent invocation, seconds; 0: none (upstream) */
    /* verification */
    int verify_repeats, verify_run_timeout;
    double min_improvement_pct, max_shape_regression_pct, max_dispersion_pct;
    /* sandbox: the transport flags are sandbox.h's table, shared with `aka eval` */
    struct aka_transport_opts transport;
    int sandbox_timeout, environment_poll_interval;
    bool no_auto_recovery; /* code 75 starts no recovery monitor (recovery/) */
    /* the agent sandbox (agents/agents.h) */
    const char *agent_sandbox;        /* bwrap | none */
    const char *agent_eval;           /* auto | sandbox | broker: where the agent's own `aka eval`
                                         runs on this host (a remote transport always brokers) */
    bool production_without_reviewer; /* production: the deterministic policy alone */
    bool generalized; /* production: private shapes, the agent sees agent_problem.json only */
    struct strvec agent_read_only_paths, agent_writable_paths;
    bool help;
    bool given[AKA_OPT_MAX_FLAGS]; /* which flags appeared, indexed like the flag table */
};

/* Defaults as upstream (max-iters 20, fast-episodes 2, sandbox-timeout 600, ...). */
void aka_optimize_opts_init(struct aka_optimize_opts *o);
void aka_optimize_opts_release(struct aka_optimize_opts *o);

/*
 * Parse argv (argv[0] is the application name) into o, then validate every value
 * and every combination. Values point into argv. Returns 0, or -1 with code 2 and
 * a message that names the flag. `--help` sets o->help and skips validation.
 */
int aka_optimize_opts_parse(int argc, char **argv, struct aka_optimize_opts *o,
                            struct aka_err *err);

/* Value and combination checks alone (parse calls it). */
int aka_optimize_opts_validate(struct aka_optimize_opts *o, struct aka_err *err);

/*
 * What the host must provide before a campaign starts: the agent CLI on PATH
 * (builtin needs nothing), a sandbox transport this build has, the operator
 * directory. Code 2 naming the flag; nothing is written.
 */
int aka_optimize_opts_check_host(const struct aka_optimize_opts *o, struct aka_err *err);

/* Whether the flag (e.g. "--sandbox") appeared on the command line. */
bool aka_optimize_opt_given(const struct aka_optimize_opts *o, const char *flag);

/* The full --help text: every flag with its default and meaning. */
void aka_optimize_print_help(FILE *out);

/* Production mode? */
bool aka_optimize_is_production(const struct aka_optimize_opts *o);

/* ---- the campaign (campaign.c) --------------------------------------------------------------- */

/*
 * Run (or resume) the campaign the validated flags describe, every evaluation through
 * transport t (from aka_transport_open of o->transport): workspace, pinned
 * campaign.json, V0, V1, then the loop-top budget checks. Progress lines go to
 * `progress` (one per phase). Returns the exit code of DESIGN §4.9; err holds
 * the message for a non-zero one. `stop_reason` receives why the campaign ended;
 * ws_out (may be NULL) the workspace path. Code 75 (the environment, not a candidate)
 * leaves <ws>/.aka/environment-failure.json (environment.c).
 */
int aka_optimize_run(const struct aka_optimize_opts *o, const struct aka_sandbox_transport *t,
                     const char *repo_root, FILE *progress, char *stop_reason, size_t stop_len,
                     struct strbuf *ws_out, struct aka_err *err);

/* Whether ws holds an environment-failure marker (the campaign stopped with 75 for the
 * machine, not for a held lock or a bad flag): only then may recovery take over. */
bool aka_optimize_env_stopped(const char *ws);

/* The workspace directory the flags name: <parent>/kernel_opt_<op>_<fw>_<platform>[_production]. */
int aka_optimize_workspace_path(const struct aka_optimize_opts *o, const char *op_name,
                                struct strbuf *out, struct aka_err *err);

/* ---- verification statistics (verify_stats.c) --------------------------------------------- */

/*
 * Full/goal verification (DESIGN §5): same-allocation ABBA runs I C C I per repeat.
 * Each run yields one latency per shape. For each repeat r and shape s the paired
 * log-ratio is log(I_rs / C_rs) with I_rs and C_rs the geometric means of that
 * repeat's two incumbent and two candidate runs (pairing within a repeat cancels
 * drift across the allocation). A bootstrap over repeats of the mean log-ratio
 * across shapes gives a confidence interval; promotion needs its lower bound
 * above log(1 + min_improvement_pct/100), the run-to-run dispersion under a
 * limit, and in production no shape slower than max_shape_regression_pct.
 */
struct aka_abba_samples {
    size_t repeats, shapes;
    /* [repeat][slot][shape] flattened: slot 0..3 = I C C I. Latencies in µs, > 0. */
    const double *lat;
};

struct aka_verify_limits {
    double min_improvement_pct;      /* strict lower bound on the CI */
    double max_dispersion_pct;       /* limit on the median per-shape CV of the runs */
    double max_shape_regression_pct; /* < 0: not checked (leaderboard) */
    int resamples;                   /* bootstrap resamples (>= 100) */
    double confidence;               /* e.g. 0.95: two-sided interval */
    unsigned long long seed;         /* deterministic bootstrap */
};

struct aka_verify_stats {
    double mean_log_ratio;  /* point estimate over repeats and shapes */
    double improvement_pct; /* 100 * (exp(mean_log_ratio) - 1) */
    double ci_low_pct;      /* lower bound of the interval, as a percentage */
    double ci_high_pct;     /* upper bound */
    double dispersion_pct;  /* median over shapes and sides of the runs' CV, in percent */
    double worst_shape_pct; /* most negative per-shape improvement (regression < 0) */
    size_t worst_shape;     /* its index */
    bool promote;           /* every criterion passed */
    char reason[160];       /* why not, or "improvement CI above threshold" */
};

/* Compute the statistics and the decision. -1 with code 2 on malformed samples. */
int aka_verify_abba(const struct aka_abba_samples *s, const struct aka_verify_limits *lim,
                    struct aka_verify_stats *out, struct aka_err *err);

/* Whether latencies timed by methods a and b (a result's timing.method) may be compared: the
 * same method, or one side unknown (a record from before records said). A CUPTI kernel
 * span and an event time of one kernel differ by the event's cost, so never across. */
bool aka_verify_same_timing(const char *a, const char *b);

/* Limits from the flags (resamples 2000, confidence 0.95, fixed seed). */
void aka_verify_limits_from_opts(const struct aka_optimize_opts *o, struct aka_verify_limits *l);

/* ---- roofline utilization for --target-util (target_util.c) ------------------------------ */

/*
 * A version's utilization is max(achieved FLOP rate / peak FLOP rate, achieved
 * bandwidth / peak bandwidth) over the whole workload: the operator's roofline
 * work summed over its shapes, divided by the version's per-shape latencies
 * summed. Peaks are hardware facts of the GPU wiki (DESIGN §8), never constants
 * of this program; each one remembers the record it came from.
 */
#define AKA_HW_PEAKS_MAX 16

struct aka_hw_peak {
    char quantity[64]; /* the wiki fact's quantity, e.g. "hbm_bandwidth", "fp32_tflops" */
    double per_s;      /* bytes/s for bandwidths, FLOP/s for FLOP rates */
    char record[128];  /* id of the wiki record it came from */
};

struct aka_hw_peaks {
    struct aka_hw_peak v[AKA_HW_PEAKS_MAX];
    size_t n;
    char why[256]; /* n == 0: why no peak is known */
};

/* Take one wiki hardware record if it is a peak fact this file uses (a bandwidth
 * or a FLOP rate with a known unit); the first record per quantity wins. */
bool aka_hw_peaks_add_record(struct aka_hw_peaks *p, const json_t *record);

/* The peaks the GPU wiki knows for a platform (any platform.h name: "cpu", "H20", "sm_90"):
 * bundled, user and <workspace>/.aka-plugins records, most specific first. Never
 * fails: a wiki that cannot be opened leaves p empty with the reason in p->why. */
void aka_hw_peaks_load(const char *repo_root, const char *workspace, const char *platform,
                       struct aka_hw_peaks *p);

struct aka_operator;
struct aka_shape_map;

struct aka_utilization {
    bool known;
    double pct;           /* max of the two sides that are known */
    double flop_pct;      /* < 0: unknown (no FLOP count or no peak for its type) */
    double bandwidth_pct; /* < 0: unknown */
    char why[256];        /* !known: what is missing */
    char basis[256];      /* known: the peaks used and their records */
    /* Over every shape: work / time (< 0: unknown), and the ceilings used (< 0: none). */
    double flops_per_s, bytes_per_s, peak_flops_per_s, peak_bytes_per_s;
};

/* The utilization of the version whose per-shape latencies (µs) are lat_us. */
void aka_utilization_of(const struct aka_operator *op, const struct aka_shape_map *lat_us,
                        const struct aka_hw_peaks *p, struct aka_utilization *u);

/*
 * This host's one-core CPU ceilings (cpu_ceilings.c), put first in p as "fp32_tflops" and
 * "memory_bandwidth": from the per-user cache, else, with measure, from a one-second
 * microbenchmark (peak FMA rate; memcpy of 256 MiB buffers) whose result is cached.
 * -1 when not known (p->why says so when p holds nothing else).
 */
int aka_cpu_ceilings(bool measure, struct aka_hw_peaks *p);

/* The roofline of a version, for records and `aka status`: {"gflop_per_s", "gb_per_s",
 * "peak_gflop_per_s", "peak_gb_per_s", "flop_pct", "bandwidth_pct", "basis"} (null where
 * unknown), or {"unknown": WHY}. */
json_t *aka_roofline_json(const struct aka_utilization *u);
/* The roofline object of a record's "performance" (its latency_us_by_shape) on platform:
 * the wiki's peaks (repo_root NULL: the wiki is not opened, nothing is written), and on
 * the CPU this host's measured ceilings (measured now when measure and not cached yet).
 * Never NULL. */
json_t *aka_roofline_of(const char *repo_root, const char *workspace, const char *platform,
                        const struct aka_operator *op, const json_t *performance, bool measure);
/* One line: "12.3 GFLOP/s of 140 (8.8%) · 0.4 GB/s of 11.2 (3.6%)"; "—" for unknowns. */
void aka_roofline_line(const json_t *roofline, struct strbuf *out);

/* ---- multi-framework dispatch (dispatch.c) ------------------------------------------------ */

/* The frameworks a dispatch runs for the flags' operator and platform (DESIGN §4.1):
 * cpu: C (native C operators only); NVIDIA: Cuda for native CUDA operators, else
 * Triton, CuteDSL and Cuda. Code 2 when there is none. */
int aka_optimize_frameworks(const struct aka_optimize_opts *o, struct strvec *out,
                            struct aka_err *err);

/*
 * `aka optimize` without --framework: one child `aka optimize ... --framework F`
 * per framework, each in its own process group, workspace and log file
 * (<workspace>.log); one line per child on `progress`. Returns 0 when every
 * child succeeded, else -1 with err's code the worst child status; a stop
 * signal ends every descendant and gives code 128 + signal (130 for Ctrl-C).
 * argv is the application's (argv[0] its name), passed on minus --framework.
 */
int aka_optimize_dispatch(const struct aka_optimize_opts *o, int argc, char **argv,
                          const char *repo_root, FILE *progress, struct aka_err *err);

/* ---- finalization (finalize.c) -------------------------------------------------------------- */

struct aka_finalize_summary {
    long version;            /* the incumbent's version (-1: none recorded) */
    char status[32];         /* its memory status */
    double latency_us;       /* its latency geomean (0 when not measured) */
    double v0_latency_us;    /* V0's (0 when not measured) */
    double speedup_vs_v0;    /* v0_latency_us / latency_us (0 when either is missing) */
    bool submission_written; /* SOL: <workspace>/solution.json written and re-read */
    char submission[4096];   /* its path */
    /* SOL: the submission evaluated as submitted (aka_optimize_check_submission). */
    enum { AKA_SUBMISSION_UNCHECKED, AKA_SUBMISSION_PASSED, AKA_SUBMISSION_FAILED } check;
    char checked_by[64];    /* "sol-execbench" (the owner's tool), else aka's evaluator */
    char check_note[96];    /* why aka's judge checked it instead, or "" */
    char check_detail[768]; /* "4/4 workloads passed", the first failure, or why not run */
};

/*
 * Finalize a stopped campaign's workspace: find the incumbent (the latest
 * baseline, framework_baseline or promoted record), and for a SOL-ExecBench
 * campaign write <workspace>/solution.json — the SOL solution of the incumbent
 * kernel with its source inlined — atomically, after validating it with the
 * contracts' SOL parser. Errors (code 1, or 2 for a malformed input) leave
 * nothing written.
 */
int aka_optimize_finalize(const char *ws, struct aka_finalize_summary *out, struct aka_err *err);

/*
 * Evaluate s's written submission with base's operator, platform and transport as
 * `aka eval --evaluator official` does: the owner's tool when the sandbox runtime has
 * it, else aka's judge. Fills s's check fields; never fails the campaign (an evaluation
 * that could not run leaves the check UNCHECKED with the reason in check_detail).
 */
struct aka_eval_request;
void aka_optimize_check_submission(const struct aka_sandbox_transport *t,
                                   const struct aka_eval_request *base,
                                   struct aka_finalize_summary *s);

/* The check's names as state.json records them, in the order of the enum above. */
extern const char *const aka_submission_check_names[];

/* A submission check in words, for the final line and `aka status` alike: "checked by
 * sol-execbench: PASS (4/4 workloads passed)", "checked by aka.python.sol (<note>): FAIL
 * (<detail>)" or "not checked: <detail>". check is one of aka_submission_check_names;
 * NULL or empty strings read as absent. */
void aka_submission_check_text(const char *check, const char *checked_by, const char *note,
                               const char *detail, struct strbuf *out);

/* The one summary line ("final: v3 (promoted), 12.5 us, 3.10x vs V0; submission ..."). */
void aka_finalize_summary_line(const struct aka_finalize_summary *s, char *line, size_t len);

#endif
