/*
 * episode_record.c — the one canonical version an episode produces, whatever
 * happened (DESIGN §3, §4.4; upstream §2.6, §2.7, invariants 2, 5, 7):
 *
 *   promoted   HEAD == base, `git merge --squash` of the candidate, the staged
 *              names re-checked (only the kernel file), memory/v<N>.json added,
 *              one promotion commit (subjects: workspace/subject.c);
 *   otherwise  HEAD == base, memory/v<N>.json describing the unchanged
 *              incumbent (carried from the committed incumbent record), one
 *              outcome commit.
 *
 * Before the commit is made, exactly what it will be (parent, tree, subject) is
 * written into the active record: a resume accepts a HEAD advance only when it
 * is that commit (episode_recover.c). Any failure during promotion resets the
 * incumbent to the base before the error propagates, so HEAD is never a
 * half-made promotion. After the commit the file must equal its committed copy
 * before anything else advances. Then the worktree's evidence is archived, the
 * worktree and its view removed (the candidate stays reachable as
 * refs/aka/candidates/e<NNNN>).
 */
#include "base/fs.h"
#include "base/json.h"
#include "optimize/internal.h"
#include "profile/profile.h"

#include <string.h>

static int require_head_is_base(const struct aka_git *g, const struct aka_episode *ep,
                                struct aka_err *err)
{
    char head[AKA_GIT_OID_HEX + 1];
    if (aka_git_rev_parse(g, "HEAD", head, err) < 0)
        return -1;
    if (strcmp(head, ep->base) != 0)
        return aka_err_set(err, AKA_EXIT_FAILED,
                           "episode %ld: the incumbent moved during the episode (HEAD %.12s, base "
                           "%.12s); refusing to record v%ld",
                           ep->number, head, ep->base, ep->version);
    return 0;
}

static json_t *episode_object(const struct aka_run *r, const struct aka_episode *ep)
{
    json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:o, s:s, s:I, s:o}", "number",
                          (json_int_t)ep->number, "kind", aka_episode_kind_names[ep->kind],
                          "branch", ep->branch.buf, "base_commit", ep->base, "candidate_commit",
                          ep->candidate[0] ? json_string(ep->candidate) : json_null(), "session_id",
                          ep->session_id, "tokens", (json_int_t)ep->tokens, "violation",
                          ep->violation[0] ? json_string(ep->violation) : json_null());
    if (ep->recovered_handoff) /* the agent finished after its supervisor stopped */
        json_object_set_new(o, "recovered_terminal_handoff", json_true());
    /* Whether the agent ran confined (--agent-sandbox, pinned with the campaign). */
    json_object_set_new(o, "agent_sandbox",
                        json_string(r->camp.agent_sandbox ? r->camp.agent_sandbox : "bwrap"));
    /* Where the agent's own evaluations ran (--agent-eval, or a remote transport). */
    json_object_set_new(o, "agent_eval", json_string(aka_episode_agent_eval(ep)));
    return o;
}

/* Unchanged incumbent: carry the committed incumbent record's measurements forward. */
static json_t *outcome_doc(struct aka_run *r, const struct aka_episode *ep, struct aka_err *err)
{
    struct aka_memory_record m;
    long from = -1;
    json_t *doc = NULL;
    int rc = aka_ws_incumbent(r->ws.buf, &m, NULL, err);
    if (rc < 0)
        return NULL; /* an unreadable canonical record: fail closed, never guess */
    if (rc == 0) {
        doc = json_deep_copy(m.json);
        from = m.version;
        aka_memory_release(&m);
    } else { /* no measurement to carry: say so, never invent one */
        doc = json_pack("{s:{s:s}, s:{s:s, s:n, s:n, s:n}}", "performance", "measurement_status",
                        "not_evaluated_or_incomplete", "correctness", "status", "UNKNOWN",
                        "max_abs_err", "max_rel_err", "rel_err");
    }
    json_t *perf = json_object_get(doc, "performance");
    json_object_set_new(perf, "measurement_subject", json_string("incumbent"));
    json_object_set_new(perf, "carried_from_version",
                        from >= 0 ? json_sprintf("v%ld", from) : json_null());
    json_object_set_new(doc, "git_commit_hash", json_null());
    json_object_set_new(
        doc, "quality_gate",
        json_pack("{s:s, s:s}", "result", "FAIL", "failure_reason",
                  ep->violation[0] ? ep->violation : aka_memory_status_names[ep->status]));
    json_object_set_new(doc, "optimization",
                        json_pack("{s:s, s:s}", "action_category", "episode_outcome",
                                  "action_description",
                                  "no promotion: the incumbent is unchanged"));
    return doc;
}

/* The profile summary the agent cited: the last experiment naming one ("profile": "p0002")
 * that exists, else the newest summary of the episode, else none. */
static json_t *cited_profile(const char *worktree, const json_t *journal)
{
    json_t *exps = json_object_get(journal, "experiments");
    for (size_t i = json_array_size(exps); i-- > 0;) {
        const char *name = json_string_value(json_object_get(json_array_get(exps, i), "profile"));
        json_t *doc = name ? aka_profile_cited(worktree, name) : NULL;
        if (doc)
            return doc;
    }
    return aka_profile_latest(worktree);
}

/* What the agent learned: the journal's experiments, directions and the profile it cited. A
 * journal that cannot be read (an interrupted episode) leaves the fields out, never invented. */
static void learned(const struct aka_episode *ep, json_t *doc)
{
    struct strbuf path = STRBUF_INIT;
    struct aka_journal j;
    struct aka_err ignored = AKA_ERR_INIT;
    static const char *const carried[] = {"experience", "open_directions", "profile_evidence",
                                          "wiki_citations"};
    for (size_t i = 0; i < 4; i++) /* the incumbent's, when its record was carried forward */
        json_object_del(doc, carried[i]);
    aka_wt_path(&path, ep->worktree.buf, AKA_WT_JOURNAL);
    if (aka_is_file(path.buf) && aka_journal_load(path.buf, &j, &ignored) == 0) {
        json_t *profile = cited_profile(ep->worktree.buf, j.json);
        json_object_set_new(doc, "experience", aka_memory_experience(j.json));
        json_object_set_new(doc, "open_directions", aka_memory_open_directions(j.json));
        json_object_set_new(doc, "profile_evidence", aka_memory_profile_evidence(j.json, profile));
        json_object_set_new(doc, "wiki_citations", aka_memory_wiki_citations(j.json));
        json_decref(profile);
        aka_journal_release(&j);
    }
    strbuf_release(&path);
}

static json_t *record_doc(struct aka_run *r, const struct aka_episode *ep, struct aka_err *err)
{
    json_t *doc =
        ep->status == AKA_MEM_PROMOTED ? json_deep_copy(ep->promoted_doc) : outcome_doc(r, ep, err);
    char now[AKA_TIMESTAMP_MAX];
    if (!doc)
        return NULL;
    aka_record_now(now);
    json_object_set_new(doc, "version", json_sprintf("v%ld", ep->version));
    json_object_set_new(doc, "status", json_string(aka_memory_status_names[ep->status]));
    json_object_set_new(doc, "masked", json_false());
    json_object_set_new(doc, "timestamp", json_string(now));
    json_object_set_new(doc, "episode", episode_object(r, ep));
    /* Upstream's section, which `aka status` reads the episode kind from. */
    json_object_set_new(doc, "long_horizon",
                        json_pack("{s:s, s:s, s:o}", "status", aka_memory_status_names[ep->status],
                                  "mode", aka_episode_kind_names[ep->kind], "candidate_commit",
                                  ep->candidate[0] ? json_string(ep->candidate) : json_null()));
    json_object_set_new(doc, "verification",
                        ep->verification ? json_incref(ep->verification) : json_null());
    /* Production only, and this episode's own: an outcome record starts as a copy of the
     * incumbent's, whose gate and probes it must not seem to carry. */
    json_object_del(doc, "policy");
    json_object_del(doc, "probes");
    json_object_del(doc, "exception");
    if (ep->policy) /* what the source gate decided */
        json_object_set_new(doc, "policy", json_incref(ep->policy));
    if (ep->policy && !r->op.contract.source_policy_inspection) /* why it skipped inspection */
        json_object_set_new(
            doc, "exception",
            aka_distributed_exception_json(
                &r->op.contract, aka_cpu_stand_in(r->camp.platform, r->camp.cuda_arch, &r->op)));
    if (ep->probes) /* the numerical probes' plan and result */
        json_object_set_new(doc, "probes", json_incref(ep->probes));
    learned(ep, doc);
    /* How far from the platform's ceilings the version is (shown by `aka status`). */
    json_object_set_new(doc, "roofline",
                        aka_version_roofline(r, json_object_get(doc, "performance")));
    return doc;
}

json_t *aka_version_roofline(const struct aka_run *r, const json_t *performance)
{
    if (r->camp.generalized)
        return json_pack("{s:s}", "unknown",
                         "not computed: the shapes of a generalized campaign are private");
    return aka_roofline_of(r->env.repo_root, r->ws.buf, r->camp.platform, &r->op, performance,
                           true);
}

/* After `merge --squash`, only the kernel file may be staged (defence in depth). */
static int check_staged(const struct aka_run *r, const struct aka_git *g, struct aka_err *err)
{
    const char *args[] = {"diff",          "--cached",      "--name-only", "--no-renames",
                          "--no-ext-diff", "--no-textconv", NULL};
    struct strbuf out = STRBUF_INIT, want = STRBUF_INIT;
    strbuf_addf(&want, "%s\n", r->camp.kernel);
    int rc = aka_git_run(g, args, &out, err);
    if (rc == 0 && strcmp(out.buf, want.buf) != 0)
        rc = aka_err_set(err, AKA_EXIT_FAILED, "promotion staged more than %s: %s", r->camp.kernel,
                         out.buf);
    strbuf_release(&out);
    strbuf_release(&want);
    return rc;
}

/* The version commit, written ahead into the active record before it is made. */
static int commit_ahead(struct aka_run *r, struct aka_episode *ep, const char *rel,
                        struct aka_err *err)
{
    struct aka_git g;
    char oid[AKA_GIT_OID_HEX + 1];
    const char *paths[] = {rel, NULL};
    struct aka_commit_subject s = {.episode = ep->number, .version = ep->version};
    s.kind = ep->status == AKA_MEM_PROMOTED ? AKA_COMMIT_PROMOTION : AKA_COMMIT_OUTCOME;
    s.status = ep->status;
    aka_git_open(&g, r->ws.buf);
    int rc = aka_git_add(&g, paths, err) < 0
                 ? -1
                 : aka_ws_commit_prepare(r->ws.buf, &s, &ep->intent, err);
    aka_git_close(&g);
    ep->has_intent = rc == 0;
    if (rc == 0)
        rc = aka_episode_save_active(r, ep, err);
    return rc < 0 ? -1 : aka_ws_commit_make(r->ws.buf, &ep->intent, oid, err);
}

static int commit_version(struct aka_run *r, const struct aka_git *g, struct aka_episode *ep,
                          struct aka_err *err)
{
    struct strbuf rel = STRBUF_INIT;
    bool promote = ep->status == AKA_MEM_PROMOTED;
    json_t *doc = record_doc(r, ep, err);
    aka_ws_memory_rel(&rel, ep->version);
    int rc = !doc ? -1 : promote ? aka_git_merge_squash(g, ep->candidate, err) : 0;
    if (rc == 0 && promote)
        rc = check_staged(r, g, err);
    if (rc == 0)
        rc = aka_ws_memory_write(r->ws.buf, doc, err);
    if (rc == 0)
        rc = commit_ahead(r, ep, rel.buf, err);
    if (rc < 0 && doc) { /* never leave a half-made version at HEAD */
        struct aka_err ignored = AKA_ERR_INIT;
        struct strbuf p = STRBUF_INIT;
        aka_git_reset_hard(g, ep->base, &ignored);
        aka_path_join(&p, r->ws.buf, rel.buf);
        aka_remove_tree(p.buf, &ignored);
        strbuf_release(&p);
    }
    json_decref(doc);
    strbuf_release(&rel);
    return rc;
}

/* Keep the agent's evidence (journal, handoff, evaluations) beside the brief. */
static void archive_runtime(const struct aka_episode *ep)
{
    static const enum aka_wt_file files[] = {AKA_WT_JOURNAL, AKA_WT_HANDOFF, AKA_WT_EVALUATIONS,
                                             AKA_WT_TRACE};
    struct strbuf dir = STRBUF_INIT, dst = STRBUF_INIT, src = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    aka_ws_episode_archive(&dir, ep->dir.buf);
    aka_mkdir_p(dir.buf, 0755, &ignored);
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        aka_wt_path(&src, ep->worktree.buf, files[i]);
        aka_path_join(&dst, dir.buf, aka_wt_name(files[i]));
        if (aka_is_file(src.buf))
            aka_copy_file(src.buf, dst.buf, &ignored);
    }
    /* The agent's profile summaries: the episode's profiles/, never a canonical commit. */
    aka_wt_path(&src, ep->worktree.buf, AKA_WT_PROFILES);
    strbuf_reset(&dst);
    aka_path_join(&dst, ep->dir.buf, "profiles");
    if (aka_is_dir(src.buf))
        aka_copy_tree(src.buf, dst.buf, &ignored);
    strbuf_release(&dir);
    strbuf_release(&dst);
    strbuf_release(&src);
}

int aka_episode_record(struct aka_run *r, struct aka_episode *ep, struct aka_err *err)
{
    struct aka_git g;
    aka_git_open(&g, r->ws.buf);
    ep->phase = ep->status == AKA_MEM_PROMOTED ? "promoting" : "recording";
    int rc = aka_episode_save_active(r, ep, err) < 0 ? -1 : require_head_is_base(&g, ep, err);
    if (rc == 0)
        rc = commit_version(r, &g, ep, err);
    if (rc == 0)
        rc = aka_ws_check_canonical(r->ws.buf, ep->version, err);
    if (rc == 0) {
        ep->phase = ep->status == AKA_MEM_PROMOTED ? "promoted" : "recorded";
        rc = aka_episode_save_active(r, ep, err);
    }
    aka_git_close(&g);
    if (rc == 0)
        rc = aka_episode_drop_worktree(r, ep, err);
    if (rc == 0)
        aka_live_update(r, ep->phase);
    return rc;
}

int aka_episode_drop_worktree(struct aka_run *r, const struct aka_episode *ep, struct aka_err *err)
{
    static const char *const prune[] = {"worktree", "prune", NULL};
    struct aka_git g;
    /* A crash may have come before the tree was made or after its removal. */
    if (aka_is_dir(ep->worktree.buf))
        archive_runtime(ep);
    int rc = aka_candidate_remove(r, ep->worktree.buf, err);
    /* A campaign from before candidate repositories may still register a Git worktree. */
    aka_git_open(&g, r->ws.buf);
    if (rc == 0)
        rc = aka_git_run(&g, prune, NULL, err);
    aka_git_close(&g);
    return rc;
}
