/*
 * atrex.c — reader of the Atrex-Bench layout: reference.py, input.py, shapes.json,
 * and the optional metadata.json, roofline.json and agent_problem.json.
 *
 * Owns aka_atrex_read and aka_atrex_details_json. The Python files are only
 * checked for the entry points the harness calls (class Model, _make_inputs):
 * they are run by the Python harness inside the sandbox, never here. The JSON
 * files are validated field by field; agent_problem.json follows the
 * atrex.agent_problem.v1 rules (anchor-formats §2.9), including the rule that
 * no object in it may reproduce a private shapes.json case: the public
 * contract must not leak the evaluator's exact shapes.
 */
#include "base/fs.h"
#include "base/json.h"
#include "contracts/operator.h"

#include <stdlib.h>
#include <string.h>

/* run_eval.py's defaults (anchor-formats §2.10). */
#define ATREX_ATOL           1e-2
#define ATREX_RTOL           0.05
#define AGENT_PROBLEM_SCHEMA "atrex.agent_problem.v1"

struct actx {
    struct jctx c;
    struct aka_operator *op;
    struct strbuf file; /* label of the file being read */
    struct strbuf path;
};

/* Open op_dir/name as the current file; *doc is NULL and 0 returned when optional and absent. */
static int open_doc(struct actx *a, const char *name, bool required, json_t **doc)
{
    *doc = NULL;
    aka_op_path(a->op, name, &a->file);
    a->c.file = a->file.buf;
    if (!required && !aka_exists(a->file.buf))
        return 0;
    return aka_json_load_file(a->file.buf, doc, a->c.err);
}

/* A Python file must define `prefix...` at column 0 (class Model(, def _make_inputs(). */
static int check_python(struct actx *a, const char *name, const char *prefix, const char *what)
{
    struct strbuf text = STRBUF_INIT;
    size_t n = strlen(prefix);
    bool found = false;
    aka_op_path(a->op, name, &a->file);
    if (aka_read_file(a->file.buf, &text, AKA_READ_LIMIT_DEFAULT, a->c.err) < 0)
        return -1;
    for (const char *line = text.buf; line && !found;) {
        found = strncmp(line, prefix, n) == 0;
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    strbuf_release(&text);
    if (found)
        return 0;
    return aka_err_set(a->c.err, AKA_EXIT_USAGE, "%s: expected a top-level %s; got none",
                       a->file.buf, what);
}

/* ---- shapes.json -------------------------------------------------------------------------- */

static int read_shape_entry(struct actx *a, const char *sid, json_t *v, struct aka_shape *sh)
{
    static const char *const keys[] = {"init_kwargs", "input_kwargs", "description", NULL};
    json_t *init, *input = NULL;
    const char *desc = NULL;
    jpath_key(&a->path, "", sid);
    char *path = aka_xstrdup(a->path.buf);
    int rc = -1;

    sh->id = aka_xstrdup(sid);
    if (!*sid)
        jfail(&a->c, "\"\"", "expected a non-empty shape id; got \"\"");
    else if (jexpect_obj(&a->c, v, path) == 0 && jcheck_keys(&a->c, v, path, keys) == 0 &&
             jget_obj(&a->c, v, path, "input_kwargs", true, &input) == 0 &&
             jget_str(&a->c, v, path, "description", false, &desc) == 0)
        rc = 0;
    init = json_object_get(v, "init_kwargs");
    if (rc == 0 && (!init || !(json_is_object(init) || json_is_null(init))))
        rc = jfail(&a->c, path, "init_kwargs: expected an object or null; got %s",
                   init ? jtype_name(init) : "none");
    free(path);
    if (rc < 0)
        return -1;
    sh->init_kwargs = json_is_object(init) ? json_incref(init) : NULL;
    sh->input_kwargs = json_incref(input);
    return 0;
}

static int cmp_shape_id(const void *x, const void *y)
{
    return strcmp(((const struct aka_shape *)x)->id, ((const struct aka_shape *)y)->id);
}

static int read_shapes(struct actx *a, json_t *doc)
{
    const char *sid;
    json_t *v;
    if (!json_is_object(doc))
        return jfail(&a->c, "", "expected an object keyed by shape id; got %s", jtype_name(doc));
    if (json_object_size(doc) == 0)
        return jfail(&a->c, "", "expected at least one shape; got an empty object");
    json_object_foreach(doc, sid, v)
    {
        struct aka_shape sh = {0};
        int rc = read_shape_entry(a, sid, v, &sh);
        VEC_PUSH(a->op->shapes, sh);
        if (rc < 0)
            return -1;
    }
    /* The Atrex evaluator iterates ids sorted as strings ("10" before "2"); so do we. */
    qsort(a->op->shapes.v, a->op->shapes.n, sizeof(struct aka_shape), cmp_shape_id);
    return 0;
}

/* ---- metadata.json ------------------------------------------------------------------------ */

/* Atrex metadata spells dtypes short ("bf16"); map to ours, or NONE for "bf16/fp16". */
static int atrex_dtype(const char *s)
{
    static const char *const shorts[][2] = {
        {"bf16", "bfloat16"}, {"fp16", "float16"},           {"fp32", "float32"},
        {"fp64", "float64"},  {"fp8_e4m3", "float8_e4m3fn"}, {"fp8_e5m2", "float8_e5m2"}};
    for (size_t i = 0; i < sizeof(shorts) / sizeof(shorts[0]); i++)
        if (strcmp(s, shorts[i][0]) == 0)
            return aka_dtype_parse(shorts[i][1]);
    return aka_dtype_parse(s);
}

static bool atrex_dtype_ok(const char *s)
{
    char buf[64];
    size_t len = strlen(s);
    if (len == 0 || len >= sizeof(buf))
        return false;
    if (atrex_dtype(s) >= 0)
        return true;
    /* "bf16/fp16": shape-dependent; every alternative must be known. */
    memcpy(buf, s, len + 1);
    for (char *save = NULL, *t = strtok_r(buf, "/", &save); t; t = strtok_r(NULL, "/", &save))
        if (atrex_dtype(t) < 0)
            return false;
    return strchr(s, '/') && s[0] != '/' && s[len - 1] != '/' && !strstr(s, "//");
}

static int read_dtypes(struct actx *a, json_t *meta, const char *key,
                       struct aka_tensor_specs *specs)
{
    json_t *obj = NULL, *v;
    const char *name;
    if (jget_obj(&a->c, meta, "", key, false, &obj) < 0)
        return -1;
    json_object_foreach(obj, name, v)
    {
        jpath_key(&a->path, key, name);
        const char *dt = json_string_value(v);
        if (!dt || !atrex_dtype_ok(dt))
            return jfail(&a->c, a->path.buf,
                         "expected a dtype (bf16, fp16, fp32, fp8_e4m3, "
                         "int32, ..., or alternatives like bf16/fp16); got "
                         "%s%s%s",
                         dt ? "\"" : "", dt ? dt : jtype_name(v), dt ? "\"" : "");
        struct aka_tensor_spec t = {0};
        t.name = aka_xstrdup(name);
        t.dtype_name = aka_xstrdup(dt);
        t.dtype = atrex_dtype(dt);
        VEC_PUSH(*specs, t);
    }
    return 0;
}

/* obj (metadata.shapes or roofline.shapes) may only name shapes of shapes.json. */
static int check_shape_keys(struct actx *a, json_t *obj, const char *path)
{
    const char *sid;
    json_t *v;
    json_object_foreach(obj, sid, v)
    {
        jpath_key(&a->path, path, sid);
        if (!aka_operator_find_shape(a->op, sid))
            return jfail(&a->c, a->path.buf, "expected a shape id of shapes.json; got \"%s\"", sid);
        if (!json_is_object(v))
            return jfail(&a->c, a->path.buf, "expected an object; got %s", jtype_name(v));
    }
    return 0;
}

static int read_metadata(struct actx *a, json_t *meta)
{
    json_t *shapes = NULL;
    const char *id = NULL;
    if (jexpect_obj(&a->c, meta, "") < 0 || jget_str(&a->c, meta, "", "id", false, &id) < 0 ||
        read_dtypes(a, meta, "input_dtypes", &a->op->inputs) < 0 ||
        read_dtypes(a, meta, "output_dtypes", &a->op->outputs) < 0 ||
        jget_obj(&a->c, meta, "", "shapes", false, &shapes) < 0 ||
        (shapes && check_shape_keys(a, shapes, "shapes") < 0))
        return -1;
    a->op->atrex.metadata = json_incref(meta);
    return 0;
}

/* ---- roofline.json ------------------------------------------------------------------------ */

static int nonneg_numbers(struct actx *a, json_t *o, const char *path, const char *key)
{
    json_t *obj = NULL, *v;
    const char *k;
    if (jget_obj(&a->c, o, path, key, false, &obj) < 0)
        return -1;
    json_object_foreach(obj, k, v)
    {
        if (json_is_number(v) && json_number_value(v) >= 0)
            continue;
        jpath_key(&a->path, path, key);
        strbuf_addf(&a->path, ".%s", k);
        return jfail(&a->c, a->path.buf, "expected a number >= 0; got %s", jtype_name(v));
    }
    return 0;
}

static int roofline_shape(struct actx *a, const char *sid, json_t *o)
{
    static const char *const ints[] = {"semantic_Q_read_bytes", "semantic_Q_write_bytes", NULL};
    struct strbuf p = STRBUF_INIT;
    int rc = 0;
    jpath_key(&p, "shapes", sid);
    for (size_t i = 0; ints[i] && rc == 0; i++) {
        long long n = 0;
        rc = jget_int(&a->c, o, p.buf, ints[i], false, &n);
        if (rc == 0 && n < 0)
            rc = jfail(&a->c, p.buf, "%s: expected an integer >= 0; got %lld", ints[i], n);
    }
    if (rc == 0)
        rc = nonneg_numbers(a, o, p.buf, "semantic_W_flops");
    if (rc == 0)
        rc = nonneg_numbers(a, o, p.buf, "SOL_time_ms");
    strbuf_release(&p);
    return rc;
}

static int read_roofline(struct actx *a, json_t *doc)
{
    json_t *shapes = NULL, *v;
    const char *sid;
    if (jexpect_obj(&a->c, doc, "") < 0 || jget_obj(&a->c, doc, "", "shapes", true, &shapes) < 0 ||
        check_shape_keys(a, shapes, "shapes") < 0)
        return -1;
    json_object_foreach(shapes, sid, v)
    {
        if (roofline_shape(a, sid, v) < 0)
            return -1;
    }
    a->op->atrex.roofline = json_incref(doc);
    return 0;
}

/* ---- agent_problem.json ------------------------------------------------------------------- */

/* The canonical {init_kwargs, input_kwargs} form a private case is compared in. */
static json_t *case_key(json_t *init, json_t *input)
{
    return json_pack("{s:O, s:O}", "init_kwargs", init ? init : json_null(), "input_kwargs",
                     input ? input : json_null());
}

/* Id of the private shape equal to v (an object), or NULL. */
static const char *private_match(const struct aka_operator *op, json_t *v)
{
    json_t *probe = NULL;
    const char *hit = NULL;
    if (json_object_get(v, "input_kwargs"))
        probe = case_key(json_object_get(v, "init_kwargs"), json_object_get(v, "input_kwargs"));
    for (size_t i = 0; i < op->shapes.n && !hit; i++) {
        const struct aka_shape *sh = &op->shapes.v[i];
        json_t *key = case_key(sh->init_kwargs, sh->input_kwargs);
        if (json_equal(v, key) || (probe && json_equal(probe, key)))
            hit = sh->id;
        json_decref(key);
    }
    json_decref(probe);
    return hit;
}

/* Walk every nested object; none may equal (canonically) a private case. */
static int no_leak(struct actx *a, json_t *v, const char *path, int depth)
{
    struct strbuf p = STRBUF_INIT;
    const char *key, *hit;
    json_t *child;
    size_t i;
    int rc = 0;
    if (depth > 64)
        return jfail(&a->c, path, "expected nesting at most 64 deep; got deeper");
    if (json_is_object(v) && (hit = private_match(a->op, v)))
        return jfail(&a->c, path, "expected no exact private case; got shapes.json case \"%s\"",
                     hit);
    if (json_is_object(v)) {
        json_object_foreach(v, key, child)
        {
            jpath_key(&p, path, key);
            if (rc == 0)
                rc = no_leak(a, child, p.buf, depth + 1);
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, child)
        {
            jpath_index(&p, path, i);
            if (rc == 0)
                rc = no_leak(a, child, p.buf, depth + 1);
        }
    }
    strbuf_release(&p);
    return rc;
}

static int check_evaluation(struct actx *a, json_t *doc)
{
    json_t *ev = NULL, *dev;
    const char *exact = NULL;
    if (jget_obj(&a->c, doc, "", "evaluation", true, &ev) < 0 ||
        jget_str(&a->c, ev, "evaluation", "exact_cases", true, &exact) < 0)
        return -1;
    if (strcmp(exact, "private") != 0)
        return jfail(&a->c, "evaluation.exact_cases", "expected \"private\"; got \"%s\"", exact);
    dev = json_object_get(ev, "development_cases_are_evaluation_cases");
    if (!json_is_false(dev))
        return jfail(&a->c, "evaluation.development_cases_are_evaluation_cases",
                     "expected false; got %s", dev ? jtype_name(dev) : "none");
    return 0;
}

static int check_string_list(struct actx *a, json_t *doc, const char *key, bool objects)
{
    json_t *arr = NULL, *v;
    size_t i;
    if (jget_arr(&a->c, doc, "", key, true, &arr) < 0)
        return -1;
    json_array_foreach(arr, i, v)
    {
        bool ok = objects ? json_is_object(v) : (json_is_string(v) && json_string_length(v) > 0);
        if (ok)
            continue;
        jpath_index(&a->path, key, i);
        return jfail(&a->c, a->path.buf, "expected %s; got %s",
                     objects ? "an object" : "a non-empty string",
                     json_is_string(v) ? "an empty string" : jtype_name(v));
    }
    return 0;
}

static int check_dev_cases(struct actx *a, json_t *doc)
{
    static const char *const keys[] = {"name", "init_kwargs", "input_kwargs", NULL};
    json_t *arr = NULL, *v, *input = NULL, *init;
    const char *name = NULL;
    size_t i;
    if (jget_arr(&a->c, doc, "", "development_cases", false, &arr) < 0)
        return -1;
    json_array_foreach(arr, i, v)
    {
        jpath_index(&a->path, "development_cases", i);
        char *path = aka_xstrdup(a->path.buf);
        int rc = jexpect_obj(&a->c, v, path) < 0 || jcheck_keys(&a->c, v, path, keys) < 0 ||
                 jget_str(&a->c, v, path, "name", false, &name) < 0 ||
                 jget_obj(&a->c, v, path, "input_kwargs", true, &input) < 0;
        init = json_object_get(v, "init_kwargs");
        if (!rc && init && !json_is_object(init) && !json_is_null(init))
            rc = jfail(&a->c, path, "init_kwargs: expected an object or null; got %s",
                       jtype_name(init)) < 0;
        free(path);
        if (rc)
            return -1;
    }
    return 0;
}

static int read_agent_problem(struct actx *a, json_t *doc)
{
    static const char *const keys[] = {"schema_version",
                                       "objective",
                                       "evaluation",
                                       "operator_contract",
                                       "workload_profile",
                                       "distribution_profile",
                                       "shape_domain",
                                       "invariants",
                                       "coverage_regimes",
                                       "development_cases",
                                       NULL};
    const char *schema = NULL, *objective = NULL;
    json_t *o = NULL;
    if (jexpect_obj(&a->c, doc, "") < 0 ||
        jget_str(&a->c, doc, "", "schema_version", true, &schema) < 0)
        return -1;
    if (strcmp(schema, AGENT_PROBLEM_SCHEMA) != 0)
        return jfail(&a->c, "schema_version", "expected \"%s\"; got \"%s\"", AGENT_PROBLEM_SCHEMA,
                     schema);
    if (jcheck_keys(&a->c, doc, "", keys) < 0 ||
        jget_str(&a->c, doc, "", "objective", true, &objective) < 0)
        return -1;
    if (!*objective)
        return jfail(&a->c, "objective", "expected a non-empty string; got \"\"");
    if (check_evaluation(a, doc) < 0 ||
        jget_obj(&a->c, doc, "", "operator_contract", true, &o) < 0 ||
        jget_obj(&a->c, doc, "", "workload_profile", false, &o) < 0 ||
        jget_obj(&a->c, doc, "", "distribution_profile", false, &o) < 0 ||
        jget_obj(&a->c, doc, "", "shape_domain", true, &o) < 0 ||
        check_string_list(a, doc, "invariants", false) < 0 ||
        check_string_list(a, doc, "coverage_regimes", true) < 0 || check_dev_cases(a, doc) < 0 ||
        no_leak(a, doc, "", 0) < 0)
        return -1;
    a->op->atrex.agent_problem = json_incref(doc);
    return 0;
}

/* ---- the layout --------------------------------------------------------------------------- */

static void set_name(struct aka_operator *op)
{
    struct strbuf real = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    const char *base;
    /* The Atrex evaluator names a kernel after its directory; "." and "x/" need realpath. */
    if (aka_realpath(op->dir, &real, &ignored) < 0)
        strbuf_addstr(&real, op->dir);
    base = aka_basename(real.buf);
    op->name = aka_xstrdup(*base ? base : "operator");
    strbuf_release(&real);
}

typedef int (*doc_reader)(struct actx *a, json_t *doc);

static int read_optional(struct actx *a, const char *name, bool required, doc_reader fn)
{
    json_t *doc = NULL;
    int rc = open_doc(a, name, required, &doc);
    if (rc == 0 && doc)
        rc = fn(a, doc);
    json_decref(doc);
    return rc;
}

int aka_atrex_read(struct aka_operator *op, struct aka_err *err)
{
    struct actx a = {{NULL, err}, op, STRBUF_INIT, STRBUF_INIT};
    int rc = -1;

    aka_tolerance_default(&op->tolerance, ATREX_ATOL, ATREX_RTOL);
    set_name(op);
    if (check_python(&a, "reference.py", "class Model(", "class Model(nn.Module)") == 0 &&
        check_python(&a, "input.py", "def _make_inputs(", "def _make_inputs(**input_kwargs)") ==
            0 &&
        read_optional(&a, "shapes.json", true, read_shapes) == 0 &&
        read_optional(&a, "metadata.json", false, read_metadata) == 0 &&
        read_optional(&a, "roofline.json", false, read_roofline) == 0 &&
        read_optional(&a, "agent_problem.json", false, read_agent_problem) == 0)
        rc = 0;
    strbuf_release(&a.file);
    strbuf_release(&a.path);
    return rc;
}

json_t *aka_atrex_details_json(const struct aka_operator *op)
{
    const struct aka_atrex *x = &op->atrex;
    json_t *id = x->metadata ? json_object_get(x->metadata, "id") : NULL;
    return json_pack("{s:o, s:b, s:b, s:b, s:b}", "metadata_id",
                     json_is_string(id) ? json_incref(id) : json_null(), "has_metadata",
                     x->metadata != NULL, "has_roofline", x->roofline != NULL, "has_agent_problem",
                     x->agent_problem != NULL, "generalized_problem", x->agent_problem != NULL);
}

/* ---- production_performance ------------------------------------------------------------- */

/* metadata.shapes.<sid>.production_performance, or NULL. */
static json_t *production_entry(const struct aka_operator *op, const char *sid)
{
    json_t *shapes = op->atrex.metadata ? json_object_get(op->atrex.metadata, "shapes") : NULL;
    json_t *shape = shapes ? json_object_get(shapes, sid) : NULL;
    return shape ? json_object_get(shape, "production_performance") : NULL;
}

bool aka_operator_has_production(const struct aka_operator *op)
{
    for (size_t i = 0; i < op->shapes.n; i++)
        if (production_entry(op, op->shapes.v[i].id))
            return true;
    return false;
}

int aka_operator_production_us(const struct aka_operator *op, const char *sid, double *us,
                               char *why, size_t n)
{
    json_t *pp = production_entry(op, sid), *entry, *v;
    const char *sku, *found = NULL;
    if (!pp)
        return 0;
    if (!json_is_object(pp)) {
        snprintf(why, n,
                 "metadata.json: shapes.%s.production_performance: expected an object "
                 "{SKU: {framework, performance_us}}; got %s",
                 sid, jtype_name(pp));
        return -1;
    }
    json_object_foreach(pp, sku, entry)
    {
        if (!json_is_object(entry) || !(v = json_object_get(entry, "performance_us")))
            continue;
        if (!json_is_number(v) || json_number_value(v) <= 0 || found) {
            snprintf(why, n,
                     "metadata.json: shapes.%s.production_performance.%s.performance_us: %s", sid,
                     sku,
                     found ? "a second SKU with a latency (the reference must be unambiguous)"
                           : "expected a positive number of microseconds");
            return -1;
        }
        found = sku;
        *us = json_number_value(v);
    }
    if (!found) {
        snprintf(why, n,
                 "metadata.json: shapes.%s.production_performance: no entry has performance_us",
                 sid);
        return -1;
    }
    return 1;
}
