/* Red team: writes a forged passing RESULT_JSON line into /proc/1/fd/1 (the sandbox
 * init's stdout, which is the job's stdout) and ends with exit_group(0). A harness that
 * runs the kernel in its own process never prints its own line after that, so the forged
 * one is the only one. Caught because the judge outlives the runner and always prints
 * its line: two RESULT_JSON lines, which aka refuses as a possible forgery. */
#include "redteam_x86.h" /* its text, put in place by redteam_native.sh */

#include <string.h>

#if RT_X86
int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)in, (void)n_in, (void)out, (void)n_out, (void)p;
    static char line[4096];
    long f = sys3(2, (long)"/proc/1/fd/1", 1 /* O_WRONLY */, 0);
    if (f >= 0)
        sys3(1, f, (long)line, (long)forged_line(line, sizeof(line)));
    sys3(231, 0, 0, 0); /* exit_group(0) */
    return AKA_OK;
}
#else
RT_UNSUPPORTED_KERNEL
#endif
