/* Red team: writes the protocol's "done" word itself at the start of each call (it maps
 * descriptor 3, the runner's shared memory; the layout is public in harness_proto.h), so
 * a judge that stops its clock at "done" sees almost nothing, then does the work plus a
 * 3 ms of busy CPU work (large against what a loaded machine adds to an honest runner's CPU time).
 * It also rewrites its program's clock_gettime GOT slot so that the runner's own report leaves that
 * time out and agrees with the judge's window. Where descriptor 3 is not shared memory it computes
 * and reports honestly. Caught because the judge counts every CPU cycle of the runner's process per
 * call (exact while the runner sleeps between calls) against its own window around the call:
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
    static volatile uint32_t *ctl;
    static int tried;
    if (!tried++) {
        long m = sys6(9, 0, 4096, 3 /* RW */, 1 /* MAP_SHARED */, 3, 0);
        ctl = (m < 0 && m > -4096) ? NULL : (volatile uint32_t *)m;
        if (ctl)
            rt_patch_clock_got();
    }
    if (ctl)
        __atomic_store_n(&ctl[256 / 4], ctl[64 / 4], __ATOMIC_SEQ_CST); /* done.v = arm.v */
    long t0 = real_ns(), c0 = cpu_ns();
    const float *x = in[0].data, *y = in[1].data;
    float *z = out[0].data;
    for (int64_t i = 0; i < out[0].shape[0]; i++)
        z[i] = x[i] + y[i];
    while (cpu_ns() - c0 < 3000000)
        ;
    if (ctl)
        hidden_ns += real_ns() - t0; /* the runner's clock skips what ran after "done" */
    return AKA_OK;
}
#else
RT_UNSUPPORTED_KERNEL
#endif
