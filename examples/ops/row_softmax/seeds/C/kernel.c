/*
 * row_softmax seed kernel for the built-in tuner.
 *
 * ACC independent accumulators break the serial dependency of the max and sum
 * reductions; ONLINE=1 fuses the max and sum passes (running max with rescaled
 * sum), trading one read of the row for extra exp() calls.
 */
#include "aka_native_abi.h"

#include <math.h>

/* aka:tune ACC in {1, 2, 4, 8} */
#ifndef ACC
#define ACC 4
#endif
/* aka:tune ONLINE in {0, 1} */
#ifndef ONLINE
#define ONLINE 0
#endif

static float row_max(const float *x, int64_t n, float scale)
{
    float m[ACC];
    int64_t c = 0;
    for (int a = 0; a < ACC; a++)
        m[a] = -INFINITY;
    for (; c + ACC <= n; c += ACC)
        for (int a = 0; a < ACC; a++)
            m[a] = fmaxf(m[a], scale * x[c + a]);
    for (; c < n; c++)
        m[0] = fmaxf(m[0], scale * x[c]);
    for (int a = 1; a < ACC; a++)
        m[0] = fmaxf(m[0], m[a]);
    return m[0];
}

static float row_sum_exp(const float *x, int64_t n, float scale, float mx)
{
    float s[ACC] = {0};
    int64_t c = 0;
    for (; c + ACC <= n; c += ACC)
        for (int a = 0; a < ACC; a++)
            s[a] += expf(scale * x[c + a] - mx);
    for (; c < n; c++)
        s[0] += expf(scale * x[c] - mx);
    for (int a = 1; a < ACC; a++)
        s[0] += s[a];
    return s[0];
}

/* One pass: running max m and sum s rescaled whenever m grows. */
static void row_online(const float *x, int64_t n, float scale, float *mx, float *sum)
{
    float m = -INFINITY, s = 0.0f;
    for (int64_t c = 0; c < n; c++) {
        float v = scale * x[c];
        if (v > m) {
            s = s * expf(m - v) + 1.0f;
            m = v;
        } else {
            s += expf(v - m);
        }
    }
    *mx = m;
    *sum = s;
}

int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
               const aka_params *params)
{
    if (n_in != 1 || n_out != 1)
        return AKA_ERR_SHAPE;
    const float *x = (const float *)inputs[0].data;
    float *y = (float *)outputs[0].data;
    int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
    float scale = (float)aka_param_float(params, "scale", 1.0);
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float mx, sum;
        if (ONLINE) {
            row_online(xr, cols, scale, &mx, &sum);
        } else {
            mx = row_max(xr, cols, scale);
            sum = row_sum_exp(xr, cols, scale, mx);
        }
        float inv = 1.0f / sum;
        for (int64_t c = 0; c < cols; c++)
            y[r * cols + c] = expf(scale * xr[c] - mx) * inv;
    }
    return AKA_OK;
}
