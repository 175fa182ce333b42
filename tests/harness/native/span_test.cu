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
