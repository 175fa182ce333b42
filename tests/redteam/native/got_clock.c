/* Red team: rewrites the clock_gettime slot of its own program's GOT (found through
 * _DYNAMIC, made writable with an inline mprotect) with a clock that hides 99% of the
 * time the kernel spends, then does the work plus 3 ms of busy CPU work (large against what a
 * loaded machine adds to an honest runner's CPU time). In a harness that times the kernel with a
 * clock in the kernel's process, that is a 100x "speedup". Caught because the judge times every
 * call with its own clock in its own process and finds the runner's reported time short of it:
 * "timing tampered". */
#define _GNU_SOURCE
#include "redteam_x86.h" /* its text, put in place by redteam_native.sh */

#include <elf.h>
#include <string.h>
#include <time.h>

#if RT_X86

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)n_in, (void)n_out, (void)p;
    static int patched;
    if (!patched++)
        rt_patch_clock_got();
    long t0 = real_ns(), c0 = cpu_ns();
    const float *x = in[0].data, *y = in[1].data;
    float *z = out[0].data;
    for (int64_t i = 0; i < out[0].shape[0]; i++)
        z[i] = x[i] + y[i];
    while (cpu_ns() - c0 < 3000000)
        ;
    hidden_ns += (real_ns() - t0) / 100 * 99;
    return AKA_OK;
}
#else
RT_UNSUPPORTED_KERNEL
#endif
