/*
 * candidate.c — where an agent works and how its candidate comes back
 * (DESIGN §1 principle 8, §4.4, §4.5).
 *
 *   tree   <parent>/.aka-worktrees/<ws>/<name>: the agent's own Git repository (a
 *          new repository on the session's branch holding the base and its history,
 *          fetched from the workspace), never a worktree of the canonical
 *          repository: the canonical refs, objects, config and hooks are not
 *          shared with it, so nothing done in the tree can write them;
 *   view   <tree>.view, read-only to a confined agent: what its aka commands read
 *          instead of the canonical workspace (ATREX_AKA_WORKSPACE names it):
 *          .aka/campaign.json with op_dir pointing at operator/, a copy of the
 *          operator, copies of memory/, of earlier episodes' journals and
 *          evaluations (the tuner's history), of the plan-reviewer cache and of
 *          the workspace's plugins; writable in it only the reviewer token ledger
 *          and .aka/reviews/ (`aka ask-reviewer`), whose new lines and captures
 *          the supervisor takes back after the session (harvest);
 *   take   at handoff the supervisor fetches exactly the candidate commit by hash
 *          from the tree into refs/aka/candidates/<name> of the canonical repository
 *          (hooks off, every object fsck-checked) and checks the fetched id. The
 *          tree's HEAD and branch are read through upload-pack (ls-remote) and its
 *          kernel file as plain bytes: no git command ever runs in the tree with its
 *          own configuration. Ancestry, the diff, verification and the squash then
 *          work on the canonical repository only.
 *
 * The paths of the canonical workspace this file reads (campaign.json, memory/,
 * episode archives, plan_reviewers.json, .aka-plugins/, reviewer_tokens.jsonl) are
 * named in write_view_campaign(), copy_workspace_files() and the harvest alone.
 */
#include "agents/agents.h"
#include "base/fs.h"
#include "base/json.h"
#include "optimize/internal.h"
#include "sandbox/evaluate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The identity of the agent's own commits (never the supervisor's). */
#define AGENT_GIT_NAME  "aka-agent"
#define AGENT_GIT_EMAIL "aka-agent@localhost"

void aka_candidate_trees_dir(const struct aka_run *r, struct strbuf *out)
{
    const char *slash = strrchr(r->ws.buf, '/');
    strbuf_reset(out);
    strbuf_add(out, r->ws.buf, slash ? (size_t)(slash - r->ws.buf) : 0);
    strbuf_addf(out, "/.aka-worktrees/%s", slash ? slash + 1 : r->ws.buf);
}

void aka_candidate_view_path(const char *tree, struct strbuf *out)
{
    strbuf_reset(out);
    strbuf_addf(out, "%s.view", tree);
}

static int git_in(const char *dir, const char *const *args, struct aka_err *err)
{
    struct aka_git g;
    aka_git_open(&g, dir);
    int rc = aka_git_run(&g, args, NULL, err);
    aka_git_close(&g);
    return rc;
}

int aka_candidate_repo_create(const struct aka_run *r, const char *tree, const char *branch,
                              const char *base, struct aka_err *err)
{
    struct strbuf parent = STRBUF_INIT, b = STRBUF_INIT;
    const char *slash = strrchr(tree, '/');
    strbuf_add(&parent, tree, slash ? (size_t)(slash - tree) : 0);
    strbuf_addf(&b, "--initial-branch=%s", branch);
    /* Supervisor-made before the agent starts: git runs here only now, never after. No
     * templates (sample hooks) and no automatic maintenance: a repository for one episode. */
    const char *init[] = {"init", "-q", "--template=", b.buf, tree, NULL};
    const char *fetch[] = {"-c",        "maintenance.auto=false",
                           "-c",        "gc.auto=0",
                           "fetch",     "-q",
                           "--no-tags", r->ws.buf,
                           base,        NULL};
    const char *reset[] = {"reset", "-q", "--hard", base, NULL};
    const char *name[] = {"config", "user.name", AGENT_GIT_NAME, NULL};
    const char *email[] = {"config", "user.email", AGENT_GIT_EMAIL, NULL};
    int rc = aka_mkdir_p(parent.buf, 0755, err) < 0 || git_in(parent.buf, init, err) < 0 ||
                     git_in(tree, fetch, err) < 0 || git_in(tree, reset, err) < 0 ||
                     git_in(tree, name, err) < 0
                 ? -1
                 : git_in(tree, email, err);
    strbuf_release(&parent);
    strbuf_release(&b);
    return rc;
}

/* ---- the view ---------------------------------------------------------------------------- */

/* .aka/campaign.json as the agent's `aka eval` must read it: op_dir is the operator copy. */
static int write_view_campaign(const struct aka_run *r, const char *view, struct aka_err *err)
{
    struct strbuf src = STRBUF_INIT, dst = STRBUF_INIT, op = STRBUF_INIT;
    json_t *doc = NULL;
    aka_path_join(&src, r->ws.buf, ".aka/campaign.json");
    aka_path_join(&dst, view, ".aka/campaign.json");
    aka_path_join(&op, view, "operator");
    int rc = aka_json_load_file(src.buf, &doc, err);
    if (rc == 0 && !json_is_object(doc))
        rc = aka_err_set(err, AKA_EXIT_FAILED, "%s: expected a JSON object", src.buf);
    if (rc == 0) { /* a throwaway copy: written plainly, no fsync */
        struct strbuf text = STRBUF_INIT;
        json_object_set_new(doc, "op_dir", json_string(op.buf));
        aka_json_dump_compact(doc, &text);
        rc = aka_write_file_plain(dst.buf, text.buf, text.len, 0644, err);
        strbuf_release(&text);
    }
    json_decref(doc);
    strbuf_release(&src);
    strbuf_release(&dst);
    strbuf_release(&op);
    return rc;
}

/* A tree of the workspace, when it exists, to the same place in the view. */
static int copy_if_there(const char *ws, const char *view, const char *rel, struct aka_err *err)
{
    struct strbuf from = STRBUF_INIT, to = STRBUF_INIT;
    aka_path_join(&from, ws, rel);
    aka_path_join(&to, view, rel);
    int rc = 0;
    if (aka_is_dir(from.buf))
        rc = aka_copy_tree(from.buf, to.buf, err); /* refuses a symlink */
    else if (aka_is_plain_file(from.buf))
        rc = aka_copy_file_plain(from.buf, to.buf, err);
    strbuf_release(&from);
    strbuf_release(&to);
    return rc;
}

/* Earlier episodes' archived journals and evaluations (.aka/episodes/e<NNNN>/runtime/). */
static int copy_archives(const char *ws, const char *view, struct aka_err *err)
{
    struct strbuf dir = STRBUF_INIT, rel = STRBUF_INIT;
    struct strvec names = STRVEC_INIT;
    aka_path_join(&dir, ws, ".aka/episodes");
    int rc = aka_is_dir(dir.buf) ? aka_list_dir(dir.buf, &names, err) : 0;
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        strbuf_reset(&rel);
        strbuf_addf(&rel, ".aka/episodes/%s/runtime", names.v[i]);
        rc = copy_if_there(ws, view, rel.buf, err);
    }
    strvec_clear(&names);
    strbuf_release(&dir);
    strbuf_release(&rel);
    return rc;
}

/* The places in the view a confined agent writes (`aka ask-reviewer`): the reviewer token
 * ledger (a copy, so the supervisor can tell the session's lines) and review captures. */
#define VIEW_LEDGER  ".aka/reviewer_tokens.jsonl"
#define VIEW_REVIEWS ".aka/reviews"

/* Every file of the canonical workspace an agent's commands may read, copied. */
static int copy_workspace_files(const char *ws, const char *view, struct aka_err *err)
{
    static const char *const rels[] = {"memory", ".aka/plan_reviewers.json", ".aka-plugins",
                                       VIEW_LEDGER, NULL};
    struct strbuf p = STRBUF_INIT;
    int rc = 0;
    for (const char *const *rel = rels; rc == 0 && *rel; rel++)
        rc = copy_if_there(ws, view, *rel, err);
    aka_path_join(&p, view, VIEW_LEDGER);
    if (rc == 0 && !aka_exists(p.buf))
        rc = aka_write_file_plain(p.buf, "", 0, 0644, err);
    aka_path_join(&p, view, VIEW_REVIEWS);
    if (rc == 0)
        rc = aka_mkdir_p(p.buf, 0755, err);
    strbuf_release(&p);
    return rc == 0 ? copy_archives(ws, view, err) : -1;
}

int aka_candidate_view_create(const struct aka_run *r, const char *tree, struct aka_err *err)
{
    struct strbuf view = STRBUF_INIT, p = STRBUF_INIT;
    aka_candidate_view_path(tree, &view);
    aka_path_join(&p, view.buf, "operator");
    int rc = aka_remove_tree(view.buf, err) < 0 ? -1 : aka_copy_tree(r->camp.op_dir, p.buf, err);
    aka_path_join(&p, view.buf, ".aka");
    if (rc == 0)
        rc = aka_mkdir_p(p.buf, 0755, err);
    if (rc == 0)
        rc = write_view_campaign(r, view.buf, err);
    if (rc == 0)
        rc = copy_workspace_files(r->ws.buf, view.buf, err);
    strbuf_release(&view);
    strbuf_release(&p);
    return rc;
}

/* One ledger line the session added: kept when it is a JSON object (the agent could write
 * anything there; its token counts are its own claim, as in the workspace before). */
static int harvest_line(json_t *obj, size_t lineno, void *data, struct aka_err *err)
{
    (void)lineno;
    return json_is_object(obj) ? aka_jsonl_append(data, obj, true, err) : 0;
}

void aka_candidate_view_harvest(const struct aka_run *r, const char *tree, const char *dir)
{
    struct strbuf view = STRBUF_INIT, from = STRBUF_INIT, to = STRBUF_INIT, old = STRBUF_INIT;
    struct strbuf added = STRBUF_INIT, tmp = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    aka_candidate_view_path(tree, &view);
    aka_path_join(&from, view.buf, VIEW_LEDGER);
    aka_path_join(&to, r->ws.buf, VIEW_LEDGER);
    /* The view's ledger began as a copy of the workspace's: what lies beyond it is new. */
    if (aka_is_plain_file(to.buf))
        aka_read_file(to.buf, &old, AKA_READ_LIMIT_DEFAULT, &ignored);
    if (aka_is_plain_file(from.buf) &&
        aka_read_file(from.buf, &added, AKA_READ_LIMIT_DEFAULT, &ignored) == 0 &&
        added.len > old.len && memcmp(added.buf, old.buf, old.len) == 0) {
        aka_path_join(&tmp, dir, "reviewer_tokens.session.jsonl");
        remove(tmp.buf); /* a rerun of the episode */
        if (aka_write_file_plain(tmp.buf, added.buf + old.len, added.len - old.len, 0644,
                                 &ignored) == 0)
            aka_jsonl_foreach(tmp.buf, harvest_line, to.buf, &ignored);
    }
    aka_path_join(&from, view.buf, VIEW_REVIEWS);
    aka_path_join(&tmp, dir, "reviews");
    if (aka_is_dir(from.buf))
        aka_copy_tree(from.buf, tmp.buf, &ignored);
    strbuf_release(&view);
    strbuf_release(&from);
    strbuf_release(&to);
    strbuf_release(&old);
    strbuf_release(&added);
    strbuf_release(&tmp);
}

int aka_candidate_remove(const struct aka_run *r, const char *tree, struct aka_err *err)
{
    struct strbuf view = STRBUF_INIT, dir = STRBUF_INIT;
    aka_candidate_trees_dir(r, &dir);
    aka_candidate_view_path(tree, &view);
    size_t n = dir.len;
    bool there = aka_exists(tree) || aka_exists(view.buf);
    /* The path comes from a record: only ever remove a tree of this campaign. */
    int rc = there && (strncmp(tree, dir.buf, n) != 0 || tree[n] != '/' ||
                       strchr(tree + n + 1, '/') || strstr(tree, "/.."))
                 ? aka_err_set(err, AKA_EXIT_FAILED,
                               "refusing to remove %s: not an episode tree of %s", tree, dir.buf)
                 : 0;
    if (rc == 0 && there)
        rc = aka_remove_tree(tree, err) < 0 ? -1 : aka_remove_tree(view.buf, err);
    strbuf_release(&view);
    strbuf_release(&dir);
    return rc;
}

/* ---- the agent sandbox of a session in a tree ----------------------------------------------- */

void aka_candidate_sandbox_init(struct aka_candidate_sandbox *s, const struct aka_run *r,
                                const struct aka_optimize_opts *o, const char *tree)
{
    struct aka_platform p;
    struct aka_err ignored = AKA_ERR_INIT;
    memset(s, 0, sizeof(*s));
    aka_candidate_view_path(tree, &s->view);
    /* What no bind may reach: the canonical workspace and the original operator. */
    strvec_push(&s->deny, r->ws.buf);
    strvec_push(&s->deny, r->camp.op_dir);
    for (size_t i = 0; i < o->agent_read_only_paths.n; i++)
        strvec_push(&s->read_only, o->agent_read_only_paths.v[i]);
    for (size_t i = 0; i < o->agent_writable_paths.n; i++)
        strvec_push(&s->writable, o->agent_writable_paths.v[i]);
    /* Writable inside the otherwise read-only view: what `aka ask-reviewer` writes. */
    strvec_pushf(&s->writable, "%s/" VIEW_LEDGER, s->view.buf);
    strvec_pushf(&s->writable, "%s/" VIEW_REVIEWS, s->view.buf);
    s->c = (struct aka_agent_confinement){
        .mode = strcmp(o->agent_sandbox, "none") == 0 ? AKA_AGENT_SANDBOX_NONE
                                                      : AKA_AGENT_SANDBOX_BWRAP,
        .view_dir = s->view.buf,
        .read_only = (const char *const *)s->read_only.v,
        .writable = (const char *const *)s->writable.v,
        .deny = (const char *const *)s->deny.v,
        /* The GPU the agent's own `aka eval` runs on (evaluate.c uses GPU 0 on NVIDIA). */
        .gpu_count =
            aka_platform_parse(o->platform, &p, &ignored) == 0 && p.kind == AKA_PLATFORM_NVIDIA ? 1
                                                                                                : 0,
    };
}

void aka_candidate_sandbox_release(struct aka_candidate_sandbox *s)
{
    strbuf_release(&s->view);
    strvec_clear(&s->deny);
    strvec_clear(&s->read_only);
    strvec_clear(&s->writable);
}

/* ---- taking the candidate ---------------------------------------------------------------------
 */

/* The tree's kernel file equals the committed candidate's (no uncommitted change to it). */
static bool kernel_left_committed(const struct aka_run *r, const struct aka_git *g,
                                  const struct aka_candidate_take *t)
{
    struct strbuf blob = STRBUF_INIT, disk = STRBUF_INIT, path = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    aka_path_join(&path, t->tree, r->camp.kernel);
    bool same = aka_git_show_blob(g, t->candidate, r->camp.kernel, &blob, &ignored) == 0 &&
                aka_is_plain_file(path.buf) &&
                aka_read_file(path.buf, &disk, AKA_READ_LIMIT_DEFAULT, &ignored) == 0 &&
                blob.len == disk.len && memcmp(blob.buf, disk.buf, blob.len) == 0;
    strbuf_release(&blob);
    strbuf_release(&disk);
    strbuf_release(&path);
    return same;
}

static void take_checks(const struct aka_run *r, const struct aka_git *g,
                        const struct aka_candidate_take *t, char *why, size_t n)
{
    char head[AKA_GIT_OID_HEX + 1];
    struct strbuf branch = STRBUF_INIT;
    struct aka_err e = AKA_ERR_INIT;
    bool ancestor = false;
    if (aka_git_fetch_commit(g, t->tree, t->candidate, t->ref, &e) < 0)
        snprintf(why, n, "candidate %.12s could not be taken from the episode repository: %s",
                 t->candidate, e.msg);
    else if (aka_git_remote_head(g, t->tree, &branch, head, &e) < 0)
        snprintf(why, n, "the episode repository's HEAD cannot be read: %s", e.msg);
    else if (strcmp(head, t->candidate) != 0)
        snprintf(why, n, "candidate %.12s is not the worktree HEAD %.12s", t->candidate, head);
    else if (strcmp(branch.buf, t->branch) != 0)
        snprintf(why, n, "the worktree left its branch %s", t->branch);
    else if (aka_git_is_ancestor(g, t->base, t->candidate, &ancestor, &e) < 0 || !ancestor)
        snprintf(why, n, "candidate %.12s does not descend from %.12s", t->candidate, t->base);
    else if (!kernel_left_committed(r, g, t))
        snprintf(why, n,
                 "the worktree has uncommitted changes to %s: the candidate is not what "
                 "was left",
                 r->camp.kernel);
    strbuf_release(&branch);
}

bool aka_candidate_take(const struct aka_run *r, const struct aka_candidate_take *t, char *why,
                        size_t n)
{
    struct aka_git g;
    why[0] = '\0';
    aka_git_open(&g, r->ws.buf);
    take_checks(r, &g, t, why, n);
    aka_git_close(&g);
    return why[0] == '\0';
}
