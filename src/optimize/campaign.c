/*
 * campaign.c — one campaign from flags to a stop reason: workspace, pinned
 * identity, V0, V1, and the budget checks at the top of the episode loop.
 *
 * Order matters for "nothing lost, nothing changed by mistake": the workspace
 * lock comes first (two supervisors never run one campaign), then the proof
 * that HEAD's history holds only this supervisor's commits, the operator
 * snapshot (made at the first start, verified later: from here on the campaign
 * reads its operator from the snapshot only), then the campaign.json check (a
 * resume with other flags or another asset tree changes nothing), and only
 * then files are created or commits made.
 */
#include "base/fs.h"
#include "base/json.h"
#include "base/sha256.h"
#include "bootstrap/bootstrap.h"
#include "optimize/internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int aka_optimize_workspace_path(const struct aka_optimize_opts *o, const char *op_name,
                                struct strbuf *out, struct aka_err *err)
{
    struct strbuf name = STRBUF_INIT, slug = STRBUF_INIT;
    char cwd[4096];
    struct strbuf abs = STRBUF_INIT;
    const char *parent = getcwd(cwd, sizeof(cwd));
    int rc = 0;
    if (!parent)
        return aka_err_set(err, AKA_EXIT_ENV, "cannot read the current directory");
    /* Absolute: episode trees are entered from other directories (git -C). */
    if (*o->workspace && o->workspace[0] == '/')
        parent = o->workspace;
    else if (*o->workspace)
        aka_path_join(&abs, cwd, o->workspace);
    if (abs.len)
        parent = abs.buf;
    if (*o->workspace_suffix) {
        rc = aka_slug(op_name, &slug, err);
        strbuf_addf(&name, "kernel_opt_%s_%s", slug.buf, o->workspace_suffix);
    } else {
        rc = aka_workspace_name(op_name, o->framework, o->platform, aka_optimize_is_production(o),
                                &name, err);
    }
    strbuf_reset(out);
    if (rc == 0)
        aka_path_join(out, parent, name.buf);
    strbuf_release(&name);
    strbuf_release(&slug);
    strbuf_release(&abs);
    return rc;
}

/* Layout and framework must describe kernels the evaluator can run. */
static int check_framework(const struct aka_operator *op, const char *fw, struct aka_err *err)
{
    if (op->layout == AKA_LAYOUT_NATIVE) {
        const char *want = op->native.language == AKA_LANG_CUDA ? "Cuda" : "C";
        if (strcmp(fw, want) != 0)
            return aka_err_set(err, AKA_EXIT_USAGE,
                               "--framework %s: %s is a native operator whose kernels are %s", fw,
                               op->dir, want);
    } else if (strcmp(fw, "C") == 0) {
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--framework C: %s is a %s operator; C kernels need a native "
                           "operator (operator.json)",
                           op->dir, aka_layout_name(op->layout));
    }
    return 0;
}

/* V0's and V1's records get their roofline as every episode's does. */
static json_t *roofline(const json_t *performance, void *data)
{
    return aka_version_roofline(data, performance);
}

/* Progress lines quote ids, paths and agent text: escaped, none of them can drive the
 * terminal or forge another line. live.json keeps the text as it is (JSON escapes it). */
static void say(const char *line, void *data)
{
    struct aka_run *r = data;
    if (r->progress) {
        struct strbuf sb = STRBUF_INIT;
        strbuf_add_escaped(&sb, line, strlen(line));
        fprintf(r->progress, "aka optimize: %s\n", sb.buf);
        fflush(r->progress);
        strbuf_release(&sb);
    }
    aka_live_update(r, line);
}

/* The campaign as this run describes it; op_dir stays the original's path (its identity). */
static void fill_campaign(struct aka_run *r, const struct aka_optimize_opts *o,
                          const char *repo_root)
{
    r->camp = (struct aka_campaign){
        .mode = o->optimization_mode,
        .framework = o->framework,
        .platform = o->platform,
        .cuda_arch = o->arch,
        .agent = o->agent_cli,
        .op_dir = r->op_dir_abs.buf,
        .op_name = r->op.name,
        .layout = aka_layout_name(r->op.layout),
        .kernel = aka_kernel_file_name(&r->op),
        .sandbox_isolation = o->transport.isolation,
        .agent_sandbox = o->agent_sandbox,
        .policy_reviewer = aka_episode_policy_reviewer(o),
        .contract = &r->op.contract,
        .pins = &r->pins,
        .repo_root = repo_root,
        .generalized = o->generalized,
        .agent_problem_sha256 = r->agent_problem_sha256,
    };
}

/* Generalized production: the public problem must be valid before anything is written
 * (code 2 naming the file and field), and its hash is pinned with the campaign. */
static int check_problem(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    json_t *pub = NULL;
    if (!o->generalized)
        return 0;
    int rc = aka_agent_problem_public(&r->op, &pub, err);
    aka_op_path(&r->op, AKA_AGENT_PROBLEM_FILE, &path);
    if (rc == 0)
        rc = aka_sha256_file(path.buf, r->agent_problem_sha256, err);
    json_decref(pub);
    strbuf_release(&path);
    return rc;
}

/* One file of the snapshot into the public operator, when the snapshot has it. */
static int public_copy(const char *snap, const char *dir, const char *rel, struct aka_err *err)
{
    struct strbuf from = STRBUF_INIT, to = STRBUF_INIT;
    aka_path_join(&from, snap, rel);
    aka_path_join(&to, dir, rel);
    int rc = aka_is_dir(from.buf)   ? aka_copy_tree(from.buf, to.buf, err)
             : aka_exists(from.buf) ? aka_copy_file(from.buf, to.buf, err)
                                    : 0;
    strbuf_release(&from);
    strbuf_release(&to);
    return rc;
}

/*
 * .aka/public_operator/: what a generalized campaign's agent may know of the operator,
 * rewritten from the snapshot at every start (it is derived, never edited): the public
 * operator.json, the reference, the seeds and agent_problem.json itself; then loaded,
 * as the source of the workspace's visible inputs.
 */
static int write_public_operator(struct aka_run *r, struct aka_err *err)
{
    struct strbuf dir = STRBUF_INIT, p = STRBUF_INIT;
    json_t *pub = NULL;
    const struct aka_native *n = &r->op.native;
    aka_ws_path(&dir, r->ws.buf, AKA_WS_PUBLIC_OPERATOR);
    aka_path_join(&p, dir.buf, "operator.json");
    int rc = aka_agent_problem_public(&r->op, &pub, err) < 0 || aka_remove_tree(dir.buf, err) < 0 ||
                     aka_mkdir_p(dir.buf, 0755, err) < 0 ||
                     aka_json_write_file(p.buf, pub, err) < 0 ||
                     public_copy(r->op.dir, dir.buf, n->reference_file, err) < 0 ||
                     public_copy(r->op.dir, dir.buf, AKA_AGENT_PROBLEM_FILE, err) < 0 ||
                     (n->seeds_dir && public_copy(r->op.dir, dir.buf, n->seeds_dir, err) < 0)
                 ? -1
                 : 0;
    if (rc == 0)
        rc = aka_operator_load(dir.buf, &r->public_op, err);
    json_decref(pub);
    strbuf_release(&dir);
    strbuf_release(&p);
    return rc;
}

/* At a campaign's first start (no campaign.json) the original operator must qualify for
 * the CPU stand-in before anything is created; later the snapshot alone decides
 * (pin_evidence), so nothing written into the original since — an agent's metadata.json
 * among them — can stop or change the campaign. */
static int first_start_check(struct aka_run *r, const struct aka_optimize_opts *o,
                             struct aka_err *err)
{
    struct strbuf camp = STRBUF_INIT;
    aka_ws_path(&camp, r->ws.buf, AKA_WS_CAMPAIGN);
    bool first = !aka_exists(camp.buf);
    strbuf_release(&camp);
    return first ? aka_cpu_stand_in_check(o, &r->op, "the operator", err) : 0;
}

static int setup(struct aka_run *r, const struct aka_optimize_opts *o, const char *repo_root,
                 struct aka_err *err)
{
    if (aka_operator_load(o->op_dir, &r->op, err) < 0 ||
        check_framework(&r->op, o->framework, err) < 0 ||
        aka_realpath(o->op_dir, &r->op_dir_abs, err) < 0 ||
        aka_runtime_pins_from_env(&r->pins, err) < 0 ||
        aka_optimize_workspace_path(o, r->op.name, &r->ws, err) < 0 ||
        check_problem(r, o, err) < 0 || first_start_check(r, o, err) < 0)
        return -1;
    fill_campaign(r, o, repo_root);
    r->env = (struct aka_measure_env){
        .repo_root = repo_root,
        .timeout_s = o->sandbox_timeout,
        .timed_runs = -1,
        .warmup = -1,
        .multi_seed = 5,
        .progress = say,
        .progress_data = r,
        .roofline = roofline,
        .roofline_data = r,
    };
    return 0;
}

static void run_release(struct aka_run *r)
{
    aka_lock_release(&r->lock);
    aka_operator_release(&r->op);
    aka_operator_release(&r->public_op);
    aka_runtime_pins_release(&r->pins);
    strbuf_release(&r->ws);
    strbuf_release(&r->op_dir_abs);
    strbuf_release(&r->warned);
    json_decref(r->plugin_pin);
    strvec_clear(&r->plugin_skills);
    strvec_clear(&r->plugin_instructions);
    strvec_clear(&r->plugin_instruction_names);
}

/*
 * The evidence the campaign runs on: the operator from its snapshot (made now at the first
 * start, verified otherwise) — the source policy, contracts, shapes, seeds and visible
 * inputs all come from it from here on — then campaign.json written or compared, the
 * asset tree with it.
 */
static int pin_evidence(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_err *err)
{
    struct strbuf snap = STRBUF_INIT, ignored = STRBUF_INIT;
    int rc = aka_ws_operator_snapshot(r->ws.buf, r->op_dir_abs.buf, &snap, err);
    if (rc == 0) {
        aka_operator_release(&r->op);
        rc = aka_operator_load(snap.buf, &r->op, err);
    }
    if (rc == 0)
        rc = check_framework(&r->op, o->framework, err);
    if (rc == 0) /* the snapshot's contract is the one the campaign runs on */
        rc = aka_cpu_stand_in_check(o, &r->op, "the campaign's snapshot", err);
    if (rc == 0 && o->generalized)
        rc = write_public_operator(r, err);
    if (rc == 0) {
        fill_campaign(r, o, r->env.repo_root);
        rc = aka_optimize_pin_plugins(r, err);
    }
    if (rc == 0) {
        r->live_ok = true;
        aka_optimize_check_drift(r, &ignored);
    }
    strbuf_release(&snap);
    strbuf_release(&ignored);
    return rc;
}

static int bootstrap(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_err *err)
{
    struct aka_version_summary v0 = {0}, v1 = {0};
    if (aka_ws_lock(r->ws.buf, &r->lock, err) < 0 || aka_ws_history_check(r->ws.buf, err) < 0 ||
        pin_evidence(r, o, err) < 0)
        return -1;
    aka_optimize_progress(r, "workspace %s", r->ws.buf);
    /* The workspace's source commit first (it needs no device), then the health probe
     * before anything is measured: a host without the device stops before V0 with the
     * operator's sources already committed. */
    /* generalized: the agent's worktree gets the public operator's files, never the private */
    const struct aka_operator *visible = o->generalized ? &r->public_op : &r->op;
    if (aka_workspace_materialize(r->ws.buf, visible, &r->camp, o->notes, err) < 0 ||
        aka_env_preflight(r, o, err) < 0 || aka_env_marker_settle(r, err) < 0 ||
        aka_bootstrap_v0(r->ws.buf, &r->camp, &r->env, &v0, err) < 0)
        return -1;
    aka_optimize_progress(r, "V0 recorded: latency %.3f us (commit %.12s)", v0.latency_us_geomean,
                          v0.commit);
    if (aka_optimize_v1(r, o, &v1, err) < 0)
        return -1;
    return 0;
}

/*
 * Finalization, whatever stopped the campaign once it was ours: the summary
 * line, and a SOL submission of the incumbent. After a campaign error (err
 * NULL) a failing finalization is only reported: the first error is the one
 * that matters.
 */
/* A finalization line goes to the terminal only: the live view keeps the stop reason,
 * which is what `aka status` reports for a stopped campaign. */
static void final_line(struct aka_run *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void final_line(struct aka_run *r, const char *fmt, ...)
{
    struct strbuf text = STRBUF_INIT, sb = STRBUF_INIT;
    va_list ap;
    if (!r->progress)
        return;
    va_start(ap, fmt);
    strbuf_vaddf(&text, fmt, ap);
    va_end(ap);
    strbuf_add_escaped(&sb, text.buf, text.len);
    fprintf(r->progress, "aka optimize: %s\n", sb.buf);
    fflush(r->progress);
    strbuf_release(&text);
    strbuf_release(&sb);
}

/* A SOL submission evaluated as submitted, on the campaign's transport (submission_check.c). */
static void check_submission(struct aka_run *r, const struct aka_optimize_opts *o,
                             struct aka_finalize_summary *s)
{
    struct strbuf op_dir = STRBUF_INIT;
    struct aka_eval_request req;
    struct aka_err err = AKA_ERR_INIT;
    if (!s->submission_written)
        return;
    aka_optimize_progress(r, "final: evaluating the submission %s as submitted", s->submission);
    if (aka_supervisor_request(r, o, s->submission, &req, &op_dir, &err) == 0)
        aka_optimize_check_submission(r->env.transport, &req, s);
    else
        snprintf(s->check_detail, sizeof(s->check_detail), "not evaluated: %s", err.msg);
    strbuf_release(&op_dir);
}

/* The submission and its check in state.json, for `aka status` later (report/load.c). */
static void record_submission(struct aka_run *r, const struct aka_finalize_summary *s)
{
    struct aka_err err = AKA_ERR_INIT;
    if (!s->submission_written)
        return;
    json_t *doc = json_pack("{s:s, s:s, s:s, s:s, s:s}", "path", s->submission, "check",
                            aka_submission_check_names[s->check], "checked_by", s->checked_by,
                            "note", s->check_note, "detail", s->check_detail);
    if (!doc || aka_optimize_state_set(r->ws.buf, "submission", doc, &err) < 0)
        aka_optimize_progress(r, "final: the submission's check was not recorded: %s",
                              doc ? err.msg : "not UTF-8");
}

static int finalize(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_err *err)
{
    struct aka_finalize_summary s;
    struct aka_err own = AKA_ERR_INIT;
    char line[sizeof(s.submission) + sizeof(s.check_detail) + 512];
    long latest = -1;
    struct aka_err ignored = AKA_ERR_INIT;
    if (aka_ws_latest_version(r->ws.buf, &latest, &ignored) < 0 || latest < 0)
        return 0; /* nothing was measured: there is nothing to summarize or submit */
    if (aka_optimize_finalize(r->ws.buf, &s, err ? err : &own) < 0) {
        final_line(r, "final: submission not written: %s", (err ? err : &own)->msg);
        if (err)
            err->code =
                AKA_EXIT_FAILED; /* a workspace that cannot be packaged: the campaign failed */
        return err ? -1 : 0;
    }
    if (err)
        check_submission(r, o, &s);
    else /* a campaign that failed (a lost GPU, a dead host) is not evaluated again */
        snprintf(s.check_detail, sizeof(s.check_detail),
                 "not evaluated: the campaign stopped on an error");
    record_submission(r, &s);
    aka_finalize_summary_line(&s, line, sizeof(line));
    final_line(r, "%s", line);
    return 0;
}

/* Code 75: the machine stopped the campaign, not a candidate (environment.c). */
static void environment_stop(struct aka_run *r, const struct aka_err *err)
{
    struct aka_err own = AKA_ERR_INIT;
    if (aka_env_marker_write(r, err, &own) < 0)
        aka_optimize_progress(r, "the environment-failure marker could not be written: %s",
                              own.msg);
}

int aka_optimize_run(const struct aka_optimize_opts *o, const struct aka_sandbox_transport *t,
                     const char *repo_root, FILE *progress, char *stop_reason, size_t stop_len,
                     struct strbuf *ws_out, struct aka_err *err)
{
    struct aka_run r = {.lock = AKA_LOCK_INIT,
                        .ws = STRBUF_INIT,
                        .op_dir_abs = STRBUF_INIT,
                        .warned = STRBUF_INIT,
                        .progress = progress};
    int rc = setup(&r, o, repo_root, err);
    r.env.transport = t;
    if (rc == 0)
        rc = bootstrap(&r, o, err);
    if (rc == 0)
        rc = aka_optimize_loop(&r, o, stop_reason, stop_len, err);
    if (rc < 0)
        aka_live_update(&r, err->msg);
    if (rc < 0 && err->code == AKA_EXIT_ENV && r.live_ok)
        environment_stop(&r, err);
    if (ws_out) {
        strbuf_reset(ws_out);
        strbuf_addstr(ws_out, r.ws.buf);
    }
    if (r.live_ok && finalize(&r, o, rc == 0 ? err : NULL) < 0)
        rc = -1;
    run_release(&r);
    return rc < 0 ? (err->code ? err->code : AKA_EXIT_FAILED) : AKA_EXIT_OK;
}
