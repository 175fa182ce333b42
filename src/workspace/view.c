/*
 * view.c — the agent's view of a workspace: the workspace files an agent's own aka
 * commands (`aka eval`, `aka ask-reviewer`, the tuner's history) read, copied into a
 * directory of the same shape that a confined agent sees read-only instead of the
 * canonical workspace (src/optimize/candidate.c makes one per session, src/agents/
 * confine.c binds it).
 *
 * The view is a throwaway copy: written plainly (no temp file, no fsync). Copied:
 * campaign.json, the operator snapshot and its manifest (so `aka eval` inside
 * runs the same pin checks as the supervisor: the asset tree against the campaign's pin,
 * the snapshot against its manifest), memory/, the plan-reviewer cache, the workspace's
 * plugins and earlier episodes' archived evidence. Writable in it (bound so by the agent
 * sandbox): the reviewer token ledger and the review captures, which the supervisor takes
 * back after the session (aka_ws_view_harvest). Nothing is ever read back from the view
 * but those two, and only as the agent's claims.
 *
 * In a generalized campaign the view's snapshot is the public operator (a snapshot of
 * .aka/public_operator/ made for the view, with its own manifest): the private one never
 * enters the view, and the agent's `aka eval` evaluates the public development cases,
 * unmasked (the view's campaign.json does not say generalized: nothing there is private).
 */
#include "base/fs.h"
#include "base/json.h"
#include "workspace/workspace.h"

#include <string.h>

/* The workspace's plugin directory (src/wiki/plugin.c reads it). */
#define PLUGINS_DIR ".aka-plugins"

/* A file or tree of the workspace, when it exists, to the same place in the view. */
static int copy_rel(const char *ws, const char *view, const char *rel, struct aka_err *err)
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

/*
 * campaign.json as the view's readers need it. For a confined agent op_dir names the
 * view's snapshot copy: the original operator is out of its reach, and naming it would
 * make every `aka eval` inside report the original as changed (aka_ws_operator_unchanged).
 * An unconfined agent can reach the original, so op_dir stays it and its `aka eval`
 * reports a changed original as in the workspace.
 */
static int write_campaign(const char *ws, const char *view, bool original_reachable,
                          struct aka_err *err)
{
    struct strbuf src = STRBUF_INIT, dst = STRBUF_INIT, op = STRBUF_INIT, text = STRBUF_INIT;
    json_t *doc = NULL;
    aka_ws_path(&src, ws, AKA_WS_CAMPAIGN);
    aka_ws_path(&dst, view, AKA_WS_CAMPAIGN);
    aka_ws_path(&op, view, AKA_WS_OPERATOR);
    int rc = aka_json_load_file(src.buf, &doc, err);
    if (rc == 0 && !json_is_object(doc))
        rc = aka_err_set(err, AKA_EXIT_FAILED, "%s: expected a JSON object", src.buf);
    if (rc == 0) { /* a throwaway copy: written plainly, no fsync */
        if (!original_reachable)
            json_object_set_new(doc, "op_dir", json_string(op.buf));
        json_object_del(doc, "generalized");
        json_object_del(doc, "agent_problem_sha256");
        aka_json_dump_compact(doc, &text);
        rc = aka_write_file_plain(dst.buf, text.buf, text.len, 0644, err);
    }
    json_decref(doc);
    strbuf_release(&src);
    strbuf_release(&dst);
    strbuf_release(&op);
    strbuf_release(&text);
    return rc;
}

/* Earlier episodes' archived journals and evaluations (the tuner's history). */
static int copy_archives(const char *ws, const char *view, struct aka_err *err)
{
    struct strbuf dir = STRBUF_INIT, ep = STRBUF_INIT, rel = STRBUF_INIT;
    struct strvec names = STRVEC_INIT;
    aka_ws_path(&dir, ws, AKA_WS_EPISODES);
    int rc = aka_is_dir(dir.buf) ? aka_list_dir(dir.buf, &names, err) : 0;
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        aka_path_join(&ep, aka_ws_rel(AKA_WS_EPISODES), names.v[i]);
        aka_ws_episode_archive(&rel, ep.buf);
        rc = copy_rel(ws, view, rel.buf, err);
    }
    strvec_clear(&names);
    strbuf_release(&dir);
    strbuf_release(&ep);
    strbuf_release(&rel);
    return rc;
}

int aka_ws_view_create(const char *ws, const char *view, bool original_reachable,
                       struct aka_err *err)
{
    static const enum aka_ws_file copied[] = {AKA_WS_OPERATOR, AKA_WS_OPERATOR_MANIFEST,
                                              AKA_WS_MEMORY, AKA_WS_PLAN_REVIEWERS,
                                              AKA_WS_REVIEWER_TOKENS};
    struct strbuf p = STRBUF_INIT;
    struct aka_ws_campaign camp;
    aka_ws_path(&p, view, AKA_WS_STATE_DIR);
    int rc = aka_remove_tree(view, err) < 0 ? -1 : aka_mkdir_p(p.buf, 0755, err);
    if (rc == 0)
        rc = aka_ws_campaign_load(ws, 0, &camp, err);
    bool generalized = rc == 0 && camp.generalized;
    if (rc == 0)
        aka_ws_campaign_release(&camp);
    if (rc == 0)
        rc = write_campaign(ws, view, original_reachable, err);
    aka_ws_path(&p, ws, AKA_WS_PUBLIC_OPERATOR);
    if (rc == 0 && generalized)
        rc = aka_ws_operator_snapshot_into(view, p.buf, err);
    /* generalized: the private snapshot and its manifest (the first two) stay out */
    for (size_t i = generalized ? 2 : 0; rc == 0 && i < sizeof(copied) / sizeof(copied[0]); i++)
        rc = copy_rel(ws, view, aka_ws_rel(copied[i]), err);
    if (rc == 0)
        rc = copy_rel(ws, view, PLUGINS_DIR, err);
    aka_ws_path(&p, view, AKA_WS_REVIEWER_TOKENS);
    if (rc == 0 && !aka_exists(p.buf))
        rc = aka_write_file_plain(p.buf, "", 0, 0644, err);
    aka_ws_path(&p, view, AKA_WS_REVIEWS);
    if (rc == 0)
        rc = aka_mkdir_p(p.buf, 0755, err);
    strbuf_release(&p);
    return rc == 0 ? copy_archives(ws, view, err) : -1;
}

void aka_ws_view_writable(const char *view, struct strvec *out)
{
    struct strbuf p = STRBUF_INIT;
    aka_ws_path(&p, view, AKA_WS_REVIEWER_TOKENS);
    strvec_push(out, p.buf);
    aka_ws_path(&p, view, AKA_WS_REVIEWS);
    strvec_push(out, p.buf);
    strbuf_release(&p);
}

/* One ledger line the session added: kept when it is a JSON object (the agent could write
 * anything there; its token counts are its own claim, as in the workspace before). */
static int harvest_line(json_t *obj, size_t lineno, void *data, struct aka_err *err)
{
    (void)lineno;
    return json_is_object(obj) ? aka_jsonl_append(data, obj, true, err) : 0;
}

/* The view's ledger began as a copy of the workspace's: what lies beyond it is new. */
static void harvest_ledger(const char *ws, const char *view, const char *episode_dir)
{
    struct strbuf from = STRBUF_INIT, to = STRBUF_INIT, old = STRBUF_INIT;
    struct strbuf added = STRBUF_INIT, tmp = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    aka_ws_path(&from, view, AKA_WS_REVIEWER_TOKENS);
    aka_ws_path(&to, ws, AKA_WS_REVIEWER_TOKENS);
    if (aka_is_plain_file(to.buf))
        aka_read_file(to.buf, &old, AKA_READ_LIMIT_DEFAULT, &ignored);
    if (aka_is_plain_file(from.buf) &&
        aka_read_file(from.buf, &added, AKA_READ_LIMIT_DEFAULT, &ignored) == 0 &&
        added.len > old.len && memcmp(added.buf, old.buf, old.len) == 0) {
        aka_path_join(&tmp, episode_dir, "reviewer_tokens.session.jsonl");
        aka_remove_tree(tmp.buf, &ignored); /* a rerun of the episode */
        if (aka_write_file_plain(tmp.buf, added.buf + old.len, added.len - old.len, 0644,
                                 &ignored) == 0)
            aka_jsonl_foreach(tmp.buf, harvest_line, to.buf, &ignored);
    }
    strbuf_release(&from);
    strbuf_release(&to);
    strbuf_release(&old);
    strbuf_release(&added);
    strbuf_release(&tmp);
}

void aka_ws_view_harvest(const char *ws, const char *view, const char *episode_dir)
{
    struct strbuf from = STRBUF_INIT, to = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    harvest_ledger(ws, view, episode_dir);
    aka_ws_path(&from, view, AKA_WS_REVIEWS);
    aka_path_join(&to, episode_dir, "reviews");
    if (aka_is_dir(from.buf))
        aka_copy_tree(from.buf, to.buf, &ignored);
    strbuf_release(&from);
    strbuf_release(&to);
}
