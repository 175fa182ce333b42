/*
 * fs.c — file and directory plumbing (see fs.h).
 */
#include "base/fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int read_file_flags(const char *path, int flags, struct strbuf *out, size_t limit,
                           struct aka_err *err)
{
    struct stat st;
    size_t start = out->len;
    /* O_NONBLOCK: opening a FIFO planted where a file was expected must not hang
     * us waiting for a writer; it is refused as "not a regular file" below. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | flags);
    if (fd < 0)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: not a regular file", path);
    }
    if ((size_t)st.st_size > limit) {
        close(fd);
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: file is %lld bytes; the limit is %zu", path,
                           (long long)st.st_size, limit);
    }
    for (;;) {
        strbuf_grow(out, 8192);
        ssize_t n = read(fd, out->buf + out->len, out->alloc - out->len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            return aka_err_set(err, AKA_EXIT_USAGE, "%s: read failed: %s", path, strerror(e));
        }
        if (n == 0)
            break;
        strbuf_setlen(out, out->len + (size_t)n);
        if (out->len - start > limit) { /* out may already hold the caller's bytes */
            close(fd);
            return aka_err_set(err, AKA_EXIT_USAGE, "%s: file grew past the %zu-byte limit", path,
                               limit);
        }
    }
    close(fd);
    return 0;
}

int aka_read_file(const char *path, struct strbuf *out, size_t limit, struct aka_err *err)
{
    return read_file_flags(path, 0, out, limit, err);
}

int aka_read_plain_file(const char *path, struct strbuf *out, size_t limit, struct aka_err *err)
{
    return read_file_flags(path, O_NOFOLLOW, out, limit, err);
}

bool aka_is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool aka_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool aka_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static void dir_of(const char *path, struct strbuf *dir)
{
    const char *slash = strrchr(path, '/');
    strbuf_reset(dir);
    if (!slash)
        strbuf_addstr(dir, ".");
    else if (slash == path)
        strbuf_addstr(dir, "/");
    else
        strbuf_add(dir, path, (size_t)(slash - path));
}

int aka_fsync_dir(const char *dir, struct aka_err *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return aka_err_set(err, AKA_EXIT_FAILED, "%s: cannot open directory: %s", dir,
                           strerror(errno));
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    if (rc < 0 && e != EINVAL) /* some filesystems cannot fsync directories */
        return aka_err_set(err, AKA_EXIT_FAILED, "%s: fsync failed: %s", dir, strerror(e));
    return 0;
}

int aka_write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int aka_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode,
                          struct aka_err *err)
{
    struct strbuf tmp = STRBUF_INIT, dir = STRBUF_INIT;
    int fd, rc = -1;

    dir_of(path, &dir);
    /* Same directory as the target so that rename() stays on one filesystem. */
    strbuf_addf(&tmp, "%s.tmp.XXXXXX", path);
    /* O_CLOEXEC: a child started concurrently must not inherit the temp file. */
    fd = mkostemp(tmp.buf, O_CLOEXEC);
    if (fd < 0) {
        aka_err_set(err, AKA_EXIT_FAILED, "%s: cannot create temporary file: %s", path,
                    strerror(errno));
        goto out;
    }
    if (aka_write_all(fd, data, len) < 0 || fchmod(fd, mode) < 0 || fsync(fd) < 0) {
        aka_err_set(err, AKA_EXIT_FAILED, "%s: write failed: %s", path, strerror(errno));
        close(fd);
        unlink(tmp.buf);
        goto out;
    }
    close(fd);
    if (rename(tmp.buf, path) < 0) {
        aka_err_set(err, AKA_EXIT_FAILED, "%s: rename failed: %s", path, strerror(errno));
        unlink(tmp.buf);
        goto out;
    }
    rc = aka_fsync_dir(dir.buf, err);
out:
    strbuf_release(&tmp);
    strbuf_release(&dir);
    return rc;
}

int aka_mkdir_p(const char *path, mode_t mode, struct aka_err *err)
{
    struct strbuf p = STRBUF_INIT;
    strbuf_addstr(&p, path);
    for (size_t i = 1; i <= p.len; i++) {
        if (p.buf[i] != '/' && p.buf[i] != '\0')
            continue;
        char saved = p.buf[i];
        p.buf[i] = '\0';
        if (mkdir(p.buf, mode) < 0 && errno != EEXIST) {
            aka_err_set(err, AKA_EXIT_FAILED, "%s: cannot create directory: %s", p.buf,
                        strerror(errno));
            strbuf_release(&p);
            return -1;
        }
        p.buf[i] = saved;
    }
    strbuf_release(&p);
    if (!aka_is_dir(path))
        return aka_err_set(err, AKA_EXIT_FAILED, "%s: exists and is not a directory", path);
    return 0;
}

int aka_remove_tree(const char *path, struct aka_err *err)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0
                               : aka_err_set(err, AKA_EXIT_FAILED, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) {
        struct strvec names = STRVEC_INIT;
        struct strbuf child = STRBUF_INIT;
        int rc = aka_list_dir(path, &names, err);
        for (size_t i = 0; rc == 0 && i < names.n; i++) {
            aka_path_join(&child, path, names.v[i]);
            rc = aka_remove_tree(child.buf, err);
        }
        strvec_clear(&names);
        strbuf_release(&child);
        if (rc < 0)
            return -1;
        if (rmdir(path) < 0)
            return aka_err_set(err, AKA_EXIT_FAILED, "%s: cannot remove: %s", path,
                               strerror(errno));
        return 0;
    }
    if (unlink(path) < 0)
        return aka_err_set(err, AKA_EXIT_FAILED, "%s: cannot remove: %s", path, strerror(errno));
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int aka_list_dir(const char *path, struct strvec *names, struct aka_err *err)
{
    DIR *d = opendir(path);
    struct dirent *de;
    if (!d)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: cannot list directory: %s", path,
                           strerror(errno));
    for (;;) {
        errno = 0; /* readdir returns NULL both at the end and on error */
        if ((de = readdir(d)) == NULL)
            break;
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        strvec_push(names, de->d_name);
    }
    int e = errno;
    closedir(d);
    if (e)
        return aka_err_set(err, AKA_EXIT_FAILED, "%s: cannot list directory: %s", path,
                           strerror(e));
    if (names->n)
        qsort(names->v, names->n, sizeof(*names->v), cmp_str);
    return 0;
}

static bool in_names(const char *name, const char *const *names)
{
    for (; names && *names; names++)
        if (strcmp(name, *names) == 0)
            return true;
    return false;
}

/* One directory of aka_list_files: rel is the path below the root ("" at the top). */
static int list_files_in(const char *root, const char *rel, const char *const *skip,
                         struct strvec *out, struct aka_err *err)
{
    struct strvec names = STRVEC_INIT;
    struct strbuf dir = STRBUF_INIT, child = STRBUF_INIT, sub = STRBUF_INIT;
    struct stat st;
    if (*rel)
        aka_path_join(&dir, root, rel);
    else
        strbuf_addstr(&dir, root);
    int rc = aka_list_dir(dir.buf, &names, err);
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        aka_path_join(&child, dir.buf, names.v[i]);
        strbuf_reset(&sub);
        if (*rel)
            strbuf_addf(&sub, "%s/", rel);
        strbuf_addstr(&sub, names.v[i]);
        if (lstat(child.buf, &st) < 0)
            rc = aka_err_set(err, AKA_EXIT_USAGE, "%s: %s", child.buf, strerror(errno));
        else if (S_ISDIR(st.st_mode) && !in_names(names.v[i], skip))
            rc = list_files_in(root, sub.buf, skip, out, err);
        else if (S_ISREG(st.st_mode))
            strvec_push(out, sub.buf);
        else if (!S_ISDIR(st.st_mode))
            rc = aka_err_set(err, AKA_EXIT_USAGE,
                             "%s: %s; expected regular files and directories only", child.buf,
                             S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
    }
    strvec_clear(&names);
    strbuf_release(&dir);
    strbuf_release(&child);
    strbuf_release(&sub);
    return rc;
}

int aka_list_files(const char *root, const char *const *skip, struct strvec *out,
                   struct aka_err *err)
{
    size_t start = out->n;
    int rc = list_files_in(root, "", skip, out, err);
    if (rc == 0 && out->n > start)
        qsort(out->v + start, out->n - start, sizeof(*out->v), cmp_str);
    return rc;
}

int aka_make_temp_dir(const char *dir, const char *prefix, struct strbuf *out, struct aka_err *err)
{
    const char *base = dir ? dir : getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    strbuf_reset(out);
    strbuf_addf(out, "%s/%s.XXXXXX", base, prefix);
    if (!mkdtemp(out->buf))
        return aka_err_set(err, AKA_EXIT_FAILED, "%s: cannot create temporary directory: %s",
                           out->buf, strerror(errno));
    return 0;
}

int aka_copy_file(const char *src, const char *dst, struct aka_err *err)
{
    struct stat st;
    struct strbuf data = STRBUF_INIT;
    if (lstat(src, &st) < 0 || !S_ISREG(st.st_mode))
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: not a regular file", src);
    if (aka_read_file(src, &data, (size_t)st.st_size + 1, err) < 0)
        return -1;
    int rc = aka_write_file_atomic(dst, data.buf, data.len, st.st_mode & 07777, err);
    strbuf_release(&data);
    return rc;
}

bool aka_is_plain_file(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* One regular file, plainly (no temp file, no fsync). */
static int copy_plain(const char *src, const char *dst, mode_t mode, struct aka_err *err)
{
    int in = open(src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    int out = in < 0 ? -1 : open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    char buf[65536];
    ssize_t n = 0;
    while (out >= 0 && (n = read(in, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || aka_write_all(out, buf, (size_t)n) < 0)
            break;
    }
    int e = errno, rc = 0;
    if (in < 0 || out < 0 || n != 0)
        rc = aka_err_set(err, AKA_EXIT_ENV, "cannot copy %s to %s: %s", src, dst, strerror(e));
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) < 0 && rc == 0)
        rc = aka_err_set(err, AKA_EXIT_ENV, "%s: %s", dst, strerror(errno));
    return rc;
}

int aka_write_file_plain(const char *path, const void *data, size_t len, mode_t mode,
                         struct aka_err *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    int rc = fd < 0 || aka_write_all(fd, data, len) < 0
                 ? aka_err_set(err, AKA_EXIT_ENV, "%s: cannot write: %s", path, strerror(errno))
                 : 0;
    if (fd >= 0 && close(fd) < 0 && rc == 0)
        rc = aka_err_set(err, AKA_EXIT_ENV, "%s: %s", path, strerror(errno));
    return rc;
}

int aka_copy_file_plain(const char *src, const char *dst, struct aka_err *err)
{
    struct stat st;
    if (lstat(src, &st) < 0 || !S_ISREG(st.st_mode))
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: not a regular file", src);
    return copy_plain(src, dst, st.st_mode & 0777, err);
}

int aka_copy_tree(const char *src, const char *dst, struct aka_err *err)
{
    struct strvec names = STRVEC_INIT;
    struct strbuf from = STRBUF_INIT, to = STRBUF_INIT;
    struct stat st;
    if (lstat(src, &st) < 0 || !S_ISDIR(st.st_mode)) /* never through a symlink, even at the top */
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: not a directory", src);
    int rc = aka_mkdir_p(dst, 0755, err) < 0 ? -1 : aka_list_dir(src, &names, err);
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        aka_path_join(&from, src, names.v[i]);
        aka_path_join(&to, dst, names.v[i]);
        if (lstat(from.buf, &st) < 0)
            rc = aka_err_set(err, AKA_EXIT_ENV, "%s: %s", from.buf, strerror(errno));
        else if (S_ISDIR(st.st_mode))
            rc = aka_copy_tree(from.buf, to.buf, err);
        else if (S_ISREG(st.st_mode))
            rc = copy_plain(from.buf, to.buf, st.st_mode & 0777, err);
    }
    strvec_clear(&names);
    strbuf_release(&from);
    strbuf_release(&to);
    return rc;
}

void aka_path_join(struct strbuf *out, const char *a, const char *b)
{
    size_t n = strlen(a);
    strbuf_reset(out);
    strbuf_addstr(out, a);
    if (n && a[n - 1] != '/')
        strbuf_addch(out, '/');
    strbuf_addstr(out, b);
}

int aka_realpath(const char *path, struct strbuf *out, struct aka_err *err)
{
    char *r = realpath(path, NULL);
    if (!r)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: %s", path, strerror(errno));
    strbuf_reset(out);
    strbuf_addstr(out, r);
    free(r);
    return 0;
}

const char *aka_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

void aka_random_hex8(char out[9])
{
    unsigned int v = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
        v = (unsigned int)time(NULL) ^ ((unsigned int)getpid() << 16); /* uniqueness only */
    if (fd >= 0)
        close(fd);
    snprintf(out, 9, "%08x", v);
}
