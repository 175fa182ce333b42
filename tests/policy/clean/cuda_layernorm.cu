/* Clean CUDA kernel: layer norm, one warp per row, Welford-free two-pass in registers. */
#include "aka_native_abi.h"

#include <cuda_runtime.h>

__device__ static float warp_sum(float v)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

__global__ void layernorm(const float *x, const float *w, const float *b, float *y, int64_t rows,
                          int64_t cols, float eps)
{
    int64_t r = blockIdx.x * (int64_t)(blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x & 31;
    if (r >= rows)
        return;
    const float *xr = x + r * cols;
    float s = 0.0f;
    for (int64_t c = lane; c < cols; c += 32)
        s += xr[c];
    float mean = warp_sum(s) / cols;
    float v = 0.0f;
    for (int64_t c = lane; c < cols; c += 32)
        v += (xr[c] - mean) * (xr[c] - mean);
    float rstd = rsqrtf(warp_sum(v) / cols + eps);
    for (int64_t c = lane; c < cols; c += 32)
        y[r * cols + c] = (xr[c] - mean) * rstd * w[c] + b[c];
}

extern "C" int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                          const aka_params *params)
{
    if (n_in != 3 || n_out != 1)
        return AKA_ERR_SHAPE;
    int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
    float eps = (float)aka_param_float(params, "eps", 1e-5);
    unsigned blocks = (unsigned)((rows + 7) / 8);
    layernorm<<<blocks, 256, 0, (cudaStream_t)params->stream>>>(
        (const float *)inputs[0].data, (const float *)inputs[1].data,
        (const float *)inputs[2].data, (float *)outputs[0].data, rows, cols, eps);
    return cudaGetLastError() == cudaSuccess ? AKA_OK : AKA_ERR_LAUNCH;
}
