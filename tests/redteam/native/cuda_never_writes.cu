/* Red team (CUDA, examples/ops/row_sum_cuda): launches nothing and reports
 * success. Caught by the cudaMemset poison of the outputs before every run. */
#include "aka_native_abi.h"

extern "C" int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                          const aka_params *params)
{
    (void)inputs, (void)n_in, (void)outputs, (void)n_out, (void)params;
    return AKA_OK;
}
