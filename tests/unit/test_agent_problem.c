/*
 * test_agent_problem.c — the public problem of a generalized campaign
 * (contracts/agent_problem.c): a valid agent_problem.json gives the public operator
 * (the development cases as shapes, per-shape params from the cases, nothing private),
 * and each malformed one is exit code 2 naming the file, the field and what was expected.
 */
#include "aka_test.h"

#include "base/json.h"
#include "contracts/operator.h"

#include <stdlib.h>
#include <string.h>

static const char operator_json[] =
    "{\"schema\": \"aka.native.v1\", \"name\": \"t\", \"language\": \"c\",\n"
    " \"abi\": {\"header\": \"aka_native_abi.h\", \"version\": 1},\n"
    " \"dims\": [\"N\"],\n"
    " \"tensors\": [{\"name\": \"x\", \"role\": \"input\", \"dtype\": \"float32\", \"shape\": "
    "[\"N\"]},\n"
    "             {\"name\": \"y\", \"role\": \"output\", \"dtype\": \"float32\", \"shape\": "
    "[\"N/2\"]}],\n"
    " \"params\": [{\"name\": \"alpha\", \"type\": \"float\", \"per_shape\": {\"s1\": 0.5, "
    "\"s2\": 1.5}},\n"
    "            {\"name\": \"k\", \"type\": \"int\", \"value\": 3}],\n"
    " \"shapes\": [{\"id\": \"s1\", \"dims\": {\"N\": 8}},\n"
    "            {\"id\": \"s2\", \"dims\": {\"N\": 7918}, \"description\": \"private\"}],\n"
    " \"tolerance\": {\"atol\": 1e-5, \"rtol\": 1e-5}}\n";

#define HEAD "{\"schema_version\": \"aka.agent_problem.v1\", \"objective\": \"o\", "
#define DEV                                                                                        \
    "\"development_cases\": [{\"name\": \"d1\", \"dims\": {\"N\": 64}, \"params\": {\"alpha\": "   \
    "2}}]"

static void write_text(const char *dir, const char *name, const char *text)
{
    struct strbuf p = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(&p, dir, name);
    assert_int_equal(aka_write_file_plain(p.buf, text, strlen(text), 0644, &err), 0);
    strbuf_release(&p);
}

/* A native operator in a fresh directory with this agent_problem.json (NULL: none). */
static void load(const char *problem, struct strbuf *dir, struct aka_operator *op)
{
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(aka_make_temp_dir(NULL, "aka-test-problem", dir, &err), 0);
    write_text(dir->buf, "operator.json", operator_json);
    write_text(dir->buf, "reference.c", "int aka_reference_placeholder;\n");
    if (problem)
        write_text(dir->buf, "agent_problem.json", problem);
    assert_int_equal(aka_operator_load(dir->buf, op, &err), 0);
}

static void drop(struct strbuf *dir, struct aka_operator *op)
{
    struct aka_err err = AKA_ERR_INIT;
    aka_operator_release(op);
    aka_remove_tree(dir->buf, &err);
    strbuf_release(dir);
}

static void t_public_operator(void **state)
{
    struct strbuf dir = STRBUF_INIT;
    struct aka_operator op;
    struct aka_err err = AKA_ERR_INIT;
    json_t *pub = NULL;
    (void)state;
    load(HEAD "\"invariants\": [\"i\"], \"shape_domain\": {\"N\": \"even\"}, " DEV "}", &dir, &op);
    assert_int_equal(aka_agent_problem_public(&op, &pub, &err), 0);
    json_t *shapes = json_object_get(pub, "shapes");
    assert_int_equal(json_array_size(shapes), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(shapes, 0), "id")), "d1");
    json_t *per = json_object_get(json_array_get(json_object_get(pub, "params"), 0), "per_shape");
    assert_int_equal(json_object_size(per), 1);
    assert_int_equal(json_integer_value(json_object_get(per, "d1")), 2);
    /* Nothing private is left in it: neither a private id nor a private size. */
    struct strbuf text = STRBUF_INIT;
    aka_json_dump_compact(pub, &text);
    assert_null(strstr(text.buf, "7918"));
    assert_null(strstr(text.buf, "\"s2\""));
    assert_null(strstr(text.buf, "private"));
    strbuf_release(&text);
    json_decref(pub);
    drop(&dir, &op);
}

struct bad {
    const char *name;
    const char *problem; /* NULL: no file */
    const char *want;    /* in the message, after "<dir>/" */
};

static const struct bad bad_cases[] = {
    {"absent", NULL, "agent_problem.json: expected the public problem of a generalized campaign"},
    {"syntax", "{", "agent_problem.json:1:"},
    {"not an object", "[]", "agent_problem.json: expected"},
    {"schema", "{\"schema_version\": \"atrex.agent_problem.v1\"}",
     "agent_problem.json: schema_version: expected \"aka.agent_problem.v1\""},
    {"unknown key", HEAD DEV ", \"exact_shapes\": []}", "agent_problem.json: exact_shapes"},
    {"objective empty",
     "{\"schema_version\": \"aka.agent_problem.v1\", \"objective\": \"\", " DEV "}",
     "agent_problem.json: objective: expected a non-empty string"},
    {"invariant empty", HEAD "\"invariants\": [\"\"], " DEV "}",
     "agent_problem.json: invariants[0]: expected a non-empty string"},
    {"no cases", HEAD "\"development_cases\": []}",
     "agent_problem.json: development_cases: expected at least one case"},
    {"cases missing", HEAD "\"invariants\": []}", "agent_problem.json: development_cases"},
    {"bad name",
     HEAD "\"development_cases\": [{\"name\": \"a b\", \"dims\": {\"N\": 4}, \"params\": "
          "{\"alpha\": 1}}]}",
     "agent_problem.json: development_cases[0]: name: expected an identifier"},
    {"twice",
     HEAD "\"development_cases\": [{\"name\": \"a\", \"dims\": {\"N\": 4}, \"params\": "
          "{\"alpha\": 1}}, {\"name\": \"a\", \"dims\": {\"N\": 6}, \"params\": {\"alpha\": 1}}]}",
     "agent_problem.json: development_cases[1]: name: expected a unique name"},
    {"unknown dim",
     HEAD "\"development_cases\": [{\"name\": \"a\", \"dims\": {\"N\": 4, \"M\": 2}}]}",
     "agent_problem.json: development_cases[0].dims.M: expected a dim of operator.json"},
    {"missing dim", HEAD "\"development_cases\": [{\"name\": \"a\", \"dims\": {}}]}",
     "agent_problem.json: development_cases[0].dims: expected every dim of operator.json"},
    {"dim zero", HEAD "\"development_cases\": [{\"name\": \"a\", \"dims\": {\"N\": 0}}]}",
     "agent_problem.json: development_cases[0].dims.N: expected an integer >= 1"},
    {"dim text", HEAD "\"development_cases\": [{\"name\": \"a\", \"dims\": {\"N\": \"4\"}}]}",
     "agent_problem.json: development_cases[0].dims.N: expected an integer >= 1; got a string"},
    {"odd size",
     HEAD "\"development_cases\": [{\"name\": \"a\", \"dims\": {\"N\": 5}, \"params\": "
          "{\"alpha\": 1}}]}",
     "agent_problem.json: development_cases[0].dims: expected sizes that evaluate; tensor y"},
    {"private twin",
     HEAD "\"development_cases\": [{\"name\": \"a\", \"dims\": {\"N\": 7918}, \"params\": "
          "{\"alpha\": 1}}]}",
     "agent_problem.json: development_cases[0].dims: expected no exact private case; got the "
     "dims of shape \"s2\""},
    {"param missing", HEAD "\"development_cases\": [{\"name\": \"a\", \"dims\": {\"N\": 4}}]}",
     "agent_problem.json: development_cases[0].params: expected a value for every per-shape "
     "param; \"alpha\" is missing"},
    {"param not per shape",
     HEAD "\"development_cases\": [{\"name\": \"a\", \"dims\": {\"N\": 4}, \"params\": "
          "{\"alpha\": 1, \"k\": 2}}]}",
     "agent_problem.json: development_cases[0].params.k: expected a per-shape param"},
    {"param text",
     HEAD "\"development_cases\": [{\"name\": \"a\", \"dims\": {\"N\": 4}, \"params\": "
          "{\"alpha\": \"1\"}}]}",
     "agent_problem.json: development_cases[0].params.alpha: expected a number"},
};

static void t_bad_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
        const struct bad *c = &bad_cases[i];
        struct strbuf dir = STRBUF_INIT, want = STRBUF_INIT;
        struct aka_operator op;
        struct aka_err err = AKA_ERR_INIT;
        json_t *pub = (json_t *)1;
        load(c->problem, &dir, &op);
        strbuf_addf(&want, "%s/%s", dir.buf, c->want);
        int rc = aka_agent_problem_public(&op, &pub, &err);
        if (rc != -1 || err.code != AKA_EXIT_USAGE || !strstr(err.msg, want.buf))
            fail_msg("case %s: rc %d, code %d, message: %s (want: %s)", c->name, rc, err.code,
                     err.msg, want.buf);
        assert_null(pub);
        strbuf_release(&want);
        drop(&dir, &op);
    }
}

static void t_other_layout(void **state)
{
    struct aka_operator op;
    struct aka_err err = AKA_ERR_INIT;
    json_t *pub = NULL;
    (void)state;
    assert_int_equal(aka_operator_load(AKA_SOURCE_DIR "/examples/ops/rmsnorm", &op, &err), 0);
    assert_int_equal(aka_agent_problem_public(&op, &pub, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "not built"));
    aka_operator_release(&op);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_public_operator),
        cmocka_unit_test(t_bad_cases),
        cmocka_unit_test(t_other_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
