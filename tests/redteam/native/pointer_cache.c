/* Red team: caches each output by input pointer and replays it when the same
 * buffers come back (the hack behind several published fake speedups). Caught
 * because the harness moves input contents between addresses between rounds of
 * timed runs and checks every run's output. */
#include "aka_native_abi.h"

#include <stdlib.h>
#include <string.h>

#define SLOTS 128

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)n_in, (void)n_out, (void)p;
    static const void *keys[SLOTS];
    static float *vals[SLOTS];
    int64_t n = out[0].shape[0];
    for (int s = 0; s < SLOTS; s++)
        if (keys[s] == in[0].data && vals[s]) {
            memcpy(out[0].data, vals[s], (size_t)n * sizeof(float));
            return AKA_OK;
        }
    const float *x = in[0].data, *y = in[1].data;
    float *z = out[0].data;
    for (int64_t i = 0; i < n; i++)
        z[i] = x[i] + y[i];
    for (int s = 0; s < SLOTS; s++)
        if (!keys[s]) {
            keys[s] = in[0].data;
            vals[s] = malloc((size_t)n * sizeof(float));
            memcpy(vals[s], z, (size_t)n * sizeof(float));
            break;
        }
    return AKA_OK;
}
