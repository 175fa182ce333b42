/*
 * runtime.c — one agent invocation, start to finish (aka_agent_run).
 *
 *   validate the request → build the command line (prompt on argv, on stdin
 *   or by file reference, by size) and the environment → spawn through
 *   base/proc in a new session, stdin /dev/null (or the brief), stdout and
 *   stderr into capped files of the capture directory → guard the process
 *   tree while it runs → end whatever it left behind → parse the stream →
 *   write command.json, events.jsonl and result.json next to the output.
 *
 * stdout is parsed after exit, not streamed (reference §0): a session's
 * tokens are known once it ends, and budgets are checked between episodes.
 * The capture files are the record; the result struct is their summary.
 */
#include "agents/internal.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define STDOUT_CAP ((size_t)256 << 20)
#define STDERR_CAP ((size_t)16 << 20)
#define BRIEF_MAX  ((size_t)16 << 20)

void aka_agent_new_uuid(char out[37])
{
    unsigned char b[16];
    if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
        struct timespec ts; /* no entropy source: still unique enough for a session id */
        clock_gettime(CLOCK_REALTIME, &ts);
        for (size_t i = 0; i < sizeof(b); i++)
            b[i] = (unsigned char)((ts.tv_nsec >> (i % 4 * 8)) ^ (getpid() >> (i % 2 * 8)) ^ i);
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

/* Everything one invocation needs, built before the spawn. */
struct invocation {
    const struct aka_adapter *adapter;
    const struct aka_agent_request *req;
    char session_id[256];
    struct strbuf prompt, out_file, err_file, trace_file, guard_script, aka_bin;
    struct strbuf sandbox_ctl; /* the agent sandbox's generated /etc ("" unconfined) */
    enum aka_prompt_mode mode;
    struct strvec argv, env;
    struct aka_codex_ledger ledger;
    bool out_truncated;
};

static void invocation_release(struct invocation *iv)
{
    strbuf_release(&iv->prompt);
    strbuf_release(&iv->out_file);
    strbuf_release(&iv->err_file);
    strbuf_release(&iv->trace_file);
    strbuf_release(&iv->guard_script);
    strbuf_release(&iv->aka_bin);
    if (iv->sandbox_ctl.len) {
        struct aka_err ignored = AKA_ERR_INIT;
        aka_remove_tree(iv->sandbox_ctl.buf, &ignored);
    }
    strbuf_release(&iv->sandbox_ctl);
    strvec_clear(&iv->argv);
    strvec_clear(&iv->env);
}

static int check_request(const struct aka_agent_request *req, struct aka_err *err)
{
    if (!req->backend || !aka_adapter_find(req->backend))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "agent backend %s%s%s: expected one of claude, qodercli, codex, pi, "
                           "builtin",
                           req->backend ? "\"" : "", req->backend ? req->backend : "(none)",
                           req->backend ? "\"" : "");
    if (!req->worktree || !aka_is_dir(req->worktree))
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: the agent's worktree is not a directory",
                           req->worktree ? req->worktree : "(none)");
    if (!req->brief_file || !aka_is_file(req->brief_file))
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: the brief is not a readable file",
                           req->brief_file ? req->brief_file : "(none)");
    if (!req->capture_dir || !*req->capture_dir)
        return aka_err_set(err, AKA_EXIT_USAGE, "agent request: capture_dir is required");
    if (req->effort && !aka_agent_effort_valid(req->effort))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "effort \"%s\": expected low, medium, high, xhigh or max", req->effort);
    if (req->timeout_s < 0)
        return aka_err_set(err, AKA_EXIT_USAGE, "agent timeout: expected >= 0 seconds");
    return 0;
}

/* The asset tree's session guard script (BASH_ENV). */
static int find_guard(const struct aka_agent_request *req, struct strbuf *out, struct aka_err *err)
{
    const char *root = req->repo_root ? req->repo_root : getenv("ATREX_AKA_HOME");
    if (!root || !*root)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "agent request: repo_root is not set and neither is ATREX_AKA_HOME; "
                           "the session guard cannot be located");
    aka_path_join(out, root, "runtime/guard/session_guard.sh");
    return 0;
}

/* Argv, stdin or a file reference, by size and by what the CLI supports. */
static int choose_prompt(struct invocation *iv, struct aka_err *err)
{
    const struct aka_agent_request *req = iv->req;
    struct strbuf text = STRBUF_INIT;
    if (aka_read_file(req->brief_file, &text, BRIEF_MAX, err) < 0)
        return -1;
    bool fits = text.len <= AKA_ARGV_PROMPT_MAX && memchr(text.buf, '\0', text.len) == NULL;
    iv->mode = iv->adapter->brief_by_path ? AKA_PROMPT_FILE_REF
               : fits                     ? AKA_PROMPT_ARGV
                                          : iv->adapter->large_mode;
    int rc = 0;
    if (iv->mode == AKA_PROMPT_ARGV)
        strbuf_addstr(&iv->prompt, text.buf);
    else
        rc = aka_realpath(req->brief_file, &iv->prompt, err);
    strbuf_release(&text);
    return rc;
}

static void choose_session_id(struct invocation *iv)
{
    const struct aka_agent_request *req = iv->req;
    if (req->resume_session_id)
        snprintf(iv->session_id, sizeof(iv->session_id), "%s", req->resume_session_id);
    else if (req->session_id && *req->session_id)
        snprintf(iv->session_id, sizeof(iv->session_id), "%s", req->session_id);
    else if (iv->adapter->own_session_id)
        aka_agent_new_uuid(iv->session_id);
}

static void codex_home(const struct aka_agent_request *req, struct strbuf *out)
{
    const char *home = aka_agent_env_lookup(req->env, "CODEX_HOME");
    if (home && *home)
        strbuf_addstr(out, home);
    else
        strbuf_addf(out, "%s/.codex", getenv("HOME") ? getenv("HOME") : "");
}

static int prepare(struct invocation *iv, const struct aka_agent_request *req, struct aka_err *err)
{
    memset(iv, 0, sizeof(*iv));
    struct strbuf *bufs[] = {&iv->prompt,       &iv->out_file, &iv->err_file,   &iv->trace_file,
                             &iv->guard_script, &iv->aka_bin,  &iv->sandbox_ctl};
    for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
        strbuf_init(bufs[i], 0);
    iv->req = req;
    iv->adapter = aka_adapter_find(req->backend);
    if (check_request(req, err) < 0 || aka_mkdir_p(req->capture_dir, 0755, err) < 0 ||
        choose_prompt(iv, err) < 0 || find_guard(req, &iv->guard_script, err) < 0)
        return -1;
    choose_session_id(iv);
    aka_path_join(&iv->out_file, req->capture_dir, "stdout.jsonl");
    aka_path_join(&iv->err_file, req->capture_dir, "stderr.txt");
    const char *trace = aka_agent_env_lookup(req->env, "ATREX_AKA_TRACE_FILE");
    if (trace && *trace)
        strbuf_addstr(&iv->trace_file, trace);
    else
        aka_path_join(&iv->trace_file, req->capture_dir, "trace.jsonl");
    char exe[4096];
    aka_agent_self_exe(exe, sizeof(exe));
    strbuf_addstr(&iv->aka_bin, exe);
    struct aka_cmdline c = {
        .cli = req->cli_path ? req->cli_path : req->backend,
        .prompt = iv->prompt.buf,
        .prompt_mode = iv->mode,
        .session_id = iv->session_id,
        .resume_id = req->resume_session_id,
        .effort = req->effort ? req->effort : "max",
        .settings = aka_agent_settings(iv->adapter, req->env),
        .model = req->model,
        .aka_bin = iv->aka_bin.buf,
    };
    if (iv->adapter->build_argv(&c, &iv->argv, err) < 0)
        return aka_err_prefix(err, "%s", req->backend);
    if (req->confine && req->confine->mode == AKA_AGENT_SANDBOX_BWRAP &&
        aka_agent_confine(req, iv->mode == AKA_PROMPT_FILE_REF ? iv->prompt.buf : NULL, &iv->argv,
                          &iv->sandbox_ctl, err) < 0)
        return -1;
    struct agent_env_in ein = {iv->adapter, req, iv->guard_script.buf, iv->trace_file.buf};
    return aka_agent_build_env(&ein, &iv->env, err);
}

static bool secret_name(const char *entry)
{
    static const char *const marks[] = {"KEY", "TOKEN", "SECRET", "PASSWORD", NULL};
    size_t n = strcspn(entry, "=");
    for (const char *const *m = marks; *m; m++)
        for (size_t i = 0; i + strlen(*m) <= n; i++)
            if (strncmp(entry + i, *m, strlen(*m)) == 0)
                return true;
    return false;
}

static const char *mode_name(enum aka_prompt_mode m)
{
    return m == AKA_PROMPT_ARGV ? "argv" : m == AKA_PROMPT_STDIN ? "stdin" : "file_reference";
}

/* command.json: what was started, so a person can re-run or audit it. */
static void write_command(const struct invocation *iv)
{
    json_t *argv = json_array(), *env = json_object();
    for (size_t i = 0; i < iv->argv.n; i++)
        json_array_append_new(argv, json_string(iv->argv.v[i]));
    for (size_t i = 0; i < iv->env.n; i++) {
        const char *e = iv->env.v[i], *eq = strchr(e, '=');
        char *name = aka_xstrndup(e, eq ? (size_t)(eq - e) : strlen(e));
        json_object_set_new(env, name,
                            !eq              ? json_null()
                            : secret_name(e) ? json_string("(redacted)")
                                             : json_string(eq + 1));
        free(name);
    }
    json_t *doc =
        json_pack("{s:s, s:o, s:s, s:s, s:s, s:s, s:o}", "backend", iv->adapter->id, "argv", argv,
                  "cwd", iv->req->worktree, "prompt_mode", mode_name(iv->mode), "brief_file",
                  iv->req->brief_file, "session_id", iv->session_id, "env", env);
    struct strbuf path = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(&path, iv->req->capture_dir, "command.json");
    aka_json_write_file(path.buf, doc, &err); /* telemetry: a failed write loses no state */
    strbuf_release(&path);
    json_decref(doc);
}

/* Append the policy kill to the captured stderr, where a person looks first. */
static void note_violation(const struct invocation *iv, const struct aka_guard *g)
{
    FILE *f = fopen(iv->err_file.buf, "ae");
    if (!f)
        return;
    fprintf(f, "\n[aka] dependency policy violation; terminated coding session:\n%s\n", g->detail);
    fclose(f);
}

static void observations_text(const struct aka_agent_stream *s, char *out, size_t size)
{
    struct strbuf b = STRBUF_INIT;
    for (size_t i = 0; i < s->observations.n; i++)
        strbuf_addf(&b, "%s%s", i ? "," : "", s->observations.v[i]);
    snprintf(out, size, "%s", b.buf);
    strbuf_release(&b);
}

static int spawn(struct invocation *iv, struct aka_agent_result *res, struct aka_guard *g,
                 struct aka_err *err)
{
    const struct aka_agent_request *req = iv->req;
    struct proc_spec spec = {
        .argv = (const char *const *)iv->argv.v,
        .cwd = req->worktree,
        .env = (const char *const *)iv->env.v,
        .new_session = true,
        .stdin_file = iv->mode == AKA_PROMPT_STDIN ? req->brief_file : NULL,
        .out_mode = PROC_TO_FILE,
        .err_mode = PROC_TO_FILE,
        .out_file = iv->out_file.buf,
        .err_file = iv->err_file.buf,
        .out_cap = STDOUT_CAP,
        .err_cap = STDERR_CAP,
        .timeout_ms = req->timeout_s * 1000,
    };
    struct proc_handle *h = NULL;
    struct proc_result pr;
    proc_result_init(&pr);
    if (proc_start(&spec, &h, err) < 0)
        return -1;
    res->pgid = proc_pid(h);
    res->pgid_start_ticks = proc_start_ticks(res->pgid);
    /* Before anything else: the sooner the caller records the group, the smaller the window
     * in which a killed supervisor would leave an agent it cannot find again. */
    if (req->on_start)
        req->on_start(req->on_start_data, res->pgid, res->pgid_start_ticks);
    int grc = aka_guard_start(g, res->pgid, req->env, err);
    struct aka_err werr = AKA_ERR_INIT;
    if (grc < 0) /* never let an agent run unguarded */
        proc_kill_group(res->pgid, 500);
    int wrc = proc_wait(h, &pr, &werr);
    if (wrc < 0 && grc == 0)
        *err = werr;
    aka_guard_stop(g);
    aka_guard_teardown(g);
    res->exit_code = pr.exit_code;
    res->timed_out = pr.timed_out;
    res->term_signal = pr.term_signal;
    res->wall_seconds = pr.wall_seconds;
    iv->out_truncated = pr.out_truncated;
    proc_result_release(&pr);
    return grc < 0 || wrc < 0 ? -1 : 0;
}

static void replace_terminal(struct aka_agent_stream *s, const struct aka_token_usage *u)
{
    size_t j = 0;
    for (size_t i = 0; i < s->events.n; i++)
        if (s->events.v[i].kind != AKA_EV_TERMINAL_USAGE)
            s->events.v[j++] = s->events.v[i];
    s->events.n = j;
    s->terminal = *u;
    if (u->total >= 0)
        aka_agent_stream_push_usage(s, AKA_EV_TERMINAL_USAGE, u);
}

/* Codex without a ledger: this turn's usage is the thread's cumulative total
 * minus what the thread had used before the turn, when that is known. */
static void codex_fallback(struct invocation *iv, struct aka_agent_stream *s)
{
    struct aka_token_usage turn;
    if (!iv->req->resume_session_id)
        return; /* a fresh thread's cumulative total is this turn's */
    if (!iv->ledger.resumed_from_file || s->terminal.total < 0 ||
        aka_usage_subtract(&s->terminal, &iv->ledger.cumulative, &turn) < 0) {
        aka_token_usage_unavailable(&turn);
        aka_agent_stream_observe(s, "codex_cumulative_fallback_unavailable");
    }
    replace_terminal(s, &turn);
}

static void parse_stream(struct invocation *iv, struct aka_agent_result *res,
                         struct aka_agent_stream *s)
{
    struct aka_err e = AKA_ERR_INIT;
    if (aka_agent_parse_file(iv->adapter, iv->out_file.buf, s, &e) < 0)
        aka_agent_stream_observe(s, "stream_unreadable");
    if (iv->out_truncated) {
        aka_agent_stream_observe(s, "stdout_truncated");
        if (s->terminal.measurement == AKA_TOKENS_EXACT)
            s->terminal.measurement = AKA_TOKENS_PARTIAL;
    }
    res->stream_cumulative = s->terminal;
    if (iv->adapter == &aka_adapter_codex &&
        aka_codex_ledger_apply(&iv->ledger, iv->req->worktree, s) < 0)
        codex_fallback(iv, s);
    if (iv->adapter == &aka_adapter_codex && s->session_id[0])
        snprintf(res->session_id, sizeof(res->session_id), "%s", s->session_id);
    else
        snprintf(res->session_id, sizeof(res->session_id), "%s", iv->session_id);
    res->usage = s->terminal;
    res->transient_api_error = s->transient_api_error;
    res->usage_delta_observed = s->usage_delta_observed;
    observations_text(s, res->observation_errors, sizeof(res->observation_errors));
}

static void write_json_file(const char *dir, const char *name, json_t *doc)
{
    struct strbuf path = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(&path, dir, name);
    aka_json_write_file(path.buf, doc, &err);
    strbuf_release(&path);
}

/* events.jsonl, phases.json, result.json: the invocation's record. */
static void write_outputs(const struct invocation *iv, const struct aka_agent_result *res,
                          const struct aka_agent_stream *s)
{
    struct strbuf lines = STRBUF_INIT, path = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    for (size_t i = 0; i < s->events.n; i++) {
        json_t *e = aka_agent_event_to_json(&s->events.v[i], i);
        aka_json_dump_compact(e, &lines);
        strbuf_addch(&lines, '\n');
        json_decref(e);
    }
    aka_path_join(&path, iv->req->capture_dir, "events.jsonl");
    aka_write_file_atomic(path.buf, lines.buf, lines.len, 0644, &err);
    json_t *phases = aka_agent_phase_tokens(s);
    write_json_file(iv->req->capture_dir, "phases.json", phases);
    json_decref(phases);
    json_t *doc = aka_agent_result_to_json(res);
    json_object_set_new(doc, "backend", json_string(iv->adapter->id));
    json_object_set_new(doc, "capture_dir", json_string(iv->req->capture_dir));
    write_json_file(iv->req->capture_dir, "result.json", doc);
    json_decref(doc);
    strbuf_release(&lines);
    strbuf_release(&path);
}

static void take_violation(const struct aka_guard *g, struct aka_agent_result *res)
{
    if (!g->violated)
        return;
    res->policy_violation = true;
    res->exit_code = 126;
    res->violation_latency_ms = g->latency_ms;
    snprintf(res->violation, sizeof(res->violation), "%.500s", g->detail);
}

static void result_init(struct aka_agent_result *res)
{
    memset(res, 0, sizeof(*res));
    aka_token_usage_unavailable(&res->usage);
    aka_token_usage_unavailable(&res->stream_cumulative);
    res->violation_latency_ms = -1;
}

int aka_agent_run(const struct aka_agent_request *req, struct aka_agent_result *res,
                  struct aka_err *err)
{
    struct invocation iv;
    struct aka_guard g;
    struct aka_agent_stream s;
    result_init(res);
    memset(&g, 0, sizeof(g));
    if (prepare(&iv, req, err) < 0) {
        invocation_release(&iv);
        return -1;
    }
    write_command(&iv);
    if (iv.adapter == &aka_adapter_codex) {
        struct strbuf home = STRBUF_INIT;
        codex_home(req, &home);
        aka_codex_ledger_prepare(&iv.ledger, home.buf, req->resume_session_id,
                                 aka_agent_unix_now());
        strbuf_release(&home);
    }
    int rc = spawn(&iv, res, &g, err);
    if (rc == 0) {
        take_violation(&g, res);
        if (g.violated)
            note_violation(&iv, &g);
        aka_agent_stream_init(&s);
        parse_stream(&iv, res, &s);
        write_outputs(&iv, res, &s);
        aka_agent_stream_release(&s);
    }
    aka_guard_release(&g);
    invocation_release(&iv);
    return rc;
}

json_t *aka_agent_result_to_json(const struct aka_agent_result *res)
{
    json_t *o = json_object();
    json_object_set_new(o, "exit_code", json_integer(res->exit_code));
    json_object_set_new(o, "timed_out", json_boolean(res->timed_out));
    json_object_set_new(o, "term_signal", json_integer(res->term_signal));
    json_object_set_new(o, "policy_violation", json_boolean(res->policy_violation));
    json_object_set_new(o, "violation",
                        res->policy_violation ? json_string(res->violation) : json_null());
    json_object_set_new(o, "violation_latency_ms",
                        res->violation_latency_ms >= 0 ? json_real(res->violation_latency_ms)
                                                       : json_null());
    json_object_set_new(o, "session_id", json_string(res->session_id));
    json_object_set_new(o, "usage", aka_token_usage_to_json(&res->usage));
    json_object_set_new(o, "pgid", json_integer(res->pgid));
    json_object_set_new(o, "pgid_start_ticks", json_integer((json_int_t)res->pgid_start_ticks));
    json_object_set_new(o, "wall_seconds", json_real(res->wall_seconds));
    json_object_set_new(o, "observation_errors", json_string(res->observation_errors));
    json_object_set_new(o, "transient_api_error", json_boolean(res->transient_api_error));
    json_object_set_new(o, "usage_delta_observed", json_boolean(res->usage_delta_observed));
    return o;
}
