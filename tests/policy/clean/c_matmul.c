/* Clean native C kernel: C = A B, blocked over k and j, i-k-j inner order. */
#include "aka_native_abi.h"

#define BK 64
#define BJ 256

static void block(const float *a, const float *b, float *c, int64_t n, int64_t k, int64_t i,
                  int64_t k0, int64_t k1, int64_t j0, int64_t j1)
{
    for (int64_t p = k0; p < k1; p++) {
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
    int64_t m = inputs[0].shape[0], k = inputs[0].shape[1], n = inputs[1].shape[1];
    float *c = (float *)outputs[0].data;
    memset(c, 0, (size_t)(m * n) * sizeof(float));
    for (int64_t k0 = 0; k0 < k; k0 += BK)
        for (int64_t j0 = 0; j0 < n; j0 += BJ)
            for (int64_t i = 0; i < m; i++)
                block((const float *)inputs[0].data, (const float *)inputs[1].data, c, n, k, i, k0,
                      k0 + BK < k ? k0 + BK : k, j0, j0 + BJ < n ? j0 + BJ : n);
    return AKA_OK;
}
