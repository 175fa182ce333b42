/*
 * harness_cuda.cu — aka's native harness for CUDA kernels: the device backend
 * of harness_core.h and main(). Same plan, same inputs (generated on the host
 * with the same PRNG and copied), same verdict rules as the CPU harness; only
 * memory and timing differ.
 *
 * Timing of one launch (harness_flow.c calls before_timed, then call):
 *   1. outputs were poisoned with cudaMemsetAsync at the start of the round;
 *   2. an L2 flush: cudaMemsetAsync over a buffer of 2x the device's L2 size
 *      (cudaDevAttrL2CacheSize), so no launch finds the previous one's data in L2;
 *   3. event `start` on params->stream, the entry point, event `end` on the same
 *      stream, then cudaGetLastError and a cudaDeviceSynchronize, both checked;
 *   4. latency = elapsed(start, end). A third event on the legacy default stream,
 *      recorded right after `end`, completes only when all blocking streams are
 *      idle: when it lands later than `end` by more than the host took between
 *      the two records plus 20 us plus 10%, the entry left work on another stream
 *      (untimed), and the shape fails instead of reporting a fake speed. Creating
 *      non-blocking streams is a forbidden call (forbidden_symbols.txt).
 * Every CUDA call is checked; an error ends the evaluation (the context may be
 * unusable) and names the failing call.
 */
#include "harness_core.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" int aka_harness_reference_entry(const aka_tensor *in, int n_in, aka_tensor *out,
                                           int n_out, const aka_params *p);
extern "C" int aka_harness_candidate_entry(const aka_tensor *in, int n_in, aka_tensor *out,
                                           int n_out, const aka_params *p);

/* Off-stream work shorter than this (µs), plus 10% of the launch, is host jitter. */
#define OFF_STREAM_SLACK_US 20.0

static cudaStream_t g_stream;
static cudaEvent_t g_start, g_end, g_fence;
static void *g_flush;
static size_t g_flush_bytes;
static unsigned g_flush_value;
static int g_failed; /* a CUDA call failed: every later call reports HX_DEVICE_ERROR */
static char g_err[512];

static bool ok(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return true;
    if (!g_failed)
        snprintf(g_err, sizeof(g_err), "%s: %s (%s)", what, cudaGetErrorName(e),
                 cudaGetErrorString(e));
    g_failed = 1;
    return false;
}

static void *dev_alloc(size_t bytes)
{
    void *p = NULL;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
        cudaGetLastError(); /* out of memory is reported by the caller, not sticky */
        return NULL;
    }
    return p;
}

static void dev_release(void *p)
{
    ok(cudaFree(p), "cudaFree");
}

static void dev_upload(void *dst, const void *host, size_t bytes)
{
    ok(cudaMemcpy(dst, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy (inputs to device)");
}

static void dev_download(void *host, const void *src, size_t bytes)
{
    ok(cudaMemcpy(host, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy (outputs to host)");
}

static void dev_copy(void *dst, const void *src, size_t bytes)
{
    ok(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, g_stream),
       "cudaMemcpyAsync (input rotation)");
}

static void dev_fill(void *dst, unsigned char byte, size_t bytes)
{
    ok(cudaMemsetAsync(dst, byte, bytes, g_stream), "cudaMemsetAsync (output poison)");
}

static void flush_l2(void)
{
    /* A different value each time, so no driver or hardware shortcut can skip it. */
    ok(cudaMemsetAsync(g_flush, (int)(g_flush_value++ & 0xFF), g_flush_bytes, g_stream),
       "cudaMemsetAsync (L2 flush)");
}

static const char *dev_last_error(void)
{
    return g_err[0] ? g_err : NULL;
}

/* Host µs between recording `end` and recording `fence`: an honest fence can lag `end` by
 * that much when the GPU was already idle, so it is not counted against the kernel. */
static double g_record_gap_us;

static int measure(double *us)
{
    float ms = 0, fence_ms = 0;
    if (!ok(cudaEventElapsedTime(&ms, g_start, g_end), "cudaEventElapsedTime") ||
        !ok(cudaEventElapsedTime(&fence_ms, g_start, g_fence), "cudaEventElapsedTime"))
        return HX_DEVICE_ERROR;
    *us = (double)ms * 1e3;
    double behind = ((double)fence_ms - (double)ms) * 1e3 - g_record_gap_us;
    if (behind > OFF_STREAM_SLACK_US + 0.1 * (double)fence_ms * 1e3) {
        snprintf(g_err, sizeof(g_err),
                 "the device was busy %.1f us after the last work on params->stream ended "
                 "(%.1f us); other streams are neither timed nor allowed",
                 behind, *us);
        return HX_OFF_STREAM;
    }
    g_err[0] = '\0';
    return 0;
}

static int dev_call(hx_entry fn, const aka_tensor *in, int n_in, aka_tensor *out, int n_out,
                    const aka_params *p, double *us)
{
    double host_us;
    if (g_failed || !ok(cudaEventRecord(g_start, g_stream), "cudaEventRecord (start)"))
        return HX_DEVICE_ERROR;
    int rc = hx_guarded(fn, in, n_in, out, n_out, p, &host_us);
    if (rc == HX_CRASHED)
        return rc;
    bool launched = ok(cudaGetLastError(), "the entry point's launch (cudaGetLastError)");
    double h0 = hx_now_us();
    if (!launched || !ok(cudaEventRecord(g_end, g_stream), "cudaEventRecord (end)") ||
        !ok(cudaEventRecord(g_fence, cudaStreamLegacy), "cudaEventRecord (fence)"))
        return HX_DEVICE_ERROR;
    g_record_gap_us = hx_now_us() - h0;
    if (!ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the entry point"))
        return HX_DEVICE_ERROR;
    return rc != 0 ? rc : measure(us);
}

static int setup_device(void)
{
    int count = 0, l2 = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
        hx_log("no CUDA device is visible: %s", cudaGetErrorString(cudaGetLastError()));
        return -1;
    }
    if (!ok(cudaSetDevice(0), "cudaSetDevice") ||
        !ok(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), "cudaDeviceGetAttribute") ||
        !ok(cudaStreamCreate(&g_stream), "cudaStreamCreate") ||
        !ok(cudaEventCreate(&g_start), "cudaEventCreate") ||
        !ok(cudaEventCreate(&g_end), "cudaEventCreate") ||
        !ok(cudaEventCreate(&g_fence), "cudaEventCreate")) {
        hx_log("%s", g_err);
        return -1;
    }
    g_flush_bytes = 2 * (size_t)(l2 > (4 << 20) ? l2 : (4 << 20));
    if (!ok(cudaMalloc(&g_flush, g_flush_bytes), "cudaMalloc (L2 flush buffer)")) {
        hx_log("%s", g_err);
        return -1;
    }
    hx_log("device 0: L2 %d bytes, flush buffer %zu bytes", l2, g_flush_bytes);
    return 0;
}

/* Two copies of a shape may take at most a quarter of the free device memory. */
static void limit_budget(hx_plan *plan)
{
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
        return;
    int64_t cap = (int64_t)(free_b / 4);
    if (plan->rotate_budget <= 0 || plan->rotate_budget > cap)
        plan->rotate_budget = cap;
}

static void fill_backend(hx_backend *be)
{
    memset(be, 0, sizeof(*be));
    be->evaluator = "aka.native.cuda";
    be->method = "cuda_event";
    be->l2_flush = 1;
    be->max_copies = 2;
    be->stream = (void *)g_stream;
    be->alloc = dev_alloc;
    be->release = dev_release;
    be->upload = dev_upload;
    be->download = dev_download;
    be->copy = dev_copy;
    be->fill_byte = dev_fill;
    be->before_timed = flush_l2;
    be->call = dev_call;
    be->last_error = dev_last_error;
}

int main(int argc, char **argv)
{
    hx_plan plan;
    hx_backend be;
    char why[512];
    if (hx_take_stdout() < 0)
        return HX_EXIT_ENV;
    if (argc != 2) {
        hx_log("usage: %s plan.json", argv[0]);
        return HX_EXIT_PLAN;
    }
    if (hx_plan_load(argv[1], &plan, why, sizeof(why)) < 0) {
        hx_log("plan %s: %s", argv[1], why);
        hx_plan_free(&plan);
        return HX_EXIT_PLAN;
    }
    if (setup_device() < 0) {
        hx_plan_free(&plan);
        return HX_EXIT_ENV;
    }
    limit_budget(&plan);
    fill_backend(&be);
    int rc = hx_evaluate(&plan, &be, aka_harness_reference_entry, aka_harness_candidate_entry);
    hx_plan_free(&plan);
    return rc;
}
