/*
 * paths.c — where every file of a campaign lives (DESIGN §4.4): the workspace's
 * supervisor state and canonical memory, an episode worktree's agent-side files, and
 * the worktree location. The only file in aka with a ".aka/" or "memory/" literal.
 */
#include "base/fs.h"
#include "workspace/workspace.h"

#include <string.h>

static const char *const ws_rel[AKA_WS_FILE_COUNT] = {
    [AKA_WS_STATE_DIR] = ".aka",
    [AKA_WS_CAMPAIGN] = ".aka/campaign.json",
    [AKA_WS_STATE] = ".aka/state.json",
    [AKA_WS_ACTIVE_EPISODE] = ".aka/active_episode.json",
    [AKA_WS_LOCK] = ".aka/supervisor.lock",
    [AKA_WS_COMMITS] = ".aka/commits.json",
    [AKA_WS_EPISODES] = ".aka/episodes",
    [AKA_WS_OPERATOR] = ".aka/operator",
    [AKA_WS_OPERATOR_MANIFEST] = ".aka/operator.json",
    [AKA_WS_PUBLIC_OPERATOR] = ".aka/public_operator",
    [AKA_WS_V1_DIR] = ".aka/v1",
    [AKA_WS_V1_GROUPS] = ".aka/v1/agent_groups.jsonl",
    [AKA_WS_PLAN_REVIEWERS] = ".aka/plan_reviewers.json",
    [AKA_WS_PLAN_REVIEWER_PROBES] = ".aka/plan_reviewers",
    [AKA_WS_REVIEWER_TOKENS] = ".aka/reviewer_tokens.jsonl",
    [AKA_WS_REVIEWS] = ".aka/reviews",
    [AKA_WS_BROKER_REQUESTS] = ".aka/broker/requests",
    [AKA_WS_BROKER_RESULTS] = ".aka/broker/results",
    [AKA_WS_POLICY_REVIEWS] = ".aka/policy_reviews",
    [AKA_WS_SUBMISSION] = ".aka/submission",
    [AKA_WS_MEMORY] = "memory",
    [AKA_WS_LIVE] = "memory/live.json",
    [AKA_WS_V0_FAILED] = "memory/v0.failed.json",
    [AKA_WS_V1_FAILED] = "memory/v1.failed.json",
};

static const char *const wt_rel[AKA_WT_FILE_COUNT] = {
    [AKA_WT_STATE_DIR] = ".aka",
    [AKA_WT_BRIEF] = ".aka/BRIEF.md",
    [AKA_WT_JOURNAL] = ".aka/journal.json",
    [AKA_WT_HANDOFF] = ".aka/handoff.json",
    [AKA_WT_EVALUATIONS] = ".aka/evaluations.jsonl",
    [AKA_WT_TRACE] = ".aka/trace.jsonl",
    [AKA_WT_PROFILES] = ".aka/profiles",
};

/* The non-canonical files under memory/ are named here too, so the list cannot drift. */
static const char gitignore_text[] = "# written by aka: supervisor state and the live view are "
                                     "never committed\n"
                                     ".aka/\n"
                                     "memory/live.json\n"
                                     "memory/v0.failed.json\n"
                                     "__pycache__/\n"
                                     "*.ncu-rep\n"
                                     /* the temp file of an atomic write (base/fs) that a
                                        supervisor killed mid-write leaves behind */
                                     "*.tmp.??????\n";

const char *aka_ws_rel(enum aka_ws_file f)
{
    return f < AKA_WS_FILE_COUNT ? ws_rel[f] : ".aka";
}

void aka_ws_path(struct strbuf *out, const char *ws, enum aka_ws_file f)
{
    aka_path_join(out, ws, aka_ws_rel(f));
}

void aka_ws_memory_rel(struct strbuf *out, long version)
{
    strbuf_reset(out);
    strbuf_addf(out, "%s/v%ld.json", ws_rel[AKA_WS_MEMORY], version);
}

void aka_ws_memory_path(struct strbuf *out, const char *ws, long version)
{
    struct strbuf rel = STRBUF_INIT;
    aka_ws_memory_rel(&rel, version);
    aka_path_join(out, ws, rel.buf);
    strbuf_release(&rel);
}

void aka_ws_episode_dir(struct strbuf *out, const char *ws, long number)
{
    aka_ws_path(out, ws, AKA_WS_EPISODES);
    strbuf_addf(out, "/e%04ld", number);
}

void aka_ws_episode_archive(struct strbuf *out, const char *episode_dir)
{
    aka_path_join(out, episode_dir, "runtime");
}

void aka_ws_worktrees_dir(struct strbuf *out, const char *ws)
{
    const char *slash = strrchr(ws, '/');
    strbuf_reset(out);
    strbuf_add(out, ws, slash ? (size_t)(slash - ws) : 0);
    strbuf_addf(out, "/.aka-worktrees/%s", slash ? slash + 1 : ws);
}

void aka_ws_candidate_ref(struct strbuf *out, const char *leaf)
{
    strbuf_reset(out);
    strbuf_addf(out, "refs/aka/candidates/%s", leaf);
}

void aka_ws_worktree_path(struct strbuf *out, const char *ws, const char *leaf)
{
    aka_ws_worktrees_dir(out, ws);
    strbuf_addf(out, "/%s", leaf);
}

const char *aka_ws_gitignore(void)
{
    return gitignore_text;
}

const char *aka_wt_rel(enum aka_wt_file f)
{
    return f < AKA_WT_FILE_COUNT ? wt_rel[f] : ".aka";
}

const char *aka_wt_name(enum aka_wt_file f)
{
    const char *rel = aka_wt_rel(f);
    const char *slash = strrchr(rel, '/');
    return slash ? slash + 1 : rel;
}

void aka_wt_path(struct strbuf *out, const char *worktree, enum aka_wt_file f)
{
    aka_path_join(out, worktree, aka_wt_rel(f));
}
