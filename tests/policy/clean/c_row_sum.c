/* Clean native C kernel: per-row sum with Kahan compensation. */
#include "aka_native_abi.h"

int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
               const aka_params *params)
{
    (void)params;
    if (n_in != 1 || n_out != 1)
        return AKA_ERR_SHAPE;
    int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
    for (int64_t r = 0; r < rows; r++) {
        const float *x = (const float *)inputs[0].data + r * cols;
        float sum = 0.0f, comp = 0.0f;
        for (int64_t c = 0; c < cols; c++) {
            float yv = x[c] - comp;
            float t = sum + yv;
            comp = (t - sum) - yv;
            sum = t;
        }
        ((float *)outputs[0].data)[r] = sum;
    }
    return AKA_OK;
}
