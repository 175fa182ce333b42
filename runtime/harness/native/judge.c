/*
 * judge.c — main() of aka's native judge (see harness_core.h):
 *
 *     ./judge plan.json c|cuda   → one RESULT_JSON line on stdout; exit 0 iff all pass
 *
 * It starts ./refrun and then ./candrun from the job directory, both built by
 * run_native.sh. First thing, it makes itself non-dumpable: a process of the
 * same user (a runner) can then neither ptrace it nor open /proc/<judge>/mem
 * or /proc/<judge>/fd/N, where its stdout and private memory are.
 */
#define _GNU_SOURCE
#include "harness_core.h"

#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

int main(int argc, char **argv)
{
    hx_plan plan;
    char why[512];
    const hx_target *tg;
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 || hx_take_stdout() < 0) {
        hx_log("cannot make the judge private or set up stdout");
        return HX_EXIT_ENV;
    }
    if (argc != 3 || (strcmp(argv[2], "c") != 0 && strcmp(argv[2], "cuda") != 0)) {
        hx_log("usage: %s plan.json c|cuda", argv[0]);
        return HX_EXIT_PLAN;
    }
    tg = strcmp(argv[2], "cuda") == 0 ? &hx_target_cuda : &hx_target_c;
    /* Everything the evaluation needs is read now, before any runner exists. */
    if (hx_plan_load(argv[1], &plan, why, sizeof(why)) < 0) {
        hx_log("plan %s: %s", argv[1], why);
        hx_plan_free(&plan);
        return HX_EXIT_PLAN;
    }
    hx_pin();
    int rc = hx_evaluate(&plan, tg);
    hx_plan_free(&plan);
    return rc;
}
