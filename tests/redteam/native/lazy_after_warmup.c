/* Red team: computes for the first few calls of each shape (correctness), then
 * returns at once (timing). No forbidden call: caught because every timed run's
 * output is checked against the reference, on freshly poisoned outputs. */
#include "aka_native_abi.h"

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)n_in, (void)n_out, (void)p;
    static int calls;
    if (++calls > 2)
        return AKA_OK;
    const float *x = in[0].data, *y = in[1].data;
    float *z = out[0].data;
    for (int64_t i = 0; i < out[0].shape[0]; i++)
        z[i] = x[i] + y[i];
    return AKA_OK;
}
