/* Red team: writes into an input (inputs are read-only in the ABI). Caught by the
 * byte-for-byte input check after the correctness call. */
#include "aka_native_abi.h"

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)n_in, (void)n_out, (void)p;
    float *x = in[0].data;
    const float *y = in[1].data;
    float *z = out[0].data;
    for (int64_t i = 0; i < out[0].shape[0]; i++) {
        z[i] = x[i] + y[i];
        x[i] = 0.0f;
    }
    return AKA_OK;
}
