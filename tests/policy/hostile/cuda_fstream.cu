/* policy-expect: file-access
 * C++ file streams in a CUDA kernel: outputs read back from a file written on an earlier run.
 */
#include "aka_native_abi.h"

#include <cuda_runtime.h>
#include <fstream>

__global__ void copy_k(const float *x, float *y, int64_t n)
{
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i];
}

extern "C" int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                          const aka_params *params)
{
    std::ifstream cached("/tmp/out.bin", std::ios::binary);
    int64_t n = aka_numel(&inputs[0]);
    copy_k<<<(unsigned)((n + 255) / 256), 256, 0, (cudaStream_t)params->stream>>>(
        (const float *)inputs[0].data, (float *)outputs[0].data, n);
    return cudaGetLastError() == cudaSuccess ? AKA_OK : AKA_ERR_LAUNCH;
}
