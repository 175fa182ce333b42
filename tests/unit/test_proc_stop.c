/*
 * test_proc_stop.c — stop signals caught through base/proc (proc_catch_stop_signals):
 * a SIGTERM that arrives while proc_wait supervises a child ends the child's whole
 * process group and fails the wait with 143; afterwards nothing new starts, except a
 * cleanup command marked after_stop, which runs to its end.
 *
 * Its own binary: the recorded signal is process-wide and never reset, so no other
 * test could run after it. The child signals its parent (this process) itself, so
 * the signal arrives exactly while proc_wait is waiting.
 */
#include "aka_test.h"

#include "base/proc.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The background sleeper's pid, which the child printed before signalling us. */
static pid_t printed_pid(const struct proc_result *r)
{
    return (pid_t)atol(r->out.buf);
}

/* Reap the orphaned sleeper (we are its subreaper): it must have died of a signal. */
static void assert_sleeper_ended(pid_t pid)
{
    int st = 0;
    pid_t got = 0;
    for (int i = 0; i < 300 && got == 0; i++) {
        got = waitpid(pid, &st, WNOHANG);
        if (got == 0)
            usleep(10000);
    }
    if (got == 0)
        kill(pid, SIGKILL); /* do not leak it past the test */
    assert_int_equal(got, pid);
    assert_true(WIFSIGNALED(st));
}

static void t_stop_signal_ends_the_group(void **state)
{
    (void)state;
    struct aka_err err = AKA_ERR_INIT;
    struct proc_result r;
    struct proc_spec s;
    const char *argv[] = {"sh", "-c", "sleep 100 & echo $!; kill -TERM $PPID; wait", NULL};

    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
    assert_int_equal(proc_catch_stop_signals(&err), 0);
    assert_int_equal(proc_stop_signal(), 0);
    assert_int_equal(proc_check_stop(&err), 0);
    memset(&s, 0, sizeof(s));
    s.argv = argv;
    s.out_mode = PROC_TO_BUFFER;
    s.err_mode = PROC_NULL;
    s.timeout_ms = 60000;
    s.kill_grace_ms = 500;

    double t0 = aka_test_now_s();
    int rc = proc_run(&s, &r, &err);
    double took = aka_test_now_s() - t0;
    assert_int_equal(rc, -1);
    assert_int_equal(err.code, 128 + SIGTERM);
    assert_non_null(strstr(err.msg, "interrupted by SIGTERM"));
    assert_false(r.timed_out);
    assert_true(took < 10.0); /* not the 100 s sleep, nor the 60 s limit */
    assert_int_equal(proc_stop_signal(), SIGTERM);
    assert_sleeper_ended(printed_pid(&r));
    proc_result_release(&r);

    /* Once stopping, nothing new starts. */
    const char *again[] = {"true", NULL};
    s.argv = again;
    aka_err_clear(&err);
    assert_int_equal(proc_run(&s, &r, &err), -1);
    assert_int_equal(err.code, 128 + SIGTERM);
    proc_result_release(&r);

    /* ... but the cleanup that stopping needs (after_stop: a transport's scancel) runs to
     * its end, even one that outlasts the kill grace. */
    const char *cleanup[] = {"sh", "-c", "sleep 1; echo released", NULL};
    s.argv = cleanup;
    s.after_stop = true;
    aka_err_clear(&err);
    assert_int_equal(proc_run(&s, &r, &err), 0);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.out.buf, "released\n");
    proc_result_release(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_stop_signal_ends_the_group),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
