/* Red team: starts a helper thread on its first call that lives on between calls, where
 * it works outside every timed interval (here it keeps a private 1 MiB table warm in the
 * cache; a deferred-work kernel hands it the rest of each call). Every call computes
 * z = x + y correctly. Caught because the judge reads the runner's thread count once the
 * runner is asleep after every call: a thread still alive after the call returned. */
#define _GNU_SOURCE
#include "aka_native_abi.h"

#include <pthread.h>
#include <sched.h>

static float g_table[1 << 18];

static void *warm(void *arg)
{
    (void)arg;
    for (volatile float sink = 0;;) {
        for (int i = 0; i < (1 << 18); i += 16)
            sink += g_table[i];
        sched_yield();
    }
    return NULL;
}

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    (void)n_in, (void)n_out, (void)p;
    static pthread_t helper;
    static int started;
    if (!started++)
        pthread_create(&helper, NULL, warm, NULL);
    const float *x = in[0].data, *y = in[1].data;
    float *z = out[0].data;
    for (int64_t i = 0; i < out[0].shape[0]; i++)
        z[i] = x[i] + y[i];
    return AKA_OK;
}
