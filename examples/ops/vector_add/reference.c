/* vector_add reference: z[i] = x[i] + y[i], written for clarity, not speed. */
#include "aka_native_abi.h"

int aka_reference(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                  const aka_params *params)
{
    (void)params;
    if (n_in != 2 || n_out != 1)
        return AKA_ERR_SHAPE;
    if (aka_expect(&inputs[0], AKA_DT_FLOAT32, 1) || aka_expect(&inputs[1], AKA_DT_FLOAT32, 1) ||
        aka_expect(&outputs[0], AKA_DT_FLOAT32, 1))
        return AKA_ERR_DTYPE;
    const float *x = (const float *)inputs[0].data;
    const float *y = (const float *)inputs[1].data;
    float *z = (float *)outputs[0].data;
    int64_t n = outputs[0].shape[0];
    for (int64_t i = 0; i < n; i++)
        z[i] = x[i] + y[i];
    return AKA_OK;
}
