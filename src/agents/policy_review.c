/*
 * policy_review.c — the production policy reviewer (issue 14): one fresh session of
 * the campaign's own agent backend judges one candidate kernel against
 * runtime/prompts/policy_review.md and must leave a complete verdict file.
 *
 * The session runs in a scratch Git directory holding candidate/<kernel> and
 * candidate/review_request.json and nothing of the campaign (confined like an episode
 * when the campaign confines its agent). It fails closed: a reviewer that cannot start
 * (unavailable), runs past --production-review-timeout (late), leaves no verdict
 * (missing), leaves one that does not match the schema (malformed), or changes
 * anything under candidate/ (mutating) rejects the candidate, the reason named. Only a
 * complete verdict whose every check passes passes.
 *
 * Verdicts are cached in <workspace>/.aka/policy_reviews/<sha256 of the source>.json
 * (written atomically), so one source is reviewed once per campaign, restarts included;
 * a failed session is not cached, so a later episode with the same source asks again.
 */
#include "agents/internal.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/sha256.h"
#include "workspace/workspace.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *const aka_policy_review_checks[] = {"framework_compliance", "compute_provenance",
                                                "dependency_inventory", "external_code_loading",
                                                "solution_manifest",    NULL};

#define VERDICT_FILE  "verdict.json"
#define CANDIDATE_DIR "candidate"
#define VERDICT_MAX   ((size_t)1 << 20)

static void outcome(struct aka_policy_review_result *res, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void outcome(struct aka_policy_review_result *res, const char *what, const char *fmt, ...)
{
    va_list ap;
    snprintf(res->outcome, sizeof(res->outcome), "%s", what);
    res->pass = strcmp(what, "pass") == 0;
    va_start(ap, fmt);
    vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
    va_end(ap);
}

/* ---- the verdict's schema ----------------------------------------------------------------- */

static int check_entry(json_t *c, size_t i, bool *seen, bool *all_pass, char *why, size_t size)
{
    json_t *cat = json_object_get(c, "category"), *dec = json_object_get(c, "decision");
    json_t *reason = json_object_get(c, "reason"), *ev = json_object_get(c, "evidence");
    int k =
        json_is_string(cat) ? jenum_index(json_string_value(cat), aka_policy_review_checks) : -1;
    const char *d = json_is_string(dec) ? json_string_value(dec) : "";
    if (!json_is_object(c) || k < 0 || (strcmp(d, "pass") && strcmp(d, "reject")) ||
        !json_is_string(reason) || !json_is_array(ev)) {
        snprintf(why, size,
                 "checks[%zu]: expected {category: one of the five checks, decision: pass or "
                 "reject, reason: text, evidence: [...]}",
                 i);
        return -1;
    }
    seen[k] = true;
    *all_pass = *all_pass && strcmp(d, "pass") == 0;
    return 0;
}

int aka_policy_verdict_check(json_t *doc, bool *pass, char *why, size_t size)
{
    json_t *v = json_object_get(doc, "verdict"), *s = json_object_get(doc, "summary");
    json_t *checks = json_object_get(doc, "checks"), *c;
    bool seen[8] = {false}, all_pass = true;
    size_t i;
    const char *verdict = json_is_string(v) ? json_string_value(v) : "";
    if (!json_is_object(doc) || (strcmp(verdict, "pass") && strcmp(verdict, "reject")) ||
        !json_is_string(s) || !*json_string_value(s) || !json_is_array(checks)) {
        snprintf(why, size,
                 "expected an object with verdict (pass or reject), a non-empty "
                 "summary and checks[]");
        return -1;
    }
    json_array_foreach(checks, i,
                       c) if (check_entry(c, i, seen, &all_pass, why, size) < 0) return -1;
    for (size_t k = 0; aka_policy_review_checks[k]; k++)
        if (!seen[k]) {
            snprintf(why, size, "checks[] has no entry for %s", aka_policy_review_checks[k]);
            return -1;
        }
    /* A "pass" with a rejected check is not a complete verdict of pass. */
    *pass = strcmp(verdict, "pass") == 0 && all_pass;
    return 0;
}

/* ---- the session -------------------------------------------------------------------------- */

struct session {
    const struct aka_policy_review_request *rq;
    struct strbuf dir, capture, prompt, cache;
    char before[AKA_SHA256_HEX_LEN + 1];
};

/* One digest over every file under candidate/: names and contents. */
static int candidate_digest(const struct session *s, char out[AKA_SHA256_HEX_LEN + 1],
                            struct aka_err *err)
{
    struct strvec files = {0};
    struct strbuf dir = STRBUF_INIT, all = STRBUF_INIT, path = STRBUF_INIT;
    char one[AKA_SHA256_HEX_LEN + 1];
    aka_path_join(&dir, s->dir.buf, CANDIDATE_DIR);
    int rc = aka_list_files(dir.buf, NULL, &files, err);
    for (size_t i = 0; rc == 0 && i < files.n; i++) {
        aka_path_join(&path, dir.buf, files.v[i]);
        rc = aka_sha256_file(path.buf, one, err);
        strbuf_addf(&all, "%s %s\n", files.v[i], one);
    }
    if (rc == 0)
        aka_sha256_hex(all.buf, all.len, out);
    strvec_clear(&files);
    strbuf_release(&dir);
    strbuf_release(&all);
    strbuf_release(&path);
    return rc;
}

static int write_candidate(struct session *s, struct aka_err *err)
{
    const struct aka_policy_review_request *rq = s->rq;
    struct strbuf path = STRBUF_INIT, dir = STRBUF_INIT;
    aka_path_join(&dir, s->dir.buf, CANDIDATE_DIR);
    int rc = aka_mkdir_p(dir.buf, 0755, err);
    aka_path_join(&path, dir.buf, rq->kernel_name);
    if (rc == 0)
        rc = aka_write_file_plain(path.buf, rq->source->buf, rq->source->len, 0644, err);
    json_t *req = json_pack("{s:s, s:s, s:s}", "framework", rq->framework, "kernel",
                            rq->kernel_name, "verdict_file", VERDICT_FILE);
    aka_path_join(&path, dir.buf, "review_request.json");
    if (rc == 0)
        rc = aka_json_write_file(path.buf, req, err);
    json_decref(req);
    strbuf_release(&path);
    strbuf_release(&dir);
    return rc;
}

static int render_prompt(struct session *s, struct aka_err *err)
{
    const struct aka_brief_var vars[] = {{"framework", s->rq->framework},
                                         {"candidate_dir", CANDIDATE_DIR "/"},
                                         {"verdict_file", VERDICT_FILE},
                                         {NULL, NULL}};
    struct strbuf tmpl = STRBUF_INIT, text = STRBUF_INIT;
    strbuf_addf(&tmpl, "%s/runtime/prompts/policy_review.md", s->rq->repo_root);
    aka_path_join(&s->prompt, s->capture.buf, "prompt.md");
    int rc = aka_brief_render(tmpl.buf, vars, &text, err);
    if (rc == 0)
        rc = aka_write_file_atomic(s->prompt.buf, text.buf, text.len, 0644, err);
    strbuf_release(&tmpl);
    strbuf_release(&text);
    return rc;
}

static int prepare(struct session *s, struct aka_err *err)
{
    int rc = aka_reviewer_scratch("aka-policy-review", &s->dir, err);
    if (rc == 0)
        rc = write_candidate(s, err);
    if (rc == 0)
        rc = candidate_digest(s, s->before, err);
    strbuf_addf(&s->capture, "%s-capture-%ld", s->cache.buf, (long)getpid());
    if (rc == 0)
        rc = aka_mkdir_p(s->capture.buf, 0755, err);
    return rc == 0 ? render_prompt(s, err) : rc;
}

/* What the session left, judged: outcome and reason in res. */
static void judge(struct session *s, const struct aka_agent_result *ar, json_t **verdict,
                  struct aka_policy_review_result *res)
{
    char after[AKA_SHA256_HEX_LEN + 1], why[512];
    struct aka_err e = AKA_ERR_INIT;
    struct strbuf path = STRBUF_INIT;
    bool pass = false;
    aka_path_join(&path, s->dir.buf, VERDICT_FILE);
    if (candidate_digest(s, after, &e) < 0 || strcmp(after, s->before) != 0)
        outcome(res, "mutating", "the reviewer changed the candidate it reviewed");
    else if (ar->timed_out)
        outcome(res, "late", "the reviewer did not finish within %lds", s->rq->timeout_s);
    else if (!aka_is_file(path.buf))
        outcome(res, "missing", "the reviewer left no %s (exit %d)", VERDICT_FILE, ar->exit_code);
    else if (aka_json_load_file(path.buf, verdict, &e) < 0)
        outcome(res, "malformed", "%s", e.msg);
    else if (aka_policy_verdict_check(*verdict, &pass, why, sizeof(why)) < 0)
        outcome(res, "malformed", "%s: %s", VERDICT_FILE, why);
    else
        outcome(res, pass ? "pass" : "reject", "%s",
                json_string_value(json_object_get(*verdict, "summary")));
    strbuf_release(&path);
}

static int run_session(struct session *s, struct aka_policy_review_result *res, json_t **verdict,
                       struct aka_err *err)
{
    const struct aka_policy_review_request *rq = s->rq;
    struct aka_agent_result ar;
    struct aka_err e = AKA_ERR_INIT;
    if (prepare(s, err) < 0)
        return -1;
    struct aka_agent_request req = {.backend = rq->backend,
                                    .cli_path = rq->cli_path,
                                    .worktree = s->dir.buf,
                                    .brief_file = s->prompt.buf,
                                    .capture_dir = s->capture.buf,
                                    .timeout_s = rq->timeout_s,
                                    .effort = "max",
                                    .repo_root = rq->repo_root,
                                    .confine = rq->confine};
    if (aka_agent_run(&req, &ar, &e) < 0) {
        outcome(res, "unavailable", "the reviewer could not start: %s", e.msg);
        return 0;
    }
    res->usage = ar.usage;
    judge(s, &ar, verdict, res);
    return 0;
}

/* ---- the cache ---------------------------------------------------------------------------- */

static bool from_cache(const struct session *s, struct aka_policy_review_result *res)
{
    json_t *doc = NULL;
    struct aka_err e = AKA_ERR_INIT;
    bool pass = false;
    char why[512];
    if (!aka_is_file(s->cache.buf) || aka_json_load_file(s->cache.buf, &doc, &e) < 0)
        return false;
    json_t *v = json_object_get(doc, "verdict");
    bool ok = aka_policy_verdict_check(v, &pass, why, sizeof(why)) == 0;
    if (ok) {
        outcome(res, pass ? "pass" : "reject", "%s",
                json_string_value(json_object_get(v, "summary")));
        res->cached = true;
    }
    json_decref(doc);
    return ok;
}

static int store(const struct session *s, const char *digest, json_t *verdict, struct aka_err *err)
{
    json_t *doc = json_pack("{s:s, s:s, s:O}", "digest", digest, "framework", s->rq->framework,
                            "verdict", verdict);
    int rc = aka_json_write_file(s->cache.buf, doc, err);
    json_decref(doc);
    return rc;
}

int aka_policy_review(const struct aka_policy_review_request *rq,
                      struct aka_policy_review_result *res, struct aka_err *err)
{
    struct session s = {.rq = rq,
                        .dir = STRBUF_INIT,
                        .capture = STRBUF_INIT,
                        .prompt = STRBUF_INIT,
                        .cache = STRBUF_INIT};
    struct aka_err ignored = AKA_ERR_INIT;
    json_t *verdict = NULL;
    memset(res, 0, sizeof(*res));
    aka_token_usage_unavailable(&res->usage);
    if (!rq->workspace || !rq->backend || !rq->framework || !rq->kernel_name || !rq->source ||
        !rq->repo_root || strchr(rq->kernel_name, '/'))
        return aka_err_set(err, AKA_EXIT_USAGE, "policy review: incomplete request");
    aka_sha256_hex(rq->source->buf, rq->source->len, res->digest);
    aka_ws_path(&s.cache, rq->workspace, AKA_WS_POLICY_REVIEWS);
    int rc = aka_mkdir_p(s.cache.buf, 0755, err);
    strbuf_addf(&s.cache, "/%s.json", res->digest);
    if (rc == 0 && !from_cache(&s, res)) {
        rc = run_session(&s, res, &verdict, err);
        /* Only a verdict that was judged is kept; a failed session is asked again later. */
        if (rc == 0 && (res->pass || strcmp(res->outcome, "reject") == 0))
            rc = store(&s, res->digest, verdict, err);
    }
    json_decref(verdict);
    if (s.dir.len)
        aka_remove_tree(s.dir.buf, &ignored);
    strbuf_release(&s.dir);
    strbuf_release(&s.capture);
    strbuf_release(&s.prompt);
    strbuf_release(&s.cache);
    return rc;
}
