/*
 * versions.c — the versions of a campaign as the report shows them: every
 * canonical memory/v<N>.json in numeric order, the failed-V0 diagnostics, the
 * speedup of each version over V0, the incumbent, and single-record lookups
 * for `aka memory`.
 *
 * Records are validated by contracts/memory.c; this file adds the few fields
 * the report reads beyond the typed view (episode kind, carried-forward
 * source, description, verification statistics and runs, roofline, episode
 * number and tokens), each type-checked, so a
 * record that carries them wrongly is reported, not silently shown as "—".
 */
#include "base/fs.h"
#include "base/json.h"
#include "report/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool aka_report_status_moves_head(enum aka_memory_status s)
{
    return s == AKA_MEM_BASELINE || s == AKA_MEM_FRAMEWORK_BASELINE || s == AKA_MEM_PROMOTED;
}

long aka_report_parse_version(const char *s)
{
    const char *d = s && s[0] == 'v' ? s + 1 : s;
    size_t len = d ? strlen(d) : 0;
    long n = 0;
    /* One spelling per version, as in file names: no sign, no leading zeros. */
    if (len == 0 || len > 9 || (d[0] == '0' && len > 1))
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (d[i] < '0' || d[i] > '9')
            return -1;
        n = n * 10 + (d[i] - '0');
    }
    return n;
}

double aka_report_speedup(const struct aka_shape_map *base, const struct aka_shape_map *v,
                          size_t *common, size_t *of)
{
    double sum = 0;
    size_t k = 0, either = 0;
    for (size_t i = 0; i < base->n; i++)
        either += aka_measured(base->v[i].value);
    for (size_t i = 0; i < v->n; i++) {
        double b = aka_shape_map_get(base, v->v[i].id), x = v->v[i].value;
        if (!aka_measured(x))
            continue;
        if (!aka_measured(b)) {
            either++; /* a shape only this version measured: not comparable */
            continue;
        }
        /* Log-space mean: the geometric mean of per-shape ratios, so no single
         * large shape dominates the summary. */
        sum += log(b / x);
        k++;
    }
    *common = k;
    *of = either;
    return k ? exp(sum / (double)k) : AKA_MISSING;
}

/* ---- the fields read beyond the typed record ----------------------------- */

static int get_pct(const struct jctx *c, json_t *o, const char *key, bool nonneg, double *out)
{
    double v = AKA_MISSING;
    if (jget_num(c, o, "verification", key, false, &v) < 0)
        return -1;
    if (aka_measured(v) && nonneg && v < 0) {
        struct strbuf p = STRBUF_INIT;
        jpath_key(&p, "verification", key);
        jfail(c, p.buf, "expected a number >= 0; got %g", v);
        strbuf_release(&p);
        return -1;
    }
    *out = v;
    return 0;
}

/* One ABBA run as episode_verify.c records it: every field the report shows is typed. */
static int check_run(const struct jctx *c, json_t *run, size_t i)
{
    struct strbuf p = STRBUF_INIT;
    long long rep = 0;
    const char *rev = NULL;
    bool pass = false;
    double lat = AKA_MISSING;
    jpath_index(&p, "verification.runs", i);
    int rc = jexpect_obj(c, run, p.buf) < 0 || jget_int(c, run, p.buf, "repeat", false, &rep) < 0 ||
                     jget_str(c, run, p.buf, "revision", true, &rev) < 0 ||
                     jget_bool(c, run, p.buf, "all_pass", false, &pass) < 0 ||
                     jget_num(c, run, p.buf, "latency_us_geomean", false, &lat) < 0
                 ? -1
                 : 0;
    if (rc == 0 && strcmp(rev, "incumbent") != 0 && strcmp(rev, "candidate") != 0) {
        strbuf_addstr(&p, ".revision");
        rc = jfail(c, p.buf, "expected \"incumbent\" or \"candidate\"; got \"%s\"", rev);
    }
    strbuf_release(&p);
    return rc;
}

/* The threshold, the verdict and the runs behind it (full/goal verifications carry runs). */
static int read_decision(const struct jctx *c, json_t *o, struct aka_report_verification *v)
{
    json_t *passed = json_object_get(o, "passed"), *run;
    bool yes = false;
    size_t i;
    if (jget_num(c, o, "verification", "min_improvement_pct", false, &v->min_improvement_pct) < 0 ||
        jget_bool(c, o, "verification", "passed", false, &yes) < 0 ||
        jget_str(c, o, "verification", "decision", false, &v->decision) < 0 ||
        jget_arr(c, o, "verification", "runs", false, &v->runs) < 0)
        return -1;
    v->passed = passed && json_is_boolean(passed) ? yes : -1;
    json_array_foreach(v->runs, i, run)
    {
        if (check_run(c, run, i) < 0)
            return -1;
    }
    return 0;
}

/* Every number behind a verification decision (DESIGN §5), as the engine wrote it. */
static int read_verification(const struct jctx *c, json_t *doc, struct aka_report_verification *v)
{
    json_t *o = NULL;
    if (jget_obj(c, doc, "", "verification", false, &o) < 0)
        return -1;
    if (!o)
        return 0;
    v->present = true;
    json_t *pairs = json_object_get(o, "abba_pairs");
    if (jget_str(c, o, "verification", "method", false, &v->method) < 0 ||
        jget_int(c, o, "verification", "abba_pairs", false, &v->abba_pairs) < 0 ||
        get_pct(c, o, "improvement_pct", false, &v->improvement_pct) < 0 ||
        get_pct(c, o, "ci_low_pct", false, &v->ci_low_pct) < 0 ||
        get_pct(c, o, "ci_high_pct", false, &v->ci_high_pct) < 0 ||
        get_pct(c, o, "dispersion_pct", true, &v->dispersion_pct) < 0)
        return -1;
    if (pairs && !json_is_null(pairs) && v->abba_pairs < 0)
        return jfail(c, "verification.abba_pairs", "expected an integer >= 0; got %lld",
                     v->abba_pairs);
    return read_decision(c, o, v);
}

static int read_roofline(const struct jctx *c, json_t *doc, struct aka_report_version *v)
{
    static const char *const nums[] = {
        "gflop_per_s",   "gb_per_s", "peak_gflop_per_s", "peak_gb_per_s", "flop_pct",
        "bandwidth_pct", NULL};
    const char *s = NULL;
    double x;
    if (jget_obj(c, doc, "", "roofline", false, &v->roofline) < 0 || !v->roofline)
        return 0;
    for (size_t i = 0; nums[i]; i++)
        if (jget_num(c, v->roofline, "roofline", nums[i], false, &x) < 0)
            return -1;
    if (jget_str(c, v->roofline, "roofline", "basis", false, &s) < 0 ||
        jget_str(c, v->roofline, "roofline", "unknown", false, &s) < 0)
        return -1;
    return 0;
}

static int read_episode(const struct jctx *c, json_t *doc, struct aka_report_version *v)
{
    json_t *ep = NULL;
    if (jget_obj(c, doc, "", "episode", false, &ep) < 0)
        return -1;
    if (ep && (jget_int(c, ep, "episode", "number", false, &v->episode) < 0 ||
               jget_int(c, ep, "episode", "tokens", false, &v->tokens) < 0))
        return -1;
    return 0;
}

static int read_extras(const char *file, struct aka_report_version *v, struct aka_err *err)
{
    struct jctx c = {file, err};
    json_t *doc = v->rec.json;
    json_t *lh = json_object_get(doc, "long_horizon"), *perf = json_object_get(doc, "performance");
    json_t *opt = json_object_get(doc, "optimization");
    /* The loader already checked that these sections are objects when present. */
    if (jget_str(&c, lh, "long_horizon", "mode", false, &v->kind) < 0 ||
        jget_str(&c, perf, "performance", "carried_from_version", false, &v->carried_from) < 0 ||
        jget_str(&c, opt, "optimization", "action_description", false, &v->description) < 0 ||
        read_verification(&c, doc, &v->verify) < 0 || read_roofline(&c, doc, v) < 0 ||
        read_episode(&c, doc, v) < 0)
        return -1;
    if (v->carried_from && aka_report_parse_version(v->carried_from) < 0)
        return jfail(&c, "performance.carried_from_version", "expected \"v<N>\"; got \"%s\"",
                     v->carried_from);
    v->latency_us =
        aka_measured(v->rec.latency_us_geomean) ? v->rec.latency_us_geomean : v->rec.latency_us;
    return 0;
}

static void version_init(struct aka_report_version *v)
{
    memset(v, 0, sizeof(*v));
    v->verify.abba_pairs = -1;
    v->verify.improvement_pct = v->verify.ci_low_pct = AKA_MISSING;
    v->verify.ci_high_pct = v->verify.dispersion_pct = AKA_MISSING;
    v->verify.min_improvement_pct = AKA_MISSING;
    v->verify.passed = -1;
    v->episode = v->tokens = -1;
    v->latency_us = v->speedup_vs_v0 = AKA_MISSING;
}

/* ---- loading ------------------------------------------------------------- */

static void record_path(const char *ws, long n, struct strbuf *out)
{
    aka_ws_memory_path(out, ws, n);
}

static int load_one(const char *ws, long n, struct aka_report *r, struct aka_err *err)
{
    struct aka_report_version v;
    struct strbuf path = STRBUF_INIT;
    version_init(&v);
    record_path(ws, n, &path);
    if (aka_memory_load(path.buf, &v.rec, err) < 0) {
        strbuf_release(&path);
        return -1;
    }
    v.file = strbuf_detach(&path, NULL);
    VEC_PUSH(r->versions, v); /* pushed first so that release frees it on any error */
    return read_extras(v.file, &r->versions.v[r->versions.n - 1], err);
}

static int load_failed_v0(const char *ws, struct aka_report *r, struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    json_t *doc = NULL;
    aka_ws_path(&path, ws, AKA_WS_V0_FAILED);
    int rc = aka_json_load_file(path.buf, &doc, err);
    if (rc == 0)
        rc = aka_memory_from_json(path.buf, doc, &r->failed_v0, err);
    json_decref(doc);
    if (rc == 0) {
        r->has_failed_v0 = true;
        if (r->failed_v0.version != 0)
            rc = aka_err_set(err, AKA_EXIT_USAGE,
                             "%s: version: expected \"v0\" (from the file name); got \"v%ld\"",
                             path.buf, r->failed_v0.version);
    }
    r->failed_v0_file = strbuf_detach(&path, NULL);
    return rc;
}

static void derive(struct aka_report *r)
{
    long v0 = aka_report_find(r, 0);
    r->incumbent = -1;
    for (size_t i = 0; i < r->versions.n; i++) {
        struct aka_report_version *v = &r->versions.v[i];
        if (aka_report_status_moves_head(v->rec.status))
            r->incumbent = (long)i;
        if (v0 >= 0)
            v->speedup_vs_v0 =
                aka_report_speedup(&r->versions.v[v0].rec.latency_us_by_shape,
                                   &v->rec.latency_us_by_shape, &v->speedup_shapes, &v->speedup_of);
    }
}

int aka_report_load_versions(const char *ws, struct aka_report *r, struct aka_err *err)
{
    struct aka_memory_listing l;
    struct strbuf dir = STRBUF_INIT;
    int rc;
    aka_ws_path(&dir, ws, AKA_WS_MEMORY);
    rc = aka_memory_list(dir.buf, &l, err);
    strbuf_release(&dir);
    if (rc < 0)
        return -1;
    for (size_t i = 0; i < l.versions.n && rc == 0; i++)
        rc = load_one(ws, l.versions.v[i], r, err);
    if (rc == 0 && l.has_failed_v0)
        rc = load_failed_v0(ws, r, err);
    aka_memory_listing_release(&l);
    if (rc == 0)
        derive(r);
    return rc;
}

long aka_report_find(const struct aka_report *r, long n)
{
    for (size_t i = 0; i < r->versions.n; i++)
        if (r->versions.v[i].rec.version == n)
            return (long)i;
    return -1;
}

/* ---- single records ------------------------------------------------------ */

static int list_versions(const char *ws, struct aka_memory_listing *l, struct aka_err *err)
{
    struct strbuf dir = STRBUF_INIT;
    aka_ws_path(&dir, ws, AKA_WS_MEMORY);
    int rc = aka_memory_list(dir.buf, l, err);
    strbuf_release(&dir);
    return rc;
}

int aka_report_load_record(const char *ws, long n, struct aka_memory_record *out,
                           struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    struct aka_memory_listing l;
    int rc = 0;
    memset(out, 0, sizeof(*out));
    record_path(ws, n, &path);
    if (!aka_exists(path.buf) && list_versions(ws, &l, err) == 0) {
        long latest = aka_memory_latest(&l);
        if (latest < 0)
            rc = aka_err_set(err, AKA_EXIT_USAGE, "%s: no such memory record (no version yet)",
                             path.buf);
        else
            rc = aka_err_set(err, AKA_EXIT_USAGE,
                             "%s: no such memory record (%zu version(s) recorded, the latest v%ld)",
                             path.buf, l.versions.n, latest);
        aka_memory_listing_release(&l);
    } else if (!aka_exists(path.buf)) {
        rc = -1; /* the listing's own error */
    } else {
        rc = aka_memory_load(path.buf, out, err);
    }
    strbuf_release(&path);
    return aka_record_one_line(rc, err);
}

int aka_report_load_latest(const char *ws, struct aka_memory_record *out, struct aka_err *err)
{
    struct aka_memory_listing l;
    memset(out, 0, sizeof(*out));
    if (list_versions(ws, &l, err) < 0)
        return aka_record_one_line(-1, err);
    int rc = 1;
    for (size_t i = l.versions.n; i-- > 0 && rc == 1;) {
        if (aka_report_load_record(ws, l.versions.v[i], out, err) < 0)
            rc = -1;
        else if (!out->masked)
            rc = 0;
        else
            aka_memory_release(out);
    }
    if (rc == 1)
        rc = aka_err_set(err, AKA_EXIT_FAILED, "%s/memory: no %scanonical memory record yet", ws,
                         l.versions.n ? "unmasked " : "");
    aka_memory_listing_release(&l);
    return rc;
}
