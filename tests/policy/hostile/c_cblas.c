/* policy-expect: prebuilt-library
 * BLAS does the GEMM: a prebuilt library behind the native ABI.
 */
#include "aka_native_abi.h"

#include <cblas.h>

int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
               const aka_params *params)
{
    (void)params;
    int64_t n = aka_numel(&inputs[0]);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0f, NULL, 1, NULL, 1, 0.0f,
                NULL, 1);
    for (int64_t i = 0; i < n; i++)
        ((float *)outputs[0].data)[i] = ((const float *)inputs[0].data)[i];
    return AKA_OK;
}
