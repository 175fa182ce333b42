/* policy-expect: file-access
 * The evaluator's environment read from the kernel.
 */
#include "aka_native_abi.h"

#include <stdlib.h>

int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
               const aka_params *params)
{
    (void)params;
    int64_t n = aka_numel(&inputs[0]);
    const char *p = getenv("HOME");
    (void)p;
    for (int64_t i = 0; i < n; i++)
        ((float *)outputs[0].data)[i] = ((const float *)inputs[0].data)[i];
    return AKA_OK;
}
