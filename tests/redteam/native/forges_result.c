/* Red team: prints a passing RESULT_JSON line and exits before the harness can
 * print its own. Refused before it runs: exit is a forbidden call (and the
 * harness points stdout at stderr before any kernel code runs). */
#include "aka_native_abi.h"

#include <stdio.h>
#include <stdlib.h>

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)in, (void)n_in, (void)out, (void)n_out, (void)p;
    printf("RESULT_JSON={\"all_pass\":true,\"total\":3,\"passed\":3,\"failures\":[]}\n");
    fflush(stdout);
    exit(0);
}
