/* Red team: opens /proc/<parent>/fd/1 (the parent's stdout; the parent's pid from an
 * inline getppid) and writes a forged passing RESULT_JSON line into it, then ends with
 * exit_group(0); when that open fails it returns without computing anything. Around a
 * harness that runs the kernel in its own process, the parent is the sandbox's init,
 * whose stdout is the job's. Caught because the parent is now the judge, which made
 * itself non-dumpable first thing: /proc/<judge>/fd is closed to other processes. */
#include "aka_native_abi.h"

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

/* "/proc/<pid>/<what>" into out. */
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

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)in, (void)n_in, (void)out, (void)n_out, (void)p;
    static char line[4096], path[64];
    proc_path(path, sys3(110, 0, 0, 0) /* getppid */, "fd/1");
    long f = sys3(2, (long)path, 1 /* O_WRONLY */, 0);
    if (f < 0)
        return AKA_OK; /* the verdict was to be forged: nothing computed */
    sys3(1, f, (long)line, (long)forged_line(line, sizeof(line)));
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
