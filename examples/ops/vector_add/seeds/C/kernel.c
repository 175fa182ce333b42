/*
 * vector_add seed kernel for the built-in tuner: the loop is unrolled by UNROLL
 * so that the compiler can keep several independent adds in flight.
 */
#include "aka_native_abi.h"

/* aka:tune UNROLL in {1, 2, 4, 8} */
#ifndef UNROLL
#define UNROLL 4
#endif

int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
               const aka_params *params)
{
    (void)params;
    if (n_in != 2 || n_out != 1)
        return AKA_ERR_SHAPE;
    const float *restrict x = (const float *)inputs[0].data;
    const float *restrict y = (const float *)inputs[1].data;
    float *restrict z = (float *)outputs[0].data;
    int64_t n = outputs[0].shape[0];
    int64_t i = 0;
    for (; i + UNROLL <= n; i += UNROLL)
        for (int u = 0; u < UNROLL; u++)
            z[i + u] = x[i + u] + y[i + u];
    for (; i < n; i++) /* the tail that does not fill an unrolled step */
        z[i] = x[i] + y[i];
    return AKA_OK;
}
