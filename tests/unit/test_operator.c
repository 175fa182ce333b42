/*
 * test_operator.c — the operator loader (contracts/operator.h) on every example
 * operator and on a table of malformed directories.
 *
 * Each malformed case starts from a small valid directory of one layout (or an
 * empty one), changes one thing — a JSON field set or removed through a JSON
 * pointer, a file replaced or deleted — and expects exit code 2 with a
 * one-line message that starts with the op dir and contains the file and
 * field. Every case also checks that loading wrote nothing: the directory's
 * names and bytes are identical before and after.
 */
#include "aka_test.h"

#include "../../runtime/harness/native/aka_native_abi.h"
#include "base/fs.h"
#include "base/json.h"
#include "contracts/operator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- valid base directories ---------------------------------------------------------------- */

enum base { EMPTY, NATIVE, SOL, ATREX };

struct file {
    const char *name;
    const char *text;
};

static const struct file native_files[] = {
    {"operator.json",
     "{\"schema\": \"aka.native.v1\", \"name\": \"t\", \"language\": \"c\",\n"
     " \"abi\": {\"header\": \"aka_native_abi.h\", \"version\": 1},\n"
     " \"dims\": [\"N\"],\n"
     " \"tensors\": [{\"name\": \"x\", \"role\": \"input\", \"dtype\": \"float32\", \"shape\": "
     "[\"N\"]},\n"
     "             {\"name\": \"y\", \"role\": \"output\", \"dtype\": \"float32\", \"shape\": "
     "[\"N/2\"]}],\n"
     " \"shapes\": [{\"id\": \"s1\", \"dims\": {\"N\": 8}}],\n"
     " \"tolerance\": {\"atol\": 1e-5, \"rtol\": 1e-5}}\n"},
    {"reference.c", "int aka_reference_placeholder;\n"},
    {NULL, NULL}};

static const struct file sol_files[] = {
    {"definition.json",
     "{\"name\": \"t\",\n"
     " \"axes\": {\"tokens\": {\"type\": \"var\"}, \"d\": {\"type\": \"const\", \"value\": 4},\n"
     "          \"d2\": {\"type\": \"expr\", \"expression\": \"d * 2\"}},\n"
     " \"inputs\": {\"x\": {\"shape\": [\"tokens\", \"d2\"], \"dtype\": \"float32\"}},\n"
     " \"outputs\": {\"y\": {\"shape\": [\"tokens\", \"d\"], \"dtype\": \"float32\"}},\n"
     " \"reference\": \"import torch\\ndef run(x):\\n    return x[:, :4]\\n\"}\n"},
    {"workload.jsonl", "{\"uuid\": \"w1\", \"axes\": {\"tokens\": 3}, \"inputs\": {\"x\": "
                       "{\"type\": \"random\"}}}\n"},
    {"solution.json",
     "{\"name\": \"s\", \"definition\": \"t\", \"author\": \"me\",\n"
     " \"spec\": {\"languages\": [\"pytorch\"], \"target_hardware\": [\"LOCAL\"],\n"
     "          \"entry_point\": \"k.py::run\"},\n"
     " \"sources\": [{\"path\": \"k.py\", \"content\": \"def run(x, y):\\n    pass\\n\"}]}\n"},
    {NULL, NULL}};

static const struct file atrex_files[] = {
    {"reference.py", "import torch.nn as nn\n\n\nclass Model(nn.Module):\n    pass\n"},
    {"input.py", "def _make_inputs(n):\n    return {}\n"},
    {"shapes.json", "{\"0\": {\"init_kwargs\": null, \"input_kwargs\": {\"n\": 4}},\n"
                    " \"1\": {\"init_kwargs\": {\"k\": 1}, \"input_kwargs\": {\"n\": 8}}}\n"},
    {"metadata.json", "{\"id\": \"t\", \"input_dtypes\": {\"x\": \"bf16\"},\n"
                      " \"output_dtypes\": {\"out\": \"bf16\"}, \"shapes\": {\"0\": {}}}\n"},
    {"roofline.json", "{\"shapes\": {\"0\": {\"semantic_W_flops\": {}, \"semantic_Q_read_bytes\": "
                      "8, \"semantic_Q_write_bytes\": 8}}}\n"},
    {"agent_problem.json",
     "{\"schema_version\": \"atrex.agent_problem.v1\", \"objective\": \"exact cases are hidden\",\n"
     " \"evaluation\": {\"exact_cases\": \"private\",\n"
     "                \"development_cases_are_evaluation_cases\": false},\n"
     " \"operator_contract\": {}, \"shape_domain\": {\"n\": {\"min\": 1}},\n"
     " \"invariants\": [\"n > 0\"], \"coverage_regimes\": [{\"name\": \"all\"}],\n"
     " \"development_cases\": [{\"name\": \"d\", \"init_kwargs\": null, \"input_kwargs\": {\"n\": "
     "5}}]}\n"},
    {NULL, NULL}};

static const struct file *base_files(enum base b)
{
    static const struct file none[] = {{NULL, NULL}};
    return b == NATIVE ? native_files : b == SOL ? sol_files : b == ATREX ? atrex_files : none;
}

/* ---- temp dirs, snapshots -------------------------------------------------------------------- */

static void write_text(const char *dir, const char *name, const char *text)
{
    struct strbuf p = STRBUF_INIT;
    aka_path_join(&p, dir, name);
    FILE *f = fopen(p.buf, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    strbuf_release(&p);
}

static const char *base_text(enum base b, const char *name)
{
    for (const struct file *f = base_files(b); f->name; f++)
        if (strcmp(f->name, name) == 0)
            return f->text;
    return NULL;
}

/* Every name and every byte under dir, recursively, in sorted order. */
static void snapshot(const char *dir, struct strbuf *out)
{
    struct strvec names = STRVEC_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf p = STRBUF_INIT;
    assert_int_equal(aka_list_dir(dir, &names, &err), 0);
    for (size_t i = 0; i < names.n; i++) {
        aka_path_join(&p, dir, names.v[i]);
        strbuf_addf(out, "%s\n", p.buf);
        if (aka_is_dir(p.buf))
            snapshot(p.buf, out);
        else
            assert_int_equal(aka_read_file(p.buf, out, AKA_READ_LIMIT_DEFAULT, &err), 0);
    }
    strbuf_release(&p);
    strvec_clear(&names);
}

/* ---- JSON pointer edits ---------------------------------------------------------------------- */

/* Set (value != NULL) or delete the member at pointer "/a/0/b" ("-" appends to an array). */
static void json_edit(json_t *root, const char *pointer, const char *value)
{
    char *copy = aka_xstrdup(pointer + 1), *save = NULL;
    json_t *cur = root, *v = NULL;
    char *tok = strtok_r(copy, "/", &save), *next;
    if (value) /* a bare string or number is a valid value here */
        v = json_loads(value, JSON_DECODE_ANY, NULL);
    if (value)
        assert_non_null(v);
    for (; (next = strtok_r(NULL, "/", &save)); tok = next)
        cur = json_is_array(cur) ? json_array_get(cur, strtoul(tok, NULL, 10))
                                 : json_object_get(cur, tok);
    assert_non_null(cur);
    if (json_is_array(cur) && strcmp(tok, "-") == 0)
        json_array_append_new(cur, v);
    else if (json_is_array(cur) && v)
        json_array_set_new(cur, strtoul(tok, NULL, 10), v);
    else if (json_is_array(cur))
        json_array_remove(cur, strtoul(tok, NULL, 10));
    else if (v)
        json_object_set_new(cur, tok, v);
    else
        json_object_del(cur, tok);
    free(copy);
}

/* ---- the table ------------------------------------------------------------------------------- */

struct bad_case {
    const char *what;
    enum base base;
    const char *file;    /* the file changed */
    const char *pointer; /* JSON pointer into the base file; NULL: replace the whole file */
    const char *value;   /* JSON to set, or the file's new text; NULL: delete field or file */
    const char *expect;  /* substring of the message, after "<dir>" */
};

#define WL "{\"uuid\": \"w1\", \"axes\": {\"tokens\": 3}, \"inputs\": {}}\n"

static const struct bad_case cases[] = {
    /* layout detection */
    {"no layout", EMPTY, NULL, NULL, NULL,
     ": expected an operator directory of one layout; got none: sol needs definition.json + "
     "workload.jsonl (missing definition.json, workload.jsonl)"},
    {"atrex without input.py", ATREX, "input.py", NULL, NULL,
     "atrex needs reference.py + input.py + shapes.json (missing input.py)"},
    {"sol and native at once", SOL, "operator.json", NULL, "{}",
     ": expected exactly one operator layout; got 2: sol (definition.json, workload.jsonl) and "
     "native (operator.json)"},
    {"atrex and native at once", ATREX, "operator.json", NULL, "{}",
     ": expected exactly one operator layout; got 2: atrex (reference.py, input.py, shapes.json) "
     "and native (operator.json)"},
    /* native: operator.json */
    {"native bad JSON", NATIVE, "operator.json", NULL,
     "{\"schema\": \"aka.native.v1\",\n  \"name\": ,\n}", "/operator.json:2:11: invalid JSON"},
    {"native root not object", NATIVE, "operator.json", NULL, "[1, 2]",
     "/operator.json: expected an object; got an array"},
    {"native missing schema", NATIVE, "operator.json", "/schema", NULL,
     "/operator.json: schema: required field is missing"},
    {"native wrong schema", NATIVE, "operator.json", "/schema", "\"aka.native.v2\"",
     "/operator.json: schema: expected \"aka.native.v1\"; got \"aka.native.v2\""},
    {"native language fortran", NATIVE, "operator.json", "/language", "\"fortran\"",
     "/operator.json: language: expected one of c, cuda; got \"fortran\""},
    {"native unknown dtype", NATIVE, "operator.json", "/tensors/0/dtype", "\"float33\"",
     "/operator.json: tensors[0].dtype: expected one of float32, float64"},
    {"native dims wrong type", NATIVE, "operator.json", "/dims", "\"N\"",
     "/operator.json: dims: expected an array; got a string"},
    {"native shape undefined dim", NATIVE, "operator.json", "/tensors/1/shape/0", "\"2*Q\"",
     "/operator.json: tensors[1].shape[0]: expected an expression over dims (declared in dims); "
     "got \"2*Q\": undefined dim 'Q'"},
    {"native shape not divisible", NATIVE, "operator.json", "/tensors/1/shape/0", "\"N/3\"",
     "/operator.json: tensors[1].shape[0]: expected a positive size for shape \"s1\"; got "
     "\"N/3\": 8/3 does not divide exactly"},
    {"native duplicate shape id", NATIVE, "operator.json", "/shapes/-",
     "{\"id\": \"s1\", \"dims\": {\"N\": 4}}",
     "/operator.json: shapes[1].id: expected a unique shape id; got \"s1\" again"},
    {"native empty shapes", NATIVE, "operator.json", "/shapes", "[]",
     "/operator.json: shapes: expected at least one shape; got an empty array"},
    {"native shape misses a dim", NATIVE, "operator.json", "/shapes/0/dims", "{}",
     "/operator.json: shapes[0].dims: expected a value for every declared dim; got none for \"N\""},
    {"native unknown field", NATIVE, "operator.json", "/tolerence", "{}",
     "/operator.json: tolerence: unknown field"},
    {"native negative atol", NATIVE, "operator.json", "/tolerance/atol", "-1",
     "/operator.json: tolerance.atol: expected a non-negative number; got -1"},
    {"native per-tensor tolerance on an input", NATIVE, "operator.json", "/tolerance/per_tensor",
     "{\"x\": {\"atol\": 0, \"rtol\": 0}}",
     "/operator.json: tolerance.per_tensor.x: expected the name of an output tensor"},
    {"native missing reference.c", NATIVE, "reference.c", NULL, NULL,
     "/operator.json: reference: expected an existing regular file \"reference.c\""},
    {"native reference outside the dir", NATIVE, "operator.json", "/reference", "\"../x.c\"",
     "/operator.json: reference: expected a relative path inside the operator directory"},
    {"native abi version", NATIVE, "operator.json", "/abi/version", "2",
     "/operator.json: abi.version: expected 1"},
    {"native empty tune space", NATIVE, "operator.json", "/tune", "{\"TILE\": []}",
     "/operator.json: tune.TILE: expected a non-empty array of values; got an empty array"},
    {"native param without value", NATIVE, "operator.json", "/params",
     "[{\"name\": \"eps\", \"type\": \"float\"}]",
     "/operator.json: params[0]: expected exactly one of \"value\" and \"per_shape\"; got neither"},
    {"native roofline undefined dim", NATIVE, "operator.json", "/roofline",
     "{\"flops\": \"2*M\", \"bytes\": \"N\"}",
     "/operator.json: roofline.flops: expected an expression over dims; got \"2*M\": undefined "
     "dim 'M'"},
    {"native roofline negative bytes", NATIVE, "operator.json", "/roofline",
     "{\"flops\": \"2*N\", \"bytes\": \"0-4*N\"}",
     "/operator.json: roofline.bytes: expected a non-negative count for shape \"s1\"; got "
     "\"0-4*N\": negative"},
    {"native roofline without bytes", NATIVE, "operator.json", "/roofline", "{\"flops\": \"2*N\"}",
     "/operator.json: roofline.bytes: required field is missing"},
    {"native roofline not an object", NATIVE, "operator.json", "/roofline", "\"2*N\"",
     "/operator.json: roofline: expected an object; got a string"},
    {"native timing unknown", NATIVE, "operator.json", "/timing", "\"cycles\"",
     "/operator.json: timing: expected one of cpu_time, wall; got \"cycles\""},
    {"native timing not a string", NATIVE, "operator.json", "/timing", "1",
     "/operator.json: timing: expected a string; got an integer"},
    {"native no output", NATIVE, "operator.json", "/tensors/1/role", "\"input\"",
     "/operator.json: tensors: expected at least one input and one output"},
    /* SOL */
    {"sol definition bad JSON", SOL, "definition.json", NULL, "{\"name\": \"x\",}",
     "/definition.json:1:14: invalid JSON"},
    {"sol unknown dtype", SOL, "definition.json", "/inputs/x/dtype", "\"float33\"",
     "/definition.json: inputs.x.dtype: expected one of float64, float32"},
    {"sol shape undefined axis", SOL, "definition.json", "/inputs/x/shape/0", "\"rows\"",
     "/definition.json: inputs.x.shape[0]: expected an axis defined in axes or a digit literal; "
     "got \"rows\""},
    {"sol const axis without value", SOL, "definition.json", "/axes/d", "{\"type\": \"const\"}",
     "/definition.json: axes.d.value: required field is missing"},
    {"sol run signature", SOL, "definition.json", "/reference", "\"def run(a):\\n    return a\\n\"",
     "/definition.json: reference: expected def run(x) (the inputs, in order); got run(a)"},
    {"sol input named like an axis", SOL, "definition.json", "/inputs/d",
     "{\"shape\": null, \"dtype\": \"int32\"}",
     "/definition.json: inputs.d: expected an input name that is not an axis name"},
    {"sol workload bad line 2", SOL, "workload.jsonl", NULL, WL "{oops}\n",
     "/workload.jsonl:2:5: invalid JSON"},
    {"sol workload axis not in definition", SOL, "workload.jsonl", NULL,
     "{\"uuid\": \"w1\", \"axes\": {\"tokens\": 3, \"bogus\": 1}, \"inputs\": {}}\n",
     "/workload.jsonl:1: axes.bogus: expected a var axis of definition.json; got \"bogus\" (not "
     "an axis)"},
    {"sol var axis without value", SOL, "workload.jsonl", NULL,
     WL "{\"uuid\": \"w2\", \"axes\": {}, \"inputs\": {}}\n",
     "/workload.jsonl:2: axes.tokens: expected a value for var axis \"tokens\"; got none"},
    {"sol duplicate uuid", SOL, "workload.jsonl", NULL, WL WL,
     "/workload.jsonl:2: uuid: expected a unique workload id; got \"w1\" again"},
    {"sol unknown input kind", SOL, "workload.jsonl", NULL,
     "{\"uuid\": \"w1\", \"axes\": {\"tokens\": 3}, \"inputs\": {\"x\": {\"type\": \"file\"}}}\n",
     "/workload.jsonl:1: inputs.x.type: expected one of random, scalar, safetensors, custom"},
    {"sol matched ratio above one", SOL, "workload.jsonl", NULL,
     "{\"uuid\": \"w1\", \"axes\": {\"tokens\": 3}, \"inputs\": {}, \"tolerance\": "
     "{\"required_matched_ratio\": 2}}\n",
     "/workload.jsonl:1: tolerance.required_matched_ratio: expected a number in [0, 1]"},
    {"sol empty workload file", SOL, "workload.jsonl", NULL, "\n\n",
     "/workload.jsonl: expected at least one workload line; got none"},
    {"sol solution entry point", SOL, "solution.json", "/spec/entry_point", "\"k.py\"",
     "/solution.json: spec.entry_point: expected \"FILE::FUNCTION\"; got \"k.py\""},
    {"sol solution for another definition", SOL, "solution.json", "/definition", "\"other\"",
     "/solution.json: definition: expected \"t\" (the name in definition.json); got \"other\""},
    {"sol solution mixed languages", SOL, "solution.json", "/spec/languages",
     "[\"pytorch\", \"cuda_cpp\"]",
     "/solution.json: spec.languages: expected languages of one family"},
    /* Atrex */
    {"atrex shapes not an object", ATREX, "shapes.json", NULL, "[1]",
     "/shapes.json: expected an object keyed by shape id; got an array"},
    {"atrex empty shapes", ATREX, "shapes.json", NULL, "{}",
     "/shapes.json: expected at least one shape; got an empty object"},
    {"atrex shape without input_kwargs", ATREX, "shapes.json", "/0/input_kwargs", NULL,
     "/shapes.json: 0.input_kwargs: required field is missing"},
    {"atrex reference without Model", ATREX, "reference.py", NULL, "def run():\n    pass\n",
     "/reference.py: expected a top-level class Model(nn.Module); got none"},
    {"atrex unknown metadata dtype", ATREX, "metadata.json", "/input_dtypes/x", "\"bf17\"",
     "/metadata.json: input_dtypes.x: expected a dtype"},
    /* metadata.shapes may describe shapes shapes.json lacks (the official evaluator
     * accepts them); roofline.shapes may not, and a metadata entry must be an object. */
    {"atrex roofline names an unknown shape", ATREX, "roofline.json", "/shapes/9", "{}",
     "/roofline.json: shapes.9: expected a shape id of shapes.json; got \"9\""},
    {"atrex metadata shape not an object", ATREX, "metadata.json", "/shapes/9", "[]",
     "/metadata.json: shapes.9: expected an object; got an array"},
    {"atrex negative roofline bytes", ATREX, "roofline.json", "/shapes/0/semantic_Q_read_bytes",
     "-8", "/roofline.json: shapes.0: semantic_Q_read_bytes: expected an integer >= 0"},
    {"atrex invalid distributed contract", ATREX, "metadata.json", "/benchmark_contract",
     "{\"distributed_evaluation\": {\"launcher\": \"torchrun\", \"backend\": \"nccl\", "
     "\"world_size\": 1}}",
     "/metadata.json: benchmark_contract.distributed_evaluation.world_size: expected an integer "
     "from 2"},
    {"agent_problem wrong schema", ATREX, "agent_problem.json", "/schema_version",
     "\"atrex.agent_problem.v2\"",
     "/agent_problem.json: schema_version: expected \"atrex.agent_problem.v1\"; got "
     "\"atrex.agent_problem.v2\""},
    {"agent_problem public cases", ATREX, "agent_problem.json", "/evaluation/exact_cases",
     "\"public\"",
     "/agent_problem.json: evaluation.exact_cases: expected \"private\"; got \"public\""},
    {"agent_problem extra key", ATREX, "agent_problem.json", "/notes", "\"x\"",
     "/agent_problem.json: notes: unknown field"},
    {"agent_problem leaks a private case", ATREX, "agent_problem.json",
     "/development_cases/0/input_kwargs", "{\"n\": 4}",
     "/agent_problem.json: development_cases[0]: expected no exact private case; got shapes.json "
     "case \"0\""},
    {"agent_problem empty invariant", ATREX, "agent_problem.json", "/invariants", "[\"\"]",
     "/agent_problem.json: invariants[0]: expected a non-empty string; got an empty string"},
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

static void write_case_file(const char *dir, const struct bad_case *c)
{
    struct strbuf p = STRBUF_INIT, text = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(&p, dir, c->file);
    if (!c->pointer && !c->value) {
        assert_int_equal(unlink(p.buf), 0);
    } else if (!c->pointer) {
        write_text(dir, c->file, c->value);
    } else {
        json_t *doc = NULL;
        const char *base = base_text(c->base, c->file);
        assert_non_null(base);
        assert_int_equal(aka_json_load_buf(c->file, base, strlen(base), &doc, &err), 0);
        json_edit(doc, c->pointer, c->value);
        aka_json_dump_compact(doc, &text);
        write_text(dir, c->file, text.buf);
        json_decref(doc);
    }
    strbuf_release(&p);
    strbuf_release(&text);
}

static void make_dir(enum base b, struct strbuf *dir)
{
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(aka_make_temp_dir(NULL, "aka-test-op", dir, &err), 0);
    for (const struct file *f = base_files(b); f->name; f++)
        write_text(dir->buf, f->name, f->text);
}

static void remove_dir(const char *dir)
{
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(aka_remove_tree(dir, &err), 0);
}

static void t_bad_case(void **state)
{
    const struct bad_case *c = *state;
    struct strbuf dir = STRBUF_INIT, before = STRBUF_INIT, after = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct aka_operator op;

    make_dir(c->base, &dir);
    if (c->file)
        write_case_file(dir.buf, c);
    snapshot(dir.buf, &before);
    int rc = aka_operator_load(dir.buf, &op, &err);
    snapshot(dir.buf, &after);
    if (rc == 0 || !strstr(err.msg, c->expect))
        print_error("case '%s'\n  want ...%s\n  got  %s\n", c->what, c->expect,
                    rc == 0 ? "(loaded fine)" : err.msg);
    assert_int_equal(rc, -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    assert_non_null(strstr(err.msg, c->expect));
    assert_int_equal(strncmp(err.msg, dir.buf, dir.len), 0); /* names the file under op_dir */
    assert_null(strchr(err.msg, '\n'));                      /* one line */
    assert_int_equal(before.len, after.len);                 /* nothing written */
    assert_memory_equal(before.buf, after.buf, before.len);
    aka_operator_release(&op); /* released already; must stay safe */
    remove_dir(dir.buf);
    strbuf_release(&dir);
    strbuf_release(&before);
    strbuf_release(&after);
}

/* ---- valid operators ------------------------------------------------------------------------- */

/* Atrex inputs are Model.forward's parameters in order, dtypes from metadata.json where it
 * names them (layer_norm's metadata names only x; forward takes x, weight, bias). */
static void t_atrex_inputs_from_signature(void **state)
{
    (void)state;
    struct strbuf dir = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct aka_operator op;
    make_dir(ATREX, &dir);
    write_text(dir.buf, "reference.py",
               "import torch.nn as nn\n\n\nclass Model(nn.Module):\n"
               "    def helper(self, q):\n        return q\n\n"
               "    def forward(self, x: torch.Tensor,\n                weight: \"Tensor[int]\","
               " bias=None,\n                shape: tuple[int, int] = (1, 2)) -> torch.Tensor:\n"
               "        return x\n");
    if (aka_operator_load(dir.buf, &op, &err) < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(op.inputs.n, 4);
    const char *names[] = {"x", "weight", "bias", "shape"};
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(op.inputs.v[i].name, names[i]);
    assert_string_equal(op.inputs.v[0].dtype_name, "bf16");
    assert_string_equal(op.inputs.v[1].dtype_name, "unknown");
    aka_operator_release(&op);
    remove_dir(dir.buf);
    strbuf_release(&dir);
}

/* A metadata.json describing a shape that shapes.json lacks loads (the official evaluator
 * accepts it); the operator's shapes stay those of shapes.json. */
static void t_metadata_extra_shape(void **state)
{
    (void)state;
    static const struct bad_case extra = {"metadata extra shape",
                                          ATREX,
                                          "metadata.json",
                                          "/shapes/9",
                                          "{\"description\": \"not evaluated\"}",
                                          ""};
    struct strbuf dir = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct aka_operator op;
    make_dir(ATREX, &dir);
    write_case_file(dir.buf, &extra);
    if (aka_operator_load(dir.buf, &op, &err) < 0)
        fail_msg("%s", err.msg);
    assert_null(aka_operator_find_shape(&op, "9"));
    aka_operator_release(&op);
    remove_dir(dir.buf);
    strbuf_release(&dir);
}

static void t_bases_load(void **state)
{
    static const enum base bases[] = {NATIVE, SOL, ATREX};
    static const char *const names[] = {"native", "sol", "atrex"};
    for (size_t i = 0; i < 3; i++) {
        struct strbuf dir = STRBUF_INIT;
        struct aka_err err = AKA_ERR_INIT;
        struct aka_operator op;
        make_dir(bases[i], &dir);
        if (aka_operator_load(dir.buf, &op, &err) < 0)
            fail_msg("base %s: %s", names[i], err.msg);
        assert_string_equal(aka_layout_name(op.layout), names[i]);
        aka_operator_release(&op);
        remove_dir(dir.buf);
        strbuf_release(&dir);
    }
}

static const struct {
    const char *dir;
    const char *layout;
    size_t n_in, n_out, n_shapes;
} examples[] = {
    {"vector_add", "native", 2, 1, 3},   {"row_softmax", "native", 1, 1, 4},
    {"matmul", "native", 2, 1, 5},       {"row_sum_cuda", "native", 1, 1, 4},
    {"rmsnorm", "atrex", 2, 1, 5},       {"silu_and_mul", "atrex", 1, 1, 4},
    {"allreduce_sum", "atrex", 1, 1, 3}, {"rope", "sol", 3, 1, 4},
};

static void check_example(const char *name, const struct aka_operator *op)
{
    for (size_t i = 0; i < sizeof(examples) / sizeof(examples[0]); i++) {
        if (strcmp(examples[i].dir, name) != 0)
            continue;
        assert_string_equal(aka_layout_name(op->layout), examples[i].layout);
        assert_int_equal(op->inputs.n, examples[i].n_in);
        assert_int_equal(op->outputs.n, examples[i].n_out);
        assert_int_equal(op->shapes.n, examples[i].n_shapes);
        return;
    }
    /* An example added later without a row above must still load as some layout. */
    assert_int_not_equal(op->layout, AKA_LAYOUT_NONE);
}

/* Every directory under examples/ops loads; the ones in the table load as described. */
static void t_examples_load(void **state)
{
    struct strvec names = STRVEC_INIT;
    struct strbuf root = STRBUF_INIT, dir = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    size_t found = 0;

    aka_path_join(&root, AKA_SOURCE_DIR, "examples/ops");
    assert_int_equal(aka_list_dir(root.buf, &names, &err), 0);
    for (size_t i = 0; i < names.n; i++) {
        struct aka_operator op;
        aka_path_join(&dir, root.buf, names.v[i]);
        if (!aka_is_dir(dir.buf))
            continue;
        if (aka_operator_load(dir.buf, &op, &err) < 0)
            fail_msg("%s: %s", names.v[i], err.msg);
        check_example(names.v[i], &op);
        json_t *j = aka_operator_to_json(&op);
        assert_non_null(j);
        assert_string_equal(json_string_value(json_object_get(j, "layout")),
                            aka_layout_name(op.layout));
        json_decref(j);
        aka_operator_release(&op);
        found++;
    }
    for (size_t i = 0; i < sizeof(examples) / sizeof(examples[0]); i++)
        assert_true(strvec_find(&names, examples[i].dir) >= 0);
    assert_true(found >= sizeof(examples) / sizeof(examples[0]));
    strvec_clear(&names);
    strbuf_release(&root);
    strbuf_release(&dir);
}

static void t_distributed_example(void **state)
{
    struct aka_operator op;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf dir = STRBUF_INIT;
    aka_path_join(&dir, AKA_SOURCE_DIR, "examples/ops/allreduce_sum");
    assert_int_equal(aka_operator_load(dir.buf, &op, &err), 0);
    assert_true(op.contract.explicit_distributed);
    assert_int_equal(op.contract.world_size, 2);
    assert_false(op.contract.source_policy_inspection);
    aka_operator_release(&op);
    strbuf_release(&dir);
}

static void t_native_details(void **state)
{
    struct aka_operator op;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf dir = STRBUF_INIT;
    aka_path_join(&dir, AKA_SOURCE_DIR, "examples/ops/row_softmax");
    assert_int_equal(aka_operator_load(dir.buf, &op, &err), 0);
    assert_int_equal(op.native.language, AKA_LANG_C);
    assert_string_equal(op.native.reference_file, "reference.c");
    assert_string_equal(op.native.entry, "aka_kernel");
    assert_int_equal(op.native.params.n, 1);
    assert_true(op.native.params.v[0].is_float);
    assert_non_null(json_object_get(op.native.tune, "ACC"));
    const struct aka_shape *s = aka_operator_find_shape(&op, "r33_c1000");
    assert_non_null(s);
    assert_int_equal(aka_dim_find(&s->dims, "COLS")->value, 1000);
    aka_operator_release(&op);
    strbuf_release(&dir);
}

/* SOL: per-workload axes resolve const and expr axes, and tolerances fall back to defaults. */
static void t_sol_axes(void **state)
{
    struct aka_operator op;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf dir = STRBUF_INIT;
    aka_path_join(&dir, AKA_SOURCE_DIR, "examples/ops/rope");
    assert_int_equal(aka_operator_load(dir.buf, &op, &err), 0);
    const struct aka_shape *s = &op.shapes.v[1];
    assert_int_equal(aka_dim_find(&s->dims, "tokens")->value, 37);
    assert_int_equal(aka_dim_find(&s->dims, "half_dim")->value, 64);
    assert_false(s->has_tolerance);
    assert_true(op.shapes.v[2].has_tolerance);
    assert_true(op.shapes.v[2].tolerance.matched_ratio > 0.998);
    assert_true(op.sol.has_solution);
    assert_true(op.sol.solution.destination_passing);
    assert_string_equal(op.sol.solution.entry_function, "run");
    aka_operator_release(&op);
    strbuf_release(&dir);
}

static void t_shape_expr(void **state)
{
    struct aka_dim_values dims = {0};
    char why[128];
    long long v = 0;
    aka_dim_push(&dims, "N", 12);
    aka_dim_push(&dims, "K", 5);
    assert_int_equal(aka_shape_expr_eval("2*N + K", &dims, &v, why, sizeof(why)), 0);
    assert_int_equal(v, 29);
    assert_int_equal(aka_shape_expr_eval("(N - K) * -2", &dims, &v, why, sizeof(why)), 0);
    assert_int_equal(v, -14);
    assert_int_equal(aka_shape_expr_eval("N/4", &dims, &v, why, sizeof(why)), 0);
    assert_int_equal(v, 3);
    assert_int_equal(aka_shape_expr_eval("K // 2 + K % 2 + 2**3", &dims, &v, why, sizeof(why)), 0);
    assert_int_equal(v, 11);
    assert_int_equal(aka_shape_expr_eval("-7 // 2", &dims, &v, why, sizeof(why)), 0);
    assert_int_equal(v, -4);
    assert_int_equal(aka_shape_expr_eval("N/5", &dims, &v, why, sizeof(why)), -1);
    assert_string_equal(why, "12/5 does not divide exactly (use // to round down)");
    assert_int_equal(aka_shape_expr_eval("N/(K-5)", &dims, &v, why, sizeof(why)), -1);
    assert_string_equal(why, "division by zero");
    assert_int_equal(aka_shape_expr_eval("N*M", &dims, &v, why, sizeof(why)), -1);
    assert_string_equal(why, "undefined dim 'M'");
    assert_int_equal(aka_shape_expr_eval("9223372036854775807 + 1", &dims, &v, why, sizeof(why)),
                     -1);
    assert_int_equal(aka_shape_expr_eval("N +", &dims, &v, why, sizeof(why)), -1);
    assert_int_equal(aka_shape_expr_eval("", &dims, &v, why, sizeof(why)), -1);
    assert_int_equal(aka_shape_expr_eval("2 ** 2 ** 70", &dims, &v, why, sizeof(why)), -1);
    for (size_t i = 0; i < dims.n; i++)
        free(dims.v[i].name);
    VEC_FREE(dims);
}

/* The harness passes operator dtypes straight through: the codes must agree. */
static void t_abi_dtype_codes(void **state)
{
    assert_int_equal(AKA_DTYPE_FLOAT32, AKA_DT_FLOAT32);
    assert_int_equal(AKA_DTYPE_FLOAT64, AKA_DT_FLOAT64);
    assert_int_equal(AKA_DTYPE_FLOAT16, AKA_DT_FLOAT16);
    assert_int_equal(AKA_DTYPE_BFLOAT16, AKA_DT_BFLOAT16);
    assert_int_equal(AKA_DTYPE_INT8, AKA_DT_INT8);
    assert_int_equal(AKA_DTYPE_INT16, AKA_DT_INT16);
    assert_int_equal(AKA_DTYPE_INT32, AKA_DT_INT32);
    assert_int_equal(AKA_DTYPE_INT64, AKA_DT_INT64);
    assert_int_equal(AKA_DTYPE_UINT8, AKA_DT_UINT8);
    assert_int_equal(AKA_DTYPE_BOOL, AKA_DT_BOOL);
    for (int d = 0; d < AKA_DTYPE_COUNT; d++)
        assert_int_equal(aka_dtype_parse(aka_dtype_name(d)), d);
}

static void t_missing_dir(void **state)
{
    struct aka_operator op;
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(aka_operator_load("/nonexistent/aka-op", &op, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    assert_string_equal(
        err.msg, "/nonexistent/aka-op: expected an operator directory; got no such directory");
}

int main(void)
{
    static const struct CMUnitTest fixed[] = {
        cmocka_unit_test(t_bases_load),
        cmocka_unit_test(t_metadata_extra_shape),
        cmocka_unit_test(t_atrex_inputs_from_signature),
        cmocka_unit_test(t_examples_load),
        cmocka_unit_test(t_distributed_example),
        cmocka_unit_test(t_native_details),
        cmocka_unit_test(t_sol_axes),
        cmocka_unit_test(t_shape_expr),
        cmocka_unit_test(t_abi_dtype_codes),
        cmocka_unit_test(t_missing_dir),
    };
    size_t n_fixed = sizeof(fixed) / sizeof(fixed[0]);
    struct CMUnitTest *tests = calloc(n_fixed + N_CASES, sizeof(*tests));
    memcpy(tests, fixed, sizeof(fixed));
    /* One named test per malformed case, so a failure names the case. */
    for (size_t i = 0; i < N_CASES; i++) {
        struct CMUnitTest t = {cases[i].what, t_bad_case, NULL, NULL, (void *)&cases[i]};
        tests[n_fixed + i] = t;
    }
    int rc = _cmocka_run_group_tests("test_operator", tests, n_fixed + N_CASES, NULL, NULL);
    free(tests);
    return rc;
}
