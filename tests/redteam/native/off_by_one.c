/* Red team: the loop stops one element short, so z[n-1] is never written.
 * Caught by output poisoning (the last element still holds the NaN pattern). */
#include "aka_native_abi.h"

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)n_in, (void)n_out, (void)p;
    const float *x = in[0].data, *y = in[1].data;
    float *z = out[0].data;
    for (int64_t i = 0; i + 1 < out[0].shape[0]; i++)
        z[i] = x[i] + y[i];
    return AKA_OK;
}
