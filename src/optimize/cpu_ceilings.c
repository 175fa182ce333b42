/*
 * cpu_ceilings.c — the CPU's roofline ceilings for one core, measured once per host and
 * cached: the peak float32 FLOP rate (independent fused multiply-adds in the widest
 * vectors the CPU has) and the copy bandwidth (memcpy between two buffers far larger than
 * the last-level cache a core sees). A native C kernel is single-threaded, so these are
 * the limits it is measured against.
 *
 * Cache: $XDG_CACHE_HOME/aka/cpu_ceilings.json (else ~/.cache/aka/), one object
 * {"schema": "aka.cpu_ceilings.v1", "host": H, "cpu": MODEL, "fp32_flops_per_s": F,
 *  "copy_bytes_per_s": B, "measured_at": T}; a different host or CPU model measures again.
 * The wiki records only ISA facts for host CPUs (runtime/plugins/gpu-wiki, x86-cpu.json
 * says to measure), so nothing here is taken from memory.
 */
#include "base/fs.h"
#include "base/json.h"
#include "optimize/optimize.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define FMA_ITERS  (1L << 22)
#define COPY_BYTES ((size_t)256 << 20) /* per buffer: above any core's share of the LLC here */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 12 independent accumulators cover the FMA latency (4 cycles) on two ports; named, not an
 * array, so that they stay in registers without relying on the optimizer to unroll. */
#define FMA12(fma)                                                                                 \
    do {                                                                                           \
        a0 = fma(a0, m, c), a1 = fma(a1, m, c), a2 = fma(a2, m, c), a3 = fma(a3, m, c);            \
        a4 = fma(a4, m, c), a5 = fma(a5, m, c), a6 = fma(a6, m, c), a7 = fma(a7, m, c);            \
        a8 = fma(a8, m, c), a9 = fma(a9, m, c), a10 = fma(a10, m, c), a11 = fma(a11, m, c);        \
    } while (0)
#define SUM12(add)                                                                                 \
    add(add(add(add(a0, a1), add(a2, a3)), add(add(a4, a5), add(a6, a7))),                         \
        add(add(a8, a9), add(a10, a11)))

#if defined(__x86_64__)
__attribute__((target("avx512f"))) static double fma_avx512(long iters)
{
    __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
    __m512 a0 = _mm512_set1_ps(0), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0,
           a8 = a0, a9 = a0, a10 = a0, a11 = a0;
    for (long it = 0; it < iters; it++)
        FMA12(_mm512_fmadd_ps);
    return _mm512_reduce_add_ps(SUM12(_mm512_add_ps)); /* kept: the loop is not dead code */
}

__attribute__((target("avx2,fma"))) static double fma_avx2(long iters)
{
    __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
    __m256 a0 = _mm256_set1_ps(0), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0,
           a8 = a0, a9 = a0, a10 = a0, a11 = a0;
    float out[8], s = 0;
    for (long it = 0; it < iters; it++)
        FMA12(_mm256_fmadd_ps);
    _mm256_storeu_ps(out, SUM12(_mm256_add_ps));
    for (int i = 0; i < 8; i++)
        s += out[i];
    return s;
}
#endif

static float fma_f(float x, float m, float c)
{
    return x * m + c;
}

static float add_f(float x, float y)
{
    return x + y;
}

static double fma_scalar(long iters)
{
    volatile float sink;
    float m = 0.999999f, c = 1e-7f, a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0,
          a8 = 0, a9 = 0, a10 = 0, a11 = 0;
    for (long it = 0; it < iters; it++)
        FMA12(fma_f);
    sink = SUM12(add_f);
    return sink;
}

/* FLOP/s: best of three runs of the widest variant this CPU runs. */
static double peak_flops(void)
{
    double best = 0, lanes = 1, (*fn)(long) = fma_scalar;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        fn = fma_avx512, lanes = 16;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        fn = fma_avx2, lanes = 8;
#endif
    for (int r = 0; r < 3; r++) {
        double t0 = now_s(), sink = fn(FMA_ITERS), t = now_s() - t0;
        if (t > 0 && isfinite(sink))
            best = fmax(best, 2.0 * lanes * 12.0 * (double)FMA_ITERS / t);
    }
    return best;
}

/* Bytes/s of memcpy (read + write counted): best of five. */
static double copy_bandwidth(void)
{
    char *a = malloc(COPY_BYTES), *b = malloc(COPY_BYTES);
    double best = 0;
    if (a && b) {
        memset(a, 1, COPY_BYTES);
        memset(b, 2, COPY_BYTES);
        for (int r = 0; r < 5; r++) {
            double t0 = now_s();
            memcpy(r % 2 ? a : b, r % 2 ? b : a, COPY_BYTES);
            double t = now_s() - t0;
            if (t > 0)
                best = fmax(best, 2.0 * (double)COPY_BYTES / t);
        }
    }
    free(a);
    free(b);
    return best;
}

static void cpu_model(char *out, size_t n)
{
    struct strbuf sb = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    snprintf(out, n, "unknown");
    if (aka_read_file("/proc/cpuinfo", &sb, (size_t)4 << 20, &ignored) == 0) {
        const char *p = strstr(sb.buf, "model name");
        const char *colon = p ? strchr(p, ':') : NULL;
        if (colon) {
            size_t len = strcspn(colon + 2, "\n");
            snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), colon + 2);
        }
    }
    strbuf_release(&sb);
}

static void cache_path(struct strbuf *out)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        strbuf_addf(out, "%s/aka/cpu_ceilings.json", xdg);
    else
        strbuf_addf(out, "%s/.cache/aka/cpu_ceilings.json", home && *home ? home : "/tmp");
}

/* The cached ceilings when they are this host's and CPU's. */
static bool load_cached(const char *path, const char *host, const char *cpu, double *flops,
                        double *bw)
{
    json_t *doc = NULL;
    struct aka_err ignored = AKA_ERR_INIT;
    bool ok = false;
    if (aka_is_file(path) && aka_json_load_file(path, &doc, &ignored) == 0) {
        const char *h = json_string_value(json_object_get(doc, "host"));
        const char *c = json_string_value(json_object_get(doc, "cpu"));
        *flops = json_number_value(json_object_get(doc, "fp32_flops_per_s"));
        *bw = json_number_value(json_object_get(doc, "copy_bytes_per_s"));
        ok = h && c && strcmp(h, host) == 0 && strcmp(c, cpu) == 0 && *flops > 0 && *bw > 0 &&
             isfinite(*flops) && isfinite(*bw);
    }
    json_decref(doc);
    return ok;
}

static void store(const char *path, const char *host, const char *cpu, double flops, double bw)
{
    struct aka_err ignored = AKA_ERR_INIT;
    struct strbuf dir = STRBUF_INIT;
    char when[32];
    time_t t = time(NULL);
    struct tm tm;
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
    json_t *doc = json_pack("{s:s, s:s, s:s, s:f, s:f, s:s}", "schema", "aka.cpu_ceilings.v1",
                            "host", host, "cpu", cpu, "fp32_flops_per_s", flops, "copy_bytes_per_s",
                            bw, "measured_at", when);
    strbuf_addstr(&dir, path);
    char *slash = strrchr(dir.buf, '/');
    if (slash)
        *slash = '\0';
    /* A cache: failing to write it only means measuring again next time. */
    if (doc && aka_mkdir_p(dir.buf, 0755, &ignored) == 0)
        aka_json_write_file(path, doc, &ignored);
    json_decref(doc);
    strbuf_release(&dir);
}

static void add_peak(struct aka_hw_peaks *p, const char *quantity, double per_s, const char *src)
{
    if (p->n >= AKA_HW_PEAKS_MAX)
        return;
    struct aka_hw_peak *k = &p->v[p->n++];
    snprintf(k->quantity, sizeof(k->quantity), "%s", quantity);
    snprintf(k->record, sizeof(k->record), "%s", src);
    k->per_s = per_s;
}

int aka_cpu_ceilings(bool measure, struct aka_hw_peaks *p)
{
    char host[256] = "", cpu[160];
    struct strbuf path = STRBUF_INIT;
    double flops = 0, bw = 0;
    int rc = 0;
    gethostname(host, sizeof(host) - 1);
    cpu_model(cpu, sizeof(cpu));
    cache_path(&path);
    if (!load_cached(path.buf, host, cpu, &flops, &bw)) {
        if (measure && (flops = peak_flops()) > 0 && (bw = copy_bandwidth()) > 0)
            store(path.buf, host, cpu, flops, bw);
        else
            rc = -1;
    }
    if (rc == 0) {
        /* Measured peaks come first: find_peak takes the first of a quantity. */
        memmove(p->v + 2, p->v,
                (p->n < AKA_HW_PEAKS_MAX - 2 ? p->n : AKA_HW_PEAKS_MAX - 2) * sizeof(p->v[0]));
        p->n = p->n < AKA_HW_PEAKS_MAX - 2 ? p->n : AKA_HW_PEAKS_MAX - 2;
        size_t n = p->n;
        p->n = 0;
        add_peak(p, "fp32_tflops", flops, "measured one core (cpu_ceilings.json)");
        add_peak(p, "memory_bandwidth", bw, "measured one-core memcpy (cpu_ceilings.json)");
        p->n += n;
    } else if (p->n == 0) {
        snprintf(p->why, sizeof(p->why), "this host's CPU ceilings are not measured yet (%s)",
                 path.buf);
    }
    strbuf_release(&path);
    return rc;
}
