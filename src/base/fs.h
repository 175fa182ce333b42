/*
 * fs.h — files and directories: reading with limits, atomic replace, trees.
 *
 * Every durable write in aka goes through aka_write_file_atomic(): the bytes go
 * to a temporary file in the same directory, which is fsynced, renamed over the
 * target, and then the directory itself is fsynced. A crash at any instant
 * leaves either the old file or the new one, never a torn one (DESIGN §1.4).
 */
#ifndef AKA_BASE_FS_H
#define AKA_BASE_FS_H

#include "base/error.h"
#include "base/strbuf.h"
#include "base/vec.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Inputs we parse are small; anything larger than this is refused, not truncated. */
#define AKA_READ_LIMIT_DEFAULT ((size_t)64 << 20)

/* Read a whole regular file into out (appending). Errors name the file; code 2. */
int aka_read_file(const char *path, struct strbuf *out, size_t limit, struct aka_err *err);
/* The same, refusing a symbolic link as the last component (a file an untrusted process
 * may have placed: it must not make us read what it points at). */
int aka_read_plain_file(const char *path, struct strbuf *out, size_t limit, struct aka_err *err);

bool aka_is_file(const char *path); /* regular file (follows symlinks) */
bool aka_is_dir(const char *path);  /* directory (follows symlinks) */
bool aka_exists(const char *path);  /* anything, symlinks not followed */

/* write(2) all of data, retrying on EINTR and short writes; -1 with errno set. */
int aka_write_all(int fd, const void *data, size_t len);

/* Replace path with data atomically (temp + fsync + rename + fsync dir). */
int aka_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode,
                          struct aka_err *err);
/* fsync a directory so that a rename/creation inside it is durable. */
int aka_fsync_dir(const char *dir, struct aka_err *err);

/* Eight random hex digits for names that must not collide (episode branches and
 * worktrees): /dev/urandom, else time and pid. Not for anything secret. */
void aka_random_hex8(char out[9]);

/* mkdir -p; existing directories are fine. */
int aka_mkdir_p(const char *path, mode_t mode, struct aka_err *err);
/* rm -rf without following symlinks; a missing path is fine. */
int aka_remove_tree(const char *path, struct aka_err *err);
/* Sorted entry names of a directory, without "." and "..". */
int aka_list_dir(const char *path, struct strvec *names, struct aka_err *err);
/*
 * Every regular file below root, appended to out as sorted paths relative to it ("a/b.c").
 * Directories named in skip (NULL-terminated; NULL: none) are not entered. A symbolic link
 * or special file anywhere is an error naming it (code 2): the trees listed this way are
 * copied or hashed byte for byte, and a link would make their content depend on its target.
 */
int aka_list_files(const char *root, const char *const *skip, struct strvec *out,
                   struct aka_err *err);
/* mkdtemp under dir (or $TMPDIR, or /tmp, when dir is NULL); prefix is a name stem. */
int aka_make_temp_dir(const char *dir, const char *prefix, struct strbuf *out, struct aka_err *err);
/* Copy a regular file (mode preserved) — no symlinks, no special files. */
int aka_copy_file(const char *src, const char *dst, struct aka_err *err);
/*
 * Copy the tree src to dst (created): directories and regular files (modes kept), never
 * following a symlink; symlinks and special files below src are skipped, src itself must
 * be a directory (code 2 otherwise). No fsync: for throwaway
 * copies (a view handed to an agent), not for state.
 */
int aka_copy_tree(const char *src, const char *dst, struct aka_err *err);
/* A regular file, not a symlink to one. */
bool aka_is_plain_file(const char *path);
/* Throwaway files (a view handed to an agent): a new file written or copied plainly,
 * without temp file or fsync; an existing path or a symlink is an error, as is a source
 * that is not a regular file (code 2). */
int aka_write_file_plain(const char *path, const void *data, size_t len, mode_t mode,
                         struct aka_err *err);
int aka_copy_file_plain(const char *src, const char *dst, struct aka_err *err);

/* a + "/" + b into out (no doubled slash). */
void aka_path_join(struct strbuf *out, const char *a, const char *b);
/* Canonical absolute path of an existing file. */
int aka_realpath(const char *path, struct strbuf *out, struct aka_err *err);
/* The last path component (pointer into path). */
const char *aka_basename(const char *path);

#endif
