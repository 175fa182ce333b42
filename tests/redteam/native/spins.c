/* Red team: never returns on the shape of length 100003. The sandbox's wall-clock
 * limit ends it; the failure names the shape from the harness's progress line. */
#include "aka_native_abi.h"

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)n_in, (void)n_out, (void)p;
    const float *x = in[0].data, *y = in[1].data;
    volatile float *z = out[0].data;
    int64_t n = out[0].shape[0];
    while (n == 100003)
        z[0] = x[0];
    for (int64_t i = 0; i < n; i++)
        z[i] = x[i] + y[i];
    return AKA_OK;
}
