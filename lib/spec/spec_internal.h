/*
 * spec_internal.h - what lib/spec/'s files share (kj__ internals): reading
 * a descriptor whole, and running one program to its end, in the sandbox or
 * not, with a deadline and bounded captures (run.c).
 *
 * Include it after the system headers, as base/internal.h.
 */
#ifndef KJ_SPEC_INTERNAL_H
#define KJ_SPEC_INTERNAL_H

#include <stddef.h>

#include <jansson.h>

#include "kjudge/error.h"
#include "kjudge/sandbox.h"

/* The regular file open on fd, whole and NUL-terminated, when it is at most
 * max bytes: a new buffer the caller frees, or NULL (not a regular file,
 * too large, a read error; out of memory with errno ENOMEM).  fd is the
 * caller's. */
char *kj__spec_read_fd(int fd, size_t max, size_t *len);

/* One stream of a program's output, kept in a bounded buffer. */
struct kj__sink {
	char *buf;          /* NUL-terminated; the head (keep_tail 0) or the tail */
	size_t len, cap;    /* cap: the most bytes kept */
	long long total;    /* every byte the program wrote on it */
	int keep_tail;      /* keep the last cap bytes, not the first */
	int limit;          /* past cap the program is stopped */
	int over;           /* it was stopped for that */
};

/*
 * What to run.  argv[0] is the program: an absolute path, or one relative
 * to cwd (execve after chdir; no PATH search, no shell).
 */
struct kj__run_req {
	char *const *argv;
	char *const *envp;
	const char *cwd;
	const struct kj_sandbox *sb;   /* NULL: a plain process (its own PID
					* namespace where allowed) */
	double timeout_s;
};

struct kj__run_res {
	int started;        /* execve succeeded */
	int exec_errno;     /* else why not (0: the start itself failed) */
	int status;         /* wait status */
	int timed_out;
	int oom_killed;     /* the cgroup saw an OOM kill */
	int pids_max;       /* the cgroup refused a fork at its process limit */
	double wall_s;      /* from the spawn to the exit, on the judge's monotonic
			     * clock (the sandbox's start included) */
	double cpu_s;       /* user + system of the program and its waited-for
			     * children */
	struct kj__sink out, err;
	char how[160];      /* "exited with status 3", "killed by signal 9 ..." */
};

/* Fill r's sinks' caps and modes before kj__spec_run; the buffers are
 * allocated by it and freed by kj__spec_run_release. */
void kj__spec_run_init(struct kj__run_res *r, size_t out_cap, int out_limit, size_t err_cap);
void kj__spec_run_release(struct kj__run_res *r);

/*
 * Start q, read both streams until the program ends, the deadline passes,
 * a limited stream overflows or the signal guard fires; kill the whole
 * group (and its PID namespace), reap it.  Returns KJ_OK when it was run
 * (whatever came of it: r says), KJ_ESANDBOX / KJ_ESPAWN when it could not
 * be started for the machine's reasons, KJ_EINTR when interrupted, KJ_ENOMEM.
 * A program whose execve failed is KJ_OK with r->started 0 and
 * r->exec_errno set.
 */
int kj__spec_run(const struct kj__run_req *q, struct kj__run_res *r, struct kj_error *err);

#include "base/internal.h"

#endif /* KJ_SPEC_INTERNAL_H */
