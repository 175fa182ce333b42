/* Red team: kills its parent with an inline kill(getppid(), SIGKILL) (the judge, when
 * the kernel runs under one), then writes a forged passing RESULT_JSON line to every
 * descriptor 1..9 and ends with exit_group(0). Caught because the runner's seccomp
 * filter refuses signals to other processes (the judge lives on and reports the
 * runner's end), and its descriptors hold no stdout to forge on. */
#include "redteam_x86.h" /* its text, put in place by redteam_native.sh */

#include <string.h>

#if RT_X86
int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)in, (void)n_in, (void)out, (void)n_out, (void)p;
    static char line[4096];
    long ppid = sys3(110, 0, 0, 0);
    if (ppid > 1)
        sys3(62, ppid, 9, 0); /* kill(ppid, SIGKILL) */
    size_t len = forged_line(line, sizeof(line));
    for (long fd = 1; fd <= 9; fd++)
        sys3(1, fd, (long)line, (long)len);
    sys3(231, 0, 0, 0); /* exit_group(0) */
    return AKA_OK;
}
#else
RT_UNSUPPORTED_KERNEL
#endif
