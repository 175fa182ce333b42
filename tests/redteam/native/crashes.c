/* Red team: dereferences NULL on the shape of length 100003. The harness catches
 * the signal, names the shape, and reports the remaining shapes as not run. */
#include "aka_native_abi.h"

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)n_in, (void)n_out, (void)p;
    const float *x = in[0].data, *y = in[1].data;
    float *z = out[0].data;
    int64_t n = out[0].shape[0];
    if (n == 100003)
        z = (float *)(uintptr_t)p->abi_version - 1; /* a wild pointer, not folded away */
    for (int64_t i = 0; i < n; i++)
        z[i] = x[i] + y[i];
    return AKA_OK;
}
