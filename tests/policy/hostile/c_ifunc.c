/* policy-expect: harness-patching
 * An ifunc resolver runs while the library loads, before the harness measures anything.
 */
#include "aka_native_abi.h"

static int copy_impl(const aka_tensor *inputs, aka_tensor *outputs)
{
    int64_t n = aka_numel(&inputs[0]);
    for (int64_t i = 0; i < n; i++)
        ((float *)outputs[0].data)[i] = ((const float *)inputs[0].data)[i];
    return AKA_OK;
}

static void *resolve_copy(void)
{
    return (void *)copy_impl;
}

int fast_copy(const aka_tensor *inputs, aka_tensor *outputs) __attribute__((ifunc("resolve_copy")));

int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
               const aka_params *params)
{
    (void)params;
    return fast_copy(inputs, outputs);
}
