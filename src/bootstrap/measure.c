/*
 * measure.c — one supervisor measurement of a workspace kernel.
 *
 * The supervisor measures through the same evaluator and sandbox as an agent's
 * `aka eval`, always against the campaign's operator snapshot (taken at V0 and
 * verified against its manifest before each job) with the asset tree the campaign
 * pinned — never against the workspace's copies of the evaluator inputs, which a
 * candidate could have touched, nor against the original operator directory, which
 * anyone could have edited since (workspace/snapshot.c).
 */
#include "base/fs.h"
#include "bootstrap/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void aka_bootstrap_progress(const struct aka_measure_env *env, const char *fmt, ...)
{
    if (!env || !env->progress)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    env->progress(line, env->progress_data);
}

void aka_bootstrap_add_roofline(const struct aka_measure_env *env, json_t *doc)
{
    json_t *roofline = env && env->roofline
                           ? env->roofline(json_object_get(doc, "performance"), env->roofline_data)
                           : NULL;
    if (roofline)
        json_object_set_new(doc, "roofline", roofline);
}

int aka_bootstrap_measure(const char *ws, const struct aka_campaign *c,
                          const struct aka_measure_env *env, const char *kernel_rel,
                          bool framework_kernel, struct aka_eval_outcome *o, struct aka_err *err)
{
    struct strbuf kernel = STRBUF_INIT, op_dir = STRBUF_INIT;
    if (aka_ws_eval_inputs(ws, env->repo_root, &op_dir, err) < 0) {
        strbuf_release(&op_dir);
        return -1;
    }
    aka_path_join(&kernel, ws, kernel_rel);
    bool python = strcmp(c->layout, "native") != 0;
    struct aka_eval_request req = {
        .op_dir = op_dir.buf,
        .kernel = kernel.buf,
        .framework = python && !framework_kernel ? "PyTorch" : c->framework,
        .platform = c->platform,
        .cuda_arch = c->cuda_arch,
        .repo_root = env->repo_root,
        .multi_seed = framework_kernel ? env->multi_seed : 1,
        .timed_runs = env->timed_runs,
        .warmup = env->warmup,
        .timeout_s = env->timeout_s,
        .production_score = strcmp(c->mode, "production") == 0,
        .generalized = c->generalized,
    };
    int rc = aka_evaluate(env->transport, &req, o, err);
    strbuf_release(&kernel);
    strbuf_release(&op_dir);
    return rc;
}
