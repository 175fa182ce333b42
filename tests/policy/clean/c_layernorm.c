/* Clean native C kernel: layer norm with weight and bias, accumulated in double. */
#include "aka_native_abi.h"

#include <math.h>

static void norm_row(const float *x, const float *w, const float *b, float *y, int64_t n,
                     double eps)
{
    double mean = 0.0, var = 0.0;
    for (int64_t i = 0; i < n; i++)
        mean += x[i];
    mean /= (double)n;
    for (int64_t i = 0; i < n; i++)
        var += (x[i] - mean) * (x[i] - mean);
    double rstd = 1.0 / sqrt(var / (double)n + eps);
    for (int64_t i = 0; i < n; i++)
        y[i] = (float)((x[i] - mean) * rstd) * w[i] + b[i];
}

int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
               const aka_params *params)
{
    if (n_in != 3 || n_out != 1)
        return AKA_ERR_SHAPE;
    int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
    double eps = aka_param_float(params, "eps", 1e-5);
    for (int64_t r = 0; r < rows; r++)
        norm_row((const float *)inputs[0].data + r * cols, (const float *)inputs[1].data,
                 (const float *)inputs[2].data, (float *)outputs[0].data + r * cols, cols, eps);
    return AKA_OK;
}
