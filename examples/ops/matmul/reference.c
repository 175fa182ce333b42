/*
 * matmul reference: the textbook triple loop with a double accumulator. The
 * inner loop strides through b by a whole row per step, which is exactly the
 * access pattern a tiled kernel is meant to beat.
 */
#include "aka_native_abi.h"

int aka_reference(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                  const aka_params *params)
{
    (void)params;
    if (n_in != 2 || n_out != 1)
        return AKA_ERR_SHAPE;
    if (aka_expect(&inputs[0], AKA_DT_FLOAT32, 2) || aka_expect(&inputs[1], AKA_DT_FLOAT32, 2) ||
        aka_expect(&outputs[0], AKA_DT_FLOAT32, 2))
        return AKA_ERR_DTYPE;
    const float *a = (const float *)inputs[0].data;
    const float *b = (const float *)inputs[1].data;
    float *c = (float *)outputs[0].data;
    int64_t m = inputs[0].shape[0], k = inputs[0].shape[1], n = inputs[1].shape[1];
    if (inputs[1].shape[0] != k || outputs[0].shape[0] != m || outputs[0].shape[1] != n)
        return AKA_ERR_SHAPE;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double acc = 0.0;
            for (int64_t p = 0; p < k; p++)
                acc += (double)a[i * k + p] * (double)b[p * n + j];
            c[i * n + j] = (float)acc;
        }
    return AKA_OK;
}
