/*
 * test_json.c — JSON helpers (base/json.h). Every message a user can see is
 * asserted verbatim: they are the interface of a bad-input failure (exit 2).
 */
#include "aka_test.h"

#include "base/fs.h"
#include "base/json.h"

#include <stdlib.h>
#include <string.h>

static int dir_setup(void **state)
{
    struct strbuf *dir = calloc(1, sizeof(*dir));
    struct aka_err err = AKA_ERR_INIT;
    strbuf_init(dir, 0);
    assert_int_equal(aka_make_temp_dir(NULL, "aka-test-json", dir, &err), 0);
    *state = dir;
    return 0;
}

static int dir_teardown(void **state)
{
    struct strbuf *dir = *state;
    struct aka_err err = AKA_ERR_INIT;
    aka_remove_tree(dir->buf, &err);
    strbuf_release(dir);
    free(dir);
    return 0;
}

/* Write text to DIR/name; path receives the full name. */
static void put(void **state, const char *name, const char *text, size_t len, struct strbuf *path)
{
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(path, ((struct strbuf *)*state)->buf, name);
    assert_int_equal(aka_write_file_atomic(path->buf, text, len, 0644, &err), 0);
}

static void expect_msg(const struct aka_err *err, const char *fmt, const char *file)
{
    char want[4096];
    snprintf(want, sizeof(want), fmt, file);
    assert_int_equal(err->code, 2);
    assert_string_equal(err->msg, want);
}

static void t_syntax_error_position(void **state)
{
    struct strbuf path = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    json_t *j = (json_t *)1;
    const char *text = "{\n  \"a\": 1,\n  \"b\" 2\n}\n";
    put(state, "bad.json", text, strlen(text), &path);
    assert_int_equal(aka_json_load_file(path.buf, &j, &err), -1);
    assert_null(j);
    expect_msg(&err, "%s:3:7: invalid JSON: ':' expected near '2'", path.buf);
    assert_int_equal(aka_json_load_buf("buf", "[1,2", 4, &j, &err), -1);
    assert_string_equal(err.msg, "buf:1:4: invalid JSON: ']' expected near end of file");
    assert_int_equal(aka_json_load_file("/nonexistent/x.json", &j, &err), -1);
    assert_int_equal(err.code, 2);
    assert_string_equal(err.msg, "/nonexistent/x.json: cannot open: No such file or directory");
    strbuf_release(&path);
}

static void t_duplicate_key_rejected(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    json_t *j;
    const char *text = "{\"world_size\": 2, \"world_size\": 4}";
    assert_int_equal(aka_json_load_buf("c.json", text, strlen(text), &j, &err), -1);
    assert_int_equal(err.code, 2);
    assert_string_equal(err.msg, "c.json:1:30: invalid JSON: duplicate object key near "
                                 "'\"world_size\"'");
    text = "{\"a\": {\"k\": 1}, \"b\": {\"k\": 2}}"; /* same key in different objects is fine */
    assert_int_equal(aka_json_load_buf("c.json", text, strlen(text), &j, &err), 0);
    json_decref(j);
}

/* The document every getter test reads. */
static json_t *doc(void)
{
    struct aka_err err = AKA_ERR_INIT;
    json_t *j;
    const char *text = "{\"s\": \"str\", \"i\": 7, \"r\": 1.5, \"b\": true, \"o\": {\"k\": 1},"
                       " \"a\": [1, 2], \"n\": null}";
    assert_int_equal(aka_json_load_buf("d.json", text, strlen(text), &j, &err), 0);
    return j;
}

static void t_getters_ok(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct jctx c = {"d.json", &err};
    json_t *j = doc(), *o = NULL, *a = NULL;
    const char *s = NULL;
    long long i = 0;
    double r = 0;
    bool b = false;
    assert_int_equal(jget_str(&c, j, "", "s", true, &s), 0);
    assert_string_equal(s, "str");
    assert_int_equal(jget_int(&c, j, "", "i", true, &i), 0);
    assert_int_equal(i, 7);
    assert_int_equal(jget_num(&c, j, "", "r", true, &r), 0);
    assert_true(r == 1.5);
    assert_int_equal(jget_num(&c, j, "", "i", true, &r), 0); /* an integer is a number */
    assert_true(r == 7.0);
    assert_int_equal(jget_bool(&c, j, "", "b", true, &b), 0);
    assert_true(b);
    assert_int_equal(jget_obj(&c, j, "", "o", true, &o), 0);
    assert_true(json_is_object(o));
    assert_int_equal(jget_arr(&c, j, "", "a", true, &a), 0);
    assert_int_equal(json_array_size(a), 2);
    /* Optional and absent (or null): 0, output untouched. */
    s = "unchanged";
    assert_int_equal(jget_str(&c, j, "", "missing", false, &s), 0);
    assert_int_equal(jget_str(&c, j, "", "n", false, &s), 0);
    assert_string_equal(s, "unchanged");
    assert_int_equal(err.code, 0);
    json_decref(j);
}

static void t_getters_wrong_type(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct jctx c = {"d.json", &err};
    json_t *j = doc(), *v;
    const char *s;
    long long i;
    double r;
    bool b;
    assert_int_equal(jget_str(&c, j, "", "i", true, &s), -1);
    expect_msg(&err, "%s: i: expected a string; got an integer", "d.json");
    assert_int_equal(jget_int(&c, j, "", "r", true, &i), -1);
    expect_msg(&err, "%s: r: expected an integer; got a number", "d.json");
    assert_int_equal(jget_num(&c, j, "", "s", false, &r), -1); /* optional but wrong: error */
    expect_msg(&err, "%s: s: expected a number; got a string", "d.json");
    assert_int_equal(jget_bool(&c, j, "", "o", true, &b), -1);
    expect_msg(&err, "%s: o: expected true or false; got an object", "d.json");
    assert_int_equal(jget_obj(&c, j, "", "a", true, &v), -1);
    expect_msg(&err, "%s: a: expected an object; got an array", "d.json");
    assert_int_equal(jget_arr(&c, j, "", "b", true, &v), -1);
    expect_msg(&err, "%s: b: expected an array; got a boolean", "d.json");
    json_decref(j);
}

static void t_getters_missing(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct jctx c = {"d.json", &err};
    json_t *j = doc(), *v;
    const char *s;
    long long i;
    double r;
    bool b;
    assert_int_equal(jget_str(&c, j, "", "name", true, &s), -1);
    expect_msg(&err, "%s: name: required field is missing", "d.json");
    assert_int_equal(jget_int(&c, j, "inputs[2]", "rank", true, &i), -1);
    expect_msg(&err, "%s: inputs[2].rank: required field is missing", "d.json");
    assert_int_equal(jget_num(&c, j, "tol", "atol", true, &r), -1);
    expect_msg(&err, "%s: tol.atol: required field is missing", "d.json");
    assert_int_equal(jget_bool(&c, j, "", "n", true, &b), -1); /* null counts as missing */
    expect_msg(&err, "%s: n: required field is missing", "d.json");
    assert_int_equal(jget_obj(&c, j, "a.b", "c", true, &v), -1);
    expect_msg(&err, "%s: a.b.c: required field is missing", "d.json");
    assert_int_equal(jget_arr(&c, j, "", "list", true, &v), -1);
    expect_msg(&err, "%s: list: required field is missing", "d.json");
    /* A parent that is not an object has no fields at all. */
    assert_int_equal(jget_str(&c, json_object_get(j, "a"), "a", "x", true, &s), -1);
    expect_msg(&err, "%s: a.x: required field is missing", "d.json");
    json_decref(j);
}

static void t_expect_and_types(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct jctx c = {"d.json", &err};
    json_t *j = doc();
    assert_int_equal(jexpect_obj(&c, j, ""), 0);
    assert_int_equal(jexpect_arr(&c, j, ""), -1);
    expect_msg(&err, "%s: expected an array; got an object", "d.json");
    assert_int_equal(jexpect_obj(&c, json_object_get(j, "a"), "inputs"), -1);
    expect_msg(&err, "%s: inputs: expected an object; got an array", "d.json");
    assert_string_equal(jtype_name(json_object_get(j, "n")), "null");
    assert_string_equal(jtype_name(json_object_get(j, "r")), "a number");
    assert_int_equal(jfail(&c, "x.y", "bad %d", 3), -1);
    expect_msg(&err, "%s: x.y: bad 3", "d.json");
    json_decref(j);
}

static void t_paths(void **state)
{
    struct strbuf p = STRBUF_INIT;
    jpath_key(&p, "", "k");
    assert_string_equal(p.buf, "k");
    jpath_key(&p, NULL, "k");
    assert_string_equal(p.buf, "k");
    jpath_key(&p, "inputs[2]", "dtype");
    assert_string_equal(p.buf, "inputs[2].dtype");
    jpath_index(&p, "inputs", 2);
    assert_string_equal(p.buf, "inputs[2]");
    jpath_index(&p, "", 0);
    assert_string_equal(p.buf, "[0]");
    strbuf_release(&p);
}

static void t_check_keys(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct jctx c = {"k.json", &err};
    const char *allowed[] = {"name", "dtype", NULL};
    json_t *ok = json_pack("{s:s, s:s}", "name", "x", "dtype", "f32");
    json_t *bad = json_pack("{s:s, s:i}", "name", "x", "dtpye", 1);
    assert_int_equal(jcheck_keys(&c, ok, "inputs[0]", allowed), 0);
    assert_int_equal(jcheck_keys(&c, bad, "inputs[0]", allowed), -1);
    expect_msg(&err, "%s: inputs[0].dtpye: unknown field (known fields: name, dtype)", "k.json");
    json_decref(ok);
    json_decref(bad);
}

static void t_enum(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    struct jctx c = {"e.json", &err};
    const char *kinds[] = {"run", "profile", "check", NULL};
    json_t *j = json_pack("{s:s, s:i}", "kind", "profile", "num", 3);
    int idx = -1;
    assert_int_equal(jenum_index("check", kinds), 2);
    assert_int_equal(jenum_index("nope", kinds), -1);
    assert_int_equal(jget_enum(&c, j, "job", "kind", true, kinds, &idx), 0);
    assert_int_equal(idx, 1);
    idx = -7;
    assert_int_equal(jget_enum(&c, j, "job", "absent", false, kinds, &idx), 0);
    assert_int_equal(idx, -7);
    json_object_set_new(j, "kind", json_string("dev"));
    assert_int_equal(jget_enum(&c, j, "job", "kind", true, kinds, &idx), -1);
    expect_msg(&err, "%s: job.kind: expected one of run, profile, check; got \"dev\"", "e.json");
    assert_int_equal(jget_enum(&c, j, "job", "num", true, kinds, &idx), -1);
    expect_msg(&err, "%s: job.num: expected a string; got an integer", "e.json");
    assert_int_equal(jget_enum(&c, j, "job", "absent", true, kinds, &idx), -1);
    expect_msg(&err, "%s: job.absent: required field is missing", "e.json");
    json_decref(j);
}

struct seen {
    size_t lines[8];
    long long values[8];
    size_t n;
    size_t stop_at; /* line number at which the callback fails; 0: never */
};

static int collect(json_t *obj, size_t lineno, void *data, struct aka_err *err)
{
    struct seen *s = data;
    if (lineno == s->stop_at)
        return aka_err_set(err, AKA_EXIT_FAILED, "stopped at %zu", lineno);
    s->lines[s->n] = lineno;
    s->values[s->n++] = json_integer_value(json_object_get(obj, "v"));
    return 0;
}

static void t_jsonl(void **state)
{
    struct strbuf path = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct seen s = {{0}, {0}, 0, 0};
    const char *text = "{\"v\": 1}\n\n  \t\n{\"v\": 4}\r\n{\"v\": 5}"; /* no final newline */
    put(state, "ok.jsonl", text, strlen(text), &path);
    assert_int_equal(aka_jsonl_foreach(path.buf, collect, &s, &err), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.lines[0], 1);
    assert_int_equal(s.lines[1], 4);
    assert_int_equal(s.lines[2], 5);
    assert_int_equal(s.values[2], 5);
    /* The callback's error stops the walk and comes back unchanged. */
    memset(&s, 0, sizeof(s));
    s.stop_at = 4;
    assert_int_equal(aka_jsonl_foreach(path.buf, collect, &s, &err), -1);
    assert_string_equal(err.msg, "stopped at 4");
    assert_int_equal(s.n, 1);
    strbuf_release(&path);
}

static void t_jsonl_errors(void **state)
{
    struct strbuf path = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct seen s = {{0}, {0}, 0, 0};
    const char *bad = "{\"v\": 1}\n\n{\"v\": }\n{\"v\": 3}\n";
    put(state, "bad.jsonl", bad, strlen(bad), &path);
    assert_int_equal(aka_jsonl_foreach(path.buf, collect, &s, &err), -1);
    expect_msg(&err, "%s:3:7: invalid JSON: unexpected token near '}'", path.buf);
    assert_int_equal(s.n, 1);
    const char *arr = "{\"v\": 1}\n[1]\n";
    put(state, "arr.jsonl", arr, strlen(arr), &path);
    assert_int_equal(aka_jsonl_foreach(path.buf, collect, &s, &err), -1);
    expect_msg(&err, "%s:2: expected a JSON object on each line; got an array", path.buf);
    /* A NUL byte is an error on its line, not a silent end of the file. */
    const char nul[] = "{\"v\": 1}\n{\"v\": 2}\0\n{\"v\": 3}\n";
    put(state, "nul.jsonl", nul, sizeof(nul) - 1, &path);
    memset(&s, 0, sizeof(s));
    assert_int_equal(aka_jsonl_foreach(path.buf, collect, &s, &err), -1);
    assert_int_equal(err.code, 2);
    assert_non_null(strstr(err.msg, "nul.jsonl:2:"));
    assert_int_equal(s.n, 1);
    strbuf_release(&path);
}

/* aka_json_text: a program's output keeps its lines and control characters (the reader
 * escapes them when it prints); only invalid UTF-8 is replaced, by U+FFFD. */
static void t_text(void **state)
{
    static const char raw[] = "line 1\n\tline 2\x1b[31m \xff\xc0\xaf end";
    (void)state;
    json_t *s = aka_json_text(raw, sizeof(raw) - 1);
    assert_non_null(s);
    assert_string_equal(json_string_value(s),
                        "line 1\n\tline 2\x1b[31m \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD end");
    json_decref(s);
}

static void t_write_round_trip(void **state)
{
    struct strbuf path = STRBUF_INIT, text = STRBUF_INIT, compact = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    json_t *back;
    json_t *v = json_pack("{s:i, s:[i,i], s:{s:b, s:n}, s:s}", "b", 1, "a", 1, 2, "c", "z", 1, "y",
                          "d", "\xc3\xa9");
    aka_path_join(&path, ((struct strbuf *)*state)->buf, "out.json");
    assert_int_equal(aka_json_write_file(path.buf, v, &err), 0);
    assert_int_equal(aka_read_file(path.buf, &text, 4096, &err), 0);
    assert_string_equal(text.buf,
                        "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": 1,\n  \"c\": {\n"
                        "    \"y\": null,\n    \"z\": true\n  },\n  \"d\": \"\xc3\xa9\"\n}\n");
    assert_int_equal(aka_json_load_file(path.buf, &back, &err), 0);
    assert_true(json_equal(v, back));
    aka_json_dump_compact(v, &compact);
    assert_string_equal(compact.buf,
                        "{\"a\":[1,2],\"b\":1,\"c\":{\"y\":null,\"z\":true},\"d\":\"\xc3\xa9\"}");
    assert_int_equal(aka_json_write_file("/nonexistent/out.json", v, &err), -1);
    assert_non_null(strstr(err.msg, "/nonexistent/out.json: cannot create temporary file"));
    json_decref(v);
    json_decref(back);
    strbuf_release(&path);
    strbuf_release(&text);
    strbuf_release(&compact);
}

#define DIR_TEST(fn) cmocka_unit_test_setup_teardown(fn, dir_setup, dir_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        DIR_TEST(t_syntax_error_position),
        cmocka_unit_test(t_duplicate_key_rejected),
        cmocka_unit_test(t_getters_ok),
        cmocka_unit_test(t_getters_wrong_type),
        cmocka_unit_test(t_getters_missing),
        cmocka_unit_test(t_expect_and_types),
        cmocka_unit_test(t_paths),
        cmocka_unit_test(t_check_keys),
        cmocka_unit_test(t_enum),
        cmocka_unit_test(t_text),
        DIR_TEST(t_jsonl),
        DIR_TEST(t_jsonl_errors),
        DIR_TEST(t_write_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
