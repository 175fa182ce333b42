/* Clean CUDA kernel: C = A B with TILE x TILE shared-memory tiles. */
#include "aka_native_abi.h"

#include <cuda_runtime.h>

#define TILE 32

__global__ void matmul_tiled(const float *a, const float *b, float *c, int m, int n, int k)
{
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE + 1];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < k; k0 += TILE) {
        as[threadIdx.y][threadIdx.x] =
            row < m && k0 + threadIdx.x < k ? a[(int64_t)row * k + k0 + threadIdx.x] : 0.0f;
        bs[threadIdx.y][threadIdx.x] =
            col < n && k0 + threadIdx.y < k ? b[(int64_t)(k0 + threadIdx.y) * n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; kk++)
            acc += as[threadIdx.y][kk] * bs[kk][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n)
        c[(int64_t)row * n + col] = acc;
}

extern "C" int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                          const aka_params *params)
{
    if (n_in != 2 || n_out != 1)
        return AKA_ERR_SHAPE;
    int m = (int)inputs[0].shape[0], k = (int)inputs[0].shape[1], n = (int)inputs[1].shape[1];
    dim3 block(TILE, TILE), grid((n + TILE - 1) / TILE, (m + TILE - 1) / TILE);
    matmul_tiled<<<grid, block, 0, (cudaStream_t)params->stream>>>(
        (const float *)inputs[0].data, (const float *)inputs[1].data, (float *)outputs[0].data, m,
        n, k);
    return cudaGetLastError() == cudaSuccess ? AKA_OK : AKA_ERR_LAUNCH;
}
