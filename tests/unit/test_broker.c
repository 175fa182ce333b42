/*
 * test_broker.c — the evaluation broker (evaluator/broker.c) without a transport: a request
 * makes the round trip from the agent's side to the supervisor's thread and back; requests
 * the agent could plant (malformed JSON, unknown keys, a path as the kernel's name, a symbolic
 * link, an oversized kernel) are answered with an error naming the file and field, and never
 * followed or evaluated; files that are not requests are ignored. An agent's `aka profile`
 * makes the same trip on a real local job: the supervisor's own profiler command line (a
 * stand-in here) runs it, one seed and one timed run whatever was asked, and the export comes
 * back into the agent's directory; a supervisor that cannot profile says so (75).
 */
#include "aka_test.h"

#include "base/fs.h"
#include "base/json.h"
#include "base/proc.h"
#include "evaluator/evaluator.h"
#include "sandbox/sandbox.h"
#include "workspace/workspace.h"

#include <stdio.h>
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
    /* A profile's ask: a level of the three, known keys, metric names as strings. */
    expect_error(answer_to(view.buf, "0000000000000008",
                           "{\"kernel_name\": \"k.c\", \"kernel_base64\": \"aW50\", "
                           "\"shape_ids\": [\"n4k\"], \"profile\": {\"level\": \"max\"}}",
                           NULL),
                 "level");
    expect_error(answer_to(view.buf, "0000000000000009",
                           "{\"kernel_name\": \"k.c\", \"kernel_base64\": \"aW50\", "
                           "\"shape_ids\": [\"n4k\"], \"profile\": {\"level\": \"sol\", "
                           "\"argv\": [\"/bin/sh\"]}}",
                           NULL),
                 "argv");
    expect_error(answer_to(view.buf, "000000000000000a",
                           "{\"kernel_name\": \"k.c\", \"kernel_base64\": \"aW50\", "
                           "\"shape_ids\": [\"n4k\"], \"profile\": {\"level\": \"sol\", "
                           "\"metrics\": [1]}}",
                           NULL),
                 "metrics");
    expect_error(answer_to(view.buf, "000000000000000b",
                           "{\"kernel_name\": \"k.c\", \"kernel_base64\": \"aW50\", "
                           "\"shape_ids\": [\"n4k\", \"n1m\"], \"profile\": {\"level\": \"sol\"}}",
                           NULL),
                 "a profile runs one shape");
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

/* ---- a profile through the broker ---------------------------------------------------------- */

struct stand_in {
    char bin[1024]; /* holds fakeprof (tests/fixtures/profile/fake_profiler.sh) */
    char level[16], regex[64];
    size_t metrics;
};

/* The supervisor's profiler: the stand-in, as aka_profile_command would give ncu. */
static int stand_in_profiler(void *data, const struct aka_eval_profile_ask *ask,
                             struct strvec *argv, struct strbuf *dir, struct aka_err *err)
{
    struct stand_in *p = data;
    (void)err;
    snprintf(p->level, sizeof(p->level), "%s", ask->level);
    snprintf(p->regex, sizeof(p->regex), "%s", ask->kernel_regex ? ask->kernel_regex : "");
    p->metrics = ask->metrics ? ask->metrics->n : 0;
    strvec_pushf(argv, "%s/fakeprof", p->bin);
    strvec_push(argv, "--csv");
    strbuf_addstr(dir, p->bin);
    return 0;
}

static int vector_add(void *data, struct strbuf *op_dir, struct aka_err *err)
{
    (void)data;
    (void)err;
    strbuf_addstr(op_dir, AKA_SOURCE_DIR "/examples/ops/vector_add");
    return 0;
}

static struct aka_eval_broker *start_profiling(const char *view, struct aka_sandbox_transport *t,
                                               struct stand_in *p)
{
    struct aka_eval_broker *b = NULL;
    struct aka_err err = AKA_ERR_INIT;
    static struct aka_sandbox_local_opts lo = {.tmp_dir = NULL}; /* t keeps pointing at it */
    aka_sandbox_local(t, &lo);
    t->isolation = AKA_SBX_NONE; /* the job's confinement is not what is tested here */
    struct aka_eval_broker_base base = {
        .req = {.framework = "C", .platform = "cpu", .repo_root = AKA_SOURCE_DIR},
        .resolve = vector_add,
        .profiler = p ? stand_in_profiler : NULL,
        .profiler_data = p};
    assert_int_equal(aka_eval_broker_start(&b, view, t, &base, &err), 0);
    return b;
}

static int profile_call(const char *view, const struct strvec *ids, const char *artifacts,
                        struct aka_eval_outcome *out, struct aka_err *err)
{
    struct strvec metrics = STRVEC_INIT;
    strvec_push(&metrics, "dram__bytes.sum");
    struct aka_eval_profile_ask ask = {.level = "sol", .kernel_regex = "add", .metrics = &metrics};
    struct aka_eval_request req = {
        .kernel = AKA_SOURCE_DIR "/examples/ops/vector_add/seeds/C/kernel.c",
        .shape_ids = ids,
        .multi_seed = 3, /* the supervisor profiles one seed, one warm-up, one timed run */
        .timed_runs = 50,
        .warmup = 5,
        .artifact_dir = artifacts,
        .profile_ask = &ask};
    aka_eval_outcome_release(out);
    aka_eval_outcome_init(out);
    int rc = aka_eval_broker_call(view, &req, out, err);
    strvec_clear(&metrics);
    return rc;
}

static void t_profile_round_trip(void **state)
{
    struct strbuf view = STRBUF_INIT, p = STRBUF_INIT, text = STRBUF_INIT, artifacts = STRBUF_INIT;
    struct strvec ids = STRVEC_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct aka_sandbox_transport t;
    struct aka_eval_outcome out;
    struct stand_in prof = {0};
    (void)state;
    /* Not under /tmp: a job's /tmp is its own, so the profiler's directory may not be there. */
    assert_int_equal(aka_make_temp_dir("/var/tmp", "aka-test-broker", &view, &err), 0);
    snprintf(prof.bin, sizeof(prof.bin), "%s/bin", view.buf);
    assert_int_equal(aka_mkdir_p(prof.bin, 0755, &err), 0);
    aka_path_join(&p, prof.bin, "fakeprof");
    assert_int_equal(
        aka_copy_file(AKA_SOURCE_DIR "/tests/fixtures/profile/fake_profiler.sh", p.buf, &err), 0);
    aka_path_join(&artifacts, view.buf, "agent/profiles/raw");
    struct aka_eval_broker *b = start_profiling(view.buf, &t, &prof);
    strvec_push(&ids, "n4k");
    aka_eval_outcome_init(&out);
    if (profile_call(view.buf, &ids, artifacts.buf, &out, &err) < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(out.exit_code, 0); /* the harness's verdict under the profiler */
    assert_true(out.brokered);
    assert_string_equal(prof.level, "sol");
    assert_string_equal(prof.regex, "add");
    assert_int_equal(prof.metrics, 1);
    aka_path_join(&p, artifacts.buf, AKA_EVAL_PROFILE_EXPORT);
    assert_int_equal(aka_read_file(p.buf, &text, 1 << 20, &err), 0);
    assert_non_null(strstr(text.buf, "gpu__time_duration.sum"));
    /* the supervisor's command line ran the harness once: its flags, then the job's */
    aka_path_join(&p, prof.bin, "argv.txt");
    strbuf_reset(&text);
    assert_int_equal(aka_read_file(p.buf, &text, 1 << 20, &err), 0);
    assert_non_null(strstr(text.buf, "--csv\n--log-file\n" AKA_EVAL_PROFILE_EXPORT "\n"));
    assert_int_equal(out.result.seeds.n, 1); /* one seed, though the agent asked for 3 */
    /* a profiler that writes nothing: the earlier export is gone, not read as this one's */
    aka_path_join(&p, prof.bin, "silent");
    assert_int_equal(aka_write_file_plain(p.buf, "", 0, 0644, &err), 0);
    assert_int_equal(profile_call(view.buf, &ids, artifacts.buf, &out, &err), 0);
    aka_path_join(&p, artifacts.buf, AKA_EVAL_PROFILE_EXPORT);
    assert_false(aka_exists(p.buf));
    /* a profile is of one shape */
    strvec_push(&ids, "n1m");
    assert_int_equal(profile_call(view.buf, &ids, artifacts.buf, &out, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "shape_ids"));
    aka_eval_broker_stop(b);
    /* a supervisor without a profiler refuses, as a host without ncu does */
    b = start_profiling(view.buf, &t, NULL);
    strvec_clear(&ids);
    strvec_push(&ids, "n4k");
    assert_int_equal(profile_call(view.buf, &ids, artifacts.buf, &out, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_ENV);
    assert_non_null(strstr(err.msg, "does not profile"));
    aka_eval_broker_stop(b);
    aka_eval_outcome_release(&out);
    aka_remove_tree(view.buf, &err);
    strbuf_release(&view);
    strbuf_release(&p);
    strbuf_release(&text);
    strbuf_release(&artifacts);
    strvec_clear(&ids);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_round_trip),
        cmocka_unit_test(t_heartbeat_while_waiting),
        cmocka_unit_test(t_planted_requests),
        cmocka_unit_test(t_profile_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
