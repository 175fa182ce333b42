/*
 * runner.h — the interface between the runner loop (runner_loop.c, one copy of
 * the protocol for both targets) and a target backend (runner_cpu.c: host
 * memory and CLOCK_MONOTONIC; runner_cuda.cu: device memory and CUDA events).
 *
 * A runner is the whole program around ONE entry point: the operator's
 * reference (refrun) or the candidate kernel (candrun). run_native.sh renames
 * that entry to aka_runner_entry. Nothing of the judge is linked in: the
 * runner knows the current shape and its tensors, and nothing else.
 *
 * C11 and C++ (nvcc) clean.
 */
#ifndef AKA_RUNNER_H
#define AKA_RUNNER_H

#include "aka_native_abi.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The current shape as the loop decoded it from the judge's descriptor. */
typedef struct rn_shape {
    int n_in, n_out, slots;
    aka_tensor *host_in;   /* slots * n_in; data in the shared mapping */
    aka_tensor *host_out;  /* slots * n_out; data in the shared mapping */
    unsigned char *poison; /* n_out: the byte each output is filled with */
    aka_params params;     /* stream filled in by the backend */
    /* The PREP request's device generation (hp_ctl.gen_key, gen_tensors): the loop checked
     * that every marked input is float32. */
    uint64_t gen_key, gen_tensors;
} rn_shape;

/* Every function returns 0 or an HP_ST_* / AKA_* status, with text in err. */
typedef struct rn_backend {
    /* ask is HP_TIMING_* (harness_proto.h); *span says whether kernel spans are on. */
    int (*setup)(int ask, int *span, int64_t *device_free, char *err, size_t n);
    /* The loop decoded a new shape: (re)allocate per-slot buffers. */
    int (*shape)(rn_shape *s, char *err, size_t n);
    /* CUDA only: inputs of slot to the device, outputs poisoned, the L2 flushed. */
    int (*prep)(const rn_shape *s, int slot, char *err, size_t n);
    /* One call of the entry on slot; *us is the backend's own measurement. */
    int (*call)(const rn_shape *s, int slot, double *us, char *err, size_t n);
    /* CUDA only: outputs of slot back into the shared mapping, and its inputs too when
     * `inputs` (FETCH; FETCH_OUT leaves them: the judge compares a sample of runs). */
    int (*fetch)(const rn_shape *s, int slot, int inputs, char *err, size_t n);
    /* CUDA only: the shape's host buffers are about to be unmapped (a new shape): drop
     * what refers to them (their page-locked registration). */
    void (*release)(void);
} rn_backend;

extern const rn_backend rn_target;

/* The entry point this runner exists for (renamed by run_native.sh). */
int aka_runner_entry(const aka_tensor *in, int n_in, aka_tensor *out, int n_out,
                     const aka_params *p);

#ifdef __cplusplus
}
#endif

#endif
