/*
 * test_optimize_options.c — every `aka optimize` flag parses; invalid values and
 * combinations are usage errors (code 2) whose message names the flag.
 */
#include "aka_test.h"

#include "optimize/optimize.h"

#include <stdio.h>
#include <stdlib.h>

#include <string.h>

#define MAX_ARGS 24

/* Parse a NULL-terminated list of extra flags after the two required ones. */
static int parse(struct aka_optimize_opts *o, struct aka_err *err, const char *const *extra)
{
    char *argv[MAX_ARGS] = {"optimize", "--op-dir", "/ops/x", "--platform", "cpu"};
    int argc = 5;
    for (int i = 0; extra && extra[i]; i++)
        argv[argc++] = (char *)extra[i];
    aka_optimize_opts_init(o);
    return aka_optimize_opts_parse(argc, argv, o, err);
}

static void test_defaults(void **state)
{
    (void)state;
    struct aka_optimize_opts o;
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(parse(&o, &err, NULL), 0);
    assert_int_equal(o.max_iters, 20);
    assert_int_equal(o.fast_episodes, 2);
    assert_int_equal(o.fast_trials, 5);
    assert_int_equal(o.verify_repeats, 2);
    assert_int_equal(o.verify_run_timeout, 120);
    assert_int_equal(o.sandbox_timeout, 600);
    assert_int_equal(o.convert_after, 3);
    assert_int_equal(o.goal_after_episodes, 50);
    assert_int_equal(o.goal_after_stalls, 3);
    assert_true(o.target_util == 90.0);
    assert_string_equal(o.agent_cli, "claude");
    assert_string_equal(o.optimization_mode, "leaderboard");
    assert_string_equal(o.framework_baseline, "auto");
    assert_string_equal(o.transport.sandbox, "local");
    assert_string_equal(o.notes, "none");
    assert_string_equal(o.agent_eval, "auto");
    aka_optimize_opts_release(&o);
}

struct ok_case {
    const char *args[10];
    const char *flag; /* must be marked given */
};

static const struct ok_case ok_cases[] = {
    {{"--framework", "c"}, "--framework"},
    {{"--agent-cli", "builtin"}, "--agent-cli"},
    {{"--optimization-mode", "production"}, "--optimization-mode"},
    {{"--framework-baseline", "never"}, "--framework-baseline"},
    {{"--framework-baseline-timeout", "60"}, "--framework-baseline-timeout"},
    {{"--max-iters", "0"}, "--max-iters"},
    {{"--fast-episodes", "0"}, "--fast-episodes"},
    {{"--fast-trials", "1"}, "--fast-trials"},
    {{"--token-budget", "123456789012"}, "--token-budget"},
    {{"--target-util", "0"}, "--target-util"},
    {{"--max-stall", "4"}, "--max-stall"},
    {{"--convert-after", "0"}, "--convert-after"},
    {{"--goal-after-episodes", "10"}, "--goal-after-episodes"},
    {{"--goal-after-stalls", "1"}, "--goal-after-stalls"},
    {{"--goal", "fuse everything"}, "--goal"},
    {{"--handoff-resumes", "0"}, "--handoff-resumes"},
    {{"--handoff-resumes", "32"}, "--handoff-resumes"}, /* the agent runtime's limit */
    {{"--verify-repeats", "1"}, "--verify-repeats"},
    {{"--verify-run-timeout", "100"}, "--verify-run-timeout"},
    {{"--min-improvement-pct=2.5"}, "--min-improvement-pct"},
    {{"--max-shape-regression-pct", "10"}, "--max-shape-regression-pct"},
    {{"--max-dispersion-pct", "5"}, "--max-dispersion-pct"},
    {{"--production-review-timeout", "10"}, "--production-review-timeout"},
    {{"--workspace", "/tmp/x"}, "--workspace"},
    {{"--workspace-suffix", "c_cpu"}, "--workspace-suffix"},
    {{"--platform", "H20", "--arch", "sm_90"}, "--arch"},
    {{"--notes", "keep it simple"}, "--notes"},
    {{"--sandbox-isolation", "none"}, "--sandbox-isolation"},
    {{"--agent-sandbox", "none"}, "--agent-sandbox"},
    {{"--agent-eval", "broker"}, "--agent-eval"},
    {{"--agent-read-only-path", "/opt/node"}, "--agent-read-only-path"},
    {{"--agent-writable-path", "/tmp/cache", "--agent-writable-path", "/tmp/more"},
     "--agent-writable-path"},
    {{"--sandbox-url", "http://g", "--sandbox-hardware", "H200"}, "--sandbox-hardware"},
    {{"--sandbox-timeout", "510"}, "--sandbox-timeout"},
    {{"--environment-poll-interval", "5"}, "--environment-poll-interval"},
    /* remote transports with the default verification: one I C C I block per remote job
     * (4*120+30 = 510 s) fits the default 600 s job, whatever --verify-repeats says */
    {{"--sandbox-url", "http://127.0.0.1:1"}, "--sandbox-url"},
    {{"--sandbox", "gateway", "--sandbox-profile", "pre"}, "--sandbox-profile"},
    {{"--framework", "C", "--sandbox-ssh", "u@h", "--sandbox-ssh-gpu", "3"}, "--sandbox-ssh"},
    {{"--framework", "C", "--sandbox-ssh", "h", "--sandbox-ssh-gpu", "0", "--verify-repeats", "8"},
     "--sandbox-ssh-gpu"},
    {{"--sandbox", "slurm", "--slurm-partition", "gpu"}, "--slurm-partition"},
    {{"--sandbox-url", "http://g", "--verify-run-timeout", "142"}, "--verify-run-timeout"},
    {{"--verify-repeats", "5"}, "--verify-repeats"}, /* local: no allocation to fit */
};

static void test_every_flag_parses(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(ok_cases) / sizeof(ok_cases[0]); i++) {
        struct aka_optimize_opts o;
        struct aka_err err = AKA_ERR_INIT;
        int rc = parse(&o, &err, ok_cases[i].args);
        if (rc != 0)
            fail_msg("case %zu (%s): %s", i, ok_cases[i].args[0], err.msg);
        assert_true(aka_optimize_opt_given(&o, ok_cases[i].flag));
        aka_optimize_opts_release(&o);
    }
}

static void test_values_land(void **state)
{
    (void)state;
    struct aka_optimize_opts o;
    struct aka_err err = AKA_ERR_INIT;
    const char *args[] = {"--framework",
                          "c",
                          "--min-improvement-pct",
                          "2.5",
                          "--sandbox-url",
                          "http://u",
                          "--token-budget",
                          "99",
                          "--verify-repeats",
                          "1",
                          NULL};
    assert_int_equal(parse(&o, &err, args), 0);
    assert_string_equal(o.framework, "C"); /* canonical spelling */
    assert_true(o.min_improvement_pct == 2.5);
    assert_string_equal(o.transport.sandbox, "gateway"); /* implied by --sandbox-url */
    assert_int_equal(o.token_budget, 99);
    aka_optimize_opts_release(&o);
}

struct bad_case {
    const char *args[8];
    const char *names; /* the message must contain this */
};

static const struct bad_case bad_cases[] = {
    {{"--max-iters", "-1"}, "--max-iters"},
    {{"--max-iters", "ten"}, "--max-iters"},
    {{"--fast-episodes", "-1"}, "--fast-episodes"},
    {{"--fast-trials", "0"}, "--fast-trials"},
    {{"--verify-repeats", "0"}, "--verify-repeats"},
    {{"--verify-run-timeout", "0"}, "--verify-run-timeout"},
    {{"--min-improvement-pct", "100"}, "--min-improvement-pct"},
    {{"--min-improvement-pct", "-0.5"}, "--min-improvement-pct"},
    {{"--min-improvement-pct", "nan"}, "--min-improvement-pct"},
    {{"--sandbox-timeout", "601"}, "--sandbox-timeout"},
    {{"--sandbox-timeout", "0"}, "--sandbox-timeout"},
    {{"--convert-after", "-2"}, "--convert-after"},
    {{"--handoff-resumes", "-1"}, "--handoff-resumes"},
    {{"--handoff-resumes", "33"}, "--handoff-resumes"},
    {{"--target-util", "-1"}, "--target-util"},
    {{"--max-stall", "-1"}, "--max-stall"},
    {{"--goal-after-stalls", "x"}, "--goal-after-stalls"},
    {{"--framework-baseline-timeout", "0"}, "--framework-baseline-timeout"},
    {{"--target-util", "101"}, "--target-util"},
    {{"--token-budget", "-5"}, "--token-budget"},
    {{"--agent-cli", "gpt"}, "--agent-cli"},
    {{"--optimization-mode", "fast"}, "--optimization-mode"},
    {{"--framework-baseline", "sometimes"}, "--framework-baseline"},
    {{"--framework", "Numba"}, "--framework"},
    {{"--framework", "Triton"}, "--framework Triton"}, /* cpu runs only C */
    {{"--sandbox", "cloud"}, "--sandbox"},
    {{"--agent-sandbox", "docker"}, "--agent-sandbox"},
    {{"--agent-eval", "remote"}, "--agent-eval"},
    {{"--goal", ""}, "--goal"},
    {{"--workspace-suffix", "Not_A_Slug"}, "--workspace-suffix"},
    {{"--sandbox-url", "http://u", "--verify-run-timeout", "143"}, "--sandbox-timeout"}, /* 602 */
    {{"--sandbox-url", "u"}, "--sandbox-url"},              /* not an http(s) URL */
    {{"--sandbox-hardware", "H200"}, "--sandbox-hardware"}, /* gateway only */
    {{"--sandbox-url", "u", "--sandbox-profile", "pre"}, "mutually exclusive"},
    {{"--sandbox", "local", "--sandbox-url", "u"}, "--sandbox-url"},
    {{"--sandbox", "gateway"}, "--sandbox gateway"},
    {{"--sandbox-ssh-gpu", "1"}, "--sandbox-ssh-gpu"},
    {{"--sandbox-ssh-init", "true"}, "--sandbox-ssh-init"},
    {{"--framework", "C", "--sandbox-ssh", "-oProxy", "--sandbox-ssh-gpu", "0"}, "--sandbox-ssh"},
    {{"--framework", "C", "--sandbox-ssh", "u@h"}, "--sandbox-ssh-gpu"},
    {{"--sandbox-ssh", "u@h", "--sandbox-ssh-gpu", "0"}, "--framework"},
    {{"--framework", "C", "--sandbox-ssh", "h", "--sandbox-ssh-gpu", "32"}, "--sandbox-ssh-gpu"},
    {{"--slurm-partition", "gpu"}, "--slurm-partition"},
    {{"--sandbox", "slurm"}, "--slurm-partition"},
    {{"--sandbox", "slurm", "--slurm-partition", "p", "--sandbox-isolation", "none"},
     "--sandbox-isolation"},
    {{"--no-such-flag", "1"}, "--no-such-flag"},
    /* upstream's legacy setup session does not exist here: the flag is gone, not ignored */
    {{"--setup-timeout", "10"}, "--setup-timeout"},
    {{"stray"}, "stray"},
    {{"--notes"}, "--notes"},
};

static void test_bad_values_are_usage_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
        struct aka_optimize_opts o;
        struct aka_err err = AKA_ERR_INIT;
        if (parse(&o, &err, bad_cases[i].args) == 0)
            fail_msg("case %zu (%s %s) was accepted", i, bad_cases[i].args[0],
                     bad_cases[i].args[1] ? bad_cases[i].args[1] : "");
        assert_int_equal(err.code, AKA_EXIT_USAGE);
        if (!strstr(err.msg, bad_cases[i].names))
            fail_msg("case %zu: message does not name %s: %s", i, bad_cases[i].names, err.msg);
        aka_optimize_opts_release(&o);
    }
}

static void test_required_flags(void **state)
{
    (void)state;
    struct aka_optimize_opts o;
    struct aka_err err = AKA_ERR_INIT;
    char *no_op[] = {"optimize", "--platform", "cpu", NULL};
    char *no_platform[] = {"optimize", "--op-dir", "x", NULL};
    aka_optimize_opts_init(&o);
    assert_int_equal(aka_optimize_opts_parse(3, no_op, &o, &err), -1);
    assert_non_null(strstr(err.msg, "--op-dir"));
    aka_optimize_opts_release(&o);
    aka_optimize_opts_init(&o);
    assert_int_equal(aka_optimize_opts_parse(3, no_platform, &o, &err), -1);
    assert_non_null(strstr(err.msg, "--platform"));
    aka_optimize_opts_release(&o);
}

static void test_help_documents_every_flag(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    aka_optimize_print_help(f);
    fclose(f);
    for (size_t i = 0; i < sizeof(ok_cases) / sizeof(ok_cases[0]); i++)
        assert_non_null(strstr(buf, ok_cases[i].flag));
    assert_non_null(strstr(buf, "--sandbox-ssh-runtime-bind"));
    free(buf);
}

static void test_host_check(void **state)
{
    (void)state;
    struct aka_optimize_opts o;
    struct aka_err err = AKA_ERR_INIT;
    const char *missing_agent[] = {"--framework", "C", "--agent-cli", "pi", NULL};
    assert_int_equal(parse(&o, &err, missing_agent), 0);
    o.op_dir = AKA_SOURCE_DIR "/examples/ops/vector_add";
    setenv("PATH", "/nonexistent", 1);
    assert_int_equal(aka_optimize_opts_check_host(&o, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "--agent-cli pi"));
    o.agent_cli = "builtin";
    /* The default agent sandbox needs bwrap: without it, exit 75 and the way out, never a
     * silent fallback to an unconfined agent. */
    assert_int_equal(aka_optimize_opts_check_host(&o, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_ENV);
    assert_non_null(strstr(err.msg, "--agent-sandbox none"));
    o.agent_sandbox = "none";
    assert_int_equal(aka_optimize_opts_check_host(&o, &err), 0);
    /* Extra agent paths: existing, and no broad root, system tree or missing path. */
    static const char *const refused[] = {"/", "/etc", "/nonexistent/x", NULL};
    for (const char *const *p = refused; *p; p++) {
        strvec_clear(&o.agent_writable_paths);
        strvec_push(&o.agent_writable_paths, *p);
        assert_int_equal(aka_optimize_opts_check_host(&o, &err), -1);
        assert_int_equal(err.code, AKA_EXIT_USAGE);
        assert_non_null(strstr(err.msg, "--agent-writable-path"));
    }
    strvec_clear(&o.agent_writable_paths);
    strvec_push(&o.agent_read_only_paths, "/proc/self");
    assert_int_equal(aka_optimize_opts_check_host(&o, &err), -1);
    assert_non_null(strstr(err.msg, "--agent-read-only-path"));
    strvec_clear(&o.agent_read_only_paths);
    strvec_push(&o.agent_read_only_paths, "/usr/share");
    assert_int_equal(aka_optimize_opts_check_host(&o, &err), 0);
    o.op_dir = "/nonexistent/op";
    assert_int_equal(aka_optimize_opts_check_host(&o, &err), -1);
    assert_non_null(strstr(err.msg, "--op-dir"));
    aka_optimize_opts_release(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),       cmocka_unit_test(test_every_flag_parses),
        cmocka_unit_test(test_values_land),    cmocka_unit_test(test_bad_values_are_usage_errors),
        cmocka_unit_test(test_required_flags), cmocka_unit_test(test_help_documents_every_flag),
        cmocka_unit_test(test_host_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
