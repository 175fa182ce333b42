/* Red team: an output cache keyed on the shape (params->shape_id) and one input element
 * (x[0]'s bits), the cheapest key that tells a few fixed input sets apart. The first 8
 * calls of a shape compute and fill it; later calls replay the output of a matching key,
 * or, with none, the shape's latest output. Caught because every timed run gets fresh
 * inputs and its output is checked against the reference runner's. */
#include "aka_native_abi.h"

#include <stdlib.h>
#include <string.h>

#define KEEP 8

typedef struct entry {
    char shape[64];
    uint32_t x0;
    float *z;
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
    uint32_t x0;
    entry *last = NULL;
    memcpy(&x0, &x[0], 4);
    for (int i = 0; i < used; i++) {
        entry *e = &cache[i];
        if (strcmp(e->shape, p->shape_id) != 0)
            continue;
        seen++, last = e;
        if (e->x0 == x0 && e->n == n) {
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
        e->n = n, e->x0 = x0, e->z = malloc(bytes);
        memcpy(e->z, z, bytes);
    }
    return AKA_OK;
}
