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
 * Files a user, a generations file or a candidate names are opened here and
 * nowhere else, so that no open can block and nothing but a regular file
 * is read: O_NONBLOCK and O_NOCTTY (a FIFO or a device opens at once, and
 * is then refused by its fstat), O_CLOEXEC, and what the flags add.  The
 * descriptor returned has O_NONBLOCK cleared (a regular file ignores it
 * anyway).  Errors fill err with "'PATH': why": KJ_ENOENT, KJ_EACCES,
 * KJ_EINVAL for what is not a regular file ("not a regular file (a FIFO)",
 * "a symbolic link"), KJ_EIO.
 */
enum {
	KJ_OPEN_NOFOLLOW = 1u << 0,  /* the last component may not be a link */
	KJ_OPEN_DIR = 1u << 1,       /* kj__open_beneath: a directory, not a file */
};

/* path (followed through links unless KJ_OPEN_NOFOLLOW): its descriptor,
 * or a negative code (KJ_E*) with err filled. */
int kj__open_regular(const char *path, unsigned flags, struct kj_error *err);

/*
 * rel under the directory dir, held there: rel relative, no component
 * "..", no symbolic link on the way or at the end (each component opened
 * with O_NOFOLLOW relative to the one before, so that nothing renamed
 * meanwhile can lead out), then a regular file as kj__open_regular has it,
 * or with KJ_OPEN_DIR a directory.  dir itself is the caller's (links
 * followed).  Its descriptor, or a negative code with err filled
 * ("'DIR/REL': why"; KJ_EINVAL for an absolute path, "..", a link or a file
 * of another kind).
 */
int kj__open_beneath(const char *dir, const char *rel, unsigned flags, struct kj_error *err);

/*
 * The whole regular file open at fd (kept open), NUL-terminated, when it is
 * at most max bytes; name is what messages call it.  *len (may be NULL)
 * gets its length.  A new buffer the caller frees, or NULL with err filled
 * (KJ_EINVAL not a regular file, KJ_EIO, KJ_ENOMEM, or KJ_ELIMIT when it is
 * larger than max).
 */
char *kj__read_fd(int fd, const char *name, size_t max, size_t *len, struct kj_error *err);

/*
 * kj_write_file_atomic (kjudge/fileio.h) relative to the directory open at
 * dirfd, for a command that writes only inside a directory it checked:
 * name a plain name there (no '/'), the temporary file made beside it
 * (O_EXCL, O_NOFOLLOW), given `mode` when it is not 0, synced and renamed
 * over name (renameat: a link at name is replaced, never written through),
 * dirfd synced; what is at name checked as kj_output_check checks it
 * first (never a database or its log), a full disk named.  KJ_OK, or a code with err filled ("'NAME': why") and
 * nothing left behind.  (lib/base/fileio.c)
 */
int kj__write_file_at(int dirfd, const char *name, const char *data, size_t len, mode_t mode,
		      struct kj_error *err);

/* kj__open_regular (no flags) and kj__read_fd: the whole regular file at
 * path, NUL-terminated, at most max bytes. */
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
