/* Clean native C kernel: blocked 2-D transpose (cache-sized tiles). */
#include "aka_native_abi.h"

#define TB 32

int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
               const aka_params *params)
{
    (void)params;
    if (n_in != 1 || n_out != 1)
        return AKA_ERR_SHAPE;
    int64_t m = inputs[0].shape[0], n = inputs[0].shape[1];
    const float *x = (const float *)inputs[0].data;
    float *y = (float *)outputs[0].data;
    for (int64_t i0 = 0; i0 < m; i0 += TB)
        for (int64_t j0 = 0; j0 < n; j0 += TB)
            for (int64_t i = i0; i < i0 + TB && i < m; i++)
                for (int64_t j = j0; j < j0 + TB && j < n; j++)
                    y[j * m + i] = x[i * n + j];
    return AKA_OK;
}
