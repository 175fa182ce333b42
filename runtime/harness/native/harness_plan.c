/*
 * harness_plan.c — reads plan.json, the fully resolved description of one
 * evaluation that aka writes (src/sandbox/evaluate.c builds it).
 *
 * aka resolves every shape expression, per-shape param and per-tensor tolerance
 * before the job starts, so the harness never evaluates an expression: it only
 * checks that what it got is self-consistent (positive sizes, known dtypes, at
 * most AKA_MAX_DIMS dims, sizes that fit in memory arithmetic). Format:
 *
 *   {"schema": "aka.native.plan.v1", "operator": NAME, "eval_id": ID,
 *    "kernel_sha256": HEX, "seeds": [S...], "warmup": W, "reps": R,
 *    "llc_bytes": N, "rotate_budget_bytes": N, "cpu_timing": "cpu_time"|"wall" (optional: wall),
 *    "time_budget_ms": N (optional, 0: none; a shape's timed runs, per runner),
 *    "timing": "events"|"kernel_span" (optional: events; CUDA: how a call is timed),
 *    "probes": {"rel_l2": {"float32": X, "float64": X, "float16": X, "bfloat16": X},
 *               "cases": [{"name", "scale", "offset", "pattern": "none"|"constant_rows"}]}
 *              (optional: a probe plan of the supervisor's, one case per seed),
 *    "shapes": [{"id": ID, "dims": [{"name", "value"}],
 *                "params": [{"name", "type": "int"|"float", "value"}],
 *                "inputs":  [{"name", "dtype", "shape": [..]}],
 *                "outputs": [{"name", "dtype", "shape": [..], "atol", "rtol"}]}]}
 */
#define _GNU_SOURCE
#include "harness_core.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest tensor the harness accepts (bytes): far above any CPU/GPU shape we
 * evaluate, low enough that numel * size cannot overflow. */
#define HX_MAX_TENSOR_BYTES ((int64_t)1 << 40)

static const char *const dtype_names[] = {"float32", "float64", "float16", "bfloat16", "int8",
                                          "int16",   "int32",   "int64",   "uint8",    "bool"};

const char *hx_dtype_name(int32_t dtype)
{
    return dtype >= 0 && dtype < 10 ? dtype_names[dtype] : "?";
}

static int fail(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return -1;
}

static char *dup_str(json_t *v)
{
    const char *s = json_string_value(v);
    return s ? strdup(s) : NULL;
}

static int read_tensor(json_t *o, hx_tensor *t, int is_output, char *why, size_t n)
{
    json_t *shape = json_object_get(o, "shape");
    const char *dt = json_string_value(json_object_get(o, "dtype"));
    t->name = dup_str(json_object_get(o, "name"));
    t->dtype = -1;
    for (int i = 0; dt && i < 10; i++)
        if (strcmp(dt, dtype_names[i]) == 0)
            t->dtype = i;
    if (!t->name || t->dtype < 0 || !json_is_array(shape) || json_array_size(shape) > AKA_MAX_DIMS)
        return fail(why, n, "tensor %s: expected name, a known dtype and at most %d dims",
                    t->name ? t->name : "?", AKA_MAX_DIMS);
    t->ndim = (int32_t)json_array_size(shape);
    t->numel = 1;
    for (int d = 0; d < t->ndim; d++) {
        json_int_t v = json_integer_value(json_array_get(shape, (size_t)d));
        if (v < 1 || v > HX_MAX_TENSOR_BYTES || t->numel > HX_MAX_TENSOR_BYTES / v)
            return fail(why, n, "tensor %s: dimension %d is not a positive size", t->name, d);
        t->shape[d] = v;
        t->numel *= v;
    }
    if (t->numel > HX_MAX_TENSOR_BYTES / 8)
        return fail(why, n, "tensor %s: too large", t->name);
    t->bytes = (size_t)t->numel * hx_dtype_size(t->dtype);
    if (is_output) {
        t->atol = json_number_value(json_object_get(o, "atol"));
        t->rtol = json_number_value(json_object_get(o, "rtol"));
        if (!(t->atol >= 0) || !(t->rtol >= 0))
            return fail(why, n, "output %s: atol and rtol must be numbers >= 0", t->name);
    }
    return 0;
}

static int read_tensors(json_t *arr, hx_tensor **out, int *count, int is_output, char *why,
                        size_t n)
{
    size_t k = json_array_size(arr);
    if (!json_is_array(arr) || k == 0 || k > 64)
        return fail(why, n, "expected 1 to 64 %s", is_output ? "outputs" : "inputs");
    *out = calloc(k, sizeof(**out));
    *count = (int)k;
    for (size_t i = 0; i < k; i++)
        if (read_tensor(json_array_get(arr, i), &(*out)[i], is_output, why, n) < 0)
            return -1;
    return 0;
}

/* dims and params become aka_value arrays that stay alive for every call. */
static int read_values(json_t *arr, aka_value **out, int32_t *count, int allow_float, char *why,
                       size_t n)
{
    size_t k = json_array_size(arr);
    *count = (int32_t)k;
    *out = calloc(k ? k : 1, sizeof(**out));
    for (size_t i = 0; i < k; i++) {
        json_t *o = json_array_get(arr, i), *v = json_object_get(o, "value");
        const char *type = json_string_value(json_object_get(o, "type"));
        aka_value *val = &(*out)[i];
        val->name = dup_str(json_object_get(o, "name"));
        val->is_float = allow_float && type && strcmp(type, "float") == 0;
        if (!val->name || !json_is_number(v) || (!val->is_float && !json_is_integer(v)))
            return fail(why, n, "value %zu: expected a name and a %s value", i,
                        val->is_float ? "numeric" : "integer");
        val->f = json_number_value(v);
        val->i = json_is_integer(v) ? (int64_t)json_integer_value(v) : (int64_t)val->f;
    }
    return 0;
}

static int read_shape(json_t *o, hx_shape *s, char *why, size_t n)
{
    s->id = dup_str(json_object_get(o, "id"));
    if (!s->id || !*s->id)
        return fail(why, n, "a shape has no id");
    if (read_values(json_object_get(o, "dims"), &s->dims, &s->n_dims, 0, why, n) < 0 ||
        read_values(json_object_get(o, "params"), &s->params, &s->n_params, 1, why, n) < 0 ||
        read_tensors(json_object_get(o, "inputs"), &s->in, &s->n_in, 0, why, n) < 0 ||
        read_tensors(json_object_get(o, "outputs"), &s->out, &s->n_out, 1, why, n) < 0) {
        size_t len = strlen(why);
        snprintf(why + len, n - len, " (shape %s)", s->id);
        return -1;
    }
    return 0;
}

static int read_seeds(json_t *arr, hx_plan *p, char *why, size_t n)
{
    size_t k = json_array_size(arr);
    if (!json_is_array(arr) || k == 0 || k > 1000)
        return fail(why, n, "expected 1 to 1000 seeds");
    p->seeds = calloc(k, sizeof(*p->seeds));
    p->n_seeds = (int)k;
    for (size_t i = 0; i < k; i++) {
        if (!json_is_integer(json_array_get(arr, i)))
            return fail(why, n, "seeds[%zu]: expected an integer", i);
        p->seeds[i] = (int64_t)json_integer_value(json_array_get(arr, i));
    }
    return 0;
}

static int read_probe(json_t *o, hx_probe *pr, size_t i, char *why, size_t n)
{
    const char *pattern = json_string_value(json_object_get(o, "pattern"));
    json_t *scale = json_object_get(o, "scale"), *offset = json_object_get(o, "offset");
    pr->name = dup_str(json_object_get(o, "name"));
    if (!pr->name || !json_is_number(scale) || !json_is_number(offset) || !pattern ||
        (strcmp(pattern, "none") != 0 && strcmp(pattern, "constant_rows") != 0))
        return fail(why, n,
                    "probes.cases[%zu]: expected name, scale, offset and pattern "
                    "(\"none\" or \"constant_rows\")",
                    i);
    pr->scale = json_number_value(scale), pr->offset = json_number_value(offset);
    pr->constant_rows = strcmp(pattern, "constant_rows") == 0;
    return 0;
}

/* The probe plan: as many cases as seeds, and a threshold for every float dtype. */
static int read_probes(json_t *o, hx_plan *p, char *why, size_t n)
{
    static const char *const dtypes[] = {"float32", "float64", "float16", "bfloat16"};
    json_t *cases = json_object_get(o, "cases"), *thr = json_object_get(o, "rel_l2");
    if (!o)
        return 0;
    if (!json_is_array(cases) || json_array_size(cases) != (size_t)p->n_seeds)
        return fail(why, n, "probes.cases: expected one case per seed (%d)", p->n_seeds);
    for (int d = 0; d < 4; d++) {
        json_t *v = json_object_get(thr, dtypes[d]);
        if (!json_is_number(v) || !(json_number_value(v) >= 0))
            return fail(why, n, "probes.rel_l2.%s: expected a number >= 0", dtypes[d]);
        p->rel_l2[d] = json_number_value(v);
    }
    p->probes = calloc((size_t)p->n_seeds, sizeof(*p->probes));
    for (int i = 0; i < p->n_seeds; i++)
        if (!p->probes ||
            read_probe(json_array_get(cases, (size_t)i), &p->probes[i], (size_t)i, why, n) < 0)
            return -1;
    return 0;
}

static int read_header(json_t *root, hx_plan *p, char *why, size_t n)
{
    const char *schema = json_string_value(json_object_get(root, "schema"));
    if (!schema || strcmp(schema, "aka.native.plan.v1") != 0)
        return fail(why, n, "schema: expected \"aka.native.plan.v1\"");
    p->op_name = dup_str(json_object_get(root, "operator"));
    p->eval_id = dup_str(json_object_get(root, "eval_id"));
    p->kernel_sha256 = dup_str(json_object_get(root, "kernel_sha256"));
    p->warmup = (int)json_integer_value(json_object_get(root, "warmup"));
    p->reps = (int)json_integer_value(json_object_get(root, "reps"));
    p->llc_bytes = (int64_t)json_integer_value(json_object_get(root, "llc_bytes"));
    p->rotate_budget = (int64_t)json_integer_value(json_object_get(root, "rotate_budget_bytes"));
    if (!p->op_name || !p->eval_id || !p->kernel_sha256)
        return fail(why, n, "expected operator, eval_id and kernel_sha256 strings");
    const char *timing = json_string_value(json_object_get(root, "cpu_timing"));
    if (json_object_get(root, "cpu_timing") &&
        (!timing || (strcmp(timing, "cpu_time") != 0 && strcmp(timing, "wall") != 0)))
        return fail(why, n, "cpu_timing: expected \"cpu_time\" or \"wall\"");
    p->cpu_time = timing && strcmp(timing, "cpu_time") == 0;
    json_t *budget = json_object_get(root, "time_budget_ms");
    if (budget && (!json_is_integer(budget) || json_integer_value(budget) < 0 ||
                   json_integer_value(budget) > 3600000))
        return fail(why, n, "time_budget_ms: expected an integer in 0..3600000");
    p->time_budget_us = budget ? 1e3 * (double)json_integer_value(budget) : 0;
    const char *how = json_string_value(json_object_get(root, "timing"));
    if (json_object_get(root, "timing") &&
        (!how || (strcmp(how, "events") != 0 && strcmp(how, "kernel_span") != 0)))
        return fail(why, n, "timing: expected \"events\" or \"kernel_span\"");
    p->kernel_span = how && strcmp(how, "kernel_span") == 0;
    if (p->warmup < 0 || p->warmup > 100000 || p->reps < 1 || p->reps > 100000)
        return fail(why, n, "expected warmup in 0..100000 and reps in 1..100000");
    if (read_seeds(json_object_get(root, "seeds"), p, why, n) < 0)
        return -1;
    return read_probes(json_object_get(root, "probes"), p, why, n);
}

int hx_plan_load(const char *path, hx_plan *p, char *why, size_t n)
{
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je), *shapes;
    int rc = -1;
    memset(p, 0, sizeof(*p));
    if (!root)
        return fail(why, n, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    if (read_header(root, p, why, n) < 0)
        goto out;
    shapes = json_object_get(root, "shapes");
    if (!json_is_array(shapes) || json_array_size(shapes) == 0) {
        fail(why, n, "shapes: expected a non-empty array");
        goto out;
    }
    p->n_shapes = (int)json_array_size(shapes);
    p->shapes = calloc((size_t)p->n_shapes, sizeof(*p->shapes));
    for (int i = 0; i < p->n_shapes; i++)
        if (read_shape(json_array_get(shapes, (size_t)i), &p->shapes[i], why, n) < 0)
            goto out;
    rc = 0;
out:
    json_decref(root);
    return rc;
}

static void free_values(aka_value *v, int32_t n)
{
    for (int32_t i = 0; v && i < n; i++)
        free((char *)v[i].name);
    free(v);
}

static void free_tensors(hx_tensor *t, int n)
{
    for (int i = 0; t && i < n; i++)
        free(t[i].name);
    free(t);
}

void hx_plan_free(hx_plan *p)
{
    for (int i = 0; p->shapes && i < p->n_shapes; i++) {
        hx_shape *s = &p->shapes[i];
        free(s->id);
        free_values(s->dims, s->n_dims);
        free_values(s->params, s->n_params);
        free_tensors(s->in, s->n_in);
        free_tensors(s->out, s->n_out);
    }
    free(p->shapes);
    for (int i = 0; p->probes && i < p->n_seeds; i++)
        free(p->probes[i].name);
    free(p->probes);
    free(p->seeds);
    free(p->op_name);
    free(p->eval_id);
    free(p->kernel_sha256);
    memset(p, 0, sizeof(*p));
}
