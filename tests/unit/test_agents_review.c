/*
 * test_agents_review.c — what the plan reviewers read and keep: the model's
 * final message in each CLI's event format (aka_agent_final_message), and
 * the reviewer cache's validation and token ledger sum.
 */
#include "aka_test.h"

#include "agents/agents.h"
#include "base/fs.h"

#include <string.h>

static void write_text(const char *name, const char *text, struct strbuf *path)
{
    struct aka_err err = AKA_ERR_INIT;
    strbuf_reset(path);
    aka_path_join(path, aka_scratch_dir(), name);
    assert_int_equal(aka_write_file_atomic(path->buf, text, strlen(text), 0644, &err), 0);
}

static void expect_answer(const char *backend, const char *stream, const char *want)
{
    struct strbuf path = STRBUF_INIT, out = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    write_text("stdout.jsonl", stream, &path);
    assert_int_equal(aka_agent_final_message(backend, path.buf, &out, &err), 0);
    assert_string_equal(out.buf, want);
    strbuf_release(&path);
    strbuf_release(&out);
}

static void test_final_message(void **state)
{
    (void)state;
    /* Claude: the result event wins over the assistant text; tool use is no answer. */
    expect_answer("claude",
                  "{\"type\":\"assistant\",\"message\":{\"role\":\"assistant\",\"content\":"
                  "[{\"type\":\"text\",\"text\":\"draft\"}]}}\n"
                  "noise\n"
                  "{\"type\":\"result\",\"result\":\"CODEX_SUMMARY: ok\"}\n",
                  "CODEX_SUMMARY: ok");
    expect_answer("qodercli",
                  "{\"type\":\"assistant\",\"message\":{\"role\":\"assistant\",\"content\":"
                  "[{\"type\":\"text\",\"text\":\"first\"},{\"type\":\"text\",\"text\":\"second\"}]"
                  "}}\n"
                  "{\"type\":\"assistant\",\"message\":{\"role\":\"assistant\",\"content\":"
                  "[{\"type\":\"tool_use\",\"name\":\"Bash\"}]}}\n",
                  "first\nsecond");
    /* Codex: the last agent_message item; command output is not the answer. */
    expect_answer("codex",
                  "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\","
                  "\"text\":\"one\"}}\n"
                  "{\"type\":\"item.completed\",\"item\":{\"type\":\"command_execution\","
                  "\"aggregated_output\":\"x\"}}\n"
                  "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\","
                  "\"text\":\"two\"}}\n",
                  "two");
    /* Pi: the last assistant message_end; tool results are not answers. */
    expect_answer("pi",
                  "{\"type\":\"message_end\",\"message\":{\"role\":\"assistant\",\"content\":"
                  "[{\"type\":\"text\",\"text\":\"answer\"}]}}\n"
                  "{\"type\":\"message_end\",\"message\":{\"role\":\"toolResult\",\"content\":"
                  "[{\"type\":\"text\",\"text\":\"tool\"}]}}\n",
                  "answer");
    expect_answer("codex", "{\"type\":\"turn.completed\",\"usage\":{}}\n", "");
}

static void test_cache_and_ledger(void **state)
{
    struct strbuf path = STRBUF_INIT, dir = STRBUF_INIT;
    struct aka_plan_reviewers pr;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    aka_path_join(&dir, aka_scratch_dir(), "ws/.aka");
    assert_int_equal(aka_mkdir_p(dir.buf, 0755, &err), 0);
    strbuf_reset(&dir);
    aka_path_join(&dir, aka_scratch_dir(), "ws");
    assert_int_equal(aka_plan_reviewers_load(dir.buf, &pr), -1); /* no cache */
    write_text("ws/.aka/plan_reviewers.json",
               "{\"schema_version\":1,\"checked_at\":\"t\",\"agent_cli\":\"claude\","
               "\"probe_timeout_seconds\":120,\"reviewers\":{\"codex\":{\"available\":true,"
               "\"status\":\"available\",\"reason\":\"ok\"}}}",
               &path);
    assert_int_equal(aka_plan_reviewers_load(dir.buf, &pr), -1); /* qoder missing */
    write_text("ws/.aka/plan_reviewers.json",
               "{\"schema_version\":1,\"checked_at\":\"t\",\"agent_cli\":\"claude\","
               "\"probe_timeout_seconds\":120,\"reviewers\":{\"codex\":{\"available\":true,"
               "\"status\":\"available\",\"reason\":\"ok\"},\"qoder\":{\"available\":false,"
               "\"status\":\"timeout\",\"reason\":\"slow\"}}}",
               &path);
    assert_int_equal(aka_plan_reviewers_load(dir.buf, &pr), 0);
    assert_true(pr.r[AKA_REVIEWER_CODEX].available);
    assert_false(pr.r[AKA_REVIEWER_QODER].available);
    assert_string_equal(pr.r[AKA_REVIEWER_QODER].reason, "slow");
    struct strvec env = STRVEC_INIT;
    aka_plan_reviewers_env(&pr, &env);
    assert_true(strvec_find(&env, "ATREX_PLAN_REVIEW_CODEX_ENABLED=1") >= 0);
    assert_true(strvec_find(&env, "ATREX_PLAN_REVIEW_QODER_ENABLED=0") >= 0);
    assert_true(strvec_find(&env, "ATREX_PLAN_REVIEW_QODER_REASON=slow") >= 0);
    strvec_clear(&env);
    assert_int_equal(aka_plan_reviewer_tokens(dir.buf), 0);
    write_text("ws/.aka/reviewer_tokens.jsonl",
               "{\"reviewer\":\"codex\",\"tokens\":120}\n{\"reviewer\":\"qoder\",\"tokens\":0}\n"
               "{\"reviewer\":\"codex\",\"tokens\":1800}\n",
               &path);
    assert_int_equal(aka_plan_reviewer_tokens(dir.buf), 1920);
    strbuf_release(&path);
    strbuf_release(&dir);
}

/* The production reviewer's verdict schema (policy_review.c): only a complete verdict whose
 * every check passes is a pass; anything incomplete is malformed. */
static json_t *verdict(const char *v, const char *decision, const char *skip)
{
    json_t *checks = json_array();
    for (size_t i = 0; aka_policy_review_checks[i]; i++)
        if (!skip || strcmp(skip, aka_policy_review_checks[i]) != 0)
            json_array_append_new(checks,
                                  json_pack("{s:s, s:s, s:s, s:[s]}", "category",
                                            aka_policy_review_checks[i], "decision", decision,
                                            "reason", "r", "evidence", "candidate/kernel.py:3"));
    return json_pack("{s:s, s:s, s:o}", "verdict", v, "summary", "s", "checks", checks);
}

static void test_policy_verdict(void **state)
{
    (void)state;
    char why[256];
    bool pass = false;
    json_t *d = verdict("pass", "pass", NULL);
    assert_int_equal(aka_policy_verdict_check(d, &pass, why, sizeof(why)), 0);
    assert_true(pass);
    json_decref(d);
    d = verdict("pass", "reject", NULL); /* "pass" over a rejected check is no pass */
    assert_int_equal(aka_policy_verdict_check(d, &pass, why, sizeof(why)), 0);
    assert_false(pass);
    json_decref(d);
    d = verdict("reject", "pass", NULL);
    assert_int_equal(aka_policy_verdict_check(d, &pass, why, sizeof(why)), 0);
    assert_false(pass);
    json_decref(d);
    d = verdict("pass", "pass", "compute_provenance");
    assert_int_equal(aka_policy_verdict_check(d, &pass, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "compute_provenance"));
    json_decref(d);
    d = verdict("maybe", "pass", NULL);
    assert_int_equal(aka_policy_verdict_check(d, &pass, why, sizeof(why)), -1);
    json_decref(d);
    d = verdict("pass", "fine", NULL);
    assert_int_equal(aka_policy_verdict_check(d, &pass, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "checks[0]"));
    json_decref(d);
    d = json_pack("[]");
    assert_int_equal(aka_policy_verdict_check(d, &pass, why, sizeof(why)), -1);
    json_decref(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_final_message),
        cmocka_unit_test(test_cache_and_ledger),
        cmocka_unit_test(test_policy_verdict),
    };
    return cmocka_run_group_tests(tests, aka_scratch_setup, aka_scratch_teardown);
}
