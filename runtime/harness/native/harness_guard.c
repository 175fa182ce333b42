/*
 * harness_guard.c — the harness's process-level safety: the saved stdout that only
 * the result line is written to, progress logging on stderr, the monotonic clock,
 * and the crash guard around every entry-point call.
 *
 * stdout: fd 1 is duplicated before any kernel code runs and then pointed at
 * stderr, so whatever a kernel prints (printf is allowed) lands on stderr and can
 * neither corrupt nor forge the RESULT_JSON line.
 *
 * Crash guard: SIGSEGV, SIGBUS, SIGFPE and SIGILL raised while the calling thread
 * is inside an entry point jump back to hx_guarded (on an alternate stack, so a
 * stack overflow is caught too), which returns HX_CRASHED; the flow then names the
 * shape in a result instead of dying without one.
 */
#define _GNU_SOURCE
#include "harness_core.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- stdout discipline and logging ---- */

static int g_out_fd = -1;

int hx_take_stdout(void)
{
    fflush(stdout);
    g_out_fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
    if (g_out_fd < 0 || dup2(2, 1) < 0)
        return -1;
    return 0;
}

void hx_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("aka-harness: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    fflush(stderr);
    va_end(ap);
}

double hx_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* ---- crash guard ---- */

static sigjmp_buf g_jmp;
static volatile sig_atomic_t g_in_call, g_signal;
static _Thread_local int g_is_main;

static void on_fault(int sig)
{
    /* Only the thread that called the entry can jump back; a fault on a thread the
     * kernel started ends the process (evaluate.c reports it from the exit status). */
    if (g_in_call && g_is_main) {
        g_in_call = 0;
        siglongjmp(g_jmp, sig);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_guard(void)
{
    static int done;
    static char altstack[1 << 16]; /* a stack overflow in the kernel still reaches the handler */
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    struct sigaction sa;
    stack_t ss;
    if (done)
        return;
    done = g_is_main = 1;
    memset(&ss, 0, sizeof(ss));
    ss.ss_sp = altstack;
    ss.ss_size = sizeof(altstack);
    sigaltstack(&ss, NULL);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_fault;
    sa.sa_flags = SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaction(sigs[i], &sa, NULL);
}

int hx_last_signal(void)
{
    return (int)g_signal;
}

int hx_guarded(hx_entry fn, const aka_tensor *in, int n_in, aka_tensor *out, int n_out,
               const aka_params *p, double *us)
{
    double t0, t1;
    int rc, sig;
    install_guard();
    if ((sig = sigsetjmp(g_jmp, 1)) != 0) {
        g_signal = sig;
        *us = 0;
        return HX_CRASHED;
    }
    g_in_call = 1;
    t0 = hx_now_us();
    rc = fn(in, n_in, out, n_out, p);
    t1 = hx_now_us();
    g_in_call = 0;
    *us = t1 - t0;
    return rc;
}

void hx_emit_result(const char *json_text)
{
    static const char prefix[] = "RESULT_JSON=";
    size_t len = strlen(json_text), off = 0;
    if (write(g_out_fd, prefix, sizeof(prefix) - 1) < 0)
        hx_log("cannot write the result: %s", strerror(errno));
    while (off < len) {
        ssize_t w = write(g_out_fd, json_text + off, len - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    if (write(g_out_fd, "\n", 1) < 0)
        hx_log("cannot write the result: %s", strerror(errno));
}
