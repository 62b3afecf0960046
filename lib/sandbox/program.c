/*
 * program.c - one program run to its end: a build command, a spec's
 * executable, a command doctor asks or one of Slurm's commands, in the
 * sandbox (or as a plain process), with a deadline and bounded captures.
 *
 * Theory of operation.
 *
 *   judge                                   program (PID 1 of its namespace)
 *   -----                                   -------------------------------
 *   kj__spawn (lib/sandbox/spawn.h)  ---->  sandbox set up, execve
 *   pidfd of the program (pidfd_open)        .
 *   out  <== pipe ==                        fd 1
 *   err  <== pipe ==                        fd 2
 *   poll(out, err, pidfd) until the program has exited and both pipes
 *   are closed (or 0.2 s after its exit: a descendant that keeps them open
 *   is not waited for), the deadline passes, a limited stream overflows,
 *   or the signal guard fires
 *   kill(-pgid, SIGKILL), the cgroup's counters read, the group released,
 *   wait4 for the status and the CPU time
 *
 * The exit is seen on the pidfd without reaping (the pid, which is also the
 * group's id, cannot be reused before wait4), so the group can be killed
 * safely after.  The wall time is taken from just before kj__spawn to the
 * pidfd's report, on the judge's monotonic clock, so it includes the
 * sandbox's start (the timing reports that floor, measured with /bin/true in
 * the same sandbox); where pidfd_open is refused, the exit is polled every
 * 2 ms and the time is that coarse.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kjudge/proc.h"
#include "sandbox/program.h"
#include "sandbox/spawn.h"
#include "base/internal.h"

void kj__program_init(struct kj__run_res *r, size_t out_cap, enum kj__sink_mode out_mode,
		      size_t err_cap, enum kj__sink_mode err_mode)
{
	memset(r, 0, sizeof(*r));
	r->out.cap = out_cap;
	r->out.limit = out_mode == KJ__SINK_LIMIT;
	r->out.keep_tail = out_mode == KJ__SINK_TAIL;
	r->err.cap = err_cap;
	r->err.limit = err_mode == KJ__SINK_LIMIT;
	r->err.keep_tail = err_mode == KJ__SINK_TAIL;
}

void kj__program_release(struct kj__run_res *r)
{
	free(r->out.buf);
	free(r->err.buf);
	r->out.buf = r->err.buf = NULL;
}

/* Take n bytes into the sink.  Returns 1 when a limited sink overflows. */
static int sink_take(struct kj__sink *k, const char *p, size_t n)
{
	k->total += (long long)n;
	if (!k->keep_tail) {
		size_t room = k->cap - k->len;

		if (n > room) {
			memcpy(k->buf + k->len, p, room);
			k->len += room;
			k->buf[k->len] = '\0';
			if (k->limit)
				return k->over = 1;
			return 0;
		}
		memcpy(k->buf + k->len, p, n);
		k->len += n;
		k->buf[k->len] = '\0';
		return 0;
	}
	if (n >= k->cap) {
		memcpy(k->buf, p + n - k->cap, k->cap);
		k->len = k->cap;
	} else {
		if (k->len + n > k->cap) {
			size_t drop = k->len + n - k->cap;

			memmove(k->buf, k->buf + drop, k->len - drop);
			k->len -= drop;
		}
		memcpy(k->buf + k->len, p, n);
		k->len += n;
	}
	k->buf[k->len] = '\0';
	return 0;
}

/* Read what is there.  Returns 1 on an overflow, -1 at end of file. */
static int drain(int *fd, struct kj__sink *k)
{
	char tmp[65536];
	ssize_t n = read(*fd, tmp, sizeof(tmp));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0) {
		close(*fd);
		*fd = -1;
		return -1;
	}
	return sink_take(k, tmp, (size_t)n);
}

static int exited(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

static long long read_events(const char *dir, const char *file, const char *key)
{
	char p[700], buf[512], *s;
	int fd;
	ssize_t n;

	if (!dir[0] || snprintf(p, sizeof(p), "%s/%s", dir, file) >= (int)sizeof(p))
		return -1;
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	for (s = buf; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL) {
		size_t kl = strlen(key);

		if (!strncmp(s, key, kl) && s[kl] == ' ')
			return strtoll(s + kl + 1, NULL, 10);
	}
	return -1;
}

static void describe(struct kj__run_res *r)
{
	if (WIFEXITED(r->status))
		snprintf(r->how, sizeof(r->how), "exited with status %d", WEXITSTATUS(r->status));
	else if (WIFSIGNALED(r->status))
		snprintf(r->how, sizeof(r->how), "killed by signal %d (%s)", WTERMSIG(r->status),
			 strsignal(WTERMSIG(r->status)));
	else
		snprintf(r->how, sizeof(r->how), "ended with wait status %d", r->status);
}

int kj__program_run(const struct kj__run_req *q, struct kj__run_res *r, struct kj_error *err)
{
	struct kj_proc_link link;
	struct kj__spawn s;
	struct rusage ru;
	double t0, deadline, grace_end = 0, t_exit = 0;
	int fds[2], pidfd = -1, wake = kj__spawn_wake_fd(), rc;

	if (!(r->out.buf = malloc(r->out.cap + 1)) || !(r->err.buf = malloc(r->err.cap + 1)))
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	r->out.buf[0] = r->err.buf[0] = '\0';
	memset(&s, 0, sizeof(s));
	memset(&link, 0, sizeof(link));
	s.argv = q->argv;
	s.envp = q->envp;
	s.cwd = q->cwd;
	s.sb = q->sb;
	s.flags = KJ__SPAWN_OUT | KJ__SPAWN_ERR |
		  (!q->sb && (q->flags & KJ__PROGRAM_PIDNS) ? KJ__SPAWN_PIDNS : 0);
	s.link = &link;
	if (q->flags & KJ__PROGRAM_OOM_FIRST)
		s.oom_score_adj = KJ_PROC_WORKER_OOM_ADJ;
	/* The clock starts before the start: kj__spawn returns once execve
	 * has succeeded, by when a short program may have run to its end. */
	t0 = kj__now_s();
	if ((rc = kj__spawn(&s, err)) != KJ_OK) {
		if (rc == KJ_ESPAWN && s.exec_errno) {
			r->exec_errno = s.exec_errno;
			return KJ_OK;
		}
		return rc;
	}
	r->started = 1;
	deadline = t0 + q->timeout_s;
	pidfd = (int)syscall(SYS_pidfd_open, s.pid, 0);
	fds[0] = s.out;
	fds[1] = s.err;
	for (;;) {
		struct pollfd p[4];
		struct kj__sink *which[4];
		int n = 0, i, slice;
		double now = kj__now_s();

		if (!t_exit && exited(s.pid)) {
			t_exit = now;
			grace_end = now + 0.2;
		}
		if (t_exit && ((fds[0] < 0 && fds[1] < 0) || now >= grace_end))
			break;
		if (now >= deadline) {
			r->timed_out = 1;
			break;
		}
		if (kj_proc_interrupted())
			break;
		for (i = 0; i < 2; i++)
			if (fds[i] >= 0) {
				p[n].fd = fds[i];
				p[n].events = POLLIN;
				p[n].revents = 0;
				which[n++] = i ? &r->err : &r->out;
			}
		if (pidfd >= 0 && !t_exit) {
			p[n].fd = pidfd;
			p[n].events = POLLIN;
			p[n].revents = 0;
			which[n++] = NULL;
		}
		if (wake >= 0) {
			p[n].fd = wake;
			p[n].events = POLLIN;
			p[n].revents = 0;
			which[n++] = NULL;
		}
		slice = (int)((deadline - now) * 1000) + 1;
		if (t_exit && slice > 20)
			slice = 20;
		if (pidfd < 0 && !t_exit && slice > 2)
			slice = 2;
		if (poll(p, (nfds_t)n, slice) < 0 && errno != EINTR)
			break;
		for (i = 0; i < n; i++) {
			int d;

			if (!p[i].revents || !which[i])
				continue;
			d = drain(which[i] == &r->out ? &fds[0] : &fds[1], which[i]);
			if (d > 0)
				goto stop;
		}
		if (pidfd >= 0 && !t_exit && exited(s.pid))
			t_exit = kj__now_s(), grace_end = t_exit + 0.2;
	}
stop:
	if (!t_exit)
		t_exit = kj__now_s();
	r->wall_s = t_exit - t0;
	kill(s.pid, SIGKILL);
	kill(-s.pid, SIGKILL);
	if (s.cg.version) {
		r->oom_killed = kj_cgroup_oom_killed(&s.cg);
		r->pids_max = read_events(s.cg.version == 1 ? s.cg.pids : s.cg.mem, "pids.events",
					  "max") > 0;
	}
	kj__spawn_unlink(&link);
	memset(&ru, 0, sizeof(ru));
	while (wait4(s.pid, &r->status, 0, &ru) < 0 && errno == EINTR)
		;
	kj_cgroup_release(&s.cg);
	r->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		   (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	describe(r);
	if (pidfd >= 0)
		close(pidfd);
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	if (kj_proc_interrupted())
		return kj_error_set(err, KJ_EINTR, "interrupted");
	return KJ_OK;
}

int kj__program_outcome(const char *name, double timeout_s, const struct kj__run_res *r,
			char *buf, size_t size)
{
	if (!r->started)
		snprintf(buf, size, "cannot run %s: %s", name,
			 r->exec_errno ? strerror(r->exec_errno) : "it could not be started");
	else if (r->timed_out)
		snprintf(buf, size, "%s did not end within %g s (killed)", name, timeout_s);
	else if (r->out.over || r->err.over)
		snprintf(buf, size, "%s printed more than %zu bytes (stopped)", name,
			 r->out.over ? r->out.cap : r->err.cap);
	else
		snprintf(buf, size, "%s %s", name, r->how);
	return r->started && !r->timed_out && !r->out.over && !r->err.over &&
	       WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0 ? 0 : -1;
}
