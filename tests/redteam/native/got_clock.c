/* Red team: rewrites the clock_gettime slot of its own program's GOT (found through
 * _DYNAMIC, made writable with an inline mprotect) with a clock that hides 99% of the
 * time the kernel spends, then does the work plus a 300 us busy loop. In a harness that
 * times the kernel with a clock in the kernel's process, that is a 100x "speedup".
 * Caught because the judge times every call with its own clock in its own process and
 * finds the runner's reported time short of it: "timing tampered". */
#define _GNU_SOURCE
#include "aka_native_abi.h"

#include <elf.h>
#include <string.h>
#include <time.h>

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

extern Elf64_Dyn _DYNAMIC[];
extern const char __ehdr_start;
static long hidden_ns; /* time the fake clock leaves out */

static long real_ns(void)
{
    struct timespec ts;
    sys3(228, CLOCK_MONOTONIC, (long)&ts, 0); /* clock_gettime */
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static int fake_clock(clockid_t id, struct timespec *ts)
{
    long t = real_ns() - hidden_ns;
    (void)id;
    ts->tv_sec = t / 1000000000L;
    ts->tv_nsec = t % 1000000000L;
    return 0;
}

static unsigned long dyn(long tag)
{
    for (Elf64_Dyn *d = _DYNAMIC; d->d_tag != DT_NULL; d++)
        if (d->d_tag == tag)
            return d->d_un.d_val;
    return 0;
}

/* ld.so relocates the address entries of _DYNAMIC on most systems; not everywhere. */
static unsigned long dyn_addr(long tag)
{
    unsigned long base = (unsigned long)&__ehdr_start, v = dyn(tag);
    return v && v < base ? v + base : v;
}

/* Point every relocation of the program that binds clock_gettime at fake_clock. */
static void patch(void)
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

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)n_in, (void)n_out, (void)p;
    static int patched;
    if (!patched++)
        patch();
    long t0 = real_ns();
    const float *x = in[0].data, *y = in[1].data;
    float *z = out[0].data;
    for (int64_t i = 0; i < out[0].shape[0]; i++)
        z[i] = x[i] + y[i];
    while (real_ns() - t0 < 300000)
        ;
    hidden_ns += (real_ns() - t0) / 100 * 99;
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
