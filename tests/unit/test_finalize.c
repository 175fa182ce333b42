/*
 * test_finalize.c — campaign finalization on hand-made workspaces: the SOL
 * submission <workspace>/solution.json (the incumbent kernel inlined, read
 * back by the contracts' SOL reader), the summary numbers for every layout,
 * and the failures (missing kernel, unreadable definition, no campaign.json)
 * that write nothing. The workspaces are committed as a campaign's are:
 * finalization reads the incumbent's record and kernel from HEAD only.
 */
#include "aka_test.h"

#include "base/fs.h"
#include "base/json.h"
#include "bootstrap/bootstrap.h"
#include "git/git.h"
#include "optimize/optimize.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define COMMIT "0123456789abcdef0123456789abcdef01234567"
#define KERNEL                                                                                     \
    "import torch\n\n\ndef run(q, cos, sin, out):\n    out.copy_(q)  # \"quoted\" \\ text\n"

static void path_in(char *out, size_t n, const char *ws, const char *rel)
{
    snprintf(out, n, "%s/%s", ws, rel);
}

static void put(const char *ws, const char *rel, const char *text)
{
    char p[1024];
    struct aka_err err = AKA_ERR_INIT;
    path_in(p, sizeof(p), ws, rel);
    assert_int_equal(aka_write_file_atomic(p, text, strlen(text), 0644, &err), 0);
}

static void copy_rope(const char *ws, const char *name)
{
    char from[1024], to[1024];
    struct aka_err err = AKA_ERR_INIT;
    snprintf(from, sizeof(from), "%s/examples/ops/rope/%s", AKA_SOURCE_DIR, name);
    path_in(to, sizeof(to), ws, name);
    assert_int_equal(aka_copy_file(from, to, &err), 0);
}

static void record(const char *ws, long version, enum aka_memory_status st, double latency)
{
    char dir[1024];
    struct aka_err err = AKA_ERR_INIT;
    struct aka_result r = {.all_pass = st != AKA_MEM_REJECTED,
                           .latency_us_geomean = latency,
                           .latency_us_arith_mean = latency,
                           .speedup_vs_ref_geomean = 1.0,
                           .performance_score = 1.0,
                           .max_abs_err = NAN,
                           .max_rel_err = NAN};
    bool moves = st != AKA_MEM_REJECTED;
    aka_shape_map_set(&r.latency_us_by_shape, "7d0c5a2e-0001-4a6b-9e41-000000000001", latency);
    json_t *doc = aka_memory_doc_from_result(version, st, &r, moves ? COMMIT : NULL, "test", "t");
    path_in(dir, sizeof(dir), ws, "memory");
    if (aka_memory_write(dir, doc, &err) < 0)
        fail_msg("%s", err.msg);
    json_decref(doc);
    aka_shape_map_release(&r.latency_us_by_shape);
}

/* Commit everything but supervisor state (a hand-made workspace's history). */
static void commit_all(const char *ws)
{
    struct aka_git g;
    struct aka_err err = AKA_ERR_INIT;
    char p[1024];
    path_in(p, sizeof(p), ws, ".git");
    if (!aka_exists(p)) {
        assert_int_equal(aka_git_init(ws, "main", &err), 0);
        put(ws, ".gitignore", ".aka/\n");
    }
    aka_git_open(&g, ws);
    assert_int_equal(aka_git_add(&g, NULL, &err), 0);
    assert_int_equal(aka_git_commit(&g, "test workspace", NULL, &err), 0);
    aka_git_close(&g);
}

/* The platform make_ws writes into campaign.json. */
static const char *ws_platform = "nvidia/b200";

/* A workspace as a campaign leaves it: campaign.json, inputs, kernel, V0 and V1 records. */
static void make_ws(char *ws, size_t n, const char *name, const char *layout)
{
    char p[1024];
    struct aka_err err = AKA_ERR_INIT;
    snprintf(ws, n, "%s/%s", aka_scratch_dir(), name);
    path_in(p, sizeof(p), ws, ".aka");
    assert_int_equal(aka_mkdir_p(p, 0755, &err), 0);
    path_in(p, sizeof(p), ws, "memory");
    assert_int_equal(aka_mkdir_p(p, 0755, &err), 0);
    snprintf(p, sizeof(p),
             "{\"schema\": \"aka.campaign.v1\", \"layout\": \"%s\", \"framework\": \"%s\", "
             "\"platform\": \"%s\", \"kernel\": \"%s\", \"op_dir\": \"%s/no-such-op\"}",
             layout, strcmp(layout, "sol") == 0 ? "Triton" : "C", ws_platform,
             strcmp(layout, "sol") == 0 ? "kernel.py" : "kernel.c", aka_scratch_dir());
    put(ws, ".aka/campaign.json", p);
    if (strcmp(layout, "sol") == 0) {
        copy_rope(ws, "definition.json");
        copy_rope(ws, "workload.jsonl");
    }
    put(ws, strcmp(layout, "sol") == 0 ? "kernel.py" : "kernel.c", KERNEL);
    record(ws, 0, AKA_MEM_BASELINE, 20.0);
    record(ws, 1, AKA_MEM_FRAMEWORK_BASELINE, 10.0);
    record(ws, 2, AKA_MEM_REJECTED, 5.0); /* not the incumbent: never promoted */
    commit_all(ws);
}

static json_t *load(const char *ws, const char *rel)
{
    char p[1024];
    json_t *doc = NULL;
    struct aka_err err = AKA_ERR_INIT;
    path_in(p, sizeof(p), ws, rel);
    assert_int_equal(aka_json_load_file(p, &doc, &err), 0);
    return doc;
}

static bool exists_in(const char *ws, const char *rel)
{
    char p[1024];
    path_in(p, sizeof(p), ws, rel);
    return aka_exists(p);
}

/* SOL's target_hardware names B200 for a B200 only: a GB200 (which contains "b200") is LOCAL. */
static void sol_target_hardware_exact(void **state)
{
    static const struct {
        const char *platform;
        size_t n;
    } cases[] = {{"B200", 2}, {"nvidia/gb200", 1}, {"GB200", 1}, {"H20", 1}};
    char ws[512], name[64];
    struct aka_finalize_summary s;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ws_platform = cases[i].platform;
        snprintf(name, sizeof(name), "sol-hw-%zu", i);
        make_ws(ws, sizeof(ws), name, "sol");
        assert_int_equal(aka_optimize_finalize(ws, &s, &err), 0);
        json_t *doc = load(ws, "solution.json");
        json_t *hw = json_object_get(json_object_get(doc, "spec"), "target_hardware");
        if (json_array_size(hw) != cases[i].n)
            fail_msg("%s: %zu target_hardware entries", cases[i].platform, json_array_size(hw));
        json_decref(doc);
    }
    ws_platform = "nvidia/b200";
}

static void sol_submission_written(void **state)
{
    char ws[512], line[8192];
    struct aka_finalize_summary s;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    make_ws(ws, sizeof(ws), "sol-ok", "sol");
    assert_int_equal(aka_optimize_finalize(ws, &s, &err), 0);
    assert_int_equal(s.version, 1);
    assert_string_equal(s.status, "framework_baseline");
    assert_true(s.speedup_vs_v0 > 1.999 && s.speedup_vs_v0 < 2.001);
    assert_true(s.submission_written);
    json_t *doc = load(ws, "solution.json");
    assert_string_equal(json_string_value(json_object_get(doc, "definition")), "rope_neox_h8_d128");
    assert_string_equal(json_string_value(json_object_get(doc, "name")),
                        "rope_neox_h8_d128_v1_triton");
    json_t *spec = json_object_get(doc, "spec");
    assert_string_equal(json_string_value(json_array_get(json_object_get(spec, "languages"), 0)),
                        "triton");
    assert_int_equal(json_array_size(json_object_get(spec, "target_hardware")), 2);
    assert_string_equal(json_string_value(json_object_get(spec, "entry_point")), "kernel.py::run");
    assert_true(json_is_true(json_object_get(spec, "destination_passing_style")));
    json_t *src = json_array_get(json_object_get(doc, "sources"), 0);
    assert_string_equal(json_string_value(json_object_get(src, "path")), "kernel.py");
    assert_string_equal(json_string_value(json_object_get(src, "content")), KERNEL);
    json_decref(doc);
    assert_false(exists_in(ws, ".aka/submission")); /* the staging directory is gone */
    aka_finalize_summary_line(&s, line, sizeof(line));
    assert_non_null(strstr(line, "final: incumbent v1 (framework_baseline), latency 10.000 us, "
                                 "2.00x vs V0 (20.000 us); submission written: "));
}

/* With V0 as the incumbent, the submission is the value-returning reference. */
static void sol_v0_incumbent(void **state)
{
    char ws[512], p[1024];
    struct aka_finalize_summary s;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    make_ws(ws, sizeof(ws), "sol-v0", "sol");
    path_in(p, sizeof(p), ws, "memory/v1.json");
    assert_int_equal(aka_remove_tree(p, &err), 0);
    path_in(p, sizeof(p), ws, "memory/v2.json");
    assert_int_equal(aka_remove_tree(p, &err), 0);
    commit_all(ws);
    assert_int_equal(aka_optimize_finalize(ws, &s, &err), 0);
    assert_int_equal(s.version, 0);
    json_t *doc = load(ws, "solution.json");
    json_t *spec = json_object_get(doc, "spec");
    assert_true(json_is_false(json_object_get(spec, "destination_passing_style")));
    assert_string_equal(json_string_value(json_object_get(doc, "name")),
                        "rope_neox_h8_d128_v0_triton");
    json_decref(doc);
}

static void sol_missing_kernel(void **state)
{
    char ws[512], p[1024];
    struct aka_finalize_summary s;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    make_ws(ws, sizeof(ws), "sol-nokernel", "sol");
    path_in(p, sizeof(p), ws, "kernel.py");
    assert_int_equal(aka_remove_tree(p, &err), 0);
    commit_all(ws);
    assert_int_equal(aka_optimize_finalize(ws, &s, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_FAILED);
    assert_non_null(strstr(err.msg, "kernel.py: the incumbent kernel is missing"));
    assert_false(s.submission_written);
    assert_false(exists_in(ws, "solution.json"));
}

static void sol_unreadable_definition(void **state)
{
    char ws[512];
    struct aka_finalize_summary s;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    make_ws(ws, sizeof(ws), "sol-baddef", "sol");
    put(ws, "definition.json", "{\"name\": ");
    assert_int_equal(aka_optimize_finalize(ws, &s, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "definition.json"));
    assert_false(exists_in(ws, "solution.json"));
    assert_false(exists_in(ws, ".aka/submission"));
}

/* A solution the contracts' SOL reader refuses (a Python-family entry point in a .c
 * file) is not put in place: the read-back is a real validation. */
static void sol_not_validated(void **state)
{
    char ws[512], p[1024];
    struct aka_finalize_summary s;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    make_ws(ws, sizeof(ws), "sol-refused", "sol");
    snprintf(p, sizeof(p),
             "{\"layout\": \"sol\", \"framework\": \"Triton\", \"platform\": \"nvidia/h200\", "
             "\"kernel\": \"kernel.c\"}");
    put(ws, ".aka/campaign.json", p);
    put(ws, "kernel.c", KERNEL);
    commit_all(ws);
    assert_int_equal(aka_optimize_finalize(ws, &s, &err), -1);
    assert_non_null(strstr(err.msg, "spec.entry_point: expected a .py file"));
    assert_false(exists_in(ws, "solution.json"));
    assert_false(exists_in(ws, ".aka/submission"));
}

static void native_summary_only(void **state)
{
    char ws[512], line[8192];
    struct aka_finalize_summary s;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    make_ws(ws, sizeof(ws), "native", "native");
    assert_int_equal(aka_optimize_finalize(ws, &s, &err), 0);
    assert_int_equal(s.version, 1);
    assert_false(s.submission_written);
    assert_false(exists_in(ws, "solution.json"));
    aka_finalize_summary_line(&s, line, sizeof(line));
    assert_string_equal(line, "final: incumbent v1 (framework_baseline), latency 10.000 us, "
                              "2.00x vs V0 (20.000 us)");
}

static void no_campaign_json(void **state)
{
    char ws[512], p[1024];
    struct aka_finalize_summary s;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    make_ws(ws, sizeof(ws), "nocampaign", "sol");
    path_in(p, sizeof(p), ws, ".aka/campaign.json");
    assert_int_equal(aka_remove_tree(p, &err), 0);
    assert_int_equal(aka_optimize_finalize(ws, &s, &err), -1);
    assert_non_null(strstr(err.msg, "campaign.json"));
    assert_false(exists_in(ws, "solution.json"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sol_submission_written),    cmocka_unit_test(sol_target_hardware_exact),
        cmocka_unit_test(sol_v0_incumbent),          cmocka_unit_test(sol_missing_kernel),
        cmocka_unit_test(sol_unreadable_definition), cmocka_unit_test(sol_not_validated),
        cmocka_unit_test(native_summary_only),       cmocka_unit_test(no_campaign_json),
    };
    return cmocka_run_group_tests(tests, aka_scratch_setup, aka_scratch_teardown);
}
