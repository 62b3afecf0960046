/*
 * kjudge/proc.h - worker processes: spawn, talk, time out, kill.
 *
 * Theory of operation.
 *
 *   judge (this process)                      worker (its own process group)
 *   --------------------                      ------------------------------
 *   proto  <== socketpair (AF_UNIX) ==>       fd 3: JSON lines, both ways
 *   out    <== pipe ==                        fd 1: stdout, captured up to a cap
 *   err    <== pipe ==                        fd 2: stderr, captured up to a cap
 *   (exec-error pipe, close-on-exec)          write errno if execve fails
 *                                             fd 0: /dev/null
 *
 * The worker gets no other descriptor (every one above 3 is closed, however
 * high) and a clean environment (only the variables the caller lists).  It
 * is started by the spawn core (lib/sandbox/spawn.h) and leads its own
 * process group, so a timeout or the end of the attempt kills everything it
 * started (kill(-pgid)).
 *
 * A request is one JSON line written to proto; the reply is the one line
 * read back, a JSON object carrying the request's nonce.  The worker writes
 * nothing else there and closes the channel to what it starts, so any other
 * byte on it (code under test may write to any descriptor it finds: a
 * forged reply, a line with a guessed nonce, a binary frame, a partial line
 * the reply would be glued to) fails the request at once with KJ_EPROTOCOL,
 * never a wait for a reply that can no longer be read.  While waiting, stdout and stderr are drained into bounded
 * buffers so a flood of output can never block the worker or grow without
 * end.  The wait has a deadline; when it passes the whole group is killed.
 *
 * Output is counted per request, not per worker life: each send starts the
 * count of both streams again, and the buffers keep the tail of the current
 * request's output (what a message about its failure shows).  A request may
 * print output_bytes per stream for every call it says it makes
 * (output_calls: a timed request that runs forward N times may print N
 * times as much); with output_limit set, the first byte past that budget
 * stops the request at once (the worker is killed, output_over says why),
 * however much more the worker would have printed.
 *
 * Nothing a worker starts outlives the judge, however the judge ends.  The
 * worker has SIGKILL as its parent-death signal, and it is PID 1 of a PID
 * namespace of its own wherever the machine allows one (p->isolation says
 * whether), so its death takes every descendant with it.  Where namespaces
 * are refused, a descendant that leaves the process group (setsid, a
 * daemon) is still caught while the judge lives: the calling process
 * becomes a child subreaper, so orphans are re-parented to it, and killing a
 * worker also kills and reaps every child of the calling process that is
 * not a live worker.  A program that uses this module must therefore not
 * have children of its own besides its workers.  A signal guard
 * (kj_proc_guard_signals) kills every worker group when the judge is asked
 * to stop, and makes every wait return KJ_EINTR.
 *
 * As PID 1 of its namespace a worker ignores the signals it has no handler
 * for, from inside the namespace or from the judge, except SIGKILL (which
 * is the only one the judge sends) and the kernel's own (a fault is still a
 * crash).
 *
 * Ownership: struct kj_proc is caller-owned; kj_proc_spawn fills it, and
 * kj_proc_release kills what is left, reaps it, closes every descriptor and
 * frees the buffers, whatever state the process is in.
 */
#ifndef KJUDGE_PROC_H
#define KJUDGE_PROC_H

#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "kjudge/error.h"
#include "kjudge/sandbox.h"

/* Output kept per stream: the last bytes of the current request's; what
 * came before them is counted, not kept.  Also the default budget of one
 * call (output_bytes 0). */
#define KJ_PROC_CAPTURE_MAX (256u << 10)
/* The longest reply line accepted. */
#define KJ_PROC_LINE_MAX (64u << 20)

struct kj_capture {
	char *data;          /* NUL-terminated: the tail of the current
			      * request's output, at most KJ_PROC_CAPTURE_MAX
			      * bytes */
	size_t len;
	size_t dropped;      /* bytes of the current request before the tail
			      * (len + dropped: all it printed on the stream) */
};

/*
 * A link in the judge's list of live process groups: the list the signal
 * guard kills (kj_proc_guard_signals) and the orphan sweep spares.  It is
 * part of struct kj_proc, so the list needs no allocation and has no limit;
 * its fields belong to lib/sandbox/spawn.c.  While linked, the struct that
 * holds it must stay where it is (it must not be moved, copied over or
 * freed before kj_proc_release).
 */
struct kj_proc_link {
	struct kj_proc_link *prev, *next;
	pid_t pgid;          /* the group; 0 when not in the list */
	volatile sig_atomic_t stalled; /* the watchdog killed it */
};

/* How far a process is kept from outliving the judge (see below). */
enum kj_isolation {
	KJ_ISOLATION_NONE = 0,   /* not started */
	KJ_ISOLATION_GROUP,      /* its own process group; descendants that
				  * leave it are swept as orphans */
	KJ_ISOLATION_PIDNS,      /* also PID 1 of its own PID namespace */
	KJ_ISOLATION_SANDBOX,    /* kjudge/sandbox.h (its own PID namespace too) */
};

struct kj_proc {
	pid_t pid;           /* also the process group id; 0 when none */
	int proto, out, err; /* our ends; -1 when closed */
	struct kj_capture cap_out, cap_err;
	char *line;          /* partial reply line */
	size_t line_len, line_cap;
	uint64_t next_nonce;
	unsigned noise_lines; /* lines on proto that were not our reply */
	char breach[256];    /* what broke the protocol, when a request
			      * failed with KJ_EPROTOCOL for it ("" else) */
	int reaped;
	int status;          /* wait status once reaped */
	double cpu_s;        /* its CPU time (user + system) once reaped */
	struct kj_cgroup cg; /* sandboxed processes: their cgroup, if any */
	int oom_killed;      /* the cgroup saw an OOM kill (set when killed) */
	/* Output limits, set by the caller (see the theory above). */
	int output_limit;    /* output past a request's budget fails the
			      * request (else what is not kept is dropped) */
	size_t output_bytes; /* the budget of one call, per stream; 0:
			      * KJ_PROC_CAPTURE_MAX */
	unsigned output_calls; /* the calls the next request makes (0 and 1:
				* one); kj_proc_send takes it and sets it
				* back to 0 */
	size_t budget;       /* the current request's budget, per stream */
	int output_over;     /* a request failed for printing past it */
	struct kj_proc_link link;       /* in the judge's list while it lives */
	enum kj_isolation isolation;    /* what the spawn achieved */
	struct kj_limits_in_force limits; /* what bounds it (sandboxed ones) */
	/* Descriptors the worker passed on proto (SCM_RIGHTS), each with the
	 * offset in `line` of the bytes they came with: they belong to the
	 * line those bytes are in.  Those of the last reply taken are in
	 * reply_fds until kj_proc_take_fds; the rest are closed. */
	struct kj_proc_fd { int fd; size_t at; } *fds;
	size_t n_fds, cap_fds;
	int *reply_fds;
	size_t n_reply_fds;
	int fds_over;                   /* more descriptors than KJ_PROC_FDS_MAX */
	int fds_nomem;                  /* the judge could not keep a descriptor sent */
	/* Descriptors for the worker, set by the caller: the next
	 * kj_proc_send passes them (SCM_RIGHTS) with the first bytes of its
	 * request and sets these back to none.  The caller keeps them (they
	 * are duplicated into the worker, not moved). */
	const int *send_fds;
	size_t n_send_fds;
};

/*
 * Kill and reap the worker templates this process started (lib/sandbox/
 * spawn.h, "Templates"): nothing of them is left, and their CPU time is
 * counted among the process's children's.  A process that ends without
 * calling it loses them all the same (their death signal); one that
 * starts workers after it starts templates anew.  Call it from the thread
 * that starts workers.
 */
void kj_proc_templates_release(void);

/* The most descriptors a worker may have in flight to the judge. */
#define KJ_PROC_FDS_MAX 4096

void kj_proc_init(struct kj_proc *p);

/*
 * Start argv[0] (an absolute path) with argv, the environment envp (NULL
 * terminated; may be empty), in directory cwd (NULL: unchanged).  Returns
 * KJ_OK, or KJ_ESPAWN with err filled when the process could not be started
 * (including execve failing in the child).  On error p holds nothing.
 */
int kj_proc_spawn(struct kj_proc *p, char *const argv[], char *const envp[],
		  const char *cwd, struct kj_error *err);

/*
 * The same, inside the sandbox sb (kjudge/sandbox.h; cwd is a path inside
 * it).  Returns KJ_ESANDBOX, with the step that failed in err, when the
 * sandbox could not be set up: the machine's failure, not the program's.
 */
int kj_proc_spawn_in(struct kj_proc *p, char *const argv[], char *const envp[],
		     const char *cwd, const struct kj_sandbox *sb,
		     struct kj_error *err);

/*
 * Send `req` (a JSON object; a "nonce" member is added; the function takes
 * the caller's reference, whatever it returns) and wait up to
 * timeout_s seconds for the reply, stored in *reply (a new reference the
 * caller must json_decref).  Returns KJ_OK; KJ_ETIMEDOUT when the deadline
 * passed; KJ_EWORKER when the worker closed the channel or died;
 * KJ_EPROTOCOL for a reply line past KJ_PROC_LINE_MAX or any byte on the
 * channel that is not the reply (p->breach says what came).  After any failure
 * the process group has been killed and reaped (kj_proc_describe_exit says
 * how it ended) and the worker must be released.
 */
int kj_proc_request(struct kj_proc *p, json_t *req, double timeout_s,
		    json_t **reply, struct kj_error *err);

/*
 * Answer a message the worker sent in the middle of a request (a line with
 * the request's nonce that the caller found is not its reply: the torch
 * runner's build requests, lib/runner/extcache.c): `msg` (a JSON object;
 * the caller's reference is taken, whatever this returns) goes as one line
 * with "nonce" set to nonce, without starting a new request (the output
 * count and budget go on); the caller then waits for the reply again with
 * kj_proc_wait.  Descriptors that came with the message are closed.  The
 * same codes as kj_proc_send; a failure leaves the worker killed.
 */
int kj_proc_answer(struct kj_proc *p, uint64_t nonce, json_t *msg, double timeout_s,
		   struct kj_error *err);

/*
 * The two halves of kj_proc_request, for talking to several workers at once:
 * send to each, then wait for each.  *nonce links a wait to its send.  The
 * same return codes; a failed send or wait leaves the worker killed.  A send
 * begins a new request's output: the captures are emptied and its budget is
 * output_bytes times output_calls.  A wait that finds its reply first takes
 * what the worker printed before it, so that output is counted on its own
 * request; with output_limit, a request that printed past its budget fails
 * (KJ_EWORKER, output_over set) even when its reply came.
 */
int kj_proc_send(struct kj_proc *p, json_t *req, double timeout_s,
		 uint64_t *nonce, struct kj_error *err);
int kj_proc_wait(struct kj_proc *p, uint64_t nonce, double timeout_s,
		 json_t **reply, struct kj_error *err);

/*
 * Freeze (frozen = 1) or thaw (0) every process of p: its process group and,
 * when it leads a PID namespace of its own, every process in that namespace
 * (descendants that left the group: a daemon, a setsid'ed busy loop), with
 * SIGSTOP / SIGCONT; freezing waits (up to 1 s) until each is stopped.  So
 * one side of an attempt can be timed while the other computes nothing.
 * KJ_OK, or a code with err filled (the process is then left as it was, as
 * far as can be).  lib/sandbox/freeze.c.
 */
int kj_proc_freeze(struct kj_proc *p, int frozen, struct kj_error *err);

/*
 * The descriptors that came with the reply the last kj_proc_wait (or
 * kj_proc_request) returned, in the order the worker sent them: *fds is a
 * new array (NULL when none) the caller frees, and the caller closes each
 * descriptor.  p holds none of them afterwards.
 */
void kj_proc_take_fds(struct kj_proc *p, int **fds, size_t *n);

/* Whether the worker is started and has not exited (it is not reaped:
 * kj_proc_kill and kj_proc_release still end it). */
int kj_proc_alive(const struct kj_proc *p);

/* Kill the whole process group (SIGKILL) and reap the leader. */
void kj_proc_kill(struct kj_proc *p);

/* SIGKILL to the whole process group now, without waiting: several
 * workers killed so end at the same time; kj_proc_kill or kj_proc_release
 * reaps them. */
void kj_proc_signal_kill(struct kj_proc *p);

/* "exited with status 3" / "killed by signal 11 (Segmentation fault)" /
 * "still running", into buf.  Returns buf. */
char *kj_proc_describe_exit(const struct kj_proc *p, char *buf, size_t size);

/* Ask the worker to exit (an "exit" request), wait up to grace_s, then kill;
 * close everything, free buffers.  p is empty afterwards. */
void kj_proc_release(struct kj_proc *p, double grace_s);

/* "process-group", "pid-namespace", "sandbox" (or "none"). */
const char *kj_isolation_name(enum kj_isolation iso);

/*
 * What keeps p bounded, as a new JSON object the caller json_decrefs (NULL
 * when out of memory): {"isolation": kj_isolation_name, "cgroup": "v1" |
 * "v2" | null, "memory_bytes", "swap_limited", "pids_max", "cpu_s",
 * "file_bytes", "nproc", "nofile"}, each limit 0 where none is in force.
 * For a result to record the limits actually applied.
 */
json_t *kj_proc_limits_json(const struct kj_proc *p);

/*
 * The signal guard.  Called once by a program that starts workers (the
 * CLI, before a run), it installs handlers for SIGINT, SIGTERM, SIGHUP and
 * SIGQUIT that, async-signal-safely, kill (SIGKILL) every live worker's
 * process group and remember the first signal.  From then on every wait
 * and send (kj_proc_wait, kj_proc_send, kj_proc_request) returns KJ_EINTR
 * promptly, whatever state the worker was in, and no spawn starts anything
 * (KJ_EINTR): a worker that ended because of the signal is never reported
 * as a worker that crashed, which would charge the candidate.  The caller
 * unwinds (releasing its workers and scratch as usual), writes no verdict,
 * and exits 128 + the signal.  A second signal ends the process at once
 * (exit 128 + the first signal), the workers killed first.
 *
 * A signal that arrives on another thread is passed on to the thread that
 * called this function, which must be the one that starts and releases the
 * workers: the handler then never runs while that thread changes the list
 * (the signals are blocked while it does).  Returns KJ_OK, or KJ_EIO when a
 * handler cannot be installed.
 */
int kj_proc_guard_signals(struct kj_error *err);

/* The signal that interrupted the run, or 0. */
int kj_proc_interrupted(void);

/*
 * The watchdog, the judge's guard against a wait that has no deadline by
 * mistake.  Once started (after kj_proc_guard_signals, from the same
 * thread), every request sent to a worker and every wait for a reply arm
 * it for that request's timeout plus grace_s, counted from then; it goes
 * idle when no worker is left or on kj_proc_watchdog_pause.  If the
 * deadline passes with no new request or wait, every live worker group is
 * killed (on the guard's thread, as the guard does), and the send or wait
 * that meets one of them fails with KJ_ETIMEDOUT ("no progress ... the
 * judge's watchdog stopped the worker"): the case is a Timeout and the run
 * goes on.  If the judge still makes no progress grace_s later (it is
 * stuck in something that killing the workers did not end), `stuck` (may be
 * NULL) is called once, from the watchdog's own thread, with the seconds
 * waited: the CLI says so and exits, so that a batch's other attempts go
 * on.  Returns KJ_OK (also when already started), KJ_EINVAL without the
 * guard, KJ_EIO when its handler or thread cannot be set up.
 */
int kj_proc_watchdog_start(double grace_s, void (*stuck)(double waited_s),
			   struct kj_error *err);

/* Idle the watchdog until the next request: for a wait of the judge's own
 * that may rightly be long while workers live (a device another attempt
 * holds). */
void kj_proc_watchdog_pause(void);

/*
 * Who the kernel's OOM killer takes when the machine runs out of memory
 * (whatever the budget, config.h's struct kj_mem_budget, could not
 * foresee): every worker first (KJ_PROC_WORKER_OOM_ADJ, set by the spawn
 * core before the worker runs anything), the judge last.
 * kj_proc_protect_judge() lowers this process's own score to
 * KJ_PROC_JUDGE_OOM_ADJ, which needs CAP_SYS_RESOURCE (root); elsewhere it
 * stays as it was.  Returns the score in force.  Processes started later
 * inherit it until the spawn core raises theirs.
 */
#define KJ_PROC_WORKER_OOM_ADJ 1000
#define KJ_PROC_JUDGE_OOM_ADJ (-500)
int kj_proc_protect_judge(void);

#endif /* KJUDGE_PROC_H */
