/* Red team: calls the harness's own result function by name (extern hx_emit_result),
 * with a forged passing result (eval_id and kernel_sha256 from plan.json), then ends
 * the process with exit_group(0). Linked into the harness, the call resolves and the
 * forged line is the harness's. Caught because the candidate runner holds no harness
 * code: the name does not resolve and the kernel does not link. */
#include "redteam_x86.h" /* its text, put in place by redteam_native.sh */

#include <string.h>

#if RT_X86
void hx_emit_result(const char *json_text);

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)in, (void)n_in, (void)out, (void)n_out, (void)p;
    static char line[4096];
    size_t len = forged_line(line, sizeof(line));
    line[len - 1] = '\0';                          /* the harness adds the newline */
    hx_emit_result(line + strlen("RESULT_JSON=")); /* and the prefix */
    sys3(231, 0, 0, 0);                            /* exit_group(0) */
    return AKA_OK;
}
#else
RT_UNSUPPORTED_KERNEL
#endif
