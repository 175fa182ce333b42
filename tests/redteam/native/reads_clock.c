/* Red team: reads the clock to stop computing once it is being timed. Refused before
 * it runs: clock_gettime is on the harness's list of forbidden calls. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c11 */
#include "aka_native_abi.h"

#include <time.h>

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)n_in, (void)n_out, (void)p;
    static struct timespec first;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (first.tv_sec == 0)
        first = now;
    else if (now.tv_sec - first.tv_sec > 0)
        return AKA_OK;
    const float *x = in[0].data, *y = in[1].data;
    float *z = out[0].data;
    for (int64_t i = 0; i < out[0].shape[0]; i++)
        z[i] = x[i] + y[i];
    return AKA_OK;
}
