/* Clean CUDA kernel: ReLU on fp16 with half2 loads (two elements per thread). */
#include "aka_native_abi.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

__global__ void relu_h2(const __half2 *x, __half2 *y, int64_t n2)
{
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n2)
        y[i] = __hmax2(x[i], __float2half2_rn(0.0f));
}

__global__ void relu_tail(const __half *x, __half *y, int64_t i)
{
    y[i] = __hmax(x[i], __float2half(0.0f));
}

extern "C" int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                          const aka_params *params)
{
    if (n_in != 1 || n_out != 1 || inputs[0].dtype != AKA_DT_FLOAT16)
        return AKA_ERR_DTYPE;
    int64_t n = aka_numel(&inputs[0]);
    cudaStream_t s = (cudaStream_t)params->stream;
    if (n / 2)
        relu_h2<<<(unsigned)((n / 2 + 255) / 256), 256, 0, s>>>(
            (const __half2 *)inputs[0].data, (__half2 *)outputs[0].data, n / 2);
    if (n % 2)
        relu_tail<<<1, 1, 0, s>>>((const __half *)inputs[0].data, (__half *)outputs[0].data,
                                  n - 1);
    return cudaGetLastError() == cudaSuccess ? AKA_OK : AKA_ERR_LAUNCH;
}
