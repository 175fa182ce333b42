/* row_softmax reference: three plain passes per row (max, sum of exp, normalize), in double. */
#include "aka_native_abi.h"

#include <math.h>

int aka_reference(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                  const aka_params *params)
{
    if (n_in != 1 || n_out != 1)
        return AKA_ERR_SHAPE;
    if (aka_expect(&inputs[0], AKA_DT_FLOAT32, 2) || aka_expect(&outputs[0], AKA_DT_FLOAT32, 2))
        return AKA_ERR_DTYPE;
    const float *x = (const float *)inputs[0].data;
    float *y = (float *)outputs[0].data;
    int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
    double scale = aka_param_float(params, "scale", 1.0);
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        double mx = -INFINITY, sum = 0.0;
        for (int64_t c = 0; c < cols; c++)
            mx = fmax(mx, scale * xr[c]);
        for (int64_t c = 0; c < cols; c++)
            sum += exp(scale * xr[c] - mx);
        for (int64_t c = 0; c < cols; c++)
            y[r * cols + c] = (float)(exp(scale * xr[c] - mx) / sum);
    }
    return AKA_OK;
}
