/* Red team: computes z = x + y correctly, but from the 9th call of a shape on (past the
 * correctness calls) it also flips the lowest mantissa bit of every x it read, as a kernel
 * using its inputs as scratch would. The change is far inside the tolerance, so outputs
 * computed from the changed inputs still match. Caught because the judge compares the
 * inputs with its own copy, bit for bit, after every run, timed runs included. */
#include "aka_native_abi.h"

#include <string.h>

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)n_in, (void)n_out;
    static const char *shape;
    static int calls;
    float *x = in[0].data;
    const float *y = in[1].data;
    float *z = out[0].data;
    if (!shape || strcmp(shape, p->shape_id) != 0)
        calls = 0, shape = p->shape_id;
    int scribble = ++calls > 8;
    for (int64_t i = 0; i < out[0].shape[0]; i++) {
        z[i] = x[i] + y[i];
        if (scribble) {
            uint32_t u;
            memcpy(&u, &x[i], 4);
            u ^= 1;
            memcpy(&x[i], &u, 4);
        }
    }
    return AKA_OK;
}
