/*
 * harness.c — aka's native harness for C kernels on the CPU: the host-memory
 * backend of harness_core.h and main().
 *
 * Built inside the sandbox by run_native.sh together with the operator's
 * reference.c and the candidate's kernel.c, whose entry points the script
 * renames to the two private symbols below (so the kernel's own names, even
 * "aka_reference", can never collide with the reference's or the harness's):
 *
 *     ./harness plan.json      → one RESULT_JSON line on stdout; exit 0 iff all pass
 *
 * Timing is CLOCK_MONOTONIC around the call, nothing else inside the interval;
 * cold caches come from the rotating copies in harness_flow.c, not from a flush.
 */
#define _GNU_SOURCE
#include "harness_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int aka_harness_reference_entry(const aka_tensor *in, int n_in, aka_tensor *out, int n_out,
                                const aka_params *p);
int aka_harness_candidate_entry(const aka_tensor *in, int n_in, aka_tensor *out, int n_out,
                                const aka_params *p);

static void *cpu_alloc(size_t bytes)
{
    /* 64-byte alignment is the ABI's promise; rounding keeps aligned_alloc valid. */
    return aligned_alloc(64, (bytes + 63) / 64 * 64);
}

static void cpu_upload(void *dst, const void *host, size_t bytes)
{
    memcpy(dst, host, bytes);
}

static void cpu_fill(void *dst, unsigned char byte, size_t bytes)
{
    memset(dst, byte, bytes);
}

static int cpu_call(hx_entry fn, const aka_tensor *in, int n_in, aka_tensor *out, int n_out,
                    const aka_params *p, double *us)
{
    return hx_guarded(fn, in, n_in, out, n_out, p, us);
}

int main(int argc, char **argv)
{
    hx_plan plan;
    char why[512];
    hx_backend be;
    int rc;

    if (hx_take_stdout() < 0) {
        hx_log("cannot set up stdout");
        return HX_EXIT_ENV;
    }
    if (argc != 2) {
        hx_log("usage: %s plan.json", argv[0]);
        return HX_EXIT_PLAN;
    }
    if (hx_plan_load(argv[1], &plan, why, sizeof(why)) < 0) {
        hx_log("plan %s: %s", argv[1], why);
        hx_plan_free(&plan);
        return HX_EXIT_PLAN;
    }
    memset(&be, 0, sizeof(be));
    be.evaluator = "aka.native.c";
    be.method = "cpu_monotonic";
    be.max_copies = 64;
    be.alloc = cpu_alloc;
    be.release = free;
    be.upload = cpu_upload;
    be.download = cpu_upload;
    be.copy = cpu_upload;
    be.fill_byte = cpu_fill;
    be.call = cpu_call;
    rc = hx_evaluate(&plan, &be, aka_harness_reference_entry, aka_harness_candidate_entry);
    hx_plan_free(&plan);
    return rc;
}
