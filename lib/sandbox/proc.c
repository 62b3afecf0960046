/*
 * proc.c - worker processes (see proc.h for the theory of operation).
 */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kjudge/fileio.h"
#include "kjudge/proc.h"
#include "sandbox/spawn.h"
#include "base/json.h"
#include "base/internal.h"
#include "base/vec.h"

/*
 * Orphans: a worker's descendant that left its process group (setsid, a
 * daemon) escapes kill(-pgid).  Where the worker is PID 1 of a namespace of
 * its own (KJ_ISOLATION_PIDNS, _SANDBOX) such a descendant dies with it;
 * where the machine refused namespaces the judge's being a child subreaper
 * catches it: it is re-parented to the judge when its parent dies, and
 * after a worker is killed every child of the judge that is not a live
 * process group of the spawn core is killed and reaped.
 */
static void sweep_orphans(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t self = getpid();

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		char path[64], buf[512], *rp;
		pid_t pid = (pid_t)strtol(e->d_name, NULL, 10), ppid;
		int fd;
		ssize_t n;

		if (pid <= 0 || kj__spawn_is_live(pid))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* "pid (comm) state ppid ...": comm may hold anything, so the
		 * fields start after the last ')'. */
		rp = strrchr(buf, ')');
		if (!rp || sscanf(rp + 1, " %*c %d", &ppid) != 1 || ppid != self)
			continue;
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	closedir(d);
}

void kj_proc_init(struct kj_proc *p)
{
	memset(p, 0, sizeof(*p));
	p->proto = p->out = p->err = -1;
	p->next_nonce = 1;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/*
 * Every worker goes through the spawn core (spawn.h): its own process
 * group, the death signal, descriptors 0-3 and nothing else, and its own
 * PID namespace where the machine allows one (the sandbox always has one).
 */
static int spawn(struct kj_proc *p, char *const argv[], char *const envp[],
		 const char *cwd, const struct kj_sandbox *sb, struct kj_error *err)
{
	struct kj__spawn s;
	int rc;

	kj_proc_init(p);
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	memset(&s, 0, sizeof(s));
	s.argv = argv;
	s.envp = envp;
	s.cwd = cwd;
	s.sb = sb;
	s.flags = KJ__SPAWN_OUT | KJ__SPAWN_ERR | KJ__SPAWN_PROTO | KJ__SPAWN_PIDNS;
	s.link = &p->link;
	/* The kernel's OOM killer takes a worker before the judge. */
	s.oom_score_adj = KJ_PROC_WORKER_OOM_ADJ;
	rc = kj__spawn(&s, err);
	if (rc != KJ_OK)
		return rc;
	p->pid = s.pid;
	p->proto = s.proto;
	p->out = s.out;
	p->err = s.err;
	p->cg = s.cg;
	p->isolation = s.isolation;
	p->limits = s.limits;
	/* Nonces start at a random point, so that code in the worker cannot
	 * guess the next one from the previous requests alone. */
	if (getrandom(&p->next_nonce, sizeof(p->next_nonce), 0) !=
	    (ssize_t)sizeof(p->next_nonce))
		p->next_nonce = (uint64_t)kj__now_s() * 0x9e3779b97f4a7c15ull;
	fcntl(p->out, F_SETFL, O_NONBLOCK);
	fcntl(p->err, F_SETFL, O_NONBLOCK);
	fcntl(p->proto, F_SETFL, O_NONBLOCK);
	return KJ_OK;
}

int kj_proc_spawn(struct kj_proc *p, char *const argv[], char *const envp[],
		  const char *cwd, struct kj_error *err)
{
	return spawn(p, argv, envp, cwd, NULL, err);
}

int kj_proc_spawn_in(struct kj_proc *p, char *const argv[], char *const envp[],
		     const char *cwd, const struct kj_sandbox *sb,
		     struct kj_error *err)
{
	return spawn(p, argv, envp, cwd, sb, err);
}

/* What one read of a capture pipe takes: less than what is kept, so that
 * a read never replaces the whole tail at once. */
#define DRAIN_CHUNK 65536
_Static_assert(DRAIN_CHUNK < KJ_PROC_CAPTURE_MAX, "a read must fit in the kept tail");

/* Keep the last KJ_PROC_CAPTURE_MAX bytes of what a stream printed (n is at
 * most DRAIN_CHUNK): a failure's message shows the end of the request's
 * output (a traceback), not its beginning.  -1 when the buffer could not
 * be allocated: what was read is lost (counting it as dropped would charge
 * the worker with a flood it never made). */
static int keep_tail(struct kj_capture *c, const char *buf, size_t n)
{
	if (!c->data) {
		c->data = malloc(KJ_PROC_CAPTURE_MAX + 1);
		if (!c->data)
			return -1;
	}
	if (c->len + n > KJ_PROC_CAPTURE_MAX) {
		size_t keep = KJ_PROC_CAPTURE_MAX - n;

		memmove(c->data, c->data + c->len - keep, keep);
		c->dropped += c->len - keep;
		c->len = keep;
	}
	memcpy(c->data + c->len, buf, n);
	c->len += n;
	c->data[c->len] = '\0';
	return 0;
}

/*
 * Read what is there from a capture pipe; 0 at EOF, 1 if more may come, -1
 * when what was read could not be kept.
 * Stops as soon as the stream has printed more than `budget` bytes in the
 * current request (0: no budget), so that a flood is cut off at once rather
 * than after the judge has read all the worker can write.
 */
static int drain(int *fd, struct kj_capture *c, size_t budget)
{
	char buf[DRAIN_CHUNK];

	for (;;) {
		ssize_t n;

		if (budget && c->len + c->dropped > budget)
			return 1;
		n = read(*fd, buf, sizeof(buf));
		if (n > 0) {
			if (keep_tail(c, buf, (size_t)n) < 0)
				return -1;
			continue;
		}
		if (n == 0) {
			close_fd(fd);
			return 0;
		}
		if (errno == EINTR)
			continue;
		return 1; /* EAGAIN */
	}
}

/* Both capture pipes drained; 1 when a request with a budget printed past
 * it on either stream, -1 when output could not be kept (the judge's
 * failure: the verdict would lack its evidence), else 0. */
static int drain_both(struct kj_proc *p)
{
	size_t budget = p->output_limit ? p->budget : 0;
	int lost = 0;

	if (p->out >= 0)
		lost |= drain(&p->out, &p->cap_out, budget) < 0;
	if (p->err >= 0)
		lost |= drain(&p->err, &p->cap_err, budget) < 0;
	if (lost)
		return -1;
	return budget && (p->cap_out.len + p->cap_out.dropped > budget ||
			  p->cap_err.len + p->cap_err.dropped > budget);
}

/* A new request: its output is counted from nothing, with the budget of
 * the calls it says it makes. */
static void begin_request(struct kj_proc *p)
{
	size_t per_call = p->output_bytes ? p->output_bytes : KJ_PROC_CAPTURE_MAX;
	size_t calls = p->output_calls ? p->output_calls : 1;

	p->budget = per_call > SIZE_MAX / calls ? SIZE_MAX : per_call * calls;
	p->output_calls = 0;
	p->cap_out.len = p->cap_out.dropped = 0;
	p->cap_err.len = p->cap_err.dropped = 0;
	if (p->cap_out.data)
		p->cap_out.data[0] = '\0';
	if (p->cap_err.data)
		p->cap_err.data[0] = '\0';
}

/*
 * Whether the worker has exited, without reaping it: while it is a zombie
 * its pid, which is also its group's id, cannot be reused, so killing the
 * group afterwards cannot hit a stranger.
 */
static int exited(const struct kj_proc *p)
{
	siginfo_t si;

	if (!p->pid || p->reaped)
		return 1;
	memset(&si, 0, sizeof(si));
	return waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	       si.si_pid == p->pid;
}

int kj_proc_alive(const struct kj_proc *p)
{
	return !exited(p);
}

static void reap(struct kj_proc *p)
{
	struct rusage ru;
	pid_t r;

	if (!p->pid || p->reaped)
		return;
	do
		r = wait4(p->pid, &p->status, 0, &ru);
	while (r < 0 && errno == EINTR);
	if (r == p->pid) {
		p->reaped = 1;
		p->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
			   (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	}
}

void kj_proc_kill(struct kj_proc *p)
{
	if (!p->pid)
		return;
	/* The whole group: whatever the worker started goes with it (all of
	 * its namespace, when it has one); the leader is unlinked before it
	 * is reaped (spawn.h); then whatever left the group. */
	if (!p->reaped)
		kill(-p->pid, SIGKILL);
	kj__spawn_unlink(&p->link);
	reap(p);
	if (p->cg.version) {
		p->oom_killed |= kj_cgroup_oom_killed(&p->cg);
		kj_cgroup_release(&p->cg);
	}
	sweep_orphans();
}

void kj_proc_signal_kill(struct kj_proc *p)
{
	if (p->pid && !p->reaped)
		kill(-p->pid, SIGKILL);
}

char *kj_proc_describe_exit(const struct kj_proc *p, char *buf, size_t size)
{
	if (!p->reaped)
		snprintf(buf, size, "still running");
	else if (WIFEXITED(p->status))
		snprintf(buf, size, "exited with status %d", WEXITSTATUS(p->status));
	else if (WIFSIGNALED(p->status))
		snprintf(buf, size, "killed by signal %d (%s)", WTERMSIG(p->status),
			 strsignal(WTERMSIG(p->status)));
	else
		snprintf(buf, size, "ended with wait status %d", p->status);
	return buf;
}

/*
 * Milliseconds to wait in one poll until the deadline: at most a second, so
 * that the int poll takes cannot overflow whatever the timeout (the wake
 * descriptor, not this slice, is what makes an interruption prompt).  0
 * when the deadline has passed.
 */
static int slice_ms(double deadline)
{
	double left = (deadline - kj__now_s()) * 1000;

	if (!(left > 0))
		return 0;
	return left > 1000 ? 1000 : (int)left + 1;
}

static int write_all(int fd, const char *s, size_t len, double deadline)
{
	while (len) {
		if (kj_proc_interrupted())
			return KJ_EINTR;
		/* send, not write: a worker that has gone must not raise SIGPIPE
		 * in the judge. */
		ssize_t n = send(fd, s, len, MSG_NOSIGNAL);

		if (n > 0) {
			s += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			struct pollfd pf[2] = { { fd, POLLOUT, 0 },
						{ kj__spawn_wake_fd(), POLLIN, 0 } };
			int ms = slice_ms(deadline);

			if (ms <= 0)
				return KJ_ETIMEDOUT;
			poll(pf, pf[1].fd >= 0 ? 2 : 1, ms);
			continue;
		}
		return KJ_EWORKER;
	}
	return KJ_OK;
}

/* The descriptors of the last reply taken, or of every line read. */
static void close_reply_fds(struct kj_proc *p)
{
	size_t i;

	for (i = 0; i < p->n_reply_fds; i++)
		close(p->reply_fds[i]);
	free(p->reply_fds);
	p->reply_fds = NULL;
	p->n_reply_fds = 0;
}

static void close_all_fds(struct kj_proc *p)
{
	size_t i;

	close_reply_fds(p);
	for (i = 0; i < p->n_fds; i++)
		close(p->fds[i].fd);
	free(p->fds);
	p->fds = NULL;
	p->n_fds = p->cap_fds = 0;
}

/*
 * The descriptors that came with the first len + 1 bytes of the line buffer
 * (a line and its newline, about to be dropped): kept as the reply's when
 * `keep`, else closed; the others' offsets move down.  Returns KJ_OK or
 * KJ_ENOMEM (the descriptors are then closed).
 */
static int line_fds(struct kj_proc *p, size_t len, int keep)
{
	size_t i, j = 0, mine = 0;
	int rc = KJ_OK;

	for (i = 0; i < p->n_fds; i++)
		mine += p->fds[i].at <= len;
	if (keep) {
		close_reply_fds(p);
		if (mine && !(p->reply_fds = malloc(mine * sizeof(int))))
			rc = KJ_ENOMEM;
	}
	for (i = 0; i < p->n_fds; i++) {
		if (p->fds[i].at > len) {
			p->fds[j] = p->fds[i];
			p->fds[j++].at -= len + 1;
		} else if (keep && p->reply_fds) {
			p->reply_fds[p->n_reply_fds++] = p->fds[i].fd;
		} else {
			close(p->fds[i].fd);
		}
	}
	p->n_fds = j;
	return rc;
}

/*
 * What a line that broke the protocol began with, for the message: at most
 * 32 bytes, printable ASCII as it is and every other byte as \xNN.
 */
static void preview(const char *s, size_t len, char *out, size_t cap)
{
	size_t i, o = 0;

	for (i = 0; i < len && i < 32 && o + 5 < cap; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
	}
	if (i < len && o + 4 < cap)
		o += (size_t)snprintf(out + o, cap - o, "...");
	out[o] = '\0';
}

/* Every byte on the channel but the reply is a breach: say which. */
static int breach(struct kj_proc *p, const char *s, size_t len, const char *what)
{
	char text[200];

	preview(s, len, text, sizeof(text));
	snprintf(p->breach, sizeof(p->breach), "%s: '%s'", what, text);
	return KJ_EPROTOCOL;
}

/*
 * Take the reply out of p->line: *out gets it (a JSON object whose "nonce"
 * equals `nonce`, the whole of a line), or NULL while it is still coming.
 * The worker writes nothing on the channel but its replies, one line each,
 * and closes the channel to everything it starts; so any other byte there
 * was written by the code under test (a forged reply, a line with another
 * nonce, a frame of some other protocol, a partial line the reply would be
 * glued to) and the request fails at once with KJ_EPROTOCOL (p->breach
 * says what came), rather than waiting for a reply that can no longer be
 * read.  KJ_ENOMEM when a line could not be parsed or its descriptors kept
 * for want of memory: it may have been the reply, so it must not be charged
 * to the worker.
 */
static int take_reply(struct kj_proc *p, uint64_t nonce, json_t **out)
{
	char *nl;

	*out = NULL;
	nl = p->line_len ? memchr(p->line, '\n', p->line_len) : NULL;
	if (p->line_len && p->line[0] != '{')
		return breach(p, p->line, nl ? (size_t)(nl - p->line) : p->line_len,
			      "bytes that are not a reply");
	if (nl) {
		size_t len = (size_t)(nl - p->line);
		int oom;
		json_t *o = kj__json_loadb(p->line, len, 0, NULL, &oom);
		json_t *n = o ? json_object_get(o, "nonce") : NULL;
		int ours = json_is_object(o) && json_is_integer(n) &&
			   (uint64_t)json_integer_value(n) == nonce;

		if (oom || (ours && line_fds(p, len, 1) != KJ_OK)) {
			json_decref(o);
			return KJ_ENOMEM;
		}
		if (!ours) {
			json_decref(o);
			p->noise_lines++;
			return breach(p, p->line, len, o ? "a line that is not the reply to this "
						  "request" : "a line that is not JSON");
		}
		memmove(p->line, nl + 1, p->line_len - len - 1);
		p->line_len -= len + 1;
		*out = o;
	}
	return KJ_OK;
}

void kj_proc_take_fds(struct kj_proc *p, int **fds, size_t *n)
{
	*fds = p->reply_fds;
	*n = p->n_reply_fds;
	p->reply_fds = NULL;
	p->n_reply_fds = 0;
}

/* Keep the descriptors a message carried, at offset `at` of the line. */
static void keep_fds(struct kj_proc *p, struct msghdr *m, size_t at)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		size_t k, nfd;
		int fd;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < nfd; k++) {
			memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof(int));
			/* Over the cap the worker broke the protocol; under
			 * it a failed growth is the judge's own failure. */
			if (p->n_fds >= KJ_PROC_FDS_MAX ||
			    KJ__GROW(p->fds, p->cap_fds, p->n_fds + 1) != KJ_OK) {
				if (p->n_fds >= KJ_PROC_FDS_MAX)
					p->fds_over = 1;
				else
					p->fds_nomem = 1;
				close(fd);
				continue;
			}
			p->fds[p->n_fds].fd = fd;
			p->fds[p->n_fds++].at = at;
		}
	}
}

static int read_proto(struct kj_proc *p)
{
	for (;;) {
		ssize_t n;

		if (p->line_cap - p->line_len < 65536) {
			size_t cap = p->line_cap ? p->line_cap * 2 : 131072;

			if (cap > KJ_PROC_LINE_MAX + 65536)
				return KJ_EPROTOCOL;
			if (KJ__RESIZE(p->line, cap) != KJ_OK)
				return KJ_ENOMEM;
			p->line_cap = cap;
		}
		{
			/* Descriptors (SCM_RIGHTS) come with the bytes they were
			 * sent with: up to 253 a message, close-on-exec here. */
			union {
				struct cmsghdr align;
				char buf[CMSG_SPACE(253 * sizeof(int))];
			} ctl;
			struct iovec iov = { p->line + p->line_len, p->line_cap - p->line_len };
			struct msghdr m;

			memset(&m, 0, sizeof(m));
			m.msg_iov = &iov;
			m.msg_iovlen = 1;
			m.msg_control = ctl.buf;
			m.msg_controllen = sizeof(ctl.buf);
			n = recvmsg(p->proto, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
			/* A failed call leaves msg_controllen as it was: only a
			 * read that returned bytes carries descriptors (each
			 * message that has them has bytes). */
			if (n > 0) {
				keep_fds(p, &m, p->line_len);
				if (m.msg_flags & MSG_CTRUNC)
					p->fds_over = 1;
			}
		}
		if (n > 0) {
			p->line_len += (size_t)n;
			continue;
		}
		if (n == 0)
			return KJ_EWORKER;
		if (errno == EINTR)
			continue;
		return KJ_OK; /* EAGAIN */
	}
}

/*
 * A request failed: kill the group (a worker in an unknown state is never
 * reused), collect what it printed on the way out, and say what happened.
 */
static int fail_request(struct kj_proc *p, int rc, double timeout_s,
			struct kj_error *err)
{
	char how[96];
	int sig = kj_proc_interrupted(), d, stalled = p->link.stalled;

	/* Whatever went wrong after the guard fired is the guard's doing (it
	 * killed the worker): never a crash to charge to the worker.  One
	 * the watchdog stopped made no progress within its time. */
	if (sig)
		rc = KJ_EINTR;
	else if (stalled)
		rc = KJ_ETIMEDOUT;
	/* What it printed on the way out, within the budget: a flood that
	 * fills the pipes again is not read on.  Output that cannot be kept
	 * leaves the verdict without its evidence: the judge's failure,
	 * whatever the request's was. */
	d = drain_both(p);
	if (d > 0)
		p->output_over = 1;
	else if (d < 0 && rc != KJ_EINTR)
		rc = KJ_ENOMEM;
	kj_proc_kill(p);
	close_fd(&p->proto);
	switch (rc) {
	case KJ_ETIMEDOUT:
		if (stalled)
			return kj_error_set(err, rc, "no progress within %g s and a grace "
					    "period: the judge's watchdog stopped the worker",
					    timeout_s);
		return kj_error_set(err, rc, "no reply within %g s", timeout_s);
	case KJ_EWORKER:
		if (p->output_over)
			return kj_error_set(err, rc, "worker printed more than %zu bytes "
					    "on one stream in one request (%zu bytes per call) "
					    "and was stopped", p->budget,
					    p->output_bytes ? p->output_bytes
							    : (size_t)KJ_PROC_CAPTURE_MAX);
		return kj_error_set(err, rc, "worker %s",
				    kj_proc_describe_exit(p, how, sizeof(how)));
	case KJ_EPROTOCOL:
		if (p->breach[0])
			return kj_error_set(err, rc, "the worker's channel to the judge "
					    "carried %s (the code under test wrote to it)",
					    p->breach);
		return kj_error_set(err, rc, "worker sent a reply line longer "
				    "than %u bytes", KJ_PROC_LINE_MAX);
	case KJ_EINTR:
		return kj_error_set(err, rc, "interrupted by signal %d (%s)", sig,
				    strsignal(sig));
	default:
		return kj_error_set(err, rc, "%s", kj_strerror(rc));
	}
}

/* SCM_RIGHTS carries at most 253 descriptors a message (SCM_MAX_FD). */
#define FDS_PER_MSG 253

/*
 * The caller's descriptors for the worker, each batch with one byte of the
 * request's text (the worker takes them with the line those bytes are in);
 * *len is what is left to write after them.
 */
static int send_fds(struct kj_proc *p, const int *fds, size_t n, char *text, size_t *len)
{
	size_t off = 0;

	while (n) {
		size_t k = n < FDS_PER_MSG ? n : FDS_PER_MSG;
		union {
			char buf[CMSG_SPACE(FDS_PER_MSG * sizeof(int))];
			struct cmsghdr align;
		} u;
		struct iovec iov = { text + off, 1 };
		struct msghdr m;
		struct cmsghdr *cm;
		ssize_t w;

		if (*len == 0)
			return KJ_EINVAL; /* no byte left to carry them */
		memset(&m, 0, sizeof(m));
		memset(&u, 0, sizeof(u));
		m.msg_iov = &iov;
		m.msg_iovlen = 1;
		m.msg_control = u.buf;
		m.msg_controllen = CMSG_SPACE(k * sizeof(int));
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(k * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, k * sizeof(int));
		do
			w = sendmsg(p->proto, &m, MSG_NOSIGNAL);
		while (w < 0 && errno == EINTR);
		/* The socket is non-blocking; a request's first bytes always
		 * fit in an empty buffer (one request at a time). */
		if (w != 1)
			return KJ_EWORKER;
		fds += k;
		n -= k;
		off++;
		(*len)--;
	}
	return KJ_OK;
}

int kj_proc_send(struct kj_proc *p, json_t *req, double timeout_s,
		 uint64_t *nonce, struct kj_error *err)
{
	const int *fds = p->send_fds;
	size_t n_fds = p->n_send_fds, len, len0;
	char *text;
	int rc;

	p->send_fds = NULL;
	p->n_send_fds = 0;
	if (kj_proc_interrupted()) {
		json_decref(req);
		return fail_request(p, KJ_EINTR, timeout_s, err);
	}
	if (p->proto < 0) {
		json_decref(req);
		return kj_error_set(err, KJ_EWORKER, "worker is not running");
	}
	begin_request(p);
	kj__watchdog_arm(timeout_s);
	*nonce = p->next_nonce++ & 0x3fffffffffffffffull;
	/* A request without its nonce would never be answered in a way the
	 * wait accepts: not being able to add it is the judge's failure. */
	text = json_object_set_new(req, "nonce", json_integer((json_int_t)*nonce)) == 0
		       ? kj_json_text(req, JSON_COMPACT, NULL) : NULL;
	json_decref(req);
	if (!text)
		return kj_error_set(err, KJ_ENOMEM, "cannot encode a request (out of memory)");
	len = strlen(text);
	text[len] = '\n'; /* replaces the NUL; the length is passed explicitly */
	len0 = ++len;
	rc = send_fds(p, fds, n_fds, text, &len);
	if (rc == KJ_OK)
		rc = write_all(p->proto, text + (len0 - len), len, kj__now_s() + timeout_s);
	free(text);
	if (rc != KJ_OK)
		return fail_request(p, rc, timeout_s, err);
	return KJ_OK;
}

int kj_proc_answer(struct kj_proc *p, uint64_t nonce, json_t *msg, double timeout_s,
		   struct kj_error *err)
{
	char *text;
	size_t len;
	int rc;

	/* What came with the message is no reply's. */
	close_reply_fds(p);
	if (kj_proc_interrupted()) {
		json_decref(msg);
		return fail_request(p, KJ_EINTR, timeout_s, err);
	}
	if (p->proto < 0) {
		json_decref(msg);
		return kj_error_set(err, KJ_EWORKER, "worker is not running");
	}
	text = msg && json_object_set_new(msg, "nonce", json_integer((json_int_t)nonce)) == 0
		       ? kj_json_text(msg, JSON_COMPACT, NULL) : NULL;
	json_decref(msg);
	if (!text)
		return kj_error_set(err, KJ_ENOMEM, "cannot encode an answer (out of memory)");
	len = strlen(text);
	text[len++] = '\n'; /* replaces the NUL; the length is passed explicitly */
	rc = write_all(p->proto, text, len, kj__now_s() + timeout_s);
	free(text);
	return rc == KJ_OK ? KJ_OK : fail_request(p, rc, timeout_s, err);
}

/*
 * The reply is here.  Whatever the worker printed before it is in the pipes
 * by now (its writes returned before it sent the reply), so it is taken
 * into this request's count, not the next one's; past the budget, the
 * request fails after all.
 */
static int took_reply(struct kj_proc *p, json_t **reply, double timeout_s,
		      struct kj_error *err)
{
	int d = drain_both(p);

	if (!d)
		return KJ_OK;
	json_decref(*reply);
	*reply = NULL;
	if (d < 0)
		return fail_request(p, KJ_ENOMEM, timeout_s, err);
	p->output_over = 1;
	return fail_request(p, KJ_EWORKER, timeout_s, err);
}

int kj_proc_wait(struct kj_proc *p, uint64_t nonce, double timeout_s,
		 json_t **reply, struct kj_error *err)
{
	double deadline = kj__now_s() + timeout_s;
	int rc;

	*reply = NULL;
	kj__watchdog_arm(timeout_s);
	for (;;) {
		struct pollfd pf[4];
		int nf = 0, ms, wake = kj__spawn_wake_fd();

		if (kj_proc_interrupted())
			return fail_request(p, KJ_EINTR, timeout_s, err);
		if ((rc = take_reply(p, nonce, reply)) != KJ_OK)
			return fail_request(p, rc, timeout_s, err);
		if (*reply)
			return took_reply(p, reply, timeout_s, err);
		if (p->proto < 0)
			return fail_request(p, KJ_EWORKER, timeout_s, err);
		if (p->line_len > KJ_PROC_LINE_MAX)
			return fail_request(p, KJ_EPROTOCOL, timeout_s, err);
		ms = slice_ms(deadline);
		if (ms <= 0)
			return fail_request(p, KJ_ETIMEDOUT, timeout_s, err);
		pf[nf++] = (struct pollfd){ p->proto, POLLIN, 0 };
		if (p->out >= 0)
			pf[nf++] = (struct pollfd){ p->out, POLLIN, 0 };
		if (p->err >= 0)
			pf[nf++] = (struct pollfd){ p->err, POLLIN, 0 };
		if (wake >= 0)
			pf[nf++] = (struct pollfd){ wake, POLLIN, 0 };
		if (poll(pf, (nfds_t)nf, ms) < 0 && errno != EINTR)
			return fail_request(p, KJ_EWORKER, timeout_s, err);
		if ((rc = drain_both(p)) < 0)
			return fail_request(p, KJ_ENOMEM, timeout_s, err);
		if (rc > 0) {
			p->output_over = 1;
			return fail_request(p, KJ_EWORKER, timeout_s, err);
		}
		rc = read_proto(p);
		if (rc != KJ_OK) {
			int took = take_reply(p, nonce, reply);

			if (took != KJ_OK)
				return fail_request(p, took, timeout_s, err);
			if (*reply)
				return took_reply(p, reply, timeout_s, err);
			return fail_request(p, rc, timeout_s, err);
		}
	}
}

int kj_proc_request(struct kj_proc *p, json_t *req, double timeout_s,
		    json_t **reply, struct kj_error *err)
{
	uint64_t nonce;
	int rc = kj_proc_send(p, req, timeout_s, &nonce, err);

	*reply = NULL;
	return rc != KJ_OK ? rc : kj_proc_wait(p, nonce, timeout_s, reply, err);
}

void kj_proc_release(struct kj_proc *p, double grace_s)
{
	if (p->pid && !p->reaped && p->proto >= 0) {
		double deadline = kj__now_s() + grace_s;
		char line[64];
		int n = snprintf(line, sizeof(line), "{\"op\":\"exit\",\"nonce\":%llu}\n",
				 (unsigned long long)(p->next_nonce++ & 0x3fffffffffffffffull));

		/* Written without allocating: a release comes after the verdict
		 * (when a failure could no longer change it), and a worker that
		 * cannot take the request is killed below anyway. */
		if (!kj_proc_interrupted())
			write_all(p->proto, line, (size_t)n, deadline);
		while (!exited(p) && kj__now_s() < deadline && !kj_proc_interrupted()) {
			struct timespec ts = { 0, 5 * 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
	}
	kj_proc_kill(p);
	close_fd(&p->proto);
	close_fd(&p->out);
	close_fd(&p->err);
	free(p->cap_out.data);
	free(p->cap_err.data);
	free(p->line);
	close_all_fds(p);
	kj_proc_init(p);
}

const char *kj_isolation_name(enum kj_isolation iso)
{
	switch (iso) {
	case KJ_ISOLATION_GROUP:
		return "process-group";
	case KJ_ISOLATION_PIDNS:
		return "pid-namespace";
	case KJ_ISOLATION_SANDBOX:
		return "sandbox";
	default:
		return "none";
	}
}

json_t *kj_proc_limits_json(const struct kj_proc *p)
{
	const struct kj_limits_in_force *l = &p->limits;

	return json_pack("{s:s, s:s, s:s?, s:I, s:b, s:I, s:f, s:I, s:I, s:I, s:i}",
			 "isolation", kj_isolation_name(p->isolation),
			 "started", l->from_template ? "template" : "exec",
			 "cgroup", l->cgroup == 2 ? "v2" : l->cgroup == 1 ? "v1" : NULL,
			 "memory_bytes", (json_int_t)l->mem_bytes,
			 "swap_limited", l->swap_limited,
			 "pids_max", (json_int_t)l->pids_max,
			 "cpu_s", l->cpu_s,
			 "file_bytes", (json_int_t)l->fsize_bytes,
			 "nproc", (json_int_t)l->nproc,
			 "nofile", (json_int_t)l->nofile,
			 "oom_score_adj", l->oom_score_adj);
}
