/*
 * job.c — the job object: lifecycle, the validating builders (files, directory
 * trees, environment, artifacts, runtime binds) and whole-job validation.
 */
#include "sandbox/internal.h"

#include "base/fs.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const kind_names[] = {"run", "profile", "check", "dev", NULL};

const char *aka_sandbox_kind_name(enum aka_sandbox_kind kind)
{
    return (unsigned)kind < 4 ? kind_names[kind] : "?";
}

int aka_sandbox_kind_parse(const char *s, enum aka_sandbox_kind *out)
{
    for (int i = 0; kind_names[i]; i++)
        if (strcmp(s, kind_names[i]) == 0) {
            *out = (enum aka_sandbox_kind)i;
            return 0;
        }
    return -1;
}

void aka_sandbox_job_init(struct aka_sandbox_job *job, enum aka_sandbox_kind kind)
{
    memset(job, 0, sizeof(*job));
    job->kind = kind;
    job->isolation = AKA_SBX_BWRAP;
    job->detect_python = true;
    job->timeout_s = AKA_SBX_DEFAULT_TIMEOUT_S;
    job->stdout_cap = job->stderr_cap = AKA_SBX_DEFAULT_OUT_CAP;
    job->max_input_bytes = AKA_SBX_MAX_INPUT_BYTES;
    job->max_artifact_bytes = AKA_SBX_MAX_ARTIFACT_BYTES;
    job->max_artifact_total = AKA_SBX_MAX_ARTIFACT_TOTAL;
    job->pids_max = AKA_SBX_DEFAULT_PIDS_MAX;
    job->gpu_vendor = AKA_VENDOR_NVIDIA;
}

bool aka_sandbox_inside_agent(void)
{
    const char *confined = getenv("ATREX_AKA_AGENT_SANDBOX");
    return confined && strcmp(confined, "bwrap") == 0;
}

void aka_sandbox_job_release(struct aka_sandbox_job *job)
{
    for (size_t i = 0; i < job->files.n; i++) {
        free(job->files.v[i].src);
        free(job->files.v[i].root);
        free(job->files.v[i].dest);
    }
    VEC_FREE(job->files);
    for (size_t i = 0; i < job->binds.n; i++) {
        free(job->binds.v[i].src);
        free(job->binds.v[i].dest);
    }
    VEC_FREE(job->binds);
    strvec_clear(&job->argv);
    strvec_clear(&job->env);
    strvec_clear(&job->artifacts);
    strvec_clear(&job->deny_paths);
    free(job->artifact_dir);
    job->artifact_dir = NULL;
}

static bool dest_taken(const struct aka_sandbox_job *job, const char *dest)
{
    for (size_t i = 0; i < job->files.n; i++)
        if (strcmp(job->files.v[i].dest, dest) == 0)
            return true;
    return false;
}

int aka_sandbox_job_add_file(struct aka_sandbox_job *job, const char *src, const char *root,
                             const char *dest, bool read_only, bool trusted, struct aka_err *err)
{
    struct strbuf dir = STRBUF_INIT, r = STRBUF_INIT, rel = STRBUF_INIT;
    if (!root) {
        /* Without a stated root the file's own directory is the root: only the
         * file itself (never a symlink) can be shipped. */
        const char *slash = strrchr(src, '/');
        strbuf_addstr(&dir, !slash ? "." : slash == src ? "/" : "");
        if (slash && slash != src)
            strbuf_add(&dir, src, (size_t)(slash - src));
        root = dir.buf;
    }
    struct aka_sandbox_file f = {(char *)src, (char *)root, (char *)dest, read_only, trusted};
    int rc = sbx_check_file(&f, job->generalized, job->max_input_bytes, &r, &rel, err);
    if (rc == 0 && dest_taken(job, dest))
        rc = aka_err_set(err, AKA_EXIT_USAGE, "destination '%s' is shipped twice", dest);
    if (rc == 0) {
        f.src = aka_xstrdup(src);
        f.root = aka_xstrdup(root);
        f.dest = aka_xstrdup(dest);
        VEC_PUSH(job->files, f);
    }
    strbuf_release(&dir);
    strbuf_release(&r);
    strbuf_release(&rel);
    return rc;
}

int aka_sandbox_job_add_env(struct aka_sandbox_job *job, const char *name_value,
                            struct aka_err *err)
{
    if (sbx_check_env(name_value, err) < 0)
        return -1;
    strvec_push(&job->env, name_value);
    return 0;
}

int aka_sandbox_job_add_artifact(struct aka_sandbox_job *job, const char *rel, struct aka_err *err)
{
    const char *why;
    if (aka_sandbox_check_rel(rel, "artifact path", err) < 0)
        return -1;
    /* Artifacts land in the caller's tree: they may never plant supervisor state. */
    if ((why = sbx_artifact_rule(rel)))
        return aka_err_set(err, AKA_EXIT_USAGE, "artifact path '%s': %s", rel, why);
    strvec_push(&job->artifacts, rel);
    return 0;
}

static int check_one_bind(const struct aka_sandbox_job *job, const struct aka_sandbox_bind *b,
                          struct aka_err *err)
{
    struct strbuf real = STRBUF_INIT;
    int rc = aka_realpath(b->src, &real, err);
    if (rc == 0)
        rc = aka_sandbox_check_bind(real.buf, b->dest, &job->deny_paths, err);
    strbuf_release(&real);
    return rc;
}

int aka_sandbox_job_add_bind(struct aka_sandbox_job *job, const char *spec, struct aka_err *err)
{
    const char *eq = strchr(spec, '=');
    struct aka_sandbox_bind b;
    b.src = eq ? aka_xstrndup(spec, (size_t)(eq - spec)) : aka_xstrdup(spec);
    b.dest = aka_xstrdup(eq ? eq + 1 : spec);
    /* Trailing slashes would make equal paths compare unequal in the checks. */
    for (char *p = b.src; strlen(p) > 1 && p[strlen(p) - 1] == '/';)
        p[strlen(p) - 1] = '\0';
    for (char *p = b.dest; strlen(p) > 1 && p[strlen(p) - 1] == '/';)
        p[strlen(p) - 1] = '\0';
    if (b.src[0] != '/' || b.dest[0] != '/' || (strstr(spec, "/../") || strstr(spec, "/./"))) {
        free(b.src);
        free(b.dest);
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "runtime bind '%s': expected SRC[=DST], both absolute, without '.' "
                           "or '..'",
                           spec);
    }
    if (check_one_bind(job, &b, err) < 0) {
        free(b.src);
        free(b.dest);
        return -1;
    }
    VEC_PUSH(job->binds, b);
    return 0;
}

/* ---- tree walk ---- */

struct walk {
    struct aka_sandbox_job *job;
    const char *root; /* canonical */
    const char *prefix;
    bool read_only;
    struct strvec *skipped;
    struct aka_err *err;
};

static void skip(struct walk *w, const char *rel, const char *why)
{
    if (w->skipped)
        strvec_pushf(w->skipped, "%s/%s: %s", w->root, rel, why);
}

static int walk_dir(struct walk *w, const char *rel_dir, int depth);

static int walk_entry(struct walk *w, const char *rel, int depth)
{
    struct strbuf full = STRBUF_INIT, dest = STRBUF_INIT;
    struct stat st;
    const char *why;
    int rc = 0;

    aka_path_join(&full, w->root, rel);
    if (lstat(full.buf, &st) < 0)
        skip(w, rel, "vanished while listing");
    else if (S_ISLNK(st.st_mode))
        skip(w, rel, "symlink (never followed)");
    else if (S_ISDIR(st.st_mode))
        rc = walk_dir(w, rel, depth + 1);
    else if (!S_ISREG(st.st_mode))
        skip(w, rel, "not a regular file");
    else if ((why = aka_sandbox_never_shipped(rel, w->job->generalized)))
        skip(w, rel, why);
    else if ((size_t)st.st_size > w->job->max_input_bytes)
        skip(w, rel, "over the per-file input limit");
    else {
        if (*w->prefix)
            strbuf_addf(&dest, "%s/", w->prefix);
        strbuf_addstr(&dest, rel);
        rc = aka_sandbox_job_add_file(w->job, full.buf, w->root, dest.buf, w->read_only, false,
                                      w->err);
    }
    strbuf_release(&full);
    strbuf_release(&dest);
    return rc;
}

static int walk_dir(struct walk *w, const char *rel_dir, int depth)
{
    struct strvec names = STRVEC_INIT;
    struct strbuf full = STRBUF_INIT, rel = STRBUF_INIT;
    int rc = 0;

    if (depth > 64)
        return aka_err_set(w->err, AKA_EXIT_USAGE, "%s/%s: directory tree too deep", w->root,
                           rel_dir);
    if (*rel_dir && sbx_never_dir(aka_basename(rel_dir))) {
        skip(w, rel_dir, "never-shipped directory");
        return 0;
    }
    aka_path_join(&full, w->root, rel_dir);
    rc = aka_list_dir(full.buf, &names, w->err);
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        strbuf_reset(&rel);
        if (*rel_dir)
            strbuf_addf(&rel, "%s/", rel_dir);
        strbuf_addstr(&rel, names.v[i]);
        if (w->job->files.n >= AKA_SBX_MAX_FILES)
            rc = aka_err_set(w->err, AKA_EXIT_USAGE, "%s: more than %d files to ship", w->root,
                             AKA_SBX_MAX_FILES);
        else
            rc = walk_entry(w, rel.buf, depth);
    }
    strvec_clear(&names);
    strbuf_release(&full);
    strbuf_release(&rel);
    return rc;
}

int aka_sandbox_job_add_tree(struct aka_sandbox_job *job, const char *dir, const char *dest_prefix,
                             bool read_only, struct strvec *skipped, struct aka_err *err)
{
    struct strbuf root = STRBUF_INIT;
    const char *why;
    int rc = -1;

    if (!dest_prefix || strcmp(dest_prefix, ".") == 0)
        dest_prefix = "";
    if (*dest_prefix && aka_sandbox_check_rel(dest_prefix, "destination", err) < 0)
        return -1;
    if (aka_realpath(dir, &root, err) < 0)
        goto out;
    if (!aka_is_dir(root.buf)) {
        aka_err_set(err, AKA_EXIT_USAGE, "%s: not a directory", dir);
        goto out;
    }
    if ((why = aka_sandbox_secret_path(root.buf)) ||
        (sbx_never_dir(aka_basename(root.buf)) && (why = "a never-shipped directory"))) {
        aka_err_set(err, AKA_EXIT_USAGE, "%s: %s; never shipped", dir, why);
        goto out;
    }
    struct walk w = {job, root.buf, dest_prefix, read_only, skipped, err};
    rc = walk_dir(&w, "", 0);
out:
    strbuf_release(&root);
    return rc;
}

int aka_sandbox_job_add_input(struct aka_sandbox_job *job, const char *path, const char *dest,
                              bool read_only, struct strvec *skipped, struct aka_err *err)
{
    struct strbuf real = STRBUF_INIT, where = STRBUF_INIT;
    const char *why;
    int rc = aka_realpath(path, &real, err);
    if (rc == 0 && (why = sbx_state_path(real.buf, &where)))
        rc = aka_err_set(err, AKA_EXIT_USAGE,
                         "%s is inside %s (%s): supervisor state and repository metadata are "
                         "never shipped",
                         real.buf, why, where.buf);
    else if (rc == 0 && aka_is_dir(real.buf))
        rc = aka_sandbox_job_add_tree(job, path, dest ? dest : aka_basename(real.buf), read_only,
                                      skipped, err);
    else if (rc == 0)
        rc = aka_sandbox_job_add_file(job, path, NULL, dest ? dest : aka_basename(path), read_only,
                                      false, err);
    strbuf_release(&real);
    strbuf_release(&where);
    return rc;
}

/* ---- whole-job validation ---- */

static int cmp_strp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int validate_files(const struct aka_sandbox_job *job, struct aka_err *err)
{
    struct strbuf root = STRBUF_INIT, rel = STRBUF_INIT;
    const char **dests = aka_xcalloc(job->files.n + 1, sizeof(*dests));
    int rc = 0;

    if (job->files.n > AKA_SBX_MAX_FILES)
        rc = aka_err_set(err, AKA_EXIT_USAGE, "more than %d files to ship", AKA_SBX_MAX_FILES);
    for (size_t i = 0; rc == 0 && i < job->files.n; i++) {
        rc = sbx_check_file(&job->files.v[i], job->generalized, job->max_input_bytes, &root, &rel,
                            err);
        dests[i] = job->files.v[i].dest;
    }
    if (rc == 0 && job->files.n > 1) {
        qsort(dests, job->files.n, sizeof(*dests), cmp_strp);
        for (size_t i = 1; rc == 0 && i < job->files.n; i++)
            if (strcmp(dests[i - 1], dests[i]) == 0)
                rc =
                    aka_err_set(err, AKA_EXIT_USAGE, "destination '%s' is shipped twice", dests[i]);
    }
    free(dests);
    strbuf_release(&root);
    strbuf_release(&rel);
    return rc;
}

static int validate_gpus(const struct aka_sandbox_job *job, struct aka_err *err)
{
    if (job->gpu_count < 0 || job->gpu_count > AKA_SBX_MAX_GPUS)
        return aka_err_set(err, AKA_EXIT_USAGE, "gpu count %d: expected 0..%d", job->gpu_count,
                           AKA_SBX_MAX_GPUS);
    if (job->n_gpu_ids && job->n_gpu_ids != (size_t)job->gpu_count)
        return aka_err_set(err, AKA_EXIT_USAGE, "%zu GPU ids given for a %d-GPU job",
                           job->n_gpu_ids, job->gpu_count);
    for (size_t i = 0; i < job->n_gpu_ids; i++) {
        if (job->gpu_ids[i] < 0 || job->gpu_ids[i] > 255)
            return aka_err_set(err, AKA_EXIT_USAGE, "GPU id %d: out of range", job->gpu_ids[i]);
        for (size_t k = 0; k < i; k++)
            if (job->gpu_ids[k] == job->gpu_ids[i])
                return aka_err_set(err, AKA_EXIT_USAGE, "GPU id %d: given twice", job->gpu_ids[i]);
    }
    return 0;
}

static int validate_scalars(const struct aka_sandbox_job *job, struct aka_err *err)
{
    if ((unsigned)job->kind > AKA_SBX_DEV || (unsigned)job->isolation > AKA_SBX_NONE)
        return aka_err_set(err, AKA_EXIT_USAGE, "job: unknown kind or isolation mode");
    if (job->argv.n == 0 || !job->argv.v[0][0])
        return aka_err_set(err, AKA_EXIT_USAGE, "job: no command");
    if (job->timeout_s < 1 || job->timeout_s > AKA_SBX_MAX_TIMEOUT_S)
        return aka_err_set(err, AKA_EXIT_USAGE, "timeout %ld s: expected 1..%d", job->timeout_s,
                           AKA_SBX_MAX_TIMEOUT_S);
    if (job->stdout_cap < 1 || job->stderr_cap < 1 || job->stdout_cap > ((size_t)1 << 30) ||
        job->stderr_cap > ((size_t)1 << 30))
        return aka_err_set(err, AKA_EXIT_USAGE, "output caps must be 1 byte .. 1 GiB");
    if (job->pids_max < 0)
        return aka_err_set(err, AKA_EXIT_USAGE, "pids limit %ld: expected >= 0", job->pids_max);
    if (job->artifacts.n && (!job->artifact_dir || !*job->artifact_dir))
        return aka_err_set(err, AKA_EXIT_USAGE, "job: artifacts requested but no artifact dir");
    for (size_t i = 0; i < job->deny_paths.n; i++)
        if (job->deny_paths.v[i][0] != '/')
            return aka_err_set(err, AKA_EXIT_USAGE, "protected path '%s': must be absolute",
                               job->deny_paths.v[i]);
    return validate_gpus(job, err);
}

int aka_sandbox_job_validate(const struct aka_sandbox_job *job, struct aka_err *err)
{
    const char *why;
    if (validate_scalars(job, err) < 0 || validate_files(job, err) < 0)
        return -1;
    for (size_t i = 0; i < job->env.n; i++)
        if (sbx_check_env(job->env.v[i], err) < 0)
            return -1;
    for (size_t i = 0; i < job->artifacts.n; i++) {
        if (aka_sandbox_check_rel(job->artifacts.v[i], "artifact path", err) < 0)
            return -1;
        if ((why = sbx_artifact_rule(job->artifacts.v[i])))
            return aka_err_set(err, AKA_EXIT_USAGE, "artifact path '%s': %s", job->artifacts.v[i],
                               why);
    }
    for (size_t i = 0; i < job->binds.n; i++)
        if (check_one_bind(job, &job->binds.v[i], err) < 0)
            return -1;
    return 0;
}
