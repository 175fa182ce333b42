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
 *          instead of the canonical workspace (ATREX_AKA_WORKSPACE names it). The
 *          workspace module makes it (aka_ws_view_create: campaign.json, the
 *          operator snapshot and its manifest, memory/, earlier episodes'
 *          archives, ...) and takes back the reviewer lines and captures the
 *          session wrote there (aka_ws_view_harvest);
 *   take   at handoff the supervisor fetches exactly the candidate commit by hash
 *          from the tree into refs/aka/candidates/<name> of the canonical repository
 *          (hooks off, every object fsck-checked) and checks the fetched id. The
 *          tree's HEAD and branch are read through upload-pack (ls-remote) and its
 *          kernel file as plain bytes: no git command ever runs in the tree with its
 *          own configuration. Ancestry, the diff, verification and the squash then
 *          work on the canonical repository only.
 *
 * No path of the canonical workspace is named here: src/workspace/ owns them all.
 */
#include "agents/agents.h"
#include "base/fs.h"
#include "base/json.h"
#include "evaluator/evaluator.h"
#include "optimize/internal.h"
#include "profile/profile.h"
#include "workspace/workspace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The identity of the agent's own commits (never the supervisor's). */
#define AGENT_GIT_NAME  "aka-agent"
#define AGENT_GIT_EMAIL "aka-agent@localhost"

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

int aka_candidate_view_create(const struct aka_run *r, const char *tree, struct aka_err *err)
{
    struct strbuf view = STRBUF_INIT;
    aka_candidate_view_path(tree, &view);
    /* Unconfined, the agent reaches the original operator: its aka eval compares it. */
    bool unconfined = r->camp.agent_sandbox && strcmp(r->camp.agent_sandbox, "none") == 0;
    int rc = aka_ws_view_create(r->ws.buf, view.buf, unconfined, err);
    strbuf_release(&view);
    return rc;
}

void aka_candidate_view_harvest(const struct aka_run *r, const char *tree, const char *dir)
{
    struct strbuf view = STRBUF_INIT;
    aka_candidate_view_path(tree, &view);
    aka_ws_view_harvest(r->ws.buf, view.buf, dir);
    strbuf_release(&view);
}

int aka_candidate_remove(const struct aka_run *r, const char *tree, struct aka_err *err)
{
    struct strbuf view = STRBUF_INIT, dir = STRBUF_INIT;
    aka_ws_worktrees_dir(&dir, r->ws.buf);
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

/*
 * Jobs on another machine: the local GPU is not the campaign's, and the agent's own `aka
 * eval` goes through the supervisor (requests/ writable, results/ read-only). On this host
 * a GPU campaign brokers too unless --agent-eval sandbox asks otherwise: on the lent H100
 * (2026-12-07) a job nested in the agent sandbox saw the device nodes but the CUDA driver
 * refused it (cudaGetDeviceCount: error 304, "OS call failed"), while the supervisor's
 * own one-level jobs ran. A CPU campaign nests (tested on every CI run). The generalized
 * mode's agent evaluates the public operator, which the broker does not serve.
 */
bool aka_agent_eval_brokered(const char *agent_eval, bool gpu, bool remote, bool generalized)
{
    if (generalized)
        return false;
    if (remote || strcmp(agent_eval, "broker") == 0)
        return true;
    return strcmp(agent_eval, "auto") == 0 && gpu;
}

void aka_candidate_sandbox_init(struct aka_candidate_sandbox *s, const struct aka_run *r,
                                const struct aka_optimize_opts *o, const char *tree)
{
    struct aka_platform p;
    struct aka_err ignored = AKA_ERR_INIT;
    memset(s, 0, sizeof(*s));
    bool gpu =
        aka_platform_parse(o->platform, o->arch, &p, &ignored) == 0 && p.vendor != AKA_VENDOR_CPU;
    aka_candidate_view_path(tree, &s->view);
    /* What no bind may reach: the canonical workspace and the original operator. */
    strvec_push(&s->deny, r->ws.buf);
    strvec_push(&s->deny, r->camp.op_dir);
    for (size_t i = 0; i < o->agent_read_only_paths.n; i++)
        strvec_push(&s->read_only, o->agent_read_only_paths.v[i]);
    for (size_t i = 0; i < o->agent_writable_paths.n; i++)
        strvec_push(&s->writable, o->agent_writable_paths.v[i]);
    /* Writable inside the otherwise read-only view: what `aka ask-reviewer` writes. */
    aka_ws_view_writable(s->view.buf, &s->writable);
    s->brokered = aka_agent_eval_brokered(
        o->agent_eval, gpu, strcmp(r->env.transport->ops->name, "local") != 0, r->camp.generalized);
    if (s->brokered) {
        struct strbuf requests = STRBUF_INIT;
        aka_ws_path(&requests, s->view.buf, AKA_WS_BROKER_REQUESTS);
        strvec_push(&s->writable, requests.buf);
        strbuf_release(&requests);
        gpu = false;
    }
    s->c = (struct aka_agent_confinement){
        .mode = strcmp(o->agent_sandbox, "none") == 0 ? AKA_AGENT_SANDBOX_NONE
                                                      : AKA_AGENT_SANDBOX_BWRAP,
        .view_dir = s->view.buf,
        .read_only = (const char *const *)s->read_only.v,
        .writable = (const char *const *)s->writable.v,
        .deny = (const char *const *)s->deny.v,
        /* The GPU the agent's own `aka eval` runs on (evaluate.c uses GPU 0 of a GPU vendor). */
        .gpu_count = gpu ? 1 : 0,
        .gpu_vendor = p.vendor,
    };
    s->broker_base.req = (struct aka_eval_request){
        .framework = r->camp.framework,
        .platform = r->camp.platform,
        .cuda_arch = r->camp.cuda_arch,
        .repo_root = r->env.repo_root,
        .timeout_s = o->verify_run_timeout,
        .production_score = aka_optimize_is_production(o),
    };
}

/* The broker's operator: the snapshot and asset tree, re-verified as for the supervisor's
 * own jobs. */
static int broker_operator(void *data, struct strbuf *op_dir, struct aka_err *err)
{
    const struct aka_run *r = data;
    return aka_ws_eval_inputs(r->ws.buf, r->env.repo_root, op_dir, err);
}

/* The broker's profiler: this host's (the supervisor's), as `aka profile` builds it. */
static int broker_profiler(void *data, const struct aka_eval_profile_ask *ask, struct strvec *argv,
                           struct strbuf *dir, struct aka_err *err)
{
    const struct aka_run *r = data;
    return aka_profile_command(r->camp.platform, ask->level, ask->kernel_regex, ask->metrics, argv,
                               dir, err);
}

static void broker_served(void *data, const char *line)
{
    aka_optimize_progress(data, "%s", line);
}

int aka_candidate_sandbox_start(struct aka_candidate_sandbox *s, struct aka_run *r,
                                struct aka_err *err)
{
    if (!s->brokered)
        return 0;
    s->broker_base.resolve = broker_operator;
    s->broker_base.resolve_data = r;
    s->broker_base.served = broker_served;
    s->broker_base.served_data = r;
    s->broker_base.profiler = broker_profiler;
    s->broker_base.profiler_data = r;
    return aka_eval_broker_start(&s->broker, s->view.buf, r->env.transport, &s->broker_base, err);
}

void aka_candidate_sandbox_release(struct aka_candidate_sandbox *s)
{
    aka_eval_broker_stop(s->broker);
    s->broker = NULL;
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
