/*
 * stage.c — the job directory on the host: a fresh mkdtemp tree holding the
 * writable job dir and the generated /etc files, the copy of every allowlisted
 * input into it, and its removal afterwards.
 *
 * Copies are plain read/write without fsync: a job directory lives for one
 * command and is never state worth recovering (aka_copy_file's atomic,
 * fsynced replace would cost more than the rest of the job's overhead).
 */
#include "sandbox/internal.h"

#include "base/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

void sbx_stage_init(struct sbx_stage *st)
{
    strbuf_init(&st->root, 0);
    strbuf_init(&st->job, 0);
    strbuf_init(&st->ctl, 0);
}

static int write_small(const char *dir, const char *name, const char *text, struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    aka_path_join(&path, dir, name);
    int fd = open(path.buf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    size_t n = strlen(text);
    int rc = 0;
    if (fd < 0 || write(fd, text, n) != (ssize_t)n)
        rc = aka_err_set(err, AKA_EXIT_ENV, "%s: cannot write: %s", path.buf, strerror(errno));
    if (fd >= 0)
        close(fd);
    strbuf_release(&path);
    return rc;
}

/* Minimal passwd/group/hosts: names resolve, localhost resolves, no host account leaks. */
int sbx_write_etc(const char *ctl, unsigned uid, unsigned gid, const char *home,
                  struct aka_err *err)
{
    struct strbuf passwd = STRBUF_INIT, group = STRBUF_INIT;
    strbuf_addf(&passwd, "%s:x:%u:%u:aka sandbox:%s:/bin/sh\n", uid ? "sandbox" : "root", uid, gid,
                home);
    strbuf_addstr(&passwd, "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
    strbuf_addf(&group, "%s:x:%u:\nnogroup:x:65534:\n", gid ? "sandbox" : "root", gid);
    int rc = write_small(ctl, "passwd", passwd.buf, err);
    if (rc == 0)
        rc = write_small(ctl, "group", group.buf, err);
    if (rc == 0)
        rc = write_small(ctl, "hosts",
                         "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
                         "127.0.1.1\t" SBX_HOSTNAME "\n",
                         err);
    strbuf_release(&passwd);
    strbuf_release(&group);
    return rc;
}

/* Why dir cannot hold job directories, or NULL. */
static const char *tmp_unusable(const char *dir)
{
    struct stat st;
    struct statvfs vfs;
    if (stat(dir, &st) < 0)
        return strerror(errno);
    if (!S_ISDIR(st.st_mode))
        return "not a directory";
    if (access(dir, W_OK | X_OK) < 0)
        return errno == EROFS ? "on a read-only file system" : "not writable";
    if (statvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_RDONLY))
        return "on a read-only file system";
    /* bwrap binds the job directory with its mount's flags: nothing built or shipped
     * into it could be executed, and every candidate would fail for the machine. */
    if (statvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC))
        return "on a noexec mount (the job's programs could not run there)";
    return NULL;
}

int aka_sandbox_check_tmp(const char *tmp_dir, struct aka_err *err)
{
    const char *dir = tmp_dir && *tmp_dir ? tmp_dir : getenv("TMPDIR");
    const char *src = tmp_dir && *tmp_dir ? "--sandbox-tmp" : "$TMPDIR";
    if (!dir || !*dir) {
        dir = "/tmp";
        src = "default";
    }
    const char *why = tmp_unusable(dir);
    if (why)
        return aka_err_set(err, AKA_EXIT_ENV, "sandbox temp directory %s (%s): %s", dir, src, why);
    return 0;
}

int sbx_stage_create(struct sbx_stage *st, const char *tmp_dir, struct aka_err *err)
{
    struct strbuf tmp = STRBUF_INIT;
    if (aka_sandbox_check_tmp(tmp_dir, err) < 0)
        return -1;
    /* Absolute, whatever was given: bwrap binds the job directory by this path. */
    if (tmp_dir && *tmp_dir && aka_realpath(tmp_dir, &tmp, err) < 0) {
        err->code = AKA_EXIT_ENV;
        return -1;
    }
    /* mkdtemp gives 0700: a setuid file a job plants stays unreachable to other users. */
    if (aka_make_temp_dir(tmp.len ? tmp.buf : NULL, "aka-sbx", &st->root, err) < 0) {
        err->code = AKA_EXIT_ENV;
        strbuf_release(&tmp);
        return -1;
    }
    strbuf_reset(&tmp);
    aka_path_join(&st->job, st->root.buf, "job");
    aka_path_join(&st->ctl, st->root.buf, "ctl");
    aka_path_join(&tmp, st->job.buf, "tmp");
    int rc = 0;
    if (mkdir(st->job.buf, 0755) < 0 || mkdir(tmp.buf, 0700) < 0 || mkdir(st->ctl.buf, 0755) < 0)
        rc = aka_err_set(err, AKA_EXIT_ENV, "%s: cannot create the job directory: %s", st->root.buf,
                         strerror(errno));
    if (rc == 0)
        rc = sbx_write_etc(st->ctl.buf, (unsigned)getuid(), (unsigned)getgid(), st->job.buf, err);
    strbuf_release(&tmp);
    return rc;
}

/* Copy the rest of in to out, refusing more than limit bytes (0: no limit). */
static int pump(int in, int out, const char *rel, size_t limit, struct aka_err *err)
{
    char buf[65536];
    size_t total = 0;
    for (;;) {
        ssize_t n = read(in, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return aka_err_set(err, AKA_EXIT_USAGE, "%s: read failed: %s", rel, strerror(errno));
        if (n == 0)
            return 0;
        total += (size_t)n;
        if (limit && total > limit)
            return aka_err_set(err, AKA_EXIT_USAGE, "%s: larger than the %zu-byte limit", rel,
                               limit);
        if (write(out, buf, (size_t)n) != n)
            return aka_err_set(err, AKA_EXIT_ENV, "%s: write failed: %s", rel, strerror(errno));
    }
}

int sbx_copy_fd(int in, int dirfd, const char *rel, mode_t mode, size_t limit, struct aka_err *err)
{
    int out = sbx_open_beneath(dirfd, rel, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (out < 0)
        return aka_err_set(err, errno == EEXIST ? AKA_EXIT_USAGE : AKA_EXIT_ENV,
                           "%s: cannot create: %s", rel, strerror(errno));
    int rc = pump(in, out, rel, limit, err);
    /* fchmod, not the open mode, so the umask cannot change what was asked. */
    if (rc == 0 && fchmod(out, mode) < 0)
        rc = aka_err_set(err, AKA_EXIT_ENV, "%s: chmod failed: %s", rel, strerror(errno));
    close(out);
    return rc;
}

static int copy_one(const struct aka_sandbox_job *job, const struct aka_sandbox_file *f, int jobfd,
                    struct aka_err *err)
{
    struct strbuf root = STRBUF_INIT, rel = STRBUF_INIT;
    struct stat st;
    int rootfd = -1, in = -1, rc = -1;

    if (sbx_check_file(f, job->generalized, job->max_input_bytes, &root, &rel, err) < 0)
        goto out;
    rootfd = open(root.buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    /* Opening below the root again, component by component, closes the window in
     * which a checked path could be swapped for a symlink before the copy. */
    in = rootfd < 0 ? -1 : sbx_open_beneath(rootfd, rel.buf, O_RDONLY, 0);
    if (in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
        aka_err_set(err, AKA_EXIT_USAGE, "%s: changed while being shipped (%s)", f->src,
                    in < 0 ? strerror(errno) : "no longer a regular file");
        goto out;
    }
    mode_t mode = st.st_mode & 0777; /* setuid/setgid/sticky never cross */
    if (f->read_only)
        mode &= ~(mode_t)0222;
    rc = sbx_copy_fd(in, jobfd, f->dest, mode | 0400, job->max_input_bytes, err);
out:
    if (in >= 0)
        close(in);
    if (rootfd >= 0)
        close(rootfd);
    strbuf_release(&root);
    strbuf_release(&rel);
    return rc;
}

int sbx_stage_copy_inputs(const struct aka_sandbox_job *job, const struct sbx_stage *st,
                          struct aka_err *err)
{
    int jobfd = open(st->job.buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;
    if (jobfd < 0)
        return aka_err_set(err, AKA_EXIT_ENV, "%s: %s", st->job.buf, strerror(errno));
    for (size_t i = 0; rc == 0 && i < job->files.n; i++)
        rc = copy_one(job, &job->files.v[i], jobfd, err);
    close(jobfd);
    return rc;
}

/* Give the owner rwx on every directory (never following symlinks) so removal works. */
static void unlock_tree(const char *path, int depth)
{
    struct stat st;
    struct strvec names = STRVEC_INIT;
    struct strbuf child = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;

    if (depth > 256 || lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
        return;
    chmod(path, (st.st_mode & 07777) | 0700);
    if (aka_list_dir(path, &names, &ignored) == 0)
        for (size_t i = 0; i < names.n; i++) {
            aka_path_join(&child, path, names.v[i]);
            unlock_tree(child.buf, depth + 1);
        }
    strvec_clear(&names);
    strbuf_release(&child);
}

void sbx_stage_remove(struct sbx_stage *st, struct strvec *notes)
{
    struct aka_err err = AKA_ERR_INIT;
    if (st->root.len && aka_remove_tree(st->root.buf, &err) < 0) {
        /* A job may leave directories without write permission; fix and retry. */
        aka_err_clear(&err);
        unlock_tree(st->root.buf, 0);
        if (aka_remove_tree(st->root.buf, &err) < 0 && notes)
            strvec_pushf(notes, "job directory not fully removed: %s", err.msg);
    }
    strbuf_release(&st->root);
    strbuf_release(&st->job);
    strbuf_release(&st->ctl);
}
