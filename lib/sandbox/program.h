/*
 * program.h - one program run to its end (program.c): a build command, a
 * spec's executable, a command doctor asks, one of Slurm's commands; in
 * the sandbox or as a plain process, with a deadline, bounded captures of
 * its stdout and stderr, and an execve that failed told from one that ran.
 *
 * Every caller that runs a program and waits for it goes through here, so
 * that no wait in the judge is without a deadline.
 *
 * Include it after the system headers, as base/internal.h.
 */
#ifndef KJ_SANDBOX_PROGRAM_H
#define KJ_SANDBOX_PROGRAM_H

#include <stddef.h>

#include "kjudge/error.h"
#include "kjudge/sandbox.h"

/* How a stream's buffer keeps what does not fit. */
enum kj__sink_mode {
	KJ__SINK_HEAD,  /* the first cap bytes; the rest read and dropped */
	KJ__SINK_TAIL,  /* the last cap bytes (a build's error is at the end) */
	KJ__SINK_LIMIT, /* the first cap bytes; past them the program is stopped */
};

/* One stream of a program's output, kept in a bounded buffer. */
struct kj__sink {
	char *buf;          /* NUL-terminated; the head (keep_tail 0) or the tail */
	size_t len, cap;    /* cap: the most bytes kept */
	long long total;    /* every byte the program wrote on it */
	int keep_tail;      /* keep the last cap bytes, not the first */
	int limit;          /* past cap the program is stopped */
	int over;           /* it was stopped for that */
};

enum {
	/* A plain process (sb NULL) in its own PID namespace where allowed,
	 * so that nothing it starts outlives it unseen. */
	KJ__PROGRAM_PIDNS = 1 << 0,
	/* The OOM killer takes it before the judge (a candidate's program). */
	KJ__PROGRAM_OOM_FIRST = 1 << 1,
};

/*
 * What to run.  argv[0] is the program: an absolute path, or one relative
 * to cwd (execve after chdir; no PATH search, no shell: kj__find_in_path
 * finds a name).  stdin is /dev/null.
 */
struct kj__run_req {
	char *const *argv;
	char *const *envp;             /* the whole environment; NULL: empty */
	const char *cwd;               /* NULL: the judge's */
	const struct kj_sandbox *sb;   /* NULL: a plain process */
	double timeout_s;
	unsigned flags;                /* KJ__PROGRAM_* */
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

/* Set r's sinks' caps and modes before kj__program_run; the buffers are
 * allocated by it and freed by kj__program_release (also after a failed
 * run). */
void kj__program_init(struct kj__run_res *r, size_t out_cap, enum kj__sink_mode out_mode,
		      size_t err_cap, enum kj__sink_mode err_mode);
void kj__program_release(struct kj__run_res *r);

/*
 * Start q, read both streams until the program ends, the deadline passes,
 * a limited stream overflows or the signal guard fires; kill the whole
 * group (and its PID namespace), reap it.  Returns KJ_OK when it was run
 * (whatever came of it: r says), KJ_ESANDBOX / KJ_ESPAWN when it could not
 * be started for the machine's reasons, KJ_EINTR when interrupted, KJ_ENOMEM.
 * A program whose execve failed is KJ_OK with r->started 0 and
 * r->exec_errno set.
 */
int kj__program_run(const struct kj__run_req *q, struct kj__run_res *r, struct kj_error *err);

/*
 * What came of a run, in one line for a user ("cannot run NAME: No such
 * file or directory", "NAME did not end within 5 s", "NAME killed by
 * signal 9 (Killed)"), into buf: 0 when it ran and exited with status 0,
 * else -1.  The streams are not quoted.
 */
int kj__program_outcome(const char *name, double timeout_s, const struct kj__run_res *r,
			char *buf, size_t size);

#endif /* KJ_SANDBOX_PROGRAM_H */
