/*
 * test_policy.c — the source policy (src/policy/): its two tokenizers on the
 * edge cases that decide whether code is code (strings, comments, f-string
 * fields, line continuations and splices), alias following, dynamic access,
 * and the report.
 */
#include "aka_test.h"

#include "base/fs.h"
#include "policy/policy.h"

#include <stdlib.h>
#include <string.h>

/* A clean Triton kernel that the cases below extend with one more line. */
#define TRITON_HEAD                                                                                \
    "import torch\n"                                                                               \
    "import triton\n"                                                                              \
    "import triton.language as tl\n"                                                               \
    "\n"                                                                                           \
    "@triton.jit\n"                                                                                \
    "def _k(x_ptr, n, BLOCK: tl.constexpr):\n"                                                     \
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"                                  \
    "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n"            \
    "\n"                                                                                           \
    "def run(a, b):\n"                                                                             \
    "    out = torch.empty_like(a)\n"                                                              \
    "    _k[(1,)](out, a.numel(), BLOCK=1024)\n"
/* TRITON_HEAD has 12 lines; the first added line is line 13. */

#define CUDA_HEAD                                                                                  \
    "#include \"aka_native_abi.h\"\n"                                                              \
    "#include <cuda_runtime.h>\n"                                                                  \
    "__global__ void k(float *x) { x[threadIdx.x] = 0.0f; }\n"                                     \
    "extern \"C\" int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs,\n"       \
    "                            int n_out, const aka_params *params)\n"                           \
    "{\n"                                                                                          \
    "    k<<<1, 32, 0, (cudaStream_t)params->stream>>>((float *)outputs[0].data);\n"
/* CUDA_HEAD has 7 lines; the first added line is line 8. The caller closes the brace. */

static struct aka_policy_report report;

/* Write src as NAME in the scratch dir and check it; the aka_policy_check return code. */
static int check(const char *fw, const char *name, const char *src, struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    aka_path_join(&path, aka_scratch_dir(), name);
    assert_int_equal(aka_write_file_atomic(path.buf, src, strlen(src), 0644, err), 0);
    aka_policy_report_free(&report);
    int rc = aka_policy_check(fw, path.buf, &report, err);
    strbuf_release(&path);
    return rc;
}

static void check_ok(const char *fw, const char *name, const char *src)
{
    struct aka_err err = AKA_ERR_INIT;
    if (check(fw, name, src, &err) < 0)
        fail_msg("%s", err.msg);
}

/* Is there a violation of rule on line (0: any line)? */
static bool has(const char *rule, int line)
{
    for (size_t k = 0; k < report.n; k++)
        if (strcmp(report.v[k].rule, rule) == 0 && (line == 0 || report.v[k].line == line))
            return true;
    return false;
}

static void print_report(void)
{
    for (size_t k = 0; k < report.n; k++)
        print_message("  %d:%d %s: %s\n", report.v[k].line, report.v[k].column, report.v[k].rule,
                      report.v[k].message);
}

static void expect_clean(const char *fw, const char *name, const char *src)
{
    check_ok(fw, name, src);
    if (report.n)
        print_report();
    assert_int_equal(report.n, 0);
}

static void expect(const char *fw, const char *name, const char *src, const char *rule, int line)
{
    check_ok(fw, name, src);
    if (!has(rule, line)) {
        print_report();
        fail_msg("expected %s on line %d", rule, line);
    }
}

/* expect, and the violation's message names what was resolved (e.g. the aliased call). */
static void expect_named(const char *fw, const char *name, const char *src, const char *rule,
                         int line, const char *what)
{
    expect(fw, name, src, rule, line);
    for (size_t k = 0; k < report.n; k++)
        if (strcmp(report.v[k].rule, rule) == 0 && report.v[k].line == line &&
            strstr(report.v[k].message, what))
            return;
    print_report();
    fail_msg("expected %s on line %d to name %s", rule, line, what);
}

static void t_py_strings_and_comments_are_not_code(void **state)
{
    expect_clean("triton", "s1.py",
                 TRITON_HEAD "    s = 'torch.matmul(a, b) and import subprocess'\n"
                             "    # torch.matmul(a, b); import socket; exec('x')\n"
                             "    t = \"\"\"eval(x)\n  torch.mm(a, b)\n  open(f)\"\"\"\n"
                             "    r = r'\\'torch.exp(a)' + b'socket' + rb\"ctypes\"\n"
                             "    u = 'it\\'s __import__(\"os\")'\n"
                             "    return out\n");
    /* a docstring may mention evaluator files; a string literal used as a path may not */
    expect_clean("triton", "s2.py",
                 "\"\"\"Reads nothing: not reference.py, not plan.json.\"\"\"\n" TRITON_HEAD
                 "    return out\n");
    expect("triton", "s3.py", TRITON_HEAD "    p = 'pl' 'an\\x2ejson'\n    return out\n",
           "evaluator-files", 13);
}

static void t_py_fstring_fields_are_code(void **state)
{
    expect("triton", "f1.py",
           TRITON_HEAD "    s = f\"{a.shape} then {torch.matmul(a, b)!r:>{10}}\"\n    return out\n",
           "torch-compute", 13);
    /* doubled braces are text, not a field */
    expect_clean("triton", "f2.py",
                 TRITON_HEAD
                 "    s = f'{{torch.matmul(a, b)}} {a.shape[0]:{4}d}'\n    return out\n");
    /* a nested string inside a field, and a field inside a triple-quoted f-string */
    expect("triton", "f3.py",
           TRITON_HEAD "    s = f'''x\n{ {\"k\": 1}[\"k\"] + len(__import__(\"os\").sep) }'''\n"
                       "    return out\n",
           "dynamic-access", 14);
}

static void t_py_line_continuations(void **state)
{
    expect("triton", "c1.py",
           TRITON_HEAD "    y = torch \\\n        .matmul(a, b)\n    return out\n", "torch-compute",
           13);
    expect("triton", "c2.py",
           TRITON_HEAD "    y = (torch\n         .nn\n         .functional.softmax(a, -1))\n"
                       "    return out\n",
           "torch-compute", 13);
}

static void t_py_aliases_are_followed(void **state)
{
    /* cdist, hardswish and scaled_dot_product_attention are no tensor-method rows: only the
     * alias resolution can tell that these calls are torch */
    expect_named("triton", "a1.py", "import torch as t\n" TRITON_HEAD "    return t.cdist(a, b)\n",
                 "torch-compute", 14, "torch.cdist");
    expect_named("triton", "a2.py",
                 "from torch import cdist as dist\n" TRITON_HEAD "    return dist(a, b)\n",
                 "torch-compute", 14, "torch.cdist");
    expect_named("triton", "a3.py",
                 TRITON_HEAD "    return G.scaled_dot_product_attention(a, b, b)\n"
                             "F = torch.nn.functional\nG = F\n",
                 "torch-compute", 13, "torch.nn.functional.scaled_dot_product_attention");
    expect_named("triton", "a4.py",
                 "import torch.nn.functional as F\n" TRITON_HEAD "    return F.hardswish(a)\n",
                 "torch-compute", 14, "torch.nn.functional.hardswish");
    expect_named("triton", "a5.py",
                 "from os import system as run_it\n" TRITON_HEAD
                 "    run_it('true')\n    return out\n",
                 "process", 14, "os.system");
    expect_named("triton", "a6.py",
                 "import torch as t\nhw = t.nn.functional.hardswish\n" TRITON_HEAD
                 "    return hw(a)\n",
                 "torch-compute", 15, "torch.nn.functional.hardswish");
    /* an alias of an allowed call stays allowed */
    expect_clean("triton", "a7.py",
                 "alloc = torch.empty_like\n" TRITON_HEAD "    b2 = alloc(b)\n    return out\n");
}

static void t_py_tensor_methods_and_names(void **state)
{
    /* tensor compute on the host is refused; the same names inside a kernel are the DSL's */
    expect("triton", "m1.py", TRITON_HEAD "    return a.softmax(-1)\n", "torch-compute", 13);
    expect_clean("triton", "m2.py",
                 "import torch\nimport triton\nimport triton.language as tl\n"
                 "@triton.jit\ndef _k(x_ptr, BLOCK: tl.constexpr):\n"
                 "    x = tl.load(x_ptr + tl.arange(0, BLOCK))\n"
                 "    tl.store(x_ptr, x.sum(axis=0) + (x @ x).exp().sum())\n"
                 "def run(a):\n    _k[(1,)](a, BLOCK=16)\n    return a\n");
    /* Python folds fullwidth letters to ASCII (NFKC): the name cannot be trusted */
    expect("triton", "m3.py", TRITON_HEAD "    return \xef\xbd\x94orch.cdist(a, b)\n",
           "dynamic-access", 13);
}

static void t_py_dynamic_access(void **state)
{
    static const char *const cases[] = {
        "    f = getattr(torch, 'mat' + 'mul')\n",
        "    f = getattr(torch, NAME)\n",
        "    m = __import__('torch')\n",
        "    import importlib\n",
        "    exec('y = 1')\n",
        "    y = eval('a')\n",
        "    c = compile('1', 'x', 'eval')\n",
        "    g = globals()['torch']\n",
        "    v = vars(torch)\n",
        "    import sys; m = sys.modules['torch']\n",
        "    import ctypes\n",
        "    import cffi\n",
        "    y = torch.ops.aten.mm(a, b)\n",
        "    from torch.utils.cpp_extension import load_inline\n",
        "    torch.library.define('x::y', '(Tensor a) -> Tensor')\n",
        "    d = torch.__dict__['matmul']\n",
        "    from torch import *\n",
        NULL};
    for (const char *const *c = cases; *c; c++) {
        struct strbuf src = STRBUF_INIT;
        strbuf_addf(&src, "%s%s    return out\n", TRITON_HEAD, *c);
        print_message("case: %s", *c);
        expect("triton", "d.py", src.buf, "dynamic-access", 13);
        strbuf_release(&src);
    }
    /* getattr with a literal name is the attribute itself */
    expect("triton", "d2.py", TRITON_HEAD "    return getattr(torch, 'matmul')(a, b)\n",
           "torch-compute", 13);
    expect_clean("triton", "d3.py", TRITON_HEAD "    s = getattr(a, 'shape')\n    return out\n");
}

static void t_py_requirements(void **state)
{
    /* defined but launched only from a function the entry point never calls */
    expect("triton", "r1.py",
           "import torch\nimport triton\nimport triton.language as tl\n"
           "@triton.jit\ndef _k(x):\n    pass\n"
           "def unused(a):\n    _k[(1,)](a)\n"
           "def run(a):\n    return torch.empty_like(a)\n",
           "requires-launch", 1);
    /* launched through a helper the entry point calls */
    expect_clean("triton", "r2.py",
                 "import torch\nimport triton\nimport triton.language as tl\n"
                 "@triton.jit\ndef _k(x):\n    pass\n"
                 "def helper(a):\n    _k[(1,)](a)\n"
                 "def run(a):\n    helper(a)\n    return a\n");
    expect("gluon", "r3.py", TRITON_HEAD "    return out\n", "gluon-latch", 1);
}

static void t_py_tokenize_errors(void **state)
{
    static const struct {
        const char *src, *want;
    } cases[] = {
        {"x = 'abc\n", "t.py:1:5: does not tokenize as Python: unterminated string"},
        {"x = '''abc\n\n", "t.py:1:5: does not tokenize as Python: unterminated triple-quoted"},
        {"x = (1,\n", "t.py:2:1: does not tokenize as Python: end of file inside an open '('"},
        {"x = [1)\n", "t.py:1:7: does not tokenize as Python: unbalanced ')'"},
        {"x = f'{a'\n", "t.py:1:9: does not tokenize as Python"},
        {"x = 1 $ 2\n", "t.py:1:7: does not tokenize as Python: unexpected character '$'"},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        struct aka_err err = AKA_ERR_INIT;
        assert_int_equal(check("triton", "t.py", cases[k].src, &err), -1);
        assert_int_equal(err.code, AKA_EXIT_USAGE);
        if (!strstr(err.msg, cases[k].want))
            fail_msg("got \"%s\", expected \"%s\"", err.msg, cases[k].want);
    }
}

static void t_c_comments_strings_and_splices(void **state)
{
    expect_clean("cuda", "k1.cu",
                 CUDA_HEAD "    // cublasSgemm(h); #include <cublas_v2.h>\n"
                           "    /* system(\"x\"); clock_gettime(0, 0);\n"
                           "    #include <thrust/reduce.h> */\n"
                           "    const char *s = \"cublasSgemm fopen system\";\n"
                           "    char c = '\"'; (void)s; (void)c;\n"
                           "    // a spliced comment goes on \\\n"
                           "    cublasSgemm(h);\n"
                           "    return 0;\n}\n");
    /* a splice inside an identifier joins it; inside an include too */
    expect("cuda", "k2.cu", CUDA_HEAD "    cubl\\\nasSgemm(0);\n    return 0;\n}\n",
           "prebuilt-library", 8);
    expect("cuda", "k3.cu", "#include <cub\\\nlas_v2.h>\n" CUDA_HEAD "    return 0;\n}\n",
           "prebuilt-library", 1);
    /* members are fields, not the libc functions of that name */
    expect_clean("c", "k4.c",
                 "#include \"aka_native_abi.h\"\nstruct s { int time, read; };\n"
                 "int aka_kernel(const aka_tensor *inputs, int n_in, aka_tensor *outputs, "
                 "int n_out, const aka_params *params)\n"
                 "{ struct s v = {0}; struct s *p = &v; return v.time + p->read; }\n");
    expect("c", "k5.c",
           "#include \"aka_native_abi.h\"\n#define GO(x) sys##x\n"
           "int aka_kernel(void) { return 0; }\n",
           "dynamic-access", 2);
}

static void t_c_requirements(void **state)
{
    /* a template kernel launched with template arguments counts */
    expect_clean("cuda", "l1.cu",
                 "#include \"aka_native_abi.h\"\n"
                 "template <int B> __global__ void __launch_bounds__(B) k(float *x) {}\n"
                 "extern \"C\" int aka_kernel(const aka_tensor *inputs, int n_in, "
                 "aka_tensor *outputs, int n_out, const aka_params *params)\n"
                 "{ k<128><<<1, 128>>>((float *)outputs[0].data); return 0; }\n");
    expect("cuda", "l2.cu",
           "#include \"aka_native_abi.h\"\n__global__ void k(float *x) {}\n"
           "extern \"C\" int aka_kernel(void) { return 0; }\n",
           "requires-launch", 1);
    expect("c", "l3.c", "int kernel(void) { return 0; }\n", "requires-entry", 1);
}

static void t_c_input_pointer_cache(void **state)
{
    static const char head[] = "#include \"aka_native_abi.h\"\nstatic const void *last;\n"
                               "int aka_kernel(const aka_tensor *inputs, int n_in, "
                               "aka_tensor *outputs, int n_out, const aka_params *params)\n{\n";
    struct strbuf src = STRBUF_INIT;
    strbuf_addf(&src,
                "%s    if (last != NULL && inputs[0].data == last)\n        return 0;\n"
                "    last = inputs[0].data;\n    return 0;\n}\n",
                head);
    expect("c", "p1.c", src.buf, "input-cache", 5);
    strbuf_reset(&src);
    /* a null check is not a cache */
    strbuf_addf(&src,
                "%s    if (inputs[0].data == NULL || outputs[0].data == 0)\n        return 1;\n"
                "    return 0;\n}\n",
                head);
    expect_clean("c", "p2.c", src.buf);
    strbuf_release(&src);
}

static void t_bad_input(void **state)
{
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(check("tritonn", "b.py", "x = 1\n", &err), -1);
    assert_non_null(strstr(err.msg, "--framework: expected one of"));
    aka_err_clear(&err);
    assert_int_equal(check("cuda", "b.py", "x = 1\n", &err), -1);
    assert_non_null(strstr(err.msg, "framework cuda expects a CUDA source"));
    aka_err_clear(&err);
    assert_int_equal(check("c", "b.c", "/* open\n", &err), -1);
    assert_non_null(strstr(err.msg, "b.c:1:1: does not tokenize as C/CUDA: unterminated comment"));
    aka_err_clear(&err);
    assert_int_equal(aka_policy_check("c", "/nonexistent/k.c", &report, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
}

static void t_report_json(void **state)
{
    check_ok("triton", "j.py", TRITON_HEAD "    return torch.mm(a, b)\n");
    char *json = aka_policy_report_json(&report);
    assert_non_null(strstr(json, "\"clean\": false"));
    assert_non_null(strstr(json, "\"rule\": \"torch-compute\""));
    assert_non_null(strstr(json, "\"line\": 13"));
    assert_non_null(strstr(json, "\"column\": 12"));
    free(json);
    struct aka_policy_report empty = {0};
    json = aka_policy_report_json(&empty);
    assert_non_null(strstr(json, "\"clean\": true"));
    free(json);
    enum aka_policy_fw fw;
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(aka_policy_framework("Triton-Gluon", &fw, &err), 0);
    assert_int_equal(fw, AKA_FW_GLUON);
    assert_int_equal(aka_policy_framework("native C", &fw, &err), 0);
    assert_int_equal(fw, AKA_FW_NATIVE_C);
    aka_policy_report_free(&report);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_py_strings_and_comments_are_not_code),
        cmocka_unit_test(t_py_fstring_fields_are_code),
        cmocka_unit_test(t_py_line_continuations),
        cmocka_unit_test(t_py_aliases_are_followed),
        cmocka_unit_test(t_py_tensor_methods_and_names),
        cmocka_unit_test(t_py_dynamic_access),
        cmocka_unit_test(t_py_requirements),
        cmocka_unit_test(t_py_tokenize_errors),
        cmocka_unit_test(t_c_comments_strings_and_splices),
        cmocka_unit_test(t_c_requirements),
        cmocka_unit_test(t_c_input_pointer_cache),
        cmocka_unit_test(t_bad_input),
        cmocka_unit_test(t_report_json),
    };
    return cmocka_run_group_tests(tests, aka_scratch_setup, aka_scratch_teardown);
}
