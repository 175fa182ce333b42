/*
 * episode_recover.c — an episode a stopped supervisor left in flight
 * (DESIGN §7; upstream §8.2, invariants 10 and 11).
 *
 * The active record names the episode, its version, base and worktree, and —
 * written ahead of the version commit — exactly the commit the supervisor was
 * about to make. Two states are safe to continue from, and only those:
 *
 *   HEAD == base      nothing reached the incumbent: undo a half-made squash
 *                     (reset to the base); then a valid late handoff (the
 *                     agent finished after its supervisor stopped) is finished
 *                     as the live path would, else the episode is recorded as
 *                     `interrupted` through the ordinary outcome path;
 *   HEAD != base      the version commit was made before the crash: it is
 *                     accepted only when it is exactly the commit the record
 *                     announced (parent, tree, subject, the supervisor's
 *                     name) and memory/v<N>.json parses, says v<N> and equals
 *                     its committed copy — then the remaining cleanup runs.
 *                     A commit the record does not announce — one forged with
 *                     the right subject and author and a fitting record, say —
 *                     is refused by id and subject.
 *
 * Anything else is refused without changing a file. Every step is idempotent,
 * so a second crash during recovery records nothing twice.
 *
 * Before either, the agent groups the record names are ended: a supervisor
 * killed by SIGKILL leaves its agent running in its own session, still editing
 * the worktree that recovery is about to read, archive and remove. Each group
 * is ended only while its leader's pid still carries the recorded start time
 * (base/proc), so a pid the kernel has since reused is never signalled.
 */
#include "base/fs.h"
#include "base/json.h"
#include "base/proc.h"
#include "optimize/internal.h"

#include <string.h>

static int bad_record(const char *path, const char *what, struct aka_err *err)
{
    return aka_err_set(err, AKA_EXIT_FAILED,
                       "%s: %s; refusing to guess how the interrupted episode ended", path, what);
}

/* A recorded agent group gets this long after SIGTERM before SIGKILL. */
#define AGENT_TERM_GRACE_MS 1000

/* agent_groups: [{pgid, start_ticks}]; an entry without both is no identity and is skipped. */
static void load_groups(json_t *doc, struct aka_episode *ep)
{
    json_t *groups = json_object_get(doc, "agent_groups"), *g;
    size_t i;
    json_array_foreach(groups, i, g)
    {
        json_t *pgid = json_object_get(g, "pgid"), *ticks = json_object_get(g, "start_ticks");
        if (ep->n_groups < AKA_EPISODE_MAX_GROUPS && json_is_integer(pgid) &&
            json_is_integer(ticks) && json_integer_value(pgid) > 1 && json_integer_value(ticks) > 0)
            ep->groups[ep->n_groups++] = (struct aka_agent_group){
                json_integer_value(pgid), (unsigned long long)json_integer_value(ticks)};
    }
}

static int load_active(struct aka_run *r, struct aka_episode *ep, struct aka_err *err)
{
    struct strbuf p = STRBUF_INIT;
    json_t *doc = NULL;
    int rc = aka_ws_active_load(r->ws.buf, &doc, &p, err);
    const char *base = json_string_value(json_object_get(doc, "base_commit"));
    const char *branch = json_string_value(json_object_get(doc, "episode_branch"));
    const char *wt = json_string_value(json_object_get(doc, "worktree"));
    const char *mode = json_string_value(json_object_get(doc, "mode"));
    int kind = mode ? jenum_index(mode, aka_episode_kind_names) : -1;
    ep->number = (long)json_integer_value(json_object_get(doc, "episode"));
    ep->version = (long)json_integer_value(json_object_get(doc, "memory_version"));
    bool complete = base && aka_record_is_hex(base, AKA_COMMIT_HEX_LEN) && branch && wt &&
                    kind >= 0 && ep->number >= 1 && ep->version >= 1;
    if (rc == 0 && !complete)
        rc = bad_record(p.buf, "not a complete active-episode record", err);
    if (rc == 0 && complete) {
        snprintf(ep->base, sizeof(ep->base), "%s", base);
        ep->kind = (enum aka_episode_kind)kind;
        strbuf_addstr(&ep->branch, branch);
        strbuf_addstr(&ep->worktree, wt);
        aka_ws_episode_dir(&ep->dir, r->ws.buf, ep->number);
        ep->phase = "recording";
        json_t *trials = json_object_get(doc, "fast_trials"); /* the gate it started with */
        if (ep->kind == AKA_EPISODE_FAST && json_is_integer(trials) &&
            json_integer_value(trials) > 0 && json_integer_value(trials) <= 1000)
            ep->fast_trials = (int)json_integer_value(trials);
        const char *agent_eval = json_string_value(json_object_get(doc, "agent_eval"));
        ep->agent_eval_brokered = agent_eval && strcmp(agent_eval, "broker") == 0;
        ep->has_intent =
            aka_ws_intent_from_json(json_object_get(doc, "version_commit"), &ep->intent);
        load_groups(doc, ep);
        json_t *probes = json_object_get(doc, "probes"); /* only its plan is taken again */
        if (json_is_object(json_object_get(probes, "plan")))
            ep->probes = json_pack("{s:O}", "plan", json_object_get(probes, "plan"));
    }
    json_decref(doc);
    strbuf_release(&p);
    return rc;
}

static int refuse(const struct aka_episode *ep, const struct aka_git_commit_info *head,
                  struct aka_err *err)
{
    char subject[sizeof(head->subject)];
    size_t i = 0;
    for (; head->subject[i]; i++) /* one line, whatever a forger put in the subject */
        subject[i] = (unsigned char)head->subject[i] < 0x20 ? '?' : head->subject[i];
    subject[i] = '\0';
    return aka_err_set(err, AKA_EXIT_FAILED,
                       "the incumbent moved during interrupted episode %ld: HEAD is commit %s "
                       "\"%s\" by %s on %.12s (base %.12s), and it is not the version commit "
                       "the supervisor recorded before committing%s; refusing to resume",
                       ep->number, head->oid, subject, head->author, head->parent, ep->base,
                       ep->has_intent ? "" : " (the record announces none)");
}

/* HEAD is exactly the version commit the active record announced; its record gives the
 * episode's status. */
static int prove_head(struct aka_run *r, const struct aka_git *g, struct aka_episode *ep,
                      struct aka_err *err)
{
    struct aka_git_commit_info head;
    struct aka_memory_record m;
    bool match = false;
    int rc = aka_git_commit_info(g, "HEAD", &head, err);
    if (rc == 0 && ep->has_intent)
        rc = aka_ws_commit_matches(r->ws.buf, "HEAD", &ep->intent, &match, err);
    if (rc == 0 && !match)
        rc = refuse(ep, &head, err);
    if (rc == 0)
        rc = aka_ws_check_canonical(r->ws.buf, ep->version, err);
    if (rc == 0)
        rc = aka_ws_memory_at_head(r->ws.buf, ep->version, &m, err);
    if (rc == 0) {
        ep->status = m.status;
        aka_memory_release(&m);
    }
    return rc;
}

/*
 * HEAD is the base. The agent runs in its own session, so it may have finished after its
 * supervisor stopped (or the supervisor stopped after the session, before the version
 * commit). A handoff in the worktree that passes the live session's own completion check
 * (this episode's journal; in a fast episode the gate with the trial count the episode was
 * started with) is finished as the live path would finish it: terminal assessment,
 * verification (redone, never trusted from before the stop) and the version commit, noted
 * in the record as recovered_terminal_handoff. Anything else is `interrupted`.
 */
static int record_at_base(struct aka_run *r, const struct aka_optimize_opts *o,
                          struct aka_episode *ep, struct aka_err *err)
{
    if (ep->kind == AKA_EPISODE_FAST && ep->fast_trials <= 0)
        ep->fast_trials = o->fast_trials; /* a record written before the first agent start */
    if (aka_episode_late_handoff(r, ep)) {
        ep->recovered_handoff = true;
        aka_optimize_progress(r,
                              "episode %ld: the agent's handoff (%s) is complete: assessing it "
                              "instead of recording the episode as interrupted",
                              ep->number,
                              ep->status == AKA_MEM_PROMOTED ? "candidate_ready"
                                                             : aka_memory_status_names[ep->status]);
        r->conversion = aka_conversion_load(r->ws.buf); /* the latch the episode ran under */
        return aka_episode_assess(r, o, ep, err) < 0 ? -1 : aka_episode_record(r, ep, err);
    }
    ep->status = AKA_MEM_INTERRUPTED;
    snprintf(ep->violation, sizeof(ep->violation),
             "the supervisor stopped during this episode; its work was not assessed");
    return aka_episode_record(r, ep, err);
}

static int settle(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_episode *ep,
                  struct aka_err *err)
{
    struct aka_git g;
    char head[AKA_GIT_OID_HEX + 1];
    aka_git_open(&g, r->ws.buf);
    int rc = aka_git_rev_parse(&g, "HEAD", head, err);
    bool at_base = rc == 0 && strcmp(head, ep->base) == 0;
    if (rc == 0 && at_base) /* a squash merge may be staged: the incumbent is the base */
        rc = aka_git_reset_hard(&g, ep->base, err);
    else if (rc == 0)
        rc = prove_head(r, &g, ep, err);
    aka_git_close(&g);
    if (rc < 0 || !at_base)
        return rc < 0 ? -1 : aka_episode_drop_worktree(r, ep, err);
    return record_at_base(r, o, ep, err);
}

/* End every recorded agent group that is still the one recorded; wait until it is gone. */
static int end_agents(struct aka_run *r, const struct aka_episode *ep, struct aka_err *err)
{
    for (size_t i = 0; i < ep->n_groups; i++) {
        const struct aka_agent_group *g = &ep->groups[i];
        int ended = proc_end_group_if_same((pid_t)g->pgid, g->start_ticks, AGENT_TERM_GRACE_MS);
        if (ended < 0)
            return aka_err_set(err, AKA_EXIT_ENV,
                               "episode %ld: agent process group %lld survives SIGKILL; the "
                               "worktree %s cannot be assessed while it runs",
                               ep->number, g->pgid, ep->worktree.buf);
        if (ended > 0)
            aka_optimize_progress(r, "episode %ld: ended agent process group %lld left running",
                                  ep->number, g->pgid);
    }
    return 0;
}

int aka_episode_recover(struct aka_run *r, const struct aka_optimize_opts *o,
                        struct aka_episode_counters *c, struct aka_err *err)
{
    struct aka_episode ep = {.worktree = STRBUF_INIT, .branch = STRBUF_INIT, .dir = STRBUF_INIT};
    int rc = load_active(r, &ep, err);
    if (rc == 0) {
        aka_optimize_progress(r, "episode %ld: recovering after an interrupted supervisor",
                              ep.number);
        rc = end_agents(r, &ep, err) < 0 ? -1 : settle(r, o, &ep, err);
    }
    if (rc == 0)
        rc = aka_episode_finish(r, &ep, c, err);
    aka_episode_release(&ep);
    return rc;
}

/* The agents of the episode in flight, ended (the campaign stops for the environment). */
void aka_episode_end_active_agents(struct aka_run *r)
{
    struct aka_episode ep = {.worktree = STRBUF_INIT, .branch = STRBUF_INIT, .dir = STRBUF_INIT};
    struct aka_err ignored = AKA_ERR_INIT;
    if (aka_episode_active_exists(r->ws.buf) && load_active(r, &ep, &ignored) == 0)
        end_agents(r, &ep, &ignored);
    aka_episode_release(&ep);
}

/*
 * The episode an environment failure stopped is not the candidate's to carry: with HEAD
 * still at its base, its agents are ended, its tree and view removed and its active record
 * cleared, with no record and no count, so the next episode has its number again. 1 when
 * HEAD moved (the version commit was made: the ordinary recovery finishes it).
 */
int aka_episode_discard(struct aka_run *r, struct aka_err *err)
{
    struct aka_episode ep = {.worktree = STRBUF_INIT, .branch = STRBUF_INIT, .dir = STRBUF_INIT};
    struct aka_git g;
    char head[AKA_GIT_OID_HEX + 1];
    int rc = load_active(r, &ep, err);
    if (rc == 0)
        rc = end_agents(r, &ep, err);
    aka_git_open(&g, r->ws.buf);
    if (rc == 0)
        rc = aka_git_rev_parse(&g, "HEAD", head, err);
    if (rc == 0 && strcmp(head, ep.base) != 0)
        rc = 1;
    if (rc == 0)
        rc = aka_git_reset_hard(&g, ep.base, err);
    aka_git_close(&g);
    if (rc == 0)
        rc = aka_candidate_remove(r, ep.worktree.buf, err);
    if (rc == 0)
        rc = aka_episode_clear_active(r->ws.buf, err);
    if (rc == 0)
        aka_optimize_progress(r,
                              "episode %ld: stopped by an environment failure, not the "
                              "candidate's: discarded without a record, it runs again",
                              ep.number);
    aka_episode_release(&ep);
    return rc;
}
