/* Clean CUDA kernel: row softmax, one block per row, block-wide max and sum in shared memory. */
#include "aka_native_abi.h"

#include <cuda_runtime.h>
#include <math.h>

#define THREADS 256

__device__ static float block_reduce(float v, float *buf, bool is_max)
{
    buf[threadIdx.x] = v;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            buf[threadIdx.x] = is_max ? fmaxf(buf[threadIdx.x], buf[threadIdx.x + s])
                                      : buf[threadIdx.x] + buf[threadIdx.x + s];
        __syncthreads();
    }
    float r = buf[0];
    __syncthreads();
    return r;
}

__global__ void softmax_rows(const float *x, float *y, int64_t cols)
{
    __shared__ float buf[THREADS];
    const float *row = x + blockIdx.x * cols;
    float *out = y + blockIdx.x * cols;
    float m = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += THREADS)
        m = fmaxf(m, row[c]);
    m = block_reduce(m, buf, true);
    float s = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += THREADS)
        s += __expf(row[c] - m);
    s = block_reduce(s, buf, false);
    for (int64_t c = threadIdx.x; c < cols; c += THREADS)
        out[c] = __expf(row[c] - m) / s;
}

extern "C" int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                          const aka_params *params)
{
    if (n_in != 1 || n_out != 1 || inputs[0].ndim != 2)
        return AKA_ERR_SHAPE;
    softmax_rows<<<(unsigned)inputs[0].shape[0], THREADS, 0, (cudaStream_t)params->stream>>>(
        (const float *)inputs[0].data, (float *)outputs[0].data, inputs[0].shape[1]);
    return cudaGetLastError() == cudaSuccess ? AKA_OK : AKA_ERR_LAUNCH;
}
