/*
 * tarball.h — tar archives through libarchive, for shipping job files.
 *
 * Unpacking is where a hostile archive attacks: every entry must be a regular
 * file or directory with a relative path that stays inside the destination.
 * Absolute paths, ".." components, symlinks, hard links and device nodes are
 * refused and nothing more is extracted.
 */
#ifndef AKA_BASE_TARBALL_H
#define AKA_BASE_TARBALL_H

#include "base/error.h"
#include "base/vec.h"

/* Pack the relative paths `files` (regular files only) from root into tar_path. */
int aka_tar_pack(const char *tar_path, const char *root, const struct strvec *files,
                 struct aka_err *err);
/* Unpack tar_path into dest (which must exist); limit: total bytes, 0 = none. */
int aka_tar_unpack(const char *tar_path, const char *dest, size_t limit, struct aka_err *err);

#endif
