/*
 * test_agents.c — the agent runtime's pure pieces: each backend's stream
 * parser on recorded streams (tests/fixtures/agents/), the Codex rollout
 * ledger, command lines fresh and resume, settings precedence, token usage
 * rules, phase attribution, the guard's argv and Python rules, and briefs.
 */
#include "aka_test.h"

#include "agents/adapters.h"
#include "agents/agents.h"
#include "base/fs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIXTURES AKA_SOURCE_DIR "/tests/fixtures/agents/"

static void parse_fixture(const struct aka_adapter *a, const char *name, struct aka_agent_stream *s)
{
    struct aka_err err = AKA_ERR_INIT;
    aka_agent_stream_init(s);
    assert_int_equal(aka_agent_parse_file(a, name, s, &err), 0);
}

static size_t count_kind(const struct aka_agent_stream *s, enum aka_event_kind k)
{
    size_t n = 0;
    for (size_t i = 0; i < s->events.n; i++)
        n += s->events.v[i].kind == k;
    return n;
}

static void assert_usage(const struct aka_token_usage *u, long long in, long long out, long long cr,
                         long long cw, long long total, enum aka_token_measurement m)
{
    assert_int_equal(u->input, in);
    assert_int_equal(u->output, out);
    assert_int_equal(u->cache_read, cr);
    assert_int_equal(u->cache_write, cw);
    assert_int_equal(u->total, total);
    assert_int_equal(u->measurement, m);
}

/* ---- parsers ---------------------------------------------------------------- */

static void test_claude_stream(void **state)
{
    struct aka_agent_stream s;
    (void)state;
    parse_fixture(&aka_adapter_claude, FIXTURES "claude_stream.jsonl", &s);
    assert_usage(&s.terminal, 40, 2100, 300000, 12000, 314140, AKA_TOKENS_EXACT);
    /* msg_01A appears twice (one line per content block) and counts once. */
    assert_int_equal(count_kind(&s, AKA_EV_USAGE_DELTA), 4);
    assert_int_equal(s.events.v[0].usage.total, 14960);
    /* The errored tool result and the receipt in assistant text are not markers. */
    assert_int_equal(count_kind(&s, AKA_EV_PHASE_MARKER), 2);
    assert_true(s.events.v[1].kind == AKA_EV_PHASE_MARKER && s.events.v[1].start);
    assert_string_equal(s.events.v[1].phase, "profile");
    assert_false(s.transient_api_error);
    json_t *p = aka_agent_phase_tokens(&s);
    json_t *profile = json_object_get(json_object_get(p, "phases"), "profile");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(profile, "usage"), "total_tokens")),
        14960 + 15134 + 15112);
    assert_string_equal(json_string_value(json_object_get(p, "reconciliation_status")),
                        "reconciled");
    assert_string_equal(json_string_value(json_object_get(p, "measurement")), "partial");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(p, "orchestration"), "total_tokens")),
        314140 - 45206);
    json_decref(p);
    aka_agent_stream_release(&s);
}

static void test_claude_model_usage(void **state)
{
    struct aka_agent_stream s;
    (void)state;
    parse_fixture(&aka_adapter_claude, FIXTURES "claude_model_usage.jsonl", &s);
    assert_usage(&s.terminal, 110, 220, 3000, 405, 3735, AKA_TOKENS_EXACT);
    aka_agent_stream_release(&s);
}

static void test_claude_partial(void **state)
{
    struct aka_agent_stream s;
    (void)state;
    parse_fixture(&aka_adapter_claude, FIXTURES "claude_no_result.jsonl", &s);
    /* No result: the de-duplicated deltas, labelled partial; a boolean or a
     * negative count is "not reported", never a number. */
    assert_int_equal(s.terminal.total, 101);
    assert_int_equal(s.terminal.measurement, AKA_TOKENS_PARTIAL);
    assert_int_equal(s.terminal.output, -1);
    assert_true(s.transient_api_error);
    aka_agent_stream_release(&s);
}

static void test_qoder_zero_usage(void **state)
{
    struct aka_agent_stream s;
    (void)state;
    parse_fixture(&aka_adapter_qodercli, FIXTURES "qoder_zero.jsonl", &s);
    assert_int_equal(s.terminal.measurement, AKA_TOKENS_UNAVAILABLE);
    assert_int_equal(s.terminal.total, -1);
    assert_int_equal(s.events.n, 2);
    assert_int_equal(count_kind(&s, AKA_EV_PHASE_MARKER), 2);
    assert_true(strvec_find(&s.observations, "qodercli_usage_not_reported") >= 0);
    aka_agent_stream_release(&s);
}

static void test_codex_stdout(void **state)
{
    struct aka_agent_stream s;
    (void)state;
    parse_fixture(&aka_adapter_codex, FIXTURES "codex_stream.jsonl", &s);
    assert_string_equal(s.session_id, "0199a8c2-6b1e-7c30-9f4e-2d5b8a1c0e77");
    /* Cached input is inside the input count: the total is input + output. */
    assert_usage(&s.terminal, 52000, 3100, 44000, -1, 55100, AKA_TOKENS_EXACT);
    assert_false(s.usage_delta_capable);
    assert_int_equal(count_kind(&s, AKA_EV_PHASE_MARKER), 2);
    json_t *p = aka_agent_phase_tokens(&s);
    assert_string_equal(json_string_value(json_object_get(p, "measurement")), "unavailable");
    assert_string_equal(json_string_value(json_array_get(json_object_get(p, "reason_codes"), 0)),
                        "backend_has_no_usage_delta");
    json_decref(p);
    aka_agent_stream_release(&s);
}

static void test_pi_stream(void **state)
{
    struct aka_agent_stream s;
    (void)state;
    parse_fixture(&aka_adapter_pi, FIXTURES "pi_stream.jsonl", &s);
    assert_usage(&s.terminal, 1700, 400, 8000, 20, 10120, AKA_TOKENS_EXACT);
    assert_int_equal(count_kind(&s, AKA_EV_USAGE_DELTA), 2);
    assert_int_equal(count_kind(&s, AKA_EV_PHASE_MARKER), 2);
    assert_int_equal(count_kind(&s, AKA_EV_TERMINAL_USAGE), 1);
    aka_agent_stream_release(&s);
    const char *unsettled = "{\"type\":\"message_end\",\"message\":{\"role\":\"assistant\","
                            "\"usage\":{\"input\":1,\"output\":2}}}\n";
    aka_agent_stream_init(&s);
    aka_agent_parse_buf(&aka_adapter_pi, unsettled, strlen(unsettled), &s);
    assert_int_equal(s.terminal.total, 3);
    assert_int_equal(s.terminal.measurement, AKA_TOKENS_PARTIAL);
    assert_int_equal(count_kind(&s, AKA_EV_TERMINAL_USAGE), 0);
    aka_agent_stream_release(&s);
}

/* ---- the Codex rollout ledger ------------------------------------------------ */

/* A CODEX_HOME holding the fixture rollout for the fixture's thread. */
static void make_codex_home(struct strbuf *home)
{
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf dir = STRBUF_INIT, file = STRBUF_INIT;
    assert_int_equal(aka_make_temp_dir(NULL, "aka-test-codex", home, &err), 0);
    aka_path_join(&dir, home->buf, "sessions/2026/01/02");
    assert_int_equal(aka_mkdir_p(dir.buf, 0755, &err), 0);
    aka_path_join(&file, dir.buf,
                  "rollout-2026-01-02T00-00-00-0199a8c2-6b1e-7c30-9f4e-2d5b8a1c0e77.jsonl");
    assert_int_equal(aka_copy_file(FIXTURES "codex_rollout.jsonl", file.buf, &err), 0);
    strbuf_release(&dir);
    strbuf_release(&file);
}

static void test_codex_ledger(void **state)
{
    struct strbuf home = STRBUF_INIT;
    struct aka_codex_ledger l;
    struct aka_agent_stream s;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    make_codex_home(&home);
    parse_fixture(&aka_adapter_codex, FIXTURES "codex_stream.jsonl", &s);
    aka_codex_ledger_prepare(&l, home.buf, NULL, 0);
    assert_int_equal(aka_codex_ledger_apply(&l, "/", &s), 0);
    /* Two calls (the repeated cumulative record is skipped), markers after
     * the call that printed them, and this turn's sum as the terminal. */
    assert_int_equal(count_kind(&s, AKA_EV_USAGE_DELTA), 2);
    assert_int_equal(s.events.v[0].usage.total, 21000);
    assert_int_equal(s.events.v[1].usage.total, 34100);
    assert_int_equal(count_kind(&s, AKA_EV_PHASE_MARKER), 2);
    assert_usage(&s.terminal, 52000, 3100, 44000, 0, 55100, AKA_TOKENS_EXACT);
    assert_true(s.usage_delta_observed);
    aka_agent_stream_release(&s);

    /* A stdout total the ledger cannot account for: stdout-only, labelled. */
    const char *other = "{\"type\":\"thread.started\",\"thread_id\":"
                        "\"0199a8c2-6b1e-7c30-9f4e-2d5b8a1c0e77\"}\n"
                        "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,"
                        "\"output_tokens\":1}}\n";
    aka_agent_stream_init(&s);
    aka_agent_parse_buf(&aka_adapter_codex, other, strlen(other), &s);
    aka_codex_ledger_prepare(&l, home.buf, NULL, 0);
    assert_int_equal(aka_codex_ledger_apply(&l, "/", &s), -1);
    assert_true(strvec_find(&s.observations, "codex_ledger_unavailable:stdout_mismatch") >= 0);
    assert_int_equal(s.terminal.total, 2);
    aka_agent_stream_release(&s);

    /* Resuming: only what the turn appended counts. */
    aka_codex_ledger_prepare(&l, home.buf, "0199a8c2-6b1e-7c30-9f4e-2d5b8a1c0e77", 0);
    assert_int_equal(l.cumulative.total, 55100);
    aka_agent_stream_init(&s);
    assert_int_equal(aka_codex_ledger_apply(&l, "/", &s), -1);
    assert_true(strvec_find(&s.observations, "codex_ledger_unavailable:nothing_new") >= 0);
    aka_agent_stream_release(&s);
    assert_int_equal(aka_remove_tree(home.buf, &err), 0);
    strbuf_release(&home);
}

/* ---- command lines -------------------------------------------------------------- */

static char *joined(const struct aka_adapter *a, const struct aka_cmdline *c)
{
    struct strvec argv = STRVEC_INIT;
    struct strbuf out = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    if (a->build_argv(c, &argv, &err) < 0)
        strbuf_addf(&out, "ERROR: %s", err.msg);
    for (size_t i = 0; !err.code && i < argv.n; i++)
        strbuf_addf(&out, "%s%s", i ? " " : "", argv.v[i]);
    strvec_clear(&argv);
    return strbuf_detach(&out, NULL);
}

#define SID "11111111-2222-4333-8444-555555555555"

static void expect_argv(const struct aka_adapter *a, const struct aka_cmdline *c, const char *want)
{
    char *got = joined(a, c);
    assert_string_equal(got, want);
    free(got);
}

static void test_command_lines(void **state)
{
    (void)state;
    struct aka_cmdline c = {.cli = "claude", .prompt = "P", .session_id = SID, .effort = "max"};
    expect_argv(&aka_adapter_claude, &c,
                "claude --print --verbose --dangerously-skip-permissions --output-format "
                "stream-json --session-id " SID " --effort max P");
    c.resume_id = SID;
    c.settings = "{\"a\":1}";
    expect_argv(&aka_adapter_claude, &c,
                "claude --print --verbose --dangerously-skip-permissions --output-format "
                "stream-json --resume " SID " --effort max --settings {\"a\":1} P");
    c.prompt_mode = AKA_PROMPT_STDIN;
    c.settings = NULL;
    expect_argv(&aka_adapter_claude, &c,
                "claude --print --verbose --dangerously-skip-permissions --output-format "
                "stream-json --resume " SID " --effort max");

    struct aka_cmdline q = {.cli = "qodercli", .prompt = "P", .session_id = SID, .effort = "high"};
    expect_argv(&aka_adapter_qodercli, &q,
                "qodercli --print --dangerously-skip-permissions --output-format stream-json "
                "--session-id " SID " --no-session-persistence --reasoning-effort high P");
    q.resume_id = SID;
    expect_argv(&aka_adapter_qodercli, &q, "ERROR: qodercli: sessions cannot be resumed");

    struct aka_cmdline x = {
        .cli = "codex", .prompt = "P", .effort = "xhigh", .settings = "[\"model=\\\"o3\\\"\"]"};
    expect_argv(&aka_adapter_codex, &x,
                "codex exec --json --color never --dangerously-bypass-approvals-and-sandbox -c "
                "model_reasoning_effort=\"xhigh\" -c model=\"o3\" P");
    x.resume_id = "0199a8c2-6b1e-7c30-9f4e-2d5b8a1c0e77";
    x.settings = NULL;
    x.prompt_mode = AKA_PROMPT_STDIN;
    expect_argv(&aka_adapter_codex, &x,
                "codex exec resume --json --dangerously-bypass-approvals-and-sandbox -c "
                "model_reasoning_effort=\"xhigh\" 0199a8c2-6b1e-7c30-9f4e-2d5b8a1c0e77 -");
    x.settings = "{\"k\":[1,true]}";
    x.resume_id = NULL;
    x.prompt_mode = AKA_PROMPT_ARGV;
    expect_argv(&aka_adapter_codex, &x,
                "codex exec --json --color never --dangerously-bypass-approvals-and-sandbox -c "
                "model_reasoning_effort=\"xhigh\" -c k=[1,true] P");
    x.settings = "{\"k\":null}";
    char *bad = joined(&aka_adapter_codex, &x);
    assert_non_null(strstr(bad, "ERROR: ATREX_CODEX_SESSION_SETTINGS: k"));
    free(bad);

    struct aka_cmdline p = {.cli = "pi",
                            .prompt = "/b.md",
                            .session_id = SID,
                            .effort = "low",
                            .settings = "{\"model\":\" m \",\"provider\":\"prov\"}",
                            .prompt_mode = AKA_PROMPT_FILE_REF};
    expect_argv(&aka_adapter_pi, &p,
                "pi --mode json --session-id " SID " --approve --thinking low --provider prov "
                "--model m @/b.md The attached file is your brief for this session. Follow it "
                "exactly.");
    p.settings = "{\"api_key\":\"x\"}";
    bad = joined(&aka_adapter_pi, &p);
    assert_non_null(strstr(bad, "ERROR: ATREX_PI_SESSION_SETTINGS: api_key: unknown key"));
    free(bad);
}

static void test_settings_precedence(void **state)
{
    (void)state;
    const char *own[] = {"ATREX_SESSION_SETTINGS=generic", "ATREX_CLAUDE_SESSION_SETTINGS=own",
                         NULL};
    const char *empty_own[] = {"ATREX_SESSION_SETTINGS=generic",
                               "ATREX_CLAUDE_SESSION_SETTINGS=", NULL};
    const char *removed[] = {"ATREX_SESSION_SETTINGS", NULL};
    assert_string_equal(aka_agent_settings(&aka_adapter_claude, own), "own");
    assert_string_equal(aka_agent_settings(&aka_adapter_claude, empty_own), "generic");
    setenv("ATREX_QODER_SESSION_SETTINGS", "from-env", 1);
    setenv("ATREX_SESSION_SETTINGS", "generic-env", 1);
    assert_string_equal(aka_agent_settings(&aka_adapter_qodercli, NULL), "from-env");
    assert_string_equal(aka_agent_settings(&aka_adapter_codex, NULL), "generic-env");
    assert_null(aka_agent_settings(&aka_adapter_codex, removed));
    unsetenv("ATREX_QODER_SESSION_SETTINGS");
    unsetenv("ATREX_SESSION_SETTINGS");
    assert_null(aka_agent_settings(&aka_adapter_pi, NULL));
    assert_true(aka_agent_effort_valid("xhigh"));
    assert_false(aka_agent_effort_valid("ultra"));
}

/* ---- usage, phases ------------------------------------------------------------ */

static void test_usage_rules(void **state)
{
    struct aka_token_usage sum, a = {1, 2, 3, 4, 10, AKA_TOKENS_EXACT}, b, d;
    (void)state;
    aka_token_usage_zero(&sum);
    aka_token_usage_add(&sum, &a);
    aka_token_usage_add(&sum, &a);
    assert_usage(&sum, 2, 4, 6, 8, 20, AKA_TOKENS_EXACT);
    aka_token_usage_unavailable(&b);
    aka_token_usage_add(&sum, &b); /* a dropped entry makes the sum a lower bound */
    assert_int_equal(sum.total, 20);
    assert_int_equal(sum.measurement, AKA_TOKENS_PARTIAL);
    b = (struct aka_token_usage){5, -1, 0, 0, 5, AKA_TOKENS_EXACT};
    aka_token_usage_add(&sum, &b);
    assert_int_equal(sum.output, -1);
    assert_int_equal(sum.total, 25);
    assert_int_equal(aka_usage_subtract(&a, &sum, &d), -1);
    assert_int_equal(aka_usage_subtract(&sum, &a, &d), 0);
    assert_int_equal(d.total, 15);
    json_t *j = aka_token_usage_to_json(&sum);
    assert_true(json_is_null(json_object_get(j, "output_tokens")));
    json_decref(j);
}

static void push_marker(struct aka_agent_stream *s, const char *phase, bool start)
{
    struct aka_agent_event e;
    memset(&e, 0, sizeof(e));
    e.kind = AKA_EV_PHASE_MARKER;
    e.start = start;
    snprintf(e.phase, sizeof(e.phase), "%s", phase);
    snprintf(e.marker_id, sizeof(e.marker_id), "m");
    VEC_PUSH(s->events, e);
}

static void push_delta(struct aka_agent_stream *s, long long n)
{
    struct aka_token_usage u = {n, 0, 0, 0, n, AKA_TOKENS_EXACT};
    aka_agent_stream_push_usage(s, AKA_EV_USAGE_DELTA, &u);
}

static const char *code_at(json_t *p, size_t i)
{
    return json_string_value(json_array_get(json_object_get(p, "reason_codes"), i));
}

static void test_phase_attribution(void **state)
{
    struct aka_agent_stream s;
    (void)state;
    aka_agent_stream_init(&s);
    s.usage_delta_capable = true;
    push_delta(&s, 10); /* the call that issues phase-start */
    push_marker(&s, "planning", true);
    push_delta(&s, 20);
    push_marker(&s, "planning", false);
    s.terminal = (struct aka_token_usage){30, 0, 0, 0, 30, AKA_TOKENS_EXACT};
    json_t *p = aka_agent_phase_tokens(&s);
    assert_string_equal(json_string_value(json_object_get(p, "measurement")), "exact");
    assert_true(json_real_value(json_object_get(p, "coverage")) == 1.0);
    json_decref(p);

    push_marker(&s, "research", true);
    push_marker(&s, "implementation", true); /* overlapping: nothing inside counts */
    push_delta(&s, 5);
    push_marker(&s, "implementation", false);
    push_marker(&s, "research", false);
    push_marker(&s, "benchmark", false); /* orphan */
    push_marker(&s, "dancing", true);    /* not a phase */
    s.terminal.total = 40;
    s.terminal.input = 40;
    p = aka_agent_phase_tokens(&s);
    assert_string_equal(code_at(p, 0), "overlapping_phase");
    assert_string_equal(code_at(p, 1), "orphan_phase_end");
    assert_string_equal(code_at(p, 2), "invalid_phase_marker");
    assert_string_equal(json_string_value(json_object_get(p, "measurement")), "partial");
    json_decref(p);

    s.terminal.total = 1; /* deltas beyond the terminal: inconsistent, not guessed */
    s.terminal.input = 1;
    p = aka_agent_phase_tokens(&s);
    assert_string_equal(json_string_value(json_object_get(p, "reconciliation_status")),
                        "inconsistent");
    json_decref(p);
    aka_agent_stream_release(&s);
}

/* ---- the guard's rules --------------------------------------------------------- */

static const char *check_words(const struct aka_guard_config *c, const char *line)
{
    /* Split on single spaces, with '|' standing for a space inside one word. */
    static char buf[1024];
    const char *argv[64];
    size_t n = 0;
    snprintf(buf, sizeof(buf), "%s", line);
    for (char *tok = strtok(buf, " "); tok && n < 63; tok = strtok(NULL, " ")) {
        for (char *p = tok; *p; p++)
            if (*p == '|')
                *p = ' ';
        argv[n++] = tok;
    }
    argv[n] = NULL;
    return aka_guard_check_argv(argv, n, c);
}

static void test_guard_rules(void **state)
{
    struct aka_guard_config c;
    const char *env[] = {"ATREX_PROTECTED_GATEWAY_STATE_DIR=/srv/gw",
                         "ATREX_PROTECTED_GATEWAY_SCREEN=gwscreen",
                         "ATREX_PROTECTED_GATEWAY_CONFIG=/srv/gw/gateway.json", NULL};
    (void)state;
    aka_guard_config_init(&c, env);
    assert_int_equal(c.config_files.n, 1);
    static const char *const refused[][2] = {
        {"pip install x", "package installation"},
        {"/usr/bin/pip3.11 -q install -r req.txt", "package installation"},
        {"python3 -m pip install x", "package installation"},
        {"/usr/bin/python3 /usr/local/bin/pip install x", "package installation"},
        {"uv pip install torch", "package installation"},
        {"conda install numpy", "package installation"},
        {"apt-get -y install gcc", "package installation"},
        {"npm install -g left-pad", "package installation"},
        {"cargo install ripgrep", "package installation"},
        {"python3 tools/sandbox.py -- pip install x", "package installation"},
        {"bash -c cd|/tmp|&&|PIP=1|pip|install|x", "package installation"},
        {"sh -lc echo|hi;|env|FOO=1|timeout|-s|9|10|pip|install|y", "package installation"},
        {"bash -c eval|'pip|install|z'", "package installation"},
        {"nvcc -O3 kernel.cu", "build tool"},
        {"ncu --set full ./bench", "profiler"},
        {"/opt/nvidia/nsys profile ./a.out", "profiler"},
        {"rocprofv3 --stats ./a.out", "profiler"},
        {"nvidia-smi -i 0 -pl 200", "GPU state"},
        {"nvidia-smi --lock-gpu-clocks=1400", "GPU state"},
        {"python3 kernel.py", "kernel/evaluator"},
        {"python -u test_kernel.py --shape 1", "kernel/evaluator"},
        {"./test_kernel --shape 1", "kernel/evaluator"},
        {"bash ./profile_kernel.sh", "profiler wrapper"},
        {"python3 -c import|kernel", "kernel imported"},
        {"python3 -c import|torch;|torch.cuda.synchronize()", "CUDA used"},
        {"python3 -c import|flashinfer", "JIT-capable"},
        {"screen -S gwscreen -X quit", "gateway"},
        {"rm -rf /srv/gw", "gateway"},
        {"dd if=/dev/zero of=/srv/gw/gateway.json", "gateway"},
        {"sed -i s/a/b/ /srv/gw/gateway.json", "gateway"},
        {"pkill -f local_gateway", "gateway"},
        {"curl -X POST http://127.0.0.1:8765/v1/jobs/abc/cancel", "gateway"},
        {"aka gateway serve --listen 127.0.0.1:1", "gateway"},
        {"/tmp/pip-install-abc/build/x/gcc -c x.c", "package-manager temporary tree"},
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        const char *why = check_words(&c, refused[i][0]);
        if (!why || !strstr(why, refused[i][1]))
            fail_msg("%s: got %s", refused[i][0], why ? why : "(allowed)");
    }
    static const char *const allowed[] = {
        "nvcc --version",
        "ncu --help",
        "python3 -c print('import|kernel')",
        "python3 tools/sandbox.py -- python test_kernel.py",
        "pip --version",
        "pip list",
        "git commit -m pip|install|x",
        "bash -c echo|'pip|install|x'",
        "nvidia-smi --query-gpu=name --format=csv",
        "cat /srv/gw/gateway.json",
        "aka gateway status",
        "aka eval --shape-id 3",
        "aka profile --level sol --kernel-regex add --shape-id 3",
        "python3 bench.py",
        "rm -rf /srv/gw-other",
        "grep -r ncu .",
    };
    for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
        const char *why = check_words(&c, allowed[i]);
        if (why)
            fail_msg("%s: refused (%s)", allowed[i], why);
    }
    aka_guard_config_release(&c);
}

/* The AMD/ROCm rules: HIP builds, ROCm profilers, rocm-smi/amd-smi state changes and HIP
 * from Python are refused; device queries and harmless look-alikes are not. The live checks
 * (a process mapping libamdhip64/libhsa-runtime64, an ELF with a .hip_fatbin section) are in
 * tests/integration/agents_guard.sh. */
static void test_rocm_argv_rules(void **state)
{
    struct aka_guard_config c;
    const char *env[] = {"ATREX_PROTECTED_GATEWAY_STATE_DIR=/srv/gw", NULL};
    (void)state;
    aka_guard_config_init(&c, env);
    static const char *const refused[][2] = {
        {"hipcc -O3 --offload-arch=gfx942 kernel.hip", "build tool"},
        {"/opt/rocm/bin/hipcc kernel.cpp -o k", "build tool"},
        {"amdclang++ -x hip --offload-arch=gfx90a k.cpp", "build tool"},
        {"clang++ -xhip k.cpp", "build tool"},
        {"rocprof --stats ./a.out", "profiler"},
        {"rocprofv2 --kernel-trace ./a.out", "profiler"},
        {"/opt/rocm/bin/rocprofv3 --kernel-trace -- ./a.out", "profiler"},
        {"omniperf profile -n x -- ./a.out", "profiler"},
        {"rocprof-compute profile -n x -- ./a.out", "profiler"},
        {"rocprof-sys-run -- ./a.out", "profiler"},
        {"omnitrace-run -- ./a.out", "profiler"},
        {"rocm-smi --setperfdeterminism 1900", "rocm-smi"},
        {"rocm-smi -d 0 --setsclk 7", "rocm-smi"},
        {"rocm-smi --resetclocks", "rocm-smi"},
        {"rocm-smi --setcomputepartition=CPX", "rocm-smi"},
        {"rocm-smi --gpureset -d 1", "rocm-smi"},
        {"amd-smi set -g 0 --perf-determinism 1900", "amd-smi"},
        {"amd-smi reset -g 0 --clocks", "amd-smi"},
        {"bash -c cd|/tmp|&&|rocprofv3|--stats|./bench", "profiler"},
        {"python3 -c from|hip|import|hip;|hip.hipInit(0)", "HIP used"},
        {"python3 -c import|hiprtc", "HIP used"},
        {"python3 -c from|numba|import|hip", "HIP used"},
        /* The ROCm build of torch keeps torch.cuda (HIP underneath): same rule. */
        {"python3 -c import|torch;|torch.cuda.synchronize()", "CUDA used"},
        {"python3 -c import|torch;x=torch.ones(2,device='cuda')", "CUDA used"},
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        const char *why = check_words(&c, refused[i][0]);
        if (!why || !strstr(why, refused[i][1]))
            fail_msg("%s: got %s", refused[i][0], why ? why : "(allowed)");
    }
    static const char *const allowed[] = {
        "rocm-smi",
        "rocm-smi --showuse --showmemuse",
        "rocm-smi --showproductname",
        "amd-smi list",
        "amd-smi static -g 0",
        "amd-smi metric",
        "rocminfo",
        "hipcc --version",
        "rocprofv3 --help",
        "clang++ -O2 host.cpp",
        "python3 -c import|torch;print(torch.version.hip)",
        "python3 -c print('import|hip')",
        "python3 -c import|hipster",
        "grep -r rocprofv3 .",
    };
    for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
        const char *why = check_words(&c, allowed[i]);
        if (why)
            fail_msg("%s: refused (%s)", allowed[i], why);
    }
    aka_guard_config_release(&c);
}

static void test_gpu_query_tools(void **state)
{
    (void)state;
    const char *rocminfo[] = {"/opt/rocm/bin/rocminfo", NULL};
    const char *enumerator[] = {"rocm_agent_enumerator", "-t", "GPU", NULL};
    const char *program[] = {"./bench", NULL};
    const char *python[] = {"python3", "rocminfo", NULL};
    assert_true(aka_guard_gpu_query_tool(rocminfo, 1));
    assert_true(aka_guard_gpu_query_tool(enumerator, 3));
    assert_false(aka_guard_gpu_query_tool(program, 1));
    assert_false(aka_guard_gpu_query_tool(python, 2));
    assert_false(aka_guard_gpu_query_tool(NULL, 0));
}

static void test_guard_python(void **state)
{
    (void)state;
    assert_non_null(aka_guard_check_python_code("from kernel import run"));
    assert_non_null(aka_guard_check_python_code("import os, kernel as k"));
    assert_non_null(aka_guard_check_python_code("__import__('kernel')"));
    assert_non_null(aka_guard_check_python_code("import importlib\nimportlib.import_module("
                                                "'flash_attn.ops')"));
    assert_non_null(aka_guard_check_python_code("exec('import vllm')"));
    assert_non_null(aka_guard_check_python_code("exec(\"exec('import kernel')\")"));
    assert_non_null(aka_guard_check_python_code("import torch\nx = torch.ones(3).cuda()"));
    assert_non_null(aka_guard_check_python_code("import torch\nx = torch.ones(3, device='cuda')"));
    assert_non_null(aka_guard_check_python_code("from torch import cuda"));
    assert_null(aka_guard_check_python_code("print('import kernel')"));
    assert_null(aka_guard_check_python_code("# import kernel\nx = 1"));
    assert_null(aka_guard_check_python_code("s = '''\nimport kernel\n'''"));
    assert_null(aka_guard_check_python_code("print('cuda')"));
    assert_null(aka_guard_check_python_code("import kernels_lib, json"));
    assert_null(aka_guard_check_python_code("from . import kernel"));
}

/* ---- briefs ---------------------------------------------------------------------- */

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_brief_render(void **state)
{
    struct strbuf dir = STRBUF_INIT, path = STRBUF_INIT, out = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    assert_int_equal(aka_make_temp_dir(NULL, "aka-test-brief", &dir, &err), 0);
    aka_path_join(&path, dir.buf, "t.md");
    const struct aka_brief_var vars[] = {{"op", "matmul"}, {"n", "{{op}}"}, {NULL, NULL}};
    write_text(path.buf, "Optimize {{op}} ({{n}}).\n");
    assert_int_equal(aka_brief_render(path.buf, vars, &out, &err), 0);
    assert_string_equal(out.buf, "Optimize matmul ({{op}}).\n");
    write_text(path.buf, "line one\nuse {{nope}}\n");
    assert_int_equal(aka_brief_render(path.buf, vars, &out, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "t.md:2: unknown placeholder {{nope}}"));
    write_text(path.buf, "broken {{op\n");
    assert_int_equal(aka_brief_render(path.buf, vars, &out, &err), -1);
    assert_non_null(strstr(err.msg, "malformed placeholder"));
    /* Every bundled template renders with the placeholders its README lists. */
    static const char *const names[] = {
        "v1.md",     "fast.md", "full.md", "goal.md", "policy_review.md", "problem_authoring.md",
        "resume.md", NULL};
    const struct aka_brief_var all[] = {
        {"operator", "o"},       {"framework", "f"},      {"platform", "p"},
        {"mode", "m"},           {"kernel_file", "k"},    {"mode_policy", "mp"},
        {"skills_hint", "s"},    {"notes", "n"},          {"episode", "1"},
        {"memory_version", "2"}, {"trials", "5"},         {"incumbent_summary", "i"},
        {"goal", "g"},           {"stall_summary", "x"},  {"candidate_dir", "c"},
        {"verdict_file", "v"},   {"op_dir", "d"},         {"output_file", "o"},
        {"diagnosis", "why"},    {"memory_digest", "md"}, {NULL, NULL}};
    for (size_t i = 0; names[i]; i++) {
        aka_path_join(&path, AKA_SOURCE_DIR "/runtime/prompts", names[i]);
        if (aka_brief_render(path.buf, all, &out, &err) < 0)
            fail_msg("%s", err.msg);
    }
    assert_int_equal(aka_remove_tree(dir.buf, &err), 0);
    strbuf_release(&dir);
    strbuf_release(&path);
    strbuf_release(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_claude_stream),       cmocka_unit_test(test_claude_model_usage),
        cmocka_unit_test(test_claude_partial),      cmocka_unit_test(test_qoder_zero_usage),
        cmocka_unit_test(test_codex_stdout),        cmocka_unit_test(test_pi_stream),
        cmocka_unit_test(test_codex_ledger),        cmocka_unit_test(test_command_lines),
        cmocka_unit_test(test_settings_precedence), cmocka_unit_test(test_usage_rules),
        cmocka_unit_test(test_phase_attribution),   cmocka_unit_test(test_guard_rules),
        cmocka_unit_test(test_rocm_argv_rules),     cmocka_unit_test(test_gpu_query_tools),
        cmocka_unit_test(test_guard_python),        cmocka_unit_test(test_brief_render),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
