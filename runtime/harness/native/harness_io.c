/*
 * harness_io.c — the judge's process-level plumbing: the saved stdout that only
 * the result line is written to, progress logging on stderr, the monotonic
 * clock, the evaluation's secret, and which CPUs the judge and the runners use.
 *
 * stdout: fd 1 is duplicated (close-on-exec) before any runner starts and then
 * pointed at stderr; runners inherit only the stderr side, so nothing a
 * runner writes can reach the stream aka parses through the judge.
 */
#define _GNU_SOURCE
#include "harness_core.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

static int g_out_fd = -1;
static cpu_set_t g_runner_cpus; /* empty: runners inherit the judge's affinity */
static cpu_set_t g_all_cpus;    /* the evaluation's CPUs before hx_pin; empty: unknown */

int hx_take_stdout(void)
{
    fflush(stdout);
    g_out_fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
    if (g_out_fd < 0 || dup2(2, 1) < 0)
        return -1;
    return 0;
}

void hx_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("aka-harness: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    fflush(stderr);
    va_end(ap);
}

double hx_now_us(void)
{
    return hp_now_us();
}

/*
 * With two CPUs or more, the judge keeps the lowest one and the runners get the others:
 * a runner woken by the judge is then never queued behind the judge's spin on the same
 * CPU (the scheduler likes to wake a task where its waker runs), which would add that
 * spin to the runner's CPU time and to the window. One CPU: nothing changes.
 */
void hx_pin(void)
{
    cpu_set_t all, judge;
    int first = -1;
    CPU_ZERO(&g_runner_cpus);
    CPU_ZERO(&g_all_cpus);
    if (sched_getaffinity(0, sizeof(all), &all) != 0 || CPU_COUNT(&all) < 2)
        return;
    g_all_cpus = all;
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
        if (CPU_ISSET(c, &all))
            first = c;
    CPU_ZERO(&judge);
    CPU_SET(first, &judge);
    if (sched_setaffinity(0, sizeof(judge), &judge) != 0)
        return;
    g_runner_cpus = all;
    CPU_CLR(first, &g_runner_cpus);
}

int hx_cpus(void)
{
    return CPU_COUNT(&g_all_cpus) > 1 ? CPU_COUNT(&g_all_cpus) : 1;
}

/*
 * A helper starts on the judge's one CPU (a new thread inherits its creator's affinity).
 * Allowed every CPU, it stayed there beside the judge's thread until the scheduler balanced
 * the load: a 2^24-element compare took 27 ms on two threads against 30 ms on one (2 vCPUs,
 * idle); on a 16-CPU H100 machine eight compared 2^24 elements at 1.4 times one thread's
 * speed and a 5 M-float fill gained nothing. A set without the judge's CPU moves it away at
 * once (17-20 ms on two threads here). The runners' CPUs: a runner is idle while the judge
 * fills or compares.
 */
void hx_pin_helper(void)
{
    hx_pin_runner();
}

void hx_pin_runner(void)
{
    if (CPU_COUNT(&g_runner_cpus) > 0)
        sched_setaffinity(0, sizeof(g_runner_cpus), &g_runner_cpus);
}

/*
 * Stores that bypass the caches (x86-64 non-temporal stores: a line they write is
 * evicted from every cache that held it), so a runner finds what the judge wrote in
 * memory, as a kernel finds its inputs in a real program, and never in the judge's cache.
 * dst is 64-byte aligned (harness_flow.c lays the mapping out so). Elsewhere: ordinary
 * stores, then the lines are cleaned and invalidated by address (aarch64 dc civac).
 */
#if defined(__x86_64__)
static void stream_tail(char *dst, size_t done, size_t n)
{
    __asm__ __volatile__("sfence" ::: "memory");
    if (done < n)
        __asm__ __volatile__("clflush %0" ::"m"(*(dst + done)));
    __asm__ __volatile__("mfence" ::: "memory");
}

void hx_stream_copy(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm_stream_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i)));
    memcpy(d + i, s + i, n - i);
    stream_tail(d, i, n);
}

void hx_stream_fill(void *dst, unsigned char byte, size_t n)
{
    char *d = dst;
    __m128i v = _mm_set1_epi8((char)byte);
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm_stream_si128((__m128i *)(d + i), v);
    memset(d + i, byte, n - i);
    stream_tail(d, i, n);
}
#else
static void evict(const void *p, size_t n)
{
#if defined(__aarch64__)
    uint64_t ctr;
    __asm__ __volatile__("mrs %0, ctr_el0" : "=r"(ctr));
    size_t line = (size_t)4 << ((ctr >> 16) & 0xF);
    const char *c = (const char *)((uintptr_t)p & ~(uintptr_t)(line - 1)),
               *end = (const char *)p + n;
    for (; c < end; c += line)
        __asm__ __volatile__("dc civac, %0" ::"r"(c) : "memory");
    __asm__ __volatile__("dsb ish" ::: "memory");
#else
    (void)p, (void)n; /* no user-level eviction here: the run starts from whatever cache holds */
#endif
}

void hx_stream_copy(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
    evict(dst, n);
}

void hx_stream_fill(void *dst, unsigned char byte, size_t n)
{
    memset(dst, byte, n);
    evict(dst, n);
}
#endif

int hx_secret(uint64_t *out)
{
    size_t got = 0;
    while (got < sizeof(*out)) {
        ssize_t n = getrandom((char *)out + got, sizeof(*out) - got, 0);
        if (n < 0 && errno != EINTR)
            return -1;
        got += n > 0 ? (size_t)n : 0;
    }
    return 0;
}

/* One write of the whole line where the pipe allows, so nothing interleaves inside it. */
void hx_emit_result(const char *json_text)
{
    static const char prefix[] = "RESULT_JSON=";
    size_t len = strlen(json_text), total = sizeof(prefix) - 1 + len + 1, off = 0;
    char *line = malloc(total);
    if (!line) {
        hx_log("cannot write the result: out of memory");
        return;
    }
    memcpy(line, prefix, sizeof(prefix) - 1);
    memcpy(line + sizeof(prefix) - 1, json_text, len);
    line[total - 1] = '\n';
    while (off < total) {
        ssize_t w = write(g_out_fd, line + off, total - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            hx_log("cannot write the result: %s", strerror(errno));
            break;
        }
        off += (size_t)w;
    }
    free(line);
}
