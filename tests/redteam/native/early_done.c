/* Red team: writes the protocol's "done" word itself at the start of each call (it maps
 * descriptor 3, the runner's shared memory; the layout is public in harness_proto.h), so
 * a judge that stops its clock at "done" sees almost nothing, then does the work plus a
 * 300 us busy loop. It also rewrites its program's clock_gettime GOT slot so that the
 * runner's own report leaves that time out and agrees with the judge's window. Where
 * descriptor 3 is not shared memory it computes and reports honestly. Caught because the
 * judge counts every CPU cycle of the runner's process per call (exact while the runner
 * sleeps between calls) against its own window around the call: "timing tampered". */
#define _GNU_SOURCE
#include "aka_native_abi.h"

#include <elf.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
static long sys6(long n, long a, long b, long c, long d, long e, long f)
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

static long sys3(long n, long a, long b, long c)
{
    return sys6(n, a, b, c, 0, 0, 0);
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
    static volatile uint32_t *ctl;
    static int tried;
    if (!tried++) {
        long m = sys6(9, 0, 4096, 3 /* RW */, 1 /* MAP_SHARED */, 3, 0);
        ctl = (m < 0 && m > -4096) ? NULL : (volatile uint32_t *)m;
        if (ctl)
            patch();
    }
    if (ctl)
        __atomic_store_n(&ctl[256 / 4], ctl[64 / 4], __ATOMIC_SEQ_CST); /* done.v = arm.v */
    long t0 = real_ns();
    const float *x = in[0].data, *y = in[1].data;
    float *z = out[0].data;
    for (int64_t i = 0; i < out[0].shape[0]; i++)
        z[i] = x[i] + y[i];
    while (real_ns() - t0 < 300000)
        ;
    if (ctl)
        hidden_ns += real_ns() - t0; /* the runner's clock skips what ran after "done" */
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
