/*
 * kjudge/fileio.h - small file utilities shared by the library and the CLI.
 */
#ifndef KJUDGE_FILEIO_H
#define KJUDGE_FILEIO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kjudge/error.h"

/* 64-bit FNV-1a hash of a file's bytes. */
int kj_file_hash(const char *path, uint64_t *hash, struct kj_error *err);

/*
 * Write `data` to `path` atomically: a temporary file in the same directory
 * (mode 0666 less the umask), fsync, rename, fsync of the directory.  The
 * rename replaces the directory entry `path`: a symbolic link there is
 * replaced, never written through, and a hard link's other names keep the
 * old bytes.  What is at `path` is checked as kj_output_check checks it
 * (without `keep`) just before it is replaced: the writer never replaces an
 * SQLite database or its companions.  On error `path` is untouched and no
 * temporary file is left.
 */
int kj_write_file_atomic(const char *path, const char *data, size_t len,
			 struct kj_error *err);

/*
 * Whether a user-named output may be written at `path` (by a writer that
 * replaces the file, as kj_write_file_atomic): KJ_OK when nothing is there
 * or a regular file that holds no database; else KJ_EINVAL with err filled
 * naming what is there, when `path`, its links followed,
 *   - is a directory, or not a regular file (a FIFO, a device);
 *   - is an SQLite database (its header "SQLite format 3\0": a kjudge
 *     store or another program's), rollback journal or write-ahead log
 *     (their magic numbers), or cannot be read to find out;
 *   - is named as a companion of a database: DB-wal, DB-shm or DB-journal
 *     where DB is one (whether the companion exists now or not);
 *   - is, by device and inode, the file `keep` or one of its companions
 *     (`keep`: a database the command reads, e.g. report's store; NULL for
 *     none).
 * A study is never lost by a slip of the user's (`report s.db --md s.db`).
 * Opening what is there never blocks (a FIFO is not read).
 */
int kj_output_check(const char *path, const char *keep, struct kj_error *err);

/*
 * err for a failed write to path, errno e, while doing `stage` ("cannot
 * write"): for a full file system (ENOSPC) or a quota (EDQUOT), KJ_ENOSPC
 * with "'PATH': STAGE: no space left on MOUNT (SOURCE, TYPE)" ("disk quota
 * exceeded on" for a quota), naming the file system that holds path (its
 * mount point, source and type from /proc/self/mountinfo); otherwise
 * kj_err_from_errno(e) with strerror(e).  Returns the code.
 */
int kj_error_write(struct kj_error *err, int e, const char *path, const char *stage);

struct json_t;

/*
 * The JSON text of v (jansson's json_dumps flags), NUL-terminated, for the
 * caller to free; NULL with err filled when it cannot be made: KJ_ENOMEM
 * when any allocation failed while it was made (jansson can drop bytes it
 * could not save and go on, so its own result is not used), KJ_EINVAL when
 * v cannot be encoded.  Made whole before anything is written: what reads
 * it never sees half of a record.
 */
char *kj_json_text(const struct json_t *v, size_t flags, struct kj_error *err);

/* kj_json_text, written to f (no newline added): KJ_OK, or a code with err
 * filled (KJ_EIO when f refused it). */
int kj_json_print(FILE *f, const struct json_t *v, size_t flags, struct kj_error *err);

#endif /* KJUDGE_FILEIO_H */
