/*
 * reviewers.c — which external plan reviewers a campaign may use (reference
 * §9.1), and what every reviewer call shares:
 *
 *   - the startup probe: each reviewer's CLI is run once, through the agent
 *     runtime (guard, captures, token parsing) in an empty temporary Git
 *     directory, on a tiny prompt with a short timeout; it is available when
 *     it exits 0 with an answer;
 *   - the cache <workspace>/.aka/plan_reviewers.json (schema 1), reused for
 *     the rest of the campaign and across restarts; a reviewer recorded as
 *     unavailable is never probed or asked again;
 *   - ATREX_PLAN_REVIEW_{CODEX,QODER}_{ENABLED,REASON} for agent sessions;
 *   - the append-only token ledger <workspace>/.aka/reviewer_tokens.jsonl:
 *     reviewers spend the campaign's tokens too, and state.json belongs to
 *     the supervisor loop, so they are counted apart and summed on demand.
 *
 * Asking for a review is review.c.
 */
#include "agents/internal.h"
#include "base/fs.h"
#include "base/json.h"
#include "git/git.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REASON_MAX   500
#define PROBE_ANSWER "AKA_REVIEWER_READY"

const char *const aka_reviewer_names[] = {"codex", "qoder", NULL};

static const struct aka_reviewer_info infos[AKA_REVIEWERS] = {
    {"codex", "codex", "ATREX_CODEX_BIN", "ATREX_ASK_CODEX_TIMEOUT", "CODEX", "ASK_CODEX",
     "CODEX_SUMMARY:"},
    {"qoder", "qodercli", "ATREX_QODER_BIN", "ATREX_ASK_QODER_TIMEOUT", "QODER", "ASK_QODER",
     "QODER_SUMMARY:"},
};

const struct aka_reviewer_info *aka_reviewer_info(enum aka_reviewer r)
{
    return &infos[r];
}

void aka_reviewer_utc_now(char *out, size_t size)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void set_state(struct aka_reviewer_state *s, bool available, const char *status,
                      const char *reason)
{
    s->available = available;
    snprintf(s->status, sizeof(s->status), "%s", status);
    snprintf(s->reason, sizeof(s->reason), "%s", reason);
}

/* ---- the cache -------------------------------------------------------------- */

static bool load_state(json_t *reviewers, const char *name, struct aka_reviewer_state *s)
{
    json_t *r = json_object_get(reviewers, name);
    json_t *available = json_object_get(r, "available");
    const char *status = json_string_value(json_object_get(r, "status"));
    const char *reason = json_string_value(json_object_get(r, "reason"));
    if (!json_is_boolean(available) || !status || !reason)
        return false;
    set_state(s, json_is_true(available), status, reason);
    return true;
}

int aka_plan_reviewers_load(const char *workspace, struct aka_plan_reviewers *pr)
{
    struct strbuf path = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    json_t *doc = NULL;
    memset(pr, 0, sizeof(*pr));
    aka_ws_path(&path, workspace, AKA_WS_PLAN_REVIEWERS);
    bool ok = aka_is_file(path.buf) && aka_json_load_file(path.buf, &doc, &ignored) == 0 &&
              json_integer_value(json_object_get(doc, "schema_version")) == 1 &&
              json_is_string(json_object_get(doc, "checked_at")) &&
              json_is_string(json_object_get(doc, "agent_cli")) &&
              json_is_integer(json_object_get(doc, "probe_timeout_seconds"));
    json_t *reviewers = json_object_get(doc, "reviewers");
    for (int i = 0; ok && i < AKA_REVIEWERS; i++)
        ok = load_state(reviewers, infos[i].name, &pr->r[i]);
    if (ok) {
        snprintf(pr->checked_at, sizeof(pr->checked_at), "%s",
                 json_string_value(json_object_get(doc, "checked_at")));
        snprintf(pr->agent_cli, sizeof(pr->agent_cli), "%s",
                 json_string_value(json_object_get(doc, "agent_cli")));
        pr->probe_timeout_s =
            (long)json_integer_value(json_object_get(doc, "probe_timeout_seconds"));
    }
    json_decref(doc);
    strbuf_release(&path);
    return ok ? 0 : -1;
}

int aka_plan_reviewers_save(const char *workspace, const struct aka_plan_reviewers *pr,
                            struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    json_t *reviewers = json_object();
    for (int i = 0; i < AKA_REVIEWERS; i++)
        json_object_set_new(reviewers, infos[i].name,
                            json_pack("{s:b, s:s, s:s}", "available", pr->r[i].available, "status",
                                      pr->r[i].status, "reason", pr->r[i].reason));
    json_t *doc = json_pack("{s:i, s:s, s:s, s:I, s:o}", "schema_version", 1, "checked_at",
                            pr->checked_at, "agent_cli", pr->agent_cli, "probe_timeout_seconds",
                            (json_int_t)pr->probe_timeout_s, "reviewers", reviewers);
    aka_ws_path(&path, workspace, AKA_WS_PLAN_REVIEWERS);
    int rc = aka_json_write_file(path.buf, doc, err); /* atomic: temp file + rename */
    json_decref(doc);
    strbuf_release(&path);
    return rc;
}

int aka_plan_reviewer_disable(const char *workspace, enum aka_reviewer r,
                              const struct aka_reviewer_state *why, struct aka_err *err)
{
    struct aka_plan_reviewers pr;
    if (!workspace || aka_plan_reviewers_load(workspace, &pr) < 0)
        return 0; /* no campaign cache: nothing to remember it in */
    set_state(&pr.r[r], false, why->status, why->reason);
    return aka_plan_reviewers_save(workspace, &pr, err);
}

void aka_plan_reviewers_env(const struct aka_plan_reviewers *pr, struct strvec *env)
{
    for (int i = 0; i < AKA_REVIEWERS; i++) {
        strvec_pushf(env, "ATREX_PLAN_REVIEW_%s_ENABLED=%d", infos[i].env_name,
                     pr->r[i].available ? 1 : 0);
        strvec_pushf(env, "ATREX_PLAN_REVIEW_%s_REASON=%s", infos[i].env_name, pr->r[i].reason);
    }
}

/* ---- the token ledger --------------------------------------------------------- */

int aka_reviewer_ledger_append(const char *workspace, enum aka_reviewer r, const char *purpose,
                               const struct aka_token_usage *u)
{
    char at[40];
    struct strbuf path = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    const char *episode = getenv("ATREX_AKA_EPISODE");
    if (!workspace)
        return 0;
    aka_reviewer_utc_now(at, sizeof(at));
    json_t *doc = json_pack("{s:s, s:s, s:s, s:I, s:o}", "at", at, "reviewer", infos[r].name,
                            "purpose", purpose, "tokens", (json_int_t)(u->total > 0 ? u->total : 0),
                            "usage", aka_token_usage_to_json(u));
    json_object_set_new(doc, "episode",
                        episode && *episode ? json_integer(atoll(episode)) : json_null());
    aka_ws_path(&path, workspace, AKA_WS_REVIEWER_TOKENS);
    int rc = aka_jsonl_append(path.buf, doc, true, &ignored);
    json_decref(doc);
    strbuf_release(&path);
    return rc;
}

static int add_tokens(json_t *obj, size_t lineno, void *data, struct aka_err *err)
{
    json_t *t = json_object_get(obj, "tokens");
    (void)lineno;
    (void)err;
    if (json_is_integer(t) && json_integer_value(t) > 0)
        *(long long *)data += (long long)json_integer_value(t);
    return 0;
}

long long aka_plan_reviewer_tokens(const char *workspace)
{
    struct strbuf path = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    long long sum = 0;
    aka_ws_path(&path, workspace, AKA_WS_REVIEWER_TOKENS);
    if (aka_is_file(path.buf))
        aka_jsonl_foreach(path.buf, add_tokens, &sum, &ignored);
    strbuf_release(&path);
    return sum;
}

/* ---- one reviewer call ---------------------------------------------------------- */

/* The last non-empty stderr line, whitespace collapsed, at most REASON_MAX chars. */
static void last_stderr_line(const char *capture, char *out, size_t size)
{
    struct strbuf path = STRBUF_INIT, text = STRBUF_INIT, line = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    aka_path_join(&path, capture, "stderr.txt");
    out[0] = '\0';
    if (aka_read_file(path.buf, &text, (size_t)1 << 20, &ignored) == 0) {
        for (const char *p = text.buf; *p;) {
            size_t n = strcspn(p, "\n");
            strbuf_reset(&line);
            for (size_t i = 0; i < n; i++)
                if (!isspace((unsigned char)p[i]) || (line.len && line.buf[line.len - 1] != ' '))
                    strbuf_addch(&line, isspace((unsigned char)p[i]) ? ' ' : p[i]);
            strbuf_trim(&line);
            if (line.len)
                snprintf(out, size < REASON_MAX ? size : REASON_MAX, "%s", line.buf);
            p += n + (p[n] == '\n');
        }
    }
    strbuf_release(&path);
    strbuf_release(&text);
    strbuf_release(&line);
}

/* Why a finished call is not an answer (false), or true with the answer. */
static bool judge_call(const struct reviewer_call *c, const struct aka_agent_result *res,
                       struct strbuf *answer, struct aka_reviewer_state *failure)
{
    char line[REASON_MAX + 1], buf[REASON_MAX + 64];
    struct strbuf out = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    if (res->policy_violation) {
        set_state(failure, false, "policy_violation", res->violation);
        return false;
    }
    if (res->timed_out) {
        snprintf(buf, sizeof(buf), "no answer within %ld s", c->timeout_s);
        set_state(failure, false, "timeout", buf);
        return false;
    }
    if (res->exit_code != 0) {
        last_stderr_line(c->capture, line, sizeof(line));
        char status[64];
        snprintf(status, sizeof(status), "unavailable_exit_%d", res->exit_code);
        snprintf(buf, sizeof(buf), "%s", line[0] ? line : "it failed without a message");
        set_state(failure, false, status, buf);
        return false;
    }
    aka_path_join(&out, c->capture, "stdout.jsonl");
    aka_agent_final_message(infos[c->which].backend, out.buf, answer, &err);
    strbuf_release(&out);
    strbuf_trim(answer);
    if (!answer->len) {
        set_state(failure, false, "no_answer", "it exited 0 without a final message");
        return false;
    }
    return true;
}

int aka_reviewer_call(const struct reviewer_call *c, struct aka_agent_result *res,
                      struct strbuf *answer, struct aka_reviewer_state *failure)
{
    /* A reviewer is nobody's episode: nothing of the campaign's session leaks in. */
    static const char *const env[] = {"ATREX_PLAN_REVIEW_CODEX_ENABLED",
                                      "ATREX_PLAN_REVIEW_CODEX_REASON",
                                      "ATREX_PLAN_REVIEW_QODER_ENABLED",
                                      "ATREX_PLAN_REVIEW_QODER_REASON",
                                      "ATREX_AKA_WORKSPACE",
                                      "ATREX_AKA_WORKTREE",
                                      "ATREX_AKA_EPISODE",
                                      "CODEX_THREAD_ID",
                                      "CODEX_INTERNAL_ORIGINATOR_OVERRIDE",
                                      NULL};
    const char *bin = getenv(infos[c->which].bin_var);
    struct aka_err err = AKA_ERR_INIT;
    struct aka_agent_request req = {
        .backend = infos[c->which].backend,
        .cli_path = bin && *bin ? bin : NULL,
        .worktree = c->dir,
        .brief_file = c->prompt_file,
        .capture_dir = c->capture,
        .env = env,
        .timeout_s = c->timeout_s,
        .effort = "max", /* reviews always think hardest (reference §9.2) */
        .repo_root = c->repo_root,
    };
    strbuf_reset(answer);
    if (aka_agent_run(&req, res, &err) < 0) {
        set_state(failure, false, "unavailable", err.msg);
        return 1;
    }
    return judge_call(c, res, answer, failure) ? 0 : 1;
}

/* A fresh, empty Git directory (Codex runs only inside a repository). */
int aka_reviewer_scratch(const char *prefix, struct strbuf *dir, struct aka_err *err)
{
    if (aka_make_temp_dir(NULL, prefix, dir, err) < 0)
        return -1;
    return aka_git_init(dir->buf, "main", err);
}

/* ---- the startup probe ------------------------------------------------------------ */

static int probe_timeout(long *out, struct aka_err *err)
{
    const char *v = getenv("ATREX_PLAN_REVIEW_PROBE_TIMEOUT");
    char *end = NULL;
    *out = AKA_PLAN_REVIEW_PROBE_TIMEOUT_S;
    if (!v || !*v)
        return 0;
    errno = 0;
    long t = strtol(v, &end, 10);
    if (errno || *end || t <= 0)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "ATREX_PLAN_REVIEW_PROBE_TIMEOUT=\"%s\": expected a positive whole "
                           "number of seconds",
                           v);
    *out = t;
    return 0;
}

static void probe_one(const char *ws, const char *repo_root, long timeout_s, enum aka_reviewer r,
                      struct aka_reviewer_state *s)
{
    static const char prompt[] =
        "This is an availability check of a plan reviewer. Do not read, create or change any "
        "file and run no command. Reply with the single line: " PROBE_ANSWER "\n";
    struct strbuf dir = STRBUF_INIT, capture = STRBUF_INIT, brief = STRBUF_INIT,
                  answer = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct aka_agent_result res;
    aka_ws_path(&capture, ws, AKA_WS_PLAN_REVIEWER_PROBES);
    strbuf_addf(&capture, "/probe-%s", infos[r].name);
    aka_path_join(&brief, capture.buf, "prompt.md");
    if (aka_remove_tree(capture.buf, &err) < 0 || aka_mkdir_p(capture.buf, 0755, &err) < 0 ||
        aka_write_file_atomic(brief.buf, prompt, sizeof(prompt) - 1, 0644, &err) < 0 ||
        aka_reviewer_scratch("aka-review-probe", &dir, &err) < 0) {
        set_state(s, false, "unavailable", err.msg);
    } else {
        struct reviewer_call c = {r, dir.buf, brief.buf, capture.buf, timeout_s, repo_root};
        if (aka_reviewer_call(&c, &res, &answer, s) == 0)
            set_state(s, true, "available", "startup probe completed");
        if (res.usage.total > 0)
            aka_reviewer_ledger_append(ws, r, "probe", &res.usage);
    }
    if (dir.len)
        aka_remove_tree(dir.buf, &err);
    strbuf_release(&dir);
    strbuf_release(&capture);
    strbuf_release(&brief);
    strbuf_release(&answer);
}

int aka_plan_reviewers_ensure(const char *workspace, const char *backend, const char *repo_root,
                              struct aka_plan_reviewers *pr, struct aka_err *err)
{
    long timeout_s;
    if (probe_timeout(&timeout_s, err) < 0)
        return -1;
    if (aka_plan_reviewers_load(workspace, pr) == 0)
        return 0; /* probed once per campaign: the cache is the answer */
    memset(pr, 0, sizeof(*pr));
    pr->probed = true;
    pr->probe_timeout_s = timeout_s;
    snprintf(pr->agent_cli, sizeof(pr->agent_cli), "%s", backend ? backend : "");
    aka_reviewer_utc_now(pr->checked_at, sizeof(pr->checked_at));
    for (int i = 0; i < AKA_REVIEWERS; i++) {
        if (!backend || strcmp(backend, "builtin") == 0)
            set_state(&pr->r[i], false, "not_used", "the built-in agent asks no plan reviewers");
        else if (strcmp(backend, infos[i].backend) == 0)
            set_state(&pr->r[i], true, "current_backend",
                      "the campaign's own backend: it reviews the plan in its own session");
        else
            probe_one(workspace, repo_root, timeout_s, (enum aka_reviewer)i, &pr->r[i]);
    }
    struct strbuf dir = STRBUF_INIT;
    aka_ws_path(&dir, workspace, AKA_WS_STATE_DIR);
    int rc = aka_mkdir_p(dir.buf, 0755, err) < 0 ? -1 : aka_plan_reviewers_save(workspace, pr, err);
    strbuf_release(&dir);
    return rc;
}
