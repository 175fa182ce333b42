/*
 * tuner_record.c — the tuner's paper trail: the history it must not repeat,
 * the journal, the kernel-only commit and the handoff.
 *
 * Everything goes through the same contracts an LLM agent's `aka journal` and
 * `aka handoff` use (contracts/records.h), so the supervisor cannot tell the
 * tuner from any other agent except by what it did.
 */
#include "agents/tuner_internal.h"
#include "base/fs.h"
#include "base/json.h"
#include "git/git.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- history ------------------------------------------------------------------------------- */

static int add_line(json_t *obj, size_t lineno, void *data, struct aka_err *err)
{
    struct tune_ctx *c = data;
    (void)lineno;
    (void)err;
    aka_tune_history_add_json(&c->hist, &c->space, obj);
    return 0;
}

/* Every canonical memory record of the campaign (read as plain JSON: the tuner only
 * needs the "tune" maps and kernel hashes, whatever else a record carries). */
static int add_memory(struct tune_ctx *c, struct aka_err *err)
{
    struct aka_memory_listing l;
    struct strbuf dir = STRBUF_INIT, path = STRBUF_INIT;
    int rc;
    memset(&l, 0, sizeof(l));
    aka_ws_path(&dir, c->workspace, AKA_WS_MEMORY);
    rc = aka_memory_list(dir.buf, &l, err);
    for (size_t i = 0; rc == 0 && i < l.versions.n; i++) {
        json_t *doc = NULL;
        aka_ws_memory_path(&path, c->workspace, l.versions.v[i]);
        rc = aka_json_load_file(path.buf, &doc, err);
        if (rc == 0)
            aka_tune_history_add_json(&c->hist, &c->space, doc);
        json_decref(doc);
    }
    aka_memory_listing_release(&l);
    strbuf_release(&dir);
    strbuf_release(&path);
    return rc;
}

/* One episode's evidence: an evaluations.jsonl and a journal.json in dir (either may be
 * missing). */
static int add_evidence(struct tune_ctx *c, const char *dir, const char *journal,
                        struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    json_t *doc = NULL;
    int rc = 0;
    aka_path_join(&path, dir, aka_wt_name(AKA_WT_EVALUATIONS));
    if (aka_is_file(path.buf))
        rc = aka_jsonl_foreach(path.buf, add_line, c, err);
    if (rc == 0 && aka_is_file(journal) && (rc = aka_json_load_file(journal, &doc, err)) == 0)
        aka_tune_history_add_json(&c->hist, &c->space, doc);
    json_decref(doc);
    strbuf_release(&path);
    return rc;
}

/* Earlier episodes' worktrees are gone; the supervisor archives their journal and
 * evaluations in each episode directory's archive (workspace/). */
static int add_archives(struct tune_ctx *c, struct aka_err *err)
{
    struct strbuf dir = STRBUF_INIT, run = STRBUF_INIT, journal = STRBUF_INIT;
    struct strvec names = STRVEC_INIT;
    int rc = 0;
    struct strbuf episode = STRBUF_INIT;
    aka_ws_path(&dir, c->workspace, AKA_WS_EPISODES);
    if (aka_is_dir(dir.buf))
        rc = aka_list_dir(dir.buf, &names, err);
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        aka_path_join(&episode, dir.buf, names.v[i]);
        aka_ws_episode_archive(&run, episode.buf);
        aka_path_join(&journal, run.buf, aka_wt_name(AKA_WT_JOURNAL));
        if (aka_is_dir(run.buf))
            rc = add_evidence(c, run.buf, journal.buf, err);
    }
    strvec_clear(&names);
    strbuf_release(&dir);
    strbuf_release(&episode);
    strbuf_release(&run);
    strbuf_release(&journal);
    return rc;
}

int tune_load_history(struct tune_ctx *c, struct aka_err *err)
{
    struct strbuf dir = STRBUF_INIT;
    aka_wt_path(&dir, c->worktree, AKA_WT_STATE_DIR);
    int rc = add_evidence(c, dir.buf, c->journal.buf, err);
    if (rc == 0)
        rc = add_memory(c, err);
    if (rc == 0)
        rc = add_archives(c, err);
    strbuf_release(&dir);
    return rc;
}

/* ---- journal ------------------------------------------------------------------------------- */

static int journal_create(struct tune_ctx *c, struct aka_err *err)
{
    struct aka_git g;
    struct strbuf branch = STRBUF_INIT, dir = STRBUF_INIT;
    aka_git_open(&g, c->worktree);
    int rc = aka_git_current_branch(&g, &branch, err);
    aka_git_close(&g);
    struct aka_episode_ids ids = {c->episode, c->memory_version, c->base_commit, branch.buf};
    const char *slash = strrchr(c->journal.buf, '/');
    strbuf_add(&dir, c->journal.buf, slash ? (size_t)(slash - c->journal.buf) : 0);
    if (rc == 0 && dir.len)
        rc = aka_mkdir_p(dir.buf, 0755, err);
    if (rc == 0)
        rc = aka_journal_create(c->journal.buf, &ids, NULL, err);
    strbuf_release(&branch);
    strbuf_release(&dir);
    return rc;
}

/* The supervisor's journal when it made one, else a fresh one for this episode. */
int tune_journal_open(struct tune_ctx *c, struct aka_err *err)
{
    struct aka_journal j;
    if (!aka_exists(c->journal.buf))
        return journal_create(c, err);
    memset(&j, 0, sizeof(j));
    if (aka_journal_load(c->journal.buf, &j, err) < 0)
        return -1;
    bool open = j.state == AKA_JOURNAL_IN_PROGRESS;
    aka_journal_release(&j);
    if (!open)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: the journal is already finalized (a finished episode); the "
                           "supervisor starts each episode with a fresh worktree",
                           c->journal.buf);
    return 0;
}

int tune_journal_add(struct tune_ctx *c, json_t *experiment, struct aka_err *err)
{
    int rc = aka_journal_append(c->journal.buf, experiment, NULL, err);
    json_decref(experiment);
    return rc;
}

/* ---- commit and handoff -------------------------------------------------------------------- */

/* Only the kernel may be in the commit (DESIGN §5: the diff is exactly the kernel file). */
static int check_staged(const struct aka_git *g, const char *kernel_rel, struct aka_err *err)
{
    static const char *const args[] = {"diff", "--cached", "--name-only", NULL};
    struct strbuf out = STRBUF_INIT;
    int rc = aka_git_run(g, args, &out, err);
    strbuf_trim(&out);
    if (rc == 0 && strcmp(out.buf, kernel_rel) != 0)
        rc = aka_err_set(err, AKA_EXIT_FAILED,
                         "the staged change is not exactly %s (staged: %s); refusing to commit",
                         kernel_rel, out.len ? out.buf : "nothing");
    strbuf_release(&out);
    return rc;
}

int tune_commit_kernel(struct tune_ctx *c, const char *message, char *oid, struct aka_err *err)
{
    struct aka_git g;
    const char *paths[] = {c->kernel_rel, NULL};
    aka_git_open(&g, c->worktree);
    int rc = aka_git_add(&g, paths, err);
    if (rc == 0)
        rc = check_staged(&g, c->kernel_rel, err);
    if (rc == 0)
        rc = aka_git_commit(&g, message, oid, err);
    aka_git_close(&g);
    return rc;
}

static const enum aka_journal_state journal_state_of[] = {
    [AKA_HANDOFF_CANDIDATE_READY] = AKA_JOURNAL_CANDIDATE_READY,
    [AKA_HANDOFF_PIVOT] = AKA_JOURNAL_PIVOT,
    [AKA_HANDOFF_BLOCKED] = AKA_JOURNAL_BLOCKED,
};

static json_t *outcome_json(const struct tune_ctx *c, enum aka_handoff_status st,
                            const char *summary)
{
    json_t *dirs = json_array();
    if (st != AKA_HANDOFF_BLOCKED)
        json_array_append_new(dirs, json_string(c->kind == AKA_EPISODE_GOAL
                                                    ? "restructure the kernel: its declared "
                                                      "knobs are near their best"
                                                    : "widen the declared knob sets or add "
                                                      "knobs for the next hot loop"));
    return json_pack("{s:s, s:o}", "summary", summary, "next_directions", dirs);
}

int tune_finish(struct tune_ctx *c, enum aka_handoff_status st, const char *commit,
                const char *summary, struct aka_err *err)
{
    struct aka_handoff h;
    json_t *outcome = outcome_json(c, st, summary);
    memset(&h, 0, sizeof(h));
    h.status = st;
    if (commit)
        snprintf(h.candidate_commit, sizeof(h.candidate_commit), "%s", commit);
    int rc = aka_journal_finalize(c->journal.buf, journal_state_of[st], outcome, commit, NULL, err);
    json_decref(outcome);
    if (rc == 0)
        rc = aka_handoff_submit(c->handoff.buf, c->journal.buf, &h, NULL, err);
    return rc;
}
