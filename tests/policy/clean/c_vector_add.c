/* Clean native C kernel: z = x + y. */
#include "aka_native_abi.h"

int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
               const aka_params *params)
{
    (void)params;
    if (n_in != 2 || n_out != 1)
        return AKA_ERR_SHAPE;
    const float *restrict x = (const float *)inputs[0].data;
    const float *restrict y = (const float *)inputs[1].data;
    float *restrict z = (float *)outputs[0].data;
    int64_t n = aka_numel(&outputs[0]);
    for (int64_t i = 0; i < n; i++)
        z[i] = x[i] + y[i];
    return AKA_OK;
}
