/*
 * test_lock.c — flock-based locks (base/lock.h): exclusion with the holder's
 * pid in the message, release, waiting, and a lock held by another process
 * that dies with it.
 */
#include "aka_test.h"

#include "base/fs.h"
#include "base/lock.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int dir_setup(void **state)
{
    struct strbuf *dir = calloc(1, sizeof(*dir));
    struct aka_err err = AKA_ERR_INIT;
    strbuf_init(dir, 0);
    assert_int_equal(aka_make_temp_dir(NULL, "aka-test-lock", dir, &err), 0);
    strbuf_addstr(dir, "/lock");
    *state = dir;
    return 0;
}

static int dir_teardown(void **state)
{
    struct strbuf *path = *state;
    struct aka_err err = AKA_ERR_INIT;
    strbuf_setlen(path, path->len - strlen("/lock"));
    aka_remove_tree(path->buf, &err);
    strbuf_release(path);
    free(path);
    return 0;
}

static void expect_held_by(const char *path, long pid)
{
    struct aka_lock lk;
    struct aka_err err = AKA_ERR_INIT;
    char want[4096];
    assert_int_equal(aka_lock_acquire(&lk, path, false, &err), -1);
    assert_int_equal(err.code, 75);
    snprintf(want, sizeof(want), "%s: held by pid %ld", path, pid);
    assert_string_equal(err.msg, want);
    assert_int_equal(lk.fd, -1);
    aka_lock_release(&lk); /* harmless on a lock that was never taken */
}

static void t_exclusive_then_release(void **state)
{
    const char *path = ((struct strbuf *)*state)->buf;
    struct aka_lock lk = AKA_LOCK_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf content = STRBUF_INIT;
    char pid[32];
    assert_int_equal(aka_lock_acquire(&lk, path, false, &err), 0);
    assert_true(lk.fd >= 0);
    assert_string_equal(lk.path, path);
    assert_int_equal(aka_read_file(path, &content, 64, &err), 0);
    snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    assert_string_equal(content.buf, pid);
    /* A second open file description conflicts even inside one process. */
    expect_held_by(path, (long)getpid());
    aka_lock_release(&lk);
    assert_int_equal(lk.fd, -1);
    aka_lock_release(&lk); /* twice is fine */
    strbuf_reset(&content);
    assert_int_equal(aka_read_file(path, &content, 64, &err), 0);
    assert_int_equal(content.len, 0); /* the pid record is cleared on release */
    assert_int_equal(aka_lock_acquire(&lk, path, false, &err), 0);
    aka_lock_release(&lk);
    strbuf_release(&content);
}

/* Fork a child that takes the lock, tells us over a pipe, then sleeps. */
static pid_t child_holding(const char *path, int hold_ms)
{
    int p[2];
    char c;
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct aka_lock lk;
        struct aka_err err = AKA_ERR_INIT;
        close(p[0]);
        if (aka_lock_acquire(&lk, path, false, &err) < 0)
            _exit(1);
        if (write(p[1], "x", 1) != 1)
            _exit(1);
        usleep((useconds_t)hold_ms * 1000);
        aka_lock_release(&lk);
        _exit(0);
    }
    close(p[1]);
    assert_int_equal(read(p[0], &c, 1), 1);
    close(p[0]);
    return pid;
}

static void t_held_by_child_until_it_dies(void **state)
{
    const char *path = ((struct strbuf *)*state)->buf;
    struct aka_lock lk;
    struct aka_err err = AKA_ERR_INIT;
    pid_t pid = child_holding(path, 10000);
    expect_held_by(path, (long)pid);
    /* SIGKILL: no release ran, yet the lock dies with the process. */
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    assert_int_equal(aka_lock_acquire(&lk, path, false, &err), 0);
    aka_lock_release(&lk);
}

static void t_wait_blocks_until_released(void **state)
{
    const char *path = ((struct strbuf *)*state)->buf;
    struct aka_lock lk;
    struct aka_err err = AKA_ERR_INIT;
    struct timespec t0, t1;
    pid_t pid = child_holding(path, 300);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(aka_lock_acquire(&lk, path, true, &err), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    assert_true(waited > 0.15 && waited < 3.0);
    aka_lock_release(&lk);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void t_unopenable(void **state)
{
    struct aka_lock lk;
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(aka_lock_acquire(&lk, "/nonexistent-dir/lock", false, &err), -1);
    assert_int_equal(err.code, 75);
    assert_string_equal(err.msg,
                        "/nonexistent-dir/lock: cannot open lock file: No such file or directory");
}

#define DIR_TEST(fn) cmocka_unit_test_setup_teardown(fn, dir_setup, dir_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        DIR_TEST(t_exclusive_then_release),
        DIR_TEST(t_held_by_child_until_it_dies),
        DIR_TEST(t_wait_blocks_until_released),
        cmocka_unit_test(t_unopenable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
