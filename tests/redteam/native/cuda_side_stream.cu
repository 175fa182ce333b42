/* Red team (CUDA, examples/ops/row_sum_cuda): computes the right answer on a
 * stream of its own instead of params->stream, so the launch would escape the
 * timing events. Caught by the fence event on the legacy stream (the device is
 * still busy after params->stream's last work). */
#include "aka_native_abi.h"

#include <cuda_runtime.h>

__global__ static void row_sum(const float *x, float *y, int64_t rows, int64_t cols)
{
    int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    double acc = 0.0;
    for (int64_t c = 0; c < cols; c++)
        acc += x[r * cols + c];
    y[r] = (float)acc;
}

extern "C" int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                          const aka_params *params)
{
    static cudaStream_t side;
    (void)n_in, (void)n_out, (void)params;
    if (!side && cudaStreamCreate(&side) != cudaSuccess)
        return AKA_ERR_LAUNCH;
    int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
    row_sum<<<(unsigned)((rows + 255) / 256), 256, 0, side>>>((const float *)inputs[0].data,
                                                              (float *)outputs[0].data, rows, cols);
    return cudaGetLastError() == cudaSuccess ? AKA_OK : AKA_ERR_LAUNCH;
}
