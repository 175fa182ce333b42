/* policy-expect: dynamic-access
 * An inline system call: no libc name for a rule to see.
 */
#include "aka_native_abi.h"

int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
               const aka_params *params)
{
    (void)params;
    int64_t n = aka_numel(&inputs[0]);
    long r;
    __asm__ volatile("mov $39, %%eax; syscall" : "=a"(r) : : "rcx", "r11", "memory");
    for (int64_t i = 0; i < n; i++)
        ((float *)outputs[0].data)[i] = ((const float *)inputs[0].data)[i];
    return AKA_OK;
}
