/*
 * test_broker.c — the evaluation broker (evaluator/broker.c) without a transport: a request
 * makes the round trip from the agent's side to the supervisor's thread and back; requests
 * the agent could plant (malformed JSON, unknown keys, a path as the kernel's name, a symbolic
 * link, an oversized kernel) are answered with an error naming the file and field, and never
 * followed or evaluated; files that are not requests are ignored.
 */
#include "aka_test.h"

#include "base/fs.h"
#include "base/json.h"
#include "base/proc.h"
#include "evaluator/evaluator.h"
#include "workspace/workspace.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

struct seen {
    int calls;
};

/* The snapshot check fails: the broker must say so, having evaluated nothing. */
static int refuse_operator(void *data, struct strbuf *op_dir, struct aka_err *err)
{
    (void)op_dir;
    ((struct seen *)data)->calls++;
    return aka_err_set(err, AKA_EXIT_USAGE, "the operator snapshot changed (test)");
}

/* The same refusal after 700 ms: a supervisor busy with the evaluation. */
static int refuse_slowly(void *data, struct strbuf *op_dir, struct aka_err *err)
{
    struct timespec ts = {0, 700 * 1000000L};
    nanosleep(&ts, NULL);
    return refuse_operator(data, op_dir, err);
}

static struct aka_eval_broker *start_with(const char *view, struct seen *s,
                                          int (*resolve)(void *, struct strbuf *, struct aka_err *))
{
    struct aka_eval_broker *b = NULL;
    struct aka_err err = AKA_ERR_INIT;
    struct aka_eval_broker_base base = {
        .req = {.framework = "C", .platform = "cpu"}, .resolve = resolve, .resolve_data = s};
    assert_int_equal(aka_eval_broker_start(&b, view, NULL, &base, &err), 0);
    return b;
}

static struct aka_eval_broker *start(const char *view, struct seen *s)
{
    return start_with(view, s, refuse_operator);
}

/* One request through the broker, refused by resolve; the supervisor's answer names why. */
static void round_trip(int (*resolve)(void *, struct strbuf *, struct aka_err *))
{
    struct strbuf view = STRBUF_INIT, kernel = STRBUF_INIT;
    struct strvec none = STRVEC_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct aka_eval_outcome out;
    struct seen s = {0};
    assert_int_equal(aka_make_temp_dir(NULL, "aka-test-broker", &view, &err), 0);
    assert_false(aka_eval_broker_present(view.buf));
    struct aka_eval_broker *b = start_with(view.buf, &s, resolve);
    assert_true(aka_eval_broker_present(view.buf));
    aka_path_join(&kernel, view.buf, "kernel.c");
    assert_int_equal(aka_write_file_plain(kernel.buf, "int x;\n", 7, 0644, &err), 0);
    struct aka_eval_request req = {.kernel = kernel.buf,
                                   .multi_seed = 1,
                                   .timed_runs = -1,
                                   .warmup = -1,
                                   .shape_ids = &none,
                                   .tune = &none,
                                   .timed_inputs = "seeded",
                                   .timing = "kernel-span"};
    aka_eval_outcome_init(&out);
    assert_int_equal(aka_eval_broker_call(view.buf, &req, &out, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "the operator snapshot changed (test)"));
    assert_non_null(strstr(err.msg, "evaluated by the supervisor"));
    assert_int_equal(s.calls, 1);
    aka_eval_outcome_release(&out);
    aka_eval_broker_stop(b);
    aka_remove_tree(view.buf, &err);
    strbuf_release(&view);
    strbuf_release(&kernel);
}

static void t_round_trip(void **state)
{
    (void)state;
    round_trip(refuse_operator);
}

static void count_beat(void *arg, double elapsed_s)
{
    (void)elapsed_s;
    (*(int *)arg)++;
}

/* The agent's side says it is still waiting while the supervisor works: every 200 ms here,
 * so at least 3 beats for a 700 ms evaluation, and never more than the wait allows. */
static void t_heartbeat_while_waiting(void **state)
{
    int beats = 0;
    (void)state;
    proc_set_heartbeat(count_beat, &beats, 200);
    double t0 = aka_test_now_s();
    round_trip(refuse_slowly);
    double waited = aka_test_now_s() - t0;
    proc_set_heartbeat(NULL, NULL, 0);
    assert_true(beats >= 3);
    assert_true(beats <= (int)(waited / 0.2) + 1);
}

/* Plant requests/<id>.json (text, or a link to target) and wait for results/<id>.json. */
static json_t *answer_to(const char *view, const char *id, const char *text, const char *target)
{
    struct strbuf req = STRBUF_INIT, res = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    json_t *doc = NULL;
    aka_ws_path(&req, view, AKA_WS_BROKER_REQUESTS);
    strbuf_addf(&req, "/%s.json", id);
    if (target)
        assert_int_equal(symlink(target, req.buf), 0);
    else
        assert_int_equal(aka_write_file_plain(req.buf, text, strlen(text), 0644, &err), 0);
    aka_ws_path(&res, view, AKA_WS_BROKER_RESULTS);
    strbuf_addf(&res, "/%s.json", id);
    for (int i = 0; i < 100 && !aka_exists(res.buf); i++) {
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (aka_exists(res.buf))
        assert_int_equal(aka_json_load_file(res.buf, &doc, &err), 0);
    strbuf_release(&req);
    strbuf_release(&res);
    return doc;
}

static void expect_error(json_t *doc, const char *needle)
{
    assert_non_null(doc);
    const char *msg = json_string_value(json_object_get(json_object_get(doc, "error"), "message"));
    assert_non_null(msg);
    if (!strstr(msg, needle))
        fail_msg("expected '%s' in '%s'", needle, msg);
    json_decref(doc);
}

static void t_planted_requests(void **state)
{
    struct strbuf view = STRBUF_INIT, secret = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct seen s = {0};
    (void)state;
    assert_int_equal(aka_make_temp_dir(NULL, "aka-test-broker", &view, &err), 0);
    struct aka_eval_broker *b = start(view.buf, &s);
    expect_error(answer_to(view.buf, "0000000000000001", "{not json", NULL), "0000000000000001");
    expect_error(answer_to(view.buf, "0000000000000002",
                           "{\"kernel_name\": \"k.c\", \"kernel_base64\": \"\", \"op_dir\": \"/\"}",
                           NULL),
                 "op_dir");
    expect_error(answer_to(view.buf, "0000000000000003",
                           "{\"kernel_name\": \"../k.c\", \"kernel_base64\": \"aW50IHg7Cg==\"}",
                           NULL),
                 "kernel_name: expected a plain file name");
    expect_error(answer_to(view.buf, "0000000000000004",
                           "{\"kernel_name\": \"k.c\", \"kernel_base64\": \"aW50\", "
                           "\"timed_runs\": 1000001}",
                           NULL),
                 "timed_runs");
    expect_error(answer_to(view.buf, "0000000000000005",
                           "{\"kernel_name\": \"k.c\", \"kernel_base64\": \"@@@\"}", NULL),
                 "kernel_base64");
    expect_error(answer_to(view.buf, "0000000000000007",
                           "{\"kernel_name\": \"k.c\", \"kernel_base64\": \"aW50\", "
                           "\"timing\": \"cupti\"}",
                           NULL),
                 "timing");
    /* A link to a file only the supervisor should read is never followed. */
    aka_path_join(&secret, view.buf, "secret.json");
    assert_int_equal(aka_write_file_plain(secret.buf, "{}", 2, 0600, &err), 0);
    expect_error(answer_to(view.buf, "0000000000000006", NULL, secret.buf), "cannot open");
    /* Not a request name: ignored, no answer. */
    assert_null(answer_to(view.buf, "not-a-request", "{}", NULL));
    assert_int_equal(s.calls, 0); /* nothing reached the operator, let alone a transport */
    aka_eval_broker_stop(b);
    aka_remove_tree(view.buf, &err);
    strbuf_release(&view);
    strbuf_release(&secret);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_round_trip),
        cmocka_unit_test(t_heartbeat_while_waiting),
        cmocka_unit_test(t_planted_requests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
