/*
 * episode.c — one episode from HEAD to its canonical version (DESIGN §3, §4.4):
 *
 *   preparing   active_episode.json first, then worktree + branch from HEAD,
 *               the in-progress journal and the rendered brief;
 *   exploring   the agent session (episode_assess.c) and the handoff assessment;
 *   verifying   fast or ABBA verification of a valid candidate (episode_verify.c);
 *   recording   promotion or outcome commit, cleanup (episode_record.c).
 *
 * The worktree lives outside the workspace (workspace/ names the place)
 * so that nothing the agent leaves behind can ever be picked up by a `git add`
 * in the incumbent. It is the agent's own repository, not a Git worktree of the
 * workspace (candidate.c): a candidate comes back by hash into
 * refs/aka/candidates/e<NNNN>, which outlives the worktree for inspection.
 */
#include "agents/agents.h"
#include "base/fs.h"
#include "base/json.h"
#include "optimize/internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Identity and paths: branch aka/e<NNNN>-<hex>, worktree e<NNNN>-<hex> (workspace/ says
 * where); the version is the next after the latest committed one. */
static int plan(struct aka_run *r, const struct aka_optimize_opts *o,
                const struct aka_episode_counters *c, struct aka_episode *ep, struct aka_err *err)
{
    struct aka_git g;
    struct strbuf leaf = STRBUF_INIT;
    char hex[9];
    long latest = -1;
    ep->number = (long)c->episodes + 1;
    ep->kind = aka_episode_kind_for(o, ep->number, c);
    ep->phase = "preparing";
    aka_random_hex8(hex);
    strbuf_addf(&ep->branch, "aka/e%04ld-%s", ep->number, hex);
    strbuf_addf(&leaf, "e%04ld-%s", ep->number, hex);
    aka_ws_worktree_path(&ep->worktree, r->ws.buf, leaf.buf);
    aka_ws_episode_dir(&ep->dir, r->ws.buf, ep->number);
    strbuf_release(&leaf);
    if (aka_ws_latest_version(r->ws.buf, &latest, err) < 0)
        return -1;
    ep->version = latest + 1;
    aka_git_open(&g, r->ws.buf);
    int rc = aka_git_rev_parse(&g, "HEAD", ep->base, err);
    aka_git_close(&g);
    return rc;
}

/* The agent's own repository (candidate.c), never a worktree of the canonical one, and the
 * read-only view its aka commands read instead of the canonical workspace. */
static int create_worktree(struct aka_run *r, struct aka_episode *ep, struct aka_err *err)
{
    return aka_mkdir_p(ep->dir.buf, 0755, err) < 0 ||
                   aka_candidate_repo_create(r, ep->worktree.buf, ep->branch.buf, ep->base, err) < 0
               ? -1
               : aka_candidate_view_create(r, ep->worktree.buf, err);
}

static int create_journal(const struct aka_episode *ep, struct aka_err *err)
{
    struct strbuf p = STRBUF_INIT;
    struct aka_episode_ids ids = {.episode = ep->number,
                                  .memory_version = ep->version,
                                  .base_commit = ep->base,
                                  .episode_branch = ep->branch.buf};
    aka_wt_path(&p, ep->worktree.buf, AKA_WT_STATE_DIR);
    int rc = aka_mkdir_p(p.buf, 0755, err);
    aka_wt_path(&p, ep->worktree.buf, AKA_WT_JOURNAL);
    if (rc == 0)
        rc = aka_journal_create(p.buf, &ids, NULL, err);
    strbuf_release(&p);
    return rc;
}

static void incumbent_summary(const struct aka_run *r, struct strbuf *out)
{
    struct aka_memory_record m;
    struct aka_err ignored = AKA_ERR_INIT;
    if (aka_ws_incumbent(r->ws.buf, &m, NULL, &ignored) == 0) {
        strbuf_addf(out, "v%ld (%s), latency geomean %.3f us", m.version,
                    aka_memory_status_names[m.status], m.latency_us_geomean);
        aka_memory_release(&m);
    } else {
        strbuf_addstr(out, "see `aka memory latest`");
    }
}

/* The last episodes' records, oldest first, digested for the brief (bounded). */
static void memory_digest(const struct aka_run *r, struct strbuf *out)
{
    struct aka_memory_listing l;
    struct aka_err ignored = AKA_ERR_INIT;
    struct strbuf dir = STRBUF_INIT, path = STRBUF_INIT;
    struct aka_memory_record m[AKA_MEMORY_DIGEST_RECORDS];
    const json_t *docs[AKA_MEMORY_DIGEST_RECORDS];
    size_t n = 0;
    aka_ws_path(&dir, r->ws.buf, AKA_WS_MEMORY);
    if (aka_memory_list(dir.buf, &l, &ignored) == 0) {
        size_t first =
            l.versions.n > AKA_MEMORY_DIGEST_RECORDS ? l.versions.n - AKA_MEMORY_DIGEST_RECORDS : 0;
        for (size_t i = first; i < l.versions.n; i++) {
            strbuf_reset(&path);
            aka_ws_memory_path(&path, r->ws.buf, l.versions.v[i]);
            if (aka_memory_load(path.buf, &m[n], &ignored) == 0 && !m[n].masked) {
                docs[n] = m[n].json;
                n++;
            } else if (!ignored.code) {
                aka_memory_release(&m[n]);
            }
            aka_err_clear(&ignored);
        }
        aka_memory_listing_release(&l);
    }
    aka_memory_digest(docs, n, AKA_MEMORY_DIGEST_CAP, out);
    for (size_t i = 0; i < n; i++)
        aka_memory_release(&m[i]);
    strbuf_release(&dir);
    strbuf_release(&path);
}

static int render_brief(struct aka_run *r, const struct aka_optimize_opts *o,
                        const struct aka_episode_counters *c, struct aka_episode *ep,
                        struct aka_err *err)
{
    static const char *const templates[] = {"fast.md", "full.md", "goal.md"};
    struct strbuf tpl = STRBUF_INIT, out = STRBUF_INIT, inc = STRBUF_INIT, dst = STRBUF_INIT;
    struct strbuf dig = STRBUF_INIT;
    char num[24], ver[24], trials[24], stalls[64];
    snprintf(num, sizeof(num), "%ld", ep->number);
    snprintf(ver, sizeof(ver), "%ld", ep->version);
    snprintf(trials, sizeof(trials), "%d", o->fast_trials);
    snprintf(stalls, sizeof(stalls), "%lld consecutive episodes without promotion", c->consecutive);
    incumbent_summary(r, &inc);
    memory_digest(r, &dig);
    const struct aka_brief_var vars[] = {
        {"episode", num},
        {"memory_version", ver},
        {"framework", o->framework},
        {"platform", o->platform},
        {"operator", r->op.name},
        {"kernel_file", r->camp.kernel},
        {"incumbent_summary", inc.buf},
        {"mode_policy", aka_optimize_is_production(o) ? "production" : "leaderboard"},
        {"notes", o->notes && *o->notes ? o->notes : "(none)"},
        {"skills_hint", aka_agent_skills_hint(o->agent_cli)},
        {"trials", trials},
        {"goal", o->goal && *o->goal ? o->goal : "restructure the kernel broadly"},
        {"stall_summary", stalls},
        {"memory_digest", dig.buf},
        {NULL, NULL},
    };
    strbuf_addf(&tpl, "%s/runtime/prompts/%s", r->env.repo_root, templates[ep->kind]);
    aka_wt_path(&dst, ep->worktree.buf, AKA_WT_BRIEF);
    int rc = aka_brief_render(tpl.buf, vars, &out, err);
    if (rc == 0)
        rc = aka_conversion_brief(r, o, &out, err); /* the Gluon directive while latched */
    if (rc == 0)
        rc = aka_optimize_plugin_brief(r, &out, err);
    if (rc == 0)
        rc = aka_write_file_atomic(dst.buf, out.buf, out.len, 0644, err);
    strbuf_reset(&dst);
    aka_path_join(&dst, ep->dir.buf, "BRIEF.md"); /* the supervisor's copy outlives the worktree */
    if (rc == 0)
        rc = aka_write_file_atomic(dst.buf, out.buf, out.len, 0644, err);
    strbuf_release(&tpl);
    strbuf_release(&out);
    strbuf_release(&inc);
    strbuf_release(&dig);
    strbuf_release(&dst);
    return rc;
}

static int prepare(struct aka_run *r, const struct aka_optimize_opts *o,
                   const struct aka_episode_counters *c, struct aka_episode *ep,
                   struct aka_err *err)
{
    if (plan(r, o, c, ep, err) < 0 || aka_episode_save_active(r, ep, err) < 0 ||
        create_worktree(r, ep, err) < 0)
        return -1;
    ep->phase = "exploring";
    if (aka_episode_save_active(r, ep, err) < 0 || create_journal(ep, err) < 0 ||
        render_brief(r, o, c, ep, err) < 0 ||
        aka_agent_install_skills(o->agent_cli, r->env.repo_root, ep->worktree.buf, err) < 0 ||
        aka_agent_install_plugin_skills(o->agent_cli, ep->worktree.buf, &r->plugin_skills, err) < 0)
        return -1; /* skills: .claude/ .qoder/ .agents/ (git-excluded); none for builtin */
    return 0;
}

/* Once per campaign, before its first agent session: which plan reviewers its agents may ask
 * (probed and cached in .aka/plan_reviewers.json; later episodes and restarts read the cache). */
static int ensure_plan_reviewers(struct aka_run *r, const struct aka_optimize_opts *o,
                                 struct aka_err *err)
{
    struct aka_plan_reviewers pr;
    if (aka_plan_reviewers_ensure(r->ws.buf, o->agent_cli, r->env.repo_root, &pr, err) < 0)
        return -1;
    if (pr.probed)
        aka_optimize_progress(r, "plan reviewers: codex %s (%s), qoder %s (%s)",
                              pr.r[AKA_REVIEWER_CODEX].available ? "enabled" : "disabled",
                              pr.r[AKA_REVIEWER_CODEX].status,
                              pr.r[AKA_REVIEWER_QODER].available ? "enabled" : "disabled",
                              pr.r[AKA_REVIEWER_QODER].status);
    return 0;
}

/* Counters after the canonical commit: promotion resets the stall count. Idempotent: an
 * episode already counted (a crash after state.json was saved) is not counted twice. */
static void count(struct aka_episode_counters *c, const struct aka_episode *ep)
{
    if (c->episodes >= ep->number)
        return;
    c->episodes = ep->number;
    c->tokens += ep->tokens;
    c->consecutive = ep->status == AKA_MEM_PROMOTED ? 0 : c->consecutive + 1;
    long long *slot = ep->status == AKA_MEM_PROMOTED          ? &c->accepted
                      : ep->status == AKA_MEM_PIVOT           ? &c->pivoted
                      : ep->status == AKA_MEM_BLOCKED         ? &c->blocked
                      : ep->status == AKA_MEM_INVALID_HANDOFF ? &c->protocol_failures
                      : ep->status == AKA_MEM_INTERRUPTED     ? &c->interrupted
                                                              : &c->rejected;
    (*slot)++;
}

int aka_episode_finish(struct aka_run *r, const struct aka_episode *ep,
                       struct aka_episode_counters *c, struct aka_err *err)
{
    count(c, ep);
    if (aka_state_save(r->ws.buf, c, err) < 0 || aka_episode_clear_active(r->ws.buf, err) < 0)
        return -1;
    aka_episode_progress(r, ep, "episode %ld: v%ld %s%s%s", ep->number, ep->version,
                         aka_memory_status_names[ep->status], ep->violation[0] ? ": " : "",
                         ep->violation);
    return 0;
}

void aka_episode_release(struct aka_episode *ep)
{
    strbuf_release(&ep->worktree);
    strbuf_release(&ep->branch);
    strbuf_release(&ep->dir);
    json_decref(ep->verification);
    json_decref(ep->policy);
    json_decref(ep->probes);
    json_decref(ep->promoted_doc);
}

static int play(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_episode *ep,
                struct aka_err *err)
{
    /* a candidate_ready handoff: assessed, then verified */
    return aka_episode_session(r, o, ep, err) < 0 ? -1 : aka_episode_assess(r, o, ep, err);
}

int aka_episode_run(struct aka_run *r, const struct aka_optimize_opts *o,
                    struct aka_episode_counters *c, enum aka_memory_status *status,
                    struct aka_err *err)
{
    struct aka_episode ep = {.worktree = STRBUF_INIT, .branch = STRBUF_INIT, .dir = STRBUF_INIT};
    int rc = ensure_plan_reviewers(r, o, err) < 0 ? -1 : prepare(r, o, c, &ep, err);
    if (rc == 0) {
        aka_episode_progress(r, &ep, "episode %ld -> v%ld, agent %s in %s", ep.number, ep.version,
                             o->agent_cli, ep.worktree.buf);
        rc = play(r, o, &ep, err);
    }
    if (rc == 0)
        rc = aka_env_check_before_blame(r, o, &ep, err);
    if (rc == 0)
        rc = aka_episode_record(r, &ep, err);
    if (rc == 0)
        rc = aka_episode_finish(r, &ep, c, err);
    if (rc == 0)
        *status = ep.status;
    aka_episode_release(&ep);
    return rc;
}
