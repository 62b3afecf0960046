/*
 * spec_internal.h - what lib/spec/'s files share (kj__ internals): reading
 * a descriptor whole; the program runner they use is lib/sandbox/program.h.
 *
 * Include it after the system headers, as base/internal.h.
 */
#ifndef KJ_SPEC_INTERNAL_H
#define KJ_SPEC_INTERNAL_H

#include <stddef.h>

#include <jansson.h>

#include "kjudge/error.h"
#include "kjudge/sandbox.h"
#include "sandbox/program.h"

/* The regular file open on fd, whole and NUL-terminated, when it is at most
 * max bytes: a new buffer the caller frees, or NULL (not a regular file,
 * too large, a read error; out of memory with errno ENOMEM).  fd is the
 * caller's. */
char *kj__spec_read_fd(int fd, size_t max, size_t *len);

#include "base/internal.h"

#endif /* KJ_SPEC_INTERNAL_H */
