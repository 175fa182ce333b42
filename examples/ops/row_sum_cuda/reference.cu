/*
 * row_sum_cuda reference: one thread per row, summing left to right in double.
 * Correct and slow on purpose: neighbouring threads read addresses a whole row
 * apart, so no load is coalesced.
 */
#include "aka_native_abi.h"

#include <cuda_runtime.h>

__global__ static void row_sum_ref(const float *x, float *y, int64_t rows, int64_t cols)
{
    int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    double acc = 0.0;
    for (int64_t c = 0; c < cols; c++)
        acc += x[r * cols + c];
    y[r] = (float)acc;
}

extern "C" int aka_reference(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                             const aka_params *params)
{
    if (n_in != 1 || n_out != 1)
        return AKA_ERR_SHAPE;
    if (aka_expect(&inputs[0], AKA_DT_FLOAT32, 2) || aka_expect(&outputs[0], AKA_DT_FLOAT32, 1))
        return AKA_ERR_DTYPE;
    int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
    cudaStream_t stream = (cudaStream_t)params->stream;
    unsigned blocks = (unsigned)((rows + 255) / 256);
    row_sum_ref<<<blocks, 256, 0, stream>>>((const float *)inputs[0].data,
                                             (float *)outputs[0].data, rows, cols);
    return cudaGetLastError() == cudaSuccess ? AKA_OK : AKA_ERR_LAUNCH;
}
