/*
 * operator.h — the typed model of an operator directory, whatever its layout.
 *
 * DESIGN §4.2. An operator reaches aka in one of three layouts:
 *
 *   sol     SOL-ExecBench: definition.json + workload.jsonl (+ solution.json)
 *   atrex   Atrex-Bench:   reference.py + input.py + shapes.json
 *                          (+ metadata.json, roofline.json, agent_problem.json)
 *   native  ours:          operator.json ("schema": "aka.native.v1") + reference.c/.cu
 *
 * aka_operator_load() detects the layout (rules in docs/layouts.md), reads and
 * validates every file the layout carries, and pins the benchmark contract
 * (contracts/benchmark.h) from <op_dir>/metadata.json. It never writes into the
 * directory. Every error is exit code 2 with one line naming the file as given
 * under op_dir and the field: "DIR/FILE: FIELD.PATH: expected ...; got ...";
 * syntax errors read "DIR/FILE:LINE:COL: ..." and JSON Lines errors name the line.
 *
 * The model keeps what every later stage needs in typed fields (tensors, shapes,
 * tolerances) and keeps the layout's own documents (workload lines, shape kwargs,
 * metadata) as jansson values for the evaluator adapters, so that nothing the
 * evaluator reads is re-serialized differently from what the operator author wrote.
 */
#ifndef AKA_CONTRACTS_OPERATOR_H
#define AKA_CONTRACTS_OPERATOR_H

#include "base/error.h"
#include "base/strbuf.h"
#include "base/vec.h"
#include "contracts/benchmark.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum aka_layout { AKA_LAYOUT_NONE = 0, AKA_LAYOUT_SOL, AKA_LAYOUT_ATREX, AKA_LAYOUT_NATIVE };

/* "sol", "atrex", "native" ("none" for AKA_LAYOUT_NONE). */
const char *aka_layout_name(enum aka_layout layout);

/*
 * Element types. The numeric values of the first ten equal the AKA_DT_* codes of
 * runtime/harness/native/aka_native_abi.h, so a native tensor's dtype goes to the
 * harness unchanged (tests/unit/test_operator.c checks this).
 */
enum aka_dtype {
    AKA_DTYPE_NONE = -1, /* the layout names a type we do not model (Atrex "bf16/fp16") */
    AKA_DTYPE_FLOAT32 = 0,
    AKA_DTYPE_FLOAT64,
    AKA_DTYPE_FLOAT16,
    AKA_DTYPE_BFLOAT16,
    AKA_DTYPE_INT8,
    AKA_DTYPE_INT16,
    AKA_DTYPE_INT32,
    AKA_DTYPE_INT64,
    AKA_DTYPE_UINT8,
    AKA_DTYPE_BOOL,
    /* SOL-only types: no native kernel takes them. */
    AKA_DTYPE_FLOAT8_E4M3FN,
    AKA_DTYPE_FLOAT8_E5M2,
    AKA_DTYPE_FLOAT4_E2M1,
    AKA_DTYPE_FLOAT4_E2M1FN_X2,
    AKA_DTYPE_COUNT
};

/* Canonical name ("float32", ...), or NULL for NONE / out of range. */
const char *aka_dtype_name(int dtype);
/* Bytes per element (0.5 for float4_e2m1); -1 for NONE / out of range. */
double aka_dtype_bytes(int dtype);
/* Canonical name → enum; -1 when unknown. */
int aka_dtype_parse(const char *name);

/* When a candidate's output counts as equal to the reference's. */
struct aka_tolerance {
    double atol;
    double rtol;
    double matched_ratio; /* fraction of elements that must pass; 1.0 = all (Atrex, native) */
    bool has_error_cap;   /* SOL max_error_cap */
    double error_cap;
    bool allow_negative_inf; /* SOL: both sides -inf at a position counts as equal */
};

struct aka_tensor_spec {
    char *name;
    char *dtype_name;    /* as the layout's file spells it */
    int dtype;           /* enum aka_dtype (AKA_DTYPE_NONE for unmodelled Atrex spellings) */
    bool shape_declared; /* false where the layout gives no shape (Atrex) */
    bool is_scalar;      /* SOL "shape": null — passed as a Python scalar */
    struct strvec shape; /* one expression per dimension, over dim/axis names */
    bool has_tolerance;  /* native per-tensor override of the operator tolerance */
    struct aka_tolerance tolerance;
};

struct aka_tensor_specs {
    struct aka_tensor_spec *v;
    size_t n, alloc;
};

struct aka_dim_value {
    char *name;
    long long value;
};

struct aka_dim_values {
    struct aka_dim_value *v;
    size_t n, alloc;
};

/* SOL workload input sources. */
enum aka_input_kind {
    AKA_INPUT_RANDOM = 0,
    AKA_INPUT_SCALAR,
    AKA_INPUT_SAFETENSORS,
    AKA_INPUT_CUSTOM
};
const char *aka_input_kind_name(enum aka_input_kind kind);

/*
 * One evaluation case: a SOL workload, an Atrex shape, a native shape.
 * `id` is the workload uuid / shape id; it keys per-shape latencies.
 */
struct aka_shape {
    char *id;
    struct aka_dim_values dims; /* SOL: every axis resolved; native: every dim; Atrex: none */
    bool has_tolerance;         /* SOL per-workload tolerance */
    struct aka_tolerance tolerance;
    enum aka_input_kind *input_kinds; /* SOL: one per op->inputs entry (missing = random) */
    json_t *workload;                 /* SOL: the workload line as written */
    json_t *init_kwargs;              /* Atrex: object, or NULL for JSON null */
    json_t *input_kwargs;             /* Atrex: object */
};

struct aka_shapes {
    struct aka_shape *v;
    size_t n, alloc;
};

/* ---- SOL-ExecBench ---------------------------------------------------------------------- */

enum aka_axis_kind { AKA_AXIS_CONST = 0, AKA_AXIS_VAR, AKA_AXIS_EXPR };

struct aka_axis {
    char *name;
    enum aka_axis_kind kind;
    long long value;  /* const */
    char *expression; /* expr */
};

struct aka_axes {
    struct aka_axis *v;
    size_t n, alloc;
};

struct aka_solution_source {
    char *path;
    char *content;          /* inline content, or the file's bytes when read from disk */
    bool content_from_disk; /* solution.json left content empty; the op dir holds the file */
};

struct aka_solution {
    char *name;
    char *definition;
    char *author;
    struct strvec languages;
    struct strvec target_hardware;
    struct strvec dependencies;
    char *entry_file; /* entry_point "file::function", split */
    char *entry_function;
    bool destination_passing; /* spec.destination_passing_style (default true) */
    struct strvec cflags, cuda_cflags, ld_flags;
    struct {
        struct aka_solution_source *v;
        size_t n, alloc;
    } sources;
};

struct aka_sol {
    char *op_type;                  /* may be NULL */
    char *custom_inputs_entrypoint; /* may be NULL */
    char *reference;                /* Python source defining run(...) */
    struct aka_axes axes;
    bool has_solution;
    struct aka_solution solution;
};

/* ---- Atrex-Bench ------------------------------------------------------------------------- */

struct aka_atrex {
    json_t *metadata;      /* NULL when metadata.json is absent */
    json_t *roofline;      /* NULL when roofline.json is absent */
    json_t *agent_problem; /* NULL when agent_problem.json is absent */
};

/* ---- aka native -------------------------------------------------------------------------- */

enum aka_native_language { AKA_LANG_C = 0, AKA_LANG_CUDA };

struct aka_native_param {
    char *name;
    bool is_float;
    bool per_shape;   /* values differ per shape: see per_shape_values */
    long long ivalue; /* when !per_shape */
    double fvalue;
    json_t *per_shape_values; /* object shape id → number, covering every shape */
};

struct aka_native {
    int language;          /* enum aka_native_language */
    char *abi_header;      /* e.g. "aka_native_abi.h" */
    long long abi_version; /* AKA_NATIVE_ABI_VERSION the operator was written for */
    struct strvec dims;    /* declared dim names, in file order */
    struct {
        struct aka_native_param *v;
        size_t n, alloc;
    } params;
    char *reference_file;  /* relative to the op dir; default reference.c / reference.cu */
    char *entry;           /* the candidate kernel's symbol (default "aka_kernel") */
    char *reference_entry; /* the reference's symbol (default "aka_reference") */
    struct strvec cflags;
    json_t *tune;         /* object knob → non-empty array of distinct scalars, or NULL */
    char *roofline_flops; /* expressions over dims, or NULL */
    char *roofline_bytes;
    /* "timing": CPU latency from the runner's CPU time (the default for C: single-threaded
     * kernels) or from the judge's wall clock (kernels that run threads) */
    bool wall_timing;
    char *seeds_dir; /* relative to the op dir, or NULL */
};

/* ---- the operator ------------------------------------------------------------------------ */

struct aka_operator {
    enum aka_layout layout;
    char *dir;  /* op_dir as given */
    char *name; /* definition name / operator.json name / Atrex directory name */
    struct aka_tensor_specs inputs;
    struct aka_tensor_specs outputs;
    struct aka_shapes shapes;       /* evaluation order (Atrex: ids sorted as strings) */
    struct aka_tolerance tolerance; /* default for every shape and tensor */
    struct aka_benchmark_contract contract;
    struct aka_sol sol;
    struct aka_atrex atrex;
    struct aka_native native;
};

/*
 * Detect the layout of op_dir, read everything it carries, pin the benchmark
 * contract. On failure op is left released (safe to release again) and err
 * holds exit code 2 and one line. Never writes into op_dir.
 */
int aka_operator_load(const char *op_dir, struct aka_operator *op, struct aka_err *err);
void aka_operator_release(struct aka_operator *op);

/*
 * What `aka inspect --json` prints (less the runtime pins): layout, name,
 * inputs, outputs, shape_count, shape_ids, tolerances, distributed,
 * source_policy, and a layout-specific "details" object.
 */
json_t *aka_operator_to_json(const struct aka_operator *op);

/*
 * Atrex-Bench v0.3's production latency of a shape (metadata.json
 * shapes.<sid>.production_performance: {SKU: {framework, performance_us}}, the one
 * entry having a latency): 1 with *us; 0 when the shape has no such object; -1 with
 * why (names the field) when it is not an object, has no latency, has two, or one that
 * is not a positive number. has_production: whether any shape has the object.
 */
int aka_operator_production_us(const struct aka_operator *op, const char *sid, double *us,
                               char *why, size_t n);
bool aka_operator_has_production(const struct aka_operator *op);

/*
 * Generalized production (agent_problem.c): the public operator of a native operator, from
 * <op->dir>/agent_problem.json (schema AKA_AGENT_PROBLEM_SCHEMA, docs/layouts.md). 0 with
 * *public_operator (a new reference): operator.json with the file's development cases as
 * its shapes. -1 with code 2 naming the file and the field: another layout (not built), no
 * such file (the problem-authoring session is not built), a malformed file, a development
 * case equal to a private shape.
 */
#define AKA_AGENT_PROBLEM_FILE   "agent_problem.json"
#define AKA_AGENT_PROBLEM_SCHEMA "aka.agent_problem.v1"
int aka_agent_problem_public(const struct aka_operator *op, json_t **public_operator,
                             struct aka_err *err);

/* The shape with this id, or NULL. */
const struct aka_shape *aka_operator_find_shape(const struct aka_operator *op, const char *id);

/*
 * Which layout op_dir has. Returns 0 with *out set, or -1 with the ambiguity /
 * no-match error of docs/layouts.md.
 */
int aka_layout_detect(const char *op_dir, enum aka_layout *out, struct aka_err *err);

/*
 * Integer dimension expressions: names, non-negative integer literals, + - * /
 * // % and parentheses, unary minus. "/" must divide exactly (a shape of
 * "N/2" with odd N is a contradiction, not a rounding choice); "//" floors.
 * Names are looked up in dims. On failure returns -1 and writes a short reason
 * ("undefined dim 'Q'", "division by zero", ...) into why.
 */
int aka_shape_expr_eval(const char *expr, const struct aka_dim_values *dims, long long *out,
                        char *why, size_t why_len);
/* Syntax and names only (every name must be in names); same reasons as above. */
int aka_shape_expr_check(const char *expr, const struct strvec *names, char *why, size_t why_len);

/* ---- the per-layout readers, called by aka_operator_load (contracts/ internal) ---------- */

int aka_sol_read(struct aka_operator *op, struct aka_err *err);
int aka_atrex_read(struct aka_operator *op, struct aka_err *err);
int aka_native_read(struct aka_operator *op, struct aka_err *err);
json_t *aka_sol_details_json(const struct aka_operator *op);
json_t *aka_atrex_details_json(const struct aka_operator *op);
json_t *aka_native_details_json(const struct aka_operator *op);

/* Helpers shared by the readers. */
void aka_tensor_spec_release(struct aka_tensor_spec *t);
void aka_tolerance_default(struct aka_tolerance *t, double atol, double rtol);
json_t *aka_tolerance_to_json(const struct aka_tolerance *t);
/* Join op->dir and name into out (the label every error uses for that file). */
void aka_op_path(const struct aka_operator *op, const char *name, struct strbuf *out);
/* Look up a dim value by name; NULL when absent. */
const struct aka_dim_value *aka_dim_find(const struct aka_dim_values *dims, const char *name);
void aka_dim_push(struct aka_dim_values *dims, const char *name, long long value);
/* [A-Za-z_][A-Za-z0-9_]* — names that become C or Python identifiers. */
bool aka_is_identifier(const char *s);
/* Relative, non-empty, no "..", no empty component: stays inside the op dir. */
bool aka_is_safe_relpath(const char *s);

#endif
