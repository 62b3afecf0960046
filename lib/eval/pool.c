/*
 * pool.c - the batch runner (kjudge/eval.h): a batch's attempts judged at
 * most `jobs` at once, one child process an attempt, spread over the
 * devices.
 *
 * Theory of operation.
 *
 *   parent                                   child (one an attempt)
 *   ------                                   ----------------------
 *   next() -> cand; the least-loaded device
 *   pipe, fork                     ------->  PDEATHSIG, signals reset,
 *                                            judge(cand, device) -> result,
 *                                  <=======  written whole to the pipe, _exit
 *   waitpid(-1, WNOHANG); none ended: sleep in ppoll with SIGCHLD unblocked
 *   (a child that ends between waitpid and the sleep still wakes it), at
 *   most a second (tick() redraws the progress)
 *   an ended child: its result read whole (size and mark checked) and
 *   handed to finished()
 *
 * The result is a fixed structure smaller than PIPE_BUF, so the child's one
 * write is atomic and nothing of it is parsed: a child that died before it
 * wrote, or wrote part, is told by the length read.
 *
 * Warm children (ops->prestart): a free slot gets a child before its
 * attempt is known, which makes ahead what it can (prestart) and waits on
 * a socket of its own for the attempt's number; next()'s attempts go to a
 * waiting child first (on the device with the fewest attempts running),
 * to a fresh child only where none waits.  The parent retires a waiting
 * child by closing that socket (no more attempts, or it waited
 * warm_idle_s): the child releases what it made and ends without a
 * result, and nothing is reported of it.  Only the parent retires, so an
 * attempt is never given to a child that is leaving.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kjudge/proc.h"
#include "kjudge/eval.h"
#include "base/internal.h"

_Static_assert(sizeof(struct kj_eval_result) <= PIPE_BUF,
	       "a result must be written to a pipe in one atomic write");

struct kid {
	pid_t pid;              /* 0: a free slot */
	int fd;                 /* its result's pipe */
	size_t cand;
	int device;
	int cmd;                /* a warm child's socket for its attempt, -1 */
	int warm;               /* waiting for an attempt (or retired before
				 * one came): nothing is reported of it */
	int ready;              /* a warm child's last word on cmd: its
				 * workers started, and it is not making
				 * more (WARM_READY) */
	double since;           /* when it was forked (monotonic seconds) */
};

/* A warm child that ended this soon after its fork, unasked, ended of its
 * own failure: no warm child is forked for the next WARM_BACKOFF_S. */
#define WARM_QUICK_S 5.0
#define WARM_BACKOFF_S 10.0
/* A warm child that waited this long unasked makes more ahead
 * (ops->prestart_more). */
#define WARM_MORE_S 1.0
/* What a warm child says on cmd: ready for an attempt (what it makes
 * ahead is made), or busy making it (an attempt given now waits). */
#define WARM_READY 'R'
#define WARM_BUSY 'B'

/* A warm child's word to the parent; lost when the parent has retired it
 * (never a signal, never a wait). */
static void say(int cmd, char what)
{
	ssize_t n;

	do
		n = send(cmd, &what, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
}

const char *kj_eval_default_device(void)
{
	return kj__nvidia_driver_loaded() ? "cuda" : "cpu";
}

/* SIGCHLD only ends the wait's sleep (ppoll returns EINTR); the ended
 * child is reaped by waitpid after it. */
static void on_child(int sig)
{
	(void)sig;
}

/* A child's start: it dies with the parent, signals as the parent found
 * them. */
static void child_prologue(pid_t parent, const sigset_t *start_mask)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != parent)
		_exit(3);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	sigprocmask(SIG_SETMASK, start_mask, NULL);
}

/* Judge cand (with warm, when a warm child), hand the result back whole,
 * end. */
static void child_judge(const struct kj_eval_pool_ops *ops, void *ctx, int fd, size_t cand,
			const char *device, void *warm)
{
	struct kj_eval_result r;
	const char *p = (const char *)&r;
	size_t left = sizeof(r);

	memset(&r, 0, sizeof(r));
	ops->judge(ctx, cand, device, warm, &r);
	r.magic = KJ_EVAL_RESULT_MAGIC;
	r.size = (uint32_t)sizeof(r);
	while (left > 0) {
		ssize_t n = write(fd, p, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		p += n;
		left -= (size_t)n;
	}
	/* Its worker template goes with it, reaped (spawn.h, "Templates"). */
	kj_proc_templates_release();
	_exit(left > 0 ? 4 : r.code == KJ_OK ? 0 : 1);
}

/* The child: judge one attempt. */
static void child(const struct kj_eval_pool_ops *ops, void *ctx, pid_t parent,
		  const sigset_t *start_mask, int fd, size_t cand, const char *device)
{
	child_prologue(parent, start_mask);
	child_judge(ops, ctx, fd, cand, device, NULL);
}

/*
 * A warm child: make ahead what prestart makes, then wait for the
 * attempt's number on cmd.  The parent retires it by closing cmd; the wait
 * has a deadline all the same (a parent that forgot it: a little past
 * the time it retires a child at).
 */
static void warm_child(const struct kj_eval_pool *p, const struct kj_eval_pool_ops *ops,
		       void *ctx, pid_t parent, const sigset_t *start_mask, int fd, int cmd,
		       const char *device)
{
	double idle = p->warm_idle_s > 0 ? p->warm_idle_s : 600, end;
	void *warm;
	size_t cand, got = 0;
	int more = ops->prestart_more != NULL;

	child_prologue(parent, start_mask);
	warm = ops->prestart(ctx, device);
	say(cmd, warm ? WARM_READY : WARM_BUSY);
	end = kj__now_s() + idle + 120;
	while (got < sizeof(cand)) {
		struct pollfd pf = { cmd, POLLIN, 0 };
		double left = end - kj__now_s();
		ssize_t n;

		if (left <= 0)
			break;
		/* Waited WARM_MORE_S with nothing asked: what more can be made
		 * ahead (once; an attempt that comes meanwhile waits for it). */
		if (more && left > WARM_MORE_S)
			left = WARM_MORE_S;
		n = poll(&pf, 1, (int)(left * 1000) + 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && more) {
			more = 0;
			if (warm) {
				say(cmd, WARM_BUSY);
				ops->prestart_more(ctx, warm, device);
				say(cmd, WARM_READY);
			}
			continue;
		}
		if (n <= 0)
			break;
		n = read(cmd, (char *)&cand + got, sizeof(cand) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got == sizeof(cand)) {
		close(cmd);
		child_judge(ops, ctx, fd, cand, device, warm);
	}
	if (ops->release_warm)
		ops->release_warm(ctx, warm);
	kj_proc_templates_release();
	_exit(0);
}

/* The ended child's result into *r: 1 when it came whole, else 0.  The
 * descriptor does not block: what the child wrote is in the pipe by the
 * time it has ended, and a process it left behind holding the pipe open
 * must not hold the parent. */
static int read_result(int fd, struct kj_eval_result *r)
{
	char *p = (char *)r;
	size_t got = 0;

	while (got < sizeof(*r)) {
		ssize_t n = read(fd, p + got, sizeof(*r) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got != sizeof(*r) || r->magic != KJ_EVAL_RESULT_MAGIC || r->size != sizeof(*r))
		return 0;
	/* Every string ends inside its field, whatever was written. */
	r->outcome.status[sizeof(r->outcome.status) - 1] = '\0';
	r->outcome.error_type[sizeof(r->outcome.error_type) - 1] = '\0';
	r->outcome.category[sizeof(r->outcome.category) - 1] = '\0';
	r->outcome.message[sizeof(r->outcome.message) - 1] = '\0';
	r->error[sizeof(r->error) - 1] = '\0';
	return 1;
}

/* A free slot and the least-loaded device (ties: the first). */
static int pick(const struct kid *kids, int jobs, const int *load, int n_devices, int *device)
{
	int k, slot = -1;

	for (k = 0; k < jobs && slot < 0; k++)
		if (!kids[k].pid)
			slot = k;
	*device = 0;
	for (k = 1; k < n_devices; k++)
		if (load[k] < load[*device])
			*device = k;
	return slot;
}

/* What a warm child said last on cmd (without waiting): kid->ready. */
static void hear(struct kid *kid)
{
	char buf[16];
	ssize_t n;

	for (;;) {
		n = recv(kid->cmd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		kid->ready = buf[n - 1] == WARM_READY;
	}
}

/* A waiting warm child, or -1: one that is ready before one still
 * starting its workers (an attempt given to that one waits for them: a
 * fresh child forked where the last attempt ended must not take the next
 * from an older one that is ready), then the device with the fewest
 * attempts running, then the one that has waited longest. */
static int pick_warm(struct kid *kids, int jobs, const int *busy)
{
	int k, best = -1;

	for (k = 0; k < jobs; k++) {
		struct kid *c = &kids[k], *b;

		if (!c->pid || !c->warm || c->cmd < 0)
			continue;
		hear(c);
		b = best >= 0 ? &kids[best] : NULL;
		if (!b || c->ready > b->ready ||
		    (c->ready == b->ready &&
		     (busy[c->device] < busy[b->device] ||
		      (busy[c->device] == busy[b->device] && c->since < b->since))))
			best = k;
	}
	return best;
}

/* A result pipe whose reading end does not block: 0, or -1 with why. */
static int result_pipe(int fds[2], char *why, size_t size)
{
	if (pipe2(fds, O_CLOEXEC) < 0) {
		snprintf(why, size, "pipe: %s", strerror(errno));
		return -1;
	}
	if (fcntl(fds[0], F_SETFL, O_NONBLOCK) < 0) {
		snprintf(why, size, "pipe: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	return 0;
}

/* Start cand in slot: 0, or -1 after start_failed(). */
static int start(const struct kj_eval_pool *p, const struct kj_eval_pool_ops *ops, void *ctx,
		 const sigset_t *start_mask, struct kid *kid, size_t cand, int device)
{
	char why[128];
	int fds[2];
	pid_t pid, me = getpid();

	if (result_pipe(fds, why, sizeof(why)) < 0) {
		ops->start_failed(ctx, cand, why);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		child(ops, ctx, me, start_mask, fds[1], cand, p->devices[device]);
	}
	close(fds[1]);
	if (pid < 0) {
		snprintf(why, sizeof(why), "fork: %s", strerror(errno));
		close(fds[0]);
		ops->start_failed(ctx, cand, why);
		return -1;
	}
	kid->pid = pid;
	kid->fd = fds[0];
	kid->cand = cand;
	kid->device = device;
	kid->cmd = -1;
	kid->warm = 0;
	kid->since = kj__now_s();
	if (ops->started)
		ops->started(ctx, cand, pid);
	return 0;
}

/* Fork a warm child on device into slot: 0, or -1 (nothing started; the
 * slot waits for an attempt of its own). */
static int start_warm(const struct kj_eval_pool *p, const struct kj_eval_pool_ops *ops,
		      void *ctx, const sigset_t *start_mask, struct kid *kid, int device)
{
	char why[128];
	int fds[2], cmd[2];
	pid_t pid, me = getpid();

	if (result_pipe(fds, why, sizeof(why)) < 0)
		return -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, cmd) < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		close(cmd[0]);
		warm_child(p, ops, ctx, me, start_mask, fds[1], cmd[1], p->devices[device]);
	}
	close(fds[1]);
	close(cmd[1]);
	if (pid < 0) {
		close(fds[0]);
		close(cmd[0]);
		return -1;
	}
	kid->pid = pid;
	kid->fd = fds[0];
	kid->cmd = cmd[0];
	kid->warm = 1;
	kid->ready = 0;
	kid->device = device;
	kid->since = kj__now_s();
	return 0;
}

/* Give cand to the warm child in kid: 0, or -1 when it is gone (the
 * socket refused it; the child is killed and reaped, its slot free). */
static int give(const struct kj_eval_pool_ops *ops, void *ctx, struct kid *kid, size_t cand)
{
	ssize_t n;

	do
		n = send(kid->cmd, &cand, sizeof(cand), MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	close(kid->cmd);
	kid->cmd = -1;
	if (n != (ssize_t)sizeof(cand)) {
		kill(kid->pid, SIGKILL);
		while (waitpid(kid->pid, NULL, 0) < 0 && errno == EINTR)
			;
		close(kid->fd);
		kid->pid = 0;
		return -1;
	}
	kid->warm = 0;
	kid->cand = cand;
	if (ops->started)
		ops->started(ctx, cand, kid->pid);
	return 0;
}

/* Retire a waiting warm child: it ends of itself (reaped as any). */
static void retire(struct kid *kid)
{
	if (kid->cmd >= 0) {
		close(kid->cmd);
		kid->cmd = -1;
	}
}

int kj_eval_pool_run(const struct kj_eval_pool *p, const struct kj_eval_pool_ops *ops,
		     void *ctx, struct kj_error *err)
{
	struct kid *kids = calloc((size_t)(p->jobs > 0 ? p->jobs : 1), sizeof(*kids));
	int *load = calloc((size_t)(p->n_devices > 0 ? p->n_devices : 1), sizeof(*load));
	int *busy = calloc((size_t)(p->n_devices > 0 ? p->n_devices : 1), sizeof(*busy));
	struct sigaction sa, old_chld;
	sigset_t chld, start_mask, wait_mask;
	int running = 0, working = 0, stopped = 0, more = 1, idle, k;
	int warm_on = ops->prestart != NULL;
	double idle_s = p->warm_idle_s > 0 ? p->warm_idle_s : 600, backoff_until = 0;

	if (!kids || !load || !busy) {
		free(kids);
		free(load);
		free(busy);
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	for (k = 0; k < p->jobs; k++)
		kids[k].cmd = -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_child;
	sa.sa_flags = SA_NOCLDSTOP;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, &old_chld);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &start_mask);
	wait_mask = start_mask;
	sigdelset(&wait_mask, SIGCHLD);
	while ((more || running > 0) && !*p->stop && !stopped) {
		struct kj_eval_result r;
		int status, device, slot;
		pid_t pid;
		size_t cand;
		double now;

		/* Fill: each attempt to a waiting warm child, else a fresh
		 * child in a free slot. */
		idle = 0;
		while (more && working < p->jobs && !*p->stop && !stopped) {
			int got, w = pick_warm(kids, p->jobs, busy);

			slot = pick(kids, p->jobs, load, p->n_devices, &device);
			if (w < 0 && slot < 0)
				break;
			got = ops->next(ctx, &cand);
			if (got < 0) {
				idle = 1;
				break;
			}
			if (got == 0) {
				more = 0;
				break;
			}
			if (w >= 0) {
				device = kids[w].device;
				if (give(ops, ctx, &kids[w], cand) == 0) {
					busy[device]++;
					working++;
					continue;
				}
				/* It was gone: its slot is free, for a fresh one. */
				load[device]--;
				running--;
				slot = pick(kids, p->jobs, load, p->n_devices, &device);
			}
			if (start(p, ops, ctx, &start_mask, &kids[slot], cand, device) < 0) {
				stopped = 1;
				break;
			}
			load[device]++;
			busy[device]++;
			running++;
			working++;
		}
		now = kj__now_s();
		/* Retire the warm children: all when no more will come, one
		 * that waited too long; the free slots get fresh ones. */
		for (k = 0; k < p->jobs; k++)
			if (kids[k].pid && kids[k].warm && kids[k].cmd >= 0 &&
			    (!more || now - kids[k].since > idle_s))
				retire(&kids[k]);
		while (warm_on && more && !stopped && !*p->stop && running < p->jobs &&
		       now >= backoff_until) {
			slot = pick(kids, p->jobs, load, p->n_devices, &device);
			if (slot < 0 || start_warm(p, ops, ctx, &start_mask, &kids[slot], device) < 0)
				break;
			load[device]++;
			running++;
		}
		if (ops->tick)
			ops->tick(ctx);
		if (running == 0 && !idle)
			break;
		pid = running ? waitpid(-1, &status, WNOHANG) : 0;
		if (pid == 0) {
			/* None has ended: sleep until one does (SIGCHLD), a
			 * signal stops the batch, or the next second (a tenth
			 * of one while next() waits for work to come). */
			struct timespec tick = { idle ? 0 : 1, idle ? 100000000L : 0 };

			ppoll(NULL, 0, &tick, &wait_mask);
			continue;
		}
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (k = 0; k < p->jobs; k++) {
			int whole;

			if (kids[k].pid != pid)
				continue;
			load[kids[k].device]--;
			running--;
			kids[k].pid = 0;
			if (kids[k].warm) {
				/* Nothing was asked of it.  Ended unasked, and
				 * soon: its own failure; the next waits. */
				if (kids[k].cmd >= 0 && kj__now_s() - kids[k].since < WARM_QUICK_S)
					backoff_until = kj__now_s() + WARM_BACKOFF_S;
				retire(&kids[k]);
				close(kids[k].fd);
				continue;
			}
			whole = read_result(kids[k].fd, &r);
			close(kids[k].fd);
			busy[kids[k].device]--;
			working--;
			if (ops->finished(ctx, kids[k].cand, whole ? &r : NULL, status))
				stopped = 1;
		}
	}
	sigprocmask(SIG_SETMASK, &start_mask, NULL);
	sigaction(SIGCHLD, &old_chld, NULL);
	stopped |= *p->stop != 0;
	for (k = 0; k < p->jobs; k++)
		if (kids[k].pid > 0 && (stopped || kids[k].warm))
			kill(kids[k].pid, kids[k].warm ? SIGKILL : SIGTERM);
	for (k = 0; k < p->jobs; k++)
		if (kids[k].pid > 0 && (stopped || kids[k].warm)) {
			while (waitpid(kids[k].pid, NULL, 0) < 0 && errno == EINTR)
				;
			close(kids[k].fd);
			retire(&kids[k]);
		}
	free(kids);
	free(load);
	free(busy);
	return stopped ? KJ_EINTR : KJ_OK;
}
