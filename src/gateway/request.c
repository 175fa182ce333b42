/*
 * request.c — a typed request body: what it may say, and the sandbox job it becomes.
 *
 * Body (docs/gateway.md): upstream's envelope fields (name, author, spec with
 * target_hardware and num_gpus, env_vars, idempotency_key, lock_clocks) plus
 * `job` — the sandbox job of sandbox.h as data: kind, argv, env, files (relative
 * path, base64 content, read_only, trusted), artifacts, timeout_s, output caps,
 * pids_max, generalized — and `runtime`, the pins (DESIGN §4.3) the client sent.
 *
 * Submission checks everything that needs no disk (types, ranges, paths, names,
 * base64, sizes) so a bad request is a 4xx naming the field and never a job. The
 * worker then writes the files below the job's own directory and hands them to
 * the sandbox job builders, whose rules (never-shipped names, traversal, size) are
 * the local transport's: a gateway ships nothing a local evaluation would not.
 */
#include "gateway/internal.h"

#include "base/base64.h"
#include "base/fs.h"
#include "base/json.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BODY "request body"

static const char *const top_keys[] = {
    "name",      "author",          "spec", "job", "env_vars", "runtime", "lock_clocks",
    "timeout_s", "idempotency_key", "mode", NULL};
static const char *const job_keys[] = {"kind",      "argv",        "env",        "files",
                                       "artifacts", "timeout_s",   "stdout_cap", "stderr_cap",
                                       "pids_max",  "generalized", "binds",      NULL};
static const char *const file_keys[] = {"path", "content_b64", "read_only", "trusted", NULL};
static const char *const kinds[] = {"run", "profile", "check", "dev", NULL};

struct vctx {
    struct jctx j;      /* j.err: the message the client gets */
    struct aka_err err; /* scratch, for the sandbox module's own checks */
    int http;           /* the status a failure answers with */
};

/* "NAME=VALUE" with a portable NAME (what the sandbox's job builder accepts). */
static bool env_ok(const char *nv)
{
    const char *eq = strchr(nv, '=');
    if (!eq || eq == nv)
        return false;
    for (const char *p = nv; p < eq; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == '_' ||
              (p > nv && *p >= '0' && *p <= '9')))
            return false;
    return true;
}

static int fail(struct vctx *v, int http, const char *path, const char *fmt, const char *what)
{
    v->http = http;
    return jfail(&v->j, path, fmt, what);
}

static int check_strings(struct vctx *v, json_t *arr, const char *path, size_t max_n)
{
    size_t i;
    json_t *e;
    if (json_array_size(arr) > max_n)
        return fail(v, 422, path, "too many entries (%s)", "limit reached");
    json_array_foreach(arr, i, e) if (!json_is_string(e))
    {
        struct strbuf p = STRBUF_INIT;
        jpath_index(&p, path, i);
        int rc = fail(v, 422, p.buf, "expected a string; got %s", jtype_name(e));
        strbuf_release(&p);
        return rc;
    }
    return 0;
}

static int check_hardware(struct vctx *v, json_t *spec, const struct gw_limits *lim)
{
    json_t *hw = NULL;
    long long n = 0;
    if (jget_arr(&v->j, spec, "spec", "target_hardware", true, &hw) < 0 ||
        check_strings(v, hw, "spec.target_hardware", 16) < 0)
        return -1;
    bool ok = false;
    for (size_t i = 0; i < json_array_size(hw); i++) {
        const char *t = json_string_value(json_array_get(hw, i));
        ok = ok || !strcmp(t, "local") || (lim->aliases && strvec_find(lim->aliases, t) >= 0);
    }
    if (!ok)
        return fail(v, 422, "spec.target_hardware",
                    "names no GPU this gateway serves (expected \"local\" or one of its "
                    "--gpu-alias tokens)%s",
                    "");
    if (jget_int(&v->j, spec, "spec", "num_gpus", false, &n) < 0)
        return -1;
    if (n < 0 || n > lim->max_gpus) {
        char why[96];
        snprintf(why, sizeof(why), "%lld; a worker of this gateway has %d", n, lim->max_gpus);
        return fail(v, 422, "spec.num_gpus", "cannot be served: %s", why);
    }
    return 0;
}

static int check_file(struct vctx *v, json_t *f, const char *path, size_t *total)
{
    const char *rel = NULL, *b64 = NULL;
    bool trusted = false, ro = false;
    struct strbuf p = STRBUF_INIT, data = STRBUF_INIT;
    int rc = jexpect_obj(&v->j, f, path);
    if (rc == 0)
        rc = jcheck_keys(&v->j, f, path, file_keys);
    if (rc == 0)
        rc = jget_str(&v->j, f, path, "path", true, &rel) < 0 ||
                     jget_str(&v->j, f, path, "content_b64", true, &b64) < 0 ||
                     jget_bool(&v->j, f, path, "trusted", false, &trusted) < 0 ||
                     jget_bool(&v->j, f, path, "read_only", false, &ro) < 0
                 ? -1
                 : 0;
    jpath_key(&p, path, "path");
    if (rc == 0 && aka_sandbox_check_rel(rel, p.buf, &v->err) < 0)
        rc = fail(v, 422, p.buf, "%s", v->err.msg);
    const char *why = rc == 0 && !trusted ? aka_sandbox_never_shipped(rel, false) : NULL;
    if (why)
        rc = fail(v, 422, p.buf, "never shipped: %s", why);
    strbuf_reset(&p);
    jpath_key(&p, path, "content_b64");
    if (rc == 0 && !aka_base64_decode(b64, strlen(b64), AKA_SBX_MAX_INPUT_BYTES, &data))
        rc = fail(v, 422, p.buf, "expected base64 of at most %s", "16 MiB");
    *total += data.len;
    strbuf_release(&p);
    strbuf_release(&data);
    return rc;
}

static int check_files(struct vctx *v, json_t *job)
{
    json_t *files = NULL, *f;
    size_t i, total = 0;
    if (jget_arr(&v->j, job, "job", "files", false, &files) < 0 || !files)
        return files ? -1 : 0;
    if (json_array_size(files) > AKA_SBX_MAX_FILES)
        return fail(v, 413, "job.files", "too many files (%s)", "at most 20000");
    json_array_foreach(files, i, f)
    {
        struct strbuf p = STRBUF_INIT;
        jpath_index(&p, "job.files", i);
        int rc = check_file(v, f, p.buf, &total);
        strbuf_release(&p);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int check_env(struct vctx *v, json_t *job, json_t *env_vars)
{
    json_t *env = NULL, *e;
    const char *k;
    size_t i;
    if (jget_arr(&v->j, job, "job", "env", false, &env) < 0 ||
        (env && check_strings(v, env, "job.env", 4096) < 0))
        return -1;
    json_array_foreach(env, i, e) if (!env_ok(json_string_value(e))) return fail(
        v, 422, "job.env", "expected NAME=VALUE entries with portable names; got '%s'",
        json_string_value(e));
    if (env_vars && !json_is_object(env_vars))
        return fail(v, 422, "env_vars", "expected an object of strings; got %s",
                    jtype_name(env_vars));
    json_object_foreach(env_vars, k, e)
    {
        struct strbuf nv = STRBUF_INIT;
        strbuf_addf(&nv, "%s=%s", k, json_is_string(e) ? json_string_value(e) : "");
        bool ok = json_is_string(e) && env_ok(nv.buf);
        strbuf_release(&nv);
        if (!ok)
            return fail(v, 422, "env_vars",
                        "expected NAME: \"VALUE\" pairs with portable names "
                        "(%s)",
                        k);
    }
    return 0;
}

static int check_numbers(struct vctx *v, json_t *job)
{
    static const struct {
        const char *key;
        long long lo, hi;
    } nums[] = {{"timeout_s", 1, AKA_SBX_MAX_TIMEOUT_S},
                {"stdout_cap", 1, 1LL << 30},
                {"stderr_cap", 1, 1LL << 30},
                {"pids_max", 0, 1 << 22}};
    for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
        long long n = nums[i].lo;
        if (jget_int(&v->j, job, "job", nums[i].key, false, &n) < 0)
            return -1;
        if (n < nums[i].lo || n > nums[i].hi) {
            struct strbuf p = STRBUF_INIT;
            jpath_key(&p, "job", nums[i].key);
            int rc = fail(v, 422, p.buf, "out of range (%s)", "see docs/gateway.md");
            strbuf_release(&p);
            return rc;
        }
    }
    return 0;
}

static int check_job(struct vctx *v, json_t *job)
{
    json_t *argv = NULL, *arts = NULL;
    int kind = 0;
    bool gen = false;
    if (jcheck_keys(&v->j, job, "job", job_keys) < 0 ||
        jget_arr(&v->j, job, "job", "argv", true, &argv) < 0 ||
        check_strings(v, argv, "job.argv", 65536) < 0 ||
        jget_enum(&v->j, job, "job", "kind", false, kinds, &kind) < 0 ||
        jget_bool(&v->j, job, "job", "generalized", false, &gen) < 0)
        return -1;
    if (!json_array_size(argv))
        return fail(v, 422, "job.argv", "expected a non-empty command%s", "");
    json_t *binds = NULL;
    if (jget_arr(&v->j, job, "job", "binds", false, &binds) < 0 ||
        (binds && check_strings(v, binds, "job.binds", 64) < 0))
        return -1;
    if (jget_arr(&v->j, job, "job", "artifacts", false, &arts) < 0 ||
        (arts && check_strings(v, arts, "job.artifacts", 1024) < 0))
        return -1;
    for (size_t i = 0; i < json_array_size(arts); i++)
        if (aka_sandbox_check_rel(json_string_value(json_array_get(arts, i)), "job.artifacts",
                                  &v->err) < 0)
            return fail(v, 422, "job.artifacts", "%s", v->err.msg);
    return check_numbers(v, job) < 0 ? -1 : check_files(v, job);
}

static int check_runtime(struct vctx *v, json_t *body, const struct gw_limits *lim)
{
    json_t *rt = NULL, *reqs = NULL;
    const char *ver = NULL;
    if (jget_obj(&v->j, body, "", "runtime", false, &rt) < 0 || !rt)
        return rt ? -1 : 0;
    if (jget_str(&v->j, rt, "runtime", "atrex_bench_version", false, &ver) < 0 ||
        jget_arr(&v->j, rt, "runtime", "requirements", false, &reqs) < 0 ||
        (reqs && check_strings(v, reqs, "runtime.requirements", 128) < 0))
        return -1;
    if (ver && lim->bench_version && strcmp(ver, lim->bench_version) != 0)
        return fail(v, 422, "runtime.atrex_bench_version",
                    "this gateway serves evaluator runtime %s; the request pins another one "
                    "(no silent switch)",
                    lim->bench_version);
    return 0;
}

static int check_top(struct vctx *v, const char *kind, json_t *body, const struct gw_limits *lim)
{
    json_t *spec = NULL, *job = NULL;
    const char *key = NULL, *s = NULL;
    bool lock = false;
    if (jexpect_obj(&v->j, body, "") < 0 || jcheck_keys(&v->j, body, "", top_keys) < 0 ||
        jget_obj(&v->j, body, "", "spec", true, &spec) < 0 || check_hardware(v, spec, lim) < 0 ||
        jget_obj(&v->j, body, "", "job", true, &job) < 0 || check_job(v, job) < 0 ||
        check_env(v, job, json_object_get(body, "env_vars")) < 0 ||
        check_runtime(v, body, lim) < 0 ||
        jget_str(&v->j, body, "", "idempotency_key", false, &key) < 0 ||
        jget_str(&v->j, body, "", "name", false, &s) < 0 ||
        jget_str(&v->j, body, "", "author", false, &s) < 0 ||
        jget_bool(&v->j, body, "", "lock_clocks", false, &lock) < 0)
        return -1;
    if (key && (!*key || strlen(key) > 256))
        return fail(v, 422, "idempotency_key", "expected 1..256 characters%s", "");
    (void)kind;
    return 0;
}

int gw_request_check(const char *kind, json_t *body, const struct gw_limits *lim, char *msg,
                     size_t n)
{
    struct aka_err jerr = AKA_ERR_INIT;
    struct vctx v = {{BODY, &jerr}, AKA_ERR_INIT, 422};
    if (check_top(&v, kind, body, lim) == 0)
        return 0;
    snprintf(msg, n, "%s", jerr.msg);
    return v.http;
}

/* ---- the job a valid request describes (worker side) -------------------------------------- */

static int write_file(json_t *f, const char *in_dir, struct aka_sandbox_job *job,
                      struct aka_err *err)
{
    const char *rel = json_string_value(json_object_get(f, "path"));
    const char *b64 = json_string_value(json_object_get(f, "content_b64"));
    struct strbuf data = STRBUF_INIT, path = STRBUF_INIT;
    int rc = aka_base64_decode(b64, strlen(b64), AKA_SBX_MAX_INPUT_BYTES, &data)
                 ? 0
                 : aka_err_set(err, AKA_EXIT_USAGE, "job.files: %s: invalid base64", rel);
    aka_path_join(&path, in_dir, rel);
    char *slash = strrchr(path.buf, '/');
    *slash = '\0';
    if (rc == 0)
        rc = aka_mkdir_p(path.buf, 0700, err);
    *slash = '/';
    if (rc == 0)
        rc = aka_write_file_plain(path.buf, data.buf, data.len, 0600, err);
    if (rc == 0)
        rc = aka_sandbox_job_add_file(job, path.buf, in_dir, rel,
                                      json_is_true(json_object_get(f, "read_only")),
                                      json_is_true(json_object_get(f, "trusted")), err);
    strbuf_release(&data);
    strbuf_release(&path);
    return rc;
}

static void add_strings(json_t *arr, struct strvec *out)
{
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e) strvec_push(out, json_string_value(e));
}

static long long num(json_t *obj, const char *key, long long def)
{
    json_t *v = json_object_get(obj, key);
    return json_is_integer(v) ? json_integer_value(v) : def;
}

static size_t capped(long long want, size_t cap)
{
    return (size_t)want < cap ? (size_t)want : cap;
}

/* Kind, command, environment, limits and GPUs: what needs no disk. */
static void fill_job(json_t *body, json_t *j, const int *gpu_ids, const struct gw_limits *lim,
                     struct aka_sandbox_job *job)
{
    const char *key;
    json_t *v;
    json_t *kind = json_object_get(j, "kind");
    if (json_is_string(kind))
        aka_sandbox_kind_parse(json_string_value(kind), &job->kind);
    add_strings(json_object_get(j, "argv"), &job->argv);
    add_strings(json_object_get(j, "env"), &job->env);
    json_object_foreach(json_object_get(body, "env_vars"), key, v)
        strvec_pushf(&job->env, "%s=%s", key, json_string_value(v));
    job->timeout_s = (long)num(j, "timeout_s", AKA_SBX_DEFAULT_TIMEOUT_S);
    job->stdout_cap = capped(num(j, "stdout_cap", AKA_SBX_DEFAULT_OUT_CAP), lim->max_output);
    job->stderr_cap = capped(num(j, "stderr_cap", AKA_SBX_DEFAULT_OUT_CAP), lim->max_output);
    job->max_artifact_total = capped(AKA_SBX_MAX_ARTIFACT_TOTAL, lim->max_output);
    job->max_artifact_bytes = capped(AKA_SBX_MAX_ARTIFACT_BYTES, lim->max_output);
    job->pids_max = (long)num(j, "pids_max", AKA_SBX_DEFAULT_PIDS_MAX);
    job->generalized = json_is_true(json_object_get(j, "generalized"));
    job->gpu_count = (int)num(json_object_get(body, "spec"), "num_gpus", 0);
    for (int i = 0; i < job->gpu_count; i++)
        job->gpu_ids[job->n_gpu_ids++] = gpu_ids[i];
}

int gw_request_job(json_t *body, const char *dir, const int *gpu_ids, size_t n_gpus,
                   const struct gw_limits *lim, struct aka_sandbox_job *job, struct aka_err *err)
{
    json_t *j = json_object_get(body, "job"), *f;
    struct strbuf in = STRBUF_INIT;
    size_t i;
    int rc = 0;
    if (num(json_object_get(body, "spec"), "num_gpus", 0) > (long long)n_gpus)
        return aka_err_set(err, AKA_EXIT_USAGE, "spec.num_gpus: more than this worker's %zu",
                           n_gpus);
    fill_job(body, j, gpu_ids, lim, job);
    aka_path_join(&in, dir, "in");
    json_array_foreach(json_object_get(j, "files"), i, f) if (rc == 0) rc =
        write_file(f, in.buf, job, err);
    /* runtime binds name this host's paths: the sandbox's bind rules decide */
    json_array_foreach(json_object_get(j, "binds"), i, f) if (rc == 0) rc =
        aka_sandbox_job_add_bind(job, json_string_value(f), err);
    json_array_foreach(json_object_get(j, "artifacts"), i, f) if (rc == 0) rc =
        aka_sandbox_job_add_artifact(job, json_string_value(f), err);
    if (rc == 0 && job->artifacts.n) {
        strbuf_reset(&in);
        aka_path_join(&in, dir, "out");
        job->artifact_dir = strbuf_detach(&in, NULL);
    }
    strbuf_release(&in);
    return rc;
}

/* One artifact (a file, or every file of a directory) into files; false over the budget. */
static bool add_artifact(const char *dir, const char *rel, json_t *files, size_t *budget)
{
    struct strbuf path = STRBUF_INIT, data = STRBUF_INIT, b64 = STRBUF_INIT;
    struct strvec sub = STRVEC_INIT;
    struct aka_err err = AKA_ERR_INIT;
    bool ok = true;
    aka_path_join(&path, dir, rel);
    if (aka_is_dir(path.buf)) {
        aka_list_files(path.buf, NULL, &sub, &err);
        for (size_t i = 0; ok && i < sub.n; i++) {
            struct strbuf r = STRBUF_INIT;
            strbuf_addf(&r, "%s/%s", rel, sub.v[i]);
            ok = add_artifact(dir, r.buf, files, budget);
            strbuf_release(&r);
        }
    } else if (aka_read_file(path.buf, &data, *budget + 1, &err) == 0) {
        ok = data.len <= *budget;
        *budget -= ok ? data.len : *budget;
        aka_base64_encode(data.buf, data.len, &b64);
        if (ok)
            json_array_append_new(
                files, json_pack("{s:s, s:s%}", "path", rel, "content_b64", b64.buf, b64.len));
    }
    strbuf_release(&path);
    strbuf_release(&data);
    strbuf_release(&b64);
    strvec_clear(&sub);
    return ok;
}

json_t *gw_result_json(const struct aka_sandbox_job *job, const struct aka_sandbox_result *res,
                       size_t max_output, bool *too_large)
{
    json_t *r = aka_sandbox_result_to_json(job, res), *files = json_array();
    size_t used = res->out.len + res->err.len;
    size_t budget = used < max_output ? max_output - used : 0;
    *too_large = res->out_bytes + res->err_bytes > max_output;
    for (size_t i = 0; !*too_large && job->artifact_dir && i < res->artifacts.n; i++)
        *too_large = !add_artifact(job->artifact_dir, res->artifacts.v[i], files, &budget);
    json_object_set_new(r, "files", files);
    return r;
}
