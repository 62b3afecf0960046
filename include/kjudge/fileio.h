/*
 * kjudge/fileio.h - small file utilities shared by the library and the CLI.
 */
#ifndef KJUDGE_FILEIO_H
#define KJUDGE_FILEIO_H

#include <stddef.h>
#include <stdint.h>

#include "kjudge/error.h"

/* 64-bit FNV-1a hash of a file's bytes. */
int kj_file_hash(const char *path, uint64_t *hash, struct kj_error *err);

/* Write `data` to `path` atomically: a temporary file in the same directory
 * (mode 0666 less the umask), fsync, rename, fsync of the directory.  On
 * error `path` is untouched and no temporary file is left. */
int kj_write_file_atomic(const char *path, const char *data, size_t len,
			 struct kj_error *err);

#endif /* KJUDGE_FILEIO_H */
