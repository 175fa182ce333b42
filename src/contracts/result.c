/*
 * result.c — the evaluator result (DESIGN §4.6): finding the one RESULT_JSON
 * line in an evaluator's stdout, typed parsing, consistency checks, and the
 * writer C harnesses use. Also the small helpers records.h shares (hex and
 * timestamp checks, "expected ...; got ..." errors, per-shape maps).
 *
 * The result is the only evidence a measurement ever existed, so the parser
 * fails closed: exactly one result line (a second one could be a candidate
 * forging a verdict), counts that agree with all_pass, failures that agree
 * with all_pass, finite positive latencies, and a well-formed kernel hash.
 */
#include "base/sha256.h"
#include "contracts/records.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- shared helpers ------------------------------------------------------ */

bool aka_record_is_hex(const char *s, size_t len)
{
    size_t i = 0;
    if (!s)
        return false;
    for (; s[i]; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return i == len;
}

static bool digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return false;
    return true;
}

/* The shape of the fixed part "YYYY-MM-DDTHH:MM:SS" (19 characters). */
static bool timestamp_head(const char *s)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:dd";
    for (size_t i = 0; i < sizeof(shape) - 1; i++) {
        if (!s[i])
            return false;
        if (shape[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != shape[i])
            return false;
    }
    return true;
}

bool aka_record_is_timestamp(const char *s)
{
    if (!s || strlen(s) >= AKA_TIMESTAMP_MAX || !timestamp_head(s))
        return false;
    s += 19;
    if (*s == '.') {
        size_t n = strspn(s + 1, "0123456789");
        if (n == 0)
            return false;
        s += 1 + n;
    }
    if (strcmp(s, "Z") == 0)
        return true;
    return (s[0] == '+' || s[0] == '-') && strlen(s) == 6 && digits(s + 1, 2) && s[3] == ':' &&
           digits(s + 4, 2);
}

void aka_record_now(char out[AKA_TIMESTAMP_MAX])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, AKA_TIMESTAMP_MAX, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int aka_record_expected(const struct jctx *c, const char *path, const char *want, const json_t *got)
{
    struct strbuf sb = STRBUF_INIT;
    int rc;
    if (!got) {
        strbuf_addstr(&sb, "nothing (the field is missing)");
    } else {
        aka_json_dump_compact(got, &sb);
        if (sb.len > 80) {
            strbuf_setlen(&sb, 77);
            strbuf_addstr(&sb, "...");
        }
    }
    rc = jfail(c, path, "expected %s; got %s", want, sb.buf);
    strbuf_release(&sb);
    return rc;
}

int aka_record_one_line(int rc, struct aka_err *err)
{
    struct strbuf sb = STRBUF_INIT;
    if (rc >= 0 || !err)
        return rc;
    strbuf_add_escaped(&sb, err->msg, strlen(err->msg));
    snprintf(err->msg, sizeof(err->msg), "%s", sb.buf);
    strbuf_release(&sb);
    return rc;
}

void aka_shape_map_set(struct aka_shape_map *m, const char *id, double value)
{
    for (size_t i = 0; i < m->n; i++) {
        if (strcmp(m->v[i].id, id) == 0) {
            m->v[i].value = value;
            return;
        }
    }
    struct aka_shape_value sv = {aka_xstrdup(id), value};
    VEC_PUSH(*m, sv);
}

double aka_shape_map_get(const struct aka_shape_map *m, const char *id)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->v[i].id, id) == 0)
            return m->v[i].value;
    return AKA_MISSING;
}

void aka_shape_map_release(struct aka_shape_map *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].id);
    VEC_FREE(*m);
}

/* ---- construction -------------------------------------------------------- */

void aka_result_init(struct aka_result *r)
{
    memset(r, 0, sizeof(*r));
    r->latency_us_geomean = r->latency_us_arith_mean = AKA_MISSING;
    r->speedup_vs_ref_geomean = r->speedup_vs_ref_mean = r->performance_score = AKA_MISSING;
    r->max_abs_err = r->max_rel_err = AKA_MISSING;
}

static void probe_release(struct aka_probe *p)
{
    free(p->id);
    free(p->distribution);
    free(p->shape_id);
    free(p->metric);
    free(p->detail);
}

void aka_result_release(struct aka_result *r)
{
    strvec_clear(&r->failures);
    aka_shape_map_release(&r->latency_us_by_shape);
    free(r->evaluator);
    free(r->eval_id);
    free(r->kernel_sha256);
    VEC_FREE(r->seeds);
    free(r->timing.method);
    aka_shape_map_release(&r->timing.cv_by_shape);
    aka_shape_map_release(&r->timing.reps_by_shape);
    for (size_t i = 0; i < r->diagnostics.n; i++) {
        free(r->diagnostics.v[i].stage);
        free(r->diagnostics.v[i].shape_id);
        free(r->diagnostics.v[i].message);
    }
    VEC_FREE(r->diagnostics);
    for (size_t i = 0; i < r->probes.n; i++)
        probe_release(&r->probes.v[i]);
    VEC_FREE(r->probes);
    json_decref(r->extra);
    aka_result_init(r);
}

void aka_result_set_string(char **field, const char *value)
{
    free(*field);
    *field = value ? aka_xstrdup(value) : NULL;
}

void aka_result_add_failure(struct aka_result *r, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    strvec_push(&r->failures, sb.buf);
    strbuf_release(&sb);
}

void aka_result_add_diagnostic(struct aka_result *r, const char *stage, const char *shape_id,
                               const char *message)
{
    struct aka_diagnostic d = {aka_xstrdup(stage), shape_id ? aka_xstrdup(shape_id) : NULL,
                               aka_xstrdup(message)};
    VEC_PUSH(r->diagnostics, d);
}

/* ---- typed field readers -------------------------------------------------- */

/* A number or null/absent (AKA_MISSING); the domain is checked by validate. */
static int get_measure(const struct jctx *c, json_t *obj, const char *path, const char *key,
                       double *out)
{
    double v = AKA_MISSING;
    *out = AKA_MISSING;
    if (jget_num(c, obj, path, key, false, &v) < 0)
        return -1;
    *out = v;
    return 0;
}

static int get_owned_str(const struct jctx *c, json_t *obj, const char *path, const char *key,
                         bool required, char **out)
{
    const char *s = NULL;
    if (jget_str(c, obj, path, key, required, &s) < 0)
        return -1;
    *out = s ? aka_xstrdup(s) : NULL;
    return 0;
}

/* {id: number|null}: the shape ids must be non-empty; values are checked later. */
static int get_shape_map(const struct jctx *c, json_t *obj, const char *path, const char *key,
                         struct aka_shape_map *out)
{
    json_t *m = NULL, *v;
    const char *id;
    struct strbuf p = STRBUF_INIT;
    int rc = 0;

    if (jget_obj(c, obj, path, key, false, &m) < 0)
        return -1;
    jpath_key(&p, path, key);
    json_object_foreach(m, id, v)
    {
        if (!*id) {
            rc = aka_record_expected(c, p.buf, "non-empty shape ids", m);
            break;
        }
        if (!json_is_number(v) && !json_is_null(v)) {
            struct strbuf q = STRBUF_INIT;
            jpath_key(&q, p.buf, id);
            rc = aka_record_expected(c, q.buf, "a number or null", v);
            strbuf_release(&q);
            break;
        }
        aka_shape_map_set(out, id, json_is_null(v) ? AKA_MISSING : json_number_value(v));
    }
    strbuf_release(&p);
    return rc;
}

/*
 * failures[]: each entry is a message string, or an object whose "message"
 * names the shape (the Python harness adds structured fields beside it:
 * shape_id, output, first_mismatch_index, ...). The message is what aka
 * keeps and shows; the structured fields are the harness's business.
 */
static int get_failures(const struct jctx *c, json_t *obj, struct strvec *out)
{
    json_t *arr = NULL, *item;
    size_t i;
    if (jget_arr(c, obj, "", "failures", false, &arr) < 0)
        return -1;
    json_array_foreach(arr, i, item)
    {
        char path[64];
        const char *msg = NULL;
        snprintf(path, sizeof(path), "failures[%zu]", i);
        if (json_is_object(item)) {
            struct jctx inner = *c;
            if (jget_str(&inner, item, path, "message", true, &msg) < 0)
                return -1;
        } else if (json_is_string(item)) {
            msg = json_string_value(item);
        } else {
            return aka_record_expected(c, path, "a string or an object with a message", item);
        }
        strvec_push(out, msg);
    }
    return 0;
}

static int get_seeds(const struct jctx *c, json_t *obj, struct aka_result *r)
{
    json_t *arr = NULL, *item;
    size_t i;
    if (jget_arr(c, obj, "", "seeds", false, &arr) < 0)
        return -1;
    json_array_foreach(arr, i, item)
    {
        if (!json_is_integer(item)) {
            char path[64];
            snprintf(path, sizeof(path), "seeds[%zu]", i);
            return aka_record_expected(c, path, "an integer", item);
        }
        VEC_PUSH(r->seeds, (long long)json_integer_value(item));
    }
    return 0;
}

/* How a harness timed; "none" when nothing was timed (e.g. every shape failed). The
 * cupti_kernel_span methods are SOL-ExecBench's (first kernel start to last kernel end). */
static const char *const timing_methods[] = {"cuda_event",
                                             "cuda_graph",
                                             "cupti_kernel_span",
                                             "cupti_kernel_span_graph",
                                             "cpu_monotonic",
                                             "cpu_time",
                                             "none",
                                             NULL};

static int get_timing(const struct jctx *c, json_t *obj, struct aka_timing *t)
{
    static const char *const keys[] = {"method",      "warmup",         "reps",          "l2_flush",
                                       "cv_by_shape", "time_budget_ms", "reps_by_shape", NULL};
    json_t *o = NULL;
    int method = 0;
    if (jget_obj(c, obj, "", "timing", false, &o) < 0)
        return -1;
    if (!o)
        return 0;
    t->present = true;
    return jcheck_keys(c, o, "timing", keys) < 0 ||
                   jget_enum(c, o, "timing", "method", true, timing_methods, &method) < 0 ||
                   get_owned_str(c, o, "timing", "method", true, &t->method) < 0 ||
                   jget_int(c, o, "timing", "warmup", true, &t->warmup) < 0 ||
                   jget_int(c, o, "timing", "reps", true, &t->reps) < 0 ||
                   jget_bool(c, o, "timing", "l2_flush", true, &t->l2_flush) < 0 ||
                   get_shape_map(c, o, "timing", "cv_by_shape", &t->cv_by_shape) < 0 ||
                   jget_int(c, o, "timing", "time_budget_ms", false, &t->time_budget_ms) < 0 ||
                   get_shape_map(c, o, "timing", "reps_by_shape", &t->reps_by_shape) < 0
               ? -1
               : 0;
}

static int get_diagnostic(const struct jctx *c, json_t *o, const char *path, struct aka_result *r)
{
    static const char *const keys[] = {"stage", "shape_id", "message", NULL};
    struct aka_diagnostic d = {NULL, NULL, NULL};
    if (jexpect_obj(c, o, path) < 0 || jcheck_keys(c, o, path, keys) < 0 ||
        get_owned_str(c, o, path, "stage", true, &d.stage) < 0 ||
        get_owned_str(c, o, path, "shape_id", false, &d.shape_id) < 0 ||
        get_owned_str(c, o, path, "message", true, &d.message) < 0) {
        free(d.stage);
        free(d.shape_id);
        free(d.message);
        return -1;
    }
    VEC_PUSH(r->diagnostics, d);
    return 0;
}

static const char *const probe_status_names[] = {"passed", "failed", "incomplete", NULL};

static int get_probe_fields(const struct jctx *c, json_t *o, const char *path, struct aka_probe *p)
{
    static const char *const keys[] = {"id",     "status", "distribution", "shape_id", "seed",
                                       "metric", "value",  "threshold",    "detail",   NULL};
    int status = 0;
    long long seed = 0;
    if (jexpect_obj(c, o, path) < 0 || jcheck_keys(c, o, path, keys) < 0 ||
        get_owned_str(c, o, path, "id", true, &p->id) < 0 ||
        jget_enum(c, o, path, "status", true, probe_status_names, &status) < 0 ||
        get_owned_str(c, o, path, "distribution", false, &p->distribution) < 0 ||
        get_owned_str(c, o, path, "shape_id", false, &p->shape_id) < 0 ||
        get_owned_str(c, o, path, "metric", false, &p->metric) < 0 ||
        get_owned_str(c, o, path, "detail", false, &p->detail) < 0 ||
        get_measure(c, o, path, "value", &p->value) < 0 ||
        get_measure(c, o, path, "threshold", &p->threshold) < 0)
        return -1;
    p->status = (enum aka_probe_status)status;
    if (json_object_get(o, "seed") && !json_is_null(json_object_get(o, "seed"))) {
        if (jget_int(c, o, path, "seed", true, &seed) < 0)
            return -1;
        p->seed = seed, p->has_seed = true;
    }
    return 0;
}

static int get_list_of(const struct jctx *c, json_t *obj, const char *key, struct aka_result *r,
                       int (*one)(const struct jctx *, json_t *, const char *, struct aka_result *))
{
    json_t *arr = NULL, *item;
    struct strbuf p = STRBUF_INIT;
    size_t i;
    int rc = 0;
    if (jget_arr(c, obj, "", key, false, &arr) < 0)
        return -1;
    json_array_foreach(arr, i, item)
    {
        jpath_index(&p, key, i);
        if ((rc = one(c, item, p.buf, r)) < 0)
            break;
    }
    strbuf_release(&p);
    return rc;
}

static int get_probe(const struct jctx *c, json_t *o, const char *path, struct aka_result *r)
{
    struct aka_probe p;
    memset(&p, 0, sizeof(p));
    p.value = p.threshold = AKA_MISSING;
    if (get_probe_fields(c, o, path, &p) < 0) {
        probe_release(&p);
        return -1;
    }
    VEC_PUSH(r->probes, p);
    return 0;
}

/* ---- parsing -------------------------------------------------------------- */

static const char *const result_keys[] = {"all_pass",
                                          "total",
                                          "passed",
                                          "failures",
                                          "latency_us_by_shape",
                                          "latency_us_geomean",
                                          "latency_us_arith_mean",
                                          "speedup_vs_ref_geomean",
                                          "speedup_vs_ref_mean",
                                          "performance_score",
                                          "max_abs_err",
                                          "max_rel_err",
                                          "evaluator",
                                          "eval_id",
                                          "kernel_sha256",
                                          "seeds",
                                          "timing",
                                          "actionable_diagnostics",
                                          "probes",
                                          NULL};

static int get_measures(const struct jctx *c, json_t *o, struct aka_result *r)
{
    return get_measure(c, o, "", "latency_us_geomean", &r->latency_us_geomean) < 0 ||
                   get_measure(c, o, "", "latency_us_arith_mean", &r->latency_us_arith_mean) < 0 ||
                   get_measure(c, o, "", "speedup_vs_ref_geomean", &r->speedup_vs_ref_geomean) <
                       0 ||
                   get_measure(c, o, "", "speedup_vs_ref_mean", &r->speedup_vs_ref_mean) < 0 ||
                   get_measure(c, o, "", "performance_score", &r->performance_score) < 0 ||
                   get_measure(c, o, "", "max_abs_err", &r->max_abs_err) < 0 ||
                   get_measure(c, o, "", "max_rel_err", &r->max_rel_err) < 0
               ? -1
               : 0;
}

/* Masked (generalized production) results say so with hidden_case_details. */
static int get_masked(const struct jctx *c, json_t *o, struct aka_result *r)
{
    const char *hidden = NULL;
    if (jget_str(c, o, "", "hidden_case_details", false, &hidden) < 0)
        return -1;
    r->masked = hidden != NULL;
    return 0;
}

static int get_fields(const struct jctx *c, json_t *o, struct aka_result *r)
{
    if (jget_bool(c, o, "", "all_pass", true, &r->all_pass) < 0 ||
        jget_int(c, o, "", "total", true, &r->total) < 0 ||
        jget_int(c, o, "", "passed", true, &r->passed) < 0 ||
        get_failures(c, o, &r->failures) < 0 || get_masked(c, o, r) < 0 ||
        get_shape_map(c, o, "", "latency_us_by_shape", &r->latency_us_by_shape) < 0 ||
        get_measures(c, o, r) < 0 ||
        get_owned_str(c, o, "", "evaluator", false, &r->evaluator) < 0 ||
        get_owned_str(c, o, "", "eval_id", false, &r->eval_id) < 0 ||
        get_owned_str(c, o, "", "kernel_sha256", false, &r->kernel_sha256) < 0 ||
        get_seeds(c, o, r) < 0 || get_timing(c, o, &r->timing) < 0 ||
        get_list_of(c, o, "actionable_diagnostics", r, get_diagnostic) < 0)
        return -1;
    r->has_probes = json_is_array(json_object_get(o, "probes"));
    return get_list_of(c, o, "probes", r, get_probe);
}

/* Fields we do not type (upstream extensions) survive a parse/write round trip. */
static json_t *collect_extra(json_t *o)
{
    json_t *extra = json_object(), *v;
    const char *key;
    json_object_foreach(o, key, v)
    {
        if (jenum_index(key, result_keys) < 0)
            json_object_set(extra, key, v);
    }
    return extra;
}

static int result_from_json_impl(const char *label, json_t *obj, struct aka_result *out,
                                 struct aka_err *err)
{
    struct jctx c = {label, err};
    aka_result_init(out);
    if (jexpect_obj(&c, obj, "") < 0 || get_fields(&c, obj, out) < 0 ||
        aka_result_validate(label, out, err) < 0) {
        aka_result_release(out);
        return -1;
    }
    out->extra = collect_extra(obj);
    return 0;
}

/* ---- validation ----------------------------------------------------------- */

/* "FILE: PATH: expected WANT; got <number>" for a measured double. */
static int bad_number(const struct jctx *c, const char *path, const char *want, double v)
{
    return jfail(c, path, "expected %s; got %g", want, v);
}

static int check_measure(const struct jctx *c, const char *path, double v, bool zero_ok)
{
    if (!aka_measured(v))
        return 0;
    if (isfinite(v) && (zero_ok ? v >= 0 : v > 0))
        return 0;
    return bad_number(c, path,
                      zero_ok ? "a finite number >= 0 or null" : "a finite number > 0 or null", v);
}

static int check_shape_map(const struct jctx *c, const char *name, const struct aka_shape_map *m,
                           bool zero_ok)
{
    struct strbuf p = STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < m->n && rc == 0; i++) {
        jpath_key(&p, name, m->v[i].id);
        rc = check_measure(c, p.buf, m->v[i].value, zero_ok);
    }
    strbuf_release(&p);
    return rc;
}

static int check_counts(const struct jctx *c, const struct aka_result *r)
{
    bool want_pass = r->passed == r->total && r->total > 0;
    if (r->total < 0)
        return jfail(c, "total", "expected an integer >= 0; got %lld", r->total);
    if (r->passed < 0 || r->passed > r->total)
        return jfail(c, "passed", "expected an integer from 0 to total (%lld); got %lld", r->total,
                     r->passed);
    if (r->all_pass != want_pass)
        return jfail(c, "all_pass", "expected %s because passed is %lld of %lld; got %s",
                     want_pass ? "true" : "false", r->passed, r->total,
                     r->all_pass ? "true" : "false");
    if (r->all_pass && r->failures.n > 0)
        return jfail(c, "failures", "expected none when all_pass is true; got %zu (first: \"%s\")",
                     r->failures.n, r->failures.v[0]);
    if (!r->all_pass && r->failures.n == 0 && !r->masked)
        return jfail(c, "failures",
                     "expected at least one failure when all_pass is false; got "
                     "none");
    return 0;
}

static int check_measures(const struct jctx *c, const struct aka_result *r)
{
    return check_shape_map(c, "latency_us_by_shape", &r->latency_us_by_shape, false) < 0 ||
                   check_measure(c, "latency_us_geomean", r->latency_us_geomean, false) < 0 ||
                   check_measure(c, "latency_us_arith_mean", r->latency_us_arith_mean, false) < 0 ||
                   check_measure(c, "speedup_vs_ref_geomean", r->speedup_vs_ref_geomean, false) <
                       0 ||
                   check_measure(c, "speedup_vs_ref_mean", r->speedup_vs_ref_mean, false) < 0 ||
                   check_measure(c, "performance_score", r->performance_score, false) < 0 ||
                   check_measure(c, "max_abs_err", r->max_abs_err, true) < 0 ||
                   check_measure(c, "max_rel_err", r->max_rel_err, true) < 0
               ? -1
               : 0;
}

static int check_timing(const struct jctx *c, const struct aka_timing *t)
{
    if (!t->present)
        return 0;
    if (!t->method || !*t->method)
        return jfail(c, "timing.method", "expected a non-empty string; got nothing");
    if (t->warmup < 0)
        return jfail(c, "timing.warmup", "expected an integer >= 0; got %lld", t->warmup);
    /* Nothing timed (method "none": a probe run's --timed-runs=0, or every shape failed)
     * legitimately has no repetitions; every real method has at least one. */
    bool untimed = strcmp(t->method, "none") == 0;
    if (t->reps < (untimed ? 0 : 1))
        return jfail(c, "timing.reps", "expected an integer >= %d (method \"%s\"); got %lld",
                     untimed ? 0 : 1, t->method, t->reps);
    if (t->time_budget_ms < 0)
        return jfail(c, "timing.time_budget_ms", "expected an integer >= 0; got %lld",
                     t->time_budget_ms);
    return check_shape_map(c, "timing.cv_by_shape", &t->cv_by_shape, true) < 0 ||
                   check_shape_map(c, "timing.reps_by_shape", &t->reps_by_shape, true) < 0
               ? -1
               : 0;
}

static int check_probe(const struct jctx *c, const struct aka_result *r, size_t i)
{
    const struct aka_probe *p = &r->probes.v[i];
    char path[64];
    snprintf(path, sizeof(path), "probes[%zu].id", i);
    if (!p->id || !*p->id)
        return jfail(c, path, "expected a non-empty string; got nothing");
    for (size_t k = 0; k < i; k++)
        if (strcmp(r->probes.v[k].id, p->id) == 0)
            return jfail(c, path, "expected a unique id; got \"%s\" again (probes[%zu])", p->id, k);
    snprintf(path, sizeof(path), "probes[%zu].value", i);
    if (check_measure(c, path, p->value, true) < 0)
        return -1;
    snprintf(path, sizeof(path), "probes[%zu].threshold", i);
    return check_measure(c, path, p->threshold, true);
}

static int check_diagnostics(const struct jctx *c, const struct aka_result *r)
{
    for (size_t i = 0; i < r->diagnostics.n; i++) {
        const struct aka_diagnostic *d = &r->diagnostics.v[i];
        if (!d->stage || !*d->stage || !d->message)
            return jfail(c, "actionable_diagnostics",
                         "expected a stage and a message in entry %zu; got none", i);
    }
    return 0;
}

static int result_validate_impl(const char *label, const struct aka_result *r, struct aka_err *err)
{
    struct jctx c = {label, err};
    if (check_counts(&c, r) < 0 || check_measures(&c, r) < 0 || check_timing(&c, &r->timing) < 0 ||
        check_diagnostics(&c, r) < 0)
        return -1;
    if (r->kernel_sha256 && !aka_sha256_is_hex(r->kernel_sha256))
        return jfail(&c, "kernel_sha256", "expected 64 lower-case hex digits; got \"%s\"",
                     r->kernel_sha256);
    for (size_t i = 0; i < r->probes.n; i++)
        if (check_probe(&c, r, i) < 0)
            return -1;
    return 0;
}

/* ---- finding the line ----------------------------------------------------- */

/* Offset of the JSON after "RESULT_JSON=" (optionally "[tag] RESULT_JSON="),
 * or 0 when the line is not a result line. */
static size_t result_prefix(const char *line, size_t len)
{
    static const size_t plen = sizeof(AKA_RESULT_PREFIX) - 1;
    size_t start = 0;
    if (len > 0 && line[0] == '[') {
        size_t i = 1;
        while (i < len && i <= 64 && (isalnum((unsigned char)line[i]) || strchr("_.:-", line[i])))
            i++;
        if (i == 1 || i + 1 >= len || line[i] != ']' || line[i + 1] != ' ')
            return 0;
        start = i + 2;
    }
    if (len - start >= plen && memcmp(line + start, AKA_RESULT_PREFIX, plen) == 0)
        return start + plen;
    return 0;
}

struct found {
    size_t count;
    size_t lines[2];  /* 1-based line numbers of the first two result lines */
    const char *json; /* of the first */
    size_t json_len, json_col;
};

static void find_result_lines(const char *text, size_t len, struct found *f, size_t *nlines)
{
    size_t lineno = 0;
    memset(f, 0, sizeof(*f));
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos, off;
        lineno++;
        if (n > 0 && text[pos + n - 1] == '\r')
            n--;
        if ((off = result_prefix(text + pos, n)) > 0) {
            if (f->count < 2)
                f->lines[f->count] = lineno;
            if (f->count++ == 0)
                f->json = text + pos + off, f->json_len = n - off, f->json_col = off;
        }
        pos += (nl ? (size_t)(nl - (text + pos)) + 1 : len - pos);
    }
    *nlines = lineno;
}

static int result_parse_output_impl(const char *label, const char *text, size_t len,
                                    struct aka_result *out, struct aka_err *err)
{
    struct found f;
    size_t nlines;
    json_error_t je;
    json_t *obj;
    char where[512];
    int rc;

    aka_result_init(out);
    find_result_lines(text, len, &f, &nlines);
    if (f.count == 0)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: expected exactly one line starting with " AKA_RESULT_PREFIX
                           "; got none in %zu lines of output",
                           label, nlines);
    if (f.count > 1)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: expected exactly one line starting with " AKA_RESULT_PREFIX
                           "; got %zu (lines %zu and %zu%s)",
                           label, f.count, f.lines[0], f.lines[1], f.count > 2 ? ", ..." : "");
    obj = json_loadb(f.json, f.json_len, JSON_REJECT_DUPLICATES, &je);
    if (!obj)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s:%zu:%zu: invalid JSON: %s", label, f.lines[0],
                           f.json_col + (size_t)(je.column > 0 ? je.column : 1), je.text);
    snprintf(where, sizeof(where), "%s:%zu", label, f.lines[0]);
    rc = aka_result_from_json(where, obj, out, err);
    json_decref(obj);
    return rc;
}

/* ---- writing -------------------------------------------------------------- */

static json_t *measure_json(double v)
{
    return aka_measured(v) ? json_real(v) : json_null();
}

static json_t *shape_map_json(const struct aka_shape_map *m)
{
    json_t *o = json_object();
    for (size_t i = 0; i < m->n; i++)
        json_object_set_new(o, m->v[i].id, measure_json(m->v[i].value));
    return o;
}

static void set_opt_string(json_t *o, const char *key, const char *s)
{
    if (s)
        json_object_set_new(o, key, json_string(s));
}

static json_t *timing_json(const struct aka_timing *t)
{
    json_t *o = json_object();
    json_object_set_new(o, "method", json_string(t->method ? t->method : ""));
    json_object_set_new(o, "warmup", json_integer(t->warmup));
    json_object_set_new(o, "reps", json_integer(t->reps));
    json_object_set_new(o, "l2_flush", json_boolean(t->l2_flush));
    json_object_set_new(o, "cv_by_shape", shape_map_json(&t->cv_by_shape));
    if (t->time_budget_ms > 0) {
        json_object_set_new(o, "time_budget_ms", json_integer(t->time_budget_ms));
        json_object_set_new(o, "reps_by_shape", shape_map_json(&t->reps_by_shape));
    }
    return o;
}

static json_t *probe_json(const struct aka_probe *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(p->id ? p->id : ""));
    json_object_set_new(o, "status", json_string(probe_status_names[p->status]));
    set_opt_string(o, "distribution", p->distribution);
    set_opt_string(o, "shape_id", p->shape_id);
    set_opt_string(o, "metric", p->metric);
    set_opt_string(o, "detail", p->detail);
    if (p->has_seed)
        json_object_set_new(o, "seed", json_integer(p->seed));
    json_object_set_new(o, "value", measure_json(p->value));
    json_object_set_new(o, "threshold", measure_json(p->threshold));
    return o;
}

static json_t *failures_json(const struct aka_result *r)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r->failures.n; i++)
        json_array_append_new(a, json_string(r->failures.v[i]));
    return a;
}

static json_t *seeds_json(const struct aka_result *r)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r->seeds.n; i++)
        json_array_append_new(a, json_integer(r->seeds.v[i]));
    return a;
}

static json_t *probes_json(const struct aka_result *r)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r->probes.n; i++)
        json_array_append_new(a, probe_json(&r->probes.v[i]));
    return a;
}

static json_t *diagnostics_json(const struct aka_result *r)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r->diagnostics.n; i++) {
        const struct aka_diagnostic *d = &r->diagnostics.v[i];
        json_t *o = json_object();
        set_opt_string(o, "stage", d->stage);
        set_opt_string(o, "shape_id", d->shape_id);
        set_opt_string(o, "message", d->message);
        json_array_append_new(a, o);
    }
    return a;
}

static void set_measures(json_t *o, const struct aka_result *r)
{
    json_object_set_new(o, "latency_us_geomean", measure_json(r->latency_us_geomean));
    json_object_set_new(o, "latency_us_arith_mean", measure_json(r->latency_us_arith_mean));
    json_object_set_new(o, "speedup_vs_ref_geomean", measure_json(r->speedup_vs_ref_geomean));
    json_object_set_new(o, "speedup_vs_ref_mean", measure_json(r->speedup_vs_ref_mean));
    json_object_set_new(o, "performance_score", measure_json(r->performance_score));
    json_object_set_new(o, "max_abs_err", measure_json(r->max_abs_err));
    json_object_set_new(o, "max_rel_err", measure_json(r->max_rel_err));
}

json_t *aka_result_to_json(const struct aka_result *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "all_pass", json_boolean(r->all_pass));
    json_object_set_new(o, "total", json_integer(r->total));
    json_object_set_new(o, "passed", json_integer(r->passed));
    json_object_set_new(o, "failures", failures_json(r));
    json_object_set_new(o, "latency_us_by_shape", shape_map_json(&r->latency_us_by_shape));
    set_measures(o, r);
    set_opt_string(o, "evaluator", r->evaluator);
    set_opt_string(o, "eval_id", r->eval_id);
    set_opt_string(o, "kernel_sha256", r->kernel_sha256);
    json_object_set_new(o, "seeds", seeds_json(r));
    if (r->timing.present)
        json_object_set_new(o, "timing", timing_json(&r->timing));
    json_object_set_new(o, "actionable_diagnostics", diagnostics_json(r));
    if (r->has_probes || r->probes.n)
        json_object_set_new(o, "probes", probes_json(r));
    if (r->extra)
        json_object_update_missing(o, r->extra);
    if (r->masked && !json_object_get(o, "hidden_case_details"))
        json_object_set_new(o, "hidden_case_details",
                            json_string("shape inputs and failure details withheld"));
    return o;
}

void aka_result_format_line(const struct aka_result *r, struct strbuf *out)
{
    json_t *o = aka_result_to_json(r);
    strbuf_addstr(out, AKA_RESULT_PREFIX);
    aka_json_dump_compact(o, out);
    strbuf_addch(out, '\n');
    json_decref(o);
}

int aka_result_print(FILE *f, const struct aka_result *r, struct aka_err *err)
{
    struct strbuf sb = STRBUF_INIT;
    if (aka_result_validate("RESULT_JSON", r, err) < 0)
        return -1;
    aka_result_format_line(r, &sb);
    fputs(sb.buf, f);
    strbuf_release(&sb);
    if (fflush(f) != 0)
        return aka_err_set(err, AKA_EXIT_FAILED, "RESULT_JSON: cannot write the result line");
    return 0;
}

/* ---- public entry points: every error leaves here as one line ---- */

int aka_result_from_json(const char *label, json_t *obj, struct aka_result *out,
                         struct aka_err *err)
{
    return aka_record_one_line(result_from_json_impl(label, obj, out, err), err);
}

int aka_result_validate(const char *label, const struct aka_result *r, struct aka_err *err)
{
    return aka_record_one_line(result_validate_impl(label, r, err), err);
}

int aka_result_parse_output(const char *label, const char *text, size_t len, struct aka_result *out,
                            struct aka_err *err)
{
    return aka_record_one_line(result_parse_output_impl(label, text, len, out, err), err);
}
