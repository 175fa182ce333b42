/*
 * recovery.c — same-thread recovery (reference §6): one episode session made
 * of a fresh turn and up to `handoff_resumes` resume turns on the same
 * thread, each with a diagnosis of what the previous turn left undone.
 *
 * When to resume, in order:
 *   - the completion check passed → done (exit 0), even if the CLI had timed
 *     out or failed afterwards: the episode's contract is the handoff;
 *   - a policy kill → stop, never resume (the agent broke the rules);
 *   - a timeout, a SIGTERM from outside (exit 143), or a known transient API
 *     error in the stream → resume;
 *   - any other nonzero exit (a crash) → stop, with the exit in the diagnosis;
 *   - exit 0 without a valid handoff → resume with the check's diagnosis.
 * A backend that cannot resume (qodercli, pi, builtin), or a thread whose id
 * was never learned, stops with the diagnosis instead.
 *
 * Tokens of all turns are summed with the measurement rules. Codex reports a
 * thread's cumulative usage, so without its ledger a turn's own usage is the
 * difference to the previous turn's cumulative value.
 */
#include "agents/internal.h"
#include "base/fs.h"
#include "base/json.h"
#include "contracts/records.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct session {
    const struct aka_agent_session_request *sreq;
    struct aka_agent_session_result *res;
    const struct aka_adapter *adapter;
    char thread[256];  /* the resumable id, "" while unknown */
    char fresh_id[37]; /* our UUID for backends that take one */
    struct strbuf root, trace;
    struct aka_token_usage codex_prev; /* last stdout cumulative seen (codex) */
    bool codex_prev_known, resume_qualified;
    json_t *phase_summaries;
};

static void diag(struct aka_agent_session_result *res, const char *fmt, const char *a,
                 const char *b)
{
    snprintf(res->diagnosis, sizeof(res->diagnosis), fmt, a, b ? b : "");
}

/* The diagnosis turn: runtime/prompts/resume.md, or our built-in words. */
static void resume_prompt(const struct session *ss, const char *diagnosis, struct strbuf *out)
{
    const char *root = ss->sreq->req.repo_root ? ss->sreq->req.repo_root : getenv("ATREX_AKA_HOME");
    struct strbuf tpl = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    const struct aka_brief_var vars[] = {{"diagnosis", diagnosis}, {NULL, NULL}};
    aka_path_join(&tpl, root ? root : "", "runtime/prompts/resume.md");
    if (!root || aka_brief_render(tpl.buf, vars, out, &err) < 0) {
        strbuf_reset(out);
        strbuf_addf(out,
                    "Continue the same episode in this worktree. Your previous turn ended "
                    "without meeting the episode's terminal contract: %s\n\n"
                    "Resume the concrete work from the current state of the worktree. Commit "
                    "only the kernel file; keep evidence uncommitted. Do not stop at an "
                    "explanation: finalize the journal and publish a valid handoff with "
                    "`aka handoff` before you end the turn.\n",
                    diagnosis);
    }
    strbuf_release(&tpl);
}

/* Build the k-th invocation's request; resumes get a prompt file of their own. */
static int turn_request(struct session *ss, int k, struct aka_agent_request *req,
                        struct strvec *env, struct strbuf *dir, struct strbuf *prompt_file,
                        struct aka_err *err)
{
    *req = ss->sreq->req;
    strbuf_reset(dir);
    strbuf_addf(dir, "%s/invocation-%d", ss->root.buf, k + 1);
    if (aka_mkdir_p(dir->buf, 0755, err) < 0)
        return -1;
    req->capture_dir = dir->buf;
    strvec_pushv(env, ss->sreq->req.env);
    strvec_pushf(env, "ATREX_AKA_TRACE_FILE=%s", ss->trace.buf);
    strvec_pushf(env, "ATREX_AKA_ATTEMPT_ID=invocation-%d", k + 1);
    req->env = (const char *const *)env->v;
    req->session_id = ss->fresh_id[0] ? ss->fresh_id : NULL;
    if (k == 0 && !ss->sreq->req.resume_session_id)
        return 0;
    req->resume_session_id = ss->thread;
    if (k == 0)
        return 0; /* continuing a thread the caller named, with the caller's brief */
    struct strbuf text = STRBUF_INIT;
    resume_prompt(ss, ss->res->diagnosis, &text);
    aka_path_join(prompt_file, dir->buf, "prompt.md");
    int rc = aka_write_file_atomic(prompt_file->buf, text.buf, text.len, 0644, err);
    req->brief_file = prompt_file->buf;
    strbuf_release(&text);
    return rc;
}

/* Codex without ledger deltas: this turn = cumulative now - cumulative before. */
static void codex_turn_usage(struct session *ss, struct aka_agent_result *r)
{
    struct aka_token_usage turn, now = r->stream_cumulative;
    if (ss->adapter != &aka_adapter_codex)
        return;
    if (!r->usage_delta_observed && r->usage.total < 0 && ss->codex_prev_known && now.total >= 0 &&
        aka_usage_subtract(&now, &ss->codex_prev, &turn) == 0)
        r->usage = turn; /* the runtime could not know the previous turn; we do */
    if (now.total >= 0 && (!ss->codex_prev_known || now.total >= ss->codex_prev.total)) {
        ss->codex_prev = now; /* only ever moves forward */
        ss->codex_prev_known = true;
    }
    if (!r->usage_delta_observed || strstr(r->observation_errors, "codex_"))
        ss->resume_qualified = false;
}

static bool externally_terminated(const struct aka_agent_result *r)
{
    return r->term_signal == SIGTERM || r->exit_code == 128 + SIGTERM;
}

/* After a turn that did not complete: true to resume, false to stop. */
static bool should_resume(struct session *ss, const struct aka_agent_result *r)
{
    struct aka_agent_session_result *res = ss->res;
    char code[32];
    if (r->policy_violation) {
        diag(res, "policy violation: %s%s", r->violation, NULL);
        return false;
    }
    const char *why = r->timed_out               ? "the turn hit its time limit"
                      : r->exit_code == 0        ? NULL
                      : externally_terminated(r) ? "the turn was terminated (SIGTERM)"
                      : r->transient_api_error   ? "the turn hit a transient API error"
                                                 : "";
    if (why && *why) {
        char was[sizeof(res->diagnosis)];
        snprintf(was, sizeof(was), "%s", res->diagnosis);
        diag(res, "%s; %s", why, was);
    }
    if (!why || *why)
        return true;
    snprintf(code, sizeof(code), "%d", r->exit_code);
    diag(res, "session failed: exit=%s%s", code, r->term_signal ? " (killed by a signal)" : NULL);
    return false;
}

/* Can the next turn be a resume? Sets the diagnosis when it cannot. */
static bool can_continue(struct session *ss)
{
    struct aka_agent_session_result *res = ss->res;
    char was[sizeof(res->diagnosis)];
    snprintf(was, sizeof(was), "%s", res->diagnosis);
    if (!ss->adapter->can_resume) {
        diag(res, "%s ended without a valid terminal handoff: %s", ss->adapter->id, was);
        return false;
    }
    if (!ss->thread[0]) {
        diag(res, "%s ended without exposing a resumable session id: %s", ss->adapter->id, was);
        return false;
    }
    return true;
}

static void take_turn(struct session *ss, int k, const struct aka_agent_result *r)
{
    struct aka_agent_session_result *res = ss->res;
    struct strbuf path = STRBUF_INIT;
    json_t *summary = NULL;
    struct aka_err err = AKA_ERR_INIT;
    res->inv[k] = *r;
    res->last = *r;
    res->invocations = k + 1;
    res->exit_code = r->exit_code;
    res->timed_out = r->timed_out;
    aka_token_usage_add(&res->usage, &r->usage);
    /* Codex names its thread in the stream; the others keep the id we chose. */
    if ((ss->adapter == &aka_adapter_codex || !ss->thread[0]) && r->session_id[0])
        snprintf(ss->thread, sizeof(ss->thread), "%s", r->session_id);
    strbuf_addf(&path, "%s/invocation-%d/phases.json", ss->root.buf, k + 1);
    if (aka_json_load_file(path.buf, &summary, &err) == 0)
        json_array_append_new(ss->phase_summaries, summary);
    strbuf_release(&path);
}

static int session_init(struct session *ss, const struct aka_agent_session_request *sreq,
                        struct aka_agent_session_result *res, struct aka_err *err)
{
    memset(ss, 0, sizeof(*ss));
    memset(res, 0, sizeof(*res));
    ss->sreq = sreq;
    ss->res = res;
    ss->adapter = aka_adapter_find(sreq->req.backend);
    strbuf_init(&ss->root, 0);
    strbuf_init(&ss->trace, 0);
    ss->phase_summaries = json_array();
    ss->resume_qualified = false;
    aka_token_usage_zero(&res->usage);
    if (!ss->adapter)
        return aka_err_set(err, AKA_EXIT_USAGE, "agent backend \"%s\": unknown",
                           sreq->req.backend ? sreq->req.backend : "");
    int max = sreq->handoff_resumes;
    if (max > AKA_AGENT_MAX_HANDOFF_RESUMES)
        return aka_err_set(err, AKA_EXIT_USAGE, "--handoff-resumes %d: expected 0 to %d", max,
                           AKA_AGENT_MAX_HANDOFF_RESUMES);
    if (!sreq->req.capture_dir || aka_mkdir_p(sreq->req.capture_dir, 0755, err) < 0)
        return aka_err_set(err, AKA_EXIT_USAGE, "agent session: capture_dir is required");
    strbuf_addstr(&ss->root, sreq->req.capture_dir);
    /* Only Codex with a healthy ledger has per-call usage that spans a resume. */
    ss->resume_qualified = ss->adapter == &aka_adapter_codex;
    const char *trace = aka_agent_env_lookup(sreq->req.env, "ATREX_AKA_TRACE_FILE");
    if (trace && *trace)
        strbuf_addstr(&ss->trace, trace);
    else
        aka_path_join(&ss->trace, ss->root.buf, "trace.jsonl");
    if (sreq->req.resume_session_id)
        snprintf(ss->thread, sizeof(ss->thread), "%s", sreq->req.resume_session_id);
    else if (ss->adapter->own_session_id)
        aka_agent_new_uuid(ss->fresh_id);
    if (ss->adapter->own_session_id && !ss->thread[0])
        snprintf(ss->thread, sizeof(ss->thread), "%s", ss->fresh_id);
    if (sreq->handoff_path)
        remove(sreq->handoff_path); /* a stale handoff must never complete this session */
    return 0;
}

/* Is the episode complete after this turn? */
static bool completed(struct session *ss)
{
    char why[sizeof(ss->res->diagnosis)] = "";
    bool ok = ss->sreq->check ? ss->sreq->check(ss->sreq->check_data, why, sizeof(why))
                              : ss->res->last.exit_code == 0;
    if (!ok && !why[0])
        snprintf(why, sizeof(why), "the session did not complete (exit %d)",
                 ss->res->last.exit_code);
    snprintf(ss->res->diagnosis, sizeof(ss->res->diagnosis), "%s", ok ? "" : why);
    return ok;
}

static int run_turns(struct session *ss, struct aka_err *err)
{
    struct aka_agent_session_result *res = ss->res;
    int max = ss->sreq->handoff_resumes < 0 ? AKA_AGENT_DEFAULT_HANDOFF_RESUMES
                                            : ss->sreq->handoff_resumes;
    for (int k = 0; k <= max; k++) {
        if (k > 0 && !can_continue(ss))
            return 0;
        struct aka_agent_request req;
        struct aka_agent_result r;
        memset(&r, 0, sizeof(r));
        struct strvec env = STRVEC_INIT;
        struct strbuf dir = STRBUF_INIT, prompt = STRBUF_INIT;
        int rc = turn_request(ss, k, &req, &env, &dir, &prompt, err);
        if (rc == 0)
            rc = aka_agent_run(&req, &r, err);
        strvec_clear(&env);
        strbuf_release(&dir);
        strbuf_release(&prompt);
        if (rc < 0)
            return -1;
        res->resume_count += k > 0;
        codex_turn_usage(ss, &r);
        take_turn(ss, k, &r);
        if (!r.policy_violation && completed(ss)) {
            res->complete = true;
            res->exit_code = 0;
            res->timed_out = false;
            return 0;
        }
        if (!should_resume(ss, &r))
            return 0;
    }
    return 0;
}

static void session_release(struct session *ss)
{
    strbuf_release(&ss->root);
    strbuf_release(&ss->trace);
    json_decref(ss->phase_summaries);
}

/* session.json: the turns, the summed usage and the phase attribution. */
static void write_session(struct session *ss)
{
    json_t *doc = aka_agent_session_result_to_json(ss->res);
    size_t n = json_array_size(ss->phase_summaries);
    json_t **inv = aka_xcalloc(n ? n : 1, sizeof(*inv));
    for (size_t i = 0; i < n; i++)
        inv[i] = json_array_get(ss->phase_summaries, i);
    json_object_set_new(doc, "backend", json_string(ss->adapter->id));
    json_object_set_new(
        doc, "phase_tokens",
        aka_agent_phase_tokens_aggregate(inv, n, ss->res->resume_count > 0, ss->resume_qualified));
    json_object_set_new(doc, "phase_times", aka_trace_phase_times(ss->trace.buf));
    json_object_set_new(doc, "trace_file", json_string(ss->trace.buf));
    struct strbuf path = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(&path, ss->root.buf, "session.json");
    aka_json_write_file(path.buf, doc, &err); /* telemetry only */
    strbuf_release(&path);
    free(inv);
    json_decref(doc);
}

int aka_agent_run_session(const struct aka_agent_session_request *sreq,
                          struct aka_agent_session_result *res, struct aka_err *err)
{
    struct session ss;
    int rc = session_init(&ss, sreq, res, err);
    if (rc == 0)
        rc = run_turns(&ss, err);
    if (rc == 0) {
        snprintf(res->session_id, sizeof(res->session_id), "%s",
                 ss.thread[0] ? ss.thread : ss.fresh_id);
        if (res->invocations == 0)
            aka_token_usage_unavailable(&res->usage);
        write_session(&ss);
    }
    session_release(&ss);
    return rc;
}

json_t *aka_agent_session_result_to_json(const struct aka_agent_session_result *res)
{
    json_t *inv = json_array();
    for (int i = 0; i < res->invocations; i++)
        json_array_append_new(inv, aka_agent_result_to_json(&res->inv[i]));
    json_t *o =
        json_pack("{s:i, s:b, s:b, s:i, s:i, s:s, s:o, s:o}", "exit_code", res->exit_code,
                  "timed_out", res->timed_out, "complete", res->complete, "invocations",
                  res->invocations, "resume_count", res->resume_count, "session_id",
                  res->session_id, "usage", aka_token_usage_to_json(&res->usage), "turns", inv);
    json_object_set_new(o, "diagnosis",
                        res->diagnosis[0] ? json_string(res->diagnosis) : json_null());
    json_object_set_new(o, "policy_violation", json_boolean(res->last.policy_violation));
    return o;
}

bool aka_agent_check_handoff_file(void *data, char *diagnosis, size_t size)
{
    struct aka_handoff h;
    struct aka_err err = AKA_ERR_INIT;
    if (aka_handoff_load((const char *)data, &h, &err) == 0)
        return true;
    snprintf(diagnosis, size, "%s", err.msg);
    return false;
}
