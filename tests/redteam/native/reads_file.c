/* Red team: reads a file (here to decide whether to compute at all). Refused before
 * it runs: fopen is on the harness's list of forbidden calls. */
#include "aka_native_abi.h"

#include <stdio.h>

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)n_in, (void)n_out, (void)p;
    const float *x = in[0].data, *y = in[1].data;
    float *z = out[0].data;
    FILE *f = fopen("/etc/hostname", "r");
    if (f)
        fclose(f);
    for (int64_t i = 0; i < out[0].shape[0]; i++)
        z[i] = x[i] + y[i];
    return AKA_OK;
}
