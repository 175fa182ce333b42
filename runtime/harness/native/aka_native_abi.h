/*
 * aka_native_abi.h — the destination-passing C ABI between aka's native harness
 * and an operator's reference and candidate kernels (layout "aka.native.v1").
 *
 * The harness ships this header; an operator's reference.c / reference.cu and
 * every candidate kernel.c / kernel.cu include it and export one function each:
 *
 *     int aka_reference(const aka_tensor *inputs, int n_in,
 *                       aka_tensor *outputs, int n_out, const aka_params *params);
 *     int aka_kernel(const aka_tensor *inputs, int n_in,
 *                    aka_tensor *outputs, int n_out, const aka_params *params);
 *
 * (operator.json may rename them with "reference_entry" and "entry"). Each is
 * linked into its own runner program (refrun, candrun) beside the runner loop
 * only; aka's judge, a separate process, drives both and decides the verdict.
 *
 * Contract, per call:
 *   - inputs[] and outputs[] follow the order of operator.json "tensors" (inputs
 *     in their order, outputs in theirs). Shapes are already resolved for the
 *     shape being run; every tensor is dense, contiguous and row-major (the last
 *     dimension varies fastest), and aligned to at least 64 bytes.
 *   - Destination passing: the harness owns every buffer. The function writes
 *     its results into outputs[i].data and must not allocate, free, or keep
 *     pointers to any of them after it returns. Inputs are read-only. Output
 *     buffers hold garbage on entry (the harness may poison them), so every
 *     element must be written.
 *   - Return 0 on success; any other value is reported as a failed run of the
 *     shape (use AKA_ERR_* below). Printing goes to stderr (a runner has no
 *     stdout of the job's).
 *   - For language "c", data pointers are host memory and the call runs on the
 *     calling thread only: the judge counts every CPU cycle of the runner's
 *     process against its clock around the call, so threads are timed as work
 *     outside the call, and a thread alive after the call fails the shape.
 *   - For language "cuda", data pointers are device memory on the current
 *     device; all work must be enqueued on params->stream (a cudaStream_t). The
 *     harness synchronizes the stream after the call and times the launch with
 *     events on that stream; work on other streams is neither timed nor waited
 *     for, so it is a correctness bug.
 *   - The function must be deterministic given its inputs and must not read
 *     files, the environment, the clock, or anything outside its arguments,
 *     and must not keep state that changes its result: inputs are fresh for
 *     every timed run and outputs of timed runs are checked.
 *
 * Compile-time knobs: a kernel may declare tunable macros in a comment whose
 * text is `aka:tune BLOCK in {16, 32, 64}` (one knob per comment). The tuner
 * passes each chosen value as -DBLOCK=32, so the kernel must give every knob
 * a default with #ifndef BLOCK / #define BLOCK 32 / #endif.
 *
 * This file is C11 and C++ (nvcc) clean, and has no dependency beyond <stdint.h>.
 */
#ifndef AKA_NATIVE_ABI_H
#define AKA_NATIVE_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change; operator.json "abi.version" must match. */
#define AKA_NATIVE_ABI_VERSION 1

/* Most dimensions a tensor may have. */
#define AKA_MAX_DIMS 8

/* Element types; the numbers are part of the ABI. */
enum {
    AKA_DT_FLOAT32 = 0,
    AKA_DT_FLOAT64 = 1,
    AKA_DT_FLOAT16 = 2,  /* IEEE binary16, stored as uint16_t */
    AKA_DT_BFLOAT16 = 3, /* upper half of a float32, stored as uint16_t */
    AKA_DT_INT8 = 4,
    AKA_DT_INT16 = 5,
    AKA_DT_INT32 = 6,
    AKA_DT_INT64 = 7,
    AKA_DT_UINT8 = 8,
    AKA_DT_BOOL = 9 /* one byte, 0 or 1 */
};

/* Return codes; anything non-zero fails the shape. */
enum {
    AKA_OK = 0,
    AKA_ERR_SHAPE = 1,       /* a tensor's shape is not one the kernel supports */
    AKA_ERR_DTYPE = 2,       /* a tensor's dtype is not one the kernel supports */
    AKA_ERR_UNSUPPORTED = 3, /* a parameter value the kernel does not handle */
    AKA_ERR_LAUNCH = 4       /* a CUDA launch or runtime error */
};

typedef struct aka_tensor {
    void *data;                  /* first element; see the contract above */
    int64_t shape[AKA_MAX_DIMS]; /* sizes of dims 0..ndim-1; the rest are 0 */
    int32_t ndim;                /* 0 for a scalar tensor (one element) */
    int32_t dtype;               /* AKA_DT_* */
    const char *name;            /* the tensor's name in operator.json */
} aka_tensor;

/* One named value: a dim of the current shape, or an operator.json param. */
typedef struct aka_value {
    const char *name;
    int32_t is_float; /* 1: use f; 0: use i */
    int64_t i;
    double f;
} aka_value;

typedef struct aka_params {
    int32_t abi_version;   /* AKA_NATIVE_ABI_VERSION of the harness */
    const char *shape_id;  /* the shape being run (for diagnostics only) */
    const aka_value *dims; /* every dim of operator.json, resolved for this shape */
    int32_t n_dims;
    const aka_value *params; /* every param of operator.json, resolved for this shape */
    int32_t n_params;
    void *stream; /* CUDA: the cudaStream_t to launch on; C: NULL */
} aka_params;

typedef int (*aka_entry_fn)(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                            const aka_params *params);

/* The default entry points (see operator.json "entry" / "reference_entry"). */
int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
               const aka_params *params);
int aka_reference(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                  const aka_params *params);

/* Number of elements of t (1 for a scalar). */
static inline int64_t aka_numel(const aka_tensor *t)
{
    int64_t n = 1;
    for (int32_t d = 0; d < t->ndim; d++)
        n *= t->shape[d];
    return n;
}

/* Look a value up by name; fallback when absent. */
static inline const aka_value *aka_find_value(const aka_value *v, int32_t n, const char *name)
{
    for (int32_t k = 0; k < n; k++)
        if (strcmp(v[k].name, name) == 0)
            return &v[k];
    return NULL;
}

static inline int64_t aka_dim(const aka_params *p, const char *name, int64_t fallback)
{
    const aka_value *v = aka_find_value(p->dims, p->n_dims, name);
    return v ? v->i : fallback;
}

static inline int64_t aka_param_int(const aka_params *p, const char *name, int64_t fallback)
{
    const aka_value *v = aka_find_value(p->params, p->n_params, name);
    return v ? (v->is_float ? (int64_t)v->f : v->i) : fallback;
}

static inline double aka_param_float(const aka_params *p, const char *name, double fallback)
{
    const aka_value *v = aka_find_value(p->params, p->n_params, name);
    return v ? (v->is_float ? v->f : (double)v->i) : fallback;
}

/* Check the call's arity and each tensor's dtype and rank; 0 when they match. */
static inline int aka_expect(const aka_tensor *t, int32_t dtype, int32_t ndim)
{
    if (t->dtype != dtype)
        return AKA_ERR_DTYPE;
    return t->ndim == ndim ? AKA_OK : AKA_ERR_SHAPE;
}

#ifdef __cplusplus
}
#endif

#endif
