/*
 * v1.c — the V1 stage: a framework-native baseline that replaces V0 as the
 * incumbent before optimization starts (DESIGN §3, §6, §9; upstream §2.2).
 *
 * Whether V1 is wanted follows --framework-baseline and the mode; the built-in
 * agent always starts from the operator's seed kernel because a reference
 * declares no knobs to tune. Any other agent writes V1 in one session in a
 * worktree, like an episode's (episode number 0), and the supervisor checks
 * what it left before the seed path's commit, measurement and pin take over.
 * What HEAD says decides the rest, as upstream's table does:
 *
 *   framework_baseline.json committed at HEAD      skip ("already pinned")
 *   HEAD is a V1 kernel commit without its pin     adopt: measure and pin it
 *   HEAD is the V0 measurement commit              run
 *   anything else (episodes ran without a V1)      leave as is
 */
#include "agents/agents.h"
#include "base/fs.h"
#include "base/proc.h"
#include "optimize/internal.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static bool v1_wanted(const struct aka_optimize_opts *o)
{
    if (strcmp(o->framework_baseline, "never") == 0)
        return false;
    /* The built-in agent needs the seed's knobs, in either mode (DESIGN §9). */
    if (strcmp(o->agent_cli, "builtin") == 0)
        return true;
    return strcmp(o->framework_baseline, "always") == 0 || aka_optimize_is_production(o);
}

/* The kind of REV's commit by its subject (workspace/subject.c); false when it is none. */
static bool kind_of(const struct aka_git *g, const char *rev, enum aka_commit_kind *kind)
{
    struct aka_git_commit_info ci;
    struct aka_commit_subject s;
    struct aka_err ignored = AKA_ERR_INIT;
    if (aka_git_commit_info(g, rev, &ci, &ignored) < 0 || !aka_ws_subject_parse(ci.subject, &s))
        return false;
    *kind = s.kind;
    return true;
}

enum v1_step { V1_RUN, V1_ADOPT, V1_LEAVE };

static enum v1_step next_step(const char *ws)
{
    struct aka_git g;
    enum aka_commit_kind head, parent;
    enum v1_step step = V1_LEAVE;
    aka_git_open(&g, ws);
    if (kind_of(&g, "HEAD", &head) && head == AKA_COMMIT_V1_KERNEL)
        /* Only a V1 commit straight on top of V0 is an interrupted V1. */
        step = kind_of(&g, "HEAD~1", &parent) && parent == AKA_COMMIT_V0_MEASUREMENT ? V1_ADOPT
                                                                                     : V1_LEAVE;
    else if (kind_of(&g, "HEAD", &head) && head == AKA_COMMIT_V0_MEASUREMENT)
        step = V1_RUN;
    aka_git_close(&g);
    return step;
}

/*
 * Adopt a V1 kernel commit left by an interrupted supervisor: keep its bytes,
 * step HEAD back to V0, then commit, measure and pin them like a fresh V1, so
 * a failing adopted kernel rolls back to V0 exactly as a fresh one does.
 */
static int adopt(struct aka_run *r, struct aka_version_summary *v1, struct aka_err *err)
{
    struct aka_git g;
    struct strbuf blob = STRBUF_INIT, keep = STRBUF_INIT;
    aka_ws_path(&keep, r->ws.buf, AKA_WS_V1_DIR);
    aka_git_open(&g, r->ws.buf);
    int rc = aka_mkdir_p(keep.buf, 0755, err);
    strbuf_addf(&keep, "/adopted-%s", r->camp.kernel);
    if (rc == 0)
        rc = aka_git_show_blob(&g, "HEAD", r->camp.kernel, &blob, err);
    if (rc == 0)
        rc = aka_write_file_atomic(keep.buf, blob.buf, blob.len, 0644, err);
    if (rc == 0)
        rc = aka_git_reset_hard(&g, "HEAD~1", err);
    aka_optimize_progress(r, "V1: adopting the committed but unpinned V1 kernel");
    if (rc == 0)
        rc = aka_bootstrap_v1_commit(r->ws.buf, &r->camp, keep.buf, "adopted V1 kernel", &r->env,
                                     v1, err);
    aka_git_close(&g);
    strbuf_release(&blob);
    strbuf_release(&keep);
    return rc;
}

static int from_seed(struct aka_run *r, const struct aka_optimize_opts *o,
                     struct aka_version_summary *v1, struct aka_err *err)
{
    struct strbuf seed = STRBUF_INIT;
    int rc = 0;
    if (!aka_seed_kernel_path(&r->op, o->framework, &seed))
        aka_optimize_progress(r, "V1: %s has no seed kernel %s; the campaign starts from V0",
                              r->op.name, seed.buf);
    else
        rc = aka_bootstrap_v1_seed(r->ws.buf, &r->camp, seed.buf, &r->env, v1, err);
    strbuf_release(&seed);
    return rc;
}

/* ---- V1 written by an agent ---------------------------------------------------------------- */

/* One V1 session: a worktree and branch from the V0 HEAD, like an episode's. */
struct v1_session {
    struct strbuf worktree, branch, dir; /* dir: the V1 directory, the supervisor's copies */
    char base[AKA_GIT_OID_HEX + 1], candidate[AKA_GIT_OID_HEX + 1];
    char problem[1024]; /* why the candidate is refused; "" while it stands */
};

static int v1_plan(struct aka_run *r, struct v1_session *v, struct aka_err *err)
{
    struct aka_git g;
    struct strbuf leaf = STRBUF_INIT;
    char hex[9];
    aka_random_hex8(hex);
    strbuf_addf(&v->branch, "aka/v1-%s", hex);
    strbuf_addf(&leaf, "v1-%s", hex);
    aka_ws_worktree_path(&v->worktree, r->ws.buf, leaf.buf);
    strbuf_release(&leaf);
    aka_ws_path(&v->dir, r->ws.buf, AKA_WS_V1_DIR);
    aka_git_open(&g, r->ws.buf);
    int rc = aka_git_rev_parse(&g, "HEAD", v->base, err);
    aka_git_close(&g);
    return rc;
}

static void v1_ids(const struct v1_session *v, struct aka_episode_ids *ids)
{
    /* Episode 0 is the V1 session (contracts/records.h); it produces memory/v1.json. */
    *ids = (struct aka_episode_ids){
        .episode = 0, .memory_version = 1, .base_commit = v->base, .episode_branch = v->branch.buf};
}

/* The agent's own repository and its view, as an episode's (candidate.c). */
static int v1_worktree(struct aka_run *r, struct v1_session *v, struct aka_err *err)
{
    struct aka_episode_ids ids;
    struct strbuf j = STRBUF_INIT;
    aka_wt_path(&j, v->worktree.buf, AKA_WT_STATE_DIR);
    v1_ids(v, &ids);
    int rc =
        aka_mkdir_p(v->dir.buf, 0755, err) < 0 ||
                aka_candidate_repo_create(r, v->worktree.buf, v->branch.buf, v->base, err) < 0 ||
                aka_candidate_view_create(r, v->worktree.buf, err) < 0
            ? -1
            : aka_mkdir_p(j.buf, 0755, err);
    aka_wt_path(&j, v->worktree.buf, AKA_WT_JOURNAL);
    if (rc == 0)
        rc = aka_journal_create(j.buf, &ids, NULL, err);
    strbuf_release(&j);
    return rc;
}

static int v1_brief(struct aka_run *r, const struct aka_optimize_opts *o,
                    const struct v1_session *v, struct aka_err *err)
{
    struct strbuf tpl = STRBUF_INIT, out = STRBUF_INIT, dst = STRBUF_INIT;
    bool prod = aka_optimize_is_production(o);
    const struct aka_brief_var vars[] = {
        {"operator", r->op.name},
        {"framework", o->framework},
        {"platform", o->platform},
        {"mode", prod ? "production" : "leaderboard"},
        {"mode_policy", prod ? "Production mode: the framework is a hard constraint and the "
                               "kernel must be self-contained; anything else is refused."
                             : "Leaderboard mode: correctness on every shape first."},
        {"kernel_file", r->camp.kernel},
        {"skills_hint", aka_agent_skills_hint(o->agent_cli)},
        {"notes", o->notes && *o->notes ? o->notes : "(none)"},
        {NULL, NULL},
    };
    strbuf_addf(&tpl, "%s/runtime/prompts/v1.md", r->env.repo_root);
    aka_wt_path(&dst, v->worktree.buf, AKA_WT_BRIEF);
    int rc = aka_brief_render(tpl.buf, vars, &out, err);
    if (rc == 0)
        rc = aka_write_file_atomic(dst.buf, out.buf, out.len, 0644, err);
    strbuf_reset(&dst);
    aka_path_join(&dst, v->dir.buf, "BRIEF.md"); /* the supervisor's copy outlives the worktree */
    if (rc == 0)
        rc = aka_write_file_atomic(dst.buf, out.buf, out.len, 0644, err);
    strbuf_release(&tpl);
    strbuf_release(&out);
    strbuf_release(&dst);
    return rc;
}

/* The handoff and journal must be terminal and name this session (episode 0). */
static int v1_handoff(const struct v1_session *v, struct aka_handoff *h, struct aka_err *err)
{
    struct strbuf hp = STRBUF_INIT, jp = STRBUF_INIT;
    struct aka_journal j;
    struct aka_episode_ids ids;
    v1_ids(v, &ids);
    aka_wt_path(&hp, v->worktree.buf, AKA_WT_HANDOFF);
    aka_wt_path(&jp, v->worktree.buf, AKA_WT_JOURNAL);
    int rc = aka_handoff_load(hp.buf, h, err);
    if (rc == 0)
        rc = aka_journal_load(jp.buf, &j, err);
    if (rc == 0) {
        rc = aka_handoff_check_journal(hp.buf, h, jp.buf, &j, &ids, err);
        aka_journal_release(&j);
    }
    strbuf_release(&hp);
    strbuf_release(&jp);
    return rc;
}

static bool v1_complete(void *data, char *diagnosis, size_t size)
{
    struct aka_handoff h;
    struct aka_err err = AKA_ERR_INIT;
    if (v1_handoff(data, &h, &err) == 0)
        return true;
    snprintf(diagnosis, size, "%s", err.msg);
    return false;
}

/* Tokens of the V1 session count toward --token-budget like an episode's. */
static int v1_count_tokens(struct aka_run *r, long long tokens, struct aka_err *err)
{
    struct aka_episode_counters c;
    aka_state_load(r->ws.buf, &c);
    c.tokens += tokens > 0 ? tokens : 0;
    return aka_state_save(r->ws.buf, &c, err);
}

/*
 * A V1 session has no active-episode record, so the agent groups it starts are
 * kept in the V1 directory's agent_groups.jsonl (one line per turn, with the worktree):
 * after a supervisor killed mid-V1, the rerun ends those groups (identity
 * checked) and removes their worktree before it starts a new V1 session.
 */
struct v1_start {
    struct aka_run *r;
    const struct v1_session *v;
};

static void v1_record_start(void *data, pid_t pgid, unsigned long long start_ticks)
{
    const struct v1_start *vs = data;
    struct strbuf p = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    json_t *line = json_pack("{s:I, s:I, s:s}", "pgid", (json_int_t)pgid, "start_ticks",
                             (json_int_t)start_ticks, "worktree", vs->v->worktree.buf);
    aka_ws_path(&p, vs->r->ws.buf, AKA_WS_V1_GROUPS);
    if (aka_jsonl_append(p.buf, line, true, &err) < 0) /* the agent runs on; say so */
        aka_optimize_progress(vs->r, "V1: agent group %lld not recorded: %s", (long long)pgid,
                              err.msg);
    json_decref(line);
    strbuf_release(&p);
}

static int end_stale_group(json_t *obj, size_t lineno, void *data, struct aka_err *err)
{
    struct aka_run *r = data;
    struct aka_err ignored = AKA_ERR_INIT;
    const char *wt = json_string_value(json_object_get(obj, "worktree"));
    (void)lineno;
    (void)err;
    proc_end_group_if_same(
        (pid_t)json_integer_value(json_object_get(obj, "pgid")),
        (unsigned long long)json_integer_value(json_object_get(obj, "start_ticks")), 1000);
    if (wt)
        aka_candidate_remove(r, wt, &ignored);
    return 0;
}

static int v1_forget_groups(struct aka_run *r, struct aka_err *err)
{
    struct strbuf p = STRBUF_INIT;
    aka_ws_path(&p, r->ws.buf, AKA_WS_V1_GROUPS);
    int rc = aka_is_file(p.buf) ? aka_remove_tree(p.buf, err) : 0;
    strbuf_release(&p);
    return rc;
}

/* What a V1 session killed with its supervisor left running: end it, then forget it. */
static int v1_end_stale(struct aka_run *r, struct aka_err *err)
{
    struct strbuf p = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    int rc = 0;
    aka_ws_path(&p, r->ws.buf, AKA_WS_V1_GROUPS);
    if (aka_is_file(p.buf)) {
        aka_optimize_progress(r, "V1: ending what an interrupted V1 session left running");
        aka_jsonl_foreach(p.buf, end_stale_group, r, &ignored);
        rc = v1_forget_groups(r, err);
    }
    strbuf_release(&p);
    return rc;
}

static int v1_session_run(struct aka_run *r, const struct aka_optimize_opts *o,
                          struct v1_session *v, struct aka_agent_session_result *res,
                          struct aka_err *err)
{
    struct strbuf brief = STRBUF_INIT, cap = STRBUF_INIT, hp = STRBUF_INIT, trace = STRBUF_INIT;
    struct strvec env = {0};
    struct v1_start vs = {r, v};
    struct aka_candidate_sandbox sbx;
    aka_candidate_sandbox_init(&sbx, r, o, v->worktree.buf);
    aka_wt_path(&brief, v->worktree.buf, AKA_WT_BRIEF);
    aka_path_join(&cap, v->dir.buf, "agent");
    aka_wt_path(&hp, v->worktree.buf, AKA_WT_HANDOFF);
    strvec_pushf(&env, "ATREX_AKA_WORKSPACE=%s", sbx.view.buf); /* never the canonical one */
    strvec_pushf(&env, "ATREX_AKA_WORKTREE=%s", v->worktree.buf);
    aka_wt_path(&trace, v->worktree.buf, AKA_WT_TRACE);
    strvec_pushf(&env, "ATREX_AKA_TRACE_FILE=%s", trace.buf);
    strvec_push(&env, "ATREX_AKA_EPISODE=0");
    strvec_pushf(&env, "ATREX_AKA_HOME=%s", r->env.repo_root);
    struct aka_agent_session_request sreq = {
        .req = {.backend = o->agent_cli,
                .cli_path = o->agent_cli_path && *o->agent_cli_path ? o->agent_cli_path : NULL,
                .worktree = v->worktree.buf,
                .brief_file = brief.buf,
                .capture_dir = cap.buf,
                .env = (const char *const *)env.v,
                .timeout_s = o->framework_baseline_timeout,
                .effort = "max",
                .repo_root = r->env.repo_root,
                .on_start = v1_record_start,
                .on_start_data = &vs,
                .confine = &sbx.c},
        .handoff_resumes = o->handoff_resumes,
        .handoff_path = hp.buf,
        .check = v1_complete,
        .check_data = v,
    };
    int rc = aka_mkdir_p(cap.buf, 0755, err) < 0 || aka_candidate_sandbox_start(&sbx, r, err) < 0
                 ? -1
                 : aka_agent_run_session(&sreq, res, err);
    aka_candidate_view_harvest(r, v->worktree.buf, v->dir.buf);
    if (rc == 0)
        rc = v1_count_tokens(r, res->usage.total, err);
    if (rc == 0) /* the runtime tore every group of the session down: nothing to end later */
        rc = v1_forget_groups(r, err);
    aka_candidate_sandbox_release(&sbx);
    strvec_clear(&env);
    strbuf_release(&brief);
    strbuf_release(&cap);
    strbuf_release(&hp);
    strbuf_release(&trace);
    return rc;
}

static void refuse(struct v1_session *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void refuse(struct v1_session *v, const char *fmt, ...)
{
    va_list ap;
    if (v->problem[0])
        return; /* the first problem found is the one reported */
    va_start(ap, fmt);
    vsnprintf(v->problem, sizeof(v->problem), fmt, ap);
    va_end(ap);
}

/* The agent's word counts for nothing: the session must end well, with a
 * candidate_ready handoff whose commit is the clean worktree's HEAD on its branch. */
static void v1_assess_session(struct v1_session *v, const struct aka_agent_session_result *res)
{
    struct aka_handoff h;
    struct aka_err e = AKA_ERR_INIT;
    if (res->exit_code != 0 || res->timed_out)
        refuse(v, "the V1 agent session ended badly (exit=%d%s): %s", res->exit_code,
               res->timed_out ? ", timed out (--framework-baseline-timeout)" : "",
               res->diagnosis[0] ? res->diagnosis : "no diagnosis");
    else if (!res->complete || v1_handoff(v, &h, &e) < 0)
        refuse(v, "no valid V1 handoff: %s", res->complete ? e.msg : res->diagnosis);
    else if (h.status != AKA_HANDOFF_CANDIDATE_READY)
        refuse(v, "the V1 agent handed off %s, not candidate_ready",
               h.status == AKA_HANDOFF_PIVOT ? "pivot" : "blocked");
    else
        snprintf(v->candidate, sizeof(v->candidate), "%s", h.candidate_commit);
}

/* The candidate, fetched by hash into refs/aka/candidates/v1: the tree's HEAD on its branch,
 * descended from V0, left committed (candidate.c). */
static void v1_assess_identity(struct aka_run *r, struct v1_session *v)
{
    char why[sizeof(v->problem)];
    struct strbuf ref = STRBUF_INIT;
    aka_ws_candidate_ref(&ref, "v1");
    struct aka_candidate_take t = {v->worktree.buf, v->branch.buf, v->base, v->candidate, ref.buf};
    if (!aka_candidate_take(r, &t, why, sizeof(why)))
        refuse(v, "V1: %s", why);
    strbuf_release(&ref);
}

/* Only the kernel file may differ from V0, and it must: the evaluator inputs
 * (reference, shapes, harness files) stay V0's bytes. */
static int v1_assess_diff(struct aka_run *r, struct v1_session *v, struct aka_err *err)
{
    struct aka_git g;
    struct strvec names = STRVEC_INIT;
    aka_git_open(&g, r->ws.buf);
    int rc = aka_git_diff_names(&g, v->base, v->candidate, &names, err);
    for (size_t i = 0; rc == 0 && i < names.n; i++)
        if (strcmp(names.v[i], r->camp.kernel) != 0)
            refuse(v, "the V1 candidate %.12s changes %s; only %s may change", v->candidate,
                   names.v[i], r->camp.kernel);
    if (rc == 0 && names.n == 0)
        refuse(v, "the V1 candidate %.12s does not differ from V0", v->candidate);
    aka_git_close(&g);
    strvec_clear(&names);
    return rc;
}

/* The worktree and its view go (the candidate stays as refs/aka/candidates/v1); its journal
 * is kept first. */
static void v1_cleanup(struct aka_run *r, const struct v1_session *v)
{
    struct aka_err ignored = AKA_ERR_INIT;
    struct strbuf from = STRBUF_INIT, to = STRBUF_INIT;
    const enum aka_wt_file keep[] = {AKA_WT_JOURNAL, AKA_WT_HANDOFF};
    for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
        aka_wt_path(&from, v->worktree.buf, keep[i]);
        aka_path_join(&to, v->dir.buf, aka_wt_name(keep[i]));
        if (aka_is_file(from.buf))
            aka_copy_file(from.buf, to.buf, &ignored);
    }
    aka_candidate_remove(r, v->worktree.buf, &ignored);
    strbuf_release(&from);
    strbuf_release(&to);
}

static int v1_play(struct aka_run *r, const struct aka_optimize_opts *o, struct v1_session *v,
                   struct aka_err *err)
{
    /* On the heap: the result keeps every invocation's record and is large. */
    struct aka_agent_session_result *res = calloc(1, sizeof(*res));
    if (!res)
        return aka_err_set(err, AKA_EXIT_FAILED, "out of memory");
    aka_optimize_progress(r, "V1: agent %s writes the %s baseline in %s", o->agent_cli,
                          o->framework, v->worktree.buf);
    int rc = v1_session_run(r, o, v, res, err);
    if (rc == 0) {
        aka_optimize_progress(r, "V1: session over (%lld tokens)",
                              res->usage.total > 0 ? res->usage.total : 0);
        v1_assess_session(v, res);
    }
    if (rc == 0 && !v->problem[0])
        v1_assess_identity(r, v);
    if (rc == 0 && !v->problem[0])
        rc = v1_assess_diff(r, v, err);
    free(res);
    return rc;
}

static int v1_by_agent(struct aka_run *r, const struct aka_optimize_opts *o,
                       struct aka_version_summary *v1, struct aka_err *err)
{
    struct v1_session v = {.worktree = STRBUF_INIT, .branch = STRBUF_INIT, .dir = STRBUF_INIT};
    struct strbuf kernel = STRBUF_INIT;
    int rc = v1_end_stale(r, err) < 0 ? -1 : v1_plan(r, &v, err);
    if (rc == 0)
        rc = v1_worktree(r, &v, err) < 0 || v1_brief(r, o, &v, err) < 0 ? -1 : 0;
    if (rc == 0)
        rc = v1_play(r, o, &v, err);
    aka_path_join(&kernel, v.worktree.buf, r->camp.kernel);
    if (rc == 0 && v.problem[0]) {
        aka_bootstrap_v1_keep_failed(r->ws.buf, NULL, v.problem);
        rc = aka_err_set(err, AKA_EXIT_FAILED,
                         "V1 refused: %s; V0 stays the incumbent (memory/v1.failed.json; a "
                         "rerun retries V1)",
                         v.problem);
    } else if (rc == 0) {
        rc = aka_bootstrap_v1_commit(r->ws.buf, &r->camp, kernel.buf, "agent's candidate", &r->env,
                                     v1, err);
    }
    v1_cleanup(r, &v);
    strbuf_release(&kernel);
    strbuf_release(&v.worktree);
    strbuf_release(&v.branch);
    strbuf_release(&v.dir);
    return rc;
}

int aka_optimize_v1(struct aka_run *r, const struct aka_optimize_opts *o,
                    struct aka_version_summary *v1, struct aka_err *err)
{
    int rc = 0;
    v1->version = -1;
    if (!v1_wanted(o)) {
        aka_optimize_progress(r, "V1: skipped (--framework-baseline %s, %s mode)",
                              o->framework_baseline, o->optimization_mode);
        return 0;
    }
    if (aka_bootstrap_v1_pinned(r->ws.buf)) {
        aka_optimize_progress(r, "V1: already pinned (framework_baseline.json at HEAD)");
        return 0;
    }
    enum v1_step step = next_step(r->ws.buf);
    if (step == V1_LEAVE) {
        aka_optimize_progress(r, "V1: the campaign went past V0 without a framework baseline; "
                                 "left as is");
        return 0;
    }
    if (step == V1_ADOPT)
        rc = adopt(r, v1, err);
    else if (strcmp(o->agent_cli, "builtin") == 0)
        rc = from_seed(r, o, v1, err);
    else
        rc = v1_by_agent(r, o, v1, err);
    if (rc == 0 && v1->version == 1)
        aka_optimize_progress(r, "V1 recorded: latency %.3f us (commit %.12s)",
                              v1->latency_us_geomean, v1->commit);
    return rc;
}
