/*
 * episode_policy.c — production's source gate between a valid candidate and its
 * verification (issue 14).
 *
 * The candidate's committed kernel — read from the object store, never from the
 * worktree the agent still controls — must pass the deterministic source policy of
 * policy/ for the campaign's framework, and then the policy reviewer
 * (agents/policy_review.c): a fresh session of the campaign's own agent backend,
 * confined like an episode, that must leave a complete verdict. The built-in agent has
 * no session to review with: then nothing is promoted (fail closed) unless the campaign
 * was started with --production-without-reviewer, which campaign.json pins as
 * "policy_reviewer": "waived". The distributed exception of the pinned benchmark
 * contract (DESIGN §4.3) switches off exactly these two checks; correctness and
 * performance are verified as for any candidate. What the gate decided is the
 * episode record's "policy" object; a rejection names the rule, the file and the line,
 * or the reviewer's outcome.
 */
#include "agents/agents.h"
#include "base/fs.h"
#include "optimize/internal.h"
#include "policy/policy.h"

#include <stdio.h>
#include <string.h>

const char *aka_episode_policy_reviewer(const struct aka_optimize_opts *o)
{
    if (!aka_optimize_is_production(o))
        return NULL;
    if (strcmp(o->agent_cli, "builtin") != 0)
        return "agent";
    return o->production_without_reviewer ? "waived" : "none";
}

/* The report as JSON, every file named as the worktree names it (not the scratch copy). */
static json_t *violations_json(const struct aka_policy_report *rep, const char *scratch,
                               const char *kernel)
{
    json_t *a = json_array();
    for (size_t i = 0; i < rep->n; i++) {
        const struct aka_policy_violation *v = &rep->v[i];
        const char *file = strncmp(v->file, scratch, strlen(scratch)) == 0 ? kernel : v->file;
        json_array_append_new(a, json_pack("{s:s, s:s, s:i, s:i, s:s}", "rule", v->rule, "file",
                                           file, "line", v->line, "column", v->column, "message",
                                           v->message));
    }
    return a;
}

/* The deterministic policy on the committed source (kept in *source for the reviewer). */
static int deterministic(struct aka_run *r, struct aka_episode *ep, struct strbuf *source,
                         struct aka_err *err)
{
    struct aka_git g;
    struct aka_policy_report rep = {0};
    struct aka_err e = AKA_ERR_INIT;
    struct strbuf dir = STRBUF_INIT, path = STRBUF_INIT;
    aka_git_open(&g, r->ws.buf);
    int rc = aka_git_show_blob(&g, ep->candidate, r->camp.kernel, source, err);
    aka_git_close(&g);
    if (rc == 0)
        rc = aka_make_temp_dir(NULL, "aka-policy", &dir, err);
    aka_path_join(&path, dir.buf, aka_basename(r->camp.kernel));
    if (rc == 0)
        rc = aka_write_file_plain(path.buf, source->buf, source->len, 0644, err);
    if (rc == 0 && aka_policy_check(r->camp.framework, path.buf, &rep, &e) < 0) {
        json_object_set_new(ep->policy, "source", json_string("unreadable"));
        aka_episode_set_status(ep, AKA_MEM_REJECTED,
                               "production policy: the candidate's %s could not be checked: %s",
                               r->camp.kernel, e.msg);
    } else if (rc == 0) {
        json_object_set_new(ep->policy, "source", json_string(rep.n ? "violations" : "clean"));
        json_object_set_new(ep->policy, "violations",
                            violations_json(&rep, dir.buf, r->camp.kernel));
        if (rep.n)
            aka_episode_set_status(
                ep, AKA_MEM_REJECTED,
                "production policy: rule %s at %s:%d:%d: %s (%zu violation%s in all)",
                rep.v[0].rule, r->camp.kernel, rep.v[0].line, rep.v[0].column, rep.v[0].message,
                rep.n, rep.n == 1 ? "" : "s");
    }
    aka_policy_report_free(&rep);
    if (dir.len)
        aka_remove_tree(dir.buf, &e);
    strbuf_release(&dir);
    strbuf_release(&path);
    return rc;
}

static int review(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_episode *ep,
                  const struct strbuf *source, struct aka_err *err)
{
    const char *const deny[] = {r->ws.buf, r->camp.op_dir, NULL};
    /* The operator's --agent-*-path binds, as for the episode's agent: a CLI whose runtime
     * lives there must start as a reviewer too. */
    struct strvec ro = STRVEC_INIT, rw = STRVEC_INIT;
    for (size_t i = 0; i < o->agent_read_only_paths.n; i++)
        strvec_push(&ro, o->agent_read_only_paths.v[i]);
    for (size_t i = 0; i < o->agent_writable_paths.n; i++)
        strvec_push(&rw, o->agent_writable_paths.v[i]);
    struct aka_agent_confinement c = {.mode = strcmp(o->agent_sandbox, "none") == 0
                                                  ? AKA_AGENT_SANDBOX_NONE
                                                  : AKA_AGENT_SANDBOX_BWRAP,
                                      .read_only = (const char *const *)ro.v,
                                      .writable = (const char *const *)rw.v,
                                      .deny = deny};
    struct aka_policy_review_request rq = {
        .workspace = r->ws.buf,
        .backend = o->agent_cli,
        .cli_path = o->agent_cli_path && *o->agent_cli_path ? o->agent_cli_path : NULL,
        .framework = r->camp.framework,
        .kernel_name = aka_basename(r->camp.kernel),
        .source = source,
        .timeout_s = o->production_review_timeout,
        .repo_root = r->camp.repo_root,
        .confine = &c};
    struct aka_policy_review_result res;
    aka_optimize_progress(r, "episode %ld: policy review of %.12s", ep->number, ep->candidate);
    int rc = aka_policy_review(&rq, &res, err);
    strvec_clear(&ro);
    strvec_clear(&rw);
    if (rc < 0)
        return -1;
    json_object_set_new(ep->policy, "reviewer",
                        json_pack("{s:s, s:s, s:s, s:b}", "outcome", res.outcome, "reason",
                                  res.reason, "digest", res.digest, "cached", res.cached));
    if (!res.pass)
        aka_episode_set_status(ep, AKA_MEM_REJECTED, "production policy reviewer: %s: %s",
                               res.outcome, res.reason);
    return 0;
}

int aka_episode_policy(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_episode *ep,
                       struct aka_err *err)
{
    const char *reviewer = aka_episode_policy_reviewer(o);
    struct strbuf source = STRBUF_INIT;
    if (!reviewer || ep->status != AKA_MEM_PROMOTED)
        return 0;
    json_decref(ep->policy);
    ep->policy = json_object();
    if (!r->op.contract.source_policy_inspection) { /* the distributed exception */
        /* Both skips are recorded with the pinned contract's reason, so a reader of the
         * record sees why an unreviewed candidate could be promoted; the record's typed
         * "exception" entry (episode_record.c) says what stayed enforced. */
        json_object_set_new(ep->policy, "source",
                            json_pack("{s:s, s:s}", "skipped", "distributed exception", "reason",
                                      r->op.contract.reason));
        json_object_set_new(
            ep->policy, "reviewer",
            json_pack("{s:s, s:s}", "outcome", "skipped", "reason", r->op.contract.reason));
        aka_optimize_progress(r, "episode %ld: source policy and reviewer skipped (%s)", ep->number,
                              r->op.contract.reason);
        return 0;
    }
    int rc = deterministic(r, ep, &source, err);
    if (rc == 0 && ep->status == AKA_MEM_PROMOTED) {
        if (strcmp(reviewer, "agent") == 0)
            rc = review(r, o, ep, &source, err);
        else if (strcmp(reviewer, "waived") == 0)
            json_object_set_new(
                ep->policy, "reviewer",
                json_pack("{s:s}", "outcome", "waived (--production-without-reviewer)"));
        else
            aka_episode_set_status(
                ep, AKA_MEM_REJECTED,
                "production: no policy reviewer can run (the built-in agent has no session "
                "to review with), so nothing is promoted; start the campaign with "
                "--production-without-reviewer to accept the deterministic policy alone");
    }
    strbuf_release(&source);
    return rc;
}
