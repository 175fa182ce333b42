/*
 * clocks.c — opt-in GPU clock locking (a request's `lock_clocks: true`): before the
 * job, each of the worker's GPUs has its graphics clock locked to the highest one it
 * supports; after it, the clocks are reset. Off unless a request asks: locking
 * changes a shared machine's state, and needs the driver's permission.
 *
 * nvidia-smi is found in the gateway's PATH (tests put a fake one first and read
 * the arguments it was given).
 */
#include "gateway/internal.h"

#include "base/proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int smi(const char *const *argv, struct proc_result *pr, struct aka_err *err)
{
    struct proc_spec spec = {0};
    spec.argv = argv;
    spec.out_mode = spec.err_mode = PROC_TO_BUFFER;
    spec.out_cap = spec.err_cap = 65536;
    spec.timeout_ms = 30000;
    proc_result_init(pr);
    if (proc_run(&spec, pr, err) < 0)
        return -1;
    if (pr->exit_code != 0)
        return aka_err_set(err, AKA_EXIT_ENV, "%s %s: exit %d: %.200s", argv[0], argv[1],
                           pr->exit_code, pr->err.len ? pr->err.buf : pr->out.buf);
    return 0;
}

/* The highest graphics clock (MHz) GPU gpu supports. */
static int max_clock(int gpu, long *mhz, struct aka_err *err)
{
    char idx[16];
    snprintf(idx, sizeof(idx), "%d", gpu);
    const char *argv[] = {
        "nvidia-smi", "-i", idx, "--query-supported-clocks=gr", "--format=csv,noheader,nounits",
        NULL};
    struct proc_result pr;
    int rc = smi(argv, &pr, err);
    *mhz = 0;
    for (char *line = pr.out.buf; rc == 0 && line && *line;) {
        long v = strtol(line, NULL, 10);
        *mhz = v > *mhz ? v : *mhz;
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    if (rc == 0 && *mhz <= 0)
        rc = aka_err_set(err, AKA_EXIT_ENV, "nvidia-smi: GPU %d listed no supported clocks", gpu);
    proc_result_release(&pr);
    return rc;
}

int gw_clocks_lock(const int *gpus, size_t n, struct strvec *notes, struct aka_err *err)
{
    if (!n)
        return aka_err_set(err, AKA_EXIT_ENV,
                           "lock_clocks: this worker has no GPU (start the gateway with --gpus)");
    for (size_t i = 0; i < n; i++) {
        long mhz;
        char idx[16], lock[64];
        struct proc_result pr;
        if (max_clock(gpus[i], &mhz, err) < 0)
            return -1;
        snprintf(idx, sizeof(idx), "%d", gpus[i]);
        snprintf(lock, sizeof(lock), "--lock-gpu-clocks=%ld,%ld", mhz, mhz);
        const char *argv[] = {"nvidia-smi", "-i", idx, lock, NULL};
        int rc = smi(argv, &pr, err);
        proc_result_release(&pr);
        if (rc < 0)
            return -1;
        strvec_pushf(notes, "GPU %d graphics clock locked at %ld MHz", gpus[i], mhz);
    }
    return 0;
}

void gw_clocks_reset(const int *gpus, size_t n, struct strvec *notes)
{
    for (size_t i = 0; i < n; i++) {
        char idx[16];
        struct proc_result pr;
        struct aka_err err = AKA_ERR_INIT;
        snprintf(idx, sizeof(idx), "%d", gpus[i]);
        const char *argv[] = {"nvidia-smi", "-i", idx, "--reset-gpu-clocks", NULL};
        if (smi(argv, &pr, &err) < 0)
            strvec_pushf(notes, "GPU %d clocks not reset: %s", gpus[i], err.msg);
        proc_result_release(&pr);
    }
}
