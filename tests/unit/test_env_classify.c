/*
 * test_env_classify.c — the machine or the candidate? (evaluator/health.c)
 *
 * The classification with canned outcomes (ENOSPC text, ssh's 255, a sandbox that
 * could not be built, a candidate's assertion failure), the probe commands, and the
 * whole path through aka_evaluate with a fake transport whose command fails and
 * whose health probe passes or fails: only a failing probe makes it code 75.
 */
#include "aka_test.h"

#include "evaluator/evaluator.h"

#include <string.h>

static enum aka_env_class classify(const char *transport, bool ran, int code, const char *err,
                                   int probe)
{
    struct aka_env_evidence e = {transport, ran, code, false, err, strlen(err), probe};
    return aka_env_classify(&e);
}

static void test_classify(void **state)
{
    (void)state;
    const char *enospc = "cc1: fatal error: kernel.o: No space left on device\n";
    const char *assertion = "judge: shape n4k seed 0: max abs error 3.1 > 1e-05\n"
                            "aka-native: candidate failed\n";
    /* a job that ran and passed: nothing to decide */
    assert_int_equal(classify("local", true, 0, "", -1), AKA_ENV_NONE);
    /* a sandbox that could not be built (bwrap broken: the transport's code 75) */
    assert_int_equal(classify("local", false, 75, "bwrap: Creating new namespace failed", -1),
                     AKA_ENV_TRANSPORT);
    /* any failed command asks for a probe first, whatever it printed */
    assert_int_equal(classify("local", true, 1, assertion, -1), AKA_ENV_PROBE);
    assert_int_equal(classify("local", true, 1, enospc, -1), AKA_ENV_PROBE);
    assert_int_equal(classify("ssh", true, 255, "", -1), AKA_ENV_PROBE);
    /* a candidate's assertion failure with a healthy machine stays the candidate's */
    assert_int_equal(classify("local", true, 1, assertion, 1), AKA_ENV_NONE);
    /* ENOSPC text alone (a candidate can print it) never blames the environment */
    assert_int_equal(classify("local", true, 1, enospc, 1), AKA_ENV_NONE);
    assert_int_equal(classify("local", true, 1, enospc, 0), AKA_ENV_DISK_FULL);
    /* ssh's 255: the transport when the probe fails too, else the command's own status */
    assert_int_equal(classify("ssh", true, 255, "", 0), AKA_ENV_TRANSPORT);
    assert_int_equal(classify("ssh", true, 255, "", 1), AKA_ENV_NONE);
    assert_int_equal(classify("local", true, 255, "", 0), AKA_ENV_HEALTH);
    /* a failed command and a failed probe: the machine */
    assert_int_equal(classify("local", true, 1, assertion, 0), AKA_ENV_HEALTH);
    struct aka_env_evidence timeout = {"local", true, 124, true, "", 0, 0};
    assert_int_equal(aka_env_classify(&timeout), AKA_ENV_HEALTH);
    assert_string_equal(aka_env_class_name(AKA_ENV_DISK_FULL), "disk_full");
}

static void test_probe_commands(void **state)
{
    (void)state;
    struct strbuf cmd = STRBUF_INIT;
    aka_eval_health_command(AKA_VENDOR_CPU, "C", NULL, &cmd);
    assert_string_equal(cmd.buf, ""); /* the CPU: only the transport's disk check */
    aka_eval_health_command(AKA_VENDOR_NVIDIA, "Triton", NULL, &cmd);
    assert_non_null(strstr(cmd.buf, "torch.cuda.synchronize()"));
    assert_non_null(strstr(cmd.buf, "nvidia-smi"));
    assert_non_null(strstr(cmd.buf, "import triton'"));
    aka_eval_health_command(AKA_VENDOR_NVIDIA, "Cuda", NULL, &cmd);
    assert_null(strstr(cmd.buf, "import triton"));
    aka_eval_health_command(AKA_VENDOR_NVIDIA, "Triton", "test -e /x", &cmd);
    assert_string_equal(cmd.buf, "test -e /x");
    strbuf_release(&cmd);
}

/* ---- aka_evaluate through a fake transport ------------------------------------------------- */

struct fake {
    struct aka_sandbox_result *res;
    int exit_code;
    const char *stderr_text;
    bool probe_ok;
    int probes;
};

static int f_prepare(const struct aka_sandbox_transport *t, const struct aka_sandbox_job *job,
                     struct aka_sandbox_result *res, void **state, struct aka_err *err)
{
    struct fake *f = t->ctx;
    (void)job;
    (void)err;
    f->res = res;
    *state = f;
    return 0;
}

static int f_run(void *state, struct aka_err *err)
{
    struct fake *f = state;
    (void)err;
    f->res->exit_code = f->exit_code;
    strbuf_addstr(&f->res->err, f->stderr_text);
    return 0;
}

static void f_nop(void *state)
{
    (void)state;
}

static void f_describe(const struct aka_sandbox_transport *t, struct strbuf *out)
{
    (void)t;
    strbuf_addstr(out, "fake");
}

static int f_probe(const struct aka_sandbox_transport *t, const struct aka_sandbox_probe *p,
                   struct aka_sandbox_health *h)
{
    struct fake *f = t->ctx;
    (void)p;
    f->probes++;
    h->ok = f->probe_ok;
    h->exit_code = f->probe_ok ? 0 : 1;
    snprintf(h->output, sizeof(h->output), "%s", f->probe_ok ? "fine" : "GPU fell off the bus");
    return 0;
}

static const struct aka_sandbox_transport_ops fake_ops = {"fake", f_prepare,  f_run,  f_nop,
                                                          f_nop,  f_describe, f_probe};

static int evaluate(struct fake *f, struct aka_eval_outcome *out, struct aka_err *err)
{
    char op[1024], kernel[1200];
    struct aka_sandbox_transport t = {&fake_ops, f, AKA_SBX_BWRAP, NULL, NULL};
    snprintf(op, sizeof(op), "%s/examples/ops/vector_add", AKA_SOURCE_DIR);
    snprintf(kernel, sizeof(kernel), "%s/seeds/C/kernel.c", op);
    struct aka_eval_request req = {.op_dir = op,
                                   .kernel = kernel,
                                   .framework = "C",
                                   .platform = "cpu",
                                   .repo_root = AKA_SOURCE_DIR,
                                   .timed_runs = -1,
                                   .warmup = -1};
    aka_eval_outcome_init(out);
    return aka_evaluate(&t, &req, out, err);
}

static void test_evaluate_path(void **state)
{
    (void)state;
    struct aka_eval_outcome out;
    struct aka_err err = AKA_ERR_INIT;
    /* a candidate's failure on a healthy machine: an ordinary failed verdict */
    struct fake healthy = {NULL, 1, "judge: wrong answer\n", true, 0};
    int rc = evaluate(&healthy, &out, &err);
    if (rc != 0)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(out.exit_code, 1);
    assert_int_equal(healthy.probes, 1);
    assert_null(aka_env_last_failure());
    aka_eval_outcome_release(&out);
    /* the same failure with a probe that fails: the environment's, no verdict */
    struct fake sick = {NULL, 1, "judge: wrong answer\n", false, 0};
    assert_int_equal(evaluate(&sick, &out, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_ENV);
    assert_non_null(strstr(err.msg, "health_failed"));
    assert_non_null(strstr(err.msg, "GPU fell off the bus"));
    assert_int_equal(aka_env_last_failure()->cls, AKA_ENV_HEALTH);
    aka_eval_outcome_release(&out);
    /* a full disk */
    struct fake full = {NULL, 1, "ld: kernel.o: No space left on device\n", false, 0};
    aka_err_clear(&err);
    assert_int_equal(evaluate(&full, &out, &err), -1);
    assert_non_null(strstr(err.msg, "disk_full"));
    aka_eval_outcome_release(&out);
    /* a command that passed is never probed */
    struct fake quiet = {NULL, 0, "", false, 0};
    aka_err_clear(&err);
    evaluate(&quiet, &out, &err);
    assert_int_equal(quiet.probes, 0);
    aka_eval_outcome_release(&out);
}

/* A transport without a probe reports healthy, saying it could not tell. */
static void test_no_probe(void **state)
{
    (void)state;
    static const struct aka_sandbox_transport_ops ops = {"bare", f_prepare,  f_run, f_nop,
                                                         f_nop,  f_describe, NULL};
    struct aka_sandbox_transport t = {&ops, NULL, AKA_SBX_BWRAP, NULL, NULL};
    struct aka_sandbox_probe p = {"true", 0, AKA_VENDOR_CPU, false};
    struct aka_sandbox_health h;
    aka_sandbox_probe_health(&t, &p, &h);
    assert_true(h.ok);
    assert_non_null(strstr(h.output, "no health probe"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_probe_commands),
        cmocka_unit_test(test_evaluate_path),
        cmocka_unit_test(test_no_probe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
