/* Clean native C kernel: ReLU, written branch-free so the loop vectorizes. */
#include "aka_native_abi.h"

int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
               const aka_params *params)
{
    (void)params;
    if (n_in != 1 || n_out != 1 || inputs[0].dtype != AKA_DT_FLOAT32)
        return AKA_ERR_DTYPE;
    const float *x = (const float *)inputs[0].data;
    float *y = (float *)outputs[0].data;
    int64_t n = aka_numel(&inputs[0]);
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    return AKA_OK;
}
