/*
 * harness_core.h — the part of aka's native harness that is the same on the CPU
 * and on a CUDA device: reading the plan aka wrote, generating inputs, poisoning,
 * comparing, statistics, the run schedule, and the one RESULT_JSON line.
 *
 * Where buffers live and how a call is timed differ per target, so the flow in
 * harness_core.c talks to memory and to the clock only through `struct hx_backend`:
 * harness.c implements it with host memory and CLOCK_MONOTONIC, harness_cuda.cu
 * with device memory and CUDA events. Everything that decides a verdict lives
 * here, once.
 *
 * This header is C11 and C++ (nvcc) clean; harness_core.c is C11 only and is
 * compiled with the host C compiler in both builds.
 */
#ifndef AKA_HARNESS_CORE_H
#define AKA_HARNESS_CORE_H

#include "aka_native_abi.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exit codes of the harness binary (run_native.sh documents its own on top). */
enum {
    HX_EXIT_PASS = 0,      /* every case passed */
    HX_EXIT_FAIL = 1,      /* the candidate failed a case (RESULT_JSON printed) */
    HX_EXIT_PLAN = 2,      /* the plan is unreadable or inconsistent (no RESULT_JSON) */
    HX_EXIT_REFERENCE = 3, /* the reference failed: an operator bug (RESULT_JSON printed) */
    HX_EXIT_ENV = 4        /* no device / no memory before any candidate code ran */
};

/* Printed on stderr right before the first candidate call; after it, every abnormal
 * end is the candidate's (see evaluate.c). */
#define HX_CANDIDATE_MARK "aka-harness: candidate code starts"
/* Prefix of the progress lines on stderr ("aka-harness: phase=... shape=..."). */
#define HX_PROGRESS "aka-harness: phase="

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

typedef struct hx_plan {
    char *op_name, *eval_id, *kernel_sha256;
    int64_t *seeds;
    int n_seeds;
    int warmup, reps;
    int64_t llc_bytes;     /* last-level cache one core sees; 0: ask the system */
    int64_t rotate_budget; /* most bytes the rotated copies of one shape may take; 0: default */
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
/* Deterministic contents of tensor t for (seed, shape id, copy): see harness_core.c. */
void hx_fill(void *buf, const hx_tensor *t, uint64_t seed, const char *shape_id, uint32_t copy);

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

/* Median (of a copy) and coefficient of variation (sample stddev / mean). */
double hx_median(const double *v, int n);
double hx_cv(const double *v, int n);

/* ---- memory and the clock, per target ---- */
typedef int (*hx_entry)(const aka_tensor *, int, aka_tensor *, int, const aka_params *);

typedef struct hx_backend {
    const char *evaluator;        /* "aka.native.c" / "aka.native.cuda" */
    const char *method;           /* timing.method */
    int l2_flush;                 /* timing.l2_flush */
    int max_copies;               /* most rotated input/output copies per shape */
    void *stream;                 /* aka_params.stream */
    void *(*alloc)(size_t bytes); /* NULL when out of memory */
    void (*release)(void *p);
    void (*upload)(void *dst, const void *host, size_t bytes);
    void (*download)(void *host, const void *src, size_t bytes);
    void (*copy)(void *dst, const void *src, size_t bytes);
    void (*fill_byte)(void *dst, unsigned char byte, size_t bytes);
    void (*before_timed)(void); /* e.g. flush the L2; may be NULL */
    /* Call fn once; return its status (or HX_CRASHED) and the elapsed µs in *us. */
    int (*call)(hx_entry fn, const aka_tensor *in, int n_in, aka_tensor *out, int n_out,
                const aka_params *p, double *us);
    /* A run-time error of the target after a call (CUDA error string), or NULL. */
    const char *(*last_error)(void);
} hx_backend;

/* Returned by hx_guarded / backend->call instead of the entry's status when the
 * entry crashed (a signal) or left the device in an error state. Both end the
 * evaluation: the process or the device context can no longer be trusted. */
#define HX_CRASHED      (-1000)
#define HX_DEVICE_ERROR (-1001)
/* Not fatal: the entry left work running outside params->stream (CUDA; message in
 * backend->last_error()). The shape fails; the evaluation goes on. */
#define HX_OFF_STREAM (-1002)

/*
 * Call fn with SIGSEGV/SIGBUS/SIGFPE/SIGILL caught: a crash inside the entry
 * returns HX_CRASHED (signal in *sig) instead of killing the harness, so the
 * result can still name the shape. *us is the CLOCK_MONOTONIC time of the call.
 */
int hx_guarded(hx_entry fn, const aka_tensor *in, int n_in, aka_tensor *out, int n_out,
               const aka_params *p, double *us);
int hx_last_signal(void);
double hx_now_us(void);

/* ---- the whole evaluation ---- */
/* Run every shape of the plan, print RESULT_JSON on the saved stdout, return the exit code. */
int hx_evaluate(const hx_plan *plan, const hx_backend *be, hx_entry reference, hx_entry candidate);

/* Save stdout for the result and point fd 1 at stderr (call first thing in main). */
int hx_take_stdout(void);
/* "RESULT_JSON=<json_text>\n" on the saved stdout. */
void hx_emit_result(const char *json_text);
/* "aka-harness: ..." on stderr. */
void hx_log(const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 1, 2)))
#endif
    ;

#ifdef __cplusplus
}
#endif

#endif
