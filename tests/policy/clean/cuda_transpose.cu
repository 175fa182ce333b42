/* Clean CUDA kernel: transpose through a padded shared tile (no bank conflicts). */
#include "aka_native_abi.h"

#include <cuda_runtime.h>

#define TILE 32
#define ROWS 8

__global__ void transpose(const float *x, float *y, int m, int n)
{
    __shared__ float tile[TILE][TILE + 1];
    int col = blockIdx.x * TILE + threadIdx.x, row = blockIdx.y * TILE + threadIdx.y;
    for (int k = 0; k < TILE; k += ROWS)
        if (row + k < m && col < n)
            tile[threadIdx.y + k][threadIdx.x] = x[(int64_t)(row + k) * n + col];
    __syncthreads();
    col = blockIdx.y * TILE + threadIdx.x;
    row = blockIdx.x * TILE + threadIdx.y;
    for (int k = 0; k < TILE; k += ROWS)
        if (row + k < n && col < m)
            y[(int64_t)(row + k) * m + col] = tile[threadIdx.x][threadIdx.y + k];
}

extern "C" int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                          const aka_params *params)
{
    if (n_in != 1 || n_out != 1)
        return AKA_ERR_SHAPE;
    int m = (int)inputs[0].shape[0], n = (int)inputs[0].shape[1];
    dim3 grid((n + TILE - 1) / TILE, (m + TILE - 1) / TILE), block(TILE, ROWS);
    transpose<<<grid, block, 0, (cudaStream_t)params->stream>>>((const float *)inputs[0].data,
                                                                (float *)outputs[0].data, m, n);
    return cudaGetLastError() == cudaSuccess ? AKA_OK : AKA_ERR_LAUNCH;
}
