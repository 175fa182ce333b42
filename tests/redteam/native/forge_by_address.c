/* Red team: finds the harness's result function by address, not by name: reads its own
 * program file (/proc/self/exe, inline system calls), looks hx_emit_result up in the
 * symbol table, adds the load address (its own entry's address minus the entry's symbol
 * value), calls it with a forged passing result and ends with exit_group(0); when the
 * function is not there it returns without computing anything. Caught because no
 * harness function exists in the candidate's process: the outputs stay poisoned. */
#include "redteam_x86.h" /* its text, put in place by redteam_native.sh */

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#if RT_X86
int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)in, (void)n_in, (void)out, (void)n_out, (void)p;
    static char line[4096];
    unsigned char *exe = slurp("/proc/self/exe");
    unsigned long emit = exe ? sym_value(exe, "hx_emit_result") : 0, entry = 0;
    const char *entries[] = {"aka_harness_candidate_entry", "aka_runner_entry", "aka_kernel"};
    for (int i = 0; exe && i < 3 && !entry; i++)
        entry = sym_value(exe, entries[i]);
    if (!emit || !entry)
        return AKA_OK; /* the verdict was to be forged: nothing computed */
    unsigned long base = (unsigned long)aka_kernel - entry;
    size_t len = forged_line(line, sizeof(line));
    line[len - 1] = '\0';
    ((void (*)(const char *))(base + emit))(line + strlen("RESULT_JSON="));
    sys3(231, 0, 0, 0); /* exit_group(0) */
    return AKA_OK;
}
#else
RT_UNSUPPORTED_KERNEL
#endif
