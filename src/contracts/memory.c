/*
 * memory.c — the canonical memory record memory/v<N>.json: validation, the
 * typed view, the atomic writer, and listing the versions of a memory dir.
 *
 * Every episode produces exactly one canonical version, whatever happened,
 * and later decisions (the incumbent's latency, the budget count, resume) read
 * these files back. So the record carries its own status, and the fields that
 * status implies are checked: a PASS status (baseline, framework_baseline,
 * promoted) names the commit it measured and a complete measurement; every
 * other status describes the unchanged incumbent and names no commit of its
 * own. Field names are upstream's (version, masked, timestamp, performance,
 * correctness, quality_gate, git_commit_hash, ...), unknown fields are kept.
 */
#include "base/fs.h"
#include "contracts/records.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *const aka_memory_status_names[] = {
    "baseline", "framework_baseline", "promoted",    "rejected", "pivot",
    "blocked",  "invalid_handoff",    "interrupted", "failed",   NULL};

static const char *const gate_names[] = {"PASS", "FAIL", "TIMEOUT_FAIL", NULL};
static const char *const correctness_names[] = {"PASS", "FAIL", "TIMEOUT_FAIL", "UNKNOWN", NULL};
static const char *const measurement_names[] = {"complete", "incomplete",
                                                "not_evaluated_or_incomplete", NULL};

/* "v<N>": N decimal without leading zeros (so each version has one spelling). */
static bool parse_version(const char *s, size_t len, long *out)
{
    if (len < 2 || len > 10 || s[0] != 'v' || (s[1] == '0' && len > 2))
        return false;
    long n = 0;
    for (size_t i = 1; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        n = n * 10 + (s[i] - '0');
    }
    *out = n;
    return true;
}

static bool status_passes(enum aka_memory_status s)
{
    return s == AKA_MEM_BASELINE || s == AKA_MEM_FRAMEWORK_BASELINE || s == AKA_MEM_PROMOTED;
}

/* ---- sections ------------------------------------------------------------- */

static int get_measure(const struct jctx *c, json_t *o, const char *path, const char *key,
                       bool zero_ok, double *out)
{
    double v = AKA_MISSING;
    *out = AKA_MISSING;
    if (jget_num(c, o, path, key, false, &v) < 0)
        return -1;
    if (aka_measured(v) && !(isfinite(v) && (zero_ok ? v >= 0 : v > 0))) {
        struct strbuf p = STRBUF_INIT;
        jpath_key(&p, path, key);
        aka_record_expected(c, p.buf, zero_ok ? "a number >= 0 or null" : "a number > 0 or null",
                            json_object_get(o, key));
        strbuf_release(&p);
        return -1;
    }
    *out = v;
    return 0;
}

/* A canonical per-shape map holds measured shapes only: finite, positive. */
static int get_by_shape(const struct jctx *c, json_t *perf, struct aka_shape_map *out)
{
    json_t *m = NULL, *v;
    const char *id;
    if (jget_obj(c, perf, "performance", "latency_us_by_shape", false, &m) < 0)
        return -1;
    json_object_foreach(m, id, v)
    {
        if (*id && json_is_number(v) && isfinite(json_number_value(v)) &&
            json_number_value(v) > 0) {
            aka_shape_map_set(out, id, json_number_value(v));
            continue;
        }
        struct strbuf p = STRBUF_INIT;
        jpath_key(&p, "performance.latency_us_by_shape", id);
        aka_record_expected(c, p.buf, "a non-empty shape id with a number > 0", v);
        strbuf_release(&p);
        return -1;
    }
    return 0;
}

static int get_performance(const struct jctx *c, json_t *doc, struct aka_memory_record *r)
{
    json_t *perf = NULL;
    int ms = -1;
    const char *P = "performance";
    if (jget_obj(c, doc, "", P, true, &perf) < 0 ||
        get_measure(c, perf, P, "latency_us", false, &r->latency_us) < 0 ||
        get_measure(c, perf, P, "latency_us_geomean", false, &r->latency_us_geomean) < 0 ||
        get_measure(c, perf, P, "latency_us_arith_mean", false, &r->latency_us_arith_mean) < 0 ||
        get_measure(c, perf, P, "speedup_vs_ref_geomean", false, &r->speedup_vs_ref_geomean) < 0 ||
        get_measure(c, perf, P, "performance_score", false, &r->performance_score) < 0 ||
        get_by_shape(c, perf, &r->latency_us_by_shape) < 0 ||
        jget_str(c, perf, P, "timing_method", false, &r->timing_method) < 0 ||
        jget_enum(c, perf, P, "measurement_status", false, measurement_names, &ms) < 0)
        return -1;
    r->measurement_status = ms >= 0 ? measurement_names[ms] : NULL;
    return 0;
}

static int get_gates(const struct jctx *c, json_t *doc, struct aka_memory_record *r)
{
    json_t *qg = NULL, *cor = NULL;
    const char *reason = NULL;
    double ignored;
    int g = 0, k = 0;
    if (jget_obj(c, doc, "", "quality_gate", true, &qg) < 0 ||
        jget_enum(c, qg, "quality_gate", "result", true, gate_names, &g) < 0 ||
        jget_str(c, qg, "quality_gate", "failure_reason", false, &reason) < 0 ||
        jget_obj(c, doc, "", "correctness", true, &cor) < 0 ||
        jget_enum(c, cor, "correctness", "status", true, correctness_names, &k) < 0 ||
        get_measure(c, cor, "correctness", "max_abs_err", true, &ignored) < 0 ||
        get_measure(c, cor, "correctness", "max_rel_err", true, &ignored) < 0 ||
        get_measure(c, cor, "correctness", "rel_err", true, &ignored) < 0)
        return -1;
    r->quality_gate = gate_names[g];
    r->correctness = correctness_names[k];
    return 0;
}

/* Upstream sections we do not type still must have the right JSON kind. */
static int check_sections(const struct jctx *c, json_t *doc)
{
    static const char *const objects[] = {"optimization", "profile_evidence", "experience",
                                          "long_horizon", NULL};
    static const char *const arrays[] = {"open_directions", "pitfalls_and_fixes",  "references",
                                         "search_log",      "isa_metric_progress", NULL};
    json_t *ignored;
    for (size_t i = 0; objects[i]; i++)
        if (jget_obj(c, doc, "", objects[i], false, &ignored) < 0)
            return -1;
    for (size_t i = 0; arrays[i]; i++)
        if (jget_arr(c, doc, "", arrays[i], false, &ignored) < 0)
            return -1;
    return 0;
}

static int get_identity(const struct jctx *c, json_t *doc, struct aka_memory_record *r)
{
    const char *version = NULL;
    int status = 0;
    if (jget_str(c, doc, "", "version", true, &version) < 0)
        return -1;
    if (!parse_version(version, strlen(version), &r->version))
        return aka_record_expected(c, "version", "\"v<N>\" (N without leading zeros)",
                                   json_object_get(doc, "version"));
    if (jget_enum(c, doc, "", "status", true, aka_memory_status_names, &status) < 0 ||
        jget_bool(c, doc, "", "masked", false, &r->masked) < 0 ||
        jget_str(c, doc, "", "timestamp", true, &r->timestamp) < 0 ||
        jget_str(c, doc, "", "git_commit_hash", false, &r->git_commit_hash) < 0)
        return -1;
    r->status = (enum aka_memory_status)status;
    if (!aka_record_is_timestamp(r->timestamp))
        return aka_record_expected(c, "timestamp", "an ISO-8601 time such as 2025-01-31T12:00:00Z",
                                   json_object_get(doc, "timestamp"));
    if (r->git_commit_hash && !aka_record_is_hex(r->git_commit_hash, AKA_COMMIT_HEX_LEN))
        return aka_record_expected(c, "git_commit_hash", "a 40-digit lower-case commit id or null",
                                   json_object_get(doc, "git_commit_hash"));
    return 0;
}

/* ---- status-implied rules --------------------------------------------------- */

static int check_status_rules(const struct jctx *c, const struct aka_memory_record *r)
{
    const char *st = aka_memory_status_names[r->status];
    bool pass = status_passes(r->status);
    if (pass && !r->git_commit_hash)
        return jfail(c, "git_commit_hash",
                     "expected the measured commit when status is %s; got nothing", st);
    if (!pass && r->git_commit_hash)
        return jfail(c, "git_commit_hash",
                     "expected null when status is %s (the record describes the unchanged "
                     "incumbent); got \"%s\"",
                     st, r->git_commit_hash);
    if (pass != (strcmp(r->quality_gate, "PASS") == 0))
        return jfail(c, "quality_gate.result", "expected %s when status is %s; got %s",
                     pass ? "PASS" : "FAIL or TIMEOUT_FAIL", st, r->quality_gate);
    if (pass && strcmp(r->correctness, "PASS") != 0)
        return jfail(c, "correctness.status", "expected PASS when status is %s; got %s", st,
                     r->correctness);
    if (pass && (!r->measurement_status || strcmp(r->measurement_status, "complete") != 0))
        return jfail(c, "performance.measurement_status",
                     "expected \"complete\" when status is %s; got %s", st,
                     r->measurement_status ? r->measurement_status : "nothing");
    return 0;
}

/* "complete" must mean something: a geomean and at least one measured shape. */
static int check_measurement(const struct jctx *c, const struct aka_memory_record *r)
{
    if (!r->measurement_status || strcmp(r->measurement_status, "complete") != 0)
        return 0;
    if (!aka_measured(r->latency_us_geomean))
        return jfail(c, "performance.latency_us_geomean",
                     "expected a number > 0 when measurement_status is complete; got nothing");
    if (r->latency_us_by_shape.n == 0)
        return jfail(c, "performance.latency_us_by_shape",
                     "expected at least one shape when measurement_status is complete; got none");
    return 0;
}

static void record_init(struct aka_memory_record *r)
{
    memset(r, 0, sizeof(*r));
    r->latency_us = r->latency_us_geomean = r->latency_us_arith_mean = AKA_MISSING;
    r->speedup_vs_ref_geomean = r->performance_score = AKA_MISSING;
}

static int memory_from_json_impl(const char *label, json_t *doc, struct aka_memory_record *out,
                                 struct aka_err *err)
{
    struct jctx c = {label, err};
    record_init(out);
    if (jexpect_obj(&c, doc, "") < 0 || get_identity(&c, doc, out) < 0 ||
        get_gates(&c, doc, out) < 0 || get_performance(&c, doc, out) < 0 ||
        check_sections(&c, doc) < 0 || check_status_rules(&c, out) < 0 ||
        check_measurement(&c, out) < 0) {
        aka_memory_release(out);
        return -1;
    }
    out->json = json_incref(doc);
    return 0;
}

void aka_memory_release(struct aka_memory_record *r)
{
    aka_shape_map_release(&r->latency_us_by_shape);
    json_decref(r->json);
    record_init(r);
}

/* ---- files ------------------------------------------------------------------ */

/* N of a canonical file name "v<N>.json", or -1. */
static long canonical_name(const char *name)
{
    size_t len = strlen(name);
    long n;
    if (len < 7 || strcmp(name + len - 5, ".json") != 0 || !parse_version(name, len - 5, &n))
        return -1;
    return n;
}

static int memory_load_impl(const char *path, struct aka_memory_record *out, struct aka_err *err)
{
    long n = canonical_name(aka_basename(path));
    json_t *doc = NULL;
    int rc;

    record_init(out);
    if (n < 0)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: expected a canonical memory file named v<N>.json (N without "
                           "leading zeros); got \"%s\"",
                           path, aka_basename(path));
    if (aka_json_load_file(path, &doc, err) < 0)
        return -1;
    rc = aka_memory_from_json(path, doc, out, err);
    json_decref(doc);
    if (rc == 0 && out->version != n) {
        aka_err_set(err, AKA_EXIT_USAGE,
                    "%s: version: expected \"v%ld\" (from the file name); got \"v%ld\"", path, n,
                    out->version);
        aka_memory_release(out);
        return -1;
    }
    return rc;
}

static int memory_write_impl(const char *memory_dir, json_t *doc, struct aka_err *err)
{
    struct aka_memory_record r;
    struct strbuf path = STRBUF_INIT, name = STRBUF_INIT;
    const char *v = json_string_value(json_object_get(doc, "version"));
    int rc;

    strbuf_addf(&name, "%s.json", v ? v : "v?");
    aka_path_join(&path, memory_dir, name.buf);
    /* Validate under the target's name so errors say which file was refused. */
    rc = aka_memory_from_json(path.buf, doc, &r, err);
    if (rc == 0) {
        rc = aka_json_write_file(path.buf, doc, err);
        aka_memory_release(&r);
    }
    strbuf_release(&path);
    strbuf_release(&name);
    return rc;
}

/* ---- listing ---------------------------------------------------------------- */

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static int memory_list_impl(const char *memory_dir, struct aka_memory_listing *out,
                            struct aka_err *err)
{
    struct strvec names = STRVEC_INIT;
    struct stat st;

    memset(out, 0, sizeof(*out));
    if (stat(memory_dir, &st) < 0 && errno == ENOENT)
        return 0; /* a fresh workspace has no memory yet */
    if (aka_list_dir(memory_dir, &names, err) < 0)
        return -1;
    for (size_t i = 0; i < names.n; i++) {
        long n = canonical_name(names.v[i]);
        if (n >= 0)
            VEC_PUSH(out->versions, n);
        else if (strcmp(names.v[i], "v0.failed.json") == 0)
            out->has_failed_v0 = true;
    }
    strvec_clear(&names);
    if (out->versions.n)
        qsort(out->versions.v, out->versions.n, sizeof(long), cmp_long);
    return 0;
}

long aka_memory_latest(const struct aka_memory_listing *l)
{
    return l->versions.n ? l->versions.v[l->versions.n - 1] : -1;
}

void aka_memory_listing_release(struct aka_memory_listing *l)
{
    VEC_FREE(l->versions);
    l->has_failed_v0 = false;
}

/* ---- public entry points: every error leaves here as one line ---- */

int aka_memory_from_json(const char *label, json_t *doc, struct aka_memory_record *out,
                         struct aka_err *err)
{
    return aka_record_one_line(memory_from_json_impl(label, doc, out, err), err);
}

int aka_memory_load(const char *path, struct aka_memory_record *out, struct aka_err *err)
{
    return aka_record_one_line(memory_load_impl(path, out, err), err);
}

int aka_memory_write(const char *memory_dir, json_t *doc, struct aka_err *err)
{
    return aka_record_one_line(memory_write_impl(memory_dir, doc, err), err);
}

int aka_memory_list(const char *memory_dir, struct aka_memory_listing *out, struct aka_err *err)
{
    return aka_record_one_line(memory_list_impl(memory_dir, out, err), err);
}
