/*
 * test_submission_check.c — a finalized SOL submission evaluated as a user submits it
 * (aka_optimize_check_submission, issue 16): by SOL-ExecBench's `sol-execbench` when
 * the sandbox runtime has it (here a stand-in that answers with the traces the real
 * tool wrote on an H200, tests/harness/python/fixtures/official/), else by aka's judge,
 * which says why. The workspace's solution.json is the one aka_optimize_finalize wrote.
 * Runs the real evaluator on the rope example on the CPU (isolation none); skipped
 * where python3 has no torch.
 */
#include "aka_test.h"

#include "base/fs.h"
#include "base/json.h"
#include "bootstrap/bootstrap.h"
#include "evaluator/evaluator.h"
#include "git/git.h"
#include "optimize/optimize.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROPE   AKA_SOURCE_DIR "/examples/ops/rope"
#define TRACES AKA_SOURCE_DIR "/tests/harness/python/fixtures/official/sol_traces_rope_h200.jsonl"
#define SHAPE1 "7d0c5a2e-0001-4a6b-9e41-000000000001"
#define SHAPE2 "7d0c5a2e-0002-4a6b-9e41-000000000002"

/* The rope example's own solution.json kernel: a correct destination-passing PyTorch run. */
static const char kernel_ok[] =
    "import torch\n\n\ndef run(q, cos, sin, out):\n"
    "    half = q.shape[-1] // 2\n    qf = q.float()\n"
    "    c, s = cos[:, None, :], sin[:, None, :]\n"
    "    out[..., :half] = (qf[..., :half] * c - qf[..., half:] * s).to(out.dtype)\n"
    "    out[..., half:] = (qf[..., half:] * c + qf[..., :half] * s).to(out.dtype)\n";

static char old_path[8192];

static void put(const char *dir, const char *rel, const char *text, mode_t mode)
{
    char p[1024];
    struct aka_err err = AKA_ERR_INIT;
    snprintf(p, sizeof(p), "%s/%s", dir, rel);
    if (aka_write_file_atomic(p, text, strlen(text), mode, &err) < 0)
        fail_msg("%s", err.msg);
}

static void copy_in(const char *ws, const char *name)
{
    char from[1024], to[1024];
    struct aka_err err = AKA_ERR_INIT;
    snprintf(from, sizeof(from), "%s/%s", ROPE, name);
    snprintf(to, sizeof(to), "%s/%s", ws, name);
    assert_int_equal(aka_copy_file(from, to, &err), 0);
}

/* A stopped SOL campaign's workspace (PyTorch, V0 and a promoted v1) and its submission. */
static void finalized_ws(const char *ws, struct aka_finalize_summary *s)
{
    char p[1024];
    struct aka_err err = AKA_ERR_INIT;
    struct aka_git g;
    snprintf(p, sizeof(p), "%s/memory", ws);
    assert_int_equal(aka_mkdir_p(p, 0755, &err), 0);
    snprintf(p, sizeof(p), "%s/.aka", ws);
    assert_int_equal(aka_mkdir_p(p, 0755, &err), 0);
    put(ws, ".aka/campaign.json",
        "{\"schema\": \"aka.campaign.v1\", \"layout\": \"sol\", \"framework\": \"PyTorch\", "
        "\"platform\": \"cpu\", \"kernel\": \"kernel.py\"}",
        0644);
    copy_in(ws, "definition.json");
    copy_in(ws, "workload.jsonl");
    put(ws, "kernel.py", kernel_ok, 0644);
    for (long v = 0; v < 2; v++) {
        double us = 20.0 - 10 * (double)v;
        struct aka_result r = {.all_pass = true,
                               .latency_us_geomean = us,
                               .latency_us_arith_mean = us,
                               .speedup_vs_ref_geomean = 1.0,
                               .performance_score = 1.0,
                               .max_abs_err = NAN,
                               .max_rel_err = NAN};
        aka_shape_map_set(&r.latency_us_by_shape, SHAPE1, us);
        json_t *doc =
            aka_memory_doc_from_result(v, v ? AKA_MEM_PROMOTED : AKA_MEM_BASELINE, &r,
                                       "0123456789abcdef0123456789abcdef01234567", "test", "t");
        snprintf(p, sizeof(p), "%s/memory", ws);
        if (aka_memory_write(p, doc, &err) < 0)
            fail_msg("%s", err.msg);
        json_decref(doc);
        aka_shape_map_release(&r.latency_us_by_shape);
    }
    put(ws, ".gitignore", ".aka/\n", 0644);
    assert_int_equal(aka_git_init(ws, "main", &err), 0);
    aka_git_open(&g, ws);
    assert_int_equal(aka_git_add(&g, NULL, &err), 0);
    assert_int_equal(aka_git_commit(&g, "test workspace", NULL, &err), 0);
    aka_git_close(&g);
    if (aka_optimize_finalize(ws, s, &err) < 0)
        fail_msg("%s", err.msg);
    assert_true(s->submission_written);
}

/* A python prefix outside /usr whose bin/ holds python3 (the system one) and, when
 * verdict is not NULL, a sol-execbench stand-in: the traces of the real tool, with the
 * first workload's status replaced by verdict. It keeps the solution it was given. */
static void runtime_prefix(char *dir, size_t n, const char *verdict)
{
    char bin[1024], p[1024], script[4096];
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf made = STRBUF_INIT;
    /* Not under /tmp: the sandbox reserves /tmp (a job's /tmp is its own), so a python
     * prefix there is not used. */
    assert_int_equal(aka_make_temp_dir("/var/tmp", "aka-subcheck", &made, &err), 0);
    snprintf(dir, n, "%s", made.buf);
    strbuf_release(&made);
    snprintf(bin, sizeof(bin), "%s/bin", dir);
    assert_int_equal(aka_mkdir_p(bin, 0755, &err), 0);
    snprintf(p, sizeof(p), "%s/python3", bin);
    assert_int_equal(symlink("/usr/bin/python3", p), 0);
    if (verdict) {
        snprintf(script, sizeof(script),
                 "#!/bin/sh\nsol= out=\nwhile [ $# -gt 0 ]; do\n"
                 "  case $1 in --solution) sol=$2; shift ;; -o) out=$2; shift ;; esac; shift\n"
                 "done\ncp \"$sol\" '%s/seen.json'\n"
                 "sed '1s/\"status\": \"PASSED\"/\"status\": \"%s\"/' '%s' >\"$out\"\n",
                 dir, verdict, TRACES);
        put(bin, "sol-execbench", script, 0755);
    }
    snprintf(p, sizeof(p), "%s:/usr/bin:/bin", bin);
    setenv("PATH", p, 1);
}

static void gone(const char *dir)
{
    struct aka_err err = AKA_ERR_INIT;
    aka_remove_tree(dir, &err);
}

/* s's submission against the rope example on the CPU, two small workloads. */
static void check(struct aka_finalize_summary *s)
{
    struct strvec ids = STRVEC_INIT;
    struct aka_sandbox_transport t;
    struct aka_sandbox_local_opts lo = {.tmp_dir = NULL};
    strvec_push(&ids, SHAPE1);
    strvec_push(&ids, SHAPE2);
    aka_sandbox_local(&t, &lo);
    t.isolation = AKA_SBX_NONE;
    struct aka_eval_request req = {.op_dir = ROPE,
                                   .framework = "PyTorch",
                                   .platform = "cpu",
                                   .repo_root = AKA_SOURCE_DIR,
                                   .shape_ids = &ids,
                                   .multi_seed = 1,
                                   .timed_runs = 2,
                                   .warmup = 1,
                                   .timeout_s = 240};
    aka_optimize_check_submission(&t, &req, s);
    strvec_clear(&ids);
}

static int have_torch(void)
{
    return system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
}

/* Without the owner's tool aka's judge evaluates the file, and the line says so. */
static void judged_without_official_tool(void **state)
{
    char ws[512], dir[512], line[16384];
    struct aka_finalize_summary s;
    (void)state;
    if (!have_torch())
        skip();
    snprintf(ws, sizeof(ws), "%s/ws-judge", aka_scratch_dir());
    finalized_ws(ws, &s);
    runtime_prefix(dir, sizeof(dir), NULL);
    check(&s);
    if (s.check != AKA_SUBMISSION_PASSED)
        fail_msg("check %d by %s: %s", (int)s.check, s.checked_by, s.check_detail);
    assert_string_equal(s.checked_by, "aka.python.sol");
    assert_string_equal(s.check_note, "no official evaluator in the sandbox runtime");
    assert_string_equal(s.check_detail, "2/2 workloads passed");
    gone(dir);
    aka_finalize_summary_line(&s, line, sizeof(line));
    assert_non_null(strstr(line, "solution.json; checked by aka.python.sol (no official "
                                 "evaluator in the sandbox runtime): PASS (2/2 workloads "
                                 "passed)"));
}

/* With sol-execbench in the runtime, it decides: pass and fail both reach the line, and
 * the file it was given is the submission aka_optimize_finalize wrote. */
static void official_tool_decides(void **state)
{
    static const char *const verdicts[] = {"PASSED", "INCORRECT_NUMERICAL"};
    char ws[512], dir[512], p[1024], line[16384];
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    if (!have_torch())
        skip();
    for (int i = 0; i < 2; i++) {
        struct aka_finalize_summary s;
        struct strbuf seen = STRBUF_INIT, written = STRBUF_INIT;
        snprintf(ws, sizeof(ws), "%s/ws-official-%d", aka_scratch_dir(), i);
        finalized_ws(ws, &s);
        runtime_prefix(dir, sizeof(dir), verdicts[i]);
        check(&s);
        assert_string_equal(s.checked_by, "sol-execbench");
        assert_string_equal(s.check_note, "");
        snprintf(p, sizeof(p), "%s/seen.json", dir);
        assert_int_equal(aka_read_file(p, &seen, 1 << 20, &err), 0);
        assert_int_equal(aka_read_file(s.submission, &written, 1 << 20, &err), 0);
        assert_string_equal(seen.buf, written.buf);
        gone(dir);
        aka_finalize_summary_line(&s, line, sizeof(line));
        if (i == 0) {
            assert_int_equal(s.check, AKA_SUBMISSION_PASSED);
            assert_non_null(strstr(line, "; checked by sol-execbench: PASS (2/2 workloads "));
        } else {
            assert_int_equal(s.check, AKA_SUBMISSION_FAILED);
            assert_non_null(strstr(s.check_detail, "workload " SHAPE1 ": INCORRECT_NUMERICAL"));
            assert_non_null(strstr(line, "; checked by sol-execbench: FAIL (workload "));
        }
        strbuf_release(&seen);
        strbuf_release(&written);
    }
}

/* A submission that was not written is not evaluated, and the line adds nothing. */
static void nothing_written_nothing_checked(void **state)
{
    char line[16384];
    struct aka_finalize_summary s = {.version = 1, .status = "promoted", .latency_us = 1};
    struct aka_eval_request req = {.op_dir = ROPE};
    struct aka_sandbox_transport t;
    (void)state;
    aka_sandbox_local(&t, NULL);
    aka_optimize_check_submission(&t, &req, &s);
    assert_int_equal(s.check, AKA_SUBMISSION_UNCHECKED);
    aka_finalize_summary_line(&s, line, sizeof(line));
    assert_null(strstr(line, "checked"));
}

static int save_path(void **state)
{
    const char *p = getenv("PATH");
    snprintf(old_path, sizeof(old_path), "%s", p ? p : "/usr/bin:/bin");
    return aka_scratch_setup(state);
}

static int restore_path(void **state)
{
    setenv("PATH", old_path, 1);
    return aka_scratch_teardown(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(judged_without_official_tool),
        cmocka_unit_test(official_tool_decides),
        cmocka_unit_test(nothing_written_nothing_checked),
    };
    return cmocka_run_group_tests(tests, save_path, restore_path);
}
