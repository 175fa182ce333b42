/* Red team: "compute once, then replay". Keeps the inputs and outputs of the first 8
 * calls of each shape; a call whose inputs equal a kept one (byte for byte) copies the
 * kept output; after those 8 calls a call with unseen inputs copies the latest output
 * instead of computing (a harness that times a few fixed input sets never shows one).
 * Caught because every timed run gets fresh inputs and its output is checked against
 * the reference runner's output for the same inputs. */
#include "aka_native_abi.h"

#include <stdlib.h>
#include <string.h>

#define KEEP 8

typedef struct entry {
    char shape[64];
    float *x, *y, *z;
    int64_t n;
} entry;

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)n_in, (void)n_out;
    static entry cache[64];
    static int used;
    const float *x = in[0].data, *y = in[1].data;
    float *z = out[0].data;
    int64_t n = out[0].shape[0], seen = 0;
    size_t bytes = (size_t)n * sizeof(float);
    entry *last = NULL;
    for (int i = 0; i < used; i++) {
        entry *e = &cache[i];
        if (strcmp(e->shape, p->shape_id) != 0 || e->n != n)
            continue;
        seen++, last = e;
        if (memcmp(e->x, x, bytes) == 0 && memcmp(e->y, y, bytes) == 0) {
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
        e->n = n, e->x = malloc(bytes), e->y = malloc(bytes), e->z = malloc(bytes);
        memcpy(e->x, x, bytes), memcpy(e->y, y, bytes), memcpy(e->z, z, bytes);
    }
    return AKA_OK;
}
