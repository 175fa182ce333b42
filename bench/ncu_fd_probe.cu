// ncu_fd_probe.cu — which of the native judge's ways of starting a runner makes a CUDA
// child wait ~300 s under Nsight Compute (issue 15, the native profile's stall).
//
//   ncu --target-processes all ... ./ncu_fd_probe VARIANT...
//
// The parent never touches CUDA (like the judge). It prints its own descriptors and the
// profiler's environment, then for each VARIANT forks a child that prepares itself the way
// the variant says and execs this program again as "child": the child prints its
// descriptors, initialises CUDA (cudaGetDeviceCount, as the runner's cuda_setup does),
// runs one kernel and prints how long that took. A child still running after
// PROBE_CHILD_S seconds (default 25) is killed and reported as stalled.
//
// Variants: plain (fork, exec); fd3 (a memfd put at descriptor 3 first, as the judge
// does for HP_FD); closeall (every descriptor from 3 closed); runnerlike (exactly what
// judge_runner.c's exec_runner does: stdin /dev/null, stdout on stderr, the memfd at 3,
// every descriptor above it closed, PDEATHSIG, pinned off the parent's CPU); pinned (the
// parent pinned to its first CPU first, as hx_pin does, then plain; it stays pinned for
// the variants after it, so name it last).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <cuda_runtime.h>
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

__global__ void probe_kernel(float *x)
{
    x[threadIdx.x] += 1.0f;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void show_fds(const char *who)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    char path[64], target[256];
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, target, sizeof(target) - 1);
        target[n > 0 ? n : 0] = 0;
        int fl = fcntl(atoi(e->d_name), F_GETFD);
        fprintf(stderr, "%s fd %s -> %s%s\n", who, e->d_name, target,
                fl >= 0 && (fl & FD_CLOEXEC) ? " (cloexec)" : "");
    }
    if (d)
        closedir(d);
}

static int child(void)
{
    double t0 = now_s();
    int n = -1;
    float *x = NULL;
    show_fds("  child");
    cudaError_t rc = cudaGetDeviceCount(&n);
    double t1 = now_s();
    if (rc == cudaSuccess && cudaMalloc(&x, 128 * sizeof(float)) == cudaSuccess) {
        probe_kernel<<<1, 128>>>(x);
        rc = cudaDeviceSynchronize();
    }
    fprintf(stderr, "  child: cudaGetDeviceCount %.2f s (%d devices), kernel done at %.2f s: %s\n",
            t1 - t0, n, now_s() - t0, cudaGetErrorString(rc));
    return rc == cudaSuccess ? 0 : 1;
}

static void pin_first_cpu(int keep_first)
{
    cpu_set_t all, set;
    int first = -1;
    if (sched_getaffinity(0, sizeof(all), &all) != 0 || CPU_COUNT(&all) < 2)
        return;
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
        if (CPU_ISSET(c, &all))
            first = c;
    CPU_ZERO(&set);
    if (keep_first)
        CPU_SET(first, &set);
    else
        set = all, CPU_CLR(first, &set);
    sched_setaffinity(0, sizeof(set), &set);
}

static void prepare(const char *v, int memfd)
{
    if (!strcmp(v, "fd3") || !strcmp(v, "runnerlike")) /* as exec_runner: kept across exec */
        memfd == 3 ? fcntl(3, F_SETFD, 0) : dup2(memfd, 3);
    if (!strcmp(v, "closeall"))
        syscall(SYS_close_range, 3, ~0U, 0);
    if (!strcmp(v, "runnerlike")) {
        int devnull = open("/dev/null", O_RDONLY);
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        pin_first_cpu(0);
        dup2(devnull, 0);
        dup2(2, 1);
        syscall(SYS_close_range, 4, ~0U, 0);
    }
}

static void run_variant(const char *self, const char *v)
{
    int memfd = memfd_create("probe", MFD_CLOEXEC);
    double t0 = now_s();
    int limit = getenv("PROBE_CHILD_S") ? atoi(getenv("PROBE_CHILD_S")) : 25, status = 0;
    if (!strcmp(v, "pinned"))
        pin_first_cpu(1);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        prepare(v, memfd);
        char *argv[] = {(char *)self, (char *)"child", NULL};
        execv(self, argv);
        _exit(127);
    }
    close(memfd);
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (now_s() - t0 > limit) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            fprintf(stderr, "== %s: STALLED (killed after %d s)\n", v, limit);
            return;
        }
        usleep(50000);
    }
    fprintf(stderr, "== %s: exit %d after %.2f s\n", v,
            WIFEXITED(status) ? WEXITSTATUS(status) : -1, now_s() - t0);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child"))
        return child();
    static char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[n > 0 ? n : 0] = 0;
    show_fds("parent");
    for (char **e = environ; *e; e++)
        if (strstr(*e, "NV") || strstr(*e, "INJECTION") || strstr(*e, "LD_PRELOAD"))
            fprintf(stderr, "parent env %.200s\n", *e);
    for (int i = 1; i < argc; i++)
        run_variant(self, argv[i]);
    return 0;
}
