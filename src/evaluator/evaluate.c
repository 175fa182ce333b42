/*
 * evaluate.c — owns aka_evaluate and everything around it (evaluator.h): platform
 * and framework names, plan.json for native operators, the per-layout sandbox
 * job (allowlist, command, environment), turning the job's output into a
 * verdict, and the episode-mode pieces of `aka eval` (the campaign's pinned inputs,
 * through workspace/, and evaluations.jsonl).
 *
 * The rule behind every branch of the interpretation: the only way to a pass is
 * one well-formed RESULT_JSON line that names the bytes aka shipped and the id
 * aka chose, from a command that exited 0. Everything else is a failed
 * evaluation with a reason a kernel engineer can act on, unless the fault is
 * provably not the candidate's (operator, flags, machine), which is an error.
 */
#include "evaluator/evaluator.h"

#include "base/fs.h"
#include "base/json.h"
#include "base/proc.h"
#include "base/sha256.h"
#include "workspace/workspace.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define PLAN_SCHEMA   "aka.native.plan.v1"
#define RECORD_SCHEMA "aka.evaluation.v1"
/* Diagnostics keep the head of the compiler's output: the first errors are the causes. */
#define DIAG_MAX 4000

const char *const aka_eval_timed_input_modes[] = {"auto", "seeded", "sent", NULL};
const char *const aka_eval_timing_modes[] = {"auto", "events", "kernel-span", NULL};

/* ---- frameworks ------------------------------------------------------------ */

/* PyTorch: a plain PyTorch candidate for the PyTorch layouts (the reference itself, V0). */
static const char *const frameworks[] = {"C",        "Cuda",   "Triton",  "Gluon", "CuteDSL",
                                         "TileLang", "FlyDSL", "PyTorch", NULL};

const char *aka_eval_framework(const char *s)
{
    for (int i = 0; s && frameworks[i]; i++)
        if (strcasecmp(s, frameworks[i]) == 0)
            return frameworks[i];
    return NULL;
}

/* ---- small helpers ----------------------------------------------------------------------- */

static void new_eval_id(char *out, size_t n)
{
    unsigned char r[6] = {0};
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
        long v = (long)getpid() ^ (long)now;
        memcpy(r, &v, sizeof(r) < sizeof(v) ? sizeof(r) : sizeof(v));
    }
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
    snprintf(out, n, "%s-%02x%02x%02x%02x%02x%02x", stamp, r[0], r[1], r[2], r[3], r[4], r[5]);
}

/* "32768K", "1M", "1048576" → bytes; 0 when unreadable. */
static long long parse_size(const char *s)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || v <= 0)
        return 0;
    if (*end == 'K')
        v <<= 10;
    else if (*end == 'M')
        v <<= 20;
    return v;
}

/* The cache of the highest level cpu0 sees (the L3 slice one core shares), from sysfs. */
static long long host_llc_bytes(void)
{
    long long best = 0;
    int best_level = 0;
    for (int i = 0; i < 16; i++) {
        char path[128];
        struct strbuf lv = STRBUF_INIT, sz = STRBUF_INIT;
        struct aka_err e = AKA_ERR_INIT;
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        if (aka_read_file(path, &lv, 8192, &e) == 0) {
            snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
            int level = atoi(lv.buf);
            if (level > best_level && aka_read_file(path, &sz, 8192, &e) == 0) {
                best_level = level;
                best = parse_size(sz.buf);
            }
        }
        strbuf_release(&lv);
        strbuf_release(&sz);
    }
    return best;
}

/* ---- shape selection ---------------------------------------------------------------------- */

static bool wanted(const struct strvec *ids, const char *id)
{
    return !ids || ids->n == 0 || strvec_find(ids, id) >= 0;
}

/* Every requested id must exist: a typo would otherwise evaluate nothing and "pass". */
static int check_shape_ids(const struct aka_operator *op, const struct strvec *ids,
                           struct aka_err *err)
{
    for (size_t i = 0; ids && i < ids->n; i++) {
        if (aka_operator_find_shape(op, ids->v[i]))
            continue;
        struct strbuf known = STRBUF_INIT;
        for (size_t k = 0; k < op->shapes.n && k < 20; k++)
            strbuf_addf(&known, "%s%s", k ? ", " : "", op->shapes.v[k].id);
        aka_err_set(err, AKA_EXIT_USAGE, "--shape-id %s: no such shape in %s (shapes: %s%s)",
                    ids->v[i], op->dir, known.buf, op->shapes.n > 20 ? ", ..." : "");
        strbuf_release(&known);
        return -1;
    }
    return 0;
}

/* The selected shape ids, in operator order. */
static void selected_ids(const struct aka_operator *op, const struct strvec *ids,
                         struct strvec *out)
{
    for (size_t i = 0; i < op->shapes.n; i++)
        if (wanted(ids, op->shapes.v[i].id))
            strvec_push(out, op->shapes.v[i].id);
}

/* ---- plan.json for native operators -------------------------------------------------------- */

static int tensor_json(const struct aka_operator *op, const struct aka_tensor_spec *t,
                       const struct aka_shape *s, bool output, json_t *arr, struct aka_err *err)
{
    json_t *shape = json_array();
    char why[160];
    for (size_t d = 0; d < t->shape.n; d++) {
        long long v = 0;
        if (aka_shape_expr_eval(t->shape.v[d], &s->dims, &v, why, sizeof(why)) < 0 || v < 1) {
            json_decref(shape);
            return aka_err_set(err, AKA_EXIT_USAGE,
                               "%s/operator.json: tensor %s shape[%zu] \"%s\" for shape %s: %s",
                               op->dir, t->name, d, t->shape.v[d], s->id,
                               v < 1 ? "not a positive size" : why);
        }
        json_array_append_new(shape, json_integer(v));
    }
    json_t *o = json_pack("{s:s, s:s, s:o}", "name", t->name, "dtype", aka_dtype_name(t->dtype),
                          "shape", shape);
    if (output) {
        const struct aka_tolerance *tol = t->has_tolerance ? &t->tolerance : &op->tolerance;
        json_object_set_new(o, "atol", json_real(tol->atol));
        json_object_set_new(o, "rtol", json_real(tol->rtol));
    }
    json_array_append_new(arr, o);
    return 0;
}

static json_t *dims_json(const struct aka_operator *op, const struct aka_shape *s)
{
    json_t *a = json_array();
    for (size_t i = 0; i < op->native.dims.n; i++) {
        const struct aka_dim_value *d = aka_dim_find(&s->dims, op->native.dims.v[i]);
        json_array_append_new(a, json_pack("{s:s, s:I}", "name", op->native.dims.v[i], "value",
                                           (json_int_t)(d ? d->value : 0)));
    }
    return a;
}

/* Every param resolved for this shape (per-shape values picked by id). */
static json_t *params_json(const struct aka_operator *op, const struct aka_shape *s)
{
    json_t *a = json_array();
    for (size_t i = 0; i < op->native.params.n; i++) {
        const struct aka_native_param *p = &op->native.params.v[i];
        json_t *v = p->per_shape  ? json_deep_copy(json_object_get(p->per_shape_values, s->id))
                    : p->is_float ? json_real(p->fvalue)
                                  : json_integer(p->ivalue);
        json_array_append_new(a, json_pack("{s:s, s:s, s:o}", "name", p->name, "type",
                                           p->is_float ? "float" : "int", "value", v));
    }
    return a;
}

static int shape_json(const struct aka_operator *op, const struct aka_shape *s, json_t *shapes,
                      struct aka_err *err)
{
    json_t *in = json_array(), *out = json_array();
    json_t *o = json_pack("{s:s, s:o, s:o, s:o, s:o}", "id", s->id, "dims", dims_json(op, s),
                          "params", params_json(op, s), "inputs", in, "outputs", out);
    for (size_t i = 0; i < op->inputs.n; i++)
        if (tensor_json(op, &op->inputs.v[i], s, false, in, err) < 0)
            goto fail;
    for (size_t i = 0; i < op->outputs.n; i++)
        if (tensor_json(op, &op->outputs.v[i], s, true, out, err) < 0)
            goto fail;
    json_array_append_new(shapes, o);
    return 0;
fail:
    json_decref(o);
    return -1;
}

json_t *aka_eval_native_plan(const struct aka_operator *op, const struct aka_native_plan_opts *o,
                             struct aka_err *err)
{
    if (op->layout != AKA_LAYOUT_NATIVE) {
        aka_err_set(err, AKA_EXIT_USAGE, "%s: not a native operator", op->dir);
        return NULL;
    }
    if (check_shape_ids(op, o->shape_ids, err) < 0)
        return NULL;
    json_t *seeds = json_array(), *shapes = json_array();
    json_t *cases = o->probes ? json_object_get(o->probes, "cases") : NULL;
    for (size_t i = 0; i < json_array_size(cases); i++) /* a probe case per seed */
        json_array_append(seeds, json_object_get(json_array_get(cases, i), "seed"));
    for (int i = 0; !o->probes && i < (o->n_seeds > 0 ? o->n_seeds : 1); i++)
        json_array_append_new(seeds, json_integer(i));
    json_t *plan = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:o, s:i, s:i, s:I, s:I, s:o}", "schema", PLAN_SCHEMA,
        "operator", op->name, "language", op->native.language == AKA_LANG_CUDA ? "cuda" : "c",
        "eval_id", o->eval_id, "kernel_sha256", o->kernel_sha256, "seeds", seeds, "warmup",
        o->warmup, "reps", o->reps, "llc_bytes", (json_int_t)o->llc_bytes, "rotate_budget_bytes",
        (json_int_t)o->rotate_budget, "shapes", shapes);
    if (o->time_budget_ms > 0)
        json_object_set_new(plan, "time_budget_ms", json_integer(o->time_budget_ms));
    if (o->kernel_span)
        json_object_set_new(plan, "timing", json_string("kernel_span"));
    if (o->probes)
        json_object_set_new(plan, "probes", json_deep_copy(o->probes));
    if (op->native.language == AKA_LANG_C)
        json_object_set_new(plan, "cpu_timing",
                            json_string(op->native.wall_timing ? "wall" : "cpu_time"));
    for (size_t i = 0; i < op->shapes.n; i++)
        if (wanted(o->shape_ids, op->shapes.v[i].id) &&
            shape_json(op, &op->shapes.v[i], shapes, err) < 0) {
            json_decref(plan);
            return NULL;
        }
    return plan;
}

/* ---- one evaluation's state ------------------------------------------------------------- */

struct eval_ctx {
    const struct aka_sandbox_transport *t;
    const struct aka_eval_request *req;
    struct aka_operator op;
    struct aka_platform plat;
    const char *framework;
    bool native, cuda;
    bool solution;        /* the candidate is a SOL solution JSON (its sources inside) */
    struct strvec shapes; /* selected ids */
    int n_seeds, warmup, reps;
    char sha[AKA_SHA256_HEX_LEN + 1], eval_id[64];
    struct strbuf tmp;    /* private temp dir: the kernel copy and plan.json */
    struct strbuf kernel; /* the copy that is hashed and shipped */
    struct aka_sandbox_job job;
    struct aka_eval_expect expect;
};

/* Layout, language, framework and platform must describe one evaluator. */
static int check_combination(struct eval_ctx *c, struct aka_err *err)
{
    const char *fw = c->framework, *dir = c->op.dir;
    if (c->native && strcmp(fw, "PyTorch") == 0)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--framework PyTorch: %s is a native operator; its kernels are C or "
                           "Cuda",
                           dir);
    if (!c->native && strcmp(fw, "C") == 0)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--framework C: %s is a %s operator (PyTorch reference); C kernels "
                           "need a native operator (operator.json)",
                           dir, aka_layout_name(c->op.layout));
    if (!c->native)
        return 0;
    if (strcmp(fw, c->cuda ? "Cuda" : "C") != 0)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--framework %s: %s is a native %s operator; its kernels are "
                           "--framework %s",
                           fw, dir, c->cuda ? "CUDA" : "C", c->cuda ? "Cuda" : "C");
    if (c->cuda != (c->plat.vendor == AKA_VENDOR_NVIDIA))
        return aka_err_set(err, AKA_EXIT_USAGE, "--platform %s: %s is a native %s operator; use %s",
                           c->plat.name, dir, c->cuda ? "CUDA" : "C",
                           c->cuda ? "--platform nvidia/<gpu>" : "--platform cpu");
    return 0;
}

/* Copy the kernel into the private temp dir and hash that copy: the bytes hashed are
 * the bytes shipped, whatever happens to the original meanwhile. */
/* The name the candidate ships under: a SOL solution JSON keeps its kind, so that the
 * harness materializes its sources and honours its entry point and calling style. */
static const char *candidate_name(const struct eval_ctx *c)
{
    if (c->native)
        return c->cuda ? "kernel.cu" : "kernel.c";
    return c->solution ? "solution.json" : "kernel.py";
}

static int snapshot_kernel(struct eval_ctx *c, struct aka_err *err)
{
    const char *name = candidate_name(c);
    if (!aka_is_file(c->req->kernel))
        return aka_err_set(err, AKA_EXIT_USAGE, "--kernel %s: not a regular file", c->req->kernel);
    if (aka_make_temp_dir(c->t->tmp_dir, "aka-eval", &c->tmp, err) < 0)
        return -1;
    aka_path_join(&c->kernel, c->tmp.buf, name);
    if (aka_copy_file(c->req->kernel, c->kernel.buf, err) < 0 ||
        aka_sha256_file(c->kernel.buf, c->sha, err) < 0)
        return aka_err_prefix(err, "--kernel %s", c->req->kernel);
    return 0;
}

static int add_harness_file(struct eval_ctx *c, const char *dir, const char *name,
                            struct aka_err *err)
{
    struct strbuf src = STRBUF_INIT;
    aka_path_join(&src, dir, name);
    int rc = aka_sandbox_job_add_file(&c->job, src.buf, dir, name, true, true, err);
    if (rc < 0)
        aka_err_prefix(err, "the native harness (%s)", dir);
    strbuf_release(&src);
    return rc;
}

/* -DNAME=VALUE per knob; names must be knobs of operator.json "tune" when it has one. */
static int knob_flags(const struct aka_operator *op, const struct strvec *tune, struct strvec *out,
                      struct aka_err *err)
{
    for (size_t i = 0; tune && i < tune->n; i++) {
        const char *kv = tune->v[i], *eq = strchr(kv, '=');
        char name[64];
        size_t n = eq ? (size_t)(eq - kv) : 0;
        snprintf(name, sizeof(name), "%.*s", (int)(n < 63 ? n : 63), kv);
        if (!eq || n == 0 || n > 63 || !aka_is_identifier(name) || !eq[1] ||
            strspn(eq + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.+-") !=
                strlen(eq + 1))
            return aka_err_set(err, AKA_EXIT_USAGE,
                               "--tune %s: expected NAME=VALUE with an identifier NAME and a "
                               "VALUE of letters, digits, '_', '.', '+', '-'",
                               kv);
        if (op->native.tune && !json_object_get(op->native.tune, name))
            return aka_err_set(err, AKA_EXIT_USAGE,
                               "--tune %s: '%s' is not a knob of %s/operator.json \"tune\"", kv,
                               name, op->dir);
        for (size_t k = 0; k < out->n; k++)
            if (strncmp(out->v[k] + 2, name, n) == 0 && out->v[k][2 + n] == '=')
                return aka_err_set(err, AKA_EXIT_USAGE, "--tune %s: '%s' given twice", kv, name);
        strvec_pushf(out, "-D%s", kv);
    }
    return 0;
}

/* nvcc as the host finds it: $CUDA_HOME/bin, PATH, /usr/local/cuda/bin. Its directory
 * goes first on the job's PATH; a toolkit outside /usr is bound read-only. */
static int cuda_toolkit(struct eval_ctx *c, struct aka_err *err)
{
    struct strbuf dir = STRBUF_INIT, cand = STRBUF_INIT;
    const char *home = getenv("CUDA_HOME"), *path = getenv("PATH");
    int rc = -1;
    if (home && *home) {
        aka_path_join(&cand, home, "bin");
        if (access(cand.buf, X_OK) == 0)
            strbuf_addstr(&dir, cand.buf);
    }
    for (const char *p = path ? path : ""; !dir.len && *p;) {
        size_t n = strcspn(p, ":");
        strbuf_reset(&cand);
        strbuf_add(&cand, p, n);
        strbuf_addstr(&cand, "/nvcc");
        if (n && cand.buf[0] == '/' && access(cand.buf, X_OK) == 0)
            strbuf_add(&dir, p, n);
        p += n + (p[n] == ':');
    }
    if (!dir.len && access("/usr/local/cuda/bin/nvcc", X_OK) == 0)
        strbuf_addstr(&dir, "/usr/local/cuda/bin");
    if (!dir.len) {
        aka_err_set(err, AKA_EXIT_ENV,
                    "nvcc was not found (CUDA_HOME, PATH, /usr/local/cuda/bin): native CUDA "
                    "kernels cannot be built on this machine");
        goto out;
    }
    if (strncmp(dir.buf, "/usr/", 5) != 0) {
        struct strbuf root = STRBUF_INIT;
        strbuf_reset(&cand);
        aka_path_join(&cand, dir.buf, "..");
        int bad = aka_realpath(cand.buf, &root, err) < 0 ||
                  aka_sandbox_job_add_bind(&c->job, root.buf, err) < 0;
        strbuf_release(&root);
        if (bad)
            goto out;
    }
    strbuf_reset(&cand);
    strbuf_addf(&cand, "PATH=%s:/usr/local/bin:/usr/bin:/bin", dir.buf);
    rc = aka_sandbox_job_add_env(&c->job, cand.buf, err);
out:
    strbuf_release(&dir);
    strbuf_release(&cand);
    return rc;
}

/* ---- the job per layout --------------------------------------------------------------------- */

/* The judge's sources, the runner loop, and the build script (runtime/harness/native). */
static const char *const native_harness[] = {
    "aka_native_abi.h", "harness_core.h",   "harness_proto.h",       "runner.h",
    "harness_plan.c",   "harness_data.c",   "harness_io.c",          "harness_flow.c",
    "harness_timing.c", "harness_result.c", "judge_runner.c",        "judge.c",
    "runner_loop.c",    "run_native.sh",    "forbidden_symbols.txt", NULL};
static const char *const atrex_inputs[] = {
    "reference.py",  "input.py",           "shapes.json", "metadata.json",
    "roofline.json", "agent_problem.json", NULL};
static const char *const sol_inputs[] = {"definition.json", "workload.jsonl", "reference.py",
                                         "solution.json", NULL};

/* The time budget of a shape's timed runs the harness gets, in ms; 0: none. */
static int time_budget_ms(const struct aka_eval_request *req)
{
    return req->time_budget_ms < 0 ? 0
           : req->time_budget_ms   ? req->time_budget_ms
                                   : AKA_EVAL_TIME_BUDGET_MS;
}

static int write_plan(struct eval_ctx *c, struct aka_err *err)
{
    long long llc = c->req->llc_bytes > 0 ? c->req->llc_bytes : c->cuda ? 0 : host_llc_bytes();
    struct aka_native_plan_opts o = {
        .eval_id = c->eval_id,
        .kernel_sha256 = c->sha,
        .shape_ids = c->req->shape_ids,
        .n_seeds = c->n_seeds,
        .warmup = c->warmup,
        .reps = c->reps,
        .llc_bytes = llc,
        .probes = c->req->probes,
        .time_budget_ms = time_budget_ms(c->req),
        .kernel_span = c->req->timing && strcmp(c->req->timing, "kernel-span") == 0,
    };
    struct strbuf path = STRBUF_INIT;
    json_t *plan = aka_eval_native_plan(&c->op, &o, err);
    int rc = -1;
    aka_path_join(&path, c->tmp.buf, "plan.json");
    if (plan && aka_json_write_file(path.buf, plan, err) == 0)
        rc = aka_sandbox_job_add_file(&c->job, path.buf, c->tmp.buf, "plan.json", true, true, err);
    json_decref(plan);
    strbuf_release(&path);
    return rc;
}

static int native_files(struct eval_ctx *c, struct aka_err *err)
{
    struct strbuf dir = STRBUF_INIT, ref = STRBUF_INIT;
    int rc = 0;
    aka_path_join(&dir, c->req->repo_root, "runtime/harness/native");
    for (size_t i = 0; native_harness[i] && rc == 0; i++)
        rc = add_harness_file(c, dir.buf, native_harness[i], err);
    if (rc == 0)
        rc = add_harness_file(c, dir.buf, c->cuda ? "runner_cuda.cu" : "runner_cpu.c", err);
    aka_op_path(&c->op, c->op.native.reference_file, &ref);
    if (rc == 0)
        rc = aka_sandbox_job_add_file(&c->job, ref.buf, c->op.dir,
                                      c->cuda ? "reference.cu" : "reference.c", true, false, err);
    if (rc == 0)
        rc = aka_sandbox_job_add_file(&c->job, c->kernel.buf, c->tmp.buf,
                                      c->cuda ? "kernel.cu" : "kernel.c", true, false, err);
    strbuf_release(&dir);
    strbuf_release(&ref);
    return rc;
}

/* The compiler flags of the AKA_CC_* knobs (--tune, else the kernel's #defines), after the
 * -D flags so that they come last on the kernel's command line and win over cflags. A CUDA
 * kernel's host flags do not reach its device code: nvcc gets none of them. */
static int cc_flags(struct eval_ctx *c, struct strvec *out, struct aka_err *err)
{
    struct strbuf text = STRBUF_INIT;
    struct strvec flags = STRVEC_INIT;
    int rc = c->cuda ? 0 : aka_read_file(c->kernel.buf, &text, (size_t)64 << 20, err);
    if (rc == 0 && !c->cuda)
        rc = aka_cc_knob_flags(c->req->kernel, text.buf, c->req->tune, &flags, err);
    for (size_t i = 0; rc == 0 && i < flags.n; i++)
        strvec_push(out, flags.v[i]);
    strvec_clear(&flags);
    strbuf_release(&text);
    return rc;
}

/* bash run_native.sh LANG ARCH ENTRY REF_ENTRY -- CFLAGS... -- KNOBS... */
static int native_job(struct eval_ctx *c, struct aka_err *err)
{
    struct strvec *a = &c->job.argv;
    struct strvec knobs = STRVEC_INIT;
    if (native_files(c, err) < 0 || write_plan(c, err) < 0 ||
        knob_flags(&c->op, c->req->tune, &knobs, err) < 0 || cc_flags(c, &knobs, err) < 0) {
        strvec_clear(&knobs);
        return -1;
    }
    strvec_push(a, "bash");
    strvec_push(a, "run_native.sh");
    strvec_push(a, c->cuda ? "cuda" : "c");
    strvec_push(a, c->cuda ? c->plat.arch : "-");
    strvec_push(a, c->op.native.entry);
    strvec_push(a, c->op.native.reference_entry);
    strvec_push(a, "--");
    for (size_t i = 0; i < c->op.native.cflags.n; i++)
        strvec_push(a, c->op.native.cflags.v[i]);
    strvec_push(a, "--");
    for (size_t i = 0; i < knobs.n; i++)
        strvec_push(a, knobs.v[i]);
    strvec_clear(&knobs);
    if (!c->cuda)
        return 0;
    c->job.gpu_count = 1;
    return cuda_toolkit(c, err);
}

static int python_files(struct eval_ctx *c, struct aka_err *err)
{
    const char *const *names = c->op.layout == AKA_LAYOUT_SOL ? sol_inputs : atrex_inputs;
    struct strbuf src = STRBUF_INIT, dest = STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; names[i] && rc == 0; i++) {
        aka_op_path(&c->op, names[i], &src);
        strbuf_reset(&dest);
        strbuf_addf(&dest, "op/%s", names[i]);
        if (aka_is_file(src.buf))
            rc = aka_sandbox_job_add_file(&c->job, src.buf, c->op.dir, dest.buf, true, false, err);
    }
    if (rc == 0)
        rc = aka_sandbox_job_add_file(&c->job, c->kernel.buf, c->tmp.buf, candidate_name(c), true,
                                      false, err);
    strbuf_reset(&src);
    aka_path_join(&src, c->req->repo_root, "runtime/harness/python/aka_harness");
    if (rc == 0)
        rc = aka_sandbox_job_add_tree(&c->job, src.buf, "harness/aka_harness", true, NULL, err);
    strbuf_release(&src);
    strbuf_release(&dest);
    return rc;
}

/* probes.json: the supervisor's probe plan, beside the kernel in the job. */
static int write_probes(struct eval_ctx *c, struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    aka_path_join(&path, c->tmp.buf, "probes.json");
    int rc = aka_json_write_file(path.buf, c->req->probes, err);
    if (rc == 0)
        rc =
            aka_sandbox_job_add_file(&c->job, path.buf, c->tmp.buf, "probes.json", true, true, err);
    strbuf_release(&path);
    return rc;
}

/* python3 -m aka_harness --layout L --op-dir op --kernel kernel.py ... */
static int python_job(struct eval_ctx *c, struct aka_err *err)
{
    struct strvec *a = &c->job.argv;
    struct strbuf sol = STRBUF_INIT;
    if (python_files(c, err) < 0 ||
        aka_sandbox_job_add_env(&c->job, "PYTHONPATH=harness", err) < 0 ||
        aka_sandbox_job_add_env(&c->job, "PYTHONDONTWRITEBYTECODE=1", err) < 0)
        return -1;
    const char *head[] = {"python3",
                          "-m",
                          "aka_harness",
                          "--layout",
                          aka_layout_name(c->op.layout),
                          "--op-dir",
                          "op",
                          "--kernel",
                          candidate_name(c),
                          "--framework",
                          c->framework,
                          "--device",
                          c->plat.vendor == AKA_VENDOR_CPU ? "cpu" : "cuda",
                          "--eval-id",
                          c->eval_id,
                          NULL};
    strvec_pushv(a, head);
    if (c->req->probes) { /* the probe cases replace the seeds; nothing is timed */
        if (write_probes(c, err) < 0)
            return -1;
        strvec_pushv(a, (const char *const[]){"--probes", "probes.json", "--timed-runs=0", NULL});
    } else
        strvec_pushf(a, "--multi-seed=%d", c->n_seeds);
    if (c->req->timed_runs >= 0 && !c->req->probes)
        strvec_pushf(a, "--timed-runs=%d", c->req->timed_runs);
    if (c->req->warmup >= 0)
        strvec_pushf(a, "--warmup=%d", c->req->warmup);
    strvec_pushf(a, "--time-budget-ms=%d", time_budget_ms(c->req));
    if (c->req->official)
        strvec_push(a, "--official");
    if (c->req->timed_inputs)
        strvec_pushf(a, "--timed-inputs=%s", c->req->timed_inputs);
    if (c->req->timing)
        strvec_pushf(a, "--timing=%s", c->req->timing);
    for (size_t i = 0; c->req->shape_ids && i < c->req->shape_ids->n; i++)
        strvec_pushf(a, "--shape-id=%s", c->req->shape_ids->v[i]);
    aka_op_path(&c->op, "solution.json", &sol);
    /* The operator's own solution.json describes its entry point, not a candidate's own. */
    if (c->op.layout == AKA_LAYOUT_SOL && !c->solution && aka_is_file(sol.buf))
        strvec_push(a, "--solution=op/solution.json");
    strbuf_release(&sol);
    /* A distributed operator runs on its pinned world_size GPUs (the judge starts one
     * runner per rank); every transport gives the job that many or fails as the machine's. */
    int world = c->op.contract.explicit_distributed ? c->op.contract.world_size : 1;
    c->job.gpu_count = c->plat.vendor != AKA_VENDOR_CPU ? world : 0;
    c->job.gpu_vendor = c->plat.vendor;
    return 0;
}

/* ---- from output to verdict --------------------------------------------------------------- */

static bool contains(const char *text, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; n <= len && i <= len - n; i++)
        if (memcmp(text + i, needle, n) == 0)
            return true;
    return false;
}

/*
 * The part of stderr after "aka-native: stage=<stage>", at most DIAG_MAX bytes and
 * 40 lines: the compiler's or linker's first messages. *first gets the first line
 * that says "error" (the failure line), or the first line.
 */
static void stage_output(const struct aka_eval_run *run, const char *stage, struct strbuf *diag,
                         struct strbuf *first)
{
    char mark[64];
    snprintf(mark, sizeof(mark), "aka-native: stage=%s\n", stage);
    size_t start = 0, lines = 0, n = strlen(mark);
    bool found = false;
    for (size_t i = 0; run->err_len >= n && i <= run->err_len - n; i++)
        if (memcmp(run->err_text + i, mark, n) == 0)
            start = i + n;
    strbuf_reset(diag);
    strbuf_reset(first);
    for (size_t pos = start; pos < run->err_len && lines < 40; lines++) {
        const char *line = run->err_text + pos, *nl = memchr(line, '\n', run->err_len - pos);
        size_t len = nl ? (size_t)(nl - line) : run->err_len - pos;
        if (diag->len + len + 1 > DIAG_MAX)
            break;
        strbuf_add(diag, line, len);
        strbuf_addch(diag, '\n');
        if (lines == 0 || (!found && contains(line, len, "error"))) {
            strbuf_reset(first);
            strbuf_add(first, line, len);
            found = found || contains(line, len, "error");
        }
        pos += len + 1;
    }
    strbuf_trim(diag);
}

/* A failing result made by aka: every §4.6 field present, nothing measured. */
static void synth(struct aka_eval_outcome *out, const struct aka_eval_expect *x, const char *stage,
                  const char *diag, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void synth(struct aka_eval_outcome *out, const struct aka_eval_expect *x, const char *stage,
                  const char *diag, const char *fmt, ...)
{
    struct aka_result *r = &out->result;
    struct strbuf msg = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(&msg, fmt, ap);
    va_end(ap);
    aka_result_release(r);
    r->total = (long long)(x->shape_ids ? x->shape_ids->n : 0) * (x->n_seeds > 0 ? x->n_seeds : 1);
    strvec_push(&r->failures, msg.buf);
    for (size_t i = 0; x->shape_ids && i < x->shape_ids->n; i++)
        aka_shape_map_set(&r->latency_us_by_shape, x->shape_ids->v[i], AKA_MISSING);
    aka_result_set_string(&r->evaluator, x->evaluator);
    aka_result_set_string(&r->eval_id, x->eval_id);
    aka_result_set_string(&r->kernel_sha256, x->kernel_sha256);
    for (int i = 0; i < (x->n_seeds > 0 ? x->n_seeds : 1); i++)
        VEC_PUSH(r->seeds, (long long)i);
    r->timing.present = true;
    aka_result_set_string(&r->timing.method, x->timing_method);
    r->timing.warmup = x->warmup;
    r->timing.reps = x->reps > 0 ? x->reps : 1;
    r->timing.l2_flush = x->l2_flush;
    if (diag && *diag)
        aka_result_add_diagnostic(r, stage, NULL, diag);
    out->exit_code = 1;
    strbuf_release(&msg);
}

/* run_native.sh statuses that are not a harness verdict (10-14). */
static int native_build_status(const struct aka_eval_expect *x, const struct aka_eval_run *run,
                               struct aka_eval_outcome *out, struct aka_err *err)
{
    static const char *const stages[] = {"compile", "symbols", "link"};
    struct strbuf diag = STRBUF_INIT, first = STRBUF_INIT;
    int code = run->exit_code, rc = 0;
    if (code == 10 || code == 11) {
        /* One line (aka_err_report escapes newlines): what failed, then the compiler's
         * first error, which names the file and line to look at. */
        struct strbuf cause = STRBUF_INIT;
        stage_output(run, "harness", &diag, &cause);
        strbuf_reset(&first);
        strbuf_add_last_line(&first, run->err_text, run->err_len, "aka-native: ");
        if (code == 10)
            rc = aka_err_set(err, AKA_EXIT_ENV, "the sandbox cannot build native kernels: %s",
                             first.buf);
        else
            rc = aka_err_set(err, AKA_EXIT_USAGE,
                             "%s (the operator's reference or aka's harness, not the "
                             "candidate); first error: %s",
                             first.buf, cause.len ? cause.buf : "(the compiler said nothing)");
        strbuf_release(&cause);
    } else {
        const char *stage = stages[code - 12];
        stage_output(run, stage, &diag, &first);
        if (code == 13) {
            strbuf_reset(&first);
            strbuf_add_last_line(&first, run->err_text, run->err_len, "aka-native: ");
        }
        synth(out, x, code == 13 ? "symbol_policy" : stage, diag.buf, "%s: %s",
              code == 12   ? "compile"
              : code == 13 ? "kernel object"
                           : "link",
              first.buf);
    }
    strbuf_release(&diag);
    strbuf_release(&first);
    return rc;
}

int aka_eval_check_identity(const struct aka_result *r, const char *kernel_sha256,
                            const char *eval_id, struct aka_err *err)
{
    if (!r->kernel_sha256 || strcmp(r->kernel_sha256, kernel_sha256) != 0)
        return aka_err_set(err, AKA_EXIT_FAILED,
                           "the result's kernel_sha256 (%s) is not the sha256 of the kernel "
                           "aka shipped (%s)",
                           r->kernel_sha256 ? r->kernel_sha256 : "missing", kernel_sha256);
    if (eval_id && (!r->eval_id || strcmp(r->eval_id, eval_id) != 0))
        return aka_err_set(err, AKA_EXIT_FAILED,
                           "the result's eval_id (%s) is not the id of this evaluation (%s)",
                           r->eval_id ? r->eval_id : "missing", eval_id);
    return 0;
}

/* The harness's last progress line ("candidate shape=n4k seed=0"), "" when none. */
static void progress_of(const struct aka_eval_run *run, struct strbuf *out)
{
    strbuf_reset(out);
    strbuf_add_last_line(out, run->err_text, run->err_len, "aka-harness: phase=");
    if (!out->len)
        strbuf_add_last_line(out, run->err_text, run->err_len, "[aka_harness] ");
}

/* The end of stderr, for a diagnostic when nothing better exists. */
static void err_tail(const struct aka_eval_run *run, struct strbuf *out)
{
    size_t n = run->err_len > DIAG_MAX ? DIAG_MAX : run->err_len;
    strbuf_reset(out);
    strbuf_add(out, run->err_text + run->err_len - n, n);
    strbuf_trim(out);
}

/*
 * The native judge's own reason for a status that is not a verdict: its result's first
 * failure ("the reference runner did not start: no CUDA device is visible: ..."), else
 * its last log line (which for an environment failure is only "done at=...").
 */
static void judge_reason(const struct aka_eval_run *run, const char *line, struct strbuf *out)
{
    struct aka_result r;
    struct aka_err perr = AKA_ERR_INIT;
    bool parsed = aka_result_parse_output("harness", run->out, run->out_len, &r, &perr) == 0;
    strbuf_addstr(out, parsed && r.failures.n ? r.failures.v[0] : line);
    if (parsed)
        aka_result_release(&r);
}

/*
 * Harness statuses that are not the candidate's doing: a plan or operator problem
 * (2), a failing reference (native 3), no device or memory before any kernel code
 * ran (native 4, python 75). 1 when the status is an ordinary verdict to parse.
 */
static int harness_status(const struct aka_eval_expect *x, const struct aka_eval_run *run,
                          struct aka_err *err)
{
    struct strbuf line = STRBUF_INIT, why = STRBUF_INIT;
    int code = run->exit_code, rc = 1;
    bool env = (x->native && code == 4 &&
                !contains(run->err_text, run->err_len, "aka-harness: candidate code starts")) ||
               (!x->native && code == AKA_EXIT_ENV);
    strbuf_add_last_line(&line, run->err_text, run->err_len,
                         x->native ? "aka-harness: " : "[aka_harness] ");
    if (x->native && (code == 3 || env))
        judge_reason(run, line.buf, &why);
    else
        strbuf_addstr(&why, line.buf);
    if (code == 2)
        rc = aka_err_set(err, AKA_EXIT_USAGE, "the evaluator refused its input: %s", why.buf);
    else if (x->native && code == 3)
        rc = aka_err_set(err, AKA_EXIT_USAGE, "the operator's reference failed: %s", why.buf);
    else if (env)
        rc = aka_err_set(err, AKA_EXIT_ENV, "the evaluator could not get its device or memory: %s",
                         why.buf);
    strbuf_release(&line);
    strbuf_release(&why);
    return rc;
}

/* No single valid RESULT_JSON line: say what happened instead. */
static void no_result(const struct aka_eval_expect *x, const struct aka_eval_run *run,
                      const char *why, struct aka_eval_outcome *out)
{
    struct strbuf prog = STRBUF_INIT, tail = STRBUF_INIT;
    progress_of(run, &prog);
    err_tail(run, &tail);
    if (run->term_signal)
        synth(out, x, "candidate_runtime", tail.buf,
              "evaluation: the evaluator was killed by signal %d (%s)%s%s", run->term_signal,
              strsignal(run->term_signal), prog.len ? " during " : "", prog.buf);
    else
        synth(out, x, "candidate_runtime", tail.buf,
              "evaluation: no valid result (exit status %d%s%s): %s", run->exit_code,
              prog.len ? ", last at " : "", prog.buf, why);
    strbuf_release(&prog);
    strbuf_release(&tail);
}

int aka_eval_interpret(const struct aka_eval_expect *x, const struct aka_eval_run *run,
                       struct aka_eval_outcome *out, struct aka_err *err)
{
    struct aka_err perr = AKA_ERR_INIT;
    struct aka_result r;
    struct strbuf prog = STRBUF_INIT;
    int rc;
    if (run->timed_out) {
        progress_of(run, &prog);
        synth(out, x, "candidate_runtime", NULL, "evaluation: timed out after %ld s%s%s",
              x->timeout_s, prog.len ? " during " : "", prog.buf);
        strbuf_release(&prog);
        return 0;
    }
    if (x->native && run->exit_code >= 10 && run->exit_code <= 14)
        return native_build_status(x, run, out, err);
    if ((rc = harness_status(x, run, err)) <= 0)
        return rc;
    /* Any process of the job that reaches the job's stdout (the sandbox's init holds it)
     * can print a result line of its own and then pad stdout past its cap, so that the
     * judge's line is the one dropped: a truncated stdout proves nothing. */
    if (run->out_truncated) {
        synth(out, x, "evaluation", NULL,
              "evaluation: the job's stdout passed its cap (%zu bytes kept); a result read "
              "from a truncated stdout is not trusted",
              run->out_len);
        return 0;
    }
    if (aka_result_parse_output("evaluator stdout", run->out, run->out_len, &r, &perr) < 0) {
        no_result(x, run, perr.msg, out);
        return 0;
    }
    if (aka_eval_check_identity(&r, x->kernel_sha256, x->eval_id, &perr) < 0)
        synth(out, x, "evaluation", NULL, "evaluation: %s; the result is not trusted", perr.msg);
    else if (r.all_pass != (run->exit_code == 0))
        synth(out, x, "evaluation", NULL,
              "evaluation: the evaluator exited with status %d but its result says all_pass=%s",
              run->exit_code, r.all_pass ? "true" : "false");
    else {
        aka_result_release(&out->result);
        out->result = r;
        aka_result_init(&r);
        out->exit_code = out->result.all_pass ? 0 : 1;
    }
    aka_result_release(&r);
    return 0;
}

/* ---- aka_evaluate -----------------------------------------------------------------------------
 */

void aka_eval_outcome_init(struct aka_eval_outcome *o)
{
    memset(o, 0, sizeof(*o));
    aka_result_init(&o->result);
    strbuf_init(&o->log, 0);
    o->exit_code = 1;
}

void aka_eval_outcome_release(struct aka_eval_outcome *o)
{
    aka_result_release(&o->result);
    strbuf_release(&o->log);
    strvec_clear(&o->notes);
}

static int check_request(const struct aka_eval_request *req, struct eval_ctx *c,
                         struct aka_err *err)
{
    if (!req->op_dir || !req->kernel || !req->framework || !req->platform || !req->repo_root)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "an evaluation needs an operator directory, a kernel, a framework "
                           "and a platform");
    if (!(c->framework = aka_eval_framework(req->framework)))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--framework: expected C, Cuda, Triton, Gluon, CuteDSL, TileLang, "
                           "FlyDSL or PyTorch; got '%s'",
                           req->framework);
    if (aka_platform_parse(req->platform, req->cuda_arch, &c->plat, err) < 0)
        return -1;
    if (req->time_budget_ms > 3600000)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--time-budget-ms: expected at most 3600000 (an hour); got %d",
                           req->time_budget_ms);
    if (req->multi_seed > 1000 || req->timed_runs > 100000 || req->warmup > 100000)
        return aka_err_set(
            err, AKA_EXIT_USAGE,
            "--multi-seed is at most 1000, --timed-runs and --warmup at most 100000");
    return 0;
}

/* Seeds, warm-up and repetitions: the request's, else the harness's defaults. */
static int counts(struct eval_ctx *c, struct aka_err *err)
{
    const struct aka_eval_request *req = c->req;
    c->n_seeds = req->multi_seed > 0 ? req->multi_seed : 1;
    if (req->probes) /* one case per probe */
        c->n_seeds = (int)json_array_size(json_object_get(req->probes, "cases"));
    c->warmup = req->warmup >= 0 ? req->warmup : c->cuda || !c->native ? 10 : 3;
    c->reps = req->timed_runs >= 0 ? req->timed_runs : c->cuda || !c->native ? 100 : 25;
    if (c->native && c->reps < 1)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--timed-runs: native operators need at least 1 timed run (the "
                           "timed runs are checked for correctness too)");
    if (c->native && req->official)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--evaluator official: %s is a native operator; only Atrex-Bench "
                           "and SOL-ExecBench operators have an official evaluator",
                           req->op_dir);
    if (c->native && req->timed_inputs && strcmp(req->timed_inputs, "auto") != 0)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--timed-inputs %s: %s is a native operator, whose judge "
                           "generates every timed run's inputs (the flag is for PyTorch "
                           "layouts)",
                           req->timed_inputs, req->op_dir);
    if (c->native && !c->cuda && req->timing && strcmp(req->timing, "auto") != 0)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--timing %s: %s is a native C operator, timed on the CPU by the "
                           "judge's clocks (the flag is for GPU operators)",
                           req->timing, req->op_dir);
    if (!c->native && c->req->tune && c->req->tune->n)
        return aka_err_set(err, AKA_EXIT_USAGE, "--tune: knobs apply to native operators only");
    return 0;
}

static void fill_expect(struct eval_ctx *c)
{
    struct aka_eval_expect *x = &c->expect;
    x->evaluator = c->cuda                          ? "aka.native.cuda"
                   : c->native                      ? "aka.native.c"
                   : c->op.layout == AKA_LAYOUT_SOL ? "aka.python.sol"
                                                    : "aka.python.atrex";
    x->eval_id = c->eval_id;
    x->kernel_sha256 = c->sha;
    x->shape_ids = &c->shapes;
    x->n_seeds = c->n_seeds;
    x->warmup = c->warmup;
    x->reps = c->reps;
    x->timing_method = "none";
    x->l2_flush = false;
    x->native = c->native;
    x->timeout_s = c->job.timeout_s;
}

/* The profiler's words and its export flag, as one run of argv. */
static void push_profiler(struct strvec *argv, const struct strvec *profiler)
{
    for (size_t i = 0; i < profiler->n; i++)
        strvec_push(argv, profiler->v[i]);
    strvec_push(argv, "--log-file");
    strvec_push(argv, AKA_EVAL_PROFILE_EXPORT);
}

/*
 * A Python job runs whole under the profiler. A native job hands the profiler to
 * run_native.sh (`--profiler N WORD...`), which starts only the judge under it: the builds
 * before it (nvcc and its dozens of tools, cc, nm, objcopy) launch no kernel, and on the
 * H100 and H200 a native profile with them under Nsight Compute sat about 300 s in the
 * reference runner's CUDA start (docs/measurements.md, "The native profile's stall").
 */
static void profiled_argv(const struct eval_ctx *c, struct strvec *argv)
{
    const struct strvec *job = &c->job.argv, *profiler = c->req->profiler;
    size_t from = 0;
    if (c->native) { /* "bash" "run_native.sh" first */
        strvec_push(argv, job->v[0]);
        strvec_push(argv, job->v[1]);
        strvec_push(argv, "--profiler");
        strvec_pushf(argv, "%zu", profiler->n + 2);
        from = 2;
    }
    push_profiler(argv, profiler);
    for (size_t i = from; i < job->n; i++)
        strvec_push(argv, job->v[i]);
}

/* `aka profile`: the same job, its kernel run under the profiler, the export brought back.
 * The verdict is still the harness's own (a profiled run that fails is reported as failed);
 * its timing is the profiler's business and is never recorded as an evaluation. */
static int profile_job(struct eval_ctx *c, struct aka_err *err)
{
    const struct aka_eval_request *req = c->req;
    struct strvec argv = STRVEC_INIT;
    struct strbuf bind = STRBUF_INIT;
    if (!req->profiler->n || req->profiler->v[0][0] != '/' || !req->artifact_dir)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "profile: expected the profiler as an absolute path and a directory "
                           "for its export");
    profiled_argv(c, &argv);
    strvec_clear(&c->job.argv);
    c->job.argv = argv;
    c->job.kind = AKA_SBX_PROFILE;
    free(c->job.artifact_dir);
    c->job.artifact_dir = aka_xstrdup(req->artifact_dir);
    int rc = aka_sandbox_job_add_artifact(&c->job, AKA_EVAL_PROFILE_EXPORT, err);
    if (rc == 0 && req->profiler_dir && strncmp(req->profiler_dir, "/usr/", 5) != 0) {
        strbuf_addstr(&bind, req->profiler_dir);
        rc = aka_sandbox_job_add_bind(&c->job, bind.buf, err);
    }
    strbuf_release(&bind);
    return rc;
}

static int prepare(struct eval_ctx *c, struct aka_err *err)
{
    const struct aka_eval_request *req = c->req;
    if (check_request(req, c, err) < 0 || aka_operator_load(req->op_dir, &c->op, err) < 0)
        return -1;
    c->native = c->op.layout == AKA_LAYOUT_NATIVE;
    c->cuda = c->native && c->op.native.language == AKA_LANG_CUDA;
    size_t klen = strlen(req->kernel);
    c->solution = klen > 5 && strcmp(req->kernel + klen - 5, ".json") == 0;
    if (c->solution && c->op.layout != AKA_LAYOUT_SOL)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--kernel %s: a solution JSON is a SOL-ExecBench candidate; %s is an "
                           "operator of the %s layout (give its kernel source instead)",
                           req->kernel, req->op_dir, aka_layout_name(c->op.layout));
    if (check_combination(c, err) < 0 || check_shape_ids(&c->op, req->shape_ids, err) < 0 ||
        counts(c, err) < 0)
        return -1;
    selected_ids(&c->op, req->shape_ids, &c->shapes);
    if (req->eval_id)
        snprintf(c->eval_id, sizeof(c->eval_id), "%s", req->eval_id);
    else
        new_eval_id(c->eval_id, sizeof(c->eval_id));
    if (snapshot_kernel(c, err) < 0)
        return -1;
    c->job.isolation = c->t->isolation;
    c->job.in_agent_sandbox = req->in_agent_sandbox;
    c->job.timeout_s = req->timeout_s > 0 ? req->timeout_s : AKA_SBX_DEFAULT_TIMEOUT_S;
    fill_expect(c);
    int rc = c->native ? native_job(c, err) : python_job(c, err);
    return rc == 0 && req->profiler ? profile_job(c, err) : rc;
}

/*
 * After a command that failed: the candidate's, unless a health probe run now fails too
 * (health.c). Then nothing is blamed on the candidate: no verdict, code 75.
 */
static int check_environment(struct eval_ctx *c, const struct aka_sandbox_result *res,
                             struct aka_err *err)
{
    struct aka_env_evidence e = {res->transport, true, res->exit_code, res->timed_out, res->err.buf,
                                 res->err.len,   -1};
    struct aka_sandbox_health h;
    struct aka_err perr = AKA_ERR_INIT;
    if (aka_env_classify(&e) != AKA_ENV_PROBE)
        return 0;
    e.probe =
        aka_eval_health(c->t, c->plat.name, c->framework, c->req->in_agent_sandbox, &h, &perr) == 0
            ? 1
            : 0;
    enum aka_env_class cls = aka_env_classify(&e);
    if (cls == AKA_ENV_NONE)
        return 0;
    aka_env_note_failure(cls, "evaluation", h.output);
    return aka_err_set(err, AKA_EXIT_ENV,
                       "environment: %s: the evaluation failed (exit status %d) and the health "
                       "probe after it failed too (exit %d): %s",
                       aka_env_class_name(cls), res->exit_code, h.exit_code, h.output);
}

static int run_job(struct eval_ctx *c, struct aka_eval_outcome *out, struct aka_err *err)
{
    struct aka_sandbox_result res;
    struct strbuf where = STRBUF_INIT;
    aka_sandbox_transport_describe(c->t, &where);
    strvec_pushf(&out->notes, "transport: %s", where.buf);
    strbuf_release(&where);
    aka_sandbox_result_init(&res);
    int rc = aka_sandbox_run(c->t, &c->job, &res, err);
    if (rc == 0) {
        struct aka_eval_run run = {res.exit_code, res.term_signal,  res.timed_out,
                                   res.out.buf,   res.err.buf,      res.out.len,
                                   res.err.len,   res.out_truncated};
        out->command_exit = res.exit_code;
        out->seconds = res.setup_seconds + res.wall_seconds + res.cleanup_seconds;
        snprintf(out->isolation, sizeof(out->isolation), "%s", res.isolation);
        strbuf_add(&out->log, res.err.buf, res.err.len);
        rc = aka_eval_interpret(&c->expect, &run, out, err);
        if (rc == 0)
            rc = check_environment(c, &res, err);
    } else if (err->code == AKA_EXIT_ENV) {
        /* The job directory could not be written: our own write met ENOSPC. */
        aka_env_note_failure(strstr(err->msg, strerror(ENOSPC)) ? AKA_ENV_DISK_FULL
                                                                : AKA_ENV_TRANSPORT,
                             "evaluation", err->msg);
    }
    for (size_t i = 0; i < res.notes.n; i++)
        strvec_push(&out->notes, res.notes.v[i]);
    aka_sandbox_result_release(&res);
    return rc;
}

/* "sandbox_isolation" travels with the result wherever it is printed or recorded. */
static void mark_isolation(struct aka_eval_outcome *out)
{
    if (!out->result.extra)
        out->result.extra = json_object();
    json_object_set_new(out->result.extra, "sandbox_isolation", json_string(out->isolation));
}

static void say_still_running(void *command, double elapsed_s)
{
    fprintf(stderr, "%s: the job is still running (%.0f s)\n", (const char *)command, elapsed_s);
}

void aka_eval_heartbeat_on(const char *command, int seconds)
{
    proc_set_heartbeat(seconds > 0 ? say_still_running : NULL, (void *)command,
                       (long)seconds * 1000);
}

int aka_evaluate(const struct aka_sandbox_transport *t, const struct aka_eval_request *req,
                 struct aka_eval_outcome *out, struct aka_err *err)
{
    struct eval_ctx c;
    memset(&c, 0, sizeof(c));
    c.t = t;
    c.req = req;
    strbuf_init(&c.tmp, 0);
    strbuf_init(&c.kernel, 0);
    aka_sandbox_job_init(&c.job, AKA_SBX_RUN);
    snprintf(out->isolation, sizeof(out->isolation), "%s",
             t->isolation == AKA_SBX_NONE ? "none" : "bwrap");
    snprintf(out->transport, sizeof(out->transport), "%s", t->ops->name);
    int rc = prepare(&c, err);
    snprintf(out->kernel_sha256, sizeof(out->kernel_sha256), "%s", c.sha);
    snprintf(out->eval_id, sizeof(out->eval_id), "%s", c.eval_id);
    snprintf(out->platform, sizeof(out->platform), "%s", c.plat.name);
    out->framework = c.framework;
    out->layout = c.op.layout;
    if (rc == 0 && (rc = run_job(&c, out, err)) == 0)
        mark_isolation(out);
    if (rc == 0 && req->production_score && aka_operator_has_production(&c.op))
        rc = aka_eval_score_production(&c.op, &out->result, err);
    if (rc == 0 && req->generalized) { /* before anyone keeps it (mask.c) */
        aka_eval_mask_result(&c.op, &out->result);
        strbuf_reset(&out->log);
        strbuf_addstr(&out->log, "(stderr hidden: generalized evaluation)\n");
    }
    if (c.tmp.len) {
        struct aka_err ignored = AKA_ERR_INIT;
        aka_remove_tree(c.tmp.buf, &ignored);
    }
    aka_sandbox_job_release(&c.job);
    aka_operator_release(&c.op);
    strvec_clear(&c.shapes);
    strbuf_release(&c.tmp);
    strbuf_release(&c.kernel);
    return rc;
}

json_t *aka_eval_result_json(const struct aka_eval_outcome *o)
{
    json_t *j = aka_result_to_json(&o->result);
    json_object_set_new(j, "sandbox_isolation", json_string(o->isolation));
    return j;
}

/* ---- episode mode ------------------------------------------------------------------------- */

void aka_eval_episode_release(struct aka_eval_episode *ep)
{
    char **fields[] = {&ep->workspace, &ep->episode,     &ep->worktree,     &ep->op_dir,
                       &ep->framework, &ep->platform,    &ep->kernel,       &ep->isolation,
                       &ep->cuda_arch, &ep->record_path, &ep->operator_note};
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        free(*fields[i]);
        *fields[i] = NULL;
    }
    ep->active = false;
}

/* $ATREX_AKA_WORKTREE, else the nearest directory at or above cwd holding .git, else cwd. */
static int find_worktree(struct strbuf *out, struct aka_err *err)
{
    const char *given = getenv("ATREX_AKA_WORKTREE");
    struct strbuf probe = STRBUF_INIT;
    char cwd[PATH_MAX];
    if (given && *given)
        return aka_realpath(given, out, err) < 0 ? aka_err_prefix(err, "ATREX_AKA_WORKTREE") : 0;
    if (!getcwd(cwd, sizeof(cwd)))
        return aka_err_set(err, AKA_EXIT_ENV, "cannot read the current directory: %s",
                           strerror(errno));
    strbuf_reset(out);
    strbuf_addstr(out, cwd);
    for (size_t n = strlen(cwd); n > 0;) {
        strbuf_reset(&probe);
        strbuf_add(&probe, cwd, n);
        strbuf_addstr(&probe, "/.git");
        if (aka_exists(probe.buf)) {
            strbuf_reset(out);
            strbuf_add(out, cwd, n);
            break;
        }
        while (n > 0 && cwd[n - 1] != '/')
            n--;
        n = n > 1 ? n - 1 : 0;
    }
    strbuf_release(&probe);
    return 0;
}

static char *opt_dup(const char *s)
{
    return s ? aka_xstrdup(s) : NULL;
}

/* The campaign's fields an evaluation needs (workspace/ parses campaign.json), and the
 * operator directory to evaluate: the snapshot, verified with the asset tree against the
 * campaign's pins before anything runs. A changed original is noted, never used. */
static int read_campaign(struct aka_eval_episode *ep, const char *worktree, const char *repo_root,
                         struct aka_err *err)
{
    struct aka_ws_campaign c;
    struct strbuf full = STRBUF_INIT, note = STRBUF_INIT;
    unsigned need = AKA_CF_FRAMEWORK | AKA_CF_PLATFORM | AKA_CF_KERNEL;
    int rc = aka_ws_campaign_load(ep->workspace, need, &c, err);
    if (rc == 0)
        rc = aka_ws_eval_inputs(ep->workspace, repo_root, &full, err);
    if (rc == 0) {
        ep->op_dir = strbuf_detach(&full, NULL);
        aka_path_join(&full, worktree, c.kernel);
        ep->kernel = strbuf_detach(&full, NULL);
        ep->framework = aka_xstrdup(c.framework);
        ep->platform = aka_xstrdup(c.platform);
        ep->isolation = opt_dup(c.sandbox_isolation);
        ep->cuda_arch = opt_dup(c.cuda_arch);
        ep->production = c.mode && strcmp(c.mode, "production") == 0;
        if (c.operator_snapshot && c.op_dir &&
            !aka_ws_operator_unchanged(ep->workspace, c.op_dir, &note))
            ep->operator_note = strbuf_detach(&note, NULL);
    }
    aka_ws_campaign_release(&c);
    strbuf_release(&full);
    strbuf_release(&note);
    return rc;
}

int aka_eval_episode_detect(struct aka_eval_episode *ep, const char *repo_root, struct aka_err *err)
{
    const char *ws = getenv("ATREX_AKA_WORKSPACE"), *episode = getenv("ATREX_AKA_EPISODE");
    struct strbuf path = STRBUF_INIT, tree = STRBUF_INIT;
    memset(ep, 0, sizeof(*ep));
    if (!ws || !*ws)
        return 0;
    int rc = aka_realpath(ws, &path, err) < 0 ? aka_err_prefix(err, "ATREX_AKA_WORKSPACE")
                                              : find_worktree(&tree, err);
    if (rc == 0) {
        ep->workspace = aka_xstrdup(path.buf);
        ep->worktree = aka_xstrdup(tree.buf);
        ep->episode = opt_dup(episode && *episode ? episode : NULL);
        rc = read_campaign(ep, tree.buf, repo_root, err);
    }
    if (rc == 0) {
        aka_wt_path(&path, ep->worktree, AKA_WT_EVALUATIONS);
        ep->record_path = aka_xstrdup(path.buf);
        ep->active = true;
    } else {
        aka_eval_episode_release(ep);
    }
    strbuf_release(&path);
    strbuf_release(&tree);
    return rc;
}

static json_t *record_json(const struct aka_eval_request *req, const struct aka_eval_outcome *o,
                           const char *episode)
{
    char now[AKA_TIMESTAMP_MAX];
    json_t *tune = json_object();
    aka_record_now(now);
    for (size_t i = 0; req->tune && i < req->tune->n; i++) {
        const char *eq = strchr(req->tune->v[i], '=');
        char *name = aka_xstrndup(req->tune->v[i], eq ? (size_t)(eq - req->tune->v[i]) : 0);
        json_object_set_new(tune, name, json_string(eq ? eq + 1 : ""));
        free(name);
    }
    return json_pack("{s:s, s:s, s:o, s:s, s:s, s:s, s:s, s:s, s:o, s:i, s:i, s:o, s:s, s:s, "
                     "s:b, s:i, s:b, s:o}",
                     "schema", RECORD_SCHEMA, "timestamp", now, "episode",
                     episode ? json_string(episode) : json_null(), "kernel", req->kernel,
                     "kernel_sha256", o->kernel_sha256, "op_dir", req->op_dir, "framework",
                     o->framework ? o->framework : req->framework, "platform", o->platform,
                     "shape_ids", aka_json_string_array(req->shape_ids), "multi_seed",
                     req->multi_seed > 0 ? req->multi_seed : 1, "timed_runs", req->timed_runs,
                     "tune", tune, "sandbox_isolation", o->isolation, "transport", o->transport,
                     "brokered", o->brokered, "exit_code", o->exit_code, "all_pass",
                     o->result.all_pass, "result", aka_eval_result_json(o));
}

int aka_eval_record_append(const char *path, const struct aka_eval_request *req,
                           const struct aka_eval_outcome *o, const char *episode,
                           struct aka_err *err)
{
    struct strbuf dir = STRBUF_INIT;
    json_t *rec = record_json(req, o, episode);
    int rc = -1;
    const char *slash = strrchr(path, '/');
    strbuf_add(&dir, path, slash ? (size_t)(slash - path) : 1);
    if (!slash)
        strbuf_reset(&dir), strbuf_addch(&dir, '.');
    if (aka_mkdir_p(dir.buf, 0755, err) == 0)
        rc = aka_jsonl_append(path, rec, true, err);
    json_decref(rec);
    strbuf_release(&dir);
    return rc;
}
