/*
 * tarball.c — packing and unpacking job files as tar through libarchive
 * (see tarball.h).
 *
 * libarchive parses the archive; we do not use its archive_write_disk for
 * extraction. That writer resolves paths against the process-wide cwd (a
 * supervisor cannot chdir per job) and its ARCHIVE_EXTRACT_SECURE_* checks are
 * lstat() calls made before the write, which a process racing inside dest can
 * defeat. Instead every entry is first checked by us (type, path, size), then
 * written through a chain of openat(O_NOFOLLOW | O_DIRECTORY) calls rooted at
 * a descriptor of dest, with the file itself created O_EXCL | O_NOFOLLOW: no
 * step can follow a symlink, whoever put it there and whenever. Packing walks
 * the source tree the same way, so a symlink planted by a candidate cannot
 * smuggle a file from outside its job directory into an archive.
 *
 * Only the tar format (ustar, pax, GNU) is read, without compression filters:
 * job archives are ours, and every decoder we leave out is attack surface
 * hostile input cannot reach (some of libarchive's filters run external
 * programs).
 */
#include "base/tarball.h"
#include "base/fs.h"
#include "base/strbuf.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define COPY_CHUNK 65536
/* Entry names in messages are cut to this many bytes. */
#define NAME_SHOWN_MAX 200

static int close_keep_errno(int fd)
{
    int e = errno;
    if (fd >= 0)
        close(fd);
    errno = e;
    return -1;
}

/*
 * Normalize a relative path into out: components joined by single '/', with
 * "." and empty components dropped. Returns why the path is unsafe, or NULL.
 */
static const char *clean_path(const char *p, struct strbuf *out)
{
    strbuf_reset(out);
    if (*p == '/')
        return "absolute path";
    while (*p) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return "\"..\" component";
        if (n && !(n == 1 && p[0] == '.')) {
            if (out->len)
                strbuf_addch(out, '/');
            strbuf_add(out, p, n);
        }
        p += n;
        while (*p == '/')
            p++;
    }
    return NULL;
}

/* Open (and with create, first make) directory name inside dirfd, never through a symlink. */
static int open_dir_at(int dirfd, const char *name, bool create)
{
    if (strcmp(name, "..") == 0) { /* clean_path refuses these; never rely on one check */
        errno = EINVAL;
        return -1;
    }
    if (create && mkdirat(dirfd, name, 0755) < 0 && errno != EEXIST)
        return -1;
    /* O_NOFOLLOW with O_DIRECTORY: a symlink, even to a directory, fails (ELOOP/ENOTDIR). */
    return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/*
 * Walk a cleaned path below rootfd. With want_leaf, stop before the last
 * component and copy it into leaf; otherwise open the whole path as a
 * directory. Returns a new directory fd, or -1 with errno set.
 */
static int walk(int rootfd, const char *clean, bool create, bool want_leaf, struct strbuf *leaf)
{
    struct strbuf comp = STRBUF_INIT;
    int dirfd = fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
    const char *p = clean;
    while (dirfd >= 0 && *p) {
        size_t n = strcspn(p, "/");
        strbuf_reset(&comp);
        strbuf_add(&comp, p, n);
        p += n + (p[n] == '/');
        if (want_leaf && !*p) {
            strbuf_reset(leaf);
            strbuf_addstr(leaf, comp.buf);
            break;
        }
        int next = open_dir_at(dirfd, comp.buf, create);
        close_keep_errno(dirfd);
        dirfd = next;
    }
    strbuf_release(&comp);
    return dirfd;
}

/* ---- packing ----------------------------------------------------------- */

static const char *type_name(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISLNK(m))
        return "a symbolic link";
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISSOCK(m))
        return "a socket";
    if (S_ISCHR(m) || S_ISBLK(m))
        return "a device";
    return "not a regular file";
}

/* Open root/clean for reading without following any symlink; -1 with err set. */
static int open_source(int rootfd, const char *root, const char *clean, struct stat *st,
                       struct aka_err *err)
{
    struct strbuf leaf = STRBUF_INIT;
    int fd = -1, dirfd = walk(rootfd, clean, false, true, &leaf);
    if (dirfd < 0) {
        aka_err_set(err, AKA_EXIT_USAGE,
                    "%s/%s: cannot pack: a parent is missing, not a directory or a symlink (%s)",
                    root, clean, strerror(errno));
        goto out;
    }
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; we refuse it just below. */
    fd = openat(dirfd, leaf.buf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 && errno == ELOOP)
        aka_err_set(err, AKA_EXIT_USAGE, "%s/%s: cannot pack: a symbolic link", root, clean);
    else if (fd < 0)
        aka_err_set(err, AKA_EXIT_USAGE, "%s/%s: cannot pack: %s", root, clean, strerror(errno));
    else if (fstat(fd, st) < 0 ? (st->st_mode = 0, true) : !S_ISREG(st->st_mode)) {
        aka_err_set(err, AKA_EXIT_USAGE, "%s/%s: cannot pack: %s", root, clean,
                    type_name(st->st_mode));
        fd = close_keep_errno(fd);
    }
    close_keep_errno(dirfd);
out:
    strbuf_release(&leaf);
    return fd;
}

/* Copy exactly size bytes of fd into the archive; a file that changed size is an error. */
static int copy_in(struct archive *a, int fd, off_t size)
{
    char buf[COPY_CHUNK];
    off_t done = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        if (done + n > size || archive_write_data(a, buf, (size_t)n) != n)
            return -1;
        done += n;
    }
    return done == size ? 0 : -1;
}

static int pack_one(struct archive *a, int rootfd, const char *root, const char *rel,
                    struct aka_err *err)
{
    struct strbuf clean = STRBUF_INIT;
    struct stat st;
    int rc = -1, fd = -1;
    const char *why = clean_path(rel, &clean);
    if (why || !clean.len) {
        aka_err_set(err, AKA_EXIT_USAGE, "%s/%s: cannot pack: %s", root, rel,
                    why ? why : "empty path");
        goto out;
    }
    if ((fd = open_source(rootfd, root, clean.buf, &st, err)) < 0)
        goto out;
    struct archive_entry *e = archive_entry_new();
    archive_entry_set_pathname(e, clean.buf);
    archive_entry_set_filetype(e, AE_IFREG);
    /* Only the executable bit survives: no setuid, no odd modes, no owner names. */
    archive_entry_set_perm(e, (st.st_mode & 0111) ? 0755 : 0644);
    archive_entry_set_size(e, st.st_size);
    archive_entry_set_mtime(e, st.st_mtime, 0);
    if (archive_write_header(a, e) != ARCHIVE_OK || copy_in(a, fd, st.st_size) < 0)
        aka_err_set(err, AKA_EXIT_FAILED, "%s/%s: cannot pack: %s", root, clean.buf,
                    archive_error_string(a) ? archive_error_string(a)
                                            : "read failed or the file changed while packing");
    else
        rc = 0;
    archive_entry_free(e);
out:
    close_keep_errno(fd);
    strbuf_release(&clean);
    return rc;
}

static int pack_all(struct archive *a, int rootfd, const char *tar_path, const char *root,
                    const struct strvec *files, struct aka_err *err)
{
    for (size_t i = 0; i < files->n; i++)
        if (pack_one(a, rootfd, root, files->v[i], err) < 0)
            return -1;
    if (archive_write_close(a) != ARCHIVE_OK)
        return aka_err_set(err, AKA_EXIT_FAILED, "%s: cannot write: %s", tar_path,
                           archive_error_string(a));
    return 0;
}

int aka_tar_pack(const char *tar_path, const char *root, const struct strvec *files,
                 struct aka_err *err)
{
    int rc = -1, outfd = -1;
    int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: cannot open directory: %s", root,
                           strerror(errno));
    outfd = open(tar_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (outfd < 0) {
        aka_err_set(err, AKA_EXIT_FAILED, "%s: cannot create: %s", tar_path, strerror(errno));
        close(rootfd);
        return -1;
    }
    struct archive *a = archive_write_new();
    /* ustar whenever possible, pax extensions only for long names or big files. */
    if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
        archive_write_open_fd(a, outfd) != ARCHIVE_OK)
        aka_err_set(err, AKA_EXIT_FAILED, "%s: %s", tar_path, archive_error_string(a));
    else
        rc = pack_all(a, rootfd, tar_path, root, files, err);
    archive_write_free(a);
    close(outfd);
    close(rootfd);
    if (rc < 0)
        unlink(tar_path); /* never leave a half archive that looks complete */
    return rc;
}

/* ---- unpacking --------------------------------------------------------- */

struct unpack {
    const char *tar_path;
    struct archive *a;
    int destfd;
    size_t limit, total;
    const char *name; /* the current entry's name as stored */
    struct aka_err *err;
};

/* "TAR: entry "NAME": refused: REASON", with non-printable bytes shown as '?'. */
static int refuse(const struct unpack *u, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int refuse(const struct unpack *u, int code, const char *fmt, ...)
{
    char shown[NAME_SHOWN_MAX + 4], why[512];
    size_t i = 0;
    const char *name = u->name ? u->name : "";
    for (; name[i] && i < NAME_SHOWN_MAX; i++)
        shown[i] = (name[i] >= 0x20 && name[i] < 0x7f) ? name[i] : '?';
    if (name[i])
        memcpy(shown + i, "...", sizeof("...")); /* i <= NAME_SHOWN_MAX: fits */
    else
        shown[i] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    return aka_err_set(u->err, code, "%s: entry \"%s\": refused: %s", u->tar_path, shown, why);
}

static const char *entry_type_name(unsigned type)
{
    switch (type) {
    case AE_IFLNK:
        return "a symbolic link";
    case AE_IFCHR:
        return "a character device";
    case AE_IFBLK:
        return "a block device";
    case AE_IFIFO:
        return "a FIFO";
    case AE_IFSOCK:
        return "a socket";
    }
    return "not a regular file or directory";
}

static int check_size(struct unpack *u, la_int64_t more)
{
    if (more < 0)
        return refuse(u, AKA_EXIT_USAGE, "negative size");
    if (u->limit && (uint64_t)more > u->limit - u->total)
        return refuse(u, AKA_EXIT_USAGE, "the archive exceeds the %zu-byte limit", u->limit);
    return 0;
}

/* Everything we require of an entry before touching the disk. */
static int check_entry(struct unpack *u, struct archive_entry *e, struct strbuf *clean)
{
    unsigned type = archive_entry_filetype(e);
    if (!u->name)
        return refuse(u, AKA_EXIT_USAGE, "the name cannot be read");
    /* Hard links are regular-file entries with a link target: check before the type. */
    if (archive_entry_hardlink(e))
        return refuse(u, AKA_EXIT_USAGE, "a hard link");
    if (archive_entry_symlink(e) || type == AE_IFLNK)
        return refuse(u, AKA_EXIT_USAGE, "a symbolic link");
    if (type != AE_IFREG && type != AE_IFDIR)
        return refuse(u, AKA_EXIT_USAGE, "%s", entry_type_name(type));
    const char *why = clean_path(u->name, clean);
    if (why)
        return refuse(u, AKA_EXIT_USAGE, "%s", why);
    if (type == AE_IFREG && !clean->len)
        return refuse(u, AKA_EXIT_USAGE, "a file without a name");
    if (type == AE_IFREG && archive_entry_size_is_set(e))
        return check_size(u, archive_entry_size(e));
    return 0;
}

/* Errors from walking dest: a symlink or a file in the way is the archive's fault. */
static int walk_failed(struct unpack *u)
{
    if (errno == ELOOP || errno == ENOTDIR || errno == EEXIST)
        return refuse(u, AKA_EXIT_USAGE,
                      "a path component in the destination is a symbolic "
                      "link or not a directory");
    return refuse(u, AKA_EXIT_ENV, "cannot create directories: %s", strerror(errno));
}

/* Create leaf in dirfd for writing; an existing non-directory is replaced, never followed. */
static int create_file(int dirfd, const char *leaf, mode_t mode)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        int fd = openat(dirfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd >= 0 || errno != EEXIST)
            return fd;
        struct stat st;
        if (fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
            errno = EISDIR;
            return -1;
        }
        if (unlinkat(dirfd, leaf, 0) < 0 && errno != ENOENT)
            return -1;
    }
    errno = EEXIST;
    return -1;
}

static int copy_out(struct unpack *u, int fd)
{
    char buf[COPY_CHUNK];
    for (;;) {
        la_ssize_t n = archive_read_data(u->a, buf, sizeof(buf));
        if (n == 0)
            return 0;
        if (n < 0)
            return refuse(u, AKA_EXIT_USAGE, "corrupt data: %s", archive_error_string(u->a));
        /* The header size was checked, but count what really arrives too. */
        if (check_size(u, n) < 0)
            return -1;
        u->total += (size_t)n;
        if (aka_write_all(fd, buf, (size_t)n) < 0)
            return refuse(u, AKA_EXIT_ENV, "write failed: %s", strerror(errno));
    }
}

static int extract_file(struct unpack *u, struct archive_entry *e, const char *clean)
{
    struct strbuf leaf = STRBUF_INIT;
    int rc = -1, fd = -1;
    int dirfd = walk(u->destfd, clean, true, true, &leaf);
    if (dirfd < 0) {
        walk_failed(u);
        goto out;
    }
    fd = create_file(dirfd, leaf.buf, (archive_entry_perm(e) & 0111) ? 0755 : 0644);
    if (fd < 0 && errno == EISDIR)
        refuse(u, AKA_EXIT_USAGE, "a directory of that name exists");
    else if (fd < 0)
        refuse(u, AKA_EXIT_ENV, "cannot create: %s", strerror(errno));
    else
        rc = copy_out(u, fd);
out:
    close_keep_errno(fd);
    close_keep_errno(dirfd);
    strbuf_release(&leaf);
    return rc;
}

static int extract_dir(struct unpack *u, const char *clean)
{
    int fd = walk(u->destfd, clean, true, false, NULL);
    if (fd < 0)
        return walk_failed(u);
    close(fd);
    return 0;
}

static int unpack_entry(struct unpack *u, struct archive_entry *e)
{
    struct strbuf clean = STRBUF_INIT;
    int rc;
    u->name = archive_entry_pathname(e);
    rc = check_entry(u, e, &clean);
    if (rc == 0)
        rc = archive_entry_filetype(e) == AE_IFDIR ? extract_dir(u, clean.buf)
                                                   : extract_file(u, e, clean.buf);
    strbuf_release(&clean);
    return rc;
}

static int unpack_all(struct unpack *u)
{
    struct archive_entry *e;
    for (;;) {
        int r = archive_read_next_header(u->a, &e);
        if (r == ARCHIVE_EOF)
            return 0;
        /* ARCHIVE_WARN (e.g. an unknown pax keyword) still yields a usable header. */
        if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
            return aka_err_set(u->err, AKA_EXIT_USAGE, "%s: not a valid tar archive: %s",
                               u->tar_path, archive_error_string(u->a));
        if (unpack_entry(u, e) < 0)
            return -1;
    }
}

int aka_tar_unpack(const char *tar_path, const char *dest, size_t limit, struct aka_err *err)
{
    struct unpack u = {tar_path, NULL, -1, limit, 0, NULL, err};
    int rc = -1, fd = open(tar_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: cannot open: %s", tar_path, strerror(errno));
    u.destfd = open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (u.destfd < 0) {
        aka_err_set(err, AKA_EXIT_FAILED, "%s: cannot open directory: %s", dest, strerror(errno));
        close(fd);
        return -1;
    }
    u.a = archive_read_new();
    archive_read_support_format_tar(u.a);
    if (archive_read_open_fd(u.a, fd, COPY_CHUNK) != ARCHIVE_OK)
        aka_err_set(err, AKA_EXIT_USAGE, "%s: not a valid tar archive: %s", tar_path,
                    archive_error_string(u.a));
    else
        rc = unpack_all(&u);
    archive_read_free(u.a);
    close(u.destfd);
    close(fd);
    return rc;
}
