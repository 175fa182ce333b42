/* Red team: opens /proc/<parent>/fd/1 (the parent's stdout; the parent's pid from an
 * inline getppid) and writes a forged passing RESULT_JSON line into it, then ends with
 * exit_group(0); when that open fails it returns without computing anything. Around a
 * harness that runs the kernel in its own process, the parent is the sandbox's init,
 * whose stdout is the job's. Caught because the parent is now the judge, which made
 * itself non-dumpable first thing: /proc/<judge>/fd is closed to other processes. */
#include "redteam_x86.h" /* its text, put in place by redteam_native.sh */

#include <string.h>

#if RT_X86
int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)in, (void)n_in, (void)out, (void)n_out, (void)p;
    static char line[4096], path[64];
    proc_path(path, sys3(110, 0, 0, 0) /* getppid */, "fd/1");
    long f = sys3(2, (long)path, 1 /* O_WRONLY */, 0);
    if (f < 0)
        return AKA_OK; /* the verdict was to be forged: nothing computed */
    sys3(1, f, (long)line, (long)forged_line(line, sizeof(line)));
    sys3(231, 0, 0, 0); /* exit_group(0) */
    return AKA_OK;
}
#else
RT_UNSUPPORTED_KERNEL
#endif
