/* Clean native C kernel: RMS norm, four partial sums to break the add dependency chain. */
#include "aka_native_abi.h"

#include <math.h>

int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
               const aka_params *params)
{
    if (n_in != 2 || n_out != 1)
        return AKA_ERR_SHAPE;
    int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
    const float *w = (const float *)inputs[1].data;
    float eps = (float)aka_param_float(params, "eps", 1e-6);
    for (int64_t r = 0; r < rows; r++) {
        const float *x = (const float *)inputs[0].data + r * cols;
        float *y = (float *)outputs[0].data + r * cols;
        float s[4] = {0};
        int64_t c = 0;
        for (; c + 4 <= cols; c += 4)
            for (int u = 0; u < 4; u++)
                s[u] += x[c + u] * x[c + u];
        for (; c < cols; c++)
            s[0] += x[c] * x[c];
        float scale = 1.0f / sqrtf((s[0] + s[1] + s[2] + s[3]) / (float)cols + eps);
        for (c = 0; c < cols; c++)
            y[c] = x[c] * scale * w[c];
    }
    return AKA_OK;
}
