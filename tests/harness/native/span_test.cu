/*
 * span_test.cu — the native CUDA runner's kernel-span code (runner_cuda.cu: span_start,
 * the CUPTI buffer callbacks, span_us) against tests/harness/python/fakes/fake_cupti.c,
 * without a GPU: nothing here calls the CUDA runtime. Built and run by
 * tests/integration/native_span.sh (skipped without nvcc):
 *
 *   span_test FAKE_LIB         exit 0 when every check holds, else 1 naming the check.
 *
 * The fake advances its clock 100 ns per timestamp and delivers, per flush, a launch
 * inside the window with a memset and a kernel spanning 2,400 ns, and an older launch
 * whose kernel must not count.
 */
#include "../../../runtime/harness/native/runner_cuda.cu"

#include <cstddef>

#if __has_include(<cupti_activity.h>)
#include <cupti_activity.h>
/* The offsets runner_cuda.cu reads are the header's (CUDA 13.0 names). */
static_assert(AT_API_START == offsetof(CUpti_ActivityAPI, start), "API start");
static_assert(AT_API_CORR == offsetof(CUpti_ActivityAPI, correlationId), "API correlationId");
static_assert(AT_GPU_START == offsetof(CUpti_ActivityKernel10, start), "kernel start");
static_assert(AT_GPU_END == offsetof(CUpti_ActivityKernel10, end), "kernel end");
static_assert(AT_KERNEL_CORR == offsetof(CUpti_ActivityKernel10, correlationId), "kernel corr");
static_assert(AT_GPU_START == offsetof(CUpti_ActivityMemcpy6, start), "memcpy start");
static_assert(AT_GPU_END == offsetof(CUpti_ActivityMemset4, end), "memset end");
static_assert(AT_COPY_CORR == offsetof(CUpti_ActivityMemcpy6, correlationId), "memcpy corr");
static_assert(AT_COPY_CORR == offsetof(CUpti_ActivityMemset4, correlationId), "memset corr");
static_assert((int)K_CONC == (int)CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kind");
static_assert((int)K_KERNEL == (int)CUPTI_ACTIVITY_KIND_KERNEL, "kind");
static_assert((int)K_RUNTIME == (int)CUPTI_ACTIVITY_KIND_RUNTIME, "kind");
static_assert((int)K_DRIVER == (int)CUPTI_ACTIVITY_KIND_DRIVER, "kind");
static_assert((int)K_MEMCPY == (int)CUPTI_ACTIVITY_KIND_MEMCPY, "kind");
static_assert((int)K_MEMSET == (int)CUPTI_ACTIVITY_KIND_MEMSET, "kind");
#endif

extern "C" int aka_runner_entry(const aka_tensor *in, int n_in, aka_tensor *out, int n_out,
                                const aka_params *p)
{
    (void)in, (void)n_in, (void)out, (void)n_out, (void)p;
    return 0;
}

static int failures;

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "span_test: FAIL: %s\n", what);
        failures++;
    }
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    setenv("AKA_CUPTI_LIBRARY", argv[1], 1);
    setenv("FAKE_CUPTI_FAIL", "enable", 1);
    const char *why = span_start();
    check(why && strstr(why, "cuptiActivityEnable"), "a failing enable is named");
    check(!g_span.on, "spans stay off after a failed start");
    unsetenv("FAKE_CUPTI_FAIL");
    why = span_start();
    check(why == NULL && g_span.on, "the fake library starts");
    for (int round = 0; round < 3; round++) { /* buffers are freed and requested again */
        uint64_t t0 = 0, t1 = 0;
        g_span.timestamp(&t0);
        g_span.timestamp(&t1);
        g_span.flush_all(1);
        double us = span_us(t0, t1);
        check(us > 2.399 && us < 2.401, "the span is the window's memset start to kernel end");
    }
    uint64_t t0 = 0, t1 = 0;
    g_span.timestamp(&t0);
    g_span.timestamp(&t1);
    check(span_us(t0, t1) < 0, "nothing delivered since the last flush: no span");
    setenv("FAKE_CUPTI_EMPTY", "1", 1);
    g_span.flush_all(1);
    check(span_us(t0, t1) < 0, "an empty flush: no span");
    if (failures == 0)
        printf("span_test: ok\n");
    return failures ? 1 : 0;
}
