/*
 * test_evaluate.c — the pieces of evaluator/evaluator.h that need no sandbox:
 * plan.json generation for native operators, the identity cross-check
 * (kernel_sha256 and eval_id), the interpretation of a job's output into a
 * verdict (fail closed on every malformed or contradictory output), platform and
 * framework names, and the evaluations.jsonl appender. The end-to-end runs
 * through bwrap are in tests/integration/eval_native.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/fs.h"
#include "base/json.h"
#include "contracts/operator.h"
#include "evaluator/evaluator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHA_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SHA_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static void load_example(const char *name, struct aka_operator *op)
{
    char dir[1024];
    struct aka_err err = AKA_ERR_INIT;
    snprintf(dir, sizeof(dir), "%s/examples/ops/%s", AKA_SOURCE_DIR, name);
    int rc = aka_operator_load(dir, op, &err);
    if (rc != 0)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
}

static json_t *plan_for(const struct aka_operator *op, const struct strvec *ids, int seeds,
                        struct aka_err *err)
{
    struct aka_native_plan_opts o = {"E1", SHA_A, ids, seeds, 2, 5, 1 << 20, 0, NULL, 0, false};
    return aka_eval_native_plan(op, &o, err);
}

/* ---- plan.json ---------------------------------------------------------------------------- */

static void t_plan_vector_add(void **state)
{
    struct aka_operator op;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    load_example("vector_add", &op);
    json_t *plan = plan_for(&op, NULL, 3, &err);
    assert_non_null(plan);
    assert_string_equal(json_string_value(json_object_get(plan, "schema")), "aka.native.plan.v1");
    assert_string_equal(json_string_value(json_object_get(plan, "kernel_sha256")), SHA_A);
    assert_string_equal(json_string_value(json_object_get(plan, "eval_id")), "E1");
    assert_int_equal(json_array_size(json_object_get(plan, "seeds")), 3);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(plan, "seeds"), 2)), 2);
    assert_int_equal(json_integer_value(json_object_get(plan, "reps")), 5);
    json_t *shapes = json_object_get(plan, "shapes");
    assert_int_equal(json_array_size(shapes), 3);
    json_t *odd = json_array_get(shapes, 2);
    assert_string_equal(json_string_value(json_object_get(odd, "id")), "odd");
    json_t *x = json_array_get(json_object_get(odd, "inputs"), 0);
    assert_string_equal(json_string_value(json_object_get(x, "dtype")), "float32");
    assert_int_equal(json_integer_value(json_array_get(json_object_get(x, "shape"), 0)), 100003);
    json_t *z = json_array_get(json_object_get(odd, "outputs"), 0);
    assert_true(json_real_value(json_object_get(z, "atol")) == 1e-6);
    json_t *dim = json_array_get(json_object_get(odd, "dims"), 0);
    assert_string_equal(json_string_value(json_object_get(dim, "name")), "N");
    assert_int_equal(json_integer_value(json_object_get(dim, "value")), 100003);
    json_decref(plan);
    aka_operator_release(&op);
}

/* A probe plan: its cases are the plan's seeds, and the plan carries them for the judge. */
/* --timing kernel-span reaches the native plan as "timing"; without it the key is absent
 * (the native judge then times with events). */
static void t_plan_timing(void **state)
{
    struct aka_operator op;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    load_example("row_sum_cuda", &op);
    struct aka_native_plan_opts o = {"E1", SHA_A, NULL, 1, 2, 5, 0, 0, NULL, 0, true};
    json_t *plan = aka_eval_native_plan(&op, &o, &err);
    assert_non_null(plan);
    assert_string_equal(json_string_value(json_object_get(plan, "timing")), "kernel_span");
    json_decref(plan);
    o.kernel_span = false;
    plan = aka_eval_native_plan(&op, &o, &err);
    assert_non_null(plan);
    assert_null(json_object_get(plan, "timing"));
    json_decref(plan);
    aka_operator_release(&op);
}

static void t_plan_probes(void **state)
{
    struct aka_operator op;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    load_example("vector_add", &op);
    json_t *probes =
        json_pack("{s:{s:f}, s:[{s:s, s:i, s:f, s:f, s:s}, {s:s, s:i, s:f, s:f, s:s}]}", "rel_l2",
                  "float32", 1e-4, "cases", "name", "magnitude_1e3", "seed", 2, "scale", 1e3,
                  "offset", 0.0, "pattern", "none", "name", "other_seed", "seed", 1007, "scale",
                  1.0, "offset", 0.0, "pattern", "constant_rows");
    struct aka_native_plan_opts o = {"E1", SHA_A, NULL, 5, 2, 5, 1 << 20, 0, probes, 0, false};
    json_t *plan = aka_eval_native_plan(&op, &o, &err);
    assert_non_null(plan);
    json_t *seeds = json_object_get(plan, "seeds");
    assert_int_equal(json_array_size(seeds), 2); /* the probe cases, not n_seeds */
    assert_int_equal(json_integer_value(json_array_get(seeds, 0)), 2);
    assert_int_equal(json_integer_value(json_array_get(seeds, 1)), 1007);
    assert_true(json_equal(json_object_get(plan, "probes"), probes));
    json_decref(plan);
    o.probes = NULL; /* an ordinary plan has none */
    plan = aka_eval_native_plan(&op, &o, &err);
    assert_null(json_object_get(plan, "probes"));
    assert_int_equal(json_array_size(json_object_get(plan, "seeds")), 5);
    json_decref(plan);
    json_decref(probes);
    aka_operator_release(&op);
}

static void t_plan_filter_and_params(void **state)
{
    struct aka_operator op;
    struct aka_err err = AKA_ERR_INIT;
    struct strvec ids = STRVEC_INIT;
    (void)state;
    load_example("row_softmax", &op);
    strvec_push(&ids, "r33_c1000");
    json_t *plan = plan_for(&op, &ids, 1, &err);
    assert_non_null(plan);
    json_t *shapes = json_object_get(plan, "shapes");
    assert_int_equal(json_array_size(shapes), 1);
    json_t *s = json_array_get(shapes, 0);
    json_t *shape = json_object_get(json_array_get(json_object_get(s, "inputs"), 0), "shape");
    assert_int_equal(json_integer_value(json_array_get(shape, 0)), 33);
    assert_int_equal(json_integer_value(json_array_get(shape, 1)), 1000);
    json_t *p = json_array_get(json_object_get(s, "params"), 0);
    assert_string_equal(json_string_value(json_object_get(p, "name")), "scale");
    assert_string_equal(json_string_value(json_object_get(p, "type")), "float");
    assert_true(json_number_value(json_object_get(p, "value")) == 0.125);
    json_decref(plan);
    strvec_clear(&ids);
    strvec_push(&ids, "r33_c999");
    assert_null(plan_for(&op, &ids, 1, &err));
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "r33_c999"));
    strvec_clear(&ids);
    aka_operator_release(&op);
}

static void write_text(const char *dir, const char *name, const char *text)
{
    struct strbuf p = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(&p, dir, name);
    assert_int_equal(aka_write_file_atomic(p.buf, text, strlen(text), 0644, &err), 0);
    strbuf_release(&p);
}

/* Expressions, per-shape params and per-tensor tolerances are resolved by aka, not the harness. */
static void t_plan_resolves_everything(void **state)
{
    struct strbuf dir = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct aka_operator op;
    (void)state;
    assert_int_equal(aka_make_temp_dir(NULL, "aka-test-plan", &dir, &err), 0);
    write_text(dir.buf, "reference.c", "int x;\n");
    write_text(
        dir.buf, "operator.json",
        "{\"schema\": \"aka.native.v1\", \"name\": \"t\", \"language\": \"c\",\n"
        " \"abi\": {\"header\": \"aka_native_abi.h\", \"version\": 1}, \"dims\": [\"N\"],\n"
        " \"tensors\": [{\"name\": \"x\", \"role\": \"input\", \"dtype\": \"float16\","
        " \"shape\": [\"N\", 3]},\n"
        "   {\"name\": \"y\", \"role\": \"output\", \"dtype\": \"int32\", \"shape\": "
        "[\"N/2\"]}],\n"
        " \"params\": [{\"name\": \"k\", \"type\": \"int\", \"per_shape\": {\"a\": 3, \"b\": "
        "5}}],\n"
        " \"shapes\": [{\"id\": \"a\", \"dims\": {\"N\": 8}}, {\"id\": \"b\", \"dims\": "
        "{\"N\": 20}}],\n"
        " \"tolerance\": {\"atol\": 1e-5, \"rtol\": 1e-5, \"per_tensor\": {\"y\": {\"atol\": "
        "0, \"rtol\": 0}}}}\n");
    assert_int_equal(aka_operator_load(dir.buf, &op, &err), 0);
    json_t *plan = plan_for(&op, NULL, 1, &err);
    assert_non_null(plan);
    json_t *b = json_array_get(json_object_get(plan, "shapes"), 1);
    json_t *x = json_array_get(json_object_get(b, "inputs"), 0);
    json_t *y = json_array_get(json_object_get(b, "outputs"), 0);
    assert_string_equal(json_string_value(json_object_get(x, "dtype")), "float16");
    assert_int_equal(json_integer_value(json_array_get(json_object_get(x, "shape"), 1)), 3);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(y, "shape"), 0)), 10);
    assert_true(json_real_value(json_object_get(y, "atol")) == 0.0);
    json_t *k = json_array_get(json_object_get(b, "params"), 0);
    assert_int_equal(json_integer_value(json_object_get(k, "value")), 5);
    json_decref(plan);
    aka_operator_release(&op);
    aka_remove_tree(dir.buf, &err);
    strbuf_release(&dir);
}

/* ---- identity and interpretation ------------------------------------------------------------- */

static const char *result_line(const char *sha, const char *eval_id, bool pass)
{
    static char buf[2048];
    snprintf(buf, sizeof(buf),
             "RESULT_JSON={\"all_pass\":%s,\"total\":1,\"passed\":%d,\"failures\":[%s],"
             "\"latency_us_by_shape\":{\"s\":1.5},\"evaluator\":\"aka.native.c\","
             "\"eval_id\":\"%s\",\"kernel_sha256\":\"%s\",\"seeds\":[0],"
             "\"timing\":{\"method\":\"cpu_monotonic\",\"warmup\":1,\"reps\":2,"
             "\"l2_flush\":false,\"cv_by_shape\":{\"s\":0.01}},\"actionable_diagnostics\":[]}\n",
             pass ? "true" : "false", pass ? 1 : 0, pass ? "" : "\"sid=s: wrong\"", eval_id, sha);
    return buf;
}

static struct strvec g_ids;

static struct aka_eval_expect expect(void)
{
    struct aka_eval_expect x;
    memset(&x, 0, sizeof(x));
    if (g_ids.n == 0)
        strvec_push(&g_ids, "s");
    x.evaluator = "aka.native.c";
    x.eval_id = "E1";
    x.kernel_sha256 = SHA_A;
    x.shape_ids = &g_ids;
    x.n_seeds = 1, x.warmup = 1, x.reps = 2;
    x.timing_method = "none";
    x.native = true;
    x.timeout_s = 60;
    return x;
}

/* Interpret (out, err) text with an exit status; returns aka_eval_interpret's value. */
static int interpret(const char *out, const char *errtext, int code, int sig, bool timed_out,
                     struct aka_eval_outcome *o, struct aka_err *err)
{
    struct aka_eval_expect x = expect();
    struct aka_eval_run run = {code,    sig,         timed_out,       out,
                               errtext, strlen(out), strlen(errtext), false};
    aka_eval_outcome_init(o);
    return aka_eval_interpret(&x, &run, o, err);
}

static bool any_failure_has(const struct aka_eval_outcome *o, const char *needle)
{
    for (size_t i = 0; i < o->result.failures.n; i++)
        if (strstr(o->result.failures.v[i], needle))
            return true;
    return false;
}

static void t_identity(void **state)
{
    struct aka_result r;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    aka_result_init(&r);
    assert_int_equal(aka_eval_check_identity(&r, SHA_A, "E1", &err), -1);
    aka_result_set_string(&r.kernel_sha256, SHA_A);
    aka_result_set_string(&r.eval_id, "E1");
    assert_int_equal(aka_eval_check_identity(&r, SHA_A, "E1", &err), 0);
    assert_int_equal(aka_eval_check_identity(&r, SHA_B, "E1", &err), -1);
    assert_non_null(strstr(err.msg, "kernel_sha256"));
    assert_int_equal(aka_eval_check_identity(&r, SHA_A, "E2", &err), -1);
    assert_non_null(strstr(err.msg, "eval_id"));
    aka_result_release(&r);
}

static void t_interpret_pass_and_fail(void **state)
{
    struct aka_eval_outcome o;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    assert_int_equal(interpret(result_line(SHA_A, "E1", true), "", 0, 0, false, &o, &err), 0);
    assert_true(o.result.all_pass);
    assert_int_equal(o.exit_code, 0);
    aka_eval_outcome_release(&o);
    assert_int_equal(interpret(result_line(SHA_A, "E1", false), "", 1, 0, false, &o, &err), 0);
    assert_false(o.result.all_pass);
    assert_int_equal(o.exit_code, 1);
    assert_true(any_failure_has(&o, "sid=s"));
    aka_eval_outcome_release(&o);
}

/* A forged line kept while the judge's real one was cut off by the stdout cap: a pass on
 * its face (right kernel, right eval id, exit 0) that must become a failure. */
static void t_interpret_truncated_stdout(void **state)
{
    struct aka_eval_outcome o;
    struct aka_err err = AKA_ERR_INIT;
    struct aka_eval_expect x = expect();
    const char *line = result_line(SHA_A, "E1", true);
    struct aka_eval_run run = {0, 0, false, line, "", strlen(line), 0, true};
    (void)state;
    aka_eval_outcome_init(&o);
    assert_int_equal(aka_eval_interpret(&x, &run, &o, &err), 0);
    assert_false(o.result.all_pass);
    assert_int_equal(o.exit_code, 1);
    assert_true(any_failure_has(&o, "truncated stdout"));
    aka_eval_outcome_release(&o);
}

/* Each of these is a pass on its face and must become a failure. */
static void t_interpret_fails_closed(void **state)
{
    struct aka_eval_outcome o;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf two = STRBUF_INIT;
    (void)state;
    /* another kernel's bytes */
    assert_int_equal(interpret(result_line(SHA_B, "E1", true), "", 0, 0, false, &o, &err), 0);
    assert_false(o.result.all_pass);
    assert_true(any_failure_has(&o, "kernel_sha256"));
    aka_eval_outcome_release(&o);
    /* a replayed result of another evaluation */
    assert_int_equal(interpret(result_line(SHA_A, "OLD", true), "", 0, 0, false, &o, &err), 0);
    assert_true(any_failure_has(&o, "eval_id"));
    aka_eval_outcome_release(&o);
    /* two result lines */
    strbuf_addstr(&two, result_line(SHA_A, "E1", true));
    strbuf_addstr(&two, result_line(SHA_A, "E1", true));
    assert_int_equal(interpret(two.buf, "", 0, 0, false, &o, &err), 0);
    assert_false(o.result.all_pass);
    assert_true(any_failure_has(&o, "exactly one"));
    aka_eval_outcome_release(&o);
    strbuf_release(&two);
    /* all_pass with a failing exit status */
    assert_int_equal(interpret(result_line(SHA_A, "E1", true), "", 1, 0, false, &o, &err), 0);
    assert_false(o.result.all_pass);
    assert_true(any_failure_has(&o, "status 1"));
    aka_eval_outcome_release(&o);
    /* nothing at all, killed by a signal: the progress line names the shape */
    assert_int_equal(
        interpret("", "aka-harness: phase=candidate shape=s seed=0\n", 139, 11, false, &o, &err),
        0);
    assert_int_equal(o.exit_code, 1);
    assert_true(any_failure_has(&o, "signal 11"));
    assert_true(any_failure_has(&o, "shape=s"));
    assert_int_equal(o.result.total, 1);
    assert_non_null(o.result.kernel_sha256);
    aka_eval_outcome_release(&o);
}

static void t_interpret_timeout_and_compile(void **state)
{
    struct aka_eval_outcome o;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    assert_int_equal(interpret("", "aka-harness: phase=candidate-timing shape=s seed=0\n", 124, 0,
                               true, &o, &err),
                     0);
    assert_true(any_failure_has(&o, "timed out after 60 s"));
    assert_true(any_failure_has(&o, "shape=s"));
    aka_eval_outcome_release(&o);
    assert_int_equal(interpret("",
                               "aka-native: stage=compile\nkernel.c: In function 'f':\n"
                               "kernel.c:3:1: error: boom\n",
                               12, 0, false, &o, &err),
                     0);
    assert_int_equal(o.exit_code, 1);
    assert_true(any_failure_has(&o, "compile: kernel.c:3:1: error: boom"));
    assert_int_equal(o.result.diagnostics.n, 1);
    assert_string_equal(o.result.diagnostics.v[0].stage, "compile");
    aka_eval_outcome_release(&o);
}

/* Faults that are not the candidate's are errors, not verdicts. */
static void t_interpret_not_the_candidate(void **state)
{
    struct aka_eval_outcome o;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    assert_int_equal(interpret("", "aka-native: 'nvcc' is not available\n", 10, 0, false, &o, &err),
                     -1);
    assert_int_equal(err.code, AKA_EXIT_ENV);
    aka_eval_outcome_release(&o);
    assert_int_equal(interpret("",
                               "aka-native: stage=harness\nreference.c:1:1: error: x\n"
                               "aka-native: reference.c does not build\n",
                               11, 0, false, &o, &err),
                     -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    /* one line: the failure and the compiler's first error */
    assert_non_null(strstr(err.msg, "reference.c does not build (the operator's reference"));
    assert_non_null(strstr(err.msg, "; first error: reference.c:1:1: error: x"));
    assert_null(strchr(err.msg, '\n'));
    aka_eval_outcome_release(&o);
    assert_int_equal(
        interpret("", "aka-harness: no CUDA device is visible\n", 4, 0, false, &o, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_ENV);
    aka_eval_outcome_release(&o);
    /* the judge's own reason is its result's failure, not its last log line ("done") */
    assert_int_equal(interpret(result_line(SHA_A, "E1", false), "aka-harness: done at=0.011s\n", 4,
                               0, false, &o, &err),
                     -1);
    assert_int_equal(err.code, AKA_EXIT_ENV);
    assert_non_null(strstr(err.msg, "device or memory: sid=s: wrong"));
    aka_eval_outcome_release(&o);
    /* after kernel code ran, the same status is the candidate's */
    assert_int_equal(interpret(result_line(SHA_A, "E1", false),
                               "aka-harness: candidate code starts\n", 4, 0, false, &o, &err),
                     0);
    assert_int_equal(o.exit_code, 1);
    aka_eval_outcome_release(&o);
    assert_int_equal(interpret(result_line(SHA_A, "E1", false), "", 3, 0, false, &o, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "reference failed"));
    aka_eval_outcome_release(&o);
}

/* ---- names and records ------------------------------------------------------------------------
 */

/* Platform names: tests/unit/test_platform.c. */
static void t_platforms_and_frameworks(void **state)
{
    (void)state;
    assert_string_equal(aka_eval_framework("cuda"), "Cuda");
    assert_string_equal(aka_eval_framework("TRITON"), "Triton");
    assert_null(aka_eval_framework("rust"));
}

static void t_record_append(void **state)
{
    struct strbuf dir = STRBUF_INIT, path = STRBUF_INIT, text = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct aka_eval_outcome o;
    struct aka_eval_request req;
    (void)state;
    memset(&req, 0, sizeof(req));
    req.op_dir = "ops/x", req.kernel = "kernel.c", req.framework = "C", req.timed_runs = -1;
    assert_int_equal(aka_make_temp_dir(NULL, "aka-test-record", &dir, &err), 0);
    aka_path_join(&path, dir.buf, ".aka/evaluations.jsonl");
    assert_int_equal(interpret(result_line(SHA_A, "E1", true), "", 0, 0, false, &o, &err), 0);
    snprintf(o.kernel_sha256, sizeof(o.kernel_sha256), "%s", SHA_A);
    snprintf(o.isolation, sizeof(o.isolation), "none");
    for (int i = 0; i < 2; i++)
        assert_int_equal(aka_eval_record_append(path.buf, &req, &o, "e0007", &err), 0);
    assert_int_equal(aka_read_file(path.buf, &text, 1 << 20, &err), 0);
    char *second = strchr(text.buf, '\n');
    assert_non_null(second);
    assert_non_null(strchr(second + 1, '\n'));
    json_t *rec = json_loadb(text.buf, (size_t)(second - text.buf), 0, NULL);
    assert_non_null(rec);
    assert_string_equal(json_string_value(json_object_get(rec, "kernel_sha256")), SHA_A);
    assert_string_equal(json_string_value(json_object_get(rec, "episode")), "e0007");
    json_t *res = json_object_get(rec, "result");
    assert_true(json_is_true(json_object_get(res, "all_pass")));
    assert_string_equal(json_string_value(json_object_get(res, "sandbox_isolation")), "none");
    json_decref(rec);
    aka_eval_outcome_release(&o);
    aka_remove_tree(dir.buf, &err);
    strbuf_release(&dir);
    strbuf_release(&path);
    strbuf_release(&text);
}

/* production_performance as the score's reference (score.c, contracts' accessor). */
static void set_production(struct aka_operator *op, const char *sid, json_t *pp)
{
    json_t *shapes = json_object_get(op->atrex.metadata, "shapes");
    json_object_set_new(json_object_get(shapes, sid), "production_performance", pp);
}

static void t_production_score(void **state)
{
    (void)state;
    struct aka_operator op;
    struct aka_result r;
    struct aka_err err = AKA_ERR_INIT;
    load_example("rmsnorm", &op);
    assert_false(aka_operator_has_production(&op));
    aka_result_init(&r);
    aka_shape_map_set(&r.latency_us_by_shape, "0", 10.0);
    aka_shape_map_set(&r.latency_us_by_shape, "1", 40.0);
    r.performance_score = 7.0; /* as the harness scored it against the measured reference */
    set_production(
        &op, "0",
        json_pack("{s:{s:s, s:f}}", "XPU-A", "framework", "vllm", "performance_us", 20.0));
    assert_true(aka_operator_has_production(&op));
    /* Shape 1 has none while shape 0 has one: no score can compare. */
    assert_int_equal(aka_eval_score_production(&op, &r, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "shapes.1.production_performance: missing"));
    /* The one SKU entry that has a latency is the reference (another without one is fine). */
    set_production(&op, "1",
                   json_pack("{s:{s:s}, s:{s:f}}", "XPU-B", "framework", "x", "XPU-A",
                             "performance_us", 20.0));
    assert_int_equal(aka_eval_score_production(&op, &r, &err), 0);
    assert_float_equal(r.performance_score, (20.0 / 10.0 + 20.0 / 40.0) / 2, 1e-9);
    assert_float_equal(r.speedup_vs_ref_mean, 1.25, 1e-9);
    assert_float_equal(r.speedup_vs_ref_geomean, 1.0, 1e-9);
    assert_string_equal(json_string_value(json_object_get(r.extra, "score_reference")),
                        "production_performance");
    /* Two SKUs with a latency: ambiguous. Zero: not a latency. */
    set_production(
        &op, "1",
        json_pack("{s:{s:f}, s:{s:f}}", "A", "performance_us", 1.0, "B", "performance_us", 2.0));
    assert_int_equal(aka_eval_score_production(&op, &r, &err), -1);
    assert_non_null(strstr(err.msg, "a second SKU"));
    set_production(&op, "1", json_pack("{s:{s:i}}", "A", "performance_us", 0));
    assert_int_equal(aka_eval_score_production(&op, &r, &err), -1);
    assert_non_null(strstr(err.msg, "positive number"));
    set_production(&op, "1", json_string("fast"));
    assert_int_equal(aka_eval_score_production(&op, &r, &err), -1);
    assert_non_null(strstr(err.msg, "expected an object"));
    aka_result_release(&r);
    aka_operator_release(&op);
}

/* ---- aka profile's job ------------------------------------------------------------------- */

/* The evaluator runs the harness under the profiler it is given and brings the export back;
 * the verdict is still the harness's. (On the CPU, with a stand-in: no ncu here.) */
static void t_profile_job(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf dir = STRBUF_INIT, bin = STRBUF_INIT, out_dir = STRBUF_INIT, p = STRBUF_INIT;
    struct strvec prof = STRVEC_INIT, ids = STRVEC_INIT;
    struct aka_sandbox_transport t;
    struct aka_sandbox_local_opts lo = {.tmp_dir = NULL};
    struct aka_eval_outcome out;
    (void)state;
    /* Not under /tmp: a job's /tmp is its own, so a bind there is refused. */
    assert_int_equal(aka_make_temp_dir("/var/tmp", "aka-profjob", &dir, &err), 0);
    aka_path_join(&bin, dir.buf, "bin");
    aka_path_join(&out_dir, dir.buf, "out");
    assert_int_equal(aka_mkdir_p(bin.buf, 0755, &err), 0);
    aka_path_join(&p, bin.buf, "fakeprof");
    assert_int_equal(
        aka_copy_file(AKA_SOURCE_DIR "/tests/fixtures/profile/fake_profiler.sh", p.buf, &err),
        0); /* a stand-in: records its flags, runs the harness, writes a CSV */
    strvec_push(&prof, p.buf);
    strvec_push(&prof, "--csv");
    strvec_push(&ids, "n4k");
    aka_sandbox_local(&t, &lo);
    t.isolation = AKA_SBX_NONE;
    struct aka_eval_request req = {.op_dir = AKA_SOURCE_DIR "/examples/ops/vector_add",
                                   .kernel =
                                       AKA_SOURCE_DIR "/examples/ops/vector_add/seeds/C/kernel.c",
                                   .framework = "C",
                                   .platform = "cpu",
                                   .repo_root = AKA_SOURCE_DIR,
                                   .shape_ids = &ids,
                                   .multi_seed = 1,
                                   .timed_runs = 1,
                                   .warmup = 1,
                                   .profiler = &prof,
                                   .profiler_dir = bin.buf,
                                   .artifact_dir = out_dir.buf};
    aka_eval_outcome_init(&out);
    int rc = aka_evaluate(&t, &req, &out, &err);
    if (rc != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(out.exit_code, 0); /* the harness's verdict: a pass */
    aka_path_join(&p, out_dir.buf, AKA_EVAL_PROFILE_EXPORT);
    struct strbuf text = STRBUF_INIT;
    assert_int_equal(aka_read_file(p.buf, &text, 1 << 20, &err), 0);
    assert_non_null(strstr(text.buf, "gpu__time_duration.sum"));
    /* The profiler's flags, then the judge alone: the builds ran outside the profiler. */
    aka_path_join(&p, bin.buf, "argv.txt");
    strbuf_reset(&text);
    assert_int_equal(aka_read_file(p.buf, &text, 1 << 20, &err), 0);
    assert_string_equal(text.buf,
                        "--csv\n--log-file\n" AKA_EVAL_PROFILE_EXPORT "\n./judge\nplan.json\nc\n");
    /* A long profiler line (the CLI's --metric repeats; the broker passes up to 32) reaches
     * the judge whole: 120 more words, past any two-digit count. */
    for (int i = 0; i < 60; i++) {
        strvec_push(&prof, "--metrics");
        strvec_pushf(&prof, "m_%d", i);
    }
    aka_eval_outcome_release(&out);
    aka_eval_outcome_init(&out);
    if (aka_evaluate(&t, &req, &out, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(out.exit_code, 0);
    strbuf_reset(&text);
    assert_int_equal(aka_read_file(p.buf, &text, 1 << 20, &err), 0);
    assert_non_null(strstr(text.buf, "\n--metrics\nm_59\n--log-file\n" AKA_EVAL_PROFILE_EXPORT
                                     "\n./judge\nplan.json\nc\n"));
    /* the profiler must be named by an absolute path */
    free(prof.v[0]);
    prof.v[0] = aka_xstrdup("fakeprof");
    aka_eval_outcome_release(&out);
    aka_eval_outcome_init(&out);
    assert_int_equal(aka_evaluate(&t, &req, &out, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    aka_eval_outcome_release(&out);
    aka_remove_tree(dir.buf, &err);
    strbuf_release(&text);
    strbuf_release(&dir);
    strbuf_release(&bin);
    strbuf_release(&out_dir);
    strbuf_release(&p);
    strvec_clear(&prof);
    strvec_clear(&ids);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_plan_vector_add),
        cmocka_unit_test(t_plan_probes),
        cmocka_unit_test(t_plan_timing),
        cmocka_unit_test(t_plan_filter_and_params),
        cmocka_unit_test(t_plan_resolves_everything),
        cmocka_unit_test(t_identity),
        cmocka_unit_test(t_interpret_pass_and_fail),
        cmocka_unit_test(t_interpret_fails_closed),
        cmocka_unit_test(t_interpret_truncated_stdout),
        cmocka_unit_test(t_interpret_timeout_and_compile),
        cmocka_unit_test(t_interpret_not_the_candidate),
        cmocka_unit_test(t_platforms_and_frameworks),
        cmocka_unit_test(t_record_append),
        cmocka_unit_test(t_production_score),
        cmocka_unit_test(t_profile_job),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    strvec_clear(&g_ids);
    return rc;
}
