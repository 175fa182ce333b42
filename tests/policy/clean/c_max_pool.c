/* Clean native C kernel: 2x2 max pooling with stride 2 over an [H, W] plane per channel. */
#include "aka_native_abi.h"

static float max4(float a, float b, float c, float d)
{
    float m = a > b ? a : b, n = c > d ? c : d;
    return m > n ? m : n;
}

int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
               const aka_params *params)
{
    (void)params;
    if (n_in != 1 || n_out != 1 || inputs[0].ndim != 3)
        return AKA_ERR_SHAPE;
    int64_t ch = inputs[0].shape[0], h = inputs[0].shape[1], w = inputs[0].shape[2];
    const float *x = (const float *)inputs[0].data;
    float *y = (float *)outputs[0].data;
    for (int64_t c = 0; c < ch; c++)
        for (int64_t i = 0; i + 1 < h; i += 2)
            for (int64_t j = 0; j + 1 < w; j += 2) {
                const float *p = x + (c * h + i) * w + j;
                y[(c * (h / 2) + i / 2) * (w / 2) + j / 2] = max4(p[0], p[1], p[w], p[w + 1]);
            }
    return AKA_OK;
}
