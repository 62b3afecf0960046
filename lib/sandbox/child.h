/*
 * child.h - the new process's side of a start (lib/sandbox/child.c): what
 * every child of the spawn core does before its program runs, whether it
 * was cloned by the judge and goes on to execve (spawn.c), or forked from a
 * worker template and goes on into the worker's Python
 * (worker/kjudge_template.c, built from this file too).
 *
 * Everything here is async-signal-safe system calls on the stack: the child
 * of a raw clone() runs no fork handlers, and a thread of the judge could
 * have held a lock.
 */
#ifndef KJ_SANDBOX_CHILD_H
#define KJ_SANDBOX_CHILD_H

struct kj_sandbox;

struct kj__child_args {
	char *const *argv, *const *envp;  /* execve's (unused by a template's child) */
	const char *cwd;                  /* NULL: stay where it is */
	const struct kj_sandbox *sb;      /* NULL: no sandbox */
	int out, err, proto;   /* the child's ends; -1 when not asked for */
	int own_proc;          /* mount a /proc of its own PID namespace */
	int errpipe, sync;
	int parent_ends[5];    /* the judge's ends, closed first; -1 unused */
	/* A template's child: it was re-parented to the judge (a child
	 * subreaper) before the judge sent its go byte, so the death signal
	 * is set after the go byte, then the sync socket is checked for the
	 * judge's end (kept open by the judge until it has read the error
	 * pipe) to be still there. */
	int adopted;
};

/* Whose step failed, in a child failure record. */
enum {
	KJ__STEP_SPAWN,        /* the start itself: descriptors, chdir, execve */
	KJ__STEP_SANDBOX,      /* the sandbox's setup */
	KJ__STEP_NAMESPACE,    /* a plain worker's namespace: the judge falls
				* back to a start without one */
};

/* What the child writes on the error pipe when it cannot go on. */
struct kj__child_failure {
	int err;
	int whose;             /* KJ__STEP_* */
	char step[60];         /* the step that failed; "" for execve */
};

/* Write the failure record (errno, step) on fd and _exit(127). */
void kj__child_fail(int fd, const char *step, int whose) __attribute__((noreturn));

/*
 * Everything before the program: the death signal, its own process group,
 * the judge's go byte, descriptors 0-3 (and the error pipe just above them,
 * close-on-exec; nothing else), a /proc of its own or the sandbox, default
 * signal dispositions and an empty mask, the working directory.  Returns
 * the error pipe's descriptor (the caller closes it once the program is
 * running: execve does; a template's child closes it itself); on any
 * failure the record is written and the process exits.
 */
int kj__child_start(const struct kj__child_args *a);

#endif /* KJ_SANDBOX_CHILD_H */
