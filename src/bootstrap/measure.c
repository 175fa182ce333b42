/*
 * measure.c — one supervisor measurement of a workspace kernel, and the
 * canonical-memory check every version commit is followed by.
 *
 * The supervisor measures through the same evaluator and sandbox as an agent's
 * `aka eval`, but always against the campaign's original operator directory
 * (the pinned op_dir), never against the workspace's copies: a workspace file
 * is something a candidate could have touched.
 */
#include "base/fs.h"
#include "bootstrap/internal.h"
#include "git/git.h"

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

static enum aka_sandbox_isolation isolation_of(const char *name)
{
    return name && strcmp(name, "none") == 0 ? AKA_SBX_NONE : AKA_SBX_BWRAP;
}

int aka_bootstrap_measure(const char *ws, const struct aka_campaign *c,
                          const struct aka_measure_env *env, const char *kernel_rel,
                          bool framework_kernel, struct aka_eval_outcome *o, struct aka_err *err)
{
    struct strbuf kernel = STRBUF_INIT;
    aka_path_join(&kernel, ws, kernel_rel);
    bool python = strcmp(c->layout, "native") != 0;
    struct aka_eval_request req = {
        .op_dir = c->op_dir,
        .kernel = kernel.buf,
        .framework = python && !framework_kernel ? "PyTorch" : c->framework,
        .platform = c->platform,
        .repo_root = env->repo_root,
        .multi_seed = framework_kernel ? env->multi_seed : 1,
        .timed_runs = env->timed_runs,
        .warmup = env->warmup,
        .isolation = isolation_of(c->sandbox_isolation),
        .timeout_s = env->timeout_s,
    };
    int rc = aka_evaluate(&req, o, err);
    strbuf_release(&kernel);
    return rc;
}

int aka_bootstrap_check_canonical(const char *ws, long version, struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT, disk = STRBUF_INIT, head = STRBUF_INIT, rel = STRBUF_INIT;
    struct aka_memory_record m;
    struct aka_git g;
    aka_git_open(&g, ws);
    strbuf_addf(&rel, "memory/v%ld.json", version);
    aka_path_join(&path, ws, rel.buf);
    int rc = aka_memory_load(path.buf, &m, err);
    if (rc == 0) {
        aka_memory_release(&m);
        rc = aka_read_file(path.buf, &disk, AKA_READ_LIMIT_DEFAULT, err);
    }
    if (rc == 0)
        rc = aka_git_show_blob(&g, "HEAD", rel.buf, &head, err);
    if (rc == 0 && (disk.len != head.len || memcmp(disk.buf, head.buf, disk.len) != 0))
        rc = aka_err_set(err, AKA_EXIT_FAILED,
                         "%s: differs from its committed copy HEAD:%s; refusing to advance",
                         path.buf, rel.buf);
    if (rc < 0 && err->code == AKA_EXIT_USAGE)
        err->code = AKA_EXIT_FAILED;
    aka_git_close(&g);
    strbuf_release(&path);
    strbuf_release(&disk);
    strbuf_release(&head);
    strbuf_release(&rel);
    return rc;
}
