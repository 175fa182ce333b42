/* Red team: one element is NaN. NaN never equals a finite reference value,
 * whatever the tolerance. */
#include "aka_native_abi.h"

#include <math.h>

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)n_in, (void)n_out, (void)p;
    const float *x = in[0].data, *y = in[1].data;
    float *z = out[0].data;
    int64_t n = out[0].shape[0];
    for (int64_t i = 0; i < n; i++)
        z[i] = x[i] + y[i];
    z[n / 3] = NAN;
    return AKA_OK;
}
