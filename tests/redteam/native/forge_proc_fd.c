/* Red team: opens /proc/self/fd/3..63 for writing with inline system calls, writes a
 * forged passing RESULT_JSON line (eval_id and kernel_sha256 from plan.json) into the
 * first that opens, and ends the process with exit_group(0). In a harness sharing the candidate's
 * process, one of them is the saved stdout. Caught because the runner's descriptors are
 * only stderr and its shared memory: the judge names the process's end. */
#include "redteam_x86.h" /* its text, put in place by redteam_native.sh */

#include <string.h>

#if RT_X86
int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)in, (void)n_in, (void)out, (void)n_out, (void)p;
    static char line[4096], path[32];
    size_t len = forged_line(line, sizeof(line));
    for (int fd = 3; fd < 64; fd++) {
        memcpy(path, "/proc/self/fd/", 14);
        path[14] = (char)('0' + fd / 10), path[15] = (char)('0' + fd % 10), path[16] = '\0';
        if (fd < 10)
            path[14] = (char)('0' + fd), path[15] = '\0';
        long f = sys3(2, (long)path, 1 /* O_WRONLY */, 0);
        if (f >= 0 && sys3(1, f, (long)line, (long)len) > 0)
            break;
    }
    sys3(231, 0, 0, 0); /* exit_group(0) */
    return AKA_OK;
}
#else
RT_UNSUPPORTED_KERNEL
#endif
