/* policy-expect: harness-patching
 * Code run at load time, before the harness starts timing.
 */
#include "aka_native_abi.h"

__attribute__((constructor)) static void early(void)
{
}

int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
               const aka_params *params)
{
    (void)params;
    int64_t n = aka_numel(&inputs[0]);

    for (int64_t i = 0; i < n; i++)
        ((float *)outputs[0].data)[i] = ((const float *)inputs[0].data)[i];
    return AKA_OK;
}
