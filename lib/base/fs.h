/*
 * fs.h - directories and whole files: made, walked, removed, read
 * (kj__ internals, lib/base/fs.c).
 *
 * One implementation of each, used by the scratch directories, the golden
 * cache, the sandbox's views and the runners.  None of them follows a
 * symbolic link it finds inside a tree: a tree a candidate wrote into can
 * hold links to anywhere.
 *
 * Include it after the system headers, as internal.h.
 */
#ifndef KJ_BASE_FS_H
#define KJ_BASE_FS_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "kjudge/error.h"

/* mkdir -p: every missing directory of path, each with `mode`.  0, or -1
 * with errno. */
int kj__mkdirs(const char *path, mode_t mode);

/* Remove path and, when it is a directory, everything under it, without
 * following symbolic links (they are removed, not their targets) and
 * without descending into other file systems' mount points (those are
 * detached first where allowed, else left).  0 when path is gone (or never
 * was), -1 with errno otherwise. */
int kj__rm_rf(const char *path);

/* Remove the entries of dir (not dir itself) whose names end in `suffix`
 * (every entry when suffix is NULL). */
void kj__clear_dir(const char *dir, const char *suffix);

/* Bytes in the regular files under dir (links not followed), or 0. */
long long kj__tree_bytes(const char *dir);

/*
 * Call fn for each entry of dir (not "." or ".."), in no particular order,
 * with the entry's name and its lstat.  fn returns 0 to go on; any other
 * value stops the walk and is returned.  Returns 0, or -1 with errno when
 * dir cannot be opened.
 */
int kj__each_entry(const char *dir,
		   int (*fn)(void *ctx, const char *name, const struct stat *st),
		   void *ctx);

/*
 * The whole regular file at path, NUL-terminated, when it is at most max
 * bytes.  *len (may be NULL) gets its length.  Returns a new buffer the
 * caller frees, or NULL with err filled (KJ_ENOENT, KJ_EIO, KJ_ENOMEM, or
 * KJ_ELIMIT when it is larger than max).
 */
char *kj__read_file(const char *path, size_t max, size_t *len, struct kj_error *err);

/*
 * Copy the file or directory tree src to dst (which must not exist):
 * regular files and directories only (links and special files are
 * skipped), at most max_bytes of file data in all; *bytes (in/out) counts
 * what was copied.  Returns KJ_OK, KJ_ELIMIT past max_bytes, or KJ_EIO /
 * KJ_ENOMEM with err filled.
 */
int kj__copy_tree(const char *src, const char *dst, long long max_bytes, long long *bytes,
		  struct kj_error *err);

/* Whether path is a directory / a regular file (following links). */
int kj__is_dir(const char *path);
int kj__is_file(const char *path);

#endif /* KJ_BASE_FS_H */
