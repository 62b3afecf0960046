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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kjudge/eval.h"
#include "base/internal.h"

_Static_assert(sizeof(struct kj_eval_result) <= PIPE_BUF,
	       "a result must be written to a pipe in one atomic write");

struct kid {
	pid_t pid;              /* 0: a free slot */
	int fd;                 /* its result's pipe */
	size_t cand;
	int device;
};

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

/* The child: judge one attempt, hand the result back whole, end. */
static void child(const struct kj_eval_pool_ops *ops, void *ctx, pid_t parent,
		  const sigset_t *start_mask, int fd, size_t cand, const char *device)
{
	struct kj_eval_result r;
	const char *p = (const char *)&r;
	size_t left = sizeof(r);

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != parent)
		_exit(3);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	sigprocmask(SIG_SETMASK, start_mask, NULL);
	memset(&r, 0, sizeof(r));
	ops->judge(ctx, cand, device, &r);
	r.magic = KJ_EVAL_RESULT_MAGIC;
	r.size = (uint32_t)sizeof(r);
	while (left > 0) {
		ssize_t n = write(fd, p, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(4);
		p += n;
		left -= (size_t)n;
	}
	_exit(r.code == KJ_OK ? 0 : 1);
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

/* Start cand in slot: 0, or -1 after start_failed(). */
static int start(const struct kj_eval_pool *p, const struct kj_eval_pool_ops *ops, void *ctx,
		 const sigset_t *start_mask, struct kid *kid, size_t cand, int device)
{
	char why[128];
	int fds[2];
	pid_t pid, me = getpid();

	if (pipe2(fds, O_CLOEXEC) < 0) {
		snprintf(why, sizeof(why), "pipe: %s", strerror(errno));
		ops->start_failed(ctx, cand, why);
		return -1;
	}
	if (fcntl(fds[0], F_SETFL, O_NONBLOCK) < 0) {
		snprintf(why, sizeof(why), "pipe: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
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
	if (ops->started)
		ops->started(ctx, cand, pid);
	return 0;
}

int kj_eval_pool_run(const struct kj_eval_pool *p, const struct kj_eval_pool_ops *ops,
		     void *ctx, struct kj_error *err)
{
	struct kid *kids = calloc((size_t)(p->jobs > 0 ? p->jobs : 1), sizeof(*kids));
	int *load = calloc((size_t)(p->n_devices > 0 ? p->n_devices : 1), sizeof(*load));
	struct sigaction sa, old_chld;
	sigset_t chld, start_mask, wait_mask;
	int running = 0, stopped = 0, more = 1, idle, k;

	if (!kids || !load) {
		free(kids);
		free(load);
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
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

		/* Fill the free slots. */
		idle = 0;
		while (more && running < p->jobs && !*p->stop && !stopped) {
			int got;

			slot = pick(kids, p->jobs, load, p->n_devices, &device);
			got = ops->next(ctx, &cand);
			if (got < 0) {
				idle = 1;
				break;
			}
			if (got == 0) {
				more = 0;
				break;
			}
			if (start(p, ops, ctx, &start_mask, &kids[slot], cand, device) < 0) {
				stopped = 1;
				break;
			}
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
			whole = read_result(kids[k].fd, &r);
			close(kids[k].fd);
			load[kids[k].device]--;
			kids[k].pid = 0;
			running--;
			if (ops->finished(ctx, kids[k].cand, whole ? &r : NULL, status))
				stopped = 1;
		}
	}
	sigprocmask(SIG_SETMASK, &start_mask, NULL);
	sigaction(SIGCHLD, &old_chld, NULL);
	stopped |= *p->stop != 0;
	if (stopped) {
		for (k = 0; k < p->jobs; k++)
			if (kids[k].pid > 0)
				kill(kids[k].pid, SIGTERM);
		for (k = 0; k < p->jobs; k++)
			if (kids[k].pid > 0) {
				while (waitpid(kids[k].pid, NULL, 0) < 0 && errno == EINTR)
					;
				close(kids[k].fd);
			}
	}
	free(kids);
	free(load);
	return stopped ? KJ_EINTR : KJ_OK;
}
