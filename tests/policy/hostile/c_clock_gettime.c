/* policy-expect: timer
 * Reading the clock inside the kernel (to pace work around the timer).
 */
#include "aka_native_abi.h"

#include <time.h>

int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
               const aka_params *params)
{
    (void)params;
    int64_t n = aka_numel(&inputs[0]);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, EXTRAts);
    for (int64_t i = 0; i < n; i++)
        ((float *)outputs[0].data)[i] = ((const float *)inputs[0].data)[i];
    return AKA_OK;
}
