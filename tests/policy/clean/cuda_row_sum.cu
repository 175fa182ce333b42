/* Clean CUDA kernel: per-row sum, templated on the block size, launched through a switch. */
#include "aka_native_abi.h"

#include <cuda_runtime.h>

template <int BLOCK> __global__ void row_sum(const float *x, float *y, int64_t cols)
{
    __shared__ float partial[BLOCK / 32];
    float acc = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += BLOCK)
        acc += x[blockIdx.x * cols + c];
    for (int off = 16; off > 0; off >>= 1)
        acc += __shfl_down_sync(0xffffffffu, acc, off);
    if ((threadIdx.x & 31) == 0)
        partial[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int k = 0; k < BLOCK / 32; k++)
            s += partial[k];
        y[blockIdx.x] = s;
    }
}

extern "C" int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                          const aka_params *params)
{
    if (n_in != 1 || n_out != 1)
        return AKA_ERR_SHAPE;
    int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
    cudaStream_t s = (cudaStream_t)params->stream;
    const float *x = (const float *)inputs[0].data;
    float *y = (float *)outputs[0].data;
    if (cols >= 4096)
        row_sum<512><<<(unsigned)rows, 512, 0, s>>>(x, y, cols);
    else
        row_sum<128><<<(unsigned)rows, 128, 0, s>>>(x, y, cols);
    return cudaGetLastError() == cudaSuccess ? AKA_OK : AKA_ERR_LAUNCH;
}
