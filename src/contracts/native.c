/*
 * native.c — reader of aka's own layout: operator.json ("schema": "aka.native.v1").
 *
 * Owns aka_native_read and aka_native_details_json. The format is ours, so the
 * reader is strict: unknown keys are typos, every shape defines every dim,
 * every tensor size evaluates to a positive integer for every shape, and the
 * reference file named (or implied by the language) exists. The JSON Schema in
 * runtime/schemas/aka.native.v1.schema.json documents the same rules; where the
 * two disagree, this file is right.
 */
#include "base/fs.h"
#include "base/json.h"
#include "contracts/operator.h"

#include <stdlib.h>
#include <string.h>

#define NATIVE_SCHEMA      "aka.native.v1"
#define NATIVE_ABI_HEADER  "aka_native_abi.h"
#define NATIVE_ABI_VERSION 1

/* Element types a native kernel may take: the first ten of enum aka_dtype. */
static const char *const native_dtypes[] = {"float32", "float64", "float16", "bfloat16",
                                            "int8",    "int16",   "int32",   "int64",
                                            "uint8",   "bool",    NULL};
static const char *const languages[] = {"c", "cuda", NULL};

struct nctx {
    struct jctx c;
    struct aka_operator *op;
    struct strbuf path; /* scratch for field paths */
};

static int get_ident(struct nctx *n, json_t *obj, const char *path, const char *key, bool required,
                     const char **out)
{
    if (jget_str(&n->c, obj, path, key, required, out) < 0)
        return -1;
    if (!*out || aka_is_identifier(*out))
        return 0;
    jpath_key(&n->path, path, key);
    return jfail(&n->c, n->path.buf, "expected an identifier ([A-Za-z_][A-Za-z0-9_]*); got \"%s\"",
                 *out);
}

static int read_header(struct nctx *n, json_t *root)
{
    static const char *const abi_keys[] = {"header", "version", NULL};
    const char *schema = NULL, *name = NULL, *header = NULL;
    json_t *abi = NULL;
    int lang = 0;

    if (jget_str(&n->c, root, "", "schema", true, &schema) < 0)
        return -1;
    if (strcmp(schema, NATIVE_SCHEMA) != 0)
        return jfail(&n->c, "schema", "expected \"%s\"; got \"%s\"", NATIVE_SCHEMA, schema);
    if (jget_str(&n->c, root, "", "name", true, &name) < 0)
        return -1;
    if (!*name ||
        strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") !=
            strlen(name) ||
        name[0] == '.')
        return jfail(&n->c, "name",
                     "expected a non-empty name of letters, digits, '_', '-', '.'; "
                     "got \"%s\"",
                     name);
    n->op->name = aka_xstrdup(name);
    if (jget_enum(&n->c, root, "", "language", true, languages, &lang) < 0)
        return -1;
    n->op->native.language = lang;
    if (jget_obj(&n->c, root, "", "abi", true, &abi) < 0 ||
        jcheck_keys(&n->c, abi, "abi", abi_keys) < 0 ||
        jget_str(&n->c, abi, "abi", "header", true, &header) < 0 ||
        jget_int(&n->c, abi, "abi", "version", true, &n->op->native.abi_version) < 0)
        return -1;
    if (strcmp(header, NATIVE_ABI_HEADER) != 0)
        return jfail(&n->c, "abi.header",
                     "expected \"%s\" (the header the harness ships); got \"%s\"",
                     NATIVE_ABI_HEADER, header);
    if (n->op->native.abi_version != NATIVE_ABI_VERSION)
        return jfail(&n->c, "abi.version", "expected %d (the ABI this aka ships); got %lld",
                     NATIVE_ABI_VERSION, n->op->native.abi_version);
    n->op->native.abi_header = aka_xstrdup(header);
    return 0;
}

static int read_dims(struct nctx *n, json_t *root)
{
    json_t *dims = NULL, *v;
    size_t i;
    if (jget_arr(&n->c, root, "", "dims", true, &dims) < 0)
        return -1;
    json_array_foreach(dims, i, v)
    {
        jpath_index(&n->path, "dims", i);
        if (!json_is_string(v) || !aka_is_identifier(json_string_value(v)))
            return jfail(&n->c, n->path.buf, "expected a dim name (an identifier); got %s",
                         json_is_string(v) ? json_string_value(v) : jtype_name(v));
        if (strvec_find(&n->op->native.dims, json_string_value(v)) >= 0)
            return jfail(&n->c, n->path.buf, "expected a unique dim name; got \"%s\" twice",
                         json_string_value(v));
        strvec_push(&n->op->native.dims, json_string_value(v));
    }
    return 0;
}

/* One entry of a tensor's shape: an expression string, or a non-negative integer literal. */
static int read_shape_entry(struct nctx *n, json_t *v, const char *path, struct aka_tensor_spec *t)
{
    char why[160];
    if (json_is_integer(v) && json_integer_value(v) > 0) {
        strvec_pushf(&t->shape, "%lld", (long long)json_integer_value(v));
        return 0;
    }
    if (!json_is_string(v))
        return jfail(&n->c, path, "expected a dim expression or a positive integer; got %s",
                     jtype_name(v));
    if (aka_shape_expr_check(json_string_value(v), &n->op->native.dims, why, sizeof(why)) < 0)
        return jfail(&n->c, path, "expected an expression over dims (%s); got \"%s\": %s",
                     n->op->native.dims.n ? "declared in dims" : "none declared",
                     json_string_value(v), why);
    strvec_push(&t->shape, json_string_value(v));
    return 0;
}

static int read_tensor(struct nctx *n, json_t *o, const char *path, struct aka_tensor_spec *t,
                       int *role)
{
    static const char *const keys[] = {"name", "role", "dtype", "shape", "description", NULL};
    static const char *const roles[] = {"input", "output", NULL};
    const char *name = NULL, *desc = NULL;
    json_t *shape = NULL, *v;
    struct strbuf p = STRBUF_INIT;
    size_t i;
    int rc = -1;

    if (jexpect_obj(&n->c, o, path) < 0 || jcheck_keys(&n->c, o, path, keys) < 0 ||
        get_ident(n, o, path, "name", true, &name) < 0 ||
        jget_enum(&n->c, o, path, "role", true, roles, role) < 0 ||
        jget_enum(&n->c, o, path, "dtype", true, native_dtypes, &t->dtype) < 0 ||
        jget_str(&n->c, o, path, "description", false, &desc) < 0 ||
        jget_arr(&n->c, o, path, "shape", true, &shape) < 0)
        return -1;
    t->name = aka_xstrdup(name);
    t->dtype_name = aka_xstrdup(native_dtypes[t->dtype]);
    t->shape_declared = true;
    if (json_array_size(shape) > 8) {
        jpath_key(&p, path, "shape");
        jfail(&n->c, p.buf, "expected at most 8 dimensions (AKA_MAX_DIMS); got %zu",
              json_array_size(shape));
        goto out;
    }
    json_array_foreach(shape, i, v)
    {
        jpath_key(&p, path, "shape");
        strbuf_addf(&p, "[%zu]", i);
        if (read_shape_entry(n, v, p.buf, t) < 0)
            goto out;
    }
    rc = 0;
out:
    strbuf_release(&p);
    return rc;
}

static bool tensor_name_taken(const struct aka_operator *op, const char *name)
{
    for (size_t i = 0; i < op->inputs.n; i++)
        if (strcmp(op->inputs.v[i].name, name) == 0)
            return true;
    for (size_t i = 0; i < op->outputs.n; i++)
        if (strcmp(op->outputs.v[i].name, name) == 0)
            return true;
    return false;
}

static int read_tensors(struct nctx *n, json_t *root)
{
    json_t *arr = NULL, *v;
    size_t i;
    if (jget_arr(&n->c, root, "", "tensors", true, &arr) < 0)
        return -1;
    json_array_foreach(arr, i, v)
    {
        struct aka_tensor_spec t = {0};
        int role = 0;
        char path[48];
        snprintf(path, sizeof(path), "tensors[%zu]", i);
        if (read_tensor(n, v, path, &t, &role) < 0) {
            aka_tensor_spec_release(&t);
            return -1;
        }
        if (tensor_name_taken(n->op, t.name) || strvec_find(&n->op->native.dims, t.name) >= 0) {
            jfail(&n->c, path,
                  "expected a unique tensor name (not a dim or another tensor); "
                  "got \"%s\" again",
                  t.name);
            aka_tensor_spec_release(&t);
            return -1;
        }
        if (role == 0)
            VEC_PUSH(n->op->inputs, t);
        else
            VEC_PUSH(n->op->outputs, t);
    }
    if (n->op->inputs.n == 0 || n->op->outputs.n == 0)
        return jfail(&n->c, "tensors",
                     "expected at least one input and one output; got %zu "
                     "input(s) and %zu output(s)",
                     n->op->inputs.n, n->op->outputs.n);
    return 0;
}

/* {"atol": x, "rtol": y} with both non-negative. */
static int read_atol_rtol(struct nctx *n, json_t *o, const char *path, struct aka_tolerance *t,
                          const char *const *keys)
{
    if (jexpect_obj(&n->c, o, path) < 0 || jcheck_keys(&n->c, o, path, keys) < 0 ||
        jget_num(&n->c, o, path, "atol", true, &t->atol) < 0 ||
        jget_num(&n->c, o, path, "rtol", true, &t->rtol) < 0)
        return -1;
    if (!(t->atol >= 0) || !(t->rtol >= 0)) {
        jpath_key(&n->path, path, t->atol >= 0 ? "rtol" : "atol");
        return jfail(&n->c, n->path.buf, "expected a non-negative number; got %g",
                     t->atol >= 0 ? t->rtol : t->atol);
    }
    t->matched_ratio = 1.0;
    return 0;
}

static struct aka_tensor_spec *find_output(struct aka_operator *op, const char *name)
{
    for (size_t i = 0; i < op->outputs.n; i++)
        if (strcmp(op->outputs.v[i].name, name) == 0)
            return &op->outputs.v[i];
    return NULL;
}

static int read_tolerance(struct nctx *n, json_t *root)
{
    static const char *const keys[] = {"atol", "rtol", "per_tensor", NULL};
    static const char *const tensor_keys[] = {"atol", "rtol", NULL};
    json_t *tol = NULL, *per = NULL, *v;
    const char *name;

    if (jget_obj(&n->c, root, "", "tolerance", true, &tol) < 0 ||
        read_atol_rtol(n, tol, "tolerance", &n->op->tolerance, keys) < 0 ||
        jget_obj(&n->c, tol, "tolerance", "per_tensor", false, &per) < 0)
        return -1;
    json_object_foreach(per, name, v)
    {
        struct aka_tensor_spec *t = find_output(n->op, name);
        struct strbuf p = STRBUF_INIT;
        int rc = -1;
        jpath_key(&p, "tolerance.per_tensor", name);
        if (!t)
            jfail(&n->c, p.buf, "expected the name of an output tensor; got \"%s\"", name);
        else
            rc = read_atol_rtol(n, v, p.buf, &t->tolerance, tensor_keys);
        strbuf_release(&p);
        if (rc < 0)
            return -1;
        t->has_tolerance = true;
    }
    return 0;
}

static int read_shape_dims(struct nctx *n, json_t *o, const char *path, struct aka_shape *s)
{
    json_t *dims = NULL, *v;
    const char *key;
    if (jget_obj(&n->c, o, path, "dims", true, &dims) < 0)
        return -1;
    json_object_foreach(dims, key, v)
    {
        jpath_key(&n->path, path, "dims");
        strbuf_addf(&n->path, ".%s", key);
        if (strvec_find(&n->op->native.dims, key) < 0)
            return jfail(&n->c, n->path.buf, "expected a dim declared in dims; got \"%s\"", key);
        if (json_is_integer(v) && json_integer_value(v) < 1)
            return jfail(&n->c, n->path.buf, "expected a positive integer; got %lld",
                         (long long)json_integer_value(v));
        if (!json_is_integer(v))
            return jfail(&n->c, n->path.buf, "expected a positive integer; got %s", jtype_name(v));
        aka_dim_push(&s->dims, key, (long long)json_integer_value(v));
    }
    for (size_t d = 0; d < n->op->native.dims.n; d++)
        if (!aka_dim_find(&s->dims, n->op->native.dims.v[d])) {
            jpath_key(&n->path, path, "dims");
            return jfail(&n->c, n->path.buf,
                         "expected a value for every declared dim; got none "
                         "for \"%s\"",
                         n->op->native.dims.v[d]);
        }
    return 0;
}

static int read_shape(struct nctx *n, json_t *o, const char *path, struct aka_shape *s)
{
    static const char *const keys[] = {"id", "dims", "description", NULL};
    const char *id = NULL, *desc = NULL;
    if (jexpect_obj(&n->c, o, path) < 0 || jcheck_keys(&n->c, o, path, keys) < 0 ||
        jget_str(&n->c, o, path, "id", true, &id) < 0 ||
        jget_str(&n->c, o, path, "description", false, &desc) < 0)
        return -1;
    if (!*id) {
        jpath_key(&n->path, path, "id");
        return jfail(&n->c, n->path.buf, "expected a non-empty shape id; got \"\"");
    }
    if (aka_operator_find_shape(n->op, id)) {
        jpath_key(&n->path, path, "id");
        return jfail(&n->c, n->path.buf, "expected a unique shape id; got \"%s\" again", id);
    }
    s->id = aka_xstrdup(id);
    return read_shape_dims(n, o, path, s);
}

static int read_shapes(struct nctx *n, json_t *root)
{
    json_t *arr = NULL, *v;
    size_t i;
    if (jget_arr(&n->c, root, "", "shapes", true, &arr) < 0)
        return -1;
    if (json_array_size(arr) == 0)
        return jfail(&n->c, "shapes", "expected at least one shape; got an empty array");
    json_array_foreach(arr, i, v)
    {
        struct aka_shape s = {0};
        char path[48];
        snprintf(path, sizeof(path), "shapes[%zu]", i);
        int rc = read_shape(n, v, path, &s);
        VEC_PUSH(n->op->shapes, s); /* pushed even on failure so release frees it */
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* Every tensor dimension of every shape must evaluate to a positive size. */
static int check_sizes_one(struct nctx *n, const struct aka_tensor_spec *t, size_t ti,
                           const struct aka_shape *s)
{
    char why[160];
    for (size_t d = 0; d < t->shape.n; d++) {
        long long v = 0;
        int rc = aka_shape_expr_eval(t->shape.v[d], &s->dims, &v, why, sizeof(why));
        if (rc == 0 && v >= 1)
            continue;
        if (rc == 0)
            snprintf(why, sizeof(why), "it is %lld", v);
        strbuf_reset(&n->path);
        strbuf_addf(&n->path, "tensors[%zu].shape[%zu]", ti, d);
        return jfail(&n->c, n->path.buf,
                     "expected a positive size for shape \"%s\"; got \"%s\": %s", s->id,
                     t->shape.v[d], why);
    }
    return 0;
}

/* Index of a tensor in operator.json's "tensors" array (inputs and outputs interleave). */
static size_t tensor_index(json_t *root, const char *name)
{
    json_t *arr = json_object_get(root, "tensors"), *v;
    size_t i;
    json_array_foreach(arr, i, v)
    {
        if (strcmp(json_string_value(json_object_get(v, "name")), name) == 0)
            return i;
    }
    return 0;
}

static int check_sizes(struct nctx *n, json_t *root)
{
    for (size_t s = 0; s < n->op->shapes.n; s++) {
        for (size_t i = 0; i < n->op->inputs.n; i++)
            if (check_sizes_one(n, &n->op->inputs.v[i], tensor_index(root, n->op->inputs.v[i].name),
                                &n->op->shapes.v[s]) < 0)
                return -1;
        for (size_t i = 0; i < n->op->outputs.n; i++)
            if (check_sizes_one(n, &n->op->outputs.v[i],
                                tensor_index(root, n->op->outputs.v[i].name),
                                &n->op->shapes.v[s]) < 0)
                return -1;
    }
    return 0;
}

static int read_param_value(struct nctx *n, json_t *o, const char *path, struct aka_native_param *p)
{
    json_t *v = json_object_get(o, "value");
    jpath_key(&n->path, path, "value");
    if (p->is_float ? !json_is_number(v) : !json_is_integer(v))
        return jfail(&n->c, n->path.buf, "expected %s; got %s",
                     p->is_float ? "a number" : "an integer", jtype_name(v));
    p->fvalue = json_number_value(v);
    p->ivalue = json_is_integer(v) ? (long long)json_integer_value(v) : 0;
    return 0;
}

static int read_param_per_shape(struct nctx *n, json_t *per, const char *path,
                                struct aka_native_param *p)
{
    for (size_t s = 0; s < n->op->shapes.n; s++) {
        json_t *v = json_object_get(per, n->op->shapes.v[s].id);
        jpath_key(&n->path, path, "per_shape");
        strbuf_addf(&n->path, ".%s", n->op->shapes.v[s].id);
        if (!v || (p->is_float ? !json_is_number(v) : !json_is_integer(v)))
            return jfail(&n->c, n->path.buf, "expected %s for every shape; got %s",
                         p->is_float ? "a number" : "an integer", v ? jtype_name(v) : "none");
    }
    if (json_object_size(per) != n->op->shapes.n) {
        jpath_key(&n->path, path, "per_shape");
        return jfail(&n->c, n->path.buf,
                     "expected only ids of shapes; got %zu entries for %zu "
                     "shapes",
                     json_object_size(per), n->op->shapes.n);
    }
    p->per_shape = true;
    p->per_shape_values = json_incref(per);
    return 0;
}

static int read_param(struct nctx *n, json_t *o, const char *path, struct aka_native_param *p)
{
    static const char *const keys[] = {"name", "type", "value", "per_shape", "description", NULL};
    static const char *const types[] = {"int", "float", NULL};
    const char *name = NULL;
    json_t *per = NULL;
    int type = 0;
    if (jexpect_obj(&n->c, o, path) < 0 || jcheck_keys(&n->c, o, path, keys) < 0 ||
        get_ident(n, o, path, "name", true, &name) < 0 ||
        jget_enum(&n->c, o, path, "type", true, types, &type) < 0 ||
        jget_obj(&n->c, o, path, "per_shape", false, &per) < 0)
        return -1;
    p->name = aka_xstrdup(name);
    p->is_float = type == 1;
    if (!per == !json_object_get(o, "value"))
        return jfail(&n->c, path, "expected exactly one of \"value\" and \"per_shape\"; got %s",
                     per ? "both" : "neither");
    return per ? read_param_per_shape(n, per, path, p) : read_param_value(n, o, path, p);
}

static int read_params(struct nctx *n, json_t *root)
{
    json_t *arr = NULL, *v;
    size_t i;
    if (jget_arr(&n->c, root, "", "params", false, &arr) < 0)
        return -1;
    json_array_foreach(arr, i, v)
    {
        struct aka_native_param p = {0};
        char path[48];
        snprintf(path, sizeof(path), "params[%zu]", i);
        int rc = read_param(n, v, path, &p);
        VEC_PUSH(n->op->native.params, p);
        if (rc < 0)
            return -1;
        bool taken =
            strvec_find(&n->op->native.dims, p.name) >= 0 || tensor_name_taken(n->op, p.name);
        for (size_t k = 0; k + 1 < n->op->native.params.n; k++)
            taken = taken || strcmp(n->op->native.params.v[k].name, p.name) == 0;
        if (taken)
            return jfail(&n->c, path,
                         "expected a unique param name (not a dim or another "
                         "param); got \"%s\" again",
                         p.name);
    }
    return 0;
}

static int read_tune(struct nctx *n, json_t *root)
{
    json_t *tune = NULL, *vals, *v;
    const char *knob;
    size_t i;
    if (jget_obj(&n->c, root, "", "tune", false, &tune) < 0)
        return -1;
    if (!tune)
        return 0;
    json_object_foreach(tune, knob, vals)
    {
        jpath_key(&n->path, "tune", knob);
        if (!aka_is_identifier(knob))
            return jfail(&n->c, n->path.buf, "expected a knob name (an identifier); got \"%s\"",
                         knob);
        if (!json_is_array(vals) || json_array_size(vals) == 0)
            return jfail(&n->c, n->path.buf, "expected a non-empty array of values; got %s",
                         json_is_array(vals) ? "an empty array" : jtype_name(vals));
        json_array_foreach(vals, i, v)
        {
            if (!json_is_integer(v) && !json_is_string(v) && !json_is_real(v))
                return jfail(&n->c, n->path.buf, "expected integers, numbers or strings; got %s",
                             jtype_name(v));
            for (size_t k = 0; k < i; k++)
                if (json_equal(v, json_array_get(vals, k)))
                    return jfail(&n->c, n->path.buf,
                                 "expected distinct values; got value %zu "
                                 "twice",
                                 k);
        }
    }
    n->op->native.tune = json_incref(tune);
    return 0;
}

static int read_roofline_expr(struct nctx *n, json_t *o, const char *key, char **out)
{
    const char *expr = NULL;
    char why[160];
    jpath_key(&n->path, "roofline", key);
    if (jget_str(&n->c, o, "roofline", key, true, &expr) < 0)
        return -1;
    if (aka_shape_expr_check(expr, &n->op->native.dims, why, sizeof(why)) < 0)
        return jfail(&n->c, n->path.buf, "expected an expression over dims; got \"%s\": %s", expr,
                     why);
    for (size_t s = 0; s < n->op->shapes.n; s++) {
        long long v;
        if (aka_shape_expr_eval(expr, &n->op->shapes.v[s].dims, &v, why, sizeof(why)) < 0 || v < 0)
            return jfail(&n->c, n->path.buf,
                         "expected a non-negative count for shape \"%s\"; "
                         "got \"%s\": %s",
                         n->op->shapes.v[s].id, expr, v < 0 ? "negative" : why);
    }
    *out = aka_xstrdup(expr);
    return 0;
}

static int read_roofline(struct nctx *n, json_t *root)
{
    static const char *const keys[] = {"flops", "bytes", NULL};
    json_t *r = NULL;
    if (jget_obj(&n->c, root, "", "roofline", false, &r) < 0)
        return -1;
    if (!r)
        return 0;
    if (jcheck_keys(&n->c, r, "roofline", keys) < 0 ||
        read_roofline_expr(n, r, "flops", &n->op->native.roofline_flops) < 0 ||
        read_roofline_expr(n, r, "bytes", &n->op->native.roofline_bytes) < 0)
        return -1;
    return 0;
}

/* A path field that must name an existing file (or directory) inside the op dir. */
static int read_relpath(struct nctx *n, json_t *root, const char *key, const char *dflt,
                        bool want_dir, char **out)
{
    const char *rel = dflt;
    struct strbuf full = STRBUF_INIT;
    if (jget_str(&n->c, root, "", key, false, &rel) < 0)
        return -1;
    if (!rel)
        return 0;
    if (!aka_is_safe_relpath(rel))
        return jfail(&n->c, key,
                     "expected a relative path inside the operator directory; got "
                     "\"%s\"",
                     rel);
    aka_op_path(n->op, rel, &full);
    bool ok = want_dir ? aka_is_dir(full.buf) : aka_is_file(full.buf);
    strbuf_release(&full);
    if (!ok)
        return jfail(&n->c, key,
                     "expected an existing %s \"%s\" in the operator directory; got "
                     "none",
                     want_dir ? "directory" : "regular file", rel);
    *out = aka_xstrdup(rel);
    return 0;
}

static int read_build(struct nctx *n, json_t *root)
{
    const char *entry = "aka_kernel", *ref_entry = "aka_reference";
    const char *dflt_ref = n->op->native.language == AKA_LANG_CUDA ? "reference.cu" : "reference.c";
    json_t *flags = NULL, *v;
    size_t i;
    if (read_relpath(n, root, "reference", dflt_ref, false, &n->op->native.reference_file) < 0 ||
        read_relpath(n, root, "seeds", NULL, true, &n->op->native.seeds_dir) < 0 ||
        get_ident(n, root, "", "entry", false, &entry) < 0 ||
        get_ident(n, root, "", "reference_entry", false, &ref_entry) < 0 ||
        jget_arr(&n->c, root, "", "cflags", false, &flags) < 0)
        return -1;
    if (strcmp(entry, ref_entry) == 0)
        return jfail(&n->c, "entry",
                     "expected a symbol other than the reference's; got \"%s\" "
                     "for both",
                     entry);
    n->op->native.entry = aka_xstrdup(entry);
    n->op->native.reference_entry = aka_xstrdup(ref_entry);
    json_array_foreach(flags, i, v)
    {
        jpath_index(&n->path, "cflags", i);
        if (!json_is_string(v))
            return jfail(&n->c, n->path.buf, "expected a string; got %s", jtype_name(v));
        strvec_push(&n->op->native.cflags, json_string_value(v));
    }
    return 0;
}

/*
 * "timing": "cpu_time" (default) or "wall"; a C operator's choice, CUDA times on the
 * device. cpu_time, the runner's process CPU clock read by the judge while the runner
 * sleeps, leaves out the time a shared host keeps the runner waiting for a CPU: under
 * two compile jobs on the 2-vCPU VM its run-to-run dispersion was 0.44% where wall's was
 * 6.22% (docs/measurements.md, issue 17). It sums every thread of the runner, so a
 * kernel that runs threads reads slower than it is and says "wall" (never flattered).
 */
static int read_timing(struct nctx *n, json_t *root)
{
    static const char *const choices[] = {"cpu_time", "wall", NULL};
    int which = 0;
    if (jget_enum(&n->c, root, "", "timing", false, choices, &which) < 0)
        return -1;
    if (json_object_get(root, "timing") && n->op->native.language == AKA_LANG_CUDA)
        return jfail(&n->c, "timing",
                     "expected no \"timing\" for a CUDA operator (it is timed on the device)");
    n->op->native.wall_timing = which == 1;
    return 0;
}

static int read_all(struct nctx *n, json_t *root)
{
    static const char *const keys[] = {
        "schema",    "name",    "description",     "language", "abi",
        "dims",      "tensors", "params",          "shapes",   "tolerance",
        "reference", "entry",   "reference_entry", "cflags",   "tune",
        "roofline",  "seeds",   "timing",          NULL};
    if (jexpect_obj(&n->c, root, "") < 0 || read_header(n, root) < 0 ||
        jcheck_keys(&n->c, root, "", keys) < 0 || read_dims(n, root) < 0 ||
        read_tensors(n, root) < 0 || read_tolerance(n, root) < 0 || read_shapes(n, root) < 0 ||
        check_sizes(n, root) < 0 || read_params(n, root) < 0 || read_tune(n, root) < 0 ||
        read_roofline(n, root) < 0 || read_build(n, root) < 0 || read_timing(n, root) < 0)
        return -1;
    return 0;
}

int aka_native_read(struct aka_operator *op, struct aka_err *err)
{
    struct strbuf file = STRBUF_INIT;
    struct nctx n = {{NULL, err}, op, STRBUF_INIT};
    json_t *root = NULL;
    int rc = -1;

    aka_op_path(op, "operator.json", &file);
    n.c.file = file.buf;
    if (aka_json_load_file(file.buf, &root, err) == 0)
        rc = read_all(&n, root);
    json_decref(root);
    strbuf_release(&n.path);
    strbuf_release(&file);
    return rc;
}

json_t *aka_native_details_json(const struct aka_operator *op)
{
    const struct aka_native *nv = &op->native;
    json_t *params = json_object();
    for (size_t i = 0; i < nv->params.n; i++) {
        const struct aka_native_param *p = &nv->params.v[i];
        json_t *val = p->per_shape  ? json_deep_copy(p->per_shape_values)
                      : p->is_float ? json_real(p->fvalue)
                                    : json_integer(p->ivalue);
        json_object_set_new(params, p->name, val);
    }
    json_t *o =
        json_pack("{s:s, s:s, s:I, s:o, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o}", "language",
                  languages[nv->language], "abi_header", nv->abi_header, "abi_version",
                  (json_int_t)nv->abi_version, "dims", aka_json_string_array(&nv->dims),
                  "reference", nv->reference_file, "entry", nv->entry, "reference_entry",
                  nv->reference_entry, "cflags", aka_json_string_array(&nv->cflags), "params",
                  params, "tune", nv->tune ? json_deep_copy(nv->tune) : json_null(), "roofline",
                  nv->roofline_flops ? json_pack("{s:s, s:s}", "flops", nv->roofline_flops, "bytes",
                                                 nv->roofline_bytes)
                                     : json_null(),
                  "seeds", nv->seeds_dir ? json_string(nv->seeds_dir) : json_null());
    json_object_set_new(o, "timing",
                        nv->language == AKA_LANG_CUDA ? json_string("cuda_event")
                        : nv->wall_timing             ? json_string("wall")
                                                      : json_string("cpu_time"));
    return o;
}
