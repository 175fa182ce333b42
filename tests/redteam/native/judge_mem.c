/* Red team: patches the comparison code of whatever process decides the verdict through
 * /proc/<pid>/mem (which writes through page protections): first its own process, then
 * its parent. It finds hx_compare in /proc/<pid>/exe's symbol table and the load address
 * in /proc/<pid>/maps, and overwrites the function with one that reports every element
 * equal; then it returns without computing anything. Linked into the harness, its own
 * process is the one that compares. Caught because the comparison runs in the judge,
 * which made itself non-dumpable first thing: its exe, maps and mem are closed to the
 * runner, and the outputs stay poisoned. */
#include "redteam_x86.h" /* its text, put in place by redteam_native.sh */

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#if RT_X86
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
RT_UNSUPPORTED_KERNEL
#endif
