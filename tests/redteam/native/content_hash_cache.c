/* Red team: an output cache keyed on a cheap hash of 64 sampled input elements (the
 * "content hash" cache behind published fake speedups). The first 8 calls of a shape
 * compute and fill it; later calls replay the output of a matching hash, or, with no
 * match, the latest output. Caught because every timed run gets fresh inputs and its
 * output is checked against the reference runner's output for the same inputs. */
#include "aka_native_abi.h"

#include <stdlib.h>
#include <string.h>

#define KEEP 8

typedef struct entry {
    char shape[64];
    uint64_t key;
    float *z;
    int64_t n;
} entry;

static uint64_t sample_hash(const float *x, const float *y, int64_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (int k = 0; k < 64; k++) {
        uint32_t a, b;
        int64_t i = (n - 1) * k / 63;
        memcpy(&a, &x[i], 4), memcpy(&b, &y[i], 4);
        h = (h ^ a ^ ((uint64_t)b << 32)) * 1099511628211ull;
    }
    return h;
}

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)n_in, (void)n_out;
    static entry cache[64];
    static int used;
    const float *x = in[0].data, *y = in[1].data;
    float *z = out[0].data;
    int64_t n = out[0].shape[0], seen = 0;
    size_t bytes = (size_t)n * sizeof(float);
    uint64_t key = sample_hash(x, y, n);
    entry *last = NULL;
    for (int i = 0; i < used; i++) {
        entry *e = &cache[i];
        if (strcmp(e->shape, p->shape_id) != 0 || e->n != n)
            continue;
        seen++, last = e;
        if (e->key == key) {
            memcpy(z, e->z, bytes);
            return AKA_OK;
        }
    }
    if (seen >= KEEP && last) {
        memcpy(z, last->z, bytes);
        return AKA_OK;
    }
    for (int64_t i = 0; i < n; i++)
        z[i] = x[i] + y[i];
    if (used < 64) {
        entry *e = &cache[used++];
        strncpy(e->shape, p->shape_id, sizeof(e->shape) - 1);
        e->n = n, e->key = key, e->z = malloc(bytes);
        memcpy(e->z, z, bytes);
    }
    return AKA_OK;
}
