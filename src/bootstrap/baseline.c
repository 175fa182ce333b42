/*
 * baseline.c — V0: the evaluator-supported baseline, committed then measured once.
 *
 * Two commits on purpose (upstream §2.1): the source commit fixes the kernel's
 * bytes, then the measurement commit adds memory/v0.json, whose git_commit_hash
 * names the source commit. Recording the measurement in the same commit would
 * need the commit's own id inside it. A failed measurement is kept as
 * memory/v0.failed.json (ignored by git, not canonical), so the latest version
 * stays -1 and a rerun retries the measurement.
 */
#include "base/fs.h"
#include "base/json.h"
#include "bootstrap/internal.h"
#include "git/git.h"

#include <string.h>

static json_t *num(double v)
{
    return aka_measured(v) ? json_real(v) : json_null();
}

static json_t *performance(const struct aka_result *r)
{
    json_t *by = json_object();
    for (size_t i = 0; i < r->latency_us_by_shape.n; i++)
        json_object_set_new(by, r->latency_us_by_shape.v[i].id,
                            num(r->latency_us_by_shape.v[i].value));
    bool complete =
        r->all_pass && r->latency_us_by_shape.n > 0 && aka_measured(r->latency_us_geomean);
    json_t *perf =
        json_pack("{s:o, s:o, s:o, s:o, s:s, s:I, s:o, s:o, s:s}", "latency_us",
                  num(r->latency_us_geomean), "latency_us_geomean", num(r->latency_us_geomean),
                  "latency_us_arith_mean", num(r->latency_us_arith_mean), "latency_us_by_shape", by,
                  "measurement_status", complete ? "complete" : "incomplete",
                  "measured_shape_count", (json_int_t)r->latency_us_by_shape.n,
                  "speedup_vs_ref_geomean", num(r->speedup_vs_ref_geomean), "performance_score",
                  num(r->performance_score), "measurement_scope", "real_evaluator_shapes");
    /* How the latencies were timed: verification never compares two methods. */
    if (r->timing.method && *r->timing.method)
        json_object_set_new(perf, "timing_method", json_string(r->timing.method));
    return perf;
}

static json_t *failure_reason(const struct aka_result *r)
{
    if (r->all_pass)
        return json_null();
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < r->failures.n && sb.len < 2000; i++)
        strbuf_addf(&sb, "%s%s", i ? "; " : "", r->failures.v[i]);
    json_t *s = json_stringn(sb.buf, sb.len > 2000 ? 2000 : sb.len);
    strbuf_release(&sb);
    return s ? s : json_string("evaluation failed");
}

json_t *aka_memory_doc_from_result(long version, enum aka_memory_status status,
                                   const struct aka_result *r, const char *commit,
                                   const char *action_category, const char *description)
{
    char now[AKA_TIMESTAMP_MAX], v[32];
    aka_record_now(now);
    snprintf(v, sizeof(v), "v%ld", version);
    const char *gate = r->all_pass ? "PASS" : "FAIL";
    return json_pack(
        "{s:s, s:s, s:b, s:s, s:o, s:o, s:{s:s, s:o, s:o, s:o}, s:{s:s, s:o}, s:{s:s, s:s}, "
        "s:{s:o, s:o, s:o}}",
        "version", v, "status", aka_memory_status_names[status], "masked", 0, "timestamp", now,
        "git_commit_hash", commit ? json_string(commit) : json_null(), "performance",
        performance(r), "correctness", "status", gate, "max_abs_err", num(r->max_abs_err),
        "max_rel_err", num(r->max_rel_err), "rel_err", num(r->max_rel_err), "quality_gate",
        "result", gate, "failure_reason", failure_reason(r), "optimization", "action_category",
        action_category, "action_description", description, "evaluator", "eval_id",
        r->eval_id ? json_string(r->eval_id) : json_null(), "kernel_sha256",
        r->kernel_sha256 ? json_string(r->kernel_sha256) : json_null(), "name",
        r->evaluator ? json_string(r->evaluator) : json_null());
}

/* The first commit that touched the kernel file: V0's source commit. */
static int source_commit(const struct aka_git *g, const char *kernel, char *oid,
                         struct aka_err *err)
{
    const char *args[] = {"rev-list", "--reverse", "HEAD", "--", kernel, NULL};
    struct strbuf out = STRBUF_INIT;
    int rc = aka_git_run(g, args, &out, err);
    if (rc == 0 && out.len < AKA_GIT_OID_HEX)
        rc = aka_err_set(err, AKA_EXIT_FAILED, "%s: no commit touches %s", g->dir, kernel);
    if (rc == 0) {
        memcpy(oid, out.buf, AKA_GIT_OID_HEX);
        oid[AKA_GIT_OID_HEX] = '\0';
    }
    strbuf_release(&out);
    return rc;
}

static int make_source_commit(const char *ws, const struct aka_git *g, const struct aka_campaign *c,
                              char *oid, struct aka_err *err)
{
    struct aka_err probe = AKA_ERR_INIT;
    const struct aka_commit_subject s = {.kind = AKA_COMMIT_V0_SOURCE};
    if (aka_git_rev_parse(g, "HEAD", oid, &probe) == 0)
        return source_commit(g, c->kernel, oid, err);
    if (aka_git_add(g, NULL, err) < 0 || aka_ws_commit(ws, &s, oid, err) < 0)
        return -1;
    return 0;
}

static void summarize(const struct aka_result *r, long version, const char *commit,
                      struct aka_version_summary *out)
{
    out->version = version;
    snprintf(out->commit, sizeof(out->commit), "%s", commit ? commit : "");
    out->latency_us_geomean = r->latency_us_geomean;
    out->speedup_vs_ref = r->speedup_vs_ref_geomean;
    out->all_pass = r->all_pass;
}

/* V0 as committed: the working copy is never what the supervisor reads. */
static int existing_v0(const char *ws, struct aka_version_summary *out, struct aka_err *err)
{
    struct aka_memory_record m;
    if (aka_ws_memory_at_head(ws, 0, &m, err) < 0)
        return -1;
    out->version = 0;
    snprintf(out->commit, sizeof(out->commit), "%s", m.git_commit_hash ? m.git_commit_hash : "");
    out->latency_us_geomean = m.latency_us_geomean;
    out->speedup_vs_ref = m.speedup_vs_ref_geomean;
    out->all_pass = true;
    aka_memory_release(&m);
    return 0;
}

/* Keep the diagnostics of a failed V0 where a person (and the rerun) finds them. */
static void keep_failed(const char *ws, const struct aka_result *r, const char *why)
{
    struct strbuf p = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    json_t *doc =
        aka_memory_doc_from_result(0, AKA_MEM_FAILED, r, NULL, "baseline", "V0 measurement failed");
    if (why)
        json_object_set_new(json_object_get(doc, "quality_gate"), "failure_reason",
                            json_string(why));
    aka_ws_path(&p, ws, AKA_WS_V0_FAILED);
    aka_json_write_file(p.buf, doc, &ignored);
    json_decref(doc);
    strbuf_release(&p);
}

static int record_v0(const char *ws, const struct aka_git *g, const struct aka_result *r,
                     const char *src, const struct aka_measure_env *env, struct aka_err *err)
{
    char oid[AKA_GIT_OID_HEX + 1];
    struct strbuf rel = STRBUF_INIT;
    const struct aka_commit_subject s = {.kind = AKA_COMMIT_V0_MEASUREMENT};
    aka_ws_memory_rel(&rel, 0);
    const char *paths[] = {rel.buf, NULL};
    json_t *doc = aka_memory_doc_from_result(0, AKA_MEM_BASELINE, r, src, "baseline",
                                             "V0: the reference as the kernel, measured once");
    aka_bootstrap_add_roofline(env, doc);
    int rc = aka_ws_memory_write(ws, doc, err);
    if (rc == 0)
        rc = aka_git_add(g, paths, err) < 0 ? -1 : aka_ws_commit(ws, &s, oid, err);
    if (rc == 0)
        rc = aka_ws_check_canonical(ws, 0, err);
    json_decref(doc);
    strbuf_release(&rel);
    return rc;
}

/* A memory/v0.json that no commit holds was written by a supervisor killed before its
 * measurement commit: it is not V0 (found by the crash test). It goes, and V0 is measured
 * again; a committed one stays, whatever state it is in, for the canonical checks. */
static int drop_uncommitted_v0(const char *ws, const char *path, struct aka_err *err)
{
    struct aka_git g;
    struct strbuf blob = STRBUF_INIT, rel = STRBUF_INIT;
    struct aka_err probe = AKA_ERR_INIT;
    int rc = 0;
    aka_git_open(&g, ws);
    aka_ws_memory_rel(&rel, 0);
    if (aka_is_file(path) && aka_git_show_blob(&g, "HEAD", rel.buf, &blob, &probe) < 0)
        rc = aka_remove_tree(path, err);
    aka_git_close(&g);
    strbuf_release(&blob);
    strbuf_release(&rel);
    return rc;
}

int aka_bootstrap_v0(const char *ws, const struct aka_campaign *c,
                     const struct aka_measure_env *env, struct aka_version_summary *out,
                     struct aka_err *err)
{
    struct strbuf p = STRBUF_INIT;
    struct aka_git g;
    struct aka_eval_outcome o;
    char src[AKA_GIT_OID_HEX + 1];
    int rc;
    aka_ws_memory_path(&p, ws, 0);
    if (drop_uncommitted_v0(ws, p.buf, err) < 0) {
        strbuf_release(&p);
        return -1;
    }
    long latest = -1;
    if (aka_ws_latest_version(ws, &latest, err) < 0 || latest >= 0) { /* committed: done */
        rc = latest >= 0 ? existing_v0(ws, out, err) : -1;
        strbuf_release(&p);
        return rc;
    }
    aka_git_open(&g, ws);
    aka_eval_outcome_init(&o);
    rc = make_source_commit(ws, &g, c, src, err);
    aka_ws_path(&p, ws, AKA_WS_V0_FAILED);
    if (rc == 0 && aka_exists(p.buf))
        rc = aka_remove_tree(p.buf, err);
    aka_bootstrap_progress(env, "V0: measuring %s (source commit %.12s)", c->kernel, src);
    if (rc == 0)
        rc = aka_bootstrap_measure(ws, c, env, c->kernel, false, &o, err);
    if (rc < 0) {
        keep_failed(ws, &o.result, err->msg);
    } else if (!o.result.all_pass) {
        keep_failed(ws, &o.result, NULL);
        rc = aka_err_set(err, AKA_EXIT_FAILED,
                         "V0 failed: the baseline kernel did not pass the evaluator (%lld/%lld "
                         "cases; details in memory/v0.failed.json); a rerun retries V0",
                         o.result.passed, o.result.total);
    } else {
        rc = record_v0(ws, &g, &o.result, src, env, err);
        summarize(&o.result, 0, src, out);
    }
    aka_eval_outcome_release(&o);
    aka_git_close(&g);
    strbuf_release(&p);
    return rc;
}
