/* Red team: defines its own global clock_gettime that always returns time 0, hoping the
 * harness's clock calls bind to it, and spends 300 us per call in a busy loop that such a
 * clock would hide. Refused before it runs: a kernel may not define a function of the C
 * library or of the runner (interposition), whatever the linker would do with it. */
#define _GNU_SOURCE
#include "aka_native_abi.h"

#include <time.h>

int clock_gettime(clockid_t id, struct timespec *ts)
{
    (void)id;
    ts->tv_sec = 0;
    ts->tv_nsec = 0;
    return 0;
}

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)n_in, (void)n_out, (void)p;
    const float *x = in[0].data, *y = in[1].data;
    float *z = out[0].data;
    for (int64_t i = 0; i < out[0].shape[0]; i++)
        z[i] = x[i] + y[i];
    for (volatile long spin = 0; spin < 300000; spin++)
        ;
    return AKA_OK;
}
