/* Red team probe: the pinger (the judge's calibration process, tests/redteam/native/README)
 * is a process of the same user as the runners. Its CPU time per handshake is subtracted
 * from every run's, so a runner that could write its memory (/proc/<pid>/mem writes through
 * page protections) could make it slow and lower its own latency. This kernel finds the
 * pinger (its sibling: the judge's other child while candidate code runs) and tries to open
 * its memory for writing. It computes z = x + y honestly only when it found the pinger and
 * the open was refused; otherwise its outputs are wrong (-1: no sibling found, so the probe
 * proved nothing; NaN: its memory was open to the runner). redteam_native.sh expects it to
 * pass. */
#include "redteam_x86.h" /* its text, put in place by redteam_native.sh */

#include <string.h>

#if RT_X86
/* The parent pid in /proc/<pid>/stat (the field after the state, after the last ')'). */
static long parent_of(long pid)
{
    char path[64], stat[512];
    proc_path(path, pid, "stat");
    long fd = sys3(2, (long)path, 0, 0), n = fd >= 0 ? sys3(0, fd, (long)stat, 511) : -1, ppid = 0;
    if (fd >= 0)
        sys3(3, fd, 0, 0);
    if (n <= 0)
        return -1;
    stat[n] = '\0';
    const char *c = strrchr(stat, ')');
    if (!c || !c[1] || !c[2] || !c[3])
        return -1;
    for (c += 4; *c >= '0' && *c <= '9'; c++) /* ") S 123 ..." */
        ppid = ppid * 10 + (*c - '0');
    return ppid;
}

/* The pinger's pid: another child of this runner's parent (scanning /proc with getdents64);
 * 0 when none is found. */
static long find_pinger(void)
{
    static char buf[1 << 15];
    long fd = sys3(2, (long)"/proc", 0200000 /* O_DIRECTORY */, 0), n, found = 0;
    long self = sys3(39, 0, 0, 0), parent = sys3(110, 0, 0, 0); /* getpid, getppid */
    while (fd >= 0 && !found && (n = sys3(217, fd, (long)buf, sizeof(buf))) > 0)
        for (long at = 0; at < n && !found;) {
            unsigned short reclen = *(unsigned short *)(buf + at + 16);
            const char *name = buf + at + 19;
            long pid = 0;
            for (const char *c = name; *c >= '0' && *c <= '9'; c++)
                pid = pid * 10 + (*c - '0');
            if (pid > 0 && pid != self && parent_of(pid) == parent)
                found = pid;
            at += reclen;
        }
    if (fd >= 0)
        sys3(3, fd, 0, 0);
    return found;
}

/* 1: refused (the defence holds), 0: open for writing, -1: no pinger found. */
static int probe(void)
{
    char path[64];
    long pid = find_pinger();
    if (!pid)
        return -1;
    proc_path(path, pid, "mem");
    long fd = sys3(2, (long)path, 2 /* O_RDWR */, 0);
    if (fd < 0)
        return 1;
    sys3(3, fd, 0, 0);
    return 0;
}

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)n_in, (void)n_out, (void)p;
    static int verdict = 2;
    if (verdict == 2)
        verdict = probe();
    const float *x = in[0].data, *y = in[1].data;
    float *z = out[0].data;
    for (int64_t i = 0; i < out[0].shape[0]; i++)
        z[i] = verdict == 1 ? x[i] + y[i] : verdict == 0 ? __builtin_nanf("") : -1.0f;
    return AKA_OK;
}
#else
RT_UNSUPPORTED_KERNEL
#endif
