/*
 * runner_cpu.c — the CPU backend of a runner: tensors are used where the judge
 * wrote them (the shared mapping), and a call is timed with this process's
 * own CLOCK_MONOTONIC.
 *
 * That time is only reported: the judge times the same call with its own
 * clock around the handshake (harness_proto.h) and uses its number as the
 * latency. A kernel that patches this process's clock (its GOT slot, the vDSO)
 * only changes the reported number, which the judge compares with its own
 * and calls "timing tampered" when they disagree.
 */
#define _GNU_SOURCE
#include "runner.h"

#include <time.h>

static int cpu_setup(int ask, int *span, int64_t *device_free, char *err, size_t n)
{
    (void)ask, (void)err, (void)n;
    *span = 0; /* a CPU call is timed by the judge's clocks */
    *device_free = 0;
    return 0;
}

static int cpu_shape(rn_shape *s, char *err, size_t n)
{
    (void)err, (void)n;
    s->params.stream = NULL;
    return 0;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cpu_call(const rn_shape *s, int slot, double *us, char *err, size_t n)
{
    (void)err, (void)n;
    double t0 = now_us();
    int rc = aka_runner_entry(s->host_in + slot * s->n_in, s->n_in, s->host_out + slot * s->n_out,
                              s->n_out, &s->params);
    *us = now_us() - t0;
    return rc;
}

const rn_backend rn_target = {cpu_setup, cpu_shape, NULL, cpu_call, NULL, NULL};
