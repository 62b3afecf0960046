/*
 * spawn.h - the one way the library starts a program (lib/sandbox/spawn.c):
 * workers, plain or sandboxed (proc.c), the doctor's programs (doctor.c),
 * and the builds to come.
 *
 * Theory of operation.
 *
 *   judge (caller's thread)                  child
 *   -----------------------                  -----
 *   pipes: exec errors (close-on-exec),      prctl(PR_SET_PDEATHSIG, SIGKILL)
 *     sync (a socketpair), out, err,         setpgid(0, 0)
 *     proto (a socketpair), as asked         waits for the go byte on sync:
 *   every signal blocked                       end of file means the judge
 *   fork(), or clone() into new                died before the death signal
 *     namespaces                               was set, and the child exits
 *   setpgid(child, child); the group         fd 0 /dev/null; 1, 2 the capture
 *     linked into the live list                pipes or /dev/null; 3 proto
 *   signals as they were                       (when asked); the exec-error
 *   uid/gid maps (user namespaces)             pipe next, close-on-exec;
 *   cgroup (sandbox), limits in force          every other descriptor closed
 *   its oom_score_adj (when asked)
 *   go byte on sync  ------------------->      (close_range, else each one up
 *   reads the exec-error pipe:                 to RLIMIT_NOFILE's hard limit)
 *     end of file = execve succeeded         its own /proc (a PID namespace)
 *                                            sandbox setup (sandbox.h)
 *     a record = errno and failed step       default signal dispositions,
 *                                              an empty signal mask, chdir
 *                                            execve (or the record, exit 127)
 *
 * The death signal is what makes a child go with the judge however the
 * judge ends, SIGKILL included.  It kills the child alone; the child's
 * descendants go with it because it is PID 1 of a PID namespace of its own
 * wherever the machine allows one (always for the sandbox; with
 * KJ__SPAWN_PIDNS for plain workers, in a user namespace of its own when
 * the judge lacks the privilege, mapping only the judge's uid and gid to
 * themselves, so that the program sees the same files and ids, and with a
 * /proc of its own PID namespace, in a mount namespace of its own, because
 * CUDA's driver will not start where /proc disagrees with getpid()): when
 * PID 1 of a namespace dies the kernel kills everything in it.  Where namespaces
 * are refused the child is a plain fork() in its own process group
 * (KJ_ISOLATION_GROUP): the group is killed as a whole and orphans are
 * swept (proc.c), but a descendant that left the group survives a judge
 * killed by SIGKILL.  The spawn records which it achieved.
 *
 * getppid() cannot be the check that the judge is still there after the
 * death signal is set: in a new PID namespace it returns 0.  The go byte
 * does the same job for every kind of child: the judge sends it only after
 * the child is linked, and a judge that died before sending it closed its
 * end of the socketpair.
 *
 * The live list (struct kj_proc_link, threaded through the caller's
 * structs) is read by the signal guard (kj_proc_guard_signals) to kill
 * every group on SIGINT, SIGTERM, SIGHUP and SIGQUIT; it is changed with
 * those signals blocked, and the handler runs only on the thread that
 * installed it, so it never sees a list half changed.  It has no lock: the
 * judge starts and releases its children from that one thread (a caller
 * that would spawn from several threads must serialise the calls).  A child is linked
 * before the signals are unblocked after fork, so no signal can fall
 * between its birth and its entry in the list; it must be unlinked
 * (kj__spawn_unlink) after its group has been killed and before its leader
 * is reaped, so that the pid can never be reused while the list names it.
 *
 * Everything the child runs before execve is async-signal-safe system
 * calls on the stack (the sandbox's setup included), because the child of
 * a raw clone() runs no fork handlers and a thread of the judge could have
 * held a lock.
 *
 * Templates.  A sandboxed start whose sandbox names a template_argv (a
 * torch worker's: importing torch is most of a worker's start, seconds of
 * CPU) is forked from a template instead of cloned (template.c): a plain
 * child of the judge, in the judge's PID namespace, that ran that command
 * and imported what the program needs, then forks one child a request
 * through a child of its own that unshares the sandbox's namespaces:
 *
 *   judge                      template          C1               C2
 *   pipes, as above
 *   request + the child's ---> fork ----------> unshare
 *     ends (SCM_RIGHTS)                          fork ----------> PID 1 of
 *                                                 its pid, exit      its own
 *                        <---  {"pid": C2}  <---                     namespace,
 *   (C2 re-parented to the judge, a child subreaper, when C1 exited)  waits
 *   setpgid, link, uid/gid maps,                                     for go
 *   cgroup, oom_score_adj, go  ---------------------------------->  death
 *   reads the error pipe                                             signal,
 *     (end of file: set up)                                          judge
 *   keeps the sync socket until then                                  still
 *                                                                    there?
 *                                                                  descriptors,
 *                                                                  sandbox,
 *                                                                  closes the
 *                                                                  error pipe,
 *                                                                  the worker
 *
 * From the go byte on, the judge does and sees exactly what it does for a
 * child it cloned: C2 is its child (waited for, killed by group, reaped
 * with its rusage), in the same namespaces, cgroup, limits and view, built
 * by the same code (child.c and view.c are also the template's library).
 * The difference is what C2 starts with: the template's memory (Python
 * with torch imported; nothing of any run: the template never runs a
 * task's or a candidate's code and never sees a seed) instead of a fresh
 * execve.  The child's environment and argv replace the template's before
 * the worker runs (the template is keyed by its command and its
 * environment less the sandbox's template_free_env names).  A template that
 * fails in any way is killed and no template is used again by the process:
 * its starts clone, slower, with the same verdicts.
 */
#ifndef KJ_SPAWN_H
#define KJ_SPAWN_H

#include <sys/types.h>

#include "kjudge/error.h"
#include "kjudge/proc.h"
#include "kjudge/sandbox.h"

enum {
	KJ__SPAWN_OUT = 1 << 0,   /* stdout into a pipe (else /dev/null) */
	KJ__SPAWN_ERR = 1 << 1,   /* stderr into a pipe (else /dev/null) */
	KJ__SPAWN_PROTO = 1 << 2, /* a socketpair, the child's end as fd 3 */
	KJ__SPAWN_PIDNS = 1 << 3, /* its own PID namespace where allowed */
};

/* The settings every environment the judge starts holds, whatever the
 * caller's says (NVLink multicast off), NULL-terminated. */
extern const char *const kj__spawn_fixed_env[];

struct kj__spawn {
	/* What to start: the caller's, read during the call only. */
	char *const *argv;            /* argv[0] an absolute path */
	char *const *envp;            /* the whole environment (NULL: empty), and
				       * kj__spawn_fixed_env over it */
	const char *cwd;              /* NULL: the judge's */
	unsigned flags;               /* KJ__SPAWN_* */
	const struct kj_sandbox *sb;  /* non-NULL: in this sandbox */
	/* Nonzero: written to the child's /proc/PID/oom_score_adj before it
	 * runs anything (the kernel's OOM killer takes the highest score
	 * first).  Raising a score needs no privilege; a judge with
	 * CAP_SYS_RESOURCE writing it also makes it the child's floor, which
	 * the child cannot go below.  Best effort: limits.oom_score_adj says
	 * what is in force. */
	int oom_score_adj;
	struct kj_proc_link *link;    /* the caller's, linked on success */

	/* What came of it, on success: the caller owns the descriptors (all
	 * close-on-exec, -1 unless asked for), the child (to kill, unlink and
	 * reap) and the cgroup (kj_cgroup_release). */
	pid_t pid;                    /* also its process group's id */
	int out, err, proto;
	enum kj_isolation isolation;
	struct kj_cgroup cg;
	struct kj_limits_in_force limits;
	/* On KJ_ESPAWN: the errno of a failed execve, else 0 (nothing could
	 * be started at all). */
	int exec_errno;
};

/*
 * Start s->argv as the theory above says.  Returns KJ_OK with the outputs
 * filled; KJ_EINTR when the signal guard has fired (nothing is started);
 * KJ_ESANDBOX with the failed step (a sandbox that could not be set up:
 * namespaces, maps, the cgroup, a mount, a path that did not fit);
 * KJ_ESPAWN (pipes, fork, execve).  On error nothing is left: no child, no
 * descriptor, no cgroup, and s->link is not linked.
 */
int kj__spawn(struct kj__spawn *s, struct kj_error *err);

/* Take l out of the live list (a no-op when it is not in it).  Call it
 * after killing the group and before reaping the leader. */
void kj__spawn_unlink(struct kj_proc_link *l);

/* Whether pid leads a group in the live list. */
int kj__spawn_is_live(pid_t pid);

/* A descriptor that becomes readable when the signal guard fires, for the
 * waits to poll beside their own; -1 when no guard is installed. */
int kj__spawn_wake_fd(void);

/* Wait until fd is readable (or hung up), up to timeout_s, and, when
 * interruptible, until the signal guard fires: 1 readable, 0 the deadline
 * passed, -1 the guard fired, -2 poll failed (errno set). */
int kj__spawn_wait_readable(int fd, double timeout_s, int interruptible);

/* Arm the watchdog (proc.h, kj_proc_watchdog_start) for timeout_s plus its
 * grace period from now: every send and wait on a worker does.  A no-op
 * when the watchdog was not started. */
void kj__watchdog_arm(double timeout_s);

/* The template for s (whose sandbox names a template_argv), started when
 * none matches: NULL when none can serve, the start then clones (*rc
 * KJ_OK), or when the signal guard fired while one started or the judge
 * ran out of memory (*rc KJ_EINTR or KJ_ENOMEM, err filled). */
struct kj__template;
struct kj__template *kj__template_get(const struct kj__spawn *s, int *rc, struct kj_error *err);

/* Have t fork s's child, given the child's ends of its descriptors (out,
 * err, proto: -1 when absent; the error pipe; the sync socket).  Returns
 * the child's pid (the judge's child, waiting for its go byte); 0 when
 * the template failed: it is gone, no template is used again, and the
 * caller starts the child anew (new descriptors: a child the template may
 * have left holds these); -1 when the judge ran out of memory (the start
 * fails with KJ_ENOMEM, as any other allocation of a start does). */
pid_t kj__template_fork(struct kj__template *t, const struct kj__spawn *s, const int fds[5]);

/* A child a template forked could not set itself up: every template goes
 * and none is used again (the caller starts the child anew, cloned, and
 * reports what that start says). */
void kj__template_failed(void);

#endif /* KJ_SPAWN_H */
