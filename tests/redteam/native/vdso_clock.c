/* Red team: finds the vDSO (AT_SYSINFO_EHDR in /proc/self/auxv, read with inline system
 * calls), makes the page of __vdso_clock_gettime writable with an inline mprotect, and
 * overwrites that function with one that always returns time 0, then does the work plus a
 * 3 ms of busy CPU work (large against what a loaded machine adds to an honest runner's CPU time).
 * The C library's clock_gettime calls that code, so a harness clock in the kernel's process sees
 * every call take no time at all. Caught because the judge's clock runs in the judge's own process
 * (its own vDSO copy): "timing tampered". */
#define _GNU_SOURCE
#include "redteam_x86.h" /* its text, put in place by redteam_native.sh */

#include <elf.h>
#include <string.h>
#include <time.h>

#if RT_X86
static unsigned long vdso_base(void)
{
    unsigned long aux[2 * 64];
    long fd = sys3(2, (long)"/proc/self/auxv", 0, 0), n;
    if (fd < 0)
        return 0;
    n = sys3(0, fd, (long)aux, sizeof(aux));
    sys3(3, fd, 0, 0);
    for (long i = 0; i + 1 < n / (long)sizeof(long); i += 2)
        if (aux[i] == AT_SYSINFO_EHDR)
            return aux[i + 1];
    return 0;
}

/* Overwrite the vDSO's clock_gettime: *ts = {0, 0}; return 0. */
static void patch(void)
{
    static const unsigned char stub[] = {0x48, 0xc7, 0x06, 0, 0, 0, 0,    /* mov qword [rsi], 0 */
                                         0x48, 0xc7, 0x46, 8, 0, 0, 0, 0, /* mov qword [rsi+8], 0 */
                                         0x31, 0xc0, 0xc3};               /* xor eax, eax; ret */
    unsigned long base = vdso_base();
    if (!base)
        return;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(base + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_DYNSYM)
            continue;
        const Elf64_Sym *sym = (const Elf64_Sym *)(base + sh[i].sh_offset);
        const char *str = (const char *)(base + sh[sh[i].sh_link].sh_offset);
        for (unsigned long k = 0; k < sh[i].sh_size / sizeof(*sym); k++) {
            const char *name = str + sym[k].st_name;
            if (strcmp(name, "__vdso_clock_gettime") != 0 && strcmp(name, "clock_gettime") != 0)
                continue;
            unsigned char *fn = (unsigned char *)(base + sym[k].st_value);
            if (sys3(10, (long)((unsigned long)fn & ~4095UL), 8192, 7) == 0) /* mprotect RWX */
                memcpy(fn, stub, sizeof(stub));
        }
    }
}

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)n_in, (void)n_out, (void)p;
    static int patched;
    if (!patched++)
        patch();
    long c0 = cpu_ns();
    const float *x = in[0].data, *y = in[1].data;
    float *z = out[0].data;
    for (int64_t i = 0; i < out[0].shape[0]; i++)
        z[i] = x[i] + y[i];
    while (cpu_ns() - c0 < 3000000)
        ;
    return AKA_OK;
}
#else
RT_UNSUPPORTED_KERNEL
#endif
