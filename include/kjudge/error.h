/*
 * kjudge/error.h - the one table of judge errors.
 *
 * Every library function that can fail returns an int: 0 (KJ_OK) on success
 * or one of the negative KJ_E* codes below.  The codes, their names and their
 * default messages are generated from the single KJ_ERROR_MAP table, so a new
 * error is one line here and nowhere else.
 *
 * These are *judge* errors: bad input, a missing file, a broken promise of
 * the environment.  A candidate that computes the wrong answer is not an
 * error; it is a verdict (see compare.h).
 *
 * Functions that can say more than a code take a caller-owned
 * `struct kj_error *` (which may be NULL) and fill it with the code and a
 * one-line, lowercase message that names the subject, e.g.
 *   "'out.npy': header says 4096 bytes of data, file holds 1024".
 * The library never prints and never exits; the CLI prints `msg`.
 */
#ifndef KJUDGE_ERROR_H
#define KJUDGE_ERROR_H

#include <stddef.h>

/* X(NAME, default message).  Order is the ABI: append only. */
#define KJ_ERROR_MAP(X)                                                   \
	X(NOMEM, "out of memory")                                         \
	X(INVAL, "invalid argument")                                      \
	X(IO, "input/output error")                                       \
	X(NOENT, "no such file or directory")                             \
	X(ACCES, "permission denied")                                     \
	X(NPY_MAGIC, "not a .npy file (bad magic string)")                \
	X(NPY_VERSION, "unsupported .npy format version")                 \
	X(NPY_HEADER, "malformed .npy header")                            \
	X(NPY_TRUNCATED, "truncated .npy file")                           \
	X(NPY_SIZE, "data size does not match the header's shape")        \
	X(DTYPE, "unknown or unsupported dtype")                          \
	X(SHAPE, "unsupported shape")                                     \
	X(OVERFLOW, "size overflows")                                     \
	X(THREAD, "cannot start a thread")                                \
	X(USAGE, "usage error")                                           \
	X(SPAWN, "cannot start a worker process")                         \
	X(TIMEDOUT, "timed out")                                          \
	X(WORKER, "worker process ended")                                 \
	X(PROTOCOL, "malformed worker reply")                             \
	X(RULES, "malformed rule file")                                   \
	X(LIMIT, "input beyond a limit of the analysis")                  \
	X(SANDBOX, "cannot set up the sandbox")                           \
	X(INTR, "interrupted")                                            \
	X(STORE, "not a usable results store")                            \
	X(BUSY, "locked by another process")                              \
	X(JSON, "malformed JSON")                                         \
	X(SCHEMA, "unusable JSON schema")                                 \
	X(NODEVICE, "the device asked for is not on this machine")       \
	X(NOSPC, "no space left on device")                               \
	X(DEVMEM, "device memory ran out while other attempts shared the device")

enum kj_errcode {
	KJ_OK = 0,
#define KJ__ERR_ENUM(name, msg) KJ_E##name,
	KJ__ERR_FIRST_ = -1000,
	KJ_ERROR_MAP(KJ__ERR_ENUM)
#undef KJ__ERR_ENUM
	KJ__ERR_LAST_
};

/* Longest message a struct kj_error holds, including the terminating NUL. */
#define KJ_ERROR_MSG_MAX 512

/*
 * Detail of one failure.  Caller-owned, usually on the stack; it holds no
 * pointers, so there is nothing to release.
 */
struct kj_error {
	int code;                    /* KJ_OK or a KJ_E* code */
	char msg[KJ_ERROR_MSG_MAX];  /* one line, no trailing newline */
};

/* Default message of a code ("unknown error" for codes not in the table). */
const char *kj_strerror(int code);

/* Symbolic name of a code, e.g. "KJ_ENOENT" (static storage). */
const char *kj_err_name(int code);

/* Set err->code to `code` and err->msg to the formatted message.  A NULL
 * err is allowed and ignored.  Returns `code`, so that a failing path can
 * read `return kj_error_set(err, KJ_EIO, "...", ...);`. */
int kj_error_set(struct kj_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Reset err to KJ_OK with an empty message.  NULL is allowed. */
void kj_error_clear(struct kj_error *err);

/* Map an errno value to the closest KJ_E* code (ENOSPC and EDQUOT: the
 * file system is full, KJ_ENOSPC). */
int kj_err_from_errno(int errnum);

#endif /* KJUDGE_ERROR_H */
