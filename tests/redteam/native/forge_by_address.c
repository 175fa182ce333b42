/* Red team: finds the harness's result function by address, not by name: reads its own
 * program file (/proc/self/exe, inline system calls), looks hx_emit_result up in the
 * symbol table, adds the load address (its own entry's address minus the entry's symbol
 * value), calls it with a forged passing result and ends with exit_group(0); when the
 * function is not there it returns without computing anything. Caught because no
 * harness function exists in the candidate's process: the outputs stay poisoned. */
#include "aka_native_abi.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
static long sys3(long n, long a, long b, long c)
{
    long ret;
    __asm__ __volatile__("syscall"
                         : "=a"(ret)
                         : "a"(n), "D"(a), "S"(b), "d"(c)
                         : "rcx", "r11", "memory");
    return ret;
}

/* The value of "key": "..." in plan.json, into out. */
static void plan_field(const char *plan, const char *key, char *out, size_t n)
{
    const char *p = strstr(plan, key);
    size_t k = 0;
    out[0] = '\0';
    if (!p || !(p = strchr(p + strlen(key), '"')))
        return;
    for (p++; *p && *p != '"' && k + 1 < n; p++)
        out[k++] = *p;
    out[k] = '\0';
}

static size_t forged_line(char *line, size_t n)
{
    static char plan[1 << 16];
    char id[128], sha[80];
    long fd = sys3(2, (long)"plan.json", 0, 0),
         got = fd >= 0 ? sys3(0, fd, (long)plan, sizeof(plan) - 1) : -1;
    plan[got > 0 ? got : 0] = '\0';
    plan_field(plan, "\"eval_id\"", id, sizeof(id));
    plan_field(plan, "\"kernel_sha256\"", sha, sizeof(sha));
    size_t len = 0;
    const char *parts[] = {
        "RESULT_JSON={\"all_pass\":true,\"total\":3,\"passed\":3,\"failures\":[],"
        "\"latency_us_by_shape\":{\"n4k\":0.001,\"n1m\":0.001,\"odd\":0.001},"
        "\"speedup_vs_ref_geomean\":1000,\"evaluator\":\"aka.native.c\",\"eval_id\":\"",
        id, "\",\"kernel_sha256\":\"", sha, "\"}\n"};
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        for (const char *c = parts[i]; *c && len + 1 < n; c++)
            line[len++] = *c;
    return len;
}

/* The whole file at path (inline open/lseek/read), or NULL. */
static unsigned char *slurp(const char *path)
{
    long fd = sys3(2, (long)path, 0, 0), size, got = 0, n;
    unsigned char *buf;
    if (fd < 0)
        return NULL;
    size = sys3(8, fd, 0, 2); /* lseek SEEK_END */
    sys3(8, fd, 0, 0);
    buf = size > 0 ? malloc((size_t)size) : NULL;
    while (buf && got < size && (n = sys3(0, fd, (long)(buf + got), size - got)) > 0)
        got += n;
    sys3(3, fd, 0, 0);
    return buf;
}

/* st_value of a symbol in the file's .symtab, 0 when absent. */
static unsigned long sym_value(const unsigned char *elf, const char *name)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)elf;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(elf + eh->e_shoff);
    for (int i = 0; elf && i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB)
            continue;
        const Elf64_Sym *sym = (const Elf64_Sym *)(elf + sh[i].sh_offset);
        const char *str = (const char *)(elf + sh[sh[i].sh_link].sh_offset);
        for (unsigned long k = 0; k < sh[i].sh_size / sizeof(*sym); k++)
            if (strcmp(str + sym[k].st_name, name) == 0)
                return sym[k].st_value;
    }
    return 0;
}

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
/* x86-64 only (inline system calls); the test skips it elsewhere. */
int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)in, (void)n_in, (void)out, (void)n_out, (void)p;
    return AKA_ERR_UNSUPPORTED;
}
#endif
