/*
 * spec.c — the helpers every layout reader shares (dtype and input-kind names,
 * operator file paths, dims, identifiers and safe relative paths, tolerances,
 * tensor specs, shape lookup). A leaf of the module: the readers (atrex.c, sol.c,
 * native.c) and the loader (layout.c) call it, it calls none of them.
 */
#include "base/fs.h"
#include "base/json.h"
#include "contracts/operator.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- names -------------------------------------------------------------------------------- */

static const char *const dtype_names[AKA_DTYPE_COUNT] = {
    "float32",       "float64",
    "float16",       "bfloat16",
    "int8",          "int16",
    "int32",         "int64",
    "uint8",         "bool",
    "float8_e4m3fn", "float8_e5m2",
    "float4_e2m1",   "float4_e2m1fn_x2",
};

const char *aka_dtype_name(int dtype)
{
    return dtype >= 0 && dtype < AKA_DTYPE_COUNT ? dtype_names[dtype] : NULL;
}

double aka_dtype_bytes(int dtype)
{
    /* In dtype_names' order; torch stores float4_e2m1fn_x2 as one byte per pair, which
     * is one element of that type. */
    static const double bytes[AKA_DTYPE_COUNT] = {4, 8, 2, 2, 1, 2, 4, 8, 1, 1, 1, 1, 0.5, 1};
    return dtype >= 0 && dtype < AKA_DTYPE_COUNT ? bytes[dtype] : -1;
}

int aka_dtype_parse(const char *name)
{
    for (int i = 0; i < AKA_DTYPE_COUNT; i++)
        if (strcmp(name, dtype_names[i]) == 0)
            return i;
    return -1;
}

const char *aka_layout_name(enum aka_layout layout)
{
    switch (layout) {
    case AKA_LAYOUT_SOL:
        return "sol";
    case AKA_LAYOUT_ATREX:
        return "atrex";
    case AKA_LAYOUT_NATIVE:
        return "native";
    case AKA_LAYOUT_NONE:
        break;
    }
    return "none";
}

const char *aka_input_kind_name(enum aka_input_kind kind)
{
    static const char *const names[] = {"random", "scalar", "safetensors", "custom"};
    return (unsigned)kind < 4 ? names[kind] : "unknown";
}

/* ---- shared helpers ------------------------------------------------------------------------ */

void aka_op_path(const struct aka_operator *op, const char *name, struct strbuf *out)
{
    aka_path_join(out, op->dir, name);
}

const struct aka_dim_value *aka_dim_find(const struct aka_dim_values *dims, const char *name)
{
    for (size_t i = 0; i < dims->n; i++)
        if (strcmp(dims->v[i].name, name) == 0)
            return &dims->v[i];
    return NULL;
}

void aka_dim_push(struct aka_dim_values *dims, const char *name, long long value)
{
    struct aka_dim_value d = {aka_xstrdup(name), value};
    VEC_PUSH(*dims, d);
}

bool aka_is_identifier(const char *s)
{
    if (!s || !(isalpha((unsigned char)*s) || *s == '_'))
        return false;
    for (s++; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return false;
    return true;
}

bool aka_is_safe_relpath(const char *s)
{
    if (!s || !*s || *s == '/')
        return false;
    for (const char *c = s; *c;) {
        size_t n = strcspn(c, "/");
        if (n == 0 || (n == 2 && strncmp(c, "..", 2) == 0) || (n == 1 && *c == '.'))
            return false;
        c += n;
        if (*c == '/')
            c++;
        if (!*c && c[-1] == '/')
            return false;
    }
    return true;
}

void aka_tolerance_default(struct aka_tolerance *t, double atol, double rtol)
{
    memset(t, 0, sizeof(*t));
    t->atol = atol;
    t->rtol = rtol;
    t->matched_ratio = 1.0;
}

json_t *aka_tolerance_to_json(const struct aka_tolerance *t)
{
    return json_pack("{s:f, s:f, s:f, s:o, s:b}", "atol", t->atol, "rtol", t->rtol, "matched_ratio",
                     t->matched_ratio, "error_cap",
                     t->has_error_cap ? json_real(t->error_cap) : json_null(), "allow_negative_inf",
                     t->allow_negative_inf);
}

void aka_tensor_spec_release(struct aka_tensor_spec *t)
{
    free(t->name);
    free(t->dtype_name);
    strvec_clear(&t->shape);
    memset(t, 0, sizeof(*t));
}

const struct aka_shape *aka_operator_find_shape(const struct aka_operator *op, const char *id)
{
    for (size_t i = 0; i < op->shapes.n; i++)
        if (strcmp(op->shapes.v[i].id, id) == 0)
            return &op->shapes.v[i];
    return NULL;
}
