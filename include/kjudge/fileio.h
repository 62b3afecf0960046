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

/* Write `data` to `path` atomically: a temporary file in the same directory
 * (mode 0666 less the umask), fsync, rename, fsync of the directory.  On
 * error `path` is untouched and no temporary file is left. */
int kj_write_file_atomic(const char *path, const char *data, size_t len,
			 struct kj_error *err);

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
