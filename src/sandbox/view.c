/*
 * view.c — the bwrap argv of a view: one long-lived command (the agent
 * sandbox, src/agents/confine.c) that sees named host paths in place instead
 * of a job directory of copies.
 *
 * It is built from the same pieces as a job's argv (binds.c): the head with
 * every namespace, --die-with-parent, --new-session and no capabilities; the
 * read-only system with generated passwd/group/hosts; fresh /proc, /dev,
 * /dev/shm and /tmp. Then the caller's paths, parents before children, and the
 * sandbox's own root made read-only, so that the writable places are exactly
 * the writable paths, the tmpfs paths, /tmp and /dev/shm.
 */
#include "sandbox/internal.h"

#include "base/fs.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VIEW_ROOT_UID 1000L

void aka_sandbox_view_init(struct aka_sandbox_view *v)
{
    memset(v, 0, sizeof(*v));
    v->gpu_vendor = AKA_VENDOR_NVIDIA;
}

void aka_sandbox_view_release(struct aka_sandbox_view *v)
{
    for (size_t i = 0; i < v->paths.n; i++) {
        free(v->paths.v[i].src);
        free(v->paths.v[i].dest);
    }
    VEC_FREE(v->paths);
    free(v->chdir);
    v->chdir = NULL;
}

void aka_sandbox_view_add(struct aka_sandbox_view *v, enum aka_sandbox_view_mode mode,
                          const char *src, const char *dest)
{
    struct aka_sandbox_view_path p = {mode, mode == AKA_VIEW_TMPFS ? NULL : aka_xstrdup(src),
                                      aka_xstrdup(dest ? dest : src)};
    VEC_PUSH(v->paths, p);
}

long aka_sandbox_view_uid(void)
{
    return geteuid() == 0 ? VIEW_ROOT_UID : -1;
}

int aka_sandbox_view_etc(const char *ctl_dir, const char *home, struct aka_err *err)
{
    long uid = aka_sandbox_view_uid();
    unsigned u = uid >= 0 ? (unsigned)uid : (unsigned)getuid();
    unsigned g = uid >= 0 ? (unsigned)uid : (unsigned)getgid();
    return sbx_write_etc(ctl_dir, u, g, home && *home ? home : "/tmp", err);
}

int aka_sandbox_find_program(const char *name, struct strbuf *out)
{
    return sbx_find_in_path(name, getenv("PATH"), out);
}

void aka_sandbox_mapped_files(struct strvec *out)
{
    struct strbuf maps = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    if (aka_read_file("/proc/self/maps", &maps, (size_t)16 << 20, &ignored) < 0)
        goto out;
    /* ADDR PERMS OFFSET DEV INODE PATH: a file mapping's path starts with '/'. */
    for (char *line = maps.buf; line && *line;) {
        char *nl = strchr(line, '\n'), *path;
        if (nl)
            *nl = '\0';
        path = strchr(line, '/');
        if (path && !strstr(path, " (deleted)") && strvec_find(out, path) < 0)
            strvec_push(out, path);
        line = nl ? nl + 1 : NULL;
    }
out:
    strbuf_release(&maps);
}

void aka_sandbox_python_prefix(struct strbuf *out)
{
    struct aka_sandbox_job job; /* the detection a job runs, with no deny path of its own */
    aka_sandbox_job_init(&job, AKA_SBX_RUN);
    sbx_python_prefix(&job, out, NULL);
    aka_sandbox_job_release(&job);
}

int aka_sandbox_find_bwrap(const char *given, struct strbuf *out, struct aka_err *err)
{
    if (sbx_find_in_path(given && *given ? given : "bwrap", getenv("PATH"), out) == 0)
        return 0;
    return aka_err_set(err, AKA_EXIT_ENV, "bubblewrap (bwrap) was not found%s%s",
                       given && *given ? " at " : " in PATH", given && *given ? given : "");
}

/* Parents first: a shorter destination is mounted before a longer one; ties keep order. */
static int by_depth(const void *a, const void *b)
{
    const struct aka_sandbox_view_path *const *x = a, *const *y = b;
    size_t lx = strlen((*x)->dest), ly = strlen((*y)->dest);
    if (lx != ly)
        return lx < ly ? -1 : 1;
    return *x < *y ? -1 : *x > *y;
}

static const char *mode_option(enum aka_sandbox_view_mode m)
{
    static const char *const ops[] = {"--ro-bind", "--bind", "--ro-bind-try", "--bind-try",
                                      "--tmpfs"};
    return ops[m];
}

static int check_path(const struct aka_sandbox_view_path *p, struct aka_err *err)
{
    if (p->dest[0] != '/' || strcmp(p->dest, "/") == 0 || (p->src && p->src[0] != '/'))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "sandbox view path %s: expected an absolute path other than /", p->dest);
    return 0;
}

static int add_paths(const struct aka_sandbox_view *v, struct strvec *a, struct aka_err *err)
{
    const struct aka_sandbox_view_path **order = aka_xmalloc((v->paths.n + 1) * sizeof(*order));
    int rc = 0;
    for (size_t i = 0; i < v->paths.n; i++)
        order[i] = &v->paths.v[i];
    qsort(order, v->paths.n, sizeof(*order), by_depth);
    for (size_t i = 0; rc == 0 && i < v->paths.n; i++) {
        rc = check_path(order[i], err);
        strvec_push(a, mode_option(order[i]->mode));
        if (order[i]->src)
            strvec_push(a, order[i]->src);
        strvec_push(a, order[i]->dest);
    }
    free(order);
    return rc;
}

static int add_gpus(const struct aka_sandbox_view *v, struct strvec *a, struct aka_err *err)
{
    struct aka_sandbox_job job; /* the GPU part of a job's argv, for the same nodes */
    aka_sandbox_job_init(&job, AKA_SBX_RUN);
    job.gpu_count = v->gpu_count;
    job.gpu_vendor = v->gpu_vendor;
    int rc = sbx_add_gpus(&job, a, err);
    aka_sandbox_job_release(&job);
    return rc;
}

int aka_sandbox_view_argv(const struct aka_sandbox_view *v, const char *bwrap, const char *ctl_dir,
                          const char *const *cmd, struct strvec *argv, struct aka_err *err)
{
    sbx_bwrap_head(argv, bwrap, v->share_net, aka_sandbox_view_uid(), false);
    sbx_add_system(argv, ctl_dir, v->share_net);
    sbx_add_fresh(argv, false);
    if (add_gpus(v, argv, err) < 0 || add_paths(v, argv, err) < 0)
        return -1;
    /* Last mount step, as for a job: the sandbox's own root becomes read-only. */
    strvec_pushv(argv, (const char *const[]){"--remount-ro", "/", NULL});
    if (v->chdir)
        strvec_pushv(argv, (const char *const[]){"--chdir", v->chdir, NULL});
    strvec_push(argv, "--");
    strvec_pushv(argv, cmd);
    return 0;
}
