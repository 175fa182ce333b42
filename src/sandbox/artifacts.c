/*
 * artifacts.c — bringing files back out of a finished job directory.
 *
 * Only the relative paths the job named come back. Every component inside the
 * job directory is opened without following symlinks, so a job that plants a
 * link to ~/.ssh or to the workspace gets the artifact refused, not the link
 * followed; the same holds for the destination tree, which may be an agent's
 * worktree. Files are written under a temporary name and renamed into place,
 * with setuid/setgid bits and group/other write dropped. Per-file and total
 * size limits bound what a job can make the supervisor copy.
 */
#include "sandbox/internal.h"

#include "base/fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct collect {
    const struct aka_sandbox_job *job;
    struct aka_sandbox_result *res;
    int outfd;    /* the artifact directory */
    size_t total; /* bytes brought back so far */
    size_t files;
};

static void refuse(struct collect *c, const char *rel, const char *why)
{
    strvec_pushf(&c->res->artifacts_refused, "%s: %s", rel, why);
}

/* Write the open regular file `in` to artifact_dir/rel via a temporary name. */
static int place_file(struct collect *c, int in, const char *rel, mode_t mode, struct aka_err *err)
{
    const char *slash = strrchr(rel, '/'), *base = slash ? slash + 1 : rel;
    struct strbuf parent = STRBUF_INIT, tmp = STRBUF_INIT;
    if (slash)
        strbuf_add(&parent, rel, (size_t)(slash - rel));
    int pfd = sbx_mkdir_beneath(c->outfd, parent.buf);
    int rc = -1;
    if (pfd < 0) {
        aka_err_set(err, AKA_EXIT_USAGE, "destination directory unusable: %s", strerror(errno));
        goto out;
    }
    strbuf_addf(&tmp, ".%s.aka-tmp", base);
    unlinkat(pfd, tmp.buf, 0); /* a leftover of an interrupted copy */
    rc = sbx_copy_fd(in, pfd, tmp.buf, mode, c->job->max_artifact_bytes, err);
    /* rename replaces a planted symlink itself, never what it points to */
    if (rc == 0 && renameat(pfd, tmp.buf, pfd, base) < 0)
        rc = aka_err_set(err, AKA_EXIT_USAGE, "cannot move into place: %s", strerror(errno));
    if (rc < 0)
        unlinkat(pfd, tmp.buf, 0);
    close(pfd);
out:
    strbuf_release(&parent);
    strbuf_release(&tmp);
    return rc;
}

static void take_file(struct collect *c, int fd, const struct stat *st, const char *rel)
{
    struct aka_err err = AKA_ERR_INIT;
    if ((size_t)st->st_size > c->job->max_artifact_bytes) {
        refuse(c, rel, "over the per-file artifact limit");
        return;
    }
    if (c->total + (size_t)st->st_size > c->job->max_artifact_total) {
        refuse(c, rel, "over the total artifact limit");
        return;
    }
    if (place_file(c, fd, rel, (st->st_mode & 0755) | 0600, &err) < 0) {
        refuse(c, rel, err.msg);
        return;
    }
    c->total += (size_t)st->st_size;
    c->files++;
    strvec_push(&c->res->artifacts, rel);
}

static void take(struct collect *c, int fd, const char *rel, int depth);

static void take_dir(struct collect *c, int fd, const char *rel, int depth)
{
    struct strbuf child = STRBUF_INIT;
    int dfd = dup(fd);
    DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
    struct dirent *de;
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        refuse(c, rel, "cannot list directory");
        return;
    }
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        strbuf_reset(&child);
        strbuf_addf(&child, "%s/%s", rel, de->d_name);
        int cfd = openat(fd, de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (cfd < 0) {
            refuse(c, child.buf, errno == ELOOP ? "symlink (never followed)" : strerror(errno));
            continue;
        }
        take(c, cfd, child.buf, depth + 1);
        close(cfd);
    }
    closedir(d);
    strbuf_release(&child);
}

static void take(struct collect *c, int fd, const char *rel, int depth)
{
    struct stat st = {0};
    const char *why = sbx_artifact_rule(rel);
    if (!why && fstat(fd, &st) < 0)
        why = strerror(errno);
    else if (!why && S_ISDIR(st.st_mode) && depth > 32)
        why = "directory tree too deep";
    else if (!why && !S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
        why = "not a regular file or directory";
    else if (!why && S_ISREG(st.st_mode) && c->files >= AKA_SBX_MAX_FILES)
        why = "too many artifact files";
    if (why)
        refuse(c, rel, why);
    else if (S_ISREG(st.st_mode))
        take_file(c, fd, &st, rel);
    else
        take_dir(c, fd, rel, depth);
}

static void collect_one(struct collect *c, int jobfd, const char *rel)
{
    struct aka_err err = AKA_ERR_INIT;
    if (aka_sandbox_check_rel(rel, "artifact path", &err) < 0) {
        refuse(c, rel, err.msg);
        return;
    }
    /* O_NONBLOCK: opening a FIFO the job left must not hang the supervisor. */
    int fd = sbx_open_beneath(jobfd, rel, O_RDONLY | O_NONBLOCK, 0);
    if (fd < 0) {
        refuse(c, rel,
               errno == ENOENT ? "does not exist"
               : errno == ELOOP || errno == ENOTDIR
                   ? "a symlink (or a path through one); never followed"
                   : strerror(errno));
        return;
    }
    take(c, fd, rel, 0);
    close(fd);
}

void sbx_collect_artifacts(const struct aka_sandbox_job *job, const char *jobdir,
                           struct aka_sandbox_result *res)
{
    struct aka_err err = AKA_ERR_INIT;
    struct collect c = {job, res, -1, 0, 0};
    if (!job->artifacts.n)
        return;
    int jobfd = open(jobdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (aka_mkdir_p(job->artifact_dir, 0755, &err) == 0)
        c.outfd = open(job->artifact_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (size_t i = 0; i < job->artifacts.n; i++) {
        if (jobfd < 0 || c.outfd < 0)
            refuse(&c, job->artifacts.v[i],
                   c.outfd < 0 ? "artifact directory unusable" : "job directory unreadable");
        else
            collect_one(&c, jobfd, job->artifacts.v[i]);
    }
    if (jobfd >= 0)
        close(jobfd);
    if (c.outfd >= 0)
        close(c.outfd);
}
