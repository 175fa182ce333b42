/* Clean native C kernel: row softmax with the row maximum subtracted. */
#include "aka_native_abi.h"

#include <math.h>

int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
               const aka_params *params)
{
    (void)params;
    if (n_in != 1 || n_out != 1 || inputs[0].ndim != 2)
        return AKA_ERR_SHAPE;
    int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
    const float *x = (const float *)inputs[0].data;
    float *y = (float *)outputs[0].data;
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        float m = -INFINITY, s = 0.0f;
        for (int64_t c = 0; c < cols; c++)
            m = xr[c] > m ? xr[c] : m;
        for (int64_t c = 0; c < cols; c++)
            s += yr[c] = expf(xr[c] - m);
        for (int64_t c = 0; c < cols; c++)
            yr[c] /= s;
    }
    return AKA_OK;
}
