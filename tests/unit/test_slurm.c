/*
 * test_slurm.c — the slurm transport's pure pieces (sandbox.h, slurm_state.c), without a
 * scheduler: what each scheduler state means for a job (only PENDING-like states wait,
 * only RUNNING runs, everything else — PREEMPTED, NODE_FAIL, CANCELLED, TIMEOUT, an
 * unknown state — ends the job as the environment's), the parsing of `scontrol -o -d
 * show job` (state, reason, the node's GPU indices) and the sbatch command line (the GPU
 * count as --gres, none for a CPU job).
 */
#include "aka_test.h"

#include "sandbox/sandbox.h"

#include <string.h>

/* A real `scontrol -o -d show job` line of Slurm 22.05, shortened around the fields read. */
#define LINE_HEAD                                                                                  \
    "JobId=5 JobName=aka-x UserId=root(0) GroupId=root(0) Priority=4294901755 Nice=0 "             \
    "Account=(null) QOS=(null) "
#define LINE_TAIL                                                                                  \
    " Dependency=(null) Requeue=0 Restarts=0 BatchFlag=1 TRES=cpu=1,node=1,billing=1 "             \
    "JOB_GRES=gpu:2   Nodes=vm CPU_IDs=0 Mem=0 GRES=gpu:2(IDX:0-1) MinCPUsNode=1 "                 \
    "TresPerNode=gres:gpu:2\n"

static void test_phases(void **state)
{
    (void)state;
    const char *waiting[] = {"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", NULL};
    const char *ended[] = {"PREEMPTED", "NODE_FAIL", "CANCELLED", "TIMEOUT",   "BOOT_FAIL",
                           "DEADLINE",  "FAILED",    "SUSPENDED", "COMPLETED", "OUT_OF_MEMORY",
                           "",          "running",   "PENDINGX",  NULL};
    for (const char **s = waiting; *s; s++)
        assert_int_equal(aka_slurm_phase(*s), AKA_SLURM_WAITING);
    for (const char **s = ended; *s; s++)
        assert_int_equal(aka_slurm_phase(*s), AKA_SLURM_ENDED);
    assert_int_equal(aka_slurm_phase("RUNNING"), AKA_SLURM_RUNNING);
    assert_int_equal(aka_slurm_phase(NULL), AKA_SLURM_ENDED);
}

static void test_parse(void **state)
{
    (void)state;
    struct aka_slurm_job_info info;
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(
        aka_slurm_parse_job(LINE_HEAD "JobState=RUNNING Reason=None" LINE_TAIL, &info, &err), 0);
    assert_string_equal(info.state, "RUNNING");
    assert_string_equal(info.reason, "None");
    assert_int_equal(info.n_gpu_ids, 2);
    assert_int_equal(info.gpu_ids[0], 0);
    assert_int_equal(info.gpu_ids[1], 1);

    const char *preempted = "JobId=9 OrigJobState=RUNNING JobState=PREEMPTED Reason=Preemption "
                            "Nodes=n1 GRES=gpu:h100:3(IDX:1,4-5) Features=(null)";
    assert_int_equal(aka_slurm_parse_job(preempted, &info, &err), 0);
    assert_string_equal(info.state, "PREEMPTED");
    assert_string_equal(info.reason, "Preemption");
    assert_int_equal(info.n_gpu_ids, 3);
    assert_int_equal(info.gpu_ids[0], 1);
    assert_int_equal(info.gpu_ids[2], 5);

    /* A CPU job: no GRES at all. */
    assert_int_equal(aka_slurm_parse_job("JobId=3 JobState=PENDING Reason=Priority", &info, &err),
                     0);
    assert_int_equal(info.n_gpu_ids, 0);
    assert_int_equal(aka_slurm_phase(info.state), AKA_SLURM_WAITING);
}

static void test_parse_refusals(void **state)
{
    (void)state;
    struct aka_slurm_job_info info;
    const char *bad[] = {"slurm_load_jobs error: Invalid job id specified",
                         "JobId=3 OrigJobState=RUNNING Reason=None",
                         "JobId=3 JobState= Reason=x",
                         "JobId=3 JobState=RUNNING GRES=gpu:2(IDX:1-0)",
                         "JobId=3 JobState=RUNNING GRES=gpu:2(IDX:a)",
                         NULL};
    for (const char **s = bad; *s; s++) {
        struct aka_err err = AKA_ERR_INIT;
        assert_int_equal(aka_slurm_parse_job(*s, &info, &err), -1);
        assert_int_equal(err.code, AKA_EXIT_ENV);
        assert_non_null(strstr(err.msg, "scontrol: expected"));
    }
}

static bool has(const struct strvec *v, const char *word)
{
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->v[i], word) == 0)
            return true;
    return false;
}

static bool has_prefix(const struct strvec *v, const char *prefix)
{
    for (size_t i = 0; i < v->n; i++)
        if (strncmp(v->v[i], prefix, strlen(prefix)) == 0)
            return true;
    return false;
}

static void test_sbatch_argv(void **state)
{
    (void)state;
    struct aka_sandbox_slurm_opts o = {.partition = "gpu", .account = "lab", .qos = NULL};
    struct strvec a = STRVEC_INIT;
    aka_slurm_sbatch_argv(&o, 2, 600, "aka-j", &a);
    assert_string_equal(a.v[0], "sbatch");
    assert_true(has(&a, "--parsable"));
    assert_true(has(&a, "--no-requeue"));
    assert_true(has(&a, "--gres=gpu:2"));
    assert_true(has(&a, "--partition=gpu"));
    assert_true(has(&a, "--account=lab"));
    assert_false(has_prefix(&a, "--qos"));
    assert_true(has(&a, "--time=15")); /* 600 s + 300 s, in whole minutes */
    strvec_clear(&a);

    o.time = "1:00:00";
    o.qos = "high";
    aka_slurm_sbatch_argv(&o, 0, 600, "aka-j", &a);
    assert_false(has_prefix(&a, "--gres")); /* a CPU job asks for no GPU */
    assert_true(has(&a, "--time=1:00:00"));
    assert_true(has(&a, "--qos=high"));
    strvec_clear(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_phases),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_refusals),
        cmocka_unit_test(test_sbatch_argv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
