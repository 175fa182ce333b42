/*
 * redteam_x86.h — what several hostile native candidates share: inline x86-64 system
 * calls (no libc symbol for the object checks to see), a forged passing RESULT_JSON line
 * built from plan.json, ELF symbol look-ups, and a clock_gettime that leaves out what
 * the candidate wants hidden, installed through its program's GOT.
 *
 * A candidate is one self-contained kernel.c; tests/integration/redteam_native.sh puts
 * this file's text in place of a case's `#include "redteam_x86.h"` line before it hands
 * the case to `aka eval`. Every case keeps a fallback for other machines (RT_X86 == 0):
 * there it returns AKA_ERR_UNSUPPORTED, and the test skips the cases that need x86-64.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* clock_gettime's clock ids under -std=c11 */
#endif
#include "aka_native_abi.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RT_UNUSED __attribute__((unused))

#if defined(__x86_64__)
#define RT_X86 1

extern Elf64_Dyn _DYNAMIC[];
extern const char __ehdr_start;
static long hidden_ns RT_UNUSED; /* time the fake clock leaves out */

static RT_UNUSED long sys6(long n, long a, long b, long c, long d, long e, long f)
{
    long ret;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ __volatile__("syscall"
                         : "=a"(ret)
                         : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                         : "rcx", "r11", "memory");
    return ret;
}

static RT_UNUSED long sys3(long n, long a, long b, long c)
{
    long ret;
    __asm__ __volatile__("syscall"
                         : "=a"(ret)
                         : "a"(n), "D"(a), "S"(b), "d"(c)
                         : "rcx", "r11", "memory");
    return ret;
}

/* The value of "key": "..." in plan.json, into out. */
static RT_UNUSED void plan_field(const char *plan, const char *key, char *out, size_t n)
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

static RT_UNUSED size_t forged_line(char *line, size_t n)
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
static RT_UNUSED unsigned char *slurp(const char *path)
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
static RT_UNUSED unsigned long sym_value(const unsigned char *elf, const char *name)
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

static RT_UNUSED void proc_path(char *out, long pid, const char *what)
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

static RT_UNUSED long real_ns(void)
{
    struct timespec ts;
    sys3(228, CLOCK_MONOTONIC, (long)&ts, 0); /* clock_gettime */
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* CPU time this thread has used (inline clock_gettime on CLOCK_THREAD_CPUTIME_ID). The cases
 * that hide time spin on it, not on real_ns(): a wall-clock wait on a loaded machine is mostly
 * preemption, uses little CPU, and so hides nothing a judge that counts CPU time could see. */
static RT_UNUSED long cpu_ns(void)
{
    struct timespec ts;
    sys3(228, CLOCK_THREAD_CPUTIME_ID, (long)&ts, 0);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static RT_UNUSED int fake_clock(clockid_t id, struct timespec *ts)
{
    long t = real_ns() - hidden_ns;
    (void)id;
    ts->tv_sec = t / 1000000000L;
    ts->tv_nsec = t % 1000000000L;
    return 0;
}

static RT_UNUSED unsigned long dyn(long tag)
{
    for (Elf64_Dyn *d = _DYNAMIC; d->d_tag != DT_NULL; d++)
        if (d->d_tag == tag)
            return d->d_un.d_val;
    return 0;
}

/* ld.so relocates the address entries of _DYNAMIC on most systems; not everywhere. */
static RT_UNUSED unsigned long dyn_addr(long tag)
{
    unsigned long base = (unsigned long)&__ehdr_start, v = dyn(tag);
    return v && v < base ? v + base : v;
}

/* Point every relocation of the program that binds clock_gettime at fake_clock. */
static RT_UNUSED void rt_patch_clock_got(void)
{
    unsigned long base = (unsigned long)&__ehdr_start;
    const Elf64_Sym *syms = (const Elf64_Sym *)dyn_addr(DT_SYMTAB);
    const char *str = (const char *)dyn_addr(DT_STRTAB);
    struct {
        long tab, size;
    } tables[] = {{DT_JMPREL, DT_PLTRELSZ}, {DT_RELA, DT_RELASZ}};
    for (int k = 0; k < 2 && syms && str; k++) {
        const Elf64_Rela *r = (const Elf64_Rela *)dyn_addr(tables[k].tab);
        unsigned long n = dyn(tables[k].size) / sizeof(Elf64_Rela);
        for (unsigned long i = 0; r && i < n; i++) {
            if (strcmp(str + syms[ELF64_R_SYM(r[i].r_info)].st_name, "clock_gettime") != 0)
                continue;
            unsigned long slot = base + r[i].r_offset;
            sys3(10, (long)(slot & ~4095UL), 8192, 3); /* mprotect RW */
            *(int (**)(clockid_t, struct timespec *))slot = fake_clock;
        }
    }
}
#else
#define RT_X86 0
#endif

/* The kernel of a case on another machine: x86-64 only (inline system calls). */
#define RT_UNSUPPORTED_KERNEL                                                                      \
    int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out,                     \
                   const aka_params *p)                                                            \
    {                                                                                              \
        (void)in, (void)n_in, (void)out, (void)n_out, (void)p;                                     \
        return AKA_ERR_UNSUPPORTED;                                                                \
    }
