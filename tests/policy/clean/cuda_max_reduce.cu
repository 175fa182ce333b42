/* Clean CUDA kernel: global max of a vector, two passes (block maxima, then one block). */
#include "aka_native_abi.h"

#include <cuda_runtime.h>
#include <math.h>

#define THREADS 256
#define MAX_BLOCKS 1024

__device__ static float scratch[MAX_BLOCKS]; /* the first pass's block maxima */

__device__ static float warp_max(float v)
{
    for (int off = 16; off > 0; off >>= 1)
        v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, off));
    return v;
}

__global__ void block_max(const float *x, float *out, int64_t n)
{
    __shared__ float part[THREADS / 32];
    float m = -INFINITY;
    for (int64_t i = blockIdx.x * (int64_t)THREADS + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * THREADS)
        m = fmaxf(m, x[i]);
    m = warp_max(m);
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x >> 5] = m;
    __syncthreads();
    if (threadIdx.x < 32) {
        m = threadIdx.x < THREADS / 32 ? part[threadIdx.x] : -INFINITY;
        m = warp_max(m);
        if (threadIdx.x == 0)
            out[blockIdx.x] = m;
    }
}

extern "C" int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                          const aka_params *params)
{
    float *partial;
    if (n_in != 1 || n_out != 1)
        return AKA_ERR_SHAPE;
    int64_t n = aka_numel(&inputs[0]);
    unsigned blocks = (unsigned)((n + THREADS - 1) / THREADS);
    if (blocks > MAX_BLOCKS)
        blocks = MAX_BLOCKS;
    if (cudaGetSymbolAddress((void **)&partial, scratch) != cudaSuccess)
        return AKA_ERR_LAUNCH;
    cudaStream_t s = (cudaStream_t)params->stream;
    block_max<<<blocks, THREADS, 0, s>>>((const float *)inputs[0].data, partial, n);
    block_max<<<1, THREADS, 0, s>>>(partial, (float *)outputs[0].data, blocks);
    return cudaGetLastError() == cudaSuccess ? AKA_OK : AKA_ERR_LAUNCH;
}
