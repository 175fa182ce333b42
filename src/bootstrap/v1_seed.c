/*
 * v1_seed.c — V1 from a kernel file: the operator's seed kernel (DESIGN §9,
 * built-in agent) or the candidate an agent's V1 session left (DESIGN §6).
 *
 * A reference kernel declares no tuning knobs, so a campaign driven by the
 * built-in agent starts from the operator's seeds/<framework>/ kernel. Either
 * kernel goes through the same gates: multi-seed correctness and a measurement;
 * then it is committed (the kernel commit) and pinned in a second commit
 * (framework_baseline.json + memory/v1.json), because the pin records the
 * kernel commit's id. A failure rolls back to V0 and leaves
 * memory/v1.failed.json (never committed) for the person and the rerun.
 */
#include "base/fs.h"
#include "base/json.h"
#include "bootstrap/internal.h"
#include "git/git.h"

#include <string.h>

bool aka_seed_kernel_path(const struct aka_operator *op, const char *framework, struct strbuf *out)
{
    const char *seeds =
        op->layout == AKA_LAYOUT_NATIVE && op->native.seeds_dir ? op->native.seeds_dir : "seeds";
    strbuf_reset(out);
    strbuf_addf(out, "%s/%s/%s/%s", op->dir, seeds, framework, aka_kernel_file_name(op));
    return aka_is_file(out->buf);
}

static bool pinned_at_head(const struct aka_git *g)
{
    /* The marker only counts once committed: an uncommitted one is a crash mid-pin. */
    struct strbuf blob = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    bool yes = aka_git_show_blob(g, "HEAD", "framework_baseline.json", &blob, &ignored) == 0;
    strbuf_release(&blob);
    return yes;
}

static int last_kernel_commit(const struct aka_git *g, const char *kernel, char *oid,
                              struct aka_err *err)
{
    const char *args[] = {"rev-list", "-1", "HEAD", "--", kernel, NULL};
    struct strbuf out = STRBUF_INIT;
    int rc = aka_git_run(g, args, &out, err);
    if (rc == 0 && out.len < AKA_GIT_OID_HEX)
        rc = aka_err_set(err, AKA_EXIT_FAILED, "%s: no commit touches %s", g->dir, kernel);
    if (rc == 0)
        snprintf(oid, AKA_GIT_OID_HEX + 1, "%.40s", out.buf);
    strbuf_release(&out);
    return rc;
}

/* Put the seed's bytes in the kernel file and commit them unless HEAD has them. */
static int commit_seed(const char *ws, const struct aka_git *g, const struct aka_campaign *c,
                       const char *seed_path, char *kernel_commit, struct aka_err *err)
{
    struct strbuf dst = STRBUF_INIT, changed = STRBUF_INIT;
    struct aka_commit_subject s = {.kind = AKA_COMMIT_V1_KERNEL};
    const char *paths[] = {c->kernel, NULL};
    /* Only the kernel file decides: an untracked file elsewhere (a SOL submission
     * solution.json, a failure record) is not a change to commit. */
    const char *status[] = {"status", "--porcelain", "--", c->kernel, NULL};
    aka_path_join(&dst, ws, c->kernel);
    int rc = aka_remove_tree(dst.buf, err) < 0 ? -1 : aka_copy_file(seed_path, dst.buf, err);
    if (rc == 0)
        rc = aka_git_run(g, status, &changed, err);
    snprintf(s.framework, sizeof(s.framework), "%s", c->framework);
    if (rc == 0 && changed.len)
        rc = aka_git_add(g, paths, err) < 0 ? -1 : aka_ws_commit(ws, &s, kernel_commit, err);
    if (rc == 0)
        rc = last_kernel_commit(g, c->kernel, kernel_commit, err);
    strbuf_release(&dst);
    strbuf_release(&changed);
    return rc;
}

static int pin(const char *ws, const struct aka_git *g, const struct aka_campaign *c,
               const struct aka_eval_outcome *o, const char *kernel_commit, int seeds,
               const char *description, const struct aka_measure_env *env, struct aka_err *err)
{
    struct strbuf p = STRBUF_INIT, rel = STRBUF_INIT, stage = STRBUF_INIT;
    struct aka_commit_subject s = {.kind = AKA_COMMIT_V1_PIN};
    char oid[AKA_GIT_OID_HEX + 1];
    aka_ws_memory_rel(&rel, 1);
    const char *paths[] = {"framework_baseline.json", rel.buf, NULL};
    strbuf_addf(&stage, "combined-base-performance+multi-seed-%d", seeds);
    json_t *mem = aka_memory_doc_from_result(1, AKA_MEM_FRAMEWORK_BASELINE, &o->result,
                                             kernel_commit, "framework_baseline", description);
    aka_bootstrap_add_roofline(env, mem);
    json_t *marker =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:[s]}", "schema", "aka.framework_baseline.v1",
                  "framework", c->framework, "version", "v1", "kernel_commit", kernel_commit,
                  "kernel_sha256", o->kernel_sha256, "validated_stages", stage.buf);
    int rc = aka_ws_memory_write(ws, mem, err);
    aka_path_join(&p, ws, "framework_baseline.json");
    if (rc == 0)
        rc = aka_json_write_file(p.buf, marker, err);
    snprintf(s.kernel_commit, sizeof(s.kernel_commit), "%.8s", kernel_commit);
    if (rc == 0)
        rc = aka_git_add(g, paths, err) < 0 ? -1 : aka_ws_commit(ws, &s, oid, err);
    if (rc == 0)
        rc = aka_ws_check_canonical(ws, 1, err);
    json_decref(mem);
    json_decref(marker);
    strbuf_release(&p);
    strbuf_release(&rel);
    strbuf_release(&stage);
    return rc;
}

static void summary_from(const struct aka_eval_outcome *o, const char *commit,
                         struct aka_version_summary *out)
{
    out->version = 1;
    snprintf(out->commit, sizeof(out->commit), "%s", commit);
    out->latency_us_geomean = o->result.latency_us_geomean;
    out->speedup_vs_ref = o->result.speedup_vs_ref_geomean;
    out->all_pass = o->result.all_pass;
}

bool aka_bootstrap_v1_pinned(const char *ws)
{
    struct aka_git g;
    aka_git_open(&g, ws);
    bool yes = pinned_at_head(&g);
    aka_git_close(&g);
    return yes;
}

static void failed_path(const char *ws, struct strbuf *p)
{
    aka_ws_path(p, ws, AKA_WS_V1_FAILED);
}

void aka_bootstrap_v1_keep_failed(const char *ws, const struct aka_result *r, const char *why)
{
    struct strbuf p = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    struct aka_result none = {0};
    json_t *doc = aka_memory_doc_from_result(1, AKA_MEM_FAILED, r ? r : &none, NULL,
                                             "framework_baseline", "V1 refused");
    json_object_set_new(json_object_get(doc, "quality_gate"), "failure_reason",
                        json_string(why ? why : "V1 failed"));
    failed_path(ws, &p);
    aka_json_write_file(p.buf, doc, &ignored);
    json_decref(doc);
    strbuf_release(&p);
}

/* Roll back to V0 so the incumbent is never an unverified kernel; keep why. */
static void roll_back(const char *ws, const struct aka_git *g, const char *base,
                      const struct aka_eval_outcome *o, const char *why)
{
    struct aka_err ignored = AKA_ERR_INIT;
    if (aka_git_reset_hard(g, base, &ignored) == 0) {
        struct strbuf p = STRBUF_INIT;
        aka_ws_memory_path(&p, ws, 1);
        aka_remove_tree(p.buf, &ignored);
        strbuf_release(&p);
    }
    aka_bootstrap_v1_keep_failed(ws, &o->result, why);
}

static int gate(const struct aka_campaign *c, const struct aka_eval_outcome *o, const char *what,
                struct aka_err *err)
{
    if (o->result.all_pass && aka_measured(o->result.latency_us_geomean))
        return 0;
    return aka_err_set(err, AKA_EXIT_FAILED,
                       "V1 failed: the %s %s did not pass the evaluator (%lld/%lld cases%s%s); "
                       "V0 stays the incumbent (details in memory/v1.failed.json; a rerun "
                       "retries V1)",
                       c->framework, what, o->result.passed, o->result.total,
                       o->result.failures.n ? ": " : "",
                       o->result.failures.n ? o->result.failures.v[0] : "");
}

int aka_bootstrap_v1_commit(const char *ws, const struct aka_campaign *c, const char *kernel_path,
                            const char *what, const struct aka_measure_env *env,
                            struct aka_version_summary *out, struct aka_err *err)
{
    struct aka_git g;
    struct aka_eval_outcome o;
    struct strbuf p = STRBUF_INIT, desc = STRBUF_INIT;
    char base[AKA_GIT_OID_HEX + 1] = "", kc[AKA_GIT_OID_HEX + 1];
    int seeds = env->multi_seed > 0 ? env->multi_seed : 1, rc = 0;
    aka_git_open(&g, ws);
    aka_eval_outcome_init(&o);
    out->version = -1;
    if (pinned_at_head(&g)) {
        aka_git_close(&g);
        return 0;
    }
    failed_path(ws, &p);
    if (aka_exists(p.buf))
        rc = aka_remove_tree(p.buf, err); /* a stale record would make the tree look dirty */
    if (rc == 0)
        rc = aka_git_rev_parse(&g, "HEAD", base, err);
    if (rc == 0)
        rc = commit_seed(ws, &g, c, kernel_path, kc, err);
    aka_bootstrap_progress(env, "V1: measuring the %s %s (%d correctness seeds)", c->framework,
                           what, seeds);
    if (rc == 0)
        rc = aka_bootstrap_measure(ws, c, env, c->kernel, true, &o, err);
    if (rc == 0)
        rc = gate(c, &o, what, err);
    strbuf_addf(&desc, "V1: the %s %s", c->framework, what);
    if (rc == 0)
        rc = pin(ws, &g, c, &o, kc, seeds, desc.buf, env, err);
    if (rc == 0)
        summary_from(&o, kc, out);
    else if (base[0])
        roll_back(ws, &g, base, &o, err->msg);
    aka_eval_outcome_release(&o);
    aka_git_close(&g);
    strbuf_release(&p);
    strbuf_release(&desc);
    return rc;
}

int aka_bootstrap_v1_seed(const char *ws, const struct aka_campaign *c, const char *seed_path,
                          const struct aka_measure_env *env, struct aka_version_summary *out,
                          struct aka_err *err)
{
    return aka_bootstrap_v1_commit(ws, c, seed_path, "seed kernel", env, out, err);
}
