/*
 * forkbomb.c — red-team candidate: a fork bomb, bounded so that a broken sandbox
 * cannot take the test machine down with it.
 *
 * Every process forks as fast as it can, and every child does the same, up to
 * FANOUT children each and DEPTH generations (at most ~3,300 processes even with
 * no limit at all); then it sleeps forever. argv[1] is a marker the test looks
 * for with pgrep afterwards: no process carrying it may survive the job. The
 * first fork refused by the kernel is reported ("fork refused: ...") so the test
 * can see the pids limit at work.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define FANOUT 3
#define DEPTH  7

int main(int argc, char **argv)
{
    int depth = 0, children = 0, reported = 0;
    (void)argc;
    (void)argv;
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("forkbomb started\n");
    while (depth < DEPTH && children < FANOUT) {
        pid_t pid = fork();
        if (pid == 0) {
            depth++;
            children = 0;
            continue;
        }
        if (pid < 0) {
            if (!reported++)
                printf("fork refused: %s\n", strerror(errno));
            usleep(10000);
            continue;
        }
        children++;
    }
    for (;;)
        pause();
}
