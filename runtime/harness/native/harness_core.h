/*
 * harness_core.h — aka's native judge: the process that decides a native
 * evaluation. It reads the plan aka wrote, generates every input, poisons
 * outputs, drives the two runners (runner.h) through shared memory
 * (harness_proto.h), compares, times, cross-checks, and alone writes the one
 * RESULT_JSON line. No reference and no candidate code is linked into it.
 *
 *   harness_plan.c    plan.json
 *   harness_data.c    dtypes, the seeded generator, poison, comparison, statistics
 *   harness_io.c      the saved stdout, logging, the clock, the secret seed
 *   judge_runner.c    one runner process (and the pinger, the judge's calibration
 *                     child): start, one request cycle, observe, stop
 *   harness_flow.c    the evaluation: reference phase, then candidate phase
 *   harness_timing.c  the timed schedule and the timing cross-checks
 *   harness_result.c  failures, per-shape numbers, the result line
 *   judge.c           main()
 *
 * C11 only; the judge is built with the host C compiler for both targets.
 */
#ifndef AKA_HARNESS_CORE_H
#define AKA_HARNESS_CORE_H

#include "aka_native_abi.h"
#include "harness_proto.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Exit codes of the judge (run_native.sh documents its own on top). */
enum {
    HX_EXIT_PASS = 0,      /* every case passed */
    HX_EXIT_FAIL = 1,      /* the candidate failed a case (RESULT_JSON printed) */
    HX_EXIT_PLAN = 2,      /* the plan is unreadable or inconsistent (no RESULT_JSON) */
    HX_EXIT_REFERENCE = 3, /* the reference failed: an operator bug (RESULT_JSON printed) */
    HX_EXIT_ENV = 4        /* no device / no memory before any candidate code ran */
};

/* Printed on stderr right before the candidate runner starts; after it, every abnormal
 * end is the candidate's (see evaluate.c). */
#define HX_CANDIDATE_MARK "aka-harness: candidate code starts"

/* ---- the plan ---- */

/* One tensor of one shape, fully resolved by aka. */
typedef struct hx_tensor {
    char *name;
    int32_t dtype;
    int32_t ndim;
    int64_t shape[AKA_MAX_DIMS];
    int64_t numel;
    size_t bytes;
    double atol, rtol; /* outputs only */
} hx_tensor;

typedef struct hx_shape {
    char *id;
    aka_value *dims;
    int32_t n_dims;
    aka_value *params;
    int32_t n_params;
    hx_tensor *in, *out;
    int n_in, n_out;
} hx_shape;

/* A numerical probe (plan "probes"): the supervisor's supplemental inputs. Every float
 * input element x of a case becomes offset + scale * x; constant_rows then copies the
 * first element of each innermost row over the row. Integer inputs stay as generated. */
typedef struct hx_probe {
    char *name;
    double scale, offset;
    int constant_rows;
} hx_probe;

typedef struct hx_plan {
    char *op_name, *eval_id, *kernel_sha256;
    /* Probe plans only: one probe per seed, and the largest relative L2 error allowed per
     * float dtype (integer outputs must match exactly). Probe plans run no timed runs. */
    hx_probe *probes;
    double rel_l2[4];
    int64_t *seeds;
    int n_seeds;
    int warmup, reps;      /* at most: a shape's schedule may be cut to the time budget */
    double time_budget_us; /* the timed runs of a shape, per runner; 0: none */
    int64_t llc_bytes;     /* last-level cache one core sees; 0: ask the system */
    int64_t rotate_budget; /* most bytes the rotated copies of one shape may take; 0: default */
    int cpu_time;          /* CPU: the latency is the runner's CPU time, not the window */
    int kernel_span;       /* CUDA: time by CUPTI kernel span (plan "timing") */
    hx_shape *shapes;
    int n_shapes;
} hx_plan;

/* Read and check the plan; on failure returns -1 with a reason in why. */
int hx_plan_load(const char *path, hx_plan *plan, char *why, size_t why_len);
void hx_plan_free(hx_plan *plan);

/* ---- elements ---- */
size_t hx_dtype_size(int32_t dtype);
int hx_dtype_is_float(int32_t dtype);
const char *hx_dtype_name(int32_t dtype);
/* Element i as a double (fp16/bf16 widened exactly). */
double hx_load(const void *buf, int32_t dtype, int64_t i);
/* The byte every element of an output is filled with before each run. */
unsigned char hx_poison_byte(int32_t dtype);
/* Deterministic contents of tensor t for (seed, shape id, copy): see harness_data.c. */
void hx_fill(void *buf, const hx_tensor *t, uint64_t seed, const char *shape_id, uint32_t copy);
/* The same distribution as hx_fill, two float32 elements per 64-bit draw and one stream per
 * chunk of 2^20 elements, filled by up to 8 threads: for the timed inputs, which only need
 * to be unpredictable, not reproducible from hx_fill's streams. */
void hx_fill_timed(void *buf, const hx_tensor *t, uint64_t seed, const char *shape_id,
                   uint32_t copy);
/* hp_gen_f32 over a whole float32 tensor (by the same helper threads as hx_fill_timed). */
void hx_fill_gen(void *buf, const hx_tensor *t, uint64_t key, uint32_t tensor);
/* The first element of buf that is not hx_fill_gen's value, bit for bit, or -1; regenerated
 * and compared chunk by chunk by the same helpers, with no copy of the tensor. */
int64_t hx_check_gen(const void *buf, const hx_tensor *t, uint64_t key, uint32_t tensor);
/* The most threads one of those fills or compares ran on so far (1 when no helper could
 * start), for `aka eval -v`: whether the helpers ran is a question only the log answers. */
int hx_fill_threads_used(void);
/* A 64-bit stream for the judge's own choices (which timed runs are checked). */
uint64_t hx_mix(uint64_t *state);

/* Apply a probe's transform to the generated contents of input t (harness_data.c). */
void hx_probe_apply(void *buf, const hx_tensor *t, const hx_probe *pr);
/* ||got - want||_2 / ||want||_2 over the finite pairs; INFINITY when a non-finite element
 * of either side is not matched by the same non-finite value on the other. */
double hx_rel_l2(const void *got, const void *want, const hx_tensor *t);

/* Element-wise tolerance check of got against want (rules in harness_data.c). */
typedef struct hx_cmp {
    int64_t bad;             /* elements outside tolerance (NaN/Inf mismatches included) */
    int64_t first_bad;       /* flat index of the first bad element; -1 if none */
    double got, want;        /* the values there */
    int first_poison;        /* that element still holds the poison bytes: never written */
    double max_abs, max_rel; /* over the finite pairs */
} hx_cmp;
void hx_compare(const void *got, const void *want, const hx_tensor *t, hx_cmp *c);
/* "[i, j, ...]" of a flat row-major index. */
void hx_coords(const hx_tensor *t, int64_t flat, char *out, size_t n);

/* Median (of a copy), the q-quantile (0..1, of a copy) and the coefficient of variation. */
double hx_median(const double *v, int n);
double hx_quantile(const double *v, int n, double q);
double hx_cv(const double *v, int n);

/* ---- process plumbing (harness_io.c) ---- */
/* Save stdout for the result and point fd 1 at stderr (call first thing in main). */
int hx_take_stdout(void);
/* "RESULT_JSON=<json_text>\n" on the saved stdout. */
void hx_emit_result(const char *json_text);
/* "aka-harness: ..." on stderr. */
void hx_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
double hx_now_us(void);
/* Keep one CPU for the judge and the others for the runners (when there are two or more);
 * hx_pin_runner applies the runners' set in a forked child. */
void hx_pin(void);
void hx_pin_runner(void);
/* How many CPUs the evaluation has (1 when unknown); hx_pin_helper moves the calling thread
 * (a helper of the judge's, never the judge's own) off the judge's CPU, onto the runners'. */
int hx_cpus(void);
void hx_pin_helper(void);
/* memcpy / memset whose bytes end in memory and in no CPU cache (dst 64-byte aligned). */
void hx_stream_copy(void *dst, const void *src, size_t n);
void hx_stream_fill(void *dst, unsigned char byte, size_t n);
/* 64 bits from getrandom(2): the secret of one evaluation. */
int hx_secret(uint64_t *out);

/* ---- one runner process (judge_runner.c) ---- */

typedef struct hx_runner {
    const char *path, *who; /* "./candrun", "the kernel" */
    pid_t pid;
    int memfd, stat_fd;
    size_t bytes;
    unsigned char *base;
    hp_ctl *ctl;
    hp_desc *desc;
    uint32_t seq;
    clockid_t cpu;      /* its process CPU clock */
    double cpu_idle_us; /* that clock when it was last seen asleep (exact then) */
    double expect_us;   /* the window of its last call of this shape: how long to doze */
    /* cpu_time: it sleeps on go, and the window's CPU time is read with it asleep at
     * both ends (harness_proto.h, go_spin_us); set after hx_runner_start. */
    int cpu_window_asleep;
    int exited, wstatus;
} hx_runner;

/* How one request went, as the judge saw it. */
enum {
    HX_CALL_OK = 0,   /* the runner answered (status below) */
    HX_CALL_DIED = 1, /* the runner process ended (hx_runner_death says how) */
    HX_CALL_BUSY = 2, /* it kept running for HX_IDLE_LIMIT_US after reporting done */
    HX_CALL_ENV = 3   /* the judge could not observe it (/proc, clocks) */
};
#define HX_IDLE_LIMIT_US 1e6
#define HX_ERROR_TEXT    512

typedef struct hx_call {
    int outcome;              /* HX_CALL_* */
    int status;               /* the runner's reply */
    int waiting;              /* it was asleep on the request word when the judge armed it */
    int threads;              /* its thread count once asleep again */
    double wake_us;           /* arm → ready: woken and answering */
    double window_us;         /* go → done: the judge's clock around the request */
    double disturbed_us;      /* of the window, the judge was preempted (not asleep by choice) */
    double wake_disturbed_us; /* the same from arm to go */
    int woke_judge;           /* done came while the judge slept: seen a wake-up late */
    double post_us;           /* done → seen asleep */
    double cpu_us;            /* its CPU time from the last time it was seen asleep to now */
    double cpu_window_us;     /* of that, what it used between go and done (CALL) */
    double reported_us;       /* the runner's own measurement (CALL) */
    double ping_us;           /* the pinger's CPU time for a request now (ping_now's median) */
    double ping_window_us;    /* of that, what it used between go and done */
    char error[HX_ERROR_TEXT];
} hx_call;

/* path NULL: the pinger (a forked child of the judge that answers every request at once). */
int hx_runner_start(hx_runner *r, const char *path, const char *who, size_t bytes, char *why,
                    size_t n);
/* Make the mapping at least bytes long (the runner maps the new size on SHAPE). */
int hx_runner_grow(hx_runner *r, size_t bytes);
/* One request; 0 when the runner answered (c->status), -1 otherwise (c->outcome). */
int hx_runner_request(hx_runner *r, int req, int slot, hx_call *c);
int hx_runner_alive(hx_runner *r);
/* "crashed with signal 11 (Segmentation fault)" / "exited with status 0". */
void hx_runner_death(const hx_runner *r, char *out, size_t n);
void hx_runner_stop(hx_runner *r);

/* ---- the target and the evaluation ---- */

/* The most slots a shape's inputs rotate through (hx_target.max_copies). */
#define HX_MAX_SLOTS 2

typedef struct hx_target {
    const char *evaluator; /* "aka.native.c" / "aka.native.cuda" */
    const char *method;    /* timing.method */
    int device;            /* 1: PREP/FETCH requests, the latency is the runner's events */
    int l2_flush;          /* timing.l2_flush */
    int max_copies;        /* most rotated slots per shape, at most HX_MAX_SLOTS */
} hx_target;

extern const hx_target hx_target_c, hx_target_cuda;

/* Run the whole evaluation, print RESULT_JSON on the saved stdout, return the exit code. */
int hx_evaluate(const hx_plan *plan, const hx_target *tg);

/* ---- internals shared by harness_flow.c, harness_timing.c and harness_result.c ---- */

/* What the judge compares between the two runners, per timed run. */
enum {
    HX_PH_GAP,    /* CPU: the runner's CPU time minus its own number; device: window minus it */
    HX_PH_EXCESS, /* the runner's CPU time over the whole cycle minus the judge's window */
    HX_PH_PREP,   /* device: the PREP request's window */
    HX_PH_FETCH,  /* device: the FETCH request's window */
    HX_PH_N
};

/* One runner's timed runs of one shape (reps samples each). */
typedef struct hx_timed {
    double *latency;  /* what the judge reports: its window + excess (CPU), the events (CUDA) */
    double *reported; /* the runner's own measurement */
    double *window;   /* the judge's clock around the call */
    double *cpu;      /* the runner's CPU time on the request, less the pinger's */
    double *ph[HX_PH_N];
    int *clean; /* the judge watched the whole window (not preempted in it) */
} hx_timed;

/* Everything the judge keeps about one shape. */
typedef struct hx_job {
    const hx_shape *sh;
    int K;                      /* slots */
    size_t bytes;               /* mapping bytes the slots need */
    uint64_t *in_off, *out_off; /* K*n_in, K*n_out offsets in the mapping */
    void **priv;                /* K*n_in: what each slot's inputs hold (the judge's copy) */
    /* Per slot, the inputs the runner generated (hx_gen_slot): their key and which tensors
     * (bit t); the judge regenerates those to compare instead of keeping a copy. */
    uint64_t gen_key[HX_MAX_SLOTS], gen_mask[HX_MAX_SLOTS];
    void **ref_case;            /* n_seeds*n_out reference outputs of the correctness cases */
    int *check_of;              /* per run: index into ref_timed, -1 when not checked */
    unsigned char *inputs_back; /* per run: its inputs are compared after it (hx_schedule) */
    int n_checked;
    /* This shape's schedule: the plan's counts, cut to fit the time budget from how long
     * the reference's correctness calls took (budget_schedule). Both runners use it. */
    int warmup, reps;
    double ref_call_us; /* the reference's slowest correctness call, judge's window */
    void **ref_timed;   /* n_checked*n_out reference outputs of the checked timed runs */
    hx_timed ref, cand;
} hx_job;

/* The result being built. */
typedef struct hx_acc {
    json_t *failures, *diags, *lat, *cv, *ref_lat, *copies;
    json_t *checked, *runner_lat, *cross; /* the judge's own numbers */
    json_t *probes;                       /* probe plans: one entry per (probe, shape) */
    long long total, passed;
    double max_abs, max_rel;
    int compared;         /* any element compared (else the error fields are null) */
    int reference_failed; /* exit code 3 */
    int env_failed;       /* no device / memory before candidate code: exit code 4 */
} hx_acc;

typedef struct hx_eval {
    const hx_plan *plan;
    const hx_target *tg;
    uint64_t secret; /* timed inputs and the checked sample derive from it */
    hx_job *jobs;
    int candidate;         /* 0: reference phase, 1: candidate phase */
    const hx_probe *probe; /* the probe of the case being loaded, NULL outside probe plans */
    int max_threads;       /* most threads a runner may have between requests */
    int64_t device_free;   /* the reference runner's SETUP answer (CUDA) */
    int span;              /* the reference runner times by kernel span (its SETUP answer) */
    int span_noted[2];     /* a role's "no kernel spans" diagnostic is written */
    hx_runner run;
    int have_runner;
    hx_runner pinger; /* the calibration process, for the whole evaluation */
    int have_pinger;
    long long pings;       /* requests the pinger answered (the result's judge.pinger_requests) */
    double *pool[HX_PH_N]; /* the reference's timed runs, every shape, per quantity */
    int n_pool[HX_PH_N];
    void **got; /* n_got scratch buffers for outputs, sized for the largest shape */
    int n_got;
    hx_acc a;
} hx_eval;

/* A line in failures[] ("sid=ID: ..."), and a diagnostic when stage is not NULL. */
void hx_fail(hx_acc *a, const char *shape, const char *stage, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A diagnostic that is not a failure (stage, then the message). */
void hx_diagnose(hx_acc *a, const char *stage, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A failure of the reference: the operator's bug, exit code 3. */
void hx_reference_failed(hx_eval *ev, const hx_shape *sh, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int hx_acc_init(hx_acc *a);
void hx_acc_free(hx_acc *a);
/* Print the result; returns the exit code. */
int hx_finish(const hx_eval *ev);

/* The inputs of a slot from (seed, copy), into the judge's copy and the mapping; timed: the
 * faster generator for the secret timed inputs (hx_fill_timed). keep 0: the judge will not
 * compare them after the run, so on a device they go straight into the mapping. */
void hx_load_slot(hx_eval *ev, hx_job *j, int slot, uint64_t seed, uint32_t copy, int timed,
                  int keep);
/* A device's timed run `run`: its float32 inputs are generated by the runner on the device
 * (hp_gen_f32, from a key derived from the evaluation's secret and the run), the others
 * loaded as hx_load_slot does; keep: the judge computes the generated ones too, to compare
 * them after the run. */
void hx_gen_slot(hx_eval *ev, hx_job *j, int slot, uint32_t run, int keep);
void hx_poison_slot(hx_eval *ev, hx_job *j, int slot);
/* PREP (device), CALL, FETCH (device; the inputs come back only when inputs_back) on a
 * slot: 0 ok, 1 failed, 2 failed and the runner must be replaced; msg says why. */
int hx_run_slot(hx_eval *ev, int slot, int inputs_back, hx_call *call, double *prep_us,
                double *fetch_us, char *msg, size_t n);
/* Compare the slot's outputs with want (0 when they match; text in msg). */
int hx_check_outputs(hx_eval *ev, hx_job *j, int slot, void **want, char *msg, size_t n);
/* Are the slot's inputs still the judge's copy? 0 yes; else text in msg. */
int hx_check_inputs(hx_eval *ev, hx_job *j, int slot, char *msg, size_t n);
void hx_progress(const char *phase, const hx_shape *sh, long long seed);
/* The pinger's CPU time for one request right now (0 without a pinger). */
double hx_ping(hx_eval *ev, double *window_us);

/* The timed schedule of the current runner on job j (harness_timing.c); 0 when every run
 * went right, 1 failed, 2 failed and the runner must be replaced. */
int hx_schedule(hx_eval *ev, hx_job *j);
/* After the reference's schedule of a shape: keep what the cross-checks pool over shapes. */
void hx_pool_reference(hx_eval *ev, const hx_job *j);
/* After the candidate's schedule: its timing against the reference's; 0 when consistent.
 * report: add the failures to the result (the second attempt); else only say so. */
int hx_cross_check(hx_eval *ev, hx_job *j, int report);
/* "cpu_time" when the plan asks for the runner's CPU time on the CPU, else the target's. */
const char *hx_timing_method(const hx_eval *ev);
int hx_timed_alloc(hx_timed *t, int reps);
void hx_timed_free(hx_timed *t);

#endif
