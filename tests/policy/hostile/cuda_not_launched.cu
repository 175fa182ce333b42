/* policy-expect: requires-launch
 * A __global__ kernel is defined but never launched; a memcpy produces the output.
 */
#include "aka_native_abi.h"

#include <cuda_runtime.h>

__global__ void copy_k(const float *x, float *y, int64_t n)
{
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i];
}

extern "C" int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                          const aka_params *params)
{
    int64_t n = aka_numel(&inputs[0]);
    return cudaMemcpyAsync(outputs[0].data, inputs[0].data, (size_t)n * sizeof(float),
                           cudaMemcpyDeviceToDevice, (cudaStream_t)params->stream) == cudaSuccess
               ? AKA_OK
               : AKA_ERR_LAUNCH;
}
