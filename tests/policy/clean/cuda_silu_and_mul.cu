/* Clean CUDA kernel: out[r, j] = silu(x[r, j]) * x[r, d + j]. */
#include "aka_native_abi.h"

#include <cuda_runtime.h>

__global__ void silu_and_mul(const float *x, float *out, int64_t rows, int64_t d)
{
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= rows * d)
        return;
    int64_t r = i / d, j = i % d;
    float g = x[r * 2 * d + j], u = x[r * 2 * d + d + j];
    out[i] = g / (1.0f + __expf(-g)) * u;
}

extern "C" int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                          const aka_params *params)
{
    if (n_in != 1 || n_out != 1)
        return AKA_ERR_SHAPE;
    int64_t rows = inputs[0].shape[0], d = inputs[0].shape[1] / 2;
    unsigned blocks = (unsigned)((rows * d + 255) / 256);
    silu_and_mul<<<blocks, 256, 0, (cudaStream_t)params->stream>>>(
        (const float *)inputs[0].data, (float *)outputs[0].data, rows, d);
    return cudaGetLastError() == cudaSuccess ? AKA_OK : AKA_ERR_LAUNCH;
}
