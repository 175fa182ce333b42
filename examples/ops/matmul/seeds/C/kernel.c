/*
 * matmul seed kernel for the built-in tuner: cache blocking over (M, N, K) with
 * an i-k-j inner order, so the innermost loop streams contiguous rows of b and
 * c and the compiler can vectorize it. The three tile sizes are the knobs.
 */
#include "aka_native_abi.h"

#include <string.h>

/* aka:tune TILE_M in {16, 32, 64} */
#ifndef TILE_M
#define TILE_M 32
#endif
/* aka:tune TILE_N in {16, 32, 64, 128} */
#ifndef TILE_N
#define TILE_N 64
#endif
/* aka:tune TILE_K in {16, 32, 64} */
#ifndef TILE_K
#define TILE_K 32
#endif

static int64_t min64(int64_t x, int64_t y)
{
    return x < y ? x : y;
}

/* c[i0.., j0..] += a[i0.., p0..] @ b[p0.., j0..] for one tile. */
static void tile(const float *restrict a, const float *restrict b, float *restrict c, int64_t n,
                 int64_t k, int64_t i0, int64_t i1, int64_t j0, int64_t j1, int64_t p0, int64_t p1)
{
    for (int64_t i = i0; i < i1; i++)
        for (int64_t p = p0; p < p1; p++) {
            float av = a[i * k + p];
            for (int64_t j = j0; j < j1; j++)
                c[i * n + j] += av * b[p * n + j];
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
    /* Outputs arrive with garbage in them (ABI): clear before accumulating. */
    memset(c, 0, (size_t)(m * n) * sizeof(float));
    for (int64_t i0 = 0; i0 < m; i0 += TILE_M)
        for (int64_t p0 = 0; p0 < k; p0 += TILE_K)
            for (int64_t j0 = 0; j0 < n; j0 += TILE_N)
                tile(a, b, c, n, k, i0, min64(i0 + TILE_M, m), j0, min64(j0 + TILE_N, n), p0,
                     min64(p0 + TILE_K, k));
    return AKA_OK;
}
