/* Clean CUDA kernel: z = x + y, grid-stride loop. */
#include "aka_native_abi.h"

#include <cuda_runtime.h>

__global__ void vadd(const float *x, const float *y, float *z, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        z[i] = x[i] + y[i];
}

extern "C" int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                          const aka_params *params)
{
    if (n_in != 2 || n_out != 1)
        return AKA_ERR_SHAPE;
    int64_t n = aka_numel(&outputs[0]);
    unsigned blocks = (unsigned)((n + 255) / 256 < 65535 ? (n + 255) / 256 : 65535);
    vadd<<<blocks, 256, 0, (cudaStream_t)params->stream>>>(
        (const float *)inputs[0].data, (const float *)inputs[1].data, (float *)outputs[0].data, n);
    return cudaGetLastError() == cudaSuccess ? AKA_OK : AKA_ERR_LAUNCH;
}
