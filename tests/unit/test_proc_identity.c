/*
 * test_proc_identity.c — ending a recorded process group by identity
 * (base/proc.h: proc_start_ticks, proc_end_group_if_same; DESIGN §7).
 *
 * A resumed supervisor ends the agent groups its killed predecessor recorded
 * as (pgid, leader start time). These tests pin the identity rule: a pid whose
 * start time differs (the kernel reused it) is never signalled; a group whose
 * leader is gone still has its members ended, including ones that moved to
 * another group of the same session and ones that ignore SIGTERM.
 *
 * The test process is a child subreaper so orphaned grandchildren become its
 * children and can be reaped here (PID 1 of a container may never reap them).
 */
#include "aka_test.h"

#include "base/proc.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Alive and not a zombie: /proc/<pid>/stat still readable with a start time is not enough. */
static bool running(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

static void reap_all(void)
{
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
}

/* A new session whose leader sleeps: what an agent CLI looks like to the supervisor. */
static pid_t start_session_leader(void)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setsid();
        execlp("sleep", "sleep", "30", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 200 && proc_start_ticks(pid) == 0; i++)
        sleep_ms(5);
    return pid;
}

static void t_start_ticks(void **state)
{
    (void)state;
    assert_true(proc_start_ticks(getpid()) > 0);
    assert_int_equal(proc_start_ticks(0), 0);
    assert_int_equal(proc_start_ticks(-5), 0);
    pid_t pid = start_session_leader();
    unsigned long long t = proc_start_ticks(pid);
    assert_true(t >= proc_start_ticks(getpid())); /* started after us */
    assert_int_equal(proc_start_ticks(pid), t);   /* stable: it is an identity */
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    assert_int_equal(proc_start_ticks(pid), 0); /* gone */
}

/* The recorded start time is not the live process's: the pid was reused; nothing is sent. */
static void t_reused_pid_not_killed(void **state)
{
    (void)state;
    pid_t pid = start_session_leader();
    unsigned long long t = proc_start_ticks(pid);
    assert_true(t > 1);
    assert_int_equal(proc_end_group_if_same(pid, t - 1, 100), 0);
    assert_int_equal(proc_end_group_if_same(pid, t + 1, 100), 0);
    sleep_ms(50);
    assert_true(running(pid));
    int status = 0;
    assert_int_equal(waitpid(pid, &status, WNOHANG), 0);
    /* The recorded identity: ended (SIGTERM is enough for sleep). */
    assert_int_equal(proc_end_group_if_same(pid, t, 100), 1);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    assert_int_equal(proc_end_group_if_same(pid, t, 100), 0); /* nothing left: no-op */
}

/*
 * The leader has exited; a member that moved to its own group inside the
 * session and ignores SIGTERM is still ended (SIGKILL after the grace).
 */
static void t_leader_gone_members_ended(void **state)
{
    (void)state;
    int up[2], down[2]; /* up: leader -> test (the member's pid); down: test -> leader (exit) */
    assert_int_equal(pipe(up), 0);
    assert_int_equal(pipe(down), 0);
    pid_t leader = fork();
    assert_true(leader >= 0);
    if (leader == 0) {
        setsid();
        int ready[2];
        if (pipe(ready) < 0)
            _exit(1);
        pid_t member = fork();
        if (member == 0) {
            setpgid(0, 0); /* another group, same session */
            signal(SIGTERM, SIG_IGN);
            close(ready[0]);
            close(ready[1]); /* EOF for the leader: the member is set up */
            execlp("sleep", "sleep", "30", (char *)NULL);
            _exit(127);
        }
        char c;
        close(ready[1]);
        if (read(ready[0], &c, 1) < 0 || write(up[1], &member, sizeof(member)) < 0)
            _exit(1);
        if (read(down[0], &c, 1) < 0) /* wait until the test has read our start time */
            _exit(1);
        _exit(0);
    }
    pid_t member = 0;
    assert_int_equal(read(up[0], &member, sizeof(member)), (ssize_t)sizeof(member));
    unsigned long long t = proc_start_ticks(leader);
    assert_true(t > 0);
    assert_int_equal(write(down[1], "x", 1), 1);
    assert_int_equal(waitpid(leader, NULL, 0), leader);
    for (int i = 0; i < 2; i++) {
        close(up[i]);
        close(down[i]);
    }
    assert_true(running(member));
    assert_int_equal(proc_start_ticks(leader), 0);
    assert_int_equal(proc_end_group_if_same(leader, t, 100), 1);
    assert_false(running(member));
    reap_all();
}

static void t_no_identity_no_signal(void **state)
{
    (void)state;
    pid_t pid = start_session_leader();
    assert_int_equal(proc_end_group_if_same(pid, 0, 100), 0); /* unknown start time */
    assert_int_equal(proc_end_group_if_same(1, 1, 100), 0);
    assert_int_equal(proc_end_group_if_same(0, 1, 100), 0);
    assert_true(running(pid));
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_start_ticks),
        cmocka_unit_test(t_reused_pid_not_killed),
        cmocka_unit_test(t_leader_gone_members_ended),
        cmocka_unit_test(t_no_identity_no_signal),
    };
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
