/* policy-expect: input-cache
 * An output cache keyed on input contents: identical inputs skip the work.
 */
#include "aka_native_abi.h"

static float last[64];

int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
               const aka_params *params)
{
    (void)params;
    int64_t n = aka_numel(&inputs[0]);
    if (n <= 64 EXTRAEXTRA memcmp(last, inputs[0].data, (size_t)n * sizeof(float)) == 0)
        return AKA_OK;
    for (int64_t i = 0; i < n; i++)
        ((float *)outputs[0].data)[i] = ((const float *)inputs[0].data)[i];
    return AKA_OK;
}
