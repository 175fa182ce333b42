/*
 * matmul seed kernel for the built-in tuner: the classic packed, blocked GEMM in
 * plain C11, single-threaded.
 *
 *   for each KC-deep slice of k:
 *     pack b's slice into NR-wide column panels (zero-padded at the right edge)
 *     for each MC-tall block of rows:
 *       pack a's block into MR-tall row panels (zero-padded at the bottom edge)
 *       for each MR x NR tile of c: the micro-kernel
 *
 * The micro-kernel keeps an MR x NR block of c in local accumulators and walks the
 * two packed panels with unit stride, so its inner loop over NR is one or two vector
 * registers wide and the compiler keeps the accumulators in registers. Its blocking
 * (MR, NR) is the variant; the cache blocking (KC, MC) and the compiler flags
 * (AKA_CC_*: the evaluator turns each into one flag of a closed list) are knobs.
 */
#include "aka_native_abi.h"

#include <stdlib.h>
#include <string.h>

/* The knobs in the order a person would try them (the search's tie-break: earlier knobs
 * first): the vector instructions, the vector width of the micro-kernel, the optimization
 * level that unrolls it into registers, its height, contraction into FMAs, then the cache
 * blocking and loop unrolling. */
/* aka:tune AKA_CC_ARCH in {generic, native} */
#ifndef AKA_CC_ARCH
#define AKA_CC_ARCH generic
#endif
/* aka:tune NR in {8, 16, 32} */
#ifndef NR
#define NR 16
#endif
/* aka:tune AKA_CC_OPT in {O2, O3} */
#ifndef AKA_CC_OPT
#define AKA_CC_OPT O2
#endif
/* aka:tune MR in {4, 6, 8} */
#ifndef MR
#define MR 4
#endif
/* aka:tune AKA_CC_FMA in {off, on} */
#ifndef AKA_CC_FMA
#define AKA_CC_FMA off
#endif
/* aka:tune KC in {128, 256, 512} */
#ifndef KC
#define KC 256
#endif
/* aka:tune MC in {48, 96, 192} */
#ifndef MC
#define MC 96
#endif
/* aka:tune AKA_CC_UNROLL in {off, on} */
#ifndef AKA_CC_UNROLL
#define AKA_CC_UNROLL off
#endif

#define CEIL_DIV(x, y) (((x) + (y)-1) / (y))

static int64_t min64(int64_t x, int64_t y)
{
    return x < y ? x : y;
}

/* Packing buffer i of at least n floats, 64-byte aligned (a cache line, one AVX-512
 * register). Kept from call to call: a fresh allocation of this size is a fresh mapping
 * whose page faults would cost more than small shapes' whole product. */
static float *scratch(int i, size_t n)
{
    static float *buf[2];
    static size_t cap[2];
    if (cap[i] < n) {
        free(buf[i]);
        cap[i] = (n + 15) / 16 * 16;
        if (!(buf[i] = aligned_alloc(64, cap[i] * sizeof(float))))
            cap[i] = 0;
    }
    return buf[i];
}

/* b[p0..p0+kc, 0..n] as NR-wide panels, each kc x NR row-major; columns past n are 0. */
static void pack_b(const float *b, int64_t n, int64_t p0, int64_t kc, float *restrict out)
{
    for (int64_t j0 = 0; j0 < n; j0 += NR) {
        int64_t w = min64(NR, n - j0);
        for (int64_t p = 0; p < kc; p++) {
            const float *src = b + (p0 + p) * n + j0;
            float *dst = out + p * NR;
            for (int64_t j = 0; j < w; j++)
                dst[j] = src[j];
            for (int64_t j = w; j < NR; j++)
                dst[j] = 0.0f;
        }
        out += kc * NR;
    }
}

/* a[i0..i0+mc, p0..p0+kc] as MR-tall panels, each kc x MR (column of the panel per p). */
static void pack_a(const float *a, int64_t k, int64_t i0, int64_t mc, int64_t p0, int64_t kc,
                   float *restrict out)
{
    for (int64_t r0 = 0; r0 < mc; r0 += MR) {
        int64_t h = min64(MR, mc - r0);
        for (int64_t p = 0; p < kc; p++) {
            for (int64_t i = 0; i < h; i++)
                out[p * MR + i] = a[(i0 + r0 + i) * k + p0 + p];
            for (int64_t i = h; i < MR; i++)
                out[p * MR + i] = 0.0f;
        }
        out += kc * MR;
    }
}

/* c[0..h, 0..w] (row stride n) += the packed panels' product over kc. */
static void micro(int64_t kc, const float *restrict ap, const float *restrict bp, float *c,
                  int64_t n, int64_t h, int64_t w)
{
    float acc[MR][NR];
    memset(acc, 0, sizeof(acc));
    for (int64_t p = 0; p < kc; p++) {
        const float *bv = bp + p * NR;
        for (int i = 0; i < MR; i++) {
            float av = ap[p * MR + i];
            for (int j = 0; j < NR; j++)
                acc[i][j] += av * bv[j];
        }
    }
    for (int64_t i = 0; i < h; i++)
        for (int64_t j = 0; j < w; j++)
            c[i * n + j] += acc[i][j];
}

/* One MC x n block of c over one KC slice, from packed a and b. */
static void block(const float *ap, const float *bp, float *c, int64_t n, int64_t mc, int64_t kc)
{
    for (int64_t j0 = 0; j0 < n; j0 += NR) {
        const float *bpan = bp + (j0 / NR) * kc * NR;
        for (int64_t r0 = 0; r0 < mc; r0 += MR)
            micro(kc, ap + (r0 / MR) * kc * MR, bpan, c + r0 * n + j0, n, min64(MR, mc - r0),
                  min64(NR, n - j0));
    }
}

int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
               const aka_params *params)
{
    (void)params;
    if (n_in != 2 || n_out != 1)
        return AKA_ERR_SHAPE;
    const float *a = (const float *)inputs[0].data;
    const float *b = (const float *)inputs[1].data;
    float *c = (float *)outputs[0].data;
    int64_t m = inputs[0].shape[0], k = inputs[0].shape[1], n = inputs[1].shape[1];
    float *bp = scratch(0, (size_t)(KC * CEIL_DIV(n, NR) * NR));
    float *ap = scratch(1, (size_t)(KC * CEIL_DIV(MC, MR) * MR));
    if (!ap || !bp)
        return AKA_ERR_UNSUPPORTED; /* no memory for the packed panels */
    /* Outputs arrive with garbage in them (ABI): clear before accumulating. */
    memset(c, 0, (size_t)(m * n) * sizeof(float));
    for (int64_t p0 = 0; p0 < k; p0 += KC) {
        int64_t kc = min64(KC, k - p0);
        pack_b(b, n, p0, kc, bp);
        for (int64_t i0 = 0; i0 < m; i0 += MC) {
            int64_t mc = min64(MC, m - i0);
            pack_a(a, k, i0, mc, p0, kc, ap);
            block(ap, bp, c + i0 * n, n, mc, kc);
        }
    }
    return AKA_OK;
}
