/*
 * layout.c — operator layout detection, the one loader, release and JSON view.
 *
 * Owns aka_layout_detect and aka_operator_load/release/to_json: it calls the three
 * readers (atrex.c, sol.c, native.c), which share only spec.c's helpers, so no
 * reader depends on this file. The detection rules are documented for operator
 * authors in docs/layouts.md; keep the two in step.
 */
#include "base/fs.h"
#include "base/json.h"
#include "contracts/operator.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- detection ----------------------------------------------------------------------------- */

/*
 * What makes a directory look like each layout. A file counts as present when
 * anything exists under its name (a directory named shapes.json still claims
 * the layout, and its reader then says it is not a regular file): detection
 * must not silently pick another layout because one file is odd.
 */
struct layout_rule {
    enum aka_layout layout;
    const char *files[4];
};

static const struct layout_rule rules[] = {
    {AKA_LAYOUT_SOL, {"definition.json", "workload.jsonl", NULL}},
    {AKA_LAYOUT_ATREX, {"reference.py", "input.py", "shapes.json", NULL}},
    {AKA_LAYOUT_NATIVE, {"operator.json", NULL}},
};
#define N_RULES (sizeof(rules) / sizeof(rules[0]))

/* Append "a, b" of the rule's files that are present (want=true) or missing. */
static size_t list_files(const char *dir, const struct layout_rule *r, bool want, struct strbuf *sb)
{
    struct strbuf p = STRBUF_INIT;
    size_t n = 0;
    for (size_t i = 0; r->files[i]; i++) {
        aka_path_join(&p, dir, r->files[i]);
        if (aka_exists(p.buf) != want)
            continue;
        strbuf_addf(sb, "%s%s", n++ ? ", " : "", r->files[i]);
    }
    strbuf_release(&p);
    return n;
}

static int no_match(const char *dir, struct aka_err *err)
{
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < N_RULES; i++) {
        strbuf_addf(&sb, "%s%s needs ", i ? "; " : "", aka_layout_name(rules[i].layout));
        for (size_t f = 0; rules[i].files[f]; f++)
            strbuf_addf(&sb, "%s%s", f ? " + " : "", rules[i].files[f]);
        strbuf_addstr(&sb, " (missing ");
        list_files(dir, &rules[i], false, &sb);
        strbuf_addch(&sb, ')');
    }
    aka_err_set(err, AKA_EXIT_USAGE,
                "%s: expected an operator directory of one layout; got none: %s", dir, sb.buf);
    strbuf_release(&sb);
    return -1;
}

static int ambiguous(const char *dir, const bool *matched, size_t n_matched, struct aka_err *err)
{
    struct strbuf sb = STRBUF_INIT;
    size_t k = 0;
    for (size_t i = 0; i < N_RULES; i++) {
        if (!matched[i])
            continue;
        k++;
        strbuf_addstr(&sb, k == 1 ? "" : (k == n_matched ? " and " : ", "));
        strbuf_addf(&sb, "%s (", aka_layout_name(rules[i].layout));
        list_files(dir, &rules[i], true, &sb);
        strbuf_addch(&sb, ')');
    }
    aka_err_set(err, AKA_EXIT_USAGE,
                "%s: expected exactly one operator layout; got %zu: %s; remove the files of the "
                "layouts you do not mean",
                dir, n_matched, sb.buf);
    strbuf_release(&sb);
    return -1;
}

int aka_layout_detect(const char *op_dir, enum aka_layout *out, struct aka_err *err)
{
    bool matched[N_RULES] = {false};
    size_t n_matched = 0, last = 0;
    struct strbuf missing = STRBUF_INIT;

    *out = AKA_LAYOUT_NONE;
    if (!aka_is_dir(op_dir))
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: expected an operator directory; got %s",
                           op_dir, aka_exists(op_dir) ? "something else" : "no such directory");
    for (size_t i = 0; i < N_RULES; i++) {
        strbuf_reset(&missing);
        if (list_files(op_dir, &rules[i], false, &missing) == 0) {
            matched[i] = true;
            n_matched++;
            last = i;
        }
    }
    strbuf_release(&missing);
    if (n_matched == 0)
        return no_match(op_dir, err);
    if (n_matched > 1)
        return ambiguous(op_dir, matched, n_matched, err);
    *out = rules[last].layout;
    return 0;
}

/* ---- load / release ------------------------------------------------------------------------ */

static void release_specs(struct aka_tensor_specs *s)
{
    for (size_t i = 0; i < s->n; i++)
        aka_tensor_spec_release(&s->v[i]);
    VEC_FREE(*s);
}

static void release_dims(struct aka_dim_values *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->v[i].name);
    VEC_FREE(*d);
}

static void release_shapes(struct aka_shapes *s)
{
    for (size_t i = 0; i < s->n; i++) {
        struct aka_shape *sh = &s->v[i];
        free(sh->id);
        release_dims(&sh->dims);
        free(sh->input_kinds);
        json_decref(sh->workload);
        json_decref(sh->init_kwargs);
        json_decref(sh->input_kwargs);
    }
    VEC_FREE(*s);
}

static void release_solution(struct aka_solution *s)
{
    free(s->name);
    free(s->definition);
    free(s->author);
    free(s->entry_file);
    free(s->entry_function);
    strvec_clear(&s->languages);
    strvec_clear(&s->target_hardware);
    strvec_clear(&s->dependencies);
    strvec_clear(&s->cflags);
    strvec_clear(&s->cuda_cflags);
    strvec_clear(&s->ld_flags);
    for (size_t i = 0; i < s->sources.n; i++) {
        free(s->sources.v[i].path);
        free(s->sources.v[i].content);
    }
    VEC_FREE(s->sources);
}

static void release_sol(struct aka_sol *s)
{
    free(s->op_type);
    free(s->custom_inputs_entrypoint);
    free(s->reference);
    for (size_t i = 0; i < s->axes.n; i++) {
        free(s->axes.v[i].name);
        free(s->axes.v[i].expression);
    }
    VEC_FREE(s->axes);
    release_solution(&s->solution);
}

static void release_native(struct aka_native *n)
{
    free(n->abi_header);
    strvec_clear(&n->dims);
    for (size_t i = 0; i < n->params.n; i++) {
        free(n->params.v[i].name);
        json_decref(n->params.v[i].per_shape_values);
    }
    VEC_FREE(n->params);
    free(n->reference_file);
    free(n->entry);
    free(n->reference_entry);
    strvec_clear(&n->cflags);
    json_decref(n->tune);
    free(n->roofline_flops);
    free(n->roofline_bytes);
    free(n->seeds_dir);
}

void aka_operator_release(struct aka_operator *op)
{
    if (!op)
        return;
    free(op->dir);
    free(op->name);
    release_specs(&op->inputs);
    release_specs(&op->outputs);
    release_shapes(&op->shapes);
    release_sol(&op->sol);
    json_decref(op->atrex.metadata);
    json_decref(op->atrex.roofline);
    json_decref(op->atrex.agent_problem);
    release_native(&op->native);
    memset(op, 0, sizeof(*op));
}

static int read_layout(struct aka_operator *op, struct aka_err *err)
{
    switch (op->layout) {
    case AKA_LAYOUT_SOL:
        return aka_sol_read(op, err);
    case AKA_LAYOUT_ATREX:
        return aka_atrex_read(op, err);
    case AKA_LAYOUT_NATIVE:
        return aka_native_read(op, err);
    case AKA_LAYOUT_NONE:
        break;
    }
    return aka_err_set(err, AKA_EXIT_USAGE, "%s: no operator layout", op->dir);
}

int aka_operator_load(const char *op_dir, struct aka_operator *op, struct aka_err *err)
{
    struct strbuf meta = STRBUF_INIT;
    int rc;

    memset(op, 0, sizeof(*op));
    op->dir = aka_xstrdup(op_dir);
    if (aka_layout_detect(op_dir, &op->layout, err) < 0) {
        aka_operator_release(op);
        return -1;
    }
    rc = read_layout(op, err);
    /*
     * The contract is pinned from the original directory's private metadata
     * (DESIGN §4.3), whichever layout: a SOL or native op may carry one too.
     */
    if (rc == 0) {
        aka_op_path(op, "metadata.json", &meta);
        rc = aka_benchmark_contract_load(meta.buf, &op->contract, err);
    }
    strbuf_release(&meta);
    if (rc < 0)
        aka_operator_release(op);
    return rc;
}

/* ---- JSON view ----------------------------------------------------------------------------- */

static json_t *specs_json(const struct aka_tensor_specs *s)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < s->n; i++) {
        const struct aka_tensor_spec *t = &s->v[i];
        json_t *o = json_pack("{s:s, s:s}", "name", t->name, "dtype", t->dtype_name);
        if (t->is_scalar) {
            json_object_set_new(o, "shape", json_null());
        } else if (t->shape_declared) {
            json_t *shape = json_array();
            for (size_t d = 0; d < t->shape.n; d++)
                json_array_append_new(shape, json_string(t->shape.v[d]));
            json_object_set_new(o, "shape", shape);
        }
        json_array_append_new(arr, o);
    }
    return arr;
}

static json_t *tolerances_json(const struct aka_operator *op)
{
    json_t *per_shape = json_object(), *per_tensor = json_object();
    for (size_t i = 0; i < op->shapes.n; i++)
        if (op->shapes.v[i].has_tolerance)
            json_object_set_new(per_shape, op->shapes.v[i].id,
                                aka_tolerance_to_json(&op->shapes.v[i].tolerance));
    for (size_t i = 0; i < op->outputs.n; i++)
        if (op->outputs.v[i].has_tolerance)
            json_object_set_new(per_tensor, op->outputs.v[i].name,
                                aka_tolerance_to_json(&op->outputs.v[i].tolerance));
    return json_pack("{s:o, s:o, s:o}", "default", aka_tolerance_to_json(&op->tolerance),
                     "per_shape", per_shape, "per_tensor", per_tensor);
}

static json_t *details_json(const struct aka_operator *op)
{
    switch (op->layout) {
    case AKA_LAYOUT_SOL:
        return aka_sol_details_json(op);
    case AKA_LAYOUT_ATREX:
        return aka_atrex_details_json(op);
    case AKA_LAYOUT_NATIVE:
        return aka_native_details_json(op);
    case AKA_LAYOUT_NONE:
        break;
    }
    return json_object();
}

json_t *aka_operator_to_json(const struct aka_operator *op)
{
    const struct aka_benchmark_contract *c = &op->contract;
    json_t *ids = json_array();
    for (size_t i = 0; i < op->shapes.n; i++)
        json_array_append_new(ids, json_string(op->shapes.v[i].id));
    json_t *distributed = json_pack(
        "{s:b, s:i, s:o, s:o, s:b}", "enabled", c->explicit_distributed && c->world_size >= 2,
        "world_size", c->world_size, "launcher",
        c->launcher[0] ? json_string(c->launcher) : json_null(), "backend",
        c->backend[0] ? json_string(c->backend) : json_null(), "explicit", c->explicit_distributed);
    json_t *policy =
        json_pack("{s:b, s:s}", "inspection", c->source_policy_inspection, "reason", c->reason);
    return json_pack("{s:s, s:s, s:s, s:o, s:o, s:I, s:o, s:o, s:o, s:o, s:o}", "layout",
                     aka_layout_name(op->layout), "dir", op->dir, "name", op->name, "inputs",
                     specs_json(&op->inputs), "outputs", specs_json(&op->outputs), "shape_count",
                     (json_int_t)op->shapes.n, "shape_ids", ids, "tolerances", tolerances_json(op),
                     "distributed", distributed, "source_policy", policy, "details",
                     details_json(op));
}
