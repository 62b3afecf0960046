/*
 * spawn.c - the spawn core: every child process of the library starts here;
 * the live list of the judge's process groups; the signal guard that kills
 * them (see spawn.h for the theory of operation, proc.h for the guard's
 * contract).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/spawn.h"
#include "sandbox/child.h"
#include "sandbox/sandbox_internal.h"

/* --- the live list and the signal guard ------------------------------------------ */

static struct kj_proc_link *live_head;
static volatile sig_atomic_t caught;   /* the first guarded signal, 0 none */
static pid_t guard_pid, guard_tid;     /* who installed the guard */
static int wake[2] = { -1, -1 };       /* written once when it fires */

static const int guarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
#define N_GUARDED (sizeof(guarded) / sizeof(guarded[0]))

/* The signal the watchdog sends the guard's thread (see below). */
#define WATCHDOG_SIGNAL SIGALRM

/* The signals blocked while the list changes: the guarded ones and the
 * watchdog's, whose handlers both walk it. */
static void guarded_set(sigset_t *set)
{
	size_t i;

	sigemptyset(set);
	for (i = 0; i < N_GUARDED; i++)
		sigaddset(set, guarded[i]);
	sigaddset(set, WATCHDOG_SIGNAL);
}

static void watchdog_idle(void);

/* Add l, for the group pgid, to the list.  Called with the guarded
 * signals blocked (kj__spawn blocks every signal around fork). */
static void link_in(struct kj_proc_link *l, pid_t pgid)
{
	if (!l)
		return;
	l->prev = NULL;
	l->next = live_head;
	if (live_head)
		live_head->prev = l;
	l->pgid = pgid;
	l->stalled = 0;
	live_head = l;
}

void kj__spawn_unlink(struct kj_proc_link *l)
{
	sigset_t set, old;

	if (!l || !l->pgid)
		return;
	guarded_set(&set);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	if (l->prev)
		l->prev->next = l->next;
	else
		live_head = l->next;
	if (l->next)
		l->next->prev = l->prev;
	l->prev = l->next = NULL;
	l->pgid = 0;
	/* No worker left: nothing for the watchdog to stop. */
	if (!live_head)
		watchdog_idle();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int kj__spawn_is_live(pid_t pid)
{
	const struct kj_proc_link *l;

	for (l = live_head; l; l = l->next)
		if (l->pgid == pid)
			return 1;
	return 0;
}

int kj__spawn_wake_fd(void)
{
	return guard_pid ? wake[0] : -1;
}

int kj__spawn_wait_readable(int fd, double timeout_s, int interruptible)
{
	double deadline = kj__now_s() + timeout_s;

	for (;;) {
		struct pollfd p[2] = { { fd, POLLIN, 0 },
				       { interruptible ? kj__spawn_wake_fd() : -1, POLLIN, 0 } };
		double left = deadline - kj__now_s();
		int r;

		if (interruptible && caught)
			return -1;
		if (left <= 0)
			return 0;
		/* At most a second a poll: the int it takes cannot overflow. */
		r = poll(p, 2, left > 1 ? 1000 : (int)(left * 1000) + 1);
		if (r < 0 && errno != EINTR)
			return -2;
		if (r > 0 && p[1].revents)
			return -1;
		if (r > 0 && p[0].revents)
			return 1;
	}
}

/*
 * The handler: only async-signal-safe system calls.  It kills every group
 * in the list, so whatever the judge is doing (waiting, comparing, writing)
 * the workers stop within the time the kernel takes; the waits see the flag
 * or the wake pipe and return KJ_EINTR.
 */
static void on_signal(int sig)
{
	int saved = errno;
	const struct kj_proc_link *l;

	/* A forked copy of the judge that has not reset its handlers (the
	 * doctor's probes): it is not the judge, and it goes. */
	if (getpid() != guard_pid)
		_exit(128 + sig);
	/* Another thread: the thread that owns the list handles it, at a
	 * moment when the list is whole (it blocks these signals while it
	 * changes it). */
	if ((pid_t)syscall(SYS_gettid) != guard_tid) {
		syscall(SYS_tgkill, guard_pid, guard_tid, sig);
		errno = saved;
		return;
	}
	for (l = live_head; l; l = l->next)
		if (l->pgid > 0)
			kill(-l->pgid, SIGKILL);
	/* A second signal: the user wants out now.  The workers are dead;
	 * the next run sweeps the scratch directory. */
	if (caught)
		_exit(128 + caught);
	caught = sig;
	if (wake[1] >= 0 && write(wake[1], "!", 1) < 0) {
		/* the pipe is non-blocking and written once: nothing to do */
	}
	errno = saved;
}

int kj_proc_guard_signals(struct kj_error *err)
{
	struct sigaction sa, cur;
	size_t i;

	if (guard_pid == getpid())
		return KJ_OK;
	if (wake[0] < 0 && pipe2(wake, O_CLOEXEC | O_NONBLOCK) < 0)
		return kj_error_set(err, KJ_EIO, "cannot make the signal guard's "
				    "pipe: %s", strerror(errno));
	guard_tid = (pid_t)syscall(SYS_gettid);
	guard_pid = getpid();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	/* Other system calls of the judge go on; the waits poll, and poll
	 * is never restarted after a handler (signal(7)). */
	sa.sa_flags = SA_RESTART;
	guarded_set(&sa.sa_mask);
	for (i = 0; i < N_GUARDED; i++) {
		/* A signal ignored when the judge started (nohup, a background
		 * job of a script) stays ignored, as the shell meant. */
		if (sigaction(guarded[i], NULL, &cur) == 0 && cur.sa_handler == SIG_IGN)
			continue;
		if (sigaction(guarded[i], &sa, NULL) < 0)
			return kj_error_set(err, KJ_EIO, "cannot install a handler "
					    "for signal %d: %s", guarded[i],
					    strerror(errno));
	}
	return KJ_OK;
}

int kj_proc_interrupted(void)
{
	return caught;
}

/* --- the watchdog ------------------------------------------------------------------ */

/*
 * Every wait of the library on a worker has a deadline of its own; the
 * watchdog is the judge's guard against the wait nobody thought of (a
 * descriptor that blocks where it should not, a loop that never reaches its
 * poll).  Each request a worker is sent arms it for the request's timeout
 * plus a grace period, counted from the send; so does each wait for a
 * reply.  The deadline moves on with every request, and the watchdog goes
 * idle when no worker is left.  When the deadline passes, the watchdog's
 * thread has the guard's thread kill every worker group (the same walk of
 * the live list as the guard's, on the thread that owns it, with the
 * WATCHDOG_SIGNAL) and marks each group killed so as "stalled": the wait
 * or send that meets the dead worker fails with KJ_ETIMEDOUT, the case is a
 * Timeout, and the run goes on.  If the judge still makes no progress for
 * another grace period (it is stuck in something no kill can end), the
 * caller's `stuck` function is called from the watchdog's thread.
 */
static _Atomic long long wd_deadline_ms;   /* 0: idle */
static _Atomic long long wd_fired_ms;      /* the deadline it fired for */
static double wd_grace_s;
static void (*wd_stuck)(double waited_s);
static int wd_started;

static long long ms_now(void)
{
	return (long long)(kj__now_s() * 1000.0);
}

static void watchdog_idle(void)
{
	atomic_store(&wd_deadline_ms, 0);
}

void kj__watchdog_arm(double timeout_s)
{
	double s;

	if (!wd_started)
		return;
	s = timeout_s + wd_grace_s;
	/* A timeout of a year or more is no deadline to keep. */
	if (!(s < 3.2e7))
		s = 3.2e7;
	atomic_store(&wd_deadline_ms, ms_now() + (long long)(s * 1000.0));
}

void kj_proc_watchdog_pause(void)
{
	watchdog_idle();
}

/* The watchdog's signal, on the guard's thread: every group stops. */
static void on_watchdog(int sig)
{
	int saved = errno;
	struct kj_proc_link *l;

	if (getpid() != guard_pid)
		return;
	if ((pid_t)syscall(SYS_gettid) != guard_tid) {
		syscall(SYS_tgkill, guard_pid, guard_tid, sig);
		errno = saved;
		return;
	}
	for (l = live_head; l; l = l->next)
		if (l->pgid > 0) {
			l->stalled = 1;
			kill(-l->pgid, SIGKILL);
		}
	errno = saved;
}

static void *watchdog_main(void *arg)
{
	(void)arg;
	for (;;) {
		struct timespec tick = { 0, 200 * 1000 * 1000 };
		long long dl = atomic_load(&wd_deadline_ms), now;

		nanosleep(&tick, NULL);
		if (!dl || dl != atomic_load(&wd_deadline_ms))
			continue;
		now = ms_now();
		if (now <= dl)
			continue;
		if (atomic_load(&wd_fired_ms) != dl) {
			atomic_store(&wd_fired_ms, dl);
			syscall(SYS_tgkill, guard_pid, guard_tid, WATCHDOG_SIGNAL);
		} else if (now > dl + (long long)(wd_grace_s * 1000.0) && wd_stuck) {
			/* Killing the workers did not bring the judge back. */
			long long expect = dl;

			if (atomic_compare_exchange_strong(&wd_deadline_ms, &expect, 0))
				wd_stuck((double)(now - dl) / 1000.0 + wd_grace_s);
		}
	}
	return NULL;
}

int kj_proc_watchdog_start(double grace_s, void (*stuck)(double waited_s),
			   struct kj_error *err)
{
	struct sigaction sa;
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;
	int rc;

	if (guard_pid != getpid())
		return kj_error_set(err, KJ_EINVAL, "the watchdog needs the signal guard "
				    "(kj_proc_guard_signals) of this process");
	if (wd_started)
		return KJ_OK;
	wd_grace_s = grace_s > 0 ? grace_s : 0;
	wd_stuck = stuck;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_watchdog;
	sa.sa_flags = SA_RESTART;
	guarded_set(&sa.sa_mask);
	if (sigaction(WATCHDOG_SIGNAL, &sa, NULL) < 0)
		return kj_error_set(err, KJ_EIO, "cannot install the watchdog's handler: %s",
				    strerror(errno));
	/* The thread takes no signal of the judge's: each goes to the
	 * thread that owns the list, or is passed on to it. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	rc = pthread_create(&t, &attr, watchdog_main, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return kj_error_set(err, KJ_EIO, "cannot start the watchdog's thread: %s",
				    strerror(rc));
	wd_started = 1;
	return KJ_OK;
}

/* --- who the kernel's OOM killer takes ------------------------------------------------ */

/* Write adj to /proc/PID/oom_score_adj (pid 0: this process) and read back
 * what is in force; 0 when it cannot be read.  A refused write (lowering
 * without CAP_SYS_RESOURCE) leaves what was in force, which is read back. */
static int set_oom_score_adj(pid_t pid, int adj)
{
	char p[64], v[16];

	if (pid)
		snprintf(p, sizeof(p), "/proc/%d/oom_score_adj", (int)pid);
	else
		snprintf(p, sizeof(p), "/proc/self/oom_score_adj");
	snprintf(v, sizeof(v), "%d", adj);
	(void)kj__write_text(p, v);
	if (kj__read_text(p, v, sizeof(v)) <= 0)
		return 0;
	return (int)strtol(v, NULL, 10);
}

int kj_proc_protect_judge(void)
{
	return set_oom_score_adj(0, KJ_PROC_JUDGE_OOM_ADJ);
}

/* --- the child ------------------------------------------------------------------- */

static void child_main(const struct kj__child_args *a) __attribute__((noreturn));
static void child_main(const struct kj__child_args *a)
{
	static char *const empty[] = { NULL };
	int ep = kj__child_start(a);

	execve(a->argv[0], a->argv, a->envp ? a->envp : empty);
	kj__child_fail(ep, "", KJ__STEP_SPAWN);
}

/* --- the judge's side ------------------------------------------------------------------ */

enum mode {
	MODE_FORK,        /* a plain fork: its own process group only */
	MODE_PIDNS,       /* clone into a new PID namespace (and mount
			   * namespace, for its /proc) */
	MODE_PIDNS_USER,  /* the same, with a user namespace for the right */
	MODE_SANDBOX,     /* clone into every namespace of the sandbox */
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int write_proc_file(pid_t pid, const char *name, const char *text)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	return kj__write_text(path, text);
}

/* The child's uid and gid maps: inside id `inside` is the judge's own. */
static int map_ids(pid_t pid, int root_inside)
{
	char m[64];
	unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();

	snprintf(m, sizeof(m), "%u %u 1\n", root_inside ? 0 : uid, uid);
	if (write_proc_file(pid, "uid_map", m) < 0)
		return -1;
	if (write_proc_file(pid, "setgroups", "deny") < 0 && errno != ENOENT)
		return -1;
	snprintf(m, sizeof(m), "%u %u 1\n", root_inside ? 0 : gid, gid);
	return write_proc_file(pid, "gid_map", m);
}

/* A child that must not go on: its group killed, unlinked, reaped, its
 * cgroup removed. */
static void abandon(struct kj__spawn *s, pid_t pid)
{
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	kj__spawn_unlink(s->link);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (s->cg.version)
		kj_cgroup_release(&s->cg);
	memset(&s->cg, 0, sizeof(s->cg));
}

/* Errors of clone() that mean "not on this machine", not "broken". */
static int refused(int e)
{
	return e == EPERM || e == EINVAL || e == ENOSPC || e == EUSERS ||
	       e == ENOSYS || e == EACCES;
}

/* How long a child may take from its go byte to its execve (or, from a
 * template, to the end of its setup): the sandbox's mounts and limits take
 * milliseconds; a wedged mount must not hold the judge. */
#define SETUP_S 120.0

/* Read the child's failure record, if any, from the error pipe, up to
 * SETUP_S: the bytes read (0 at end of file: it is set up), -1 on an error
 * or at the deadline (*late set), -2 when the signal guard fired. */
static ssize_t read_failure(int fd, struct kj__child_failure *f, int *late)
{
	int w = kj__spawn_wait_readable(fd, SETUP_S, 1);
	ssize_t n;

	*late = w == 0;
	if (w == -1)
		return -2;
	if (w != 1)
		return -1;
	do
		n = read(fd, f, sizeof(*f));
	while (n < 0 && errno == EINTR);
	return n;
}

/*
 * One try at starting the child in mode m.  Returns KJ_OK; 1 when the
 * machine refuses this mode (namespaces) and the next may be tried; or a
 * negative code with err filled.  Nothing is left on any return but
 * KJ_OK.
 */
static int launch(struct kj__spawn *s, enum mode m, struct kj__template *tmpl,
		  struct kj_error *err)
{
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, sp[2] = { -1, -1 };
	int ep[2] = { -1, -1 }, sy[2] = { -1, -1 };
	int rc = KJ_OK, e, i, late;
	struct kj__child_args a;
	struct kj__child_failure f;
	sigset_t all, old;
	unsigned long cflags = 0;
	ssize_t n;
	pid_t pid;

	if (pipe2(ep, O_CLOEXEC) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sy) < 0 ||
	    ((s->flags & KJ__SPAWN_OUT) && pipe2(po, O_CLOEXEC) < 0) ||
	    ((s->flags & KJ__SPAWN_ERR) && pipe2(pe, O_CLOEXEC) < 0) ||
	    ((s->flags & KJ__SPAWN_PROTO) &&
	     socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)) {
		rc = kj_error_set(err, KJ_ESPAWN, "cannot create pipes: %s",
				  strerror(errno));
		goto out;
	}
	memset(&a, 0, sizeof(a));
	a.argv = s->argv;
	a.envp = s->envp;
	a.cwd = s->cwd;
	a.sb = m == MODE_SANDBOX ? s->sb : NULL;
	a.out = po[1];
	a.err = pe[1];
	a.proto = sp[1];
	a.errpipe = ep[1];
	a.sync = sy[1];
	a.parent_ends[0] = po[0];
	a.parent_ends[1] = pe[0];
	a.parent_ends[2] = sp[0];
	a.parent_ends[3] = ep[0];
	a.parent_ends[4] = sy[0];
	switch (m) {
	case MODE_SANDBOX:
		cflags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
			 CLONE_NEWIPC | CLONE_NEWUTS;
		break;
	case MODE_PIDNS_USER:
		cflags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS;
		a.own_proc = 1;
		break;
	case MODE_PIDNS:
		cflags = CLONE_NEWPID | CLONE_NEWNS;
		a.own_proc = 1;
		break;
	case MODE_FORK:
		break;
	}
	/* Every signal blocked from before fork until the child is in the
	 * live list: a guarded signal in between would miss it, and the
	 * child must not run the judge's handlers before it resets them. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (tmpl) {
		int cfds[5] = { po[1], pe[1], sp[1], ep[1], sy[1] };

		/* The template's child, re-parented to the judge, waits for
		 * its go byte; 0: the template failed (try again, cloned). */
		pid = kj__template_fork(tmpl, s, cfds);
		if (pid == 0)
			rc = 1;
		else if (pid < 0)
			rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
	} else if (m == MODE_FORK) {
		pid = fork();
	} else {
		pid = (pid_t)syscall(SYS_clone, cflags | SIGCHLD, NULL, NULL, NULL, NULL);
	}
	if (pid == 0 && !tmpl)
		child_main(&a);
	e = errno;
	if (pid > 0) {
		/* Both sides call setpgid: the group exists whoever runs
		 * first, so a kill of the group cannot miss. */
		setpgid(pid, pid);
		link_in(s->link, pid);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 1 || (tmpl && pid < 0))
		goto out;
	if (pid < 0) {
		if (m == MODE_PIDNS || m == MODE_PIDNS_USER)
			rc = refused(e) ? 1 : kj_error_set(err, KJ_ESPAWN, "clone: %s",
							   strerror(e));
		else if (m == MODE_SANDBOX)
			rc = kj_error_set(err, KJ_ESANDBOX, "clone into new namespaces: %s",
					  strerror(e));
		else
			rc = kj_error_set(err, KJ_ESPAWN, "fork: %s", strerror(e));
		goto out;
	}
	close_fd(&po[1]);
	close_fd(&pe[1]);
	close_fd(&sp[1]);
	close_fd(&ep[1]);
	close_fd(&sy[1]);
	if ((m == MODE_SANDBOX || m == MODE_PIDNS_USER) &&
	    map_ids(pid, m == MODE_SANDBOX) < 0) {
		e = errno;
		abandon(s, pid);
		rc = m == MODE_SANDBOX
			     ? kj_error_set(err, KJ_ESANDBOX, "cannot map the sandbox's "
					    "user: %s", strerror(e))
			     : 1;
		goto out;
	}
	if (m == MODE_SANDBOX && (rc = kj_cgroup_attach(&s->cg, s->sb, pid, err)) != KJ_OK) {
		abandon(s, pid);
		goto out;
	}
	/* Before the go byte: the program never runs with the judge's own
	 * (low) score. */
	if (s->oom_score_adj)
		s->limits.oom_score_adj = set_oom_score_adj(pid, s->oom_score_adj);
	/* send, not write: a child that is gone must not raise SIGPIPE. */
	if (send(sy[0], "g", 1, MSG_NOSIGNAL) != 1) {
		abandon(s, pid);
		rc = kj_error_set(err, m == MODE_SANDBOX ? KJ_ESANDBOX : KJ_ESPAWN,
				  "the new process is gone before it could start");
		goto out;
	}
	memset(&f, 0, sizeof(f));
	n = read_failure(ep[0], &f, &late);
	/* Kept open until now: a template's child checks, after its death
	 * signal is set, that the judge is still there. */
	close_fd(&sy[0]);
	if (caught || n == -2) {
		abandon(s, pid);
		rc = kj_error_set(err, KJ_EINTR, "interrupted by signal %d (%s)",
				  (int)caught, strsignal(caught));
		goto out;
	}
	/* A template's child that could not set itself up: the start is
	 * made again, cloned (what fails there is reported as always). */
	if (n != 0 && tmpl) {
		abandon(s, pid);
		kj__template_failed();
		rc = 1;
		goto out;
	}
	if (n < 0) {
		abandon(s, pid);
		if (late)
			rc = kj_error_set(err, m == MODE_SANDBOX ? KJ_ESANDBOX : KJ_ESPAWN,
					  "the new process did not finish its setup within %.0f s",
					  SETUP_S);
		else
			rc = kj_error_set(err, m == MODE_SANDBOX ? KJ_ESANDBOX : KJ_ESPAWN,
					  "cannot read the new process's setup: %s", strerror(errno));
		goto out;
	}
	if (n > 0) {
		abandon(s, pid);
		if (f.whose == KJ__STEP_NAMESPACE)
			rc = 1;
		else if (f.whose == KJ__STEP_SANDBOX)
			rc = kj_error_set(err, KJ_ESANDBOX, "sandbox: %s: %s", f.step,
					  strerror(f.err));
		else if (f.step[0])
			rc = kj_error_set(err, KJ_ESPAWN, "cannot start '%s': %s: %s",
					  s->argv[0], f.step, strerror(f.err));
		else {
			s->exec_errno = f.err;
			rc = kj_error_set(err, KJ_ESPAWN, "cannot run '%s': %s",
					  s->argv[0], strerror(f.err));
		}
		goto out;
	}
	s->pid = pid;
	s->out = po[0];
	s->err = pe[0];
	s->proto = sp[0];
	po[0] = pe[0] = sp[0] = -1;
	s->isolation = m == MODE_SANDBOX ? KJ_ISOLATION_SANDBOX
		       : m == MODE_FORK ? KJ_ISOLATION_GROUP : KJ_ISOLATION_PIDNS;
	s->limits.from_template = tmpl != NULL;
	if (m == MODE_SANDBOX) {
		s->limits.cgroup = s->cg.version;
		s->limits.mem_bytes = s->cg.mem_bytes;
		s->limits.swap_limited = s->cg.swap_limited;
		s->limits.pids_max = s->cg.pids_max;
		/* The child set these or failed a step: they are in force. */
		s->limits.cpu_s = s->sb->cpu_s > 0 ? s->sb->cpu_s : 0;
		s->limits.fsize_bytes = s->sb->fsize_bytes > 0 ? s->sb->fsize_bytes : 0;
		s->limits.nproc = s->sb->nproc > 0 ? s->sb->nproc : 0;
		s->limits.nofile = s->sb->nofile > 0 ? s->sb->nofile : 0;
	}
out:
	for (i = 0; i < 2; i++) {
		close_fd(&po[i]);
		close_fd(&pe[i]);
		close_fd(&sp[i]);
		close_fd(&ep[i]);
		close_fd(&sy[i]);
	}
	return rc;
}

/*
 * Set in every environment the judge starts, whatever the caller's says:
 * NVLink multicast off in NCCL, PyTorch and NVSHMEM.  A program that uses
 * it (a candidate's NCCL call on a multi-GPU host, say) can put every GPU
 * of the host out of service, others' work included, and nothing a judge
 * runs needs it.
 */
const char *const kj__spawn_fixed_env[] = {
	"NCCL_NVLS_ENABLE=0",
	"TORCH_SYMM_MEM_DISABLE_MULTICAST=1",
	"NVSHMEM_DISABLE_NVLS=1",
	NULL,
};

/* Whether entry ("NAME=value") sets a variable of kj__spawn_fixed_env. */
static int fixed_name(const char *entry)
{
	size_t i;

	for (i = 0; kj__spawn_fixed_env[i]; i++) {
		const char *f = kj__spawn_fixed_env[i];
		size_t n = (size_t)(strchr(f, '=') - f) + 1;

		if (strncmp(entry, f, n) == 0)
			return 1;
	}
	return 0;
}

/* envp (NULL: empty) less any setting of the fixed variables, then the
 * fixed ones: a new array of borrowed strings, the caller's to free (not
 * the strings); NULL when out of memory. */
static char **with_fixed_env(char *const *envp)
{
	size_t n = 0, k = 0, i;
	char **v;

	while (envp && envp[n])
		n++;
	v = calloc(n + sizeof(kj__spawn_fixed_env) / sizeof(kj__spawn_fixed_env[0]),
		   sizeof(*v));
	if (!v)
		return NULL;
	for (i = 0; i < n; i++)
		if (!fixed_name(envp[i]))
			v[k++] = envp[i];
	for (i = 0; kj__spawn_fixed_env[i]; i++)
		v[k++] = (char *)(uintptr_t)kj__spawn_fixed_env[i];
	return v;
}

int kj__spawn(struct kj__spawn *s, struct kj_error *err)
{
	static const enum mode sandbox[] = { MODE_SANDBOX };
	static const enum mode pidns[] = { MODE_PIDNS, MODE_PIDNS_USER, MODE_FORK };
	static const enum mode plain[] = { MODE_FORK };
	static int swept;
	const enum mode *modes;
	char *const *given;
	char **env;
	size_t n, i;
	int rc = 1;

	s->pid = 0;
	s->out = s->err = s->proto = -1;
	s->isolation = KJ_ISOLATION_NONE;
	s->exec_errno = 0;
	memset(&s->cg, 0, sizeof(s->cg));
	memset(&s->limits, 0, sizeof(s->limits));
	if (s->link)
		memset(s->link, 0, sizeof(*s->link));
	if (caught)
		return kj_error_set(err, KJ_EINTR, "interrupted by signal %d (%s): "
				    "nothing more is started", (int)caught,
				    strsignal(caught));
	if (s->sb && s->sb->overflow)
		return kj_error_set(err, KJ_ESANDBOX, "the sandbox names more than "
				    "%d read-only or writable paths", KJ_SANDBOX_MAX_PATHS);
	/* What killed judges left (their groups still hold processes when
	 * the judge died of SIGKILL outside a PID namespace), once a run. */
	if (!swept) {
		swept = 1;
		(void)kj_cgroup_sweep(NULL);
	}
	if (s->sb) {
		modes = sandbox;
		n = 1;
	} else if (s->flags & KJ__SPAWN_PIDNS) {
		modes = pidns;
		n = sizeof(pidns) / sizeof(pidns[0]);
	} else {
		modes = plain;
		n = 1;
	}
	env = with_fixed_env(s->envp);
	if (!env)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	given = s->envp;
	s->envp = env;
	if (s->sb && s->sb->template_argv) {
		struct kj__template *t = kj__template_get(s, &rc, err);

		if (rc != KJ_OK) {
			s->envp = given;
			free(env);
			return rc;
		}
		rc = t ? launch(s, MODE_SANDBOX, t, err) : 1;
	}
	for (i = 0; i < n && rc == 1; i++)
		rc = launch(s, modes[i], NULL, err);
	s->envp = given;
	free(env);
	/* The last mode (fork, the sandbox) never answers 1. */
	return rc;
}
