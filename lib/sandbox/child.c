/*
 * child.c - the new process's side of a start (child.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/child.h"
#include "sandbox/sandbox_internal.h"

/* Sources are lifted to this descriptor or above before being placed, so
 * that placing one never closes another still to be placed. */
#define LIFT 16

void kj__child_fail(int fd, const char *step, int whose)
{
	struct kj__child_failure f;
	size_t i;

	memset(&f, 0, sizeof(f));
	f.err = errno;
	f.whose = whose;
	for (i = 0; step && step[i] && i + 1 < sizeof(f.step); i++)
		f.step[i] = step[i];
	if (write(fd, &f, sizeof(f)) < 0) {
		/* nothing more can be said */
	}
	_exit(127);
}

/*
 * Close every descriptor from `first` up.  close_range(2) does it in one
 * call; on a kernel without it (before 5.9) each one up to RLIMIT_NOFILE's
 * hard limit is closed, which is every descriptor the process can hold
 * unless that limit was lowered below an open one (2^20, the kernel's
 * default fs.nr_open, where the limit is infinite).
 */
static void close_from(int first)
{
	struct rlimit rl;
	long fd, max = 1L << 20;

#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)first, ~0u, 0) == 0)
		return;
#endif
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY)
		max = (long)rl.rlim_max;
	for (fd = first; fd < max; fd++)
		close((int)fd);
}

/*
 * fd 0 /dev/null; 1 and 2 the capture pipes or /dev/null; 3 the protocol
 * socket when there is one; the exec-error pipe next, close-on-exec;
 * nothing else.  *ep follows the exec-error pipe as it moves.
 */
static int place_fds(const struct kj__child_args *a, int *ep)
{
	int src[4], n = a->proto >= 0 ? 4 : 3, i, e;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null < 0)
		return -1;
	src[0] = null;
	src[1] = a->out >= 0 ? a->out : null;
	src[2] = a->err >= 0 ? a->err : null;
	src[3] = a->proto;
	if ((e = fcntl(*ep, F_DUPFD_CLOEXEC, LIFT)) < 0)
		return -1;
	*ep = e;
	for (i = 0; i < n; i++)
		if ((src[i] = fcntl(src[i], F_DUPFD_CLOEXEC, LIFT)) < 0)
			return -1;
	/* dup2 clears close-on-exec on the places. */
	for (i = 0; i < n; i++)
		if (dup2(src[i], i) < 0)
			return -1;
	if (dup3(e, n, O_CLOEXEC) < 0)
		return -1;
	*ep = n;
	close_from(n + 1);
	return 0;
}

/* Whether the judge's end of the sync socket is still open (a template's
 * child, after its go byte and its death signal). */
static int judge_there(int sync)
{
	struct pollfd p = { sync, POLLIN, 0 };
	char c;

	if (poll(&p, 1, 0) < 0)
		return 0;
	if (!(p.revents & (POLLIN | POLLHUP | POLLERR)))
		return 1;
	/* Readable: more bytes (never sent) or end of file. */
	return recv(sync, &c, 1, MSG_DONTWAIT | MSG_PEEK) > 0;
}

int kj__child_start(const struct kj__child_args *a)
{
	const char *step = NULL;
	int ep = a->errpipe, i;
	sigset_t none;
	char go;

	/* The judge's death kills this process, whenever and however it
	 * comes; its end of the sync socket must be closed first, or the
	 * check below would wait on ourselves. */
	for (i = 0; i < 5; i++)
		if (a->parent_ends[i] >= 0)
			close(a->parent_ends[i]);
	if (!a->adopted && prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		kj__child_fail(ep, "set the parent-death signal", KJ__STEP_SPAWN);
	setpgid(0, 0);
	/* A judge that died before the line above never sends the go byte:
	 * its end of the socket closes, and the read sees end of file. */
	if (read(a->sync, &go, 1) != 1)
		_exit(127);
	/* A template's child is the judge's by now (the template's own child,
	 * its parent, has exited); a judge that died since the go byte has
	 * closed its end. */
	if (a->adopted) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
			kj__child_fail(ep, "set the parent-death signal", KJ__STEP_SPAWN);
		if (!judge_there(a->sync))
			_exit(127);
	}
	if (place_fds(a, &ep) < 0)
		kj__child_fail(ep, "set up the descriptors", KJ__STEP_SPAWN);
	/* A PID namespace with the judge's /proc would show the program the
	 * judge's processes under its own pids (it is 1, and /proc/1 is
	 * someone else): CUDA's driver refuses to start on that (error 304).
	 * So the namespace gets a /proc of its own, in a mount namespace of
	 * its own whose mounts do not propagate back; nothing else changes. */
	if (a->own_proc &&
	    (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	     mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0))
		kj__child_fail(ep, "mount a /proc of its own", KJ__STEP_NAMESPACE);
	if (a->sb && kj__sandbox_child(a->sb, &step) < 0)
		kj__child_fail(ep, step, KJ__STEP_SANDBOX);
	/* Default dispositions and an empty mask for the program (every
	 * signal has been blocked since before fork). */
	for (i = 1; i < NSIG; i++)
		signal(i, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (a->cwd && chdir(a->cwd) < 0)
		kj__child_fail(ep, "change to the working directory", KJ__STEP_SPAWN);
	return ep;
}
