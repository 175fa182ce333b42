/* Clean native C kernel: dot product with eight independent accumulators. */
#include "aka_native_abi.h"

int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
               const aka_params *params)
{
    (void)params;
    if (n_in != 2 || n_out != 1)
        return AKA_ERR_SHAPE;
    const float *a = (const float *)inputs[0].data, *b = (const float *)inputs[1].data;
    int64_t n = aka_numel(&inputs[0]), i = 0;
    double acc[8] = {0};
    for (; i + 8 <= n; i += 8)
        for (int u = 0; u < 8; u++)
            acc[u] += (double)a[i + u] * b[i + u];
    for (; i < n; i++)
        acc[0] += (double)a[i] * b[i];
    double s = 0.0;
    for (int u = 0; u < 8; u++)
        s += acc[u];
    *(float *)outputs[0].data = (float)s;
    return AKA_OK;
}
