/*
 * review.c — asking one external reviewer (Codex or Qoder) for a review of a
 * frozen plan (reference §9.2, §9.3): `aka ask-codex`, `aka ask-qoder`.
 *
 * In order: the caller's own backend is never asked (ASK_<R>_SKIPPED: it
 * reviews in its own session); a reviewer the campaign disabled is not asked
 * (ASK_<R>_DISABLED: <reason>); otherwise the plan and the evidence are
 * copied into a fresh empty Git directory, the reviewer runs there through
 * the agent runtime on a prompt that also carries their text, and its final
 * message is the review. The review is read-only by contract: the inputs
 * (originals and copies) are hashed before and after, and a reviewer that
 * changed one is rejected and disabled. A reviewer that fails (cannot start,
 * exits nonzero, times out, answers nothing) is disabled for the rest of the
 * campaign. Every call's tokens go to the campaign's reviewer ledger.
 */
#include "agents/internal.h"
#include "base/fs.h"
#include "base/sha256.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_INPUTS     17 /* the plan and up to 16 evidence files */
#define INPUT_MAX_SIZE ((size_t)256 << 10)

static const char *const sections[] = {"RISKS:",
                                       "MISSING_REQUIREMENTS:",
                                       "DIRECTION_RECOMMENDATIONS:",
                                       "VALIDATION_RECOMMENDATIONS:",
                                       "QUESTIONS_OR_ASSUMPTIONS:",
                                       NULL};

struct input {
    const char *original; /* the caller's path */
    char copy[4096];      /* inputs/<name> in the scratch directory */
    char hash[AKA_SHA256_HEX_LEN + 1], copy_hash[AKA_SHA256_HEX_LEN + 1];
};

struct review {
    const struct aka_review_request *rq;
    const struct aka_reviewer_info *info;
    struct input in[MAX_INPUTS];
    size_t n;
    struct strbuf dir, capture, prompt;
    bool temp_capture; /* no workspace: the capture is removed afterwards */
};

static int note(struct aka_review_result *res, enum aka_review_outcome o, int code, const char *fmt,
                const char *a, const char *b)
{
    res->outcome = o;
    res->exit_code = code;
    strbuf_reset(&res->text);
    strbuf_addf(&res->text, fmt, a, b);
    return 0;
}

/* ---- checking the request ------------------------------------------------------ */

static int check_input(const char *path, const char *flag, struct aka_err *err)
{
    struct strbuf text = STRBUF_INIT;
    if (!aka_is_file(path))
        return aka_err_set(err, AKA_EXIT_USAGE, "%s %s: not a readable regular file", flag, path);
    int rc = aka_read_file(path, &text, INPUT_MAX_SIZE, err);
    if (rc == 0 && text.len == 0)
        rc = aka_err_set(err, AKA_EXIT_USAGE, "%s %s: the file is empty", flag, path);
    strbuf_release(&text);
    return rc;
}

static int resolve_timeout(const struct review *rv, long *out, struct aka_err *err)
{
    const char *v = getenv(rv->info->timeout_var);
    char *end = NULL;
    *out = rv->rq->timeout_s > 0 ? rv->rq->timeout_s : AKA_PLAN_REVIEW_TIMEOUT_S;
    if (rv->rq->timeout_s > 0 || !v || !*v)
        return 0;
    errno = 0;
    long t = strtol(v, &end, 10);
    if (errno || *end || t <= 0)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s=\"%s\": expected a positive whole number of seconds",
                           rv->info->timeout_var, v);
    *out = t;
    return 0;
}

static int check_request(struct review *rv, struct aka_err *err)
{
    const struct aka_review_request *rq = rv->rq;
    if (!rq->plan || !*rq->plan)
        return aka_err_set(err, AKA_EXIT_USAGE, "--plan: required (the plan file to review)");
    if (check_input(rq->plan, "--plan", err) < 0)
        return -1;
    rv->in[rv->n++].original = rq->plan;
    for (const char *const *e = rq->evidence; e && *e; e++) {
        if (rv->n == MAX_INPUTS)
            return aka_err_set(err, AKA_EXIT_USAGE, "--evidence: at most %d files", MAX_INPUTS - 1);
        if (check_input(*e, "--evidence", err) < 0)
            return -1;
        rv->in[rv->n++].original = *e;
    }
    return 0;
}

/* Skipped or disabled? Fills res and returns true when the reviewer is not to be asked. */
static bool not_asked(const struct review *rv, struct aka_review_result *res)
{
    char var[64];
    struct aka_plan_reviewers pr;
    const char *cli = getenv("ATREX_AGENT_CLI");
    if (cli && strcmp(cli, rv->info->backend) == 0)
        return note(res, AKA_REVIEW_SKIPPED, 0,
                    "%s_SKIPPED: this session is %s itself; review the plan in your own session",
                    rv->info->marker, cli) == 0;
    /* The campaign's cache first: it also knows of failures after this session began. */
    if (rv->rq->workspace && aka_plan_reviewers_load(rv->rq->workspace, &pr) == 0 &&
        !pr.r[rv->rq->reviewer].available)
        return note(res, AKA_REVIEW_DISABLED, 0, "%s_DISABLED: %s", rv->info->marker,
                    pr.r[rv->rq->reviewer].reason) == 0;
    snprintf(var, sizeof(var), "ATREX_PLAN_REVIEW_%s_ENABLED", rv->info->env_name);
    const char *enabled = getenv(var);
    if (enabled && strcmp(enabled, "0") == 0) {
        snprintf(var, sizeof(var), "ATREX_PLAN_REVIEW_%s_REASON", rv->info->env_name);
        const char *reason = getenv(var);
        return note(res, AKA_REVIEW_DISABLED, 0, "%s_DISABLED: %s", rv->info->marker,
                    reason && *reason ? reason : "disabled for this campaign") == 0;
    }
    return false;
}

/* ---- the reviewer's directory, prompt and inputs ---------------------------------- */

static int hash_inputs(struct review *rv, bool after, const char **changed, struct aka_err *err)
{
    char now[AKA_SHA256_HEX_LEN + 1];
    for (size_t i = 0; i < rv->n; i++) {
        struct input *in = &rv->in[i];
        const char *paths[2] = {in->original, in->copy};
        char *hashes[2] = {in->hash, in->copy_hash};
        for (int k = 0; k < 2; k++) {
            if (aka_sha256_file(paths[k], now, err) < 0) {
                if (!after)
                    return -1;
                *changed = paths[k]; /* removed or replaced by something unreadable */
                return 0;
            }
            if (!after)
                memcpy(hashes[k], now, sizeof(now));
            else if (strcmp(hashes[k], now) != 0) {
                *changed = paths[k];
                return 0;
            }
        }
    }
    return 0;
}

static void add_prompt_head(struct review *rv)
{
    struct strbuf *p = &rv->prompt;
    strbuf_addstr(p, "You are an independent reviewer of a plan to optimize a GPU kernel, written "
                     "by another engineer. You only review: do not create, change or delete any "
                     "file, and run no command that changes anything. The plan and its evidence "
                     "are in inputs/ of your working directory and are repeated below.\n\n"
                     "Judge the plan on evidence, not on taste: is it correct, is it likely to "
                     "make the kernel faster on the stated hardware, what does it miss, what "
                     "would you do instead, and how should the result be validated. Be concrete "
                     "and brief.\n\nAnswer in plain text with exactly these sections, each "
                     "starting on its own line:\n");
    strbuf_addf(p, "%s\n", rv->info->summary);
    for (const char *const *s = sections; *s; s++)
        strbuf_addf(p, "%s\n", *s);
}

static int copy_inputs(struct review *rv, struct aka_err *err)
{
    struct strbuf dst = STRBUF_INIT, text = STRBUF_INIT;
    int rc = 0;
    add_prompt_head(rv);
    for (size_t i = 0; rc == 0 && i < rv->n; i++) {
        struct input *in = &rv->in[i];
        strbuf_reset(&dst);
        if (i == 0)
            strbuf_addf(&dst, "%s/inputs/plan-%s", rv->dir.buf, aka_basename(in->original));
        else
            strbuf_addf(&dst, "%s/inputs/evidence-%zu-%s", rv->dir.buf, i,
                        aka_basename(in->original));
        snprintf(in->copy, sizeof(in->copy), "%s", dst.buf);
        strbuf_reset(&text);
        rc = aka_read_file(in->original, &text, INPUT_MAX_SIZE, err);
        if (rc == 0)
            rc = aka_copy_file(in->original, in->copy, err);
        strbuf_addf(&rv->prompt, "\n--- %s: %s ---\n%s%s", i == 0 ? "PLAN" : "EVIDENCE",
                    in->copy + rv->dir.len + 1, text.buf,
                    text.len && text.buf[text.len - 1] == '\n' ? "" : "\n");
    }
    strbuf_release(&dst);
    strbuf_release(&text);
    return rc;
}

/* <workspace>/.aka/reviews/<UTC>-<reviewer>-<pid>, or a temporary directory. */
static int make_capture(struct review *rv, struct aka_err *err)
{
    char at[40];
    if (!rv->rq->workspace) {
        rv->temp_capture = true;
        return aka_make_temp_dir(NULL, "aka-review-capture", &rv->capture, err);
    }
    aka_reviewer_utc_now(at, sizeof(at));
    aka_ws_path(&rv->capture, rv->rq->workspace, AKA_WS_REVIEWS);
    strbuf_addf(&rv->capture, "/%s-%s-%ld", at, rv->info->name, (long)getpid());
    return aka_mkdir_p(rv->capture.buf, 0755, err);
}

static int prepare(struct review *rv, struct aka_err *err)
{
    struct strbuf inputs = STRBUF_INIT, prompt = STRBUF_INIT;
    int rc = aka_reviewer_scratch("aka-review", &rv->dir, err);
    aka_path_join(&inputs, rv->dir.buf, "inputs");
    if (rc == 0)
        rc = aka_mkdir_p(inputs.buf, 0755, err);
    if (rc == 0)
        rc = copy_inputs(rv, err);
    if (rc == 0)
        rc = make_capture(rv, err);
    aka_path_join(&prompt, rv->capture.buf, "prompt.md");
    if (rc == 0)
        rc = aka_write_file_atomic(prompt.buf, rv->prompt.buf, rv->prompt.len, 0644, err);
    strbuf_reset(&rv->prompt);
    strbuf_addstr(&rv->prompt, prompt.buf); /* from here on: the prompt's path */
    strbuf_release(&inputs);
    strbuf_release(&prompt);
    return rc;
}

/* ---- judging what came back ----------------------------------------------------- */

static void missing_sections(const struct review *rv, const struct strbuf *text,
                             struct strbuf *missing)
{
    if (!strstr(text->buf, rv->info->summary))
        strbuf_addstr(missing, rv->info->summary);
    for (const char *const *s = sections; *s; s++)
        if (!strstr(text->buf, *s))
            strbuf_addf(missing, "%s%s", missing->len ? " " : "", *s);
}

static void disable(const struct review *rv, const char *status, const char *reason)
{
    struct aka_reviewer_state why = {false, "", ""};
    struct aka_err ignored = AKA_ERR_INIT;
    snprintf(why.status, sizeof(why.status), "%s", status);
    snprintf(why.reason, sizeof(why.reason), "%s", reason);
    aka_plan_reviewer_disable(rv->rq->workspace, rv->rq->reviewer, &why, &ignored);
}

static void judge(const struct review *rv, int called, const struct aka_reviewer_state *failure,
                  const char *changed, struct strbuf *answer, struct aka_review_result *res)
{
    struct strbuf missing = STRBUF_INIT, why = STRBUF_INIT;
    if (changed) {
        strbuf_addf(&why, "the review changed its input %s", changed);
        disable(rv, "changed_inputs", why.buf);
        note(res, AKA_REVIEW_REJECTED, 3, "%s_REJECTED: %s; the review is discarded",
             rv->info->marker, why.buf);
    } else if (called != 0) {
        disable(rv, failure->status, failure->reason);
        note(res, AKA_REVIEW_FAILED, strcmp(failure->status, "timeout") == 0 ? 124 : 1,
             "%s_FAILED: %s; it is disabled for the rest of this campaign", rv->info->marker,
             failure->reason);
    } else if (missing_sections(rv, answer, &missing), missing.len) {
        note(res, AKA_REVIEW_REJECTED, 3, "%s_REJECTED: the review lacks the sections %s",
             rv->info->marker, missing.buf);
    } else {
        res->outcome = AKA_REVIEW_DONE;
        res->exit_code = 0;
        strbuf_reset(&res->text);
        strbuf_addstr(&res->text, answer->buf);
    }
    strbuf_release(&missing);
    strbuf_release(&why);
}

static int ask(struct review *rv, struct aka_review_result *res, struct aka_err *err)
{
    const char *changed = NULL;
    long timeout_s;
    struct aka_agent_result ar;
    struct aka_reviewer_state failure = {false, "", ""};
    struct strbuf answer = STRBUF_INIT;
    if (resolve_timeout(rv, &timeout_s, err) < 0 || prepare(rv, err) < 0 ||
        hash_inputs(rv, false, &changed, err) < 0) {
        strbuf_release(&answer);
        return -1;
    }
    struct reviewer_call c = {rv->rq->reviewer, rv->dir.buf, rv->prompt.buf,
                              rv->capture.buf,  timeout_s,   rv->rq->repo_root};
    int called = aka_reviewer_call(&c, &ar, &answer, &failure);
    res->usage = ar.usage;
    aka_reviewer_ledger_append(rv->rq->workspace, rv->rq->reviewer, "review", &ar.usage);
    hash_inputs(rv, true, &changed, err);
    judge(rv, called, &failure, changed, &answer, res);
    strbuf_release(&answer);
    return 0;
}

int aka_plan_review(const struct aka_review_request *rq, struct aka_review_result *res,
                    struct aka_err *err)
{
    struct review rv = {
        .rq = rq, .dir = STRBUF_INIT, .capture = STRBUF_INIT, .prompt = STRBUF_INIT};
    struct aka_err ignored = AKA_ERR_INIT;
    strbuf_init(&res->text, 0);
    aka_token_usage_unavailable(&res->usage);
    res->outcome = AKA_REVIEW_FAILED;
    res->exit_code = 1;
    if ((int)rq->reviewer < 0 || rq->reviewer >= AKA_REVIEWERS)
        return aka_err_set(err, AKA_EXIT_USAGE, "reviewer: expected codex or qoder");
    rv.info = aka_reviewer_info(rq->reviewer);
    int rc = check_request(&rv, err);
    if (rc == 0 && !not_asked(&rv, res))
        rc = ask(&rv, res, err);
    if (rv.dir.len)
        aka_remove_tree(rv.dir.buf, &ignored);
    if (rv.temp_capture && rv.capture.len)
        aka_remove_tree(rv.capture.buf, &ignored);
    strbuf_release(&rv.dir);
    strbuf_release(&rv.capture);
    strbuf_release(&rv.prompt);
    return rc;
}

void aka_review_result_release(struct aka_review_result *res)
{
    strbuf_release(&res->text);
}
