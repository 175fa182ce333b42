/* Red team: correct everywhere except on the shape with an odd length, where one
 * element in the middle is off by 1. Caught by the comparison; only that shape fails. */
#include "aka_native_abi.h"

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)n_in, (void)n_out, (void)p;
    const float *x = in[0].data, *y = in[1].data;
    float *z = out[0].data;
    int64_t n = out[0].shape[0];
    for (int64_t i = 0; i < n; i++)
        z[i] = x[i] + y[i];
    if (n % 2 == 1)
        z[n / 2] += 1.0f;
    return AKA_OK;
}
