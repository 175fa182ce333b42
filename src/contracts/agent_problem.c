/*
 * agent_problem.c — the public problem of a native operator in generalized production
 * (docs/layouts.md, "agent_problem.json of a native operator"; docs/production.md,
 * "Generalized production").
 *
 * A generalized campaign keeps the evaluator's exact shapes private: the agent works on
 * a *public operator* derived here from <op_dir>/agent_problem.json, which is
 * operator.json with its shapes replaced by the problem's development cases (and each
 * per-shape parameter by the development case's value). The reader is strict, as
 * native.c is: unknown keys are typos, every development case defines every dim and
 * every per-shape parameter, every tensor size is a positive integer, and no development
 * case may equal a private shape (its dims all equal): the public problem must not leak
 * an evaluator case. Errors are code 2, "DIR/agent_problem.json: FIELD: expected ...".
 */
#include "base/fs.h"
#include "base/json.h"
#include "contracts/operator.h"

#include <stdlib.h>
#include <string.h>

struct pctx {
    struct jctx c;
    const struct aka_operator *op;
    struct strbuf path;
};

static int check_strings(struct pctx *p, json_t *doc, const char *key)
{
    json_t *arr = NULL, *v;
    size_t i;
    if (jget_arr(&p->c, doc, "", key, false, &arr) < 0)
        return -1;
    json_array_foreach(arr, i, v)
    {
        if (json_is_string(v) && json_string_length(v) > 0)
            continue;
        jpath_index(&p->path, key, i);
        return jfail(&p->c, p->path.buf, "expected a non-empty string; got %s",
                     json_is_string(v) ? "an empty string" : jtype_name(v));
    }
    return 0;
}

/* dims: exactly the operator's dims, each an integer >= 1. */
static int read_dims(struct pctx *p, json_t *dims, const char *path, struct aka_dim_values *out)
{
    const char *key;
    json_t *v;
    json_object_foreach(dims, key, v)
    {
        bool known = false;
        for (size_t i = 0; i < p->op->native.dims.n && !known; i++)
            known = strcmp(p->op->native.dims.v[i], key) == 0;
        jpath_key(&p->path, path, key);
        if (!known)
            return jfail(&p->c, p->path.buf, "expected a dim of operator.json; got an unknown one");
        if (!json_is_integer(v) || json_integer_value(v) < 1)
            return jfail(&p->c, p->path.buf, "expected an integer >= 1; got %s",
                         json_is_integer(v) ? "a smaller one" : jtype_name(v));
        aka_dim_push(out, key, (long long)json_integer_value(v));
    }
    for (size_t i = 0; i < p->op->native.dims.n; i++)
        if (!aka_dim_find(out, p->op->native.dims.v[i]))
            return jfail(&p->c, path, "expected every dim of operator.json; \"%s\" is missing",
                         p->op->native.dims.v[i]);
    return 0;
}

/* Every tensor size of every tensor must be a positive integer at these dims. */
static int check_sizes(struct pctx *p, const struct aka_dim_values *dims, const char *path)
{
    const struct aka_tensor_specs *sets[] = {&p->op->inputs, &p->op->outputs};
    char why[128];
    for (size_t s = 0; s < 2; s++)
        for (size_t t = 0; t < sets[s]->n; t++)
            for (size_t d = 0; d < sets[s]->v[t].shape.n; d++) {
                long long v = 0;
                if (aka_shape_expr_eval(sets[s]->v[t].shape.v[d], dims, &v, why, sizeof(why)) < 0)
                    return jfail(&p->c, path, "expected sizes that evaluate; tensor %s: %s",
                                 sets[s]->v[t].name, why);
                if (v < 1)
                    return jfail(&p->c, path, "expected every size >= 1; tensor %s has %lld",
                                 sets[s]->v[t].name, v);
            }
    return 0;
}

/* The private shape whose dims all equal these, or NULL. */
static const char *private_twin(const struct aka_operator *op, const struct aka_dim_values *dims)
{
    for (size_t i = 0; i < op->shapes.n; i++) {
        const struct aka_dim_values *pd = &op->shapes.v[i].dims;
        bool same = pd->n == dims->n;
        for (size_t d = 0; same && d < pd->n; d++) {
            const struct aka_dim_value *x = aka_dim_find(dims, pd->v[d].name);
            same = x && x->value == pd->v[d].value;
        }
        if (same)
            return op->shapes.v[i].id;
    }
    return NULL;
}

/* params: exactly the operator's per-shape params, numbers (integers for int params). */
static int read_params(struct pctx *p, json_t *params, const char *path)
{
    const char *key;
    json_t *v;
    json_object_foreach(params, key, v)
    {
        const struct aka_native_param *par = NULL;
        for (size_t i = 0; i < p->op->native.params.n && !par; i++)
            if (strcmp(p->op->native.params.v[i].name, key) == 0)
                par = &p->op->native.params.v[i];
        jpath_key(&p->path, path, key);
        if (!par || !par->per_shape)
            return jfail(&p->c, p->path.buf, "expected a per-shape param of operator.json");
        if (par->is_float ? !json_is_number(v) : !json_is_integer(v))
            return jfail(&p->c, p->path.buf, "expected %s; got %s",
                         par->is_float ? "a number" : "an integer", jtype_name(v));
    }
    for (size_t i = 0; i < p->op->native.params.n; i++)
        if (p->op->native.params.v[i].per_shape &&
            !json_object_get(params, p->op->native.params.v[i].name))
            return jfail(&p->c, path,
                         "expected a value for every per-shape param; \"%s\" is missing",
                         p->op->native.params.v[i].name);
    return 0;
}

static int read_case(struct pctx *p, json_t *c, const char *path, json_t *seen)
{
    static const char *const keys[] = {"name", "dims", "params", "description", NULL};
    struct aka_dim_values dims = {0};
    json_t *d = NULL, *params = NULL;
    const char *name = NULL, *twin;
    char *sub;
    int rc = jexpect_obj(&p->c, c, path) < 0 || jcheck_keys(&p->c, c, path, keys) < 0 ||
                     jget_str(&p->c, c, path, "name", true, &name) < 0 ||
                     jget_obj(&p->c, c, path, "dims", true, &d) < 0 ||
                     jget_obj(&p->c, c, path, "params", false, &params) < 0
                 ? -1
                 : 0;
    if (rc == 0 && !aka_is_identifier(name))
        rc = jfail(&p->c, path, "name: expected an identifier; got \"%s\"", name);
    else if (rc == 0 && json_object_get(seen, name))
        rc = jfail(&p->c, path, "name: expected a unique name; got \"%s\" twice", name);
    jpath_key(&p->path, path, "dims");
    sub = aka_xstrdup(p->path.buf);
    if (rc == 0)
        rc = read_dims(p, d, sub, &dims);
    if (rc == 0)
        rc = check_sizes(p, &dims, sub);
    if (rc == 0 && (twin = private_twin(p->op, &dims)))
        rc =
            jfail(&p->c, sub, "expected no exact private case; got the dims of shape \"%s\"", twin);
    free(sub);
    jpath_key(&p->path, path, "params");
    sub = aka_xstrdup(p->path.buf);
    json_t *none = json_object();
    if (rc == 0)
        rc = read_params(p, params ? params : none, sub);
    json_decref(none);
    free(sub);
    for (size_t i = 0; i < dims.n; i++)
        free(dims.v[i].name);
    free(dims.v);
    if (rc == 0)
        json_object_set_new(seen, name, json_true());
    return rc;
}

static int read_cases(struct pctx *p, json_t *doc)
{
    json_t *arr = NULL, *v, *seen = json_object();
    size_t i;
    int rc = jget_arr(&p->c, doc, "", "development_cases", true, &arr);
    if (rc == 0 && json_array_size(arr) == 0)
        rc = jfail(&p->c, "development_cases", "expected at least one case; got none");
    json_array_foreach(arr, i, v)
    {
        if (rc < 0)
            break;
        jpath_index(&p->path, "development_cases", i);
        char *path = aka_xstrdup(p->path.buf);
        rc = read_case(p, v, path, seen);
        free(path);
    }
    json_decref(seen);
    return rc;
}

static int read_problem(struct pctx *p, json_t *doc)
{
    static const char *const keys[] = {"schema_version", "objective",         "invariants",
                                       "shape_domain",   "development_cases", NULL};
    const char *schema = NULL, *objective = NULL;
    json_t *o = NULL;
    if (jexpect_obj(&p->c, doc, "") < 0 ||
        jget_str(&p->c, doc, "", "schema_version", true, &schema) < 0)
        return -1;
    if (strcmp(schema, AKA_AGENT_PROBLEM_SCHEMA) != 0)
        return jfail(&p->c, "schema_version", "expected \"%s\"; got \"%s\"",
                     AKA_AGENT_PROBLEM_SCHEMA, schema);
    if (jcheck_keys(&p->c, doc, "", keys) < 0 ||
        jget_str(&p->c, doc, "", "objective", true, &objective) < 0)
        return -1;
    if (!*objective)
        return jfail(&p->c, "objective", "expected a non-empty string; got \"\"");
    if (check_strings(p, doc, "invariants") < 0 ||
        jget_obj(&p->c, doc, "", "shape_domain", false, &o) < 0)
        return -1;
    return read_cases(p, doc);
}

/* operator.json with the development cases as its shapes. */
static json_t *derive(const struct aka_operator *op, json_t *opdoc, json_t *problem)
{
    json_t *pub = json_deep_copy(opdoc), *shapes = json_array(), *c, *par;
    size_t i;
    json_array_foreach(json_object_get(problem, "development_cases"), i, c)
        json_array_append_new(shapes, json_pack("{s:O, s:O}", "id", json_object_get(c, "name"),
                                                "dims", json_object_get(c, "dims")));
    json_object_set_new(pub, "shapes", shapes);
    json_array_foreach(json_object_get(pub, "params"), i, par)
    {
        const char *name = json_string_value(json_object_get(par, "name"));
        json_t *per = json_object_get(par, "per_shape"), *c2;
        size_t k;
        if (!per || !name)
            continue;
        json_object_clear(per);
        json_array_foreach(json_object_get(problem, "development_cases"), k, c2)
            json_object_set(per, json_string_value(json_object_get(c2, "name")),
                            json_object_get(json_object_get(c2, "params"), name));
    }
    (void)op;
    return pub;
}

int aka_agent_problem_public(const struct aka_operator *op, json_t **public_operator,
                             struct aka_err *err)
{
    struct strbuf file = STRBUF_INIT, opfile = STRBUF_INIT;
    json_t *doc = NULL, *opdoc = NULL;
    struct pctx p = {{NULL, err}, op, STRBUF_INIT};
    int rc;
    *public_operator = NULL;
    aka_op_path(op, AKA_AGENT_PROBLEM_FILE, &file);
    aka_op_path(op, "operator.json", &opfile);
    p.c.file = file.buf;
    if (op->layout != AKA_LAYOUT_NATIVE)
        rc = aka_err_set(err, AKA_EXIT_USAGE,
                         "%s: a generalized campaign needs the native layout; got %s "
                         "(generalized production of Atrex-Bench and SOL operators is not built)",
                         op->dir, aka_layout_name(op->layout));
    else if (!aka_is_plain_file(file.buf))
        rc = aka_err_set(err, AKA_EXIT_USAGE,
                         "%s: expected the public problem of a generalized campaign (schema %s); "
                         "got no such file (deriving one in a problem-authoring session is not "
                         "built: write it by hand, docs/layouts.md)",
                         file.buf, AKA_AGENT_PROBLEM_SCHEMA);
    else
        rc = aka_json_load_file(file.buf, &doc, err);
    if (rc == 0)
        rc = read_problem(&p, doc);
    if (rc == 0)
        rc = aka_json_load_file(opfile.buf, &opdoc, err);
    if (rc == 0)
        *public_operator = derive(op, opdoc, doc);
    json_decref(doc);
    json_decref(opdoc);
    strbuf_release(&p.path);
    strbuf_release(&file);
    strbuf_release(&opfile);
    return rc;
}
