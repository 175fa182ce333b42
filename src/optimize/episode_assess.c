/*
 * episode_assess.c — the agent session of an episode and the terminal
 * assessment of what it handed off (DESIGN §4.5, §5; upstream §2.5, §5.3).
 *
 * The agent's word counts for nothing: its handoff is only a pointer to
 * evidence. The supervisor re-reads the handoff and the journal itself,
 * checks that they belong to this episode, and for a candidate fetches it by
 * hash from the worktree's own repository (candidate.c), checks that it is the
 * worktree's HEAD on the episode branch with the kernel file left committed,
 * and that the diff from the base is exactly the kernel file. A fast
 * episode's handoff also needs its trials on record (the completion gate). The
 * same check decides whether recovery may finish a late handoff. The status
 * convention while assessing: AKA_MEM_PROMOTED means "a candidate still in the
 * running"; every failed check replaces it with the terminal status.
 */
#include "agents/agents.h"
#include "base/fs.h"
#include "base/json.h"
#include "optimize/internal.h"
#include "wiki/wiki.h"

#include <stdlib.h>
#include <string.h>

struct handoff_check {
    const struct aka_episode *ep;
    const char *repo_root; /* the asset tree: its bundled wiki plugins */
    struct strbuf handoff, journal;
};

struct eval_count {
    const char *episode; /* the episode number as `aka eval` records it: $ATREX_AKA_EPISODE */
    size_t n;
};

/* One line of evaluations.jsonl: counted when it is a record of this episode. */
static int count_eval_record(json_t *obj, size_t lineno, void *data, struct aka_err *err)
{
    (void)lineno;
    (void)err;
    struct eval_count *c = data;
    const char *episode = json_string_value(json_object_get(obj, "episode"));
    c->n += episode && strcmp(episode, c->episode) == 0;
    return 0;
}

/*
 * The fast completion gate (DESIGN §3; upstream §2.4): a fast episode is exactly fast_trials
 * plan -> implement -> evaluate trials, so a handoff other than blocked needs at least that
 * many journal experiments and as many `aka eval` records of this episode in the worktree's
 * evaluations.jsonl. Only blocked (infrastructure, authority) may end early; a pivot after two
 * trials is the broken contract the gate exists for, so pivot gets no exemption. The count is
 * the episode's own (fast_trials in the active record), not the current command line's.
 */
static int fast_gate(const struct aka_episode *ep, const struct aka_handoff *h, size_t experiments,
                     struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    char number[24];
    struct eval_count evals = {number, 0};
    if (ep->kind != AKA_EPISODE_FAST || ep->fast_trials <= 0 || h->status == AKA_HANDOFF_BLOCKED)
        return 0;
    snprintf(number, sizeof(number), "%ld", ep->number);
    aka_wt_path(&path, ep->worktree.buf, AKA_WT_EVALUATIONS);
    int rc =
        aka_is_file(path.buf) ? aka_jsonl_foreach(path.buf, count_eval_record, &evals, err) : 0;
    size_t want = (size_t)ep->fast_trials;
    if (rc == 0 && (experiments < want || evals.n < want))
        rc = aka_err_set(err, AKA_EXIT_FAILED,
                         "fast episode needs %zu trials: journal has %zu experiments, "
                         "evaluations.jsonl has %zu records of this episode",
                         want, experiments, evals.n);
    strbuf_release(&path);
    return rc;
}

/*
 * Every wiki id the journal cites must be a record of the plugins the agent could query (the
 * bundled ones and the episode view's): a made-up citation makes the handoff invalid, named.
 */
static int cited_records_exist(const struct handoff_check *hc, struct aka_err *err)
{
    struct strbuf view = STRBUF_INIT;
    strbuf_addf(&view, "%s.view", hc->ep->worktree.buf);
    struct aka_wiki_config cfg = {.repo_root = hc->repo_root, .workspace = view.buf, .quiet = true};
    int rc = aka_wiki_check_journal(&cfg, hc->journal.buf, err);
    strbuf_release(&view);
    return rc;
}

/* Load the handoff and the journal, run the contracts' terminal validation, then the gate. */
static int validate_handoff(const struct handoff_check *hc, struct aka_handoff *h,
                            struct aka_err *err)
{
    struct aka_journal j;
    struct aka_episode_ids ids = {.episode = hc->ep->number,
                                  .memory_version = hc->ep->version,
                                  .base_commit = hc->ep->base,
                                  .episode_branch = hc->ep->branch.buf};
    if (aka_handoff_load(hc->handoff.buf, h, err) < 0 ||
        aka_journal_load(hc->journal.buf, &j, err) < 0)
        return -1;
    int rc = aka_handoff_check_journal(hc->handoff.buf, h, hc->journal.buf, &j, &ids, err);
    if (rc == 0)
        rc = cited_records_exist(hc, err);
    if (rc == 0)
        rc = fast_gate(hc->ep, h, j.experiment_count, err);
    aka_journal_release(&j);
    return rc;
}

/* The session's completion check: a resume turn follows a false answer. */
static bool session_complete(void *data, char *diagnosis, size_t size)
{
    struct aka_handoff h;
    struct aka_err err = AKA_ERR_INIT;
    if (validate_handoff(data, &h, &err) == 0)
        return true;
    snprintf(diagnosis, size, "%s", err.msg);
    return false;
}

static void agent_env(struct aka_run *r, const struct aka_episode *ep, const char *view,
                      struct strvec *env)
{
    struct strbuf trace = STRBUF_INIT;
    /* The agent's aka commands read the episode's view, never the canonical workspace; the
     * trace file lies in the worktree, the only place a confined agent can write. */
    strvec_pushf(env, "ATREX_AKA_WORKSPACE=%s", view);
    strvec_pushf(env, "ATREX_AKA_WORKTREE=%s", ep->worktree.buf);
    aka_wt_path(&trace, ep->worktree.buf, AKA_WT_TRACE);
    strvec_pushf(env, "ATREX_AKA_TRACE_FILE=%s", trace.buf);
    strbuf_release(&trace);
    strvec_pushf(env, "ATREX_AKA_EPISODE=%ld", ep->number);
    if (ep->kind == AKA_EPISODE_FAST) /* what the gate counts; `aka tune-agent` runs that many */
        strvec_pushf(env, "ATREX_AKA_FAST_TRIALS=%d", ep->fast_trials);
    /* `aka eval` in the session must use this campaign's asset tree. */
    strvec_pushf(env, "ATREX_AKA_HOME=%s", r->env.repo_root);
    /* ATREX_PLAN_REVIEW_{CODEX,QODER}_{ENABLED,REASON}: what the campaign-start probe found. */
    struct aka_plan_reviewers pr;
    if (aka_plan_reviewers_load(r->ws.buf, &pr) == 0)
        aka_plan_reviewers_env(&pr, env);
}

/* What the agent-start callback needs to rewrite the active record. */
struct agent_start {
    struct aka_run *r;
    struct aka_episode *ep;
};

/*
 * Each invocation (fresh turn, resume turn, `aka tune-agent`) is a new process group. It goes
 * into the active record as soon as it exists: a supervisor SIGKILLed now leaves the agent
 * running in its own session, and only this record lets the resume end it (DESIGN §7).
 */
static void record_agent_start(void *data, pid_t pgid, unsigned long long start_ticks)
{
    struct agent_start *as = data;
    struct aka_episode *ep = as->ep;
    struct aka_err err = AKA_ERR_INIT;
    if (ep->n_groups == AKA_EPISODE_MAX_GROUPS) { /* forget the oldest: it ended long ago */
        memmove(ep->groups, ep->groups + 1, sizeof(ep->groups) - sizeof(ep->groups[0]));
        ep->n_groups--;
    }
    ep->groups[ep->n_groups++] = (struct aka_agent_group){pgid, start_ticks};
    ep->pgid = pgid;
    if (aka_episode_save_active(as->r, ep, &err) < 0) /* the agent runs on; say it is unrecorded */
        aka_optimize_progress(as->r, "episode %ld: agent group %lld not recorded: %s", ep->number,
                              (long long)pgid, err.msg);
}

static int run_agent(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_episode *ep,
                     struct handoff_check *hc, struct aka_agent_session_result *res,
                     struct aka_err *err)
{
    struct strbuf brief = STRBUF_INIT, cap = STRBUF_INIT;
    struct strvec env = {0};
    struct agent_start as = {r, ep};
    struct aka_candidate_sandbox sbx;
    aka_candidate_sandbox_init(&sbx, r, o, ep->worktree.buf);
    /* An unconfined agent's `aka eval` has no broker to ask (cmd/eval.c): it runs its own. */
    ep->agent_eval_brokered = sbx.brokered && sbx.c.mode == AKA_AGENT_SANDBOX_BWRAP;
    aka_wt_path(&brief, ep->worktree.buf, AKA_WT_BRIEF);
    aka_path_join(&cap, ep->dir.buf, "agent");
    agent_env(r, ep, sbx.view.buf, &env);
    const char *const *envp = (const char *const *)env.v; /* NULL-terminated */
    int resumes = o->handoff_resumes;
    if (ep->kind == AKA_EPISODE_GOAL && resumes < 20)
        resumes = 20; /* goal episodes restructure widely: more repair turns (DESIGN §3) */
    struct aka_agent_session_request sreq = {
        .req = {.backend = o->agent_cli,
                .cli_path = o->agent_cli_path && *o->agent_cli_path ? o->agent_cli_path : NULL,
                .worktree = ep->worktree.buf,
                .brief_file = brief.buf,
                .capture_dir = cap.buf,
                .env = envp,
                .timeout_s = o->agent_timeout,
                .effort = ep->kind == AKA_EPISODE_FAST ? "xhigh" : "max",
                .repo_root = r->env.repo_root,
                .on_start = record_agent_start,
                .on_start_data = &as,
                .confine = &sbx.c},
        .handoff_resumes = resumes,
        .handoff_path = hc->handoff.buf,
        .check = session_complete,
        .check_data = hc,
    };
    int rc = aka_mkdir_p(cap.buf, 0755, err) < 0 || aka_candidate_sandbox_start(&sbx, r, err) < 0
                 ? -1
                 : aka_agent_run_session(&sreq, res, err);
    aka_candidate_view_harvest(r, ep->worktree.buf, ep->dir.buf);
    aka_candidate_sandbox_release(&sbx);
    strvec_clear(&env);
    strbuf_release(&brief);
    strbuf_release(&cap);
    return rc;
}

/* A handoff that passed validate_handoff: what it makes of the episode. */
static void take_handoff(struct aka_episode *ep, const struct handoff_check *hc,
                         const struct aka_handoff *h)
{
    struct aka_err err = AKA_ERR_INIT;
    if (h->status == AKA_HANDOFF_PIVOT || h->status == AKA_HANDOFF_BLOCKED) {
        /* No candidate: the agent's own account (the finalized journal's summary) is
         * the only "why" the record can carry, so it goes in as the reason. */
        struct aka_journal j;
        bool have = aka_journal_load(hc->journal.buf, &j, &err) == 0;
        aka_episode_set_status(ep, h->status == AKA_HANDOFF_PIVOT ? AKA_MEM_PIVOT : AKA_MEM_BLOCKED,
                               "%s", have && j.outcome_summary ? j.outcome_summary : "no summary");
        if (have)
            aka_journal_release(&j);
    } else {
        aka_episode_set_status(ep, AKA_MEM_PROMOTED, "%s", "");
        snprintf(ep->candidate, sizeof(ep->candidate), "%s", h->candidate_commit);
    }
}

static void classify(struct aka_episode *ep, const struct aka_agent_session_result *res,
                     const struct handoff_check *hc)
{
    struct aka_handoff h;
    struct aka_err err = AKA_ERR_INIT;
    if (res->exit_code != 0 || res->timed_out) {
        aka_episode_set_status(ep, AKA_MEM_INVALID_HANDOFF,
                               "agent session ended badly (exit=%d%s): %s", res->exit_code,
                               res->timed_out ? ", timed out" : "",
                               res->diagnosis[0] ? res->diagnosis : "no diagnosis");
    } else if (!res->complete) {
        aka_episode_set_status(ep, AKA_MEM_INVALID_HANDOFF,
                               "no valid handoff after %d invocation(s): %s", res->invocations,
                               res->diagnosis);
    } else if (validate_handoff(hc, &h, &err) < 0) { /* re-read: the agent may still write */
        aka_episode_set_status(ep, AKA_MEM_INVALID_HANDOFF, "%s", err.msg);
    } else {
        take_handoff(ep, hc, &h);
    }
}

bool aka_episode_late_handoff(const struct aka_run *r, struct aka_episode *ep)
{
    struct handoff_check hc = {
        .ep = ep, .repo_root = r->env.repo_root, .handoff = STRBUF_INIT, .journal = STRBUF_INIT};
    struct aka_handoff h;
    struct aka_err ignored = AKA_ERR_INIT; /* no valid handoff: the episode was interrupted */
    aka_wt_path(&hc.handoff, ep->worktree.buf, AKA_WT_HANDOFF);
    aka_wt_path(&hc.journal, ep->worktree.buf, AKA_WT_JOURNAL);
    bool found = aka_is_dir(ep->worktree.buf) && validate_handoff(&hc, &h, &ignored) == 0;
    if (found)
        take_handoff(ep, &hc, &h);
    strbuf_release(&hc.handoff);
    strbuf_release(&hc.journal);
    return found;
}

int aka_episode_session(struct aka_run *r, const struct aka_optimize_opts *o,
                        struct aka_episode *ep, struct aka_err *err)
{
    /* On the heap: the result keeps every invocation's record and is large. */
    struct aka_agent_session_result *res = calloc(1, sizeof(*res));
    if (!res)
        return aka_err_set(err, AKA_EXIT_FAILED, "out of memory");
    struct handoff_check hc = {
        .ep = ep, .repo_root = r->env.repo_root, .handoff = STRBUF_INIT, .journal = STRBUF_INIT};
    /* Fixed before the first agent starts, whose active record then carries it: a resumed
     * episode is held to the trial count it was briefed with, not a later command line's. */
    if (ep->kind == AKA_EPISODE_FAST && ep->fast_trials <= 0)
        ep->fast_trials = o->fast_trials;
    aka_wt_path(&hc.handoff, ep->worktree.buf, AKA_WT_HANDOFF);
    aka_wt_path(&hc.journal, ep->worktree.buf, AKA_WT_JOURNAL);
    int rc = run_agent(r, o, ep, &hc, res, err);
    if (rc == 0) {
        ep->pgid = res->last.pgid;
        ep->tokens = res->usage.total > 0 ? res->usage.total : 0;
        snprintf(ep->session_id, sizeof(ep->session_id), "%s", res->session_id);
        classify(ep, res, &hc);
    }
    free(res);
    strbuf_release(&hc.handoff);
    strbuf_release(&hc.journal);
    return rc;
}

/* ---- the candidate ------------------------------------------------------------------------ */

static bool protected_path(const char *path)
{
    static const char *const names[] = {"input.py",
                                        "shapes.json",
                                        "operator.json",
                                        "definition.json",
                                        "workload.jsonl",
                                        "metadata.json",
                                        "agent_problem.json",
                                        "roofline.json",
                                        "README.md",
                                        ".gitignore",
                                        "framework_baseline.json",
                                        "solution.json",
                                        NULL};
    static const char *const prefixes[] = {".claude/", ".qoder/", ".agents/", NULL};
    /* Canonical memory and supervisor state (workspace/ names their directories). */
    const char *const own[] = {aka_ws_rel(AKA_WS_MEMORY), aka_ws_rel(AKA_WS_STATE_DIR), NULL};
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (strncmp(base, "reference.", 10) == 0)
        return true;
    for (size_t i = 0; names[i]; i++)
        if (strcmp(path, names[i]) == 0)
            return true;
    for (size_t i = 0; prefixes[i]; i++)
        if (strncmp(path, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    for (size_t i = 0; own[i]; i++)
        if (strncmp(path, own[i], strlen(own[i])) == 0 && path[strlen(own[i])] == '/')
            return true;
    return false;
}

/* The diff base..candidate must be exactly the kernel file. */
static int check_diff(struct aka_run *r, const struct aka_git *g, struct aka_episode *ep,
                      struct aka_err *err)
{
    struct strvec names = {0};
    int rc = aka_git_diff_names(g, ep->base, ep->candidate, &names, err);
    for (size_t i = 0; rc == 0 && i < names.n && ep->status == AKA_MEM_PROMOTED; i++)
        if (protected_path(names.v[i]))
            aka_episode_set_status(ep, AKA_MEM_INVALID_HANDOFF,
                                   "candidate %.12s touches the protected path %s", ep->candidate,
                                   names.v[i]);
    for (size_t i = 0; rc == 0 && i < names.n && ep->status == AKA_MEM_PROMOTED; i++)
        if (strcmp(names.v[i], r->camp.kernel) != 0)
            aka_episode_set_status(ep, AKA_MEM_INVALID_HANDOFF,
                                   "candidate %.12s changes %s; only %s may change", ep->candidate,
                                   names.v[i], r->camp.kernel);
    if (rc == 0 && names.n == 0 && ep->status == AKA_MEM_PROMOTED)
        aka_episode_set_status(ep, AKA_MEM_INVALID_HANDOFF,
                               "candidate %.12s has no changes from the base", ep->candidate);
    strvec_clear(&names);
    return rc;
}

int aka_episode_check_candidate(struct aka_run *r, struct aka_episode *ep, struct aka_err *err)
{
    struct aka_git g;
    struct strbuf ref = STRBUF_INIT;
    char why[sizeof(ep->violation)], leaf[16];
    snprintf(leaf, sizeof(leaf), "e%04ld", ep->number);
    aka_ws_candidate_ref(&ref, leaf);
    /* Identity, in the canonical repository after a fetch by hash: the candidate is the
     * worktree's HEAD on its branch, descends from the base, and was left committed. */
    struct aka_candidate_take t = {ep->worktree.buf, ep->branch.buf, ep->base, ep->candidate,
                                   ref.buf};
    if (!aka_candidate_take(r, &t, why, sizeof(why)))
        aka_episode_set_status(ep, AKA_MEM_INVALID_HANDOFF, "%s", why);
    aka_git_open(&g, r->ws.buf);
    int rc = ep->status == AKA_MEM_PROMOTED ? check_diff(r, &g, ep, err) : 0;
    aka_git_close(&g);
    strbuf_release(&ref);
    return rc;
}

int aka_episode_assess(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_episode *ep,
                       struct aka_err *err)
{
    if (ep->status != AKA_MEM_PROMOTED) /* pivot, blocked, invalid: nothing to verify */
        return 0;
    if (aka_episode_check_candidate(r, ep, err) < 0)
        return -1;
    aka_conversion_check_candidate(r, ep); /* latched: the candidate must be Gluon */
    if (ep->status == AKA_MEM_PROMOTED && aka_episode_policy(r, o, ep, err) < 0)
        return -1;
    if (ep->status != AKA_MEM_PROMOTED)
        return 0;
    ep->phase = "verifying";
    aka_episode_progress(r, ep, "candidate %.12s", ep->candidate);
    if (aka_episode_save_active(r, ep, err) < 0 || aka_episode_verify(r, o, ep, err) < 0)
        return -1;
    return aka_episode_probe(r, o, ep, err);
}
