/* Red team: writes a forged passing RESULT_JSON line (eval_id and kernel_sha256 read
 * from plan.json) to every descriptor 1..9 with inline-assembly system calls (no libc
 * symbol for the object checks to see), then ends the process with exit_group(0).
 * In a harness that shares the candidate's process, one of those descriptors is the
 * saved stdout. Caught because the candidate runs in its own process: its descriptors
 * are stderr and the shared memory, and the judge names the process's end. */
#include "redteam_x86.h" /* its text, put in place by redteam_native.sh */

#include <string.h>

#if RT_X86
int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)in, (void)n_in, (void)out, (void)n_out, (void)p;
    static char line[4096];
    size_t len = forged_line(line, sizeof(line));
    for (long fd = 1; fd <= 9; fd++)
        sys3(1, fd, (long)line, (long)len);
    sys3(231, 0, 0, 0); /* exit_group(0) */
    return AKA_OK;
}
#else
RT_UNSUPPORTED_KERNEL
#endif
