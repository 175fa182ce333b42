/* Red team (CUDA, examples/ops/row_sum_cuda): sums the rows correctly, but from the 9th
 * call of a shape on (past the correctness calls) it then flips the lowest mantissa bit of
 * every element of the first row of x on params->stream, as a kernel using its input as
 * scratch would. The outputs are computed before the change, so they match. Caught
 * because, on a device, the judge compares a secret sample of the timed runs' inputs with
 * what it generated for them, bit for bit: a kernel that writes on every timed run fails
 * on the first sampled one ("inputs modified during a timed run"). */
#include "aka_native_abi.h"

#include <cuda_runtime.h>
#include <string.h>

__global__ static void row_sum(const float *x, float *y, int64_t cols)
{
    __shared__ float partial[256];
    const float *row = x + (int64_t)blockIdx.x * cols;
    float acc = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
        acc += row[c];
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        y[blockIdx.x] = partial[0];
}

__global__ static void scribble(float *x, int64_t cols)
{
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
        x[c] = __uint_as_float(__float_as_uint(x[c]) ^ 1u);
}

extern "C" int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                          const aka_params *params)
{
    static const char *shape;
    static int calls;
    if (n_in != 1 || n_out != 1)
        return AKA_ERR_SHAPE;
    if (!shape || strcmp(shape, params->shape_id) != 0)
        calls = 0, shape = params->shape_id;
    int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
    cudaStream_t s = (cudaStream_t)params->stream;
    row_sum<<<(unsigned)rows, 256, 0, s>>>((const float *)inputs[0].data, (float *)outputs[0].data,
                                           cols);
    if (++calls > 8)
        scribble<<<1, 256, 0, s>>>((float *)inputs[0].data, cols);
    return cudaGetLastError() == cudaSuccess ? AKA_OK : AKA_ERR_LAUNCH;
}
