/*
 * freeze.c - stopping every process of a worker while the other side of an
 * attempt is timed (see kj_proc_freeze in kjudge/proc.h).
 *
 * A candidate can start processes at import that spin while the reference
 * is timed, and slow it down (a reference timed slower makes any candidate
 * look faster).  The judge stops the worker's whole process group with
 * SIGSTOP and, since a process can leave the group (setsid), also every
 * process of the worker's PID namespace: each worker leads one (the
 * sandbox, or without it the spawn core's PID namespace), and
 * /proc/PID/ns/pid tells which processes are in it.  A worker without a
 * namespace of its own (a machine that refuses them) is stopped by its
 * group alone.  SIGSTOP cannot be caught, blocked or ignored, so a stopped
 * process runs nothing until SIGCONT; work it left queued on a GPU is not
 * stopped (that would need the device's own scheduling).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kjudge/proc.h"
#include "base/internal.h"

/* The PID namespace of pid, as "pid:[N]"; -1 when unreadable. */
static int pidns_of(pid_t pid, char *buf, size_t size)
{
	char p[64];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/%d/ns/pid", (int)pid);
	n = readlink(p, buf, size - 1);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* The state letter of pid ('T' stopped), or 0. */
static char state_of(pid_t pid)
{
	char p[64], buf[512], *rp;
	int fd;
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' ? rp[2] : 0;
}

/* Signal every process in the namespace ns (not the judge's own); with
 * wait, until each is stopped.  Returns how many are not (yet) stopped. */
static int signal_ns(const char *ns, int sig, int wait_stopped)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t self = getpid();
	int left = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char other[96];
		pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);

		if (pid <= 0 || pid == self || pidns_of(pid, other, sizeof(other)) < 0 ||
		    strcmp(other, ns) != 0)
			continue;
		if (!wait_stopped)
			kill(pid, sig);
		else if (state_of(pid) != 'T' && state_of(pid) != 't' && state_of(pid) != 'Z' &&
			 state_of(pid) != 0)
			left++;
	}
	closedir(d);
	return left;
}

int kj_proc_freeze(struct kj_proc *p, int frozen, struct kj_error *err)
{
	int sig = frozen ? SIGSTOP : SIGCONT, rounds;
	char ns[96], self_ns[96];
	int own_ns;

	if (!p->pid || p->reaped)
		return KJ_OK;
	/* The worker's namespace, unless it shares the judge's. */
	own_ns = pidns_of(p->pid, ns, sizeof(ns)) == 0 &&
		 pidns_of(getpid(), self_ns, sizeof(self_ns)) == 0 && strcmp(ns, self_ns) != 0;
	if (kill(-p->pid, sig) < 0 && errno != ESRCH)
		return kj_error_set(err, KJ_EIO, "cannot %s the worker's processes: %s",
				    frozen ? "stop" : "continue", strerror(errno));
	if (own_ns)
		signal_ns(ns, sig, 0);
	if (!frozen || !own_ns)
		return KJ_OK;
	/* SIGSTOP is delivered asynchronously: wait until it took. */
	for (rounds = 0; rounds < 200; rounds++) {
		struct timespec ts = { 0, 5 * 1000 * 1000 };

		if (signal_ns(ns, sig, 1) == 0)
			return KJ_OK;
		signal_ns(ns, sig, 0); /* processes that appeared meanwhile */
		nanosleep(&ts, NULL);
	}
	return KJ_OK;
}
