/*
 * sol.c — reader of the SOL-ExecBench layout: definition.json, workload.jsonl and
 * the optional solution.json.
 *
 * Owns aka_sol_read and aka_sol_details_json. Field names and semantics follow
 * SOL-ExecBench (reference/anchor-formats.md §1); unknown top-level keys are
 * ignored as upstream does, so dataset files with extra metadata still load.
 * Everything the evaluator would reject later is rejected here, with the file
 * and field, before a campaign commits anything: axis/shape consistency, the
 * run() signature against the inputs, workload axes and input sources, and
 * the solution's entry point.
 */
#include "base/fs.h"
#include "base/json.h"
#include "contracts/operator.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const sol_dtypes[] = {
    "float64",       "float32",     "float16",     "bfloat16",
    "float8_e4m3fn", "float8_e5m2", "float4_e2m1", "float4_e2m1fn_x2",
    "int64",         "int32",       "int16",       "int8",
    "bool",          NULL};
static const char *const axis_types[] = {"const", "var", "expr", NULL};
static const char *const input_types[] = {"random", "scalar", "safetensors", "custom", NULL};

/* SOL's defaults when a workload gives no tolerance (anchor-formats §1.4). */
#define SOL_ATOL          1e-2
#define SOL_RTOL          1e-2
#define SOL_MATCHED_RATIO 0.99

struct sctx {
    struct jctx c;
    struct aka_operator *op;
    struct strbuf path;
};

/* ---- definition.json ---------------------------------------------------------------------- */

static int read_axis(struct sctx *s, const char *name, json_t *o)
{
    struct aka_axis ax = {0};
    const char *expr = NULL, *desc = NULL;
    int type = 0;
    jpath_key(&s->path, "axes", name);
    char *path = aka_xstrdup(s->path.buf);
    int rc = -1;

    if (!aka_is_identifier(name))
        jfail(&s->c, path, "expected an axis name that is an identifier; got \"%s\"", name);
    else if (jexpect_obj(&s->c, o, path) == 0 &&
             jget_enum(&s->c, o, path, "type", true, axis_types, &type) == 0 &&
             jget_str(&s->c, o, path, "description", false, &desc) == 0)
        rc = 0;
    if (rc == 0 && type == AKA_AXIS_CONST) {
        rc = jget_int(&s->c, o, path, "value", true, &ax.value);
        if (rc == 0 && ax.value < 0)
            rc = jfail(&s->c, path, "value: expected an integer >= 0; got %lld", ax.value);
    } else if (rc == 0 && type == AKA_AXIS_EXPR) {
        rc = jget_str(&s->c, o, path, "expression", true, &expr);
        if (rc == 0 && !*expr)
            rc = jfail(&s->c, path, "expression: expected a non-empty expression; got \"\"");
    }
    free(path);
    if (rc < 0)
        return -1;
    ax.name = aka_xstrdup(name);
    ax.kind = type;
    ax.expression = expr ? aka_xstrdup(expr) : NULL;
    VEC_PUSH(s->op->sol.axes, ax);
    return 0;
}

static int read_axes(struct sctx *s, json_t *root)
{
    json_t *axes = NULL, *v;
    const char *name;
    struct strvec names = STRVEC_INIT;
    char why[160];
    int rc = 0;

    if (jget_obj(&s->c, root, "", "axes", true, &axes) < 0)
        return -1;
    json_object_foreach(axes, name, v)
    {
        if (read_axis(s, name, v) < 0) {
            strvec_clear(&names);
            return -1;
        }
        strvec_push(&names, name);
    }
    for (size_t i = 0; i < s->op->sol.axes.n && rc == 0; i++) {
        const struct aka_axis *ax = &s->op->sol.axes.v[i];
        if (ax->kind == AKA_AXIS_EXPR &&
            aka_shape_expr_check(ax->expression, &names, why, sizeof(why)) < 0) {
            jpath_key(&s->path, "axes", ax->name);
            strbuf_addstr(&s->path, ".expression");
            rc = jfail(&s->c, s->path.buf, "expected an expression over axes; got \"%s\": %s",
                       ax->expression, why);
        }
    }
    strvec_clear(&names);
    return rc;
}

static const struct aka_axis *find_axis(const struct aka_operator *op, const char *name)
{
    for (size_t i = 0; i < op->sol.axes.n; i++)
        if (strcmp(op->sol.axes.v[i].name, name) == 0)
            return &op->sol.axes.v[i];
    return NULL;
}

static bool all_digits(const char *s)
{
    return *s && strspn(s, "0123456789") == strlen(s);
}

static int read_spec_shape(struct sctx *s, json_t *shape, const char *path,
                           struct aka_tensor_spec *t)
{
    json_t *v;
    size_t i;
    if (!json_is_array(shape))
        return jfail(&s->c, path, "expected an array of axis names or null; got %s",
                     jtype_name(shape));
    json_array_foreach(shape, i, v)
    {
        strbuf_reset(&s->path);
        strbuf_addf(&s->path, "%s[%zu]", path, i);
        const char *a = json_string_value(v);
        if (!a)
            return jfail(&s->c, s->path.buf, "expected an axis name; got %s", jtype_name(v));
        if (!all_digits(a) && !find_axis(s->op, a))
            return jfail(&s->c, s->path.buf,
                         "expected an axis defined in axes or a digit "
                         "literal; got \"%s\"",
                         a);
        strvec_push(&t->shape, a);
    }
    return 0;
}

static int read_spec(struct sctx *s, const char *list, const char *name, json_t *o,
                     struct aka_tensor_spec *t)
{
    struct strbuf path = STRBUF_INIT, sp = STRBUF_INIT;
    const char *desc = NULL;
    int rc = -1;
    jpath_key(&path, list, name);
    t->name = aka_xstrdup(name);
    if (jexpect_obj(&s->c, o, path.buf) < 0 ||
        jget_enum(&s->c, o, path.buf, "dtype", true, sol_dtypes, &t->dtype) < 0 ||
        jget_str(&s->c, o, path.buf, "description", false, &desc) < 0)
        goto out;
    t->dtype_name = aka_xstrdup(sol_dtypes[t->dtype]);
    t->dtype = aka_dtype_parse(t->dtype_name);
    jpath_key(&sp, path.buf, "shape");
    json_t *shape = json_object_get(o, "shape");
    if (!shape) {
        jfail(&s->c, sp.buf, "required field is missing (null for a scalar)");
        goto out;
    }
    t->shape_declared = true;
    t->is_scalar = json_is_null(shape);
    rc = t->is_scalar ? 0 : read_spec_shape(s, shape, sp.buf, t);
out:
    strbuf_release(&path);
    strbuf_release(&sp);
    return rc;
}

static int read_specs(struct sctx *s, json_t *root, const char *list,
                      struct aka_tensor_specs *specs)
{
    json_t *obj = NULL, *v;
    const char *name;
    if (jget_obj(&s->c, root, "", list, true, &obj) < 0)
        return -1;
    if (json_object_size(obj) == 0 && strcmp(list, "outputs") == 0)
        return jfail(&s->c, list, "expected at least one output; got an empty object");
    json_object_foreach(obj, name, v)
    {
        struct aka_tensor_spec t = {0};
        int rc = read_spec(s, list, name, v, &t);
        VEC_PUSH(*specs, t);
        if (rc < 0)
            return -1;
        jpath_key(&s->path, list, name);
        if (find_axis(s->op, name) && specs == &s->op->inputs)
            return jfail(&s->c, s->path.buf,
                         "expected an input name that is not an axis name; "
                         "got \"%s\"",
                         name);
        for (size_t i = 0; specs == &s->op->outputs && i < s->op->inputs.n; i++)
            if (strcmp(s->op->inputs.v[i].name, name) == 0)
                return jfail(&s->c, s->path.buf,
                             "expected an output name distinct from the "
                             "inputs; got \"%s\"",
                             name);
    }
    return 0;
}

/* Pointer to the line "def NAME(" at column 0 of src, or NULL. */
static const char *find_toplevel_def(const char *src, const char *name)
{
    size_t n = strlen(name);
    for (const char *line = src; line && *line;) {
        if (strncmp(line, "def ", 4) == 0) {
            const char *p = line + 4;
            while (*p == ' ')
                p++;
            if (strncmp(p, name, n) == 0 && (p[n] == '(' || p[n] == ' '))
                return p + n;
        }
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    return NULL;
}

/* Add one parameter (stripped of annotation and default) to names; skip '*' forms and '/'. */
static void add_param(const char *start, size_t len, struct strvec *names)
{
    while (len && isspace((unsigned char)*start))
        start++, len--;
    size_t id = 0;
    while (id < len && (isalnum((unsigned char)start[id]) || start[id] == '_'))
        id++;
    if (id > 0)
        strvec_pushf(names, "%.*s", (int)id, start);
}

/* The positional parameter names of "def run(...)", from just after "run". */
static void def_params(const char *p, struct strvec *names)
{
    int depth = 0;
    while (*p == ' ')
        p++;
    if (*p != '(')
        return;
    const char *arg = ++p;
    for (; *p; p++) {
        if (*p == '(' || *p == '[' || *p == '{')
            depth++;
        else if ((*p == ')' || *p == ']' || *p == '}') && depth-- == 0)
            break;
        else if (*p == ',' && depth == 0) {
            add_param(arg, (size_t)(p - arg), names);
            arg = p + 1;
        }
    }
    add_param(arg, (size_t)(p - arg), names);
}

static void join_names(const struct strvec *sv, struct strbuf *out)
{
    for (size_t i = 0; i < sv->n; i++)
        strbuf_addf(out, "%s%s", i ? ", " : "", sv->v[i]);
}

/* The reference's run() takes exactly the inputs, in order (outputs are not parameters). */
static int check_run_signature(struct sctx *s)
{
    const char *after = find_toplevel_def(s->op->sol.reference, "run");
    struct strvec got = STRVEC_INIT, want = STRVEC_INIT;
    struct strbuf g = STRBUF_INIT, w = STRBUF_INIT;
    int rc = 0;
    if (!after)
        return jfail(&s->c, "reference",
                     "expected Python source with a top-level def run(...); "
                     "got none");
    def_params(after, &got);
    for (size_t i = 0; i < s->op->inputs.n; i++)
        strvec_push(&want, s->op->inputs.v[i].name);
    join_names(&got, &g);
    join_names(&want, &w);
    if (strcmp(g.buf, w.buf) != 0)
        rc = jfail(&s->c, "reference", "expected def run(%s) (the inputs, in order); got run(%s)",
                   w.buf, g.buf);
    strvec_clear(&got);
    strvec_clear(&want);
    strbuf_release(&g);
    strbuf_release(&w);
    return rc;
}

static int read_reference(struct sctx *s, json_t *root)
{
    const char *ref = NULL, *entry = NULL;
    if (jget_str(&s->c, root, "", "reference", true, &ref) < 0)
        return -1;
    if (!*ref)
        return jfail(&s->c, "reference", "expected non-empty Python source; got \"\"");
    s->op->sol.reference = aka_xstrdup(ref);
    if (check_run_signature(s) < 0 ||
        jget_str(&s->c, root, "", "custom_inputs_entrypoint", false, &entry) < 0)
        return -1;
    if (!entry)
        return 0;
    if (!aka_is_identifier(entry) || !find_toplevel_def(ref, entry))
        return jfail(&s->c, "custom_inputs_entrypoint",
                     "expected the name of a top-level "
                     "function in reference; got \"%s\"",
                     entry);
    s->op->sol.custom_inputs_entrypoint = aka_xstrdup(entry);
    return 0;
}

static int read_definition(struct sctx *s, json_t *root)
{
    const char *name = NULL, *op_type = NULL, *desc = NULL, *hf = NULL;
    if (jexpect_obj(&s->c, root, "") < 0 || jget_str(&s->c, root, "", "name", true, &name) < 0)
        return -1;
    if (!*name)
        return jfail(&s->c, "name", "expected a non-empty name; got \"\"");
    s->op->name = aka_xstrdup(name);
    if (jget_str(&s->c, root, "", "op_type", false, &op_type) < 0 ||
        jget_str(&s->c, root, "", "description", false, &desc) < 0 ||
        jget_str(&s->c, root, "", "hf_id", false, &hf) < 0 || read_axes(s, root) < 0 ||
        read_specs(s, root, "inputs", &s->op->inputs) < 0 ||
        read_specs(s, root, "outputs", &s->op->outputs) < 0 || read_reference(s, root) < 0)
        return -1;
    s->op->sol.op_type = op_type ? aka_xstrdup(op_type) : NULL;
    return 0;
}

/* ---- workload.jsonl ----------------------------------------------------------------------- */

static int read_workload_axes(struct sctx *s, json_t *w, struct aka_shape *sh)
{
    json_t *axes = NULL, *v;
    const char *key;
    if (jget_obj(&s->c, w, "", "axes", true, &axes) < 0)
        return -1;
    json_object_foreach(axes, key, v)
    {
        const struct aka_axis *ax = find_axis(s->op, key);
        jpath_key(&s->path, "axes", key);
        if (!ax || ax->kind != AKA_AXIS_VAR)
            return jfail(&s->c, s->path.buf,
                         "expected a var axis of definition.json; got \"%s\" "
                         "(%s)",
                         key, ax ? "not a var axis" : "not an axis");
        if (json_is_integer(v) && json_integer_value(v) < 0)
            return jfail(&s->c, s->path.buf, "expected an integer >= 0; got %lld",
                         (long long)json_integer_value(v));
        if (!json_is_integer(v))
            return jfail(&s->c, s->path.buf, "expected an integer >= 0; got %s", jtype_name(v));
        aka_dim_push(&sh->dims, key, (long long)json_integer_value(v));
    }
    for (size_t i = 0; i < s->op->sol.axes.n; i++) {
        const struct aka_axis *ax = &s->op->sol.axes.v[i];
        if (ax->kind == AKA_AXIS_VAR && !aka_dim_find(&sh->dims, ax->name)) {
            jpath_key(&s->path, "axes", ax->name);
            return jfail(&s->c, s->path.buf, "expected a value for var axis \"%s\"; got none",
                         ax->name);
        }
        if (ax->kind == AKA_AXIS_CONST)
            aka_dim_push(&sh->dims, ax->name, ax->value);
    }
    return 0;
}

/* expr axes, in definition order, each over the axes resolved before it. */
static int resolve_expr_axes(struct sctx *s, struct aka_shape *sh)
{
    char why[160];
    for (size_t i = 0; i < s->op->sol.axes.n; i++) {
        const struct aka_axis *ax = &s->op->sol.axes.v[i];
        long long v;
        if (ax->kind != AKA_AXIS_EXPR)
            continue;
        if (aka_shape_expr_eval(ax->expression, &sh->dims, &v, why, sizeof(why)) < 0 || v < 0) {
            jpath_key(&s->path, "axes", ax->name);
            return jfail(&s->c, s->path.buf,
                         "expected expr axis \"%s\" = %s to give a size >= 0; "
                         "got %s",
                         ax->name, ax->expression, v < 0 ? "a negative value" : why);
        }
        aka_dim_push(&sh->dims, ax->name, v);
    }
    return 0;
}

static int input_index(const struct aka_operator *op, const char *name)
{
    for (size_t i = 0; i < op->inputs.n; i++)
        if (strcmp(op->inputs.v[i].name, name) == 0)
            return (int)i;
    return -1;
}

static int read_input_source(struct sctx *s, const char *path, json_t *o, int *kind)
{
    const char *p = NULL, *key = NULL;
    if (jexpect_obj(&s->c, o, path) < 0 ||
        jget_enum(&s->c, o, path, "type", true, input_types, kind) < 0)
        return -1;
    if (*kind == AKA_INPUT_SCALAR) {
        json_t *v = json_object_get(o, "value");
        if (!json_is_number(v) && !json_is_boolean(v))
            return jfail(&s->c, path, "value: expected a number or a boolean; got %s",
                         v ? jtype_name(v) : "none");
    } else if (*kind == AKA_INPUT_SAFETENSORS) {
        if (jget_str(&s->c, o, path, "path", true, &p) < 0 ||
            jget_str(&s->c, o, path, "tensor_key", true, &key) < 0)
            return -1;
    }
    return 0;
}

static int read_workload_inputs(struct sctx *s, json_t *w, struct aka_shape *sh)
{
    json_t *inputs = NULL, *v;
    const char *key;
    size_t n_custom = 0;
    if (jget_obj(&s->c, w, "", "inputs", true, &inputs) < 0)
        return -1;
    sh->input_kinds = aka_xcalloc(s->op->inputs.n ? s->op->inputs.n : 1, sizeof(*sh->input_kinds));
    json_object_foreach(inputs, key, v)
    {
        int idx = input_index(s->op, key), kind = 0;
        jpath_key(&s->path, "inputs", key);
        char *path = aka_xstrdup(s->path.buf);
        int rc = idx < 0
                     ? jfail(&s->c, path, "expected an input of definition.json; got \"%s\"", key)
                     : read_input_source(s, path, v, &kind);
        free(path);
        if (rc < 0)
            return -1;
        sh->input_kinds[idx] = kind;
        n_custom += kind == AKA_INPUT_CUSTOM;
    }
    if (n_custom && n_custom != s->op->inputs.n)
        return jfail(&s->c, "inputs",
                     "expected every input to be custom once one is; got %zu of "
                     "%zu",
                     n_custom, s->op->inputs.n);
    if (n_custom && !s->op->sol.custom_inputs_entrypoint)
        return jfail(&s->c, "inputs",
                     "expected custom inputs only with a "
                     "custom_inputs_entrypoint in definition.json; got none");
    return 0;
}

static int read_workload_tolerance(struct sctx *s, json_t *w, struct aka_shape *sh)
{
    static const char *const keys[] = {
        "max_atol",      "max_rtol",           "required_matched_ratio",
        "max_error_cap", "allow_negative_inf", NULL};
    struct aka_tolerance *t = &sh->tolerance;
    json_t *o = NULL;
    if (jget_obj(&s->c, w, "", "tolerance", false, &o) < 0)
        return -1;
    if (!o)
        return 0;
    sh->has_tolerance = true;
    *t = s->op->tolerance;
    t->has_error_cap = json_is_number(json_object_get(o, "max_error_cap"));
    if (jcheck_keys(&s->c, o, "tolerance", keys) < 0 ||
        jget_num(&s->c, o, "tolerance", "max_atol", false, &t->atol) < 0 ||
        jget_num(&s->c, o, "tolerance", "max_rtol", false, &t->rtol) < 0 ||
        jget_num(&s->c, o, "tolerance", "required_matched_ratio", false, &t->matched_ratio) < 0 ||
        jget_num(&s->c, o, "tolerance", "max_error_cap", false, &t->error_cap) < 0 ||
        jget_bool(&s->c, o, "tolerance", "allow_negative_inf", false, &t->allow_negative_inf) < 0)
        return -1;
    if (!(t->atol >= 0) || !(t->rtol >= 0) || !(t->error_cap >= 0))
        return jfail(&s->c, "tolerance",
                     "expected max_atol, max_rtol and max_error_cap >= 0; got "
                     "%g, %g, %g",
                     t->atol, t->rtol, t->error_cap);
    if (!(t->matched_ratio >= 0 && t->matched_ratio <= 1))
        return jfail(&s->c, "tolerance.required_matched_ratio",
                     "expected a number in [0, 1]; got "
                     "%g",
                     t->matched_ratio);
    return 0;
}

static int read_workload(struct sctx *s, json_t *w, struct aka_shape *sh)
{
    const char *uuid = NULL;
    if (jget_str(&s->c, w, "", "uuid", true, &uuid) < 0)
        return -1;
    if (!*uuid)
        return jfail(&s->c, "uuid", "expected a non-empty id; got \"\"");
    if (aka_operator_find_shape(s->op, uuid))
        return jfail(&s->c, "uuid", "expected a unique workload id; got \"%s\" again", uuid);
    sh->id = aka_xstrdup(uuid);
    sh->workload = json_incref(w);
    if (read_workload_axes(s, w, sh) < 0 || resolve_expr_axes(s, sh) < 0 ||
        read_workload_inputs(s, w, sh) < 0 || read_workload_tolerance(s, w, sh) < 0)
        return -1;
    return 0;
}

static int workload_line(json_t *obj, size_t lineno, void *data, struct aka_err *err)
{
    struct sctx *s = data;
    struct strbuf label = STRBUF_INIT;
    struct aka_shape sh = {0};
    aka_op_path(s->op, "workload.jsonl", &label);
    strbuf_addf(&label, ":%zu", lineno);
    struct sctx line = {{label.buf, err}, s->op, STRBUF_INIT};
    int rc = read_workload(&line, obj, &sh);
    /* Push before checking rc: a half-read shape is still owned, and freed, by op. */
    VEC_PUSH(s->op->shapes, sh);
    strbuf_release(&line.path);
    strbuf_release(&label);
    return rc;
}

static int read_workloads(struct sctx *s)
{
    struct strbuf file = STRBUF_INIT;
    int rc;
    aka_op_path(s->op, "workload.jsonl", &file);
    rc = aka_jsonl_foreach(file.buf, workload_line, s, s->c.err);
    if (rc == 0 && s->op->shapes.n == 0)
        rc = aka_err_set(s->c.err, AKA_EXIT_USAGE,
                         "%s: expected at least one workload line; got none", file.buf);
    strbuf_release(&file);
    return rc;
}

/* ---- solution.json ------------------------------------------------------------------------ */

static const char *const py_languages[] = {"pytorch", "triton",         "cute_dsl",
                                           "cutile",  "cudnn_frontend", NULL};
static const char *const cpp_languages[] = {"cuda_cpp", "cutlass", "cudnn", "cublas", NULL};
static const char *const hardware[] = {"B200", "LOCAL", NULL};

/* obj.key: an array of strings (each one of choices when given), at least min long. */
static int read_strings(struct sctx *s, json_t *obj, const char *path, const char *key, size_t min,
                        const char *const *choices, struct strvec *out)
{
    json_t *arr = NULL, *v;
    size_t i;
    struct strbuf p = STRBUF_INIT;
    int rc = 0;
    if (jget_arr(&s->c, obj, path, key, min > 0, &arr) < 0)
        return -1;
    jpath_key(&p, path, key);
    if (arr && json_array_size(arr) < min)
        rc = jfail(&s->c, p.buf, "expected at least %zu entr%s; got an empty array", min,
                   min == 1 ? "y" : "ies");
    json_array_foreach(arr, i, v)
    {
        if (rc < 0)
            break;
        const char *str = json_string_value(v);
        if (!str || (choices && jenum_index(str, choices) < 0))
            rc = jfail(&s->c, p.buf, "[%zu]: expected %s; got %s%s%s", i,
                       choices ? "a known value" : "a string", str ? "\"" : "",
                       str ? str : jtype_name(v), str ? "\"" : "");
        else
            strvec_push(out, str);
    }
    strbuf_release(&p);
    return rc;
}

static int read_languages(struct sctx *s, json_t *spec, struct aka_solution *sol)
{
    static const char *const all[] = {"pytorch",  "triton",  "cute_dsl", "cutile", "cudnn_frontend",
                                      "cuda_cpp", "cutlass", "cudnn",    "cublas", NULL};
    size_t n_py = 0, n_cpp = 0;
    if (read_strings(s, spec, "spec", "languages", 1, all, &sol->languages) < 0)
        return -1;
    for (size_t i = 0; i < sol->languages.n; i++) {
        n_py += jenum_index(sol->languages.v[i], py_languages) >= 0;
        n_cpp += jenum_index(sol->languages.v[i], cpp_languages) >= 0;
    }
    if (n_py && n_cpp)
        return jfail(&s->c, "spec.languages",
                     "expected languages of one family (Python: pytorch, "
                     "triton, ...; C++: cuda_cpp, cutlass, ...); got a mix");
    return 0;
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int read_entry_point(struct sctx *s, json_t *spec, struct aka_solution *sol)
{
    static const char *const cpp_ext[] = {".cu", ".cpp", ".cc",  ".cxx", ".c",
                                          ".h",  ".hpp", ".cuh", NULL};
    const char *ep = NULL, *sep;
    if (jget_str(&s->c, spec, "spec", "entry_point", true, &ep) < 0)
        return -1;
    sep = strstr(ep, "::");
    if (!sep || sep == ep || !sep[2] || strstr(sep + 2, "::") || !aka_is_identifier(sep + 2))
        return jfail(&s->c, "spec.entry_point", "expected \"FILE::FUNCTION\"; got \"%s\"", ep);
    sol->entry_file = aka_xstrndup(ep, (size_t)(sep - ep));
    sol->entry_function = aka_xstrdup(sep + 2);
    bool py = jenum_index(sol->languages.v[0], py_languages) >= 0, ok = false;
    for (size_t i = 0; !py && cpp_ext[i]; i++)
        ok = ok || has_suffix(sol->entry_file, cpp_ext[i]);
    if (py ? !has_suffix(sol->entry_file, ".py") : !ok)
        return jfail(&s->c, "spec.entry_point", "expected a %s file for languages %s; got \"%s\"",
                     py ? ".py" : "C++/CUDA source", sol->languages.v[0], sol->entry_file);
    return 0;
}

static int read_compile_options(struct sctx *s, json_t *spec, struct aka_solution *sol)
{
    static const char *const keys[] = {"cflags", "cuda_cflags", "ld_flags", NULL};
    json_t *o = NULL;
    const char *binding = NULL;
    if (jget_str(&s->c, spec, "spec", "binding", false, &binding) < 0)
        return -1;
    if (binding && strcmp(binding, "torch") != 0)
        return jfail(&s->c, "spec.binding", "expected \"torch\" or null; got \"%s\"", binding);
    if (jget_obj(&s->c, spec, "spec", "compile_options", false, &o) < 0)
        return -1;
    if (!o)
        return 0;
    if (jcheck_keys(&s->c, o, "spec.compile_options", keys) < 0 ||
        read_strings(s, o, "spec.compile_options", "cflags", 0, NULL, &sol->cflags) < 0 ||
        read_strings(s, o, "spec.compile_options", "cuda_cflags", 0, NULL, &sol->cuda_cflags) < 0 ||
        read_strings(s, o, "spec.compile_options", "ld_flags", 0, NULL, &sol->ld_flags) < 0)
        return -1;
    return 0;
}

static int read_spec_block(struct sctx *s, json_t *root, struct aka_solution *sol)
{
    json_t *spec = NULL;
    sol->destination_passing = true;
    if (jget_obj(&s->c, root, "", "spec", true, &spec) < 0 || read_languages(s, spec, sol) < 0 ||
        read_strings(s, spec, "spec", "target_hardware", 1, hardware, &sol->target_hardware) < 0 ||
        read_entry_point(s, spec, sol) < 0 ||
        read_strings(s, spec, "spec", "dependencies", 0, NULL, &sol->dependencies) < 0 ||
        jget_bool(&s->c, spec, "spec", "destination_passing_style", false,
                  &sol->destination_passing) < 0 ||
        read_compile_options(s, spec, sol) < 0)
        return -1;
    return 0;
}

/* A source without inline content is read from the op dir, as the SOL CLI does. */
static int read_source_content(struct sctx *s, const char *path, const char *rel,
                               struct aka_solution_source *src)
{
    struct strbuf full = STRBUF_INIT, text = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    aka_op_path(s->op, rel, &full);
    int rc = aka_read_file(full.buf, &text, AKA_READ_LIMIT_DEFAULT, &ignored);
    strbuf_release(&full);
    if (rc < 0) {
        strbuf_release(&text);
        return jfail(&s->c, path,
                     "expected inline content or the file \"%s\" in the operator "
                     "directory; got neither",
                     rel);
    }
    src->content = strbuf_detach(&text, NULL);
    src->content_from_disk = true;
    return 0;
}

static int read_source(struct sctx *s, json_t *o, const char *path, struct aka_solution *sol)
{
    static const char *const keys[] = {"path", "content", NULL};
    struct aka_solution_source src = {0};
    const char *rel = NULL, *content = NULL;
    if (jexpect_obj(&s->c, o, path) < 0 || jcheck_keys(&s->c, o, path, keys) < 0 ||
        jget_str(&s->c, o, path, "path", true, &rel) < 0 ||
        jget_str(&s->c, o, path, "content", false, &content) < 0)
        return -1;
    if (!aka_is_safe_relpath(rel))
        return jfail(&s->c, path, "path: expected a relative path without \"..\"; got \"%s\"", rel);
    for (size_t i = 0; i < sol->sources.n; i++)
        if (strcmp(sol->sources.v[i].path, rel) == 0)
            return jfail(&s->c, path, "path: expected a unique path; got \"%s\" again", rel);
    if (content && *content)
        src.content = aka_xstrdup(content);
    else if (read_source_content(s, path, rel, &src) < 0)
        return -1;
    src.path = aka_xstrdup(rel);
    VEC_PUSH(sol->sources, src);
    return 0;
}

static int read_sources(struct sctx *s, json_t *root, struct aka_solution *sol)
{
    json_t *arr = NULL, *v;
    size_t i;
    bool entry_found = false;
    if (jget_arr(&s->c, root, "", "sources", true, &arr) < 0)
        return -1;
    if (json_array_size(arr) == 0)
        return jfail(&s->c, "sources", "expected at least one source; got an empty array");
    json_array_foreach(arr, i, v)
    {
        char path[48];
        snprintf(path, sizeof(path), "sources[%zu]", i);
        if (read_source(s, v, path, sol) < 0)
            return -1;
        entry_found = entry_found || strcmp(sol->sources.v[i].path, sol->entry_file) == 0;
    }
    if (!entry_found)
        return jfail(&s->c, "spec.entry_point", "expected a file listed in sources; got \"%s\"",
                     sol->entry_file);
    return 0;
}

static int read_solution(struct sctx *s, json_t *root)
{
    struct aka_solution *sol = &s->op->sol.solution;
    const char *name = NULL, *def = NULL, *author = NULL, *desc = NULL;
    if (jexpect_obj(&s->c, root, "") < 0 || jget_str(&s->c, root, "", "name", true, &name) < 0 ||
        jget_str(&s->c, root, "", "definition", true, &def) < 0 ||
        jget_str(&s->c, root, "", "author", true, &author) < 0 ||
        jget_str(&s->c, root, "", "description", false, &desc) < 0)
        return -1;
    if (strcmp(def, s->op->name) != 0)
        return jfail(&s->c, "definition",
                     "expected \"%s\" (the name in definition.json); got "
                     "\"%s\"",
                     s->op->name, def);
    s->op->sol.has_solution = true;
    sol->name = aka_xstrdup(name);
    sol->definition = aka_xstrdup(def);
    sol->author = aka_xstrdup(author);
    if (read_spec_block(s, root, sol) < 0 || read_sources(s, root, sol) < 0)
        return -1;
    return 0;
}

static int load_doc(struct aka_operator *op, const char *name, json_t **doc, struct strbuf *file,
                    struct aka_err *err)
{
    aka_op_path(op, name, file);
    return aka_json_load_file(file->buf, doc, err);
}

int aka_sol_read(struct aka_operator *op, struct aka_err *err)
{
    struct strbuf file = STRBUF_INIT;
    struct sctx s = {{NULL, err}, op, STRBUF_INIT};
    json_t *def = NULL, *sol = NULL;
    int rc = -1;

    aka_tolerance_default(&op->tolerance, SOL_ATOL, SOL_RTOL);
    op->tolerance.matched_ratio = SOL_MATCHED_RATIO;
    if (load_doc(op, "definition.json", &def, &file, err) < 0)
        goto out;
    s.c.file = file.buf;
    if (read_definition(&s, def) < 0 || read_workloads(&s) < 0)
        goto out;
    aka_op_path(op, "solution.json", &file);
    if (!aka_exists(file.buf)) {
        rc = 0;
        goto out;
    }
    if (load_doc(op, "solution.json", &sol, &file, err) < 0)
        goto out;
    s.c.file = file.buf;
    rc = read_solution(&s, sol);
out:
    json_decref(def);
    json_decref(sol);
    strbuf_release(&s.path);
    strbuf_release(&file);
    return rc;
}

static json_t *solution_json(const struct aka_solution *sol)
{
    json_t *paths = json_array();
    for (size_t i = 0; i < sol->sources.n; i++)
        json_array_append_new(paths, json_string(sol->sources.v[i].path));
    return json_pack("{s:s, s:s, s:o, s:o, s:s, s:s, s:b, s:o}", "name", sol->name, "author",
                     sol->author, "languages", aka_json_string_array(&sol->languages),
                     "target_hardware", aka_json_string_array(&sol->target_hardware), "entry_file",
                     sol->entry_file, "entry_function", sol->entry_function, "destination_passing",
                     sol->destination_passing, "sources", paths);
}

json_t *aka_sol_details_json(const struct aka_operator *op)
{
    json_t *axes = json_object();
    for (size_t i = 0; i < op->sol.axes.n; i++) {
        const struct aka_axis *ax = &op->sol.axes.v[i];
        json_t *a = json_pack("{s:s}", "type", axis_types[ax->kind]);
        if (ax->kind == AKA_AXIS_CONST)
            json_object_set_new(a, "value", json_integer(ax->value));
        if (ax->kind == AKA_AXIS_EXPR)
            json_object_set_new(a, "expression", json_string(ax->expression));
        json_object_set_new(axes, ax->name, a);
    }
    json_t *kinds = json_object();
    for (size_t i = 0; i < op->shapes.n; i++) {
        json_t *k = json_object();
        for (size_t j = 0; j < op->inputs.n; j++)
            json_object_set_new(k, op->inputs.v[j].name,
                                json_string(aka_input_kind_name(op->shapes.v[i].input_kinds[j])));
        json_object_set_new(kinds, op->shapes.v[i].id, k);
    }
    return json_pack("{s:o, s:o, s:o, s:o}", "op_type",
                     op->sol.op_type ? json_string(op->sol.op_type) : json_null(), "axes", axes,
                     "input_kinds", kinds, "solution",
                     op->sol.has_solution ? solution_json(&op->sol.solution) : json_null());
}
