/* Clean native C kernel: out = silu(gate) * up over rows of [gate | up]. */
#include "aka_native_abi.h"

#include <math.h>

static inline float silu(float g)
{
    return g / (1.0f + expf(-g));
}

int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
               const aka_params *params)
{
    (void)params;
    if (n_in != 1 || n_out != 1)
        return AKA_ERR_SHAPE;
    int64_t rows = inputs[0].shape[0], d = inputs[0].shape[1] / 2;
    const float *x = (const float *)inputs[0].data;
    float *out = (float *)outputs[0].data;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < d; j++)
            out[r * d + j] = silu(x[r * 2 * d + j]) * x[r * 2 * d + d + j];
    return AKA_OK;
}
