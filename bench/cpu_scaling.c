/*
 * cpu_scaling.c — do the threads of one process run in parallel on this machine?
 *
 * The native judge fills and compares large inputs on up to 8 helper threads; on the lent
 * H100 (2026-12-06) a 5 M-float fill took the same 20 ms on one thread and on the helpers,
 * with 16 CPUs in the affinity mask and no cgroup v2 quota file. This prints, for 1, 2, 4
 * and 8 threads, the wall time of a fixed amount of work per thread (so perfect scaling
 * keeps the time flat): arithmetic only, then writing a fresh private buffer (page faults),
 * then rewriting a buffer already touched. Also the CPUs the process may use and the
 * quota files cgroup v1 and v2 may have.
 *
 *   cc -O2 -pthread bench/cpu_scaling.c -o /tmp/cpu_scaling && /tmp/cpu_scaling
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WORK_BYTES ((size_t)64 << 20)

typedef struct job {
    int kind; /* 0 arithmetic, 1 fresh buffer, 2 touched buffer */
    char *buf;
    uint64_t sink;
} job;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void *work(void *arg)
{
    job *j = arg;
    if (j->kind == 0) {
        uint64_t x = (uint64_t)(uintptr_t)j;
        for (long i = 0; i < 50000000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
        j->sink = x;
        return NULL;
    }
    if (j->kind == 1)
        j->buf = malloc(WORK_BYTES);
    memset(j->buf, (int)j->kind, WORK_BYTES);
    j->sink = (uint64_t)j->buf[WORK_BYTES - 1];
    return NULL;
}

static double run(int kind, int threads)
{
    pthread_t tid[8];
    job jobs[8];
    memset(jobs, 0, sizeof(jobs));
    for (int k = 0; k < threads; k++) {
        jobs[k].kind = kind;
        if (kind == 2) {
            jobs[k].buf = malloc(WORK_BYTES);
            memset(jobs[k].buf, 1, WORK_BYTES);
        }
    }
    double t0 = now_ms();
    for (int k = 0; k < threads; k++)
        pthread_create(&tid[k], NULL, work, &jobs[k]);
    for (int k = 0; k < threads; k++)
        pthread_join(tid[k], NULL);
    double t = now_ms() - t0;
    for (int k = 0; k < threads; k++)
        free(jobs[k].buf);
    return t;
}

static void cat(const char *path)
{
    char line[256];
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    while (fgets(line, sizeof(line), f))
        printf("%s: %s", path, line);
    fclose(f);
}

int main(void)
{
    static const char *const kinds[] = {"arithmetic", "fresh 64 MiB each", "touched 64 MiB each"};
    cpu_set_t mine;
    sched_getaffinity(0, sizeof(mine), &mine);
    printf("affinity: %d CPUs\n", CPU_COUNT(&mine));
    cat("/sys/fs/cgroup/cpu.max");
    cat("/sys/fs/cgroup/cpu/cpu.cfs_quota_us");
    cat("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
    cat("/sys/fs/cgroup/cpuset.cpus.effective");
    cat("/proc/self/cgroup");
    for (int kind = 0; kind < 3; kind++) {
        printf("%-20s", kinds[kind]);
        for (int threads = 1; threads <= 8; threads *= 2)
            printf("  %d: %7.1f ms", threads, run(kind, threads));
        printf("\n");
    }
    return 0;
}
