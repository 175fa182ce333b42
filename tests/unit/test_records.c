/*
 * test_records.c — evaluator result (RESULT_JSON), memory records, journal and
 * handoff: valid documents round-trip, malformed ones fail with a message that
 * names the file and the field, and failed operations write nothing.
 */
#include "aka_test.h"

#include "base/fs.h"
#include "contracts/records.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define C1  "0123456789abcdef0123456789abcdef01234567"
#define C2  "89abcdef0123456789abcdef0123456789abcdef"
#define SHA "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define NOW "2025-03-04T05:06:07Z"

static void tmp_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", aka_scratch_dir(), name);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The file's bytes ("<absent>" when it does not exist), for write-nothing checks. */
static char *slurp(const char *path)
{
    struct strbuf sb = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    if (!aka_exists(path))
        return aka_xstrdup("<absent>");
    assert_int_equal(aka_read_file(path, &sb, 1 << 20, &err), 0);
    return strbuf_detach(&sb, NULL);
}

static void expect_error(int rc, const struct aka_err *err, const char *name, const char *want)
{
    if (rc == 0 || strcmp(err->msg, want) != 0)
        fail_msg("%s: expected error\n  %s\ngot rc %d\n  %s", name, want, rc, err->msg);
    assert_int_equal(err->code, AKA_EXIT_USAGE);
}

/* ---- evaluator result ----------------------------------------------------------- */

#define RJ      "RESULT_JSON="
#define BASE_OK "\"all_pass\":true,\"total\":2,\"passed\":2,\"failures\":[]"
#define BASE_FAIL                                                                                  \
    "\"all_pass\":false,\"total\":2,\"passed\":1,\"failures\":[\"sid=1: correctness\"]"

static const char full_result[] =
    "compiling...\n"
    "warmup done\r\n" RJ "{" BASE_OK ",\"latency_us_by_shape\":{\"s0\":12.5,\"s1\":40},"
    "\"latency_us_geomean\":22.36,\"latency_us_arith_mean\":26.25,\"speedup_vs_ref_geomean\":1.5,"
    "\"speedup_vs_ref_mean\":1.6,\"performance_score\":1.6,\"max_abs_err\":0.0,"
    "\"max_rel_err\":1e-6,\"evaluator\":\"aka/native-c\",\"eval_id\":\"e-1\","
    "\"kernel_sha256\":\"" SHA "\",\"seeds\":[42,43],"
    "\"timing\":{\"method\":\"cuda_event\",\"warmup\":10,\"reps\":100,\"l2_flush\":true,"
    "\"cv_by_shape\":{\"s0\":0.01,\"s1\":null}},"
    "\"actionable_diagnostics\":[{\"stage\":\"compile_import\",\"shape_id\":null,"
    "\"message\":\"warning: x\"}],"
    "\"probes\":[{\"id\":\"p1\",\"status\":\"passed\",\"distribution\":\"scaled_1e4\","
    "\"seed\":1729,\"metric\":\"rel_l2\",\"value\":1e-5,\"threshold\":1e-3}],"
    "\"shape_batch_count\":1}\n"
    "bye\n";

static void t_result_valid(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_result r, back;
    struct strbuf line = STRBUF_INIT;

    assert_int_equal(aka_result_parse_output("eval", full_result, strlen(full_result), &r, &err),
                     0);
    assert_true(r.all_pass);
    assert_int_equal(r.total, 2);
    assert_int_equal(r.latency_us_by_shape.n, 2);
    assert_true(aka_shape_map_get(&r.latency_us_by_shape, "s1") == 40.0);
    assert_false(aka_measured(aka_shape_map_get(&r.latency_us_by_shape, "s9")));
    assert_true(r.max_abs_err == 0.0);
    assert_string_equal(r.kernel_sha256, SHA);
    assert_int_equal(r.seeds.n, 2);
    assert_true(r.timing.present);
    assert_int_equal(r.timing.reps, 100);
    assert_false(aka_measured(aka_shape_map_get(&r.timing.cv_by_shape, "s1")));
    assert_int_equal(r.diagnostics.n, 1);
    assert_null(r.diagnostics.v[0].shape_id);
    assert_true(r.has_probes);
    assert_int_equal(r.probes.v[0].status, AKA_PROBE_PASSED);
    assert_int_equal(r.probes.v[0].seed, 1729);
    assert_non_null(json_object_get(r.extra, "shape_batch_count"));

    /* The writer's line parses back to the same document. */
    aka_result_format_line(&r, &line);
    assert_true(strncmp(line.buf, RJ, strlen(RJ)) == 0);
    assert_int_equal(aka_result_parse_output("again", line.buf, line.len, &back, &err), 0);
    json_t *a = aka_result_to_json(&r), *b = aka_result_to_json(&back);
    assert_true(json_equal(a, b));
    json_decref(a);
    json_decref(b);
    strbuf_release(&line);
    aka_result_release(&back);
    aka_result_release(&r);
}

/* The Python harness writes failures as objects; aka keeps their messages. */
static void t_result_failure_objects(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_result r;
    const char *text = RJ "{\"all_pass\":false,\"total\":2,\"passed\":1,\"failures\":["
                          "{\"shape_id\":\"s1\",\"stage\":\"correctness\","
                          "\"message\":\"shape s1: max abs err 3\"},\"shape s2: plain\"]}";
    assert_int_equal(aka_result_parse_output("eval", text, strlen(text), &r, &err), 0);
    assert_int_equal(r.failures.n, 2);
    assert_string_equal(r.failures.v[0], "shape s1: max abs err 3");
    assert_string_equal(r.failures.v[1], "shape s2: plain");
    aka_result_release(&r);
}

static void t_result_missing_is_null(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_result r;
    const char *text = RJ "{" BASE_FAIL ",\"latency_us_geomean\":null,"
                          "\"latency_us_by_shape\":{\"s0\":null}}";
    assert_int_equal(aka_result_parse_output("eval", text, strlen(text), &r, &err), 0);
    assert_false(aka_measured(r.latency_us_geomean));
    assert_false(aka_measured(r.max_rel_err));
    assert_false(aka_measured(aka_shape_map_get(&r.latency_us_by_shape, "s0")));
    json_t *j = aka_result_to_json(&r);
    assert_true(json_is_null(json_object_get(j, "latency_us_geomean")));
    assert_true(json_is_null(json_object_get(j, "max_abs_err")));
    assert_true(json_is_null(json_object_get(json_object_get(j, "latency_us_by_shape"), "s0")));
    json_decref(j);
    aka_result_release(&r);
}

struct result_row {
    const char *name;
    const char *text;
    const char *error; /* NULL: must parse */
};

#define ONE(fields) RJ "{" fields "}"

static const struct result_row result_rows[] = {
    {"upstream tag prefix", "[test_kernel] " ONE(BASE_OK), NULL},
    {"CRLF line ending", "x\r\n" ONE(BASE_OK) "\r\n", NULL},
    {"masked failure without details",
     ONE("\"all_pass\":false,\"total\":2,\"passed\":0,"
         "\"failures\":[],\"hidden_case_details\":\"withheld\""),
     NULL},
    {"prefix mid-line is not a result line", "note: RESULT_JSON={}\n" ONE(BASE_OK), NULL},
    /* A probe run of the Python harness times nothing: --timed-runs=0, method "none". */
    {"untimed run, no repetitions",
     ONE(BASE_OK ",\"timing\":{\"method\":\"none\",\"warmup\":10,\"reps\":0,\"l2_flush\":false}"),
     NULL},
};

static const struct result_row bad_rows[] = {
    {"no line", "hello\nworld\n",
     "eval: expected exactly one line starting with RESULT_JSON=; got none in 2 lines of output"},
    {"empty output", "",
     "eval: expected exactly one line starting with RESULT_JSON=; got none in 0 lines of output"},
    {"two lines", ONE(BASE_OK) "\nnoise\n" ONE(BASE_OK) "\n",
     "eval: expected exactly one line starting with RESULT_JSON=; got 2 (lines 1 and 3)"},
    {"three lines, one tagged", ONE(BASE_OK) "\n[x] " ONE(BASE_OK) "\n" ONE(BASE_OK),
     "eval: expected exactly one line starting with RESULT_JSON=; got 3 (lines 1 and 2, ...)"},
    {"bad JSON", "log\n" RJ "{\"all_pass\": tru}",
     "eval:2:28: invalid JSON: invalid token near 'tru'"},
    {"duplicate key", ONE(BASE_OK ",\"total\":3"),
     "eval:1:71: invalid JSON: duplicate object key near '\"total\"'"},
    {"not an object", RJ "[1]", "eval:1: expected an object; got an array"},
    {"all_pass string", ONE("\"all_pass\":\"yes\",\"total\":1,\"passed\":1"),
     "eval:1: all_pass: expected true or false; got a string"},
    {"total missing", ONE("\"all_pass\":true,\"passed\":1"),
     "eval:1: total: required field is missing"},
    {"total float", ONE("\"all_pass\":true,\"total\":2.5,\"passed\":1"),
     "eval:1: total: expected an integer; got a number"},
    {"passed > total", ONE("\"all_pass\":true,\"total\":2,\"passed\":3,\"failures\":[]"),
     "eval:1: passed: expected an integer from 0 to total (2); got 3"},
    {"passed negative", ONE("\"all_pass\":false,\"total\":2,\"passed\":-1,\"failures\":[\"x\"]"),
     "eval:1: passed: expected an integer from 0 to total (2); got -1"},
    {"all_pass with passed < total",
     ONE("\"all_pass\":true,\"total\":2,\"passed\":1,\"failures\":[]"),
     "eval:1: all_pass: expected false because passed is 1 of 2; got true"},
    {"all_pass with zero cases", ONE("\"all_pass\":true,\"total\":0,\"passed\":0"),
     "eval:1: all_pass: expected false because passed is 0 of 0; got true"},
    {"not all_pass though all passed",
     ONE("\"all_pass\":false,\"total\":2,\"passed\":2,\"failures\":[\"x\"]"),
     "eval:1: all_pass: expected true because passed is 2 of 2; got false"},
    {"failures with all_pass",
     ONE("\"all_pass\":true,\"total\":1,\"passed\":1,\"failures\":[\"x\"]"),
     "eval:1: failures: expected none when all_pass is true; got 1 (first: \"x\")"},
    {"no failures without all_pass",
     ONE("\"all_pass\":false,\"total\":1,\"passed\":0,\"failures\":[]"),
     "eval:1: failures: expected at least one failure when all_pass is false; got none"},
    {"failure with control characters",
     ONE("\"all_pass\":true,\"total\":1,\"passed\":1,\"failures\":[\"a\\nb\\u001b\"]"),
     "eval:1: failures: expected none when all_pass is true; got 1 (first: \"a\\nb\\x1b\")"},
    {"failure not a string", ONE("\"all_pass\":false,\"total\":1,\"passed\":0,\"failures\":[3]"),
     "eval:1: failures[0]: expected a string or an object with a message; got 3"},
    {"failure object without message",
     ONE("\"all_pass\":false,\"total\":1,\"passed\":0,\"failures\":[{\"shape_id\":\"a\"}]"),
     "eval:1: failures[0].message: required field is missing"},
    {"timing method unknown",
     ONE(BASE_OK
         ",\"timing\":{\"method\":\"wallclock\",\"warmup\":1,\"reps\":1,\"l2_flush\":true}"),
     "eval:1: timing.method: expected one of cuda_event, cuda_graph, cupti_kernel_span, "
     "cupti_kernel_span_graph, cpu_monotonic, cpu_time, none; got "
     "\"wallclock\""},
    {"sha upper case",
     ONE(BASE_OK ",\"kernel_sha256\":\""
                 "ABCDEF"
                 "\""),
     "eval:1: kernel_sha256: expected 64 lower-case hex digits; got \"ABCDEF\""},
    {"sha short", ONE(BASE_OK ",\"kernel_sha256\":\"abc\""),
     "eval:1: kernel_sha256: expected 64 lower-case hex digits; got \"abc\""},
    {"sha not a string", ONE(BASE_OK ",\"kernel_sha256\":7"),
     "eval:1: kernel_sha256: expected a string; got an integer"},
    {"latency negative", ONE(BASE_OK ",\"latency_us_by_shape\":{\"s0\":-1}"),
     "eval:1: latency_us_by_shape.s0: expected a finite number > 0 or null; got -1"},
    {"latency zero", ONE(BASE_OK ",\"latency_us_geomean\":0"),
     "eval:1: latency_us_geomean: expected a finite number > 0 or null; got 0"},
    {"latency string", ONE(BASE_OK ",\"latency_us_by_shape\":{\"s0\":\"1\"}"),
     "eval:1: latency_us_by_shape.s0: expected a number or null; got \"1\""},
    {"latency map a list", ONE(BASE_OK ",\"latency_us_by_shape\":[1]"),
     "eval:1: latency_us_by_shape: expected an object; got an array"},
    {"empty shape id", ONE(BASE_OK ",\"latency_us_by_shape\":{\"\":1}"),
     "eval:1: latency_us_by_shape: expected non-empty shape ids; got {\"\":1}"},
    {"error negative", ONE(BASE_OK ",\"max_abs_err\":-0.5"),
     "eval:1: max_abs_err: expected a finite number >= 0 or null; got -0.5"},
    {"speedup bool", ONE(BASE_OK ",\"speedup_vs_ref_mean\":true"),
     "eval:1: speedup_vs_ref_mean: expected a number; got a boolean"},
    {"seed float", ONE(BASE_OK ",\"seeds\":[1,2.5]"),
     "eval:1: seeds[1]: expected an integer; got 2.5"},
    {"timing unknown key",
     ONE(BASE_OK
         ",\"timing\":{\"method\":\"cpu_monotonic\",\"warmup\":1,\"reps\":1,\"l2_flush\":true,"
         "\"flush\":1}"),
     "eval:1: timing.flush: unknown field (known fields: method, warmup, reps, l2_flush, "
     "cv_by_shape, time_budget_ms, reps_by_shape)"},
    {"timing budget negative",
     ONE(BASE_OK ",\"timing\":{\"method\":\"cpu_monotonic\",\"warmup\":1,\"reps\":1,"
                 "\"l2_flush\":true,\"time_budget_ms\":-5}"),
     "eval:1: timing.time_budget_ms: expected an integer >= 0; got -5"},
    {"timing reps by shape not a number",
     ONE(BASE_OK ",\"timing\":{\"method\":\"cpu_monotonic\",\"warmup\":1,\"reps\":1,"
                 "\"l2_flush\":true,\"time_budget_ms\":2000,\"reps_by_shape\":{\"s0\":\"9\"}}"),
     "eval:1: timing.reps_by_shape.s0: expected a number or null; got \"9\""},
    {"timing reps 0",
     ONE(BASE_OK
         ",\"timing\":{\"method\":\"cpu_monotonic\",\"warmup\":1,\"reps\":0,\"l2_flush\":true}"),
     "eval:1: timing.reps: expected an integer >= 1 (method \"cpu_monotonic\"); got 0"},
    {"timing none reps negative",
     ONE(BASE_OK ",\"timing\":{\"method\":\"none\",\"warmup\":1,\"reps\":-1,\"l2_flush\":false}"),
     "eval:1: timing.reps: expected an integer >= 0 (method \"none\"); got -1"},
    {"timing missing method",
     ONE(BASE_OK ",\"timing\":{\"warmup\":1,\"reps\":1,\"l2_flush\":true}"),
     "eval:1: timing.method: required field is missing"},
    {"diagnostic without message",
     ONE(BASE_OK ",\"actionable_diagnostics\":[{\"stage\":\"compile_import\"}]"),
     "eval:1: actionable_diagnostics[0].message: required field is missing"},
    {"probe bad status", ONE(BASE_OK ",\"probes\":[{\"id\":\"p\",\"status\":\"ok\"}]"),
     "eval:1: probes[0].status: expected one of passed, failed, incomplete; got \"ok\""},
    {"probe duplicate id",
     ONE(BASE_OK ",\"probes\":[{\"id\":\"p\",\"status\":\"passed\"},"
                 "{\"id\":\"p\",\"status\":\"failed\"}]"),
     "eval:1: probes[1].id: expected a unique id; got \"p\" again (probes[0])"},
};

static void t_result_table(void **state)
{
    for (size_t i = 0; i < sizeof(result_rows) / sizeof(result_rows[0]); i++) {
        struct aka_err err = AKA_ERR_INIT;
        struct aka_result r;
        const struct result_row *row = &result_rows[i];
        if (aka_result_parse_output("eval", row->text, strlen(row->text), &r, &err) != 0)
            fail_msg("%s: unexpected error: %s", row->name, err.msg);
        aka_result_release(&r);
    }
    for (size_t i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
        struct aka_err err = AKA_ERR_INIT;
        struct aka_result r;
        const struct result_row *row = &bad_rows[i];
        int rc = aka_result_parse_output("eval", row->text, strlen(row->text), &r, &err);
        expect_error(rc, &err, row->name, row->error);
        /* A failed parse leaves an empty result behind, nothing to free. */
        assert_int_equal(r.failures.n + r.latency_us_by_shape.n + r.probes.n, 0);
        assert_null(r.extra);
    }
}

/* A C harness builds the struct, prints the line, and the supervisor parses it. */
static void t_result_writer(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_result r, back;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    aka_result_init(&r);
    r.total = 3, r.passed = 2, r.all_pass = false;
    aka_result_add_failure(&r, "sid=%d: correctness max_abs_err %.3g", 2, 0.5);
    aka_shape_map_set(&r.latency_us_by_shape, "s0", 10.0);
    aka_shape_map_set(&r.latency_us_by_shape, "s1", AKA_MISSING);
    r.latency_us_geomean = 10.0;
    aka_result_set_string(&r.kernel_sha256, SHA);
    aka_result_set_string(&r.evaluator, "aka/native-c");
    aka_result_add_diagnostic(&r, "candidate_runtime", "s1", "segfault");
    r.timing.present = true;
    aka_result_set_string(&r.timing.method, "cpu_time"); /* the native judge's CPU default */
    r.timing.warmup = 3, r.timing.reps = 20;
    r.timing.time_budget_ms = 2000; /* a schedule cut to the budget on s0 */
    aka_shape_map_set(&r.timing.reps_by_shape, "s0", 9);
    assert_int_equal(aka_result_print(f, &r, &err), 0);
    fclose(f);
    assert_true(strncmp(buf, RJ, strlen(RJ)) == 0);
    assert_non_null(strstr(buf, "\"s1\":null"));
    assert_non_null(strstr(buf, "\"speedup_vs_ref_mean\":null"));
    assert_int_equal(aka_result_parse_output("printed", buf, len, &back, &err), 0);
    assert_false(back.all_pass);
    assert_string_equal(back.failures.v[0], "sid=2: correctness max_abs_err 0.5");
    assert_false(aka_measured(back.performance_score));
    assert_string_equal(back.timing.method, "cpu_time"); /* recorded as the judge said */
    assert_int_equal(back.timing.time_budget_ms, 2000);
    assert_true(aka_shape_map_get(&back.timing.reps_by_shape, "s0") == 9.0);
    aka_result_release(&back);
    free(buf);

    /* An inconsistent struct prints nothing. */
    r.all_pass = true;
    buf = NULL;
    f = open_memstream(&buf, &len);
    assert_int_equal(aka_result_print(f, &r, &err), -1);
    fclose(f);
    assert_int_equal(len, 0);
    assert_string_equal(err.msg,
                        "RESULT_JSON: all_pass: expected false because passed is 2 of 3; got true");
    free(buf);
    r.all_pass = false;
    r.latency_us_arith_mean = -INFINITY;
    assert_int_equal(aka_result_validate("harness", &r, &err), -1);
    assert_string_equal(err.msg, "harness: latency_us_arith_mean: expected a finite number > 0 or "
                                 "null; got -inf");
    aka_result_release(&r);
}

/* ---- memory records ----------------------------------------------------------- */

static json_t *memory_doc(const char *version, const char *status)
{
    bool pass = !strcmp(status, "promoted") || !strcmp(status, "baseline") ||
                !strcmp(status, "framework_baseline");
    json_t *d = json_pack(
        "{s:s, s:s, s:b, s:s, s:{s:f, s:f, s:{s:f, s:f}, s:s}, "
        "s:{s:s, s:f}, s:{s:s, s:n}, s:{s:s}, s:[s]}",
        "version", version, "status", status, "masked", 0, "timestamp", NOW, "performance",
        "latency_us", 20.0, "latency_us_geomean", 20.0, "latency_us_by_shape", "s0", 10.0, "s1",
        40.0, "measurement_status", "complete", "correctness", "status", "PASS", "max_abs_err", 0.0,
        "quality_gate", "result", pass ? "PASS" : "FAIL", "failure_reason", "optimization",
        "action_category", "tiling", "open_directions", "try split-k");
    json_object_set_new(d, "git_commit_hash", pass ? json_string(C1) : json_null());
    json_object_set_new(d, "upstream_extra", json_string("kept"));
    return d;
}

static void make_dir(const char *name, char *out, size_t size)
{
    struct aka_err err = AKA_ERR_INIT;
    tmp_path(out, size, name);
    assert_int_equal(aka_mkdir_p(out, 0755, &err), 0);
}

static void t_memory_round_trip(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_memory_record r;
    char dir[512], path[600];
    json_t *doc = memory_doc("v3", "promoted");

    make_dir("mem-rt", dir, sizeof(dir));
    assert_int_equal(aka_memory_write(dir, doc, &err), 0);
    snprintf(path, sizeof(path), "%s/v3.json", dir);
    assert_int_equal(aka_memory_load(path, &r, &err), 0);
    assert_int_equal(r.version, 3);
    assert_int_equal(r.status, AKA_MEM_PROMOTED);
    assert_string_equal(r.git_commit_hash, C1);
    assert_string_equal(r.quality_gate, "PASS");
    assert_true(r.latency_us_geomean == 20.0);
    assert_int_equal(r.latency_us_by_shape.n, 2);
    assert_false(aka_measured(r.performance_score));
    assert_true(json_equal(r.json, doc)); /* unknown fields kept */
    assert_null(r.timing_method);         /* older records do not say */
    aka_memory_release(&r);
    json_decref(doc);

    /* How the latencies were timed is read when the record says (verification compares
     * only records of one method). */
    doc = memory_doc("v3", "promoted");
    json_object_set_new(json_object_get(doc, "performance"), "timing_method",
                        json_string("cupti_kernel_span"));
    assert_int_equal(aka_memory_write(dir, doc, &err), 0);
    assert_int_equal(aka_memory_load(path, &r, &err), 0);
    assert_string_equal(r.timing_method, "cupti_kernel_span");
    aka_memory_release(&r);
    json_decref(doc);

    /* Non-promoted outcomes describe the incumbent: no commit of their own. */
    doc = memory_doc("v4", "pivot");
    assert_int_equal(aka_memory_write(dir, doc, &err), 0);
    json_decref(doc);
}

static void t_memory_name_mismatch(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_memory_record r;
    char dir[512], path[600], want[1024];
    json_t *doc = memory_doc("v3", "baseline");

    make_dir("mem-mismatch", dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/v4.json", dir);
    assert_int_equal(aka_json_write_file(path, doc, &err), 0);
    snprintf(want, sizeof(want), "%s: version: expected \"v4\" (from the file name); got \"v3\"",
             path);
    expect_error(aka_memory_load(path, &r, &err), &err, "name/version", want);
    assert_null(r.json);

    snprintf(path, sizeof(path), "%s/v03.json", dir);
    assert_int_equal(aka_json_write_file(path, doc, &err), 0);
    snprintf(want, sizeof(want),
             "%s: expected a canonical memory file named v<N>.json (N without leading zeros); "
             "got \"v03.json\"",
             path);
    expect_error(aka_memory_load(path, &r, &err), &err, "leading zero", want);
    json_decref(doc);
}

static void t_memory_listing(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_memory_listing l;
    char dir[512], path[600];
    static const char *const names[] = {"v10.json",
                                        "v2.json",
                                        "v0.json",
                                        "v1.json",
                                        "v0.failed.json",
                                        "live.json",
                                        "v01.json",
                                        "v3_512.json",
                                        "long_horizon_e0001.json",
                                        "v7.json.tmp",
                                        NULL};
    make_dir("mem-list", dir, sizeof(dir));
    for (size_t i = 0; names[i]; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        write_text(path, "{}");
    }
    assert_int_equal(aka_memory_list(dir, &l, &err), 0);
    assert_int_equal(l.versions.n, 4);
    assert_int_equal(l.versions.v[0], 0);
    assert_int_equal(l.versions.v[1], 1);
    assert_int_equal(l.versions.v[2], 2);
    assert_int_equal(l.versions.v[3], 10);
    assert_int_equal(aka_memory_latest(&l), 10);
    assert_true(l.has_failed_v0);
    aka_memory_listing_release(&l);

    tmp_path(path, sizeof(path), "no-such-memory-dir");
    assert_int_equal(aka_memory_list(path, &l, &err), 0);
    assert_int_equal(aka_memory_latest(&l), -1);
    assert_false(l.has_failed_v0);
    aka_memory_listing_release(&l);
}

struct mem_row {
    const char *name;
    const char *version, *status;
    const char *key, *value; /* JSON text set at a path "a" or "a.b"; value NULL deletes */
    const char *error;       /* after "<dir>/<version>.json: " */
};

static const struct mem_row mem_rows[] = {
    {"unknown status", "v2", "promoted", "status", "\"merged\"",
     "status: expected one of baseline, framework_baseline, promoted, rejected, pivot, blocked, "
     "invalid_handoff, interrupted, failed; got \"merged\""},
    {"version with leading zero", "v2", "promoted", "version", "\"v02\"",
     "version: expected \"v<N>\" (N without leading zeros); got \"v02\""},
    {"promoted without commit", "v2", "promoted", "git_commit_hash", "null",
     "git_commit_hash: expected the measured commit when status is promoted; got nothing"},
    {"rejected with a commit", "v2", "rejected", "git_commit_hash", "\"" C1 "\"",
     "git_commit_hash: expected null when status is rejected (the record describes the unchanged "
     "incumbent); got \"" C1 "\""},
    {"short commit", "v2", "promoted", "git_commit_hash", "\"abc123\"",
     "git_commit_hash: expected a 40-digit lower-case commit id or null; got \"abc123\""},
    {"promoted with FAIL gate", "v2", "promoted", "quality_gate.result", "\"FAIL\"",
     "quality_gate.result: expected PASS when status is promoted; got FAIL"},
    {"blocked with PASS gate", "v2", "blocked", "quality_gate.result", "\"PASS\"",
     "quality_gate.result: expected FAIL or TIMEOUT_FAIL when status is blocked; got PASS"},
    {"promoted, correctness unknown", "v2", "promoted", "correctness.status", "\"UNKNOWN\"",
     "correctness.status: expected PASS when status is promoted; got UNKNOWN"},
    {"promoted, incomplete", "v2", "promoted", "performance.measurement_status", "\"incomplete\"",
     "performance.measurement_status: expected \"complete\" when status is promoted; got "
     "incomplete"},
    {"complete without geomean", "v2", "interrupted", "performance.latency_us_geomean", NULL,
     "performance.latency_us_geomean: expected a number > 0 when measurement_status is complete; "
     "got nothing"},
    {"complete without shapes", "v2", "rejected", "performance.latency_us_by_shape", "{}",
     "performance.latency_us_by_shape: expected at least one shape when measurement_status is "
     "complete; got none"},
    {"shape latency zero", "v2", "promoted", "performance.latency_us_by_shape", "{\"s0\":0}",
     "performance.latency_us_by_shape.s0: expected a non-empty shape id with a number > 0; got 0"},
    {"negative latency", "v2", "promoted", "performance.latency_us", "-3",
     "performance.latency_us: expected a number > 0 or null; got -3"},
    {"bad timestamp", "v2", "promoted", "timestamp", "\"yesterday\"",
     "timestamp: expected an ISO-8601 time such as 2025-01-31T12:00:00Z; got \"yesterday\""},
    {"performance missing", "v2", "promoted", "performance", NULL,
     "performance: required field is missing"},
    {"quality gate missing", "v2", "promoted", "quality_gate", NULL,
     "quality_gate: required field is missing"},
    {"open_directions not a list", "v2", "promoted", "open_directions", "\"x\"",
     "open_directions: expected an array; got a string"},
    {"masked not a bool", "v2", "promoted", "masked", "1",
     "masked: expected true or false; got an integer"},
    {"timing method not a string", "v2", "promoted", "performance.timing_method", "7",
     "performance.timing_method: expected a string; got an integer"},
};

static void set_path(json_t *doc, const char *key, const char *value)
{
    const char *dot = strchr(key, '.');
    json_t *parent = doc;
    char head[64];
    if (dot) {
        snprintf(head, sizeof(head), "%.*s", (int)(dot - key), key);
        parent = json_object_get(doc, head);
        key = dot + 1;
    }
    if (!value) {
        json_object_del(parent, key);
        return;
    }
    json_object_set_new(parent, key, json_loads(value, JSON_DECODE_ANY, NULL));
}

/* Each invalid record is refused by the writer, which leaves the directory as it was. */
static void t_memory_invalid(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    char dir[512], want[1024];
    struct aka_memory_listing before, after;
    make_dir("mem-invalid", dir, sizeof(dir));
    json_t *v1 = memory_doc("v1", "framework_baseline");
    assert_int_equal(aka_memory_write(dir, v1, &err), 0);
    json_decref(v1);
    char path1[600];
    snprintf(path1, sizeof(path1), "%s/v1.json", dir);
    char *v1_bytes = slurp(path1);
    assert_int_equal(aka_memory_list(dir, &before, &err), 0);

    for (size_t i = 0; i < sizeof(mem_rows) / sizeof(mem_rows[0]); i++) {
        const struct mem_row *row = &mem_rows[i];
        json_t *doc = memory_doc(row->version, row->status);
        set_path(doc, row->key, row->value);
        const char *v = json_string_value(json_object_get(doc, "version"));
        snprintf(want, sizeof(want), "%s/%s.json: %s", dir, v, row->error);
        expect_error(aka_memory_write(dir, doc, &err), &err, row->name, want);
        json_decref(doc);
    }
    /* Same bad record over an existing version: the old file survives untouched. */
    json_t *doc = memory_doc("v1", "promoted");
    json_object_set_new(doc, "git_commit_hash", json_null());
    assert_int_equal(aka_memory_write(dir, doc, &err), -1);
    json_decref(doc);

    assert_int_equal(aka_memory_list(dir, &after, &err), 0);
    assert_int_equal(after.versions.n, before.versions.n);
    assert_int_equal(after.versions.v[0], 1);
    struct strvec names = STRVEC_INIT;
    assert_int_equal(aka_list_dir(dir, &names, &err), 0);
    assert_int_equal(names.n, 1); /* no temp files left behind either */
    strvec_clear(&names);
    char *again = slurp(path1);
    assert_string_equal(again, v1_bytes);
    free(again);
    free(v1_bytes);
    aka_memory_listing_release(&before);
    aka_memory_listing_release(&after);
}

/* ---- journal and handoff ------------------------------------------------------- */

static const struct aka_episode_ids ids = {3, 5, C1, "aka/e0003"};

static json_t *exp_json(const char *text)
{
    return json_loads(text, 0, NULL);
}

static void new_journal(const char *name, char *path, size_t size)
{
    struct aka_err err = AKA_ERR_INIT;
    tmp_path(path, size, name);
    assert_int_equal(aka_journal_create(path, &ids, NOW, &err), 0);
}

static void append_ok(const char *path, const char *text)
{
    struct aka_err err = AKA_ERR_INIT;
    json_t *e = exp_json(text);
    assert_non_null(e);
    if (aka_journal_append(path, e, NOW, &err) != 0)
        fail_msg("append: %s", err.msg);
    json_decref(e);
}

static void t_journal_lifecycle(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_journal j;
    char path[512];
    json_t *outcome = exp_json("{\"summary\":\"split-k wins\",\"next_directions\":[\"tma\"]}");

    new_journal("j-life.json", path, sizeof(path));
    expect_error(
        aka_journal_create(path, &ids, NOW, &err), &err, "create twice",
        strcat(strcpy((char[600]){0}, path), ": a journal already exists; refusing to replace it"));
    append_ok(path, "{\"name\":\"split-k\",\"hypothesis\":\"h\",\"decision\":\"continue\","
                    "\"wiki_refs\":[\"gpu_wiki::hopper.tma\"]}");
    append_ok(path, "{\"name\":\"tile 128\",\"timestamp\":\"2025-01-01T00:00:00+08:00\"}");
    assert_int_equal(
        aka_journal_finalize(path, AKA_JOURNAL_CANDIDATE_READY, outcome, C2, NOW, &err), 0);
    /* Finalizing again to the same state is idempotent. */
    assert_int_equal(
        aka_journal_finalize(path, AKA_JOURNAL_CANDIDATE_READY, outcome, C2, NOW, &err), 0);
    assert_int_equal(aka_journal_load(path, &j, &err), 0);
    assert_int_equal(j.state, AKA_JOURNAL_CANDIDATE_READY);
    assert_int_equal(j.experiment_count, 2);
    assert_int_equal(j.ids.episode, 3);
    assert_int_equal(j.ids.memory_version, 5);
    assert_string_equal(j.ids.episode_branch, "aka/e0003");
    assert_string_equal(j.candidate_commit, C2);
    assert_string_equal(j.outcome_summary, "split-k wins");
    assert_string_equal(j.finalized_at, NOW);
    json_t *e0 = json_array_get(json_object_get(j.json, "experiments"), 0);
    assert_string_equal(json_string_value(json_object_get(e0, "timestamp")), NOW);
    aka_journal_release(&j);
    json_decref(outcome);
}

static bool wiki_has(const char *id, void *data)
{
    return strcmp(id, (const char *)data) == 0;
}

static void t_journal_wiki_refs(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_journal j;
    char path[512];
    new_journal("j-wiki.json", path, sizeof(path));
    append_ok(path, "{\"name\":\"a\"}");
    append_ok(path, "{\"name\":\"b\",\"wiki_refs\":[\"gpu_wiki::x\",\"gpu_wiki::gone\"]}");
    assert_int_equal(aka_journal_load(path, &j, &err), 0);
    expect_error(aka_journal_check_wiki_refs("journal.json", &j, wiki_has, "gpu_wiki::x", &err),
                 &err, "wiki ref missing",
                 "journal.json: experiments[1].wiki_refs[1]: expected the id of an existing wiki "
                 "record; got \"gpu_wiki::gone\"");
    aka_journal_release(&j);
}

struct journal_op_row {
    const char *name;
    int op;           /* 0 append, 1 finalize */
    const char *json; /* experiment or outcome */
    enum aka_journal_state state;
    const char *commit;
    int prepare;       /* 0 fresh, 1 one experiment, 2 finalized as pivot */
    const char *error; /* after "<path>: " */
};

static const struct journal_op_row journal_ops[] = {
    {"append empty experiment", 0, "{}", 0, NULL, 0,
     "experiment: expected a non-empty object; got {}"},
    {"append a list", 0, "[1]", 0, NULL, 0, "experiment: expected a non-empty object; got [1]"},
    {"append bad wiki_refs", 0, "{\"name\":\"x\",\"wiki_refs\":[\"two words\"]}", 0, NULL, 0,
     "experiment: .wiki_refs[0]: expected a wiki record id (one token, as printed by aka wiki); "
     "got \"two words\""},
    {"append wiki_refs not a list", 0, "{\"name\":\"x\",\"wiki_refs\":\"gpu_wiki::a\"}", 0, NULL, 0,
     "experiment: wiki_refs: expected an array; got a string"},
    {"append after finalize", 0, "{\"name\":\"late\"}", 0, NULL, 2,
     "@: state: expected in_progress to append an experiment; got pivot"},
    {"finalize without experiments", 1, "{\"summary\":\"s\"}", AKA_JOURNAL_PIVOT, NULL, 0,
     "@: experiments: expected at least one experiment when state is pivot; got none"},
    {"finalize candidate without commit", 1, "{\"summary\":\"s\"}", AKA_JOURNAL_CANDIDATE_READY,
     NULL, 1,
     "@: candidate_commit: expected a 40-digit lower-case commit id for candidate_ready; got "
     "nothing"},
    {"finalize candidate with short commit", 1, "{\"summary\":\"s\"}", AKA_JOURNAL_CANDIDATE_READY,
     "abc", 1,
     "@: candidate_commit: expected a 40-digit lower-case commit id for candidate_ready; got "
     "\"abc\""},
    {"finalize pivot with commit", 1, "{\"summary\":\"s\"}", AKA_JOURNAL_PIVOT, C1, 1,
     "@: candidate_commit: expected none when state is pivot; got \"" C1 "\""},
    {"finalize to another state", 1, "{\"summary\":\"s\"}", AKA_JOURNAL_BLOCKED, NULL, 2,
     "@: state: the journal is already finalized as pivot; got blocked"},
    {"finalize to in_progress", 1, "{\"summary\":\"s\"}", AKA_JOURNAL_IN_PROGRESS, NULL, 1,
     "@: state: expected candidate_ready, pivot or blocked; got in_progress"},
    {"finalize blank summary", 1, "{\"summary\":\"  \"}", AKA_JOURNAL_PIVOT, NULL, 1,
     "@: outcome.summary: expected a non-empty summary; got \"  \""},
    {"finalize without summary", 1, "{\"next_directions\":[]}", AKA_JOURNAL_PIVOT, NULL, 1,
     "@: outcome.summary: required field is missing"},
    {"finalize bad next_directions", 1, "{\"summary\":\"s\",\"next_directions\":[1]}",
     AKA_JOURNAL_PIVOT, NULL, 1, "@: outcome.next_directions: expected a list of strings; got [1]"},
};

static void prepare_journal(const struct journal_op_row *row, char *path, size_t size, size_t i)
{
    struct aka_err err = AKA_ERR_INIT;
    char name[64];
    snprintf(name, sizeof(name), "j-op-%zu.json", i);
    new_journal(name, path, size);
    if (row->prepare >= 1)
        append_ok(path, "{\"name\":\"first\"}");
    if (row->prepare == 2) {
        json_t *o = exp_json("{\"summary\":\"dead end\"}");
        assert_int_equal(aka_journal_finalize(path, AKA_JOURNAL_PIVOT, o, NULL, NOW, &err), 0);
        json_decref(o);
    }
}

/* Replace a leading "@" in the expected message with the journal's path. */
static void expand(char *out, size_t size, const char *pattern, const char *path)
{
    if (pattern[0] == '@')
        snprintf(out, size, "%s%s", path, pattern + 1);
    else
        snprintf(out, size, "%s", pattern);
}

static void t_journal_ops_table(void **state)
{
    for (size_t i = 0; i < sizeof(journal_ops) / sizeof(journal_ops[0]); i++) {
        const struct journal_op_row *row = &journal_ops[i];
        struct aka_err err = AKA_ERR_INIT;
        char path[512], want[1024];
        prepare_journal(row, path, sizeof(path), i);
        char *before = slurp(path);
        json_t *j = json_loads(row->json, 0, NULL);
        assert_non_null(j);
        int rc = row->op == 0 ? aka_journal_append(path, j, NOW, &err)
                              : aka_journal_finalize(path, row->state, j, row->commit, NOW, &err);
        expand(want, sizeof(want), row->error, path);
        expect_error(rc, &err, row->name, want);
        char *after = slurp(path);
        assert_string_equal(before, after); /* a refused operation writes nothing */
        free(before);
        free(after);
        json_decref(j);
    }
}

struct journal_doc_row {
    const char *name;
    const char *key, *value; /* JSON text; NULL deletes */
    const char *error;       /* after "journal.json: " */
};

static const struct journal_doc_row journal_docs[] = {
    {"schema 2", "schema_version", "2", "schema_version: expected 1; got 2"},
    {"episode string", "episode", "\"3\"", "episode: expected an integer; got a string"},
    {"negative memory_version", "memory_version", "-1",
     "memory_version: expected an integer >= 0; got -1"},
    {"bad base commit", "base_commit", "\"HEAD\"",
     "base_commit: expected a 40-digit lower-case commit id; got \"HEAD\""},
    {"empty branch", "episode_branch", "\"\"", "episode_branch: expected a branch name; got \"\""},
    {"unknown state", "state", "\"done\"",
     "state: expected one of in_progress, candidate_ready, pivot, blocked; got \"done\""},
    {"experiments missing", "experiments", NULL, "experiments: required field is missing"},
    {"experiment not an object", "experiments", "[{\"a\":1},2]",
     "experiments[1]: expected a non-empty object; got 2"},
    {"in progress but finalized_at", "finalized_at", "\"" NOW "\"",
     "finalized_at: expected null while the journal is in_progress; got a value"},
    {"in progress with outcome", "outcome", "{\"summary\":\"s\"}",
     "outcome: expected null while the journal is in_progress; got a value"},
    {"finalized without finalized_at", "state", "\"blocked\"",
     "finalized_at: expected a time when state is blocked; got nothing"},
    {"bad created_at", "created_at", "\"2025-13\"",
     "created_at: expected an ISO-8601 time such as 2025-01-31T12:00:00Z; got \"2025-13\""},
};

static void t_journal_docs_table(void **state)
{
    char path[512], want[1024];
    struct aka_err err = AKA_ERR_INIT;
    new_journal("j-doc.json", path, sizeof(path));
    json_t *good = NULL;
    assert_int_equal(aka_json_load_file(path, &good, &err), 0);
    for (size_t i = 0; i < sizeof(journal_docs) / sizeof(journal_docs[0]); i++) {
        const struct journal_doc_row *row = &journal_docs[i];
        struct aka_journal j;
        json_t *doc = json_deep_copy(good);
        set_path(doc, row->key, row->value);
        snprintf(want, sizeof(want), "journal.json: %s", row->error);
        expect_error(aka_journal_from_json("journal.json", doc, &j, &err), &err, row->name, want);
        assert_null(j.json);
        json_decref(doc);
    }
    json_decref(good);
}

struct handoff_row {
    const char *name;
    const char *text;  /* NULL: no file */
    const char *error; /* after "<path>: "; NULL: valid */
};

static const struct handoff_row handoff_rows[] = {
    {"candidate", "{\"status\":\"candidate_ready\",\"candidate_commit\":\"" C1 "\"}", NULL},
    {"pivot, trimmed, null commit", "{\"status\":\" pivot\\n\",\"candidate_commit\":null}", NULL},
    {"blocked with checkpoint",
     "{\"status\":\"blocked\",\"candidate_commit\":\"\",\"last_trial_commit\":\"" C2 "\"}", NULL},
    {"missing", NULL, "no handoff was written (the file does not exist)"},
    {"empty", "  \n", "the handoff file is empty"},
    {"invalid JSON", "{\n  \"status\": pivot\n}", NULL /* checked by prefix below */},
    {"not an object", "[\"pivot\"]", "expected an object; got an array"},
    {"status missing", "{\"candidate_commit\":\"" C1 "\"}", "status: required field is missing"},
    {"bad status", "{\"status\":\"done\"}",
     "status: expected one of candidate_ready, pivot, blocked; got \"done\""},
    {"candidate without commit", "{\"status\":\"candidate_ready\"}",
     "candidate_commit: expected a 40-digit lower-case commit id when status is candidate_ready; "
     "got nothing"},
    {"candidate short commit", "{\"status\":\"candidate_ready\",\"candidate_commit\":\"abc\"}",
     "candidate_commit: expected a 40-digit lower-case commit id; got \"abc\""},
    {"pivot with commit", "{\"status\":\"pivot\",\"candidate_commit\":\"" C1 "\"}",
     "candidate_commit: expected none when status is pivot; got \"" C1 "\""},
    {"unknown key", "{\"status\":\"pivot\",\"notes\":\"x\"}",
     "notes: unknown field (known fields: status, candidate_commit, last_trial_commit)"},
};

static void t_handoff_table(void **state)
{
    for (size_t i = 0; i < sizeof(handoff_rows) / sizeof(handoff_rows[0]); i++) {
        const struct handoff_row *row = &handoff_rows[i];
        struct aka_err err = AKA_ERR_INIT;
        struct aka_handoff h;
        char path[512], want[1024], name[64];
        snprintf(name, sizeof(name), "handoff-%zu.json", i);
        tmp_path(path, sizeof(path), name);
        if (row->text)
            write_text(path, row->text);
        int rc = aka_handoff_load(path, &h, &err);
        if (!strcmp(row->name, "invalid JSON")) {
            snprintf(want, sizeof(want), "%s:2:", path);
            assert_int_equal(rc, -1);
            assert_true(strncmp(err.msg, want, strlen(want)) == 0);
            assert_non_null(strstr(err.msg, "invalid JSON"));
            continue;
        }
        if (!row->error) {
            if (rc != 0)
                fail_msg("%s: unexpected error: %s", row->name, err.msg);
            continue;
        }
        snprintf(want, sizeof(want), "%s: %s", path, row->error);
        expect_error(rc, &err, row->name, want);
    }
}

/* Build a finalized journal at path; state and commit as given. */
static void finalized_journal(const char *name, enum aka_journal_state st, const char *commit,
                              char *path, size_t size)
{
    struct aka_err err = AKA_ERR_INIT;
    new_journal(name, path, size);
    append_ok(path, "{\"name\":\"only\"}");
    json_t *o = exp_json("{\"summary\":\"done\",\"next_directions\":[]}");
    assert_int_equal(aka_journal_finalize(path, st, o, commit, NOW, &err), 0);
    json_decref(o);
}

static void t_handoff_terminal(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_handoff h = {AKA_HANDOFF_CANDIDATE_READY, C2, ""}, back;
    struct aka_journal j;
    char jpath[512], hpath[512], want[1200];

    finalized_journal("t-journal.json", AKA_JOURNAL_CANDIDATE_READY, C2, jpath, sizeof(jpath));
    tmp_path(hpath, sizeof(hpath), "t-handoff.json");
    assert_int_equal(aka_handoff_submit(hpath, jpath, &h, &ids, &err), 0);
    assert_int_equal(aka_handoff_load(hpath, &back, &err), 0);
    assert_int_equal(back.status, AKA_HANDOFF_CANDIDATE_READY);
    assert_string_equal(back.candidate_commit, C2);
    assert_int_equal(remove(hpath), 0);

    /* Commit mismatch: refused, nothing written. */
    struct aka_handoff other = {AKA_HANDOFF_CANDIDATE_READY, C1, ""};
    snprintf(want, sizeof(want),
             "%s: candidate_commit: expected " C2 " (the candidate_commit in %s); got " C1, hpath,
             jpath);
    expect_error(aka_handoff_submit(hpath, jpath, &other, &ids, &err), &err, "commit mismatch",
                 want);
    assert_false(aka_exists(hpath));

    /* Status mismatch. */
    struct aka_handoff pivot = {AKA_HANDOFF_PIVOT, "", ""};
    snprintf(want, sizeof(want),
             "%s: state: expected pivot (the handoff's status; finalize the journal first); got "
             "candidate_ready",
             jpath);
    expect_error(aka_handoff_submit(hpath, jpath, &pivot, &ids, &err), &err, "status mismatch",
                 want);
    assert_false(aka_exists(hpath));

    /* Another episode's journal. */
    struct aka_episode_ids e4 = {4, 6, C1, "aka/e0004"};
    snprintf(want, sizeof(want), "%s: episode: expected 4 (this episode); got 3", jpath);
    expect_error(aka_handoff_submit(hpath, jpath, &h, &e4, &err), &err, "episode", want);
    struct aka_episode_ids base = {3, 5, C2, "aka/e0003"};
    snprintf(want, sizeof(want), "%s: base_commit: expected " C2 " (this episode's base); got " C1,
             jpath);
    expect_error(aka_handoff_submit(hpath, jpath, &h, &base, &err), &err, "base", want);
    struct aka_episode_ids br = {3, 5, C1, "aka/other"};
    snprintf(want, sizeof(want),
             "%s: episode_branch: expected \"aka/other\" (this episode's branch); got "
             "\"aka/e0003\"",
             jpath);
    expect_error(aka_handoff_submit(hpath, jpath, &h, &br, &err), &err, "branch", want);
    assert_false(aka_exists(hpath));

    /* A journal still in progress. */
    new_journal("t-open.json", jpath, sizeof(jpath));
    append_ok(jpath, "{\"name\":\"x\"}");
    snprintf(want, sizeof(want),
             "%s: state: expected pivot (the handoff's status; finalize the journal first); got "
             "in_progress",
             jpath);
    expect_error(aka_handoff_submit(hpath, jpath, &pivot, &ids, &err), &err, "open journal", want);
    assert_false(aka_exists(hpath));

    /* A struct that breaks the handoff rules is refused before the journal is read. */
    struct aka_handoff bad = {AKA_HANDOFF_PIVOT, C1, ""};
    snprintf(want, sizeof(want),
             "%s: candidate_commit: expected none when status is pivot; got "
             "\"" C1 "\"",
             hpath);
    expect_error(aka_handoff_submit(hpath, jpath, &bad, &ids, &err), &err, "bad struct", want);

    /* Blocked, matched, with the identity check skipped. */
    finalized_journal("t-blocked.json", AKA_JOURNAL_BLOCKED, NULL, jpath, sizeof(jpath));
    assert_int_equal(aka_journal_load(jpath, &j, &err), 0);
    struct aka_handoff blocked = {AKA_HANDOFF_BLOCKED, "", ""};
    assert_int_equal(aka_handoff_check_journal("h", &blocked, "j", &j, NULL, &err), 0);
    aka_journal_release(&j);
}

static void t_helpers(void **state)
{
    assert_true(aka_record_is_timestamp("2025-01-31T12:00:00Z"));
    assert_true(aka_record_is_timestamp("2025-01-31T12:00:00.123456+00:00"));
    assert_false(aka_record_is_timestamp("2025-01-31 12:00:00Z"));
    assert_false(aka_record_is_timestamp("2025-01-31T12:00:00"));
    assert_false(aka_record_is_timestamp("2025-01-31T12:00:00.Z"));
    assert_false(aka_record_is_timestamp("2025-01-31T12:00:00+0000"));
    char now[AKA_TIMESTAMP_MAX];
    aka_record_now(now);
    assert_true(aka_record_is_timestamp(now));
    assert_true(aka_record_is_hex(C1, 40));
    assert_false(aka_record_is_hex("ABCDEF", 6));
    assert_false(aka_record_is_hex(C1, 64));
    assert_false(aka_record_is_hex(NULL, 0));
}

/* ---- what a campaign learns (memory_digest.c) ------------------------------------------- */

/* A journal of 30 experiments with 5,000-byte fields and 5 directions: compacted, bounded. */
static json_t *big_journal(void)
{
    char *big = malloc(5001);
    memset(big, 'x', 5000);
    big[5000] = '\0';
    json_t *exps = json_array();
    for (int i = 0; i < 30; i++)
        json_array_append_new(exps, json_pack("{s:s, s:s, s:s, s:i, s:[s]}", "name", big, "result",
                                              i % 2 ? "reverted: slower" : "kept", "decision",
                                              i % 2 ? "reject" : "keep", "extra", i, "wiki_refs",
                                              "nvidia.h200.hbm-bandwidth"));
    json_t *j = json_pack("{s:o, s:{s:s, s:[s,s,s,s,s]}}", "experiments", exps, "outcome",
                          "summary", "s", "next_directions", "a", "b", "c", "d", big);
    free(big);
    return j;
}

static void t_memory_learned(void **state)
{
    (void)state;
    json_t *j = big_journal(), *v;
    json_t *ex = aka_memory_experience(j);
    size_t i;
    assert_int_equal(json_integer_value(json_object_get(ex, "experiment_count")), 30);
    json_t *list = json_object_get(ex, "experiments");
    assert_int_equal(json_array_size(list), AKA_MEMORY_MAX_EXPERIMENTS); /* the latest ones */
    assert_int_equal(json_integer_value(json_object_get(json_array_get(list, 0), "index")),
                     30 - AKA_MEMORY_MAX_EXPERIMENTS + 1);
    json_array_foreach(list, i, v)
    {
        const char *name = json_string_value(json_object_get(v, "name"));
        assert_int_equal(strlen(name), AKA_MEMORY_FIELD_CAP + strlen(" [truncated]"));
        assert_non_null(strstr(json_string_value(json_object_get(v, "details")), "\"extra\""));
    }
    json_t *dirs = aka_memory_open_directions(j);
    assert_int_equal(json_array_size(dirs), AKA_MEMORY_MAX_DIRECTIONS);
    json_t *cites = aka_memory_wiki_citations(j);
    assert_int_equal(json_array_size(cites), 30);
    assert_string_equal(json_string_value(json_object_get(json_array_get(cites, 1), "disposition")),
                        "reject");
    json_t *pe = aka_memory_profile_evidence(j, NULL);
    assert_string_equal(json_string_value(json_object_get(pe, "bottleneck_type")), "not_profiled");
    /* Ten records with all of that: the digest stays within its cap, newest first. */
    json_t *recs[10];
    for (int r = 0; r < 10; r++) {
        recs[r] = json_pack("{s:s, s:s, s:{s:i, s:s}, s:O, s:O}", "version", "v1", "status",
                            "pivot", "episode", "number", r + 1, "kind", "fast", "experience", ex,
                            "open_directions", dirs);
        json_object_set_new(recs[r], "version", json_sprintf("v%d", r + 1));
    }
    struct strbuf out = STRBUF_INIT;
    aka_memory_digest((const json_t *const *)recs, 10, AKA_MEMORY_DIGEST_CAP, &out);
    assert_true(out.len <= AKA_MEMORY_DIGEST_CAP + 80);
    assert_non_null(strstr(out.buf, "- v10 (episode 10, fast): pivot"));
    assert_non_null(strstr(out.buf, "older record(s) left out"));
    assert_non_null(strstr(out.buf, "  dead end: "));
    for (char *line = out.buf; line && *line;
         line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        size_t n = strchr(line, '\n') ? (size_t)(strchr(line, '\n') - line) : strlen(line);
        assert_true(n <= AKA_MEMORY_DIGEST_LINE + 16);
    }
    strbuf_release(&out);
    for (int r = 0; r < 10; r++)
        json_decref(recs[r]);
    json_decref(j);
    json_decref(ex);
    json_decref(dirs);
    json_decref(cites);
    json_decref(pe);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_result_valid),           cmocka_unit_test(t_result_failure_objects),
        cmocka_unit_test(t_result_missing_is_null), cmocka_unit_test(t_result_table),
        cmocka_unit_test(t_result_writer),          cmocka_unit_test(t_memory_round_trip),
        cmocka_unit_test(t_memory_name_mismatch),   cmocka_unit_test(t_memory_listing),
        cmocka_unit_test(t_memory_invalid),         cmocka_unit_test(t_journal_lifecycle),
        cmocka_unit_test(t_journal_wiki_refs),      cmocka_unit_test(t_journal_ops_table),
        cmocka_unit_test(t_journal_docs_table),     cmocka_unit_test(t_handoff_table),
        cmocka_unit_test(t_handoff_terminal),       cmocka_unit_test(t_helpers),
        cmocka_unit_test(t_memory_learned),
    };
    return cmocka_run_group_tests(tests, aka_scratch_setup, aka_scratch_teardown);
}
