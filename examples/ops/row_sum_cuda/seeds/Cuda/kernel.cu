/*
 * row_sum_cuda seed kernel for the built-in tuner: one block per row, each
 * thread strides the row (coalesced), then a warp-shuffle tree reduces the
 * partial sums. BLOCK, the threads per block, is the knob.
 */
#include "aka_native_abi.h"

#include <cuda_runtime.h>

/* aka:tune BLOCK in {64, 128, 256, 512} */
#ifndef BLOCK
#define BLOCK 256
#endif

__device__ static float warp_sum(float v)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

__global__ static void __launch_bounds__(BLOCK) row_sum(const float *x, float *y, int64_t cols)
{
    __shared__ float partial[BLOCK / 32];
    const float *row = x + (int64_t)blockIdx.x * cols;
    float acc = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += BLOCK)
        acc += row[c];
    acc = warp_sum(acc);
    if ((threadIdx.x & 31) == 0)
        partial[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
        acc = threadIdx.x < BLOCK / 32 ? partial[threadIdx.x] : 0.0f;
        acc = warp_sum(acc);
        if (threadIdx.x == 0)
            y[blockIdx.x] = acc;
    }
}

extern "C" int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                          const aka_params *params)
{
    if (n_in != 1 || n_out != 1)
        return AKA_ERR_SHAPE;
    int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
    if (rows > 0x7fffffff)
        return AKA_ERR_SHAPE;
    row_sum<<<(unsigned)rows, BLOCK, 0, (cudaStream_t)params->stream>>>(
        (const float *)inputs[0].data, (float *)outputs[0].data, cols);
    return cudaGetLastError() == cudaSuccess ? AKA_OK : AKA_ERR_LAUNCH;
}
