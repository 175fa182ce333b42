/*
 * test_proc.c — the process runner (base/proc.h): exit-status normalization,
 * capped capture, environment, cwd and stdin, timeouts that end a whole
 * process group, and background grandchildren that keep our pipes open.
 *
 * The test process makes itself a child subreaper so that orphaned
 * grandchildren become its children: it can then reap them and check that
 * they really died of SIGKILL (PID 1 of a container may never reap them).
 */
#include "aka_test.h"

#include "base/fs.h"
#include "base/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct proc_spec spec_of(const char *const *argv)
{
    struct proc_spec s;
    memset(&s, 0, sizeof(s));
    s.argv = argv;
    s.out_mode = PROC_TO_BUFFER;
    s.err_mode = PROC_TO_BUFFER;
    return s;
}

/* Run and return how long proc_run itself took (wall_seconds stops at the reap). */
static double run_ok(const struct proc_spec *s, struct proc_result *r)
{
    struct aka_err err = AKA_ERR_INIT;
    double t0 = aka_test_now_s();
    int rc = proc_run(s, r, &err);
    if (rc != 0)
        print_error("proc_run failed: %s\n", err.msg);
    assert_int_equal(rc, 0);
    return aka_test_now_s() - t0;
}

/* Reap an orphan that was reparented to us and check that SIGKILL ended it. */
static void assert_reaped_killed(pid_t pid)
{
    int st = 0;
    pid_t r = 0;
    for (int i = 0; i < 300 && r == 0; i++) {
        r = waitpid(pid, &st, WNOHANG);
        if (r == 0)
            usleep(10000);
    }
    if (r == 0) { /* still alive: do not leak it past the test */
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    assert_int_equal(r, pid);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGKILL);
}

static void t_exit_codes(void **state)
{
    struct proc_result r;
    const char *ok[] = {"true", NULL};
    const char *three[] = {"sh", "-c", "exit 3", NULL};
    const char *high[] = {"sh", "-c", "exit 137", NULL};
    struct proc_spec s = spec_of(ok);
    run_ok(&s, &r);
    assert_int_equal(r.exit_code, 0);
    assert_true(r.exited);
    assert_int_equal(r.term_signal, 0);
    assert_false(r.timed_out);
    assert_true(r.pid > 0);
    proc_result_release(&r);
    s.argv = three;
    run_ok(&s, &r);
    assert_int_equal(r.exit_code, 3);
    assert_true(r.exited);
    proc_result_release(&r);
    /* exit(137) is an exit, not a SIGKILL, even though the number is the same */
    s.argv = high;
    run_ok(&s, &r);
    assert_int_equal(r.exit_code, 137);
    assert_true(r.exited);
    assert_int_equal(r.term_signal, 0);
    proc_result_release(&r);
}

static void t_signal_distinguished(void **state)
{
    struct proc_result r;
    const char *killed[] = {"sh", "-c", "kill -KILL $$", NULL};
    const char *termed[] = {"sh", "-c", "kill -TERM $$", NULL};
    struct proc_spec s = spec_of(killed);
    run_ok(&s, &r);
    assert_false(r.exited);
    assert_int_equal(r.term_signal, SIGKILL);
    assert_int_equal(r.exit_code, 128 + SIGKILL);
    assert_false(r.timed_out);
    proc_result_release(&r);
    s.argv = termed;
    run_ok(&s, &r);
    assert_false(r.exited);
    assert_int_equal(r.term_signal, SIGTERM);
    assert_int_equal(r.exit_code, 143);
    proc_result_release(&r);
}

static void t_capture_both_streams(void **state)
{
    struct proc_result r;
    const char *argv[] = {"sh", "-c", "printf 'to out'; printf 'to err\\n' >&2", NULL};
    struct proc_spec s = spec_of(argv);
    run_ok(&s, &r);
    assert_string_equal(r.out.buf, "to out");
    assert_string_equal(r.err.buf, "to err\n");
    assert_int_equal(r.out_bytes, 6);
    assert_int_equal(r.err_bytes, 7);
    assert_false(r.out_truncated);
    assert_false(r.err_truncated);
    proc_result_release(&r);
}

static void t_cap_buffer(void **state)
{
    struct proc_result r;
    const char *argv[] = {"head", "-c", "5242880", "/dev/zero", NULL};
    struct proc_spec s = spec_of(argv);
    s.out_cap = 1 << 20;
    run_ok(&s, &r);
    assert_int_equal(r.exit_code, 0); /* drained, so head never saw EPIPE */
    assert_int_equal(r.out.len, 1 << 20);
    assert_int_equal(r.out_bytes, 5242880);
    assert_true(r.out_truncated);
    assert_false(r.err_truncated);
    proc_result_release(&r);
}

static void t_cap_file(void **state)
{
    struct proc_result r;
    struct strbuf dir = STRBUF_INIT, path = STRBUF_INIT, data = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    const char *argv[] = {"sh", "-c", "head -c 3000000 /dev/zero; echo E >&2", NULL};
    struct proc_spec s = spec_of(argv);
    assert_int_equal(aka_make_temp_dir(NULL, "aka-test-proc", &dir, &err), 0);
    aka_path_join(&path, dir.buf, "log");
    s.out_mode = s.err_mode = PROC_TO_FILE;
    s.out_file = s.err_file = path.buf; /* both streams into one file */
    s.out_cap = 1000000;
    run_ok(&s, &r);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(r.out_bytes, 3000000);
    assert_true(r.out_truncated);
    assert_int_equal(r.out.len, 0); /* nothing kept in memory for PROC_TO_FILE */
    assert_int_equal(aka_read_file(path.buf, &data, 1 << 22, &err), 0);
    assert_int_equal(data.len, 1000002);
    assert_memory_equal(data.buf + 1000000, "E\n", 2);
    proc_result_release(&r);
    assert_int_equal(aka_remove_tree(dir.buf, &err), 0);
    strbuf_release(&dir);
    strbuf_release(&path);
    strbuf_release(&data);
}

static void t_clean_env(void **state)
{
    struct proc_result r;
    const char *argv[] = {"env", NULL}; /* found through our PATH, though the child has none */
    const char *env[] = {"A=1", "B=two words", "DROPPED", NULL};
    struct proc_spec s = spec_of(argv);
    s.clean_env = true;
    s.env = env;
    run_ok(&s, &r);
    assert_string_equal(r.out.buf, "A=1\nB=two words\n");
    proc_result_release(&r);
}

static void t_env_override_and_remove(void **state)
{
    struct proc_result r;
    const char *argv[] = {"env", NULL};
    const char *env[] = {"AKA_T_OVR=new", "AKA_T_DROP", "AKA_T_NEW=n", NULL};
    struct proc_spec s = spec_of(argv);
    setenv("AKA_T_KEEP", "kept", 1);
    setenv("AKA_T_DROP", "dropped", 1);
    setenv("AKA_T_OVR", "old", 1);
    s.env = env;
    run_ok(&s, &r);
    assert_non_null(strstr(r.out.buf, "\nAKA_T_KEEP=kept\n"));
    assert_non_null(strstr(r.out.buf, "\nAKA_T_OVR=new\n"));
    assert_non_null(strstr(r.out.buf, "\nAKA_T_NEW=n\n"));
    assert_null(strstr(r.out.buf, "AKA_T_OVR=old"));
    assert_null(strstr(r.out.buf, "AKA_T_DROP"));
    assert_non_null(strstr(r.out.buf, "PATH="));
    proc_result_release(&r);
    unsetenv("AKA_T_KEEP");
    unsetenv("AKA_T_DROP");
    unsetenv("AKA_T_OVR");
}

static void t_cwd(void **state)
{
    struct proc_result r;
    struct strbuf dir = STRBUF_INIT, real = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    const char *argv[] = {"pwd", "-P", NULL};
    struct proc_spec s = spec_of(argv);
    assert_int_equal(aka_make_temp_dir(NULL, "aka-test-proc", &dir, &err), 0);
    assert_int_equal(aka_realpath(dir.buf, &real, &err), 0);
    strbuf_addch(&real, '\n');
    s.cwd = dir.buf;
    run_ok(&s, &r);
    assert_string_equal(r.out.buf, real.buf);
    proc_result_release(&r);
    assert_int_equal(aka_remove_tree(dir.buf, &err), 0);
    strbuf_release(&dir);
    strbuf_release(&real);
}

/* proc_spec.cgroup_procs: the child writes "0" (move myself) there before it execs, so a
 * command is inside its cgroup before it can fork. A plain file stands in for cgroup.procs:
 * by the time the command runs (and reads it back), the write has happened. */
static void t_joins_cgroup_before_exec(void **state)
{
    struct proc_result r;
    struct strbuf dir = STRBUF_INIT, procs = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    assert_int_equal(aka_make_temp_dir(NULL, "aka-test-proc", &dir, &err), 0);
    aka_path_join(&procs, dir.buf, "cgroup.procs");
    assert_int_equal(aka_write_file_plain(procs.buf, "", 0, 0644, &err), 0);
    const char *argv[] = {"cat", procs.buf, NULL};
    struct proc_spec s = spec_of(argv);
    s.cgroup_procs = procs.buf;
    run_ok(&s, &r);
    assert_string_equal(r.out.buf, "0");
    proc_result_release(&r);
    /* A cgroup that cannot be joined (a missing file) is not a failure to start. */
    const char *true_argv[] = {"true", NULL};
    struct proc_spec t = spec_of(true_argv);
    strbuf_addstr(&procs, ".missing");
    t.cgroup_procs = procs.buf;
    run_ok(&t, &r);
    assert_int_equal(r.exit_code, 0);
    proc_result_release(&r);
    assert_int_equal(aka_remove_tree(dir.buf, &err), 0);
    strbuf_release(&dir);
    strbuf_release(&procs);
}

static void t_start_failures(void **state)
{
    struct proc_result r;
    struct aka_err err = AKA_ERR_INIT;
    const char *missing[] = {"aka-no-such-program-7f3a", NULL};
    const char *missing_path[] = {"/nonexistent/aka-prog", NULL};
    const char *empty[] = {NULL};
    const char *ok[] = {"true", NULL};
    struct proc_spec s = spec_of(missing);
    assert_int_equal(proc_run(&s, &r, &err), -1);
    assert_int_equal(err.code, 75);
    assert_string_equal(err.msg, "aka-no-such-program-7f3a: program not found in PATH");
    s.argv = missing_path;
    assert_int_equal(proc_run(&s, &r, &err), -1);
    assert_int_equal(err.code, 75);
    assert_string_equal(err.msg, "/nonexistent/aka-prog: program not found");
    s.argv = ok;
    s.cwd = "/nonexistent-dir";
    assert_int_equal(proc_run(&s, &r, &err), -1);
    assert_int_equal(err.code, 75);
    assert_string_equal(err.msg, "true: cannot enter working directory /nonexistent-dir: "
                                 "No such file or directory");
    s.cwd = NULL;
    s.out_mode = PROC_TO_FILE;
    s.out_file = "/nonexistent-dir/log";
    assert_int_equal(proc_run(&s, &r, &err), -1);
    assert_int_equal(err.code, 75);
    assert_non_null(strstr(err.msg, "/nonexistent-dir/log"));
    s.argv = empty;
    assert_int_equal(proc_run(&s, &r, &err), -1);
    assert_int_equal(err.code, 2);
}

static void t_stdin(void **state)
{
    struct proc_result r;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf dir = STRBUF_INIT, path = STRBUF_INIT;
    const char *link[] = {"readlink", "/proc/self/fd/0", NULL};
    const char *cat[] = {"cat", NULL};
    struct proc_spec s = spec_of(link);
    run_ok(&s, &r);
    assert_string_equal(r.out.buf, "/dev/null\n");
    proc_result_release(&r);
    /* cat must see EOF at once, never our terminal */
    s.argv = cat;
    s.timeout_ms = 3000;
    run_ok(&s, &r);
    assert_false(r.timed_out);
    assert_int_equal(r.out.len, 0);
    proc_result_release(&r);
    assert_int_equal(aka_make_temp_dir(NULL, "aka-test-proc", &dir, &err), 0);
    aka_path_join(&path, dir.buf, "in");
    assert_int_equal(aka_write_file_atomic(path.buf, "fed\n", 4, 0644, &err), 0);
    s.stdin_file = path.buf;
    run_ok(&s, &r);
    assert_string_equal(r.out.buf, "fed\n");
    proc_result_release(&r);
    assert_int_equal(aka_remove_tree(dir.buf, &err), 0);
    strbuf_release(&dir);
    strbuf_release(&path);
}

static void t_timeout(void **state)
{
    struct proc_result r;
    const char *argv[] = {"sleep", "30", NULL};
    struct proc_spec s = spec_of(argv);
    s.timeout_ms = 200;
    double took = run_ok(&s, &r);
    assert_true(r.timed_out);
    assert_int_equal(r.exit_code, 124);
    assert_false(r.exited);
    assert_int_equal(r.term_signal, SIGTERM); /* sleep obeys SIGTERM: no escalation */
    assert_true(r.wall_seconds >= 0.19 && r.wall_seconds < 1.5);
    assert_true(took < 1.5);
    proc_result_release(&r);
}

struct beats {
    int n;
    double last;
};

static void count_beat(void *arg, double elapsed_s)
{
    struct beats *b = arg;
    assert_true(elapsed_s >= b->last); /* seconds since the child started, never back */
    b->n++;
    b->last = elapsed_s;
}

/* The heartbeat fires every every_ms while a child runs, from about every_ms on; a child
 * shorter than that gets none, and with the heartbeat off nothing is called. */
static void t_heartbeat(void **state)
{
    struct proc_result r;
    struct beats b = {0, 0};
    const char *slow[] = {"sleep", "0.5", NULL}, *quick[] = {"true", NULL};
    struct proc_spec s = spec_of(slow);
    int slow_beats, quick_beats;
    double last;
    proc_set_heartbeat(count_beat, &b, 100);
    run_ok(&s, &r);
    proc_result_release(&r);
    slow_beats = b.n, last = b.last, b.n = 0;
    s = spec_of(quick);
    run_ok(&s, &r);
    proc_result_release(&r);
    quick_beats = b.n;
    proc_set_heartbeat(NULL, NULL, 0); /* before any assert: b lives on this stack only */
    s = spec_of(slow);
    run_ok(&s, &r);
    proc_result_release(&r);
    /* ~0.1, 0.2, 0.3, 0.4 s and maybe 0.5 before the reap; 3 on a loaded machine */
    assert_in_range(slow_beats, 3, 5);
    assert_true(last >= 0.09 && last < 0.7);
    assert_int_equal(quick_beats, 0);
    assert_int_equal(b.n, 0); /* off: nothing called */
    (void)state;
}

/* A wait of the caller's own: ticks every 20 ms for 0.35 s beat at ~0.1, 0.2, 0.3 s with
 * the elapsed time since the start; no beat before the first interval, none when off. */
static void t_beat_own_wait(void **state)
{
    struct beats b = {0, 0};
    struct proc_beat w;
    struct timespec tick = {0, 20 * 1000000L};
    int on_beats, early_beats, off_beats;
    double last;
    proc_set_heartbeat(count_beat, &b, 100);
    proc_beat_start(&w);
    proc_beat_tick(&w);
    early_beats = b.n;
    for (double t0 = aka_test_now_s(); aka_test_now_s() - t0 < 0.35;)
        nanosleep(&tick, NULL), proc_beat_tick(&w);
    on_beats = b.n, last = b.last, b.n = 0;
    proc_set_heartbeat(NULL, NULL, 0);
    proc_beat_start(&w);
    for (int i = 0; i < 10; i++)
        nanosleep(&tick, NULL), proc_beat_tick(&w);
    off_beats = b.n;
    assert_int_equal(early_beats, 0);
    assert_in_range(on_beats, 2, 3); /* 2 when a loaded machine stretches the ticks */
    assert_true(last >= 0.19 && last < 0.6);
    assert_int_equal(off_beats, 0);
    (void)state;
}

static void t_timeout_kills_group(void **state)
{
    struct proc_result r;
    /* Both the shell and its background sleep ignore SIGTERM. */
    const char *argv[] = {"sh", "-c", "trap '' TERM; sleep 100 & echo $!; wait", NULL};
    struct proc_spec s = spec_of(argv);
    s.timeout_ms = 300;
    s.kill_grace_ms = 300;
    double took = run_ok(&s, &r);
    assert_true(r.timed_out);
    assert_int_equal(r.exit_code, 124);
    assert_int_equal(r.term_signal, SIGKILL);
    assert_true(r.wall_seconds >= 0.55 && r.wall_seconds < 2.5);
    assert_true(took < 2.5);
    pid_t grandchild = (pid_t)atoi(r.out.buf);
    assert_true(grandchild > 1);
    assert_reaped_killed(grandchild);
    proc_result_release(&r);
}

static void t_background_holder_does_not_hang(void **state)
{
    struct proc_result r;
    const char *argv[] = {"sh", "-c", "sleep 30 & echo $!", NULL};
    struct proc_spec s = spec_of(argv);
    double took = run_ok(&s, &r);
    assert_int_equal(r.exit_code, 0);
    assert_true(r.exited);
    assert_false(r.timed_out);
    assert_true(took < 2.0);
    pid_t grandchild = (pid_t)atoi(r.out.buf);
    assert_true(grandchild > 1);
    assert_reaped_killed(grandchild); /* the stray was in the child's group */
    proc_result_release(&r);
}

static void t_escaped_holder_does_not_hang(void **state)
{
    struct proc_result r;
    /* setsid moves the holder out of the group, where no kill(-pgid) reaches it. */
    const char *argv[] = {"sh", "-c", "setsid sleep 30 & echo $!", NULL};
    struct proc_spec s = spec_of(argv);
    double took = run_ok(&s, &r);
    assert_int_equal(r.exit_code, 0);
    assert_true(took < 2.0);
    pid_t holder = (pid_t)atoi(r.out.buf);
    assert_true(holder > 1);
    assert_int_equal(kill(holder, SIGKILL), 0); /* proves it was still alive, then cleans up */
    assert_reaped_killed(holder);
    proc_result_release(&r);
}

/* Fields 5 and 6 of /proc/PID/stat (pgrp, session) as the child reports them. */
static void child_ids(bool new_session, long ids[3])
{
    struct proc_result r;
    const char *argv[] = {"sh", "-c", "cut -d' ' -f1,5,6 /proc/$$/stat", NULL};
    struct proc_spec s = spec_of(argv);
    s.new_session = new_session;
    run_ok(&s, &r);
    assert_int_equal(sscanf(r.out.buf, "%ld %ld %ld", &ids[0], &ids[1], &ids[2]), 3);
    assert_int_equal(ids[0], r.pid);
    proc_result_release(&r);
}

static void t_group_and_session(void **state)
{
    long ids[3];
    child_ids(false, ids);
    assert_int_equal(ids[1], ids[0]); /* its own process group */
    assert_int_equal(ids[2], (long)getsid(0));
    child_ids(true, ids);
    assert_int_equal(ids[1], ids[0]);
    assert_int_equal(ids[2], ids[0]); /* its own session */
}

static void t_signals_reset_in_child(void **state)
{
    struct proc_result r;
    const char *argv[] = {"grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status", NULL};
    struct proc_spec s = spec_of(argv);
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, &old);
    void (*prev)(int) = signal(SIGUSR2, SIG_IGN);
    run_ok(&s, &r);
    sigprocmask(SIG_SETMASK, &old, NULL);
    signal(SIGUSR2, prev);
    assert_string_equal(r.out.buf, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
    proc_result_release(&r);
}

static void t_fds_not_inherited(void **state)
{
    struct proc_result r;
    const char *argv[] = {"ls", "/proc/self/fd", NULL};
    struct proc_spec s = spec_of(argv);
    int leaky = dup(2); /* no O_CLOEXEC on purpose */
    assert_true(leaky > 2);
    run_ok(&s, &r);
    close(leaky);
    assert_string_equal(r.out.buf, "0\n1\n2\n3\n"); /* 3 is ls's own directory handle */
    proc_result_release(&r);
}

static void t_start_kill_wait(void **state)
{
    struct proc_handle *h;
    struct proc_result r;
    struct aka_err err = AKA_ERR_INIT;
    const char *argv[] = {"sleep", "100", NULL};
    struct proc_spec s = spec_of(argv);
    assert_int_equal(proc_start(&s, &h, &err), 0);
    pid_t pid = proc_pid(h);
    assert_true(pid > 1);
    proc_kill_group(pid, 1500);
    assert_int_equal(proc_wait(h, &r, &err), 0);
    assert_int_equal(r.pid, pid);
    assert_int_equal(r.term_signal, SIGTERM);
    assert_int_equal(r.exit_code, 143);
    assert_false(r.timed_out);
    /* proc_kill_group returned as soon as only the zombie was left, not after the grace */
    assert_true(r.wall_seconds < 1.0);
    proc_result_release(&r);
}

static void t_null_output(void **state)
{
    struct proc_result r;
    const char *argv[] = {"sh", "-c", "echo visible; echo hidden >&2", NULL};
    struct proc_spec s = spec_of(argv);
    s.err_mode = PROC_NULL;
    run_ok(&s, &r);
    assert_string_equal(r.out.buf, "visible\n");
    assert_int_equal(r.err.len, 0);
    assert_int_equal(r.err_bytes, 0);
    proc_result_release(&r);
}

/* A daemon: its own group in a session of its own that it does not lead, output in the
 * log, and nobody of ours waits for it (here the subreaper reaps it). */
static void t_spawn_detached(void **state)
{
    char dir[] = "/tmp/aka-test-detached.XXXXXX", log[64];
    const char *argv[] = {"sh", "-c", "read -r line </proc/$$/stat; echo \"$line\"", NULL};
    struct proc_spec s = spec_of(argv);
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf text = STRBUF_INIT;
    long pid2 = 0, ppid = 0, pgrp = 0, sid = 0;
    pid_t pid = 0;
    assert_non_null(mkdtemp(dir));
    snprintf(log, sizeof(log), "%s/log", dir);
    s.out_file = log;
    assert_int_equal(proc_spawn_detached(&s, &pid, &err), 0);
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    assert_int_equal(aka_read_file(log, &text, 4096, &err), 0);
    const char *after = strrchr(text.buf, ')');
    assert_non_null(after);
    assert_int_equal(sscanf(text.buf, "%ld", &pid2), 1);
    assert_int_equal(sscanf(after + 1, " %*c %ld %ld %ld", &ppid, &pgrp, &sid), 3);
    assert_int_equal(pid2, (long)pid);
    assert_int_equal(pgrp, (long)pid);   /* its own process group */
    assert_true(sid != (long)getsid(0)); /* out of our session */
    assert_true(sid != (long)pid);       /* which it does not lead */
    strbuf_release(&text);
    assert_int_equal(aka_remove_tree(dir, &err), 0);
    (void)state;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_exit_codes),
        cmocka_unit_test(t_signal_distinguished),
        cmocka_unit_test(t_capture_both_streams),
        cmocka_unit_test(t_cap_buffer),
        cmocka_unit_test(t_cap_file),
        cmocka_unit_test(t_clean_env),
        cmocka_unit_test(t_env_override_and_remove),
        cmocka_unit_test(t_cwd),
        cmocka_unit_test(t_joins_cgroup_before_exec),
        cmocka_unit_test(t_start_failures),
        cmocka_unit_test(t_stdin),
        cmocka_unit_test(t_timeout),
        cmocka_unit_test(t_heartbeat),
        cmocka_unit_test(t_beat_own_wait),
        cmocka_unit_test(t_timeout_kills_group),
        cmocka_unit_test(t_background_holder_does_not_hang),
        cmocka_unit_test(t_escaped_holder_does_not_hang),
        cmocka_unit_test(t_group_and_session),
        cmocka_unit_test(t_signals_reset_in_child),
        cmocka_unit_test(t_fds_not_inherited),
        cmocka_unit_test(t_start_kill_wait),
        cmocka_unit_test(t_null_output),
        cmocka_unit_test(t_spawn_detached),
    };
    /* Orphaned grandchildren become our children, so tests can reap and inspect them. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
