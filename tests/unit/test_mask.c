/*
 * test_mask.c — masking an evaluator result for generalized production (evaluator/mask.c):
 * a native result that names private shape ids and sizes everywhere comes out with opaque
 * case-<n> labels, no private id and no private size, latencies kept.
 */
#include "aka_test.h"

#include "base/json.h"
#include "contracts/records.h"
#include "evaluator/evaluator.h"

#include <string.h>

static const char operator_json[] =
    "{\"schema\": \"aka.native.v1\", \"name\": \"t\", \"language\": \"c\",\n"
    " \"abi\": {\"header\": \"aka_native_abi.h\", \"version\": 1},\n"
    " \"dims\": [\"N\"],\n"
    " \"tensors\": [{\"name\": \"x\", \"role\": \"input\", \"dtype\": \"float32\", \"shape\": "
    "[\"N\"]},\n"
    "             {\"name\": \"z\", \"role\": \"output\", \"dtype\": \"float32\", \"shape\": "
    "[\"N\"]}],\n"
    " \"shapes\": [{\"id\": \"n1\", \"dims\": {\"N\": 7919}},\n"
    "            {\"id\": \"n10\", \"dims\": {\"N\": 104729}}],\n"
    " \"tolerance\": {\"atol\": 1e-5, \"rtol\": 1e-5}}\n";

/* A failing result as the native harness writes it, private ids and sizes all over. */
static const char result_json[] =
    "{\"all_pass\": false, \"total\": 2, \"passed\": 1,"
    " \"failures\": [\"sid=n10: seed 0: output 'z'[0] = 1, expected 2; 104729 of 104729 "
    "elements outside atol\"],"
    " \"latency_us_by_shape\": {\"n1\": 3.5, \"n10\": 40.25},"
    " \"latency_us_geomean\": 11.87, \"max_abs_err\": 1.0, \"max_rel_err\": 0.5,"
    " \"timing\": {\"method\": \"cpu_monotonic\", \"warmup\": 3, \"reps\": 5, \"l2_flush\": false,"
    "   \"cv_by_shape\": {\"n1\": 0.01, \"n10\": 0.02}},"
    " \"actionable_diagnostics\": [{\"stage\": \"correctness\", \"shape_id\": \"n10\","
    "   \"message\": \"n10: 104729 elements, first bad index 7918\"}],"
    " \"judge\": {\"checked_timed_runs_by_shape\": {\"n1\": 5, \"n10\": 5},"
    "   \"note\": \"shape n10 has N=104729\"}}";

static void load_op(struct strbuf *dir, struct aka_operator *op)
{
    struct strbuf p = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(aka_make_temp_dir(NULL, "aka-test-mask", dir, &err), 0);
    aka_path_join(&p, dir->buf, "operator.json");
    assert_int_equal(aka_write_file_plain(p.buf, operator_json, strlen(operator_json), 0644, &err),
                     0);
    aka_path_join(&p, dir->buf, "reference.c");
    assert_int_equal(aka_write_file_plain(p.buf, "int r;\n", 7, 0644, &err), 0);
    assert_int_equal(aka_operator_load(dir->buf, op, &err), 0);
    strbuf_release(&p);
}

static void t_mask_result(void **state)
{
    struct strbuf dir = STRBUF_INIT, text = STRBUF_INIT;
    struct aka_operator op;
    struct aka_result r;
    struct aka_err err = AKA_ERR_INIT;
    json_t *doc = NULL;
    (void)state;
    load_op(&dir, &op);
    assert_int_equal(aka_json_load_buf("result", result_json, strlen(result_json), &doc, &err), 0);
    assert_int_equal(aka_result_from_json("result", doc, &r, &err), 0);
    aka_eval_mask_result(&op, &r);
    assert_true(r.masked);
    assert_int_equal(aka_result_validate("masked", &r, &err), 0);
    /* Latencies kept, under the labels of the shapes' positions. */
    assert_true(aka_shape_map_get(&r.latency_us_by_shape, "case-1") == 3.5);
    assert_true(aka_shape_map_get(&r.latency_us_by_shape, "case-2") == 40.25);
    assert_true(aka_shape_map_get(&r.timing.cv_by_shape, "case-2") == 0.02);
    assert_string_equal(r.diagnostics.v[0].shape_id, "case-2");
    json_t *out = aka_result_to_json(&r);
    aka_json_dump_compact(out, &text);
    /* No private id, no private size, no error magnitude of a failing result. */
    assert_null(strstr(text.buf, "n1\""));
    assert_null(strstr(text.buf, "n10"));
    assert_null(strstr(text.buf, "7919"));
    assert_null(strstr(text.buf, "7918"));
    assert_null(strstr(text.buf, "104729"));
    assert_true(json_is_null(json_object_get(out, "max_abs_err")));
    assert_true(json_is_null(json_object_get(out, "max_rel_err")));
    assert_non_null(strstr(text.buf, "\"hidden_case_details\""));
    assert_non_null(strstr(text.buf, "\"checked_timed_runs_by_shape\":{\"case-1\":5"));
    json_decref(out);
    json_decref(doc);
    aka_result_release(&r);
    aka_operator_release(&op);
    aka_remove_tree(dir.buf, &err);
    strbuf_release(&dir);
    strbuf_release(&text);
}

static void t_mask_text_and_ids(void **state)
{
    struct strbuf dir = STRBUF_INIT, out = STRBUF_INIT;
    struct aka_operator op;
    struct aka_err err = AKA_ERR_INIT;
    char id[32];
    (void)state;
    load_op(&dir, &op);
    /* The longest id wins: n10 is never read as n1 followed by "0". */
    aka_eval_mask_text(&op, "n10 then n1: 104729 vs 7919.5", &out);
    assert_string_equal(out.buf, "case-2 then case-1: # vs #.#");
    aka_eval_mask_id(&op, "n1", id, sizeof(id));
    assert_string_equal(id, "case-1");
    aka_eval_mask_id(&op, "nope", id, sizeof(id));
    assert_string_equal(id, "case-?");
    aka_operator_release(&op);
    aka_remove_tree(dir.buf, &err);
    strbuf_release(&dir);
    strbuf_release(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_mask_result),
        cmocka_unit_test(t_mask_text_and_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
