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

#include "kjudge/proc.h"
#include "base/internal.h"

#define PROTO_FD 3

/*
 * Workers alive now, so that sweeping up orphans never touches a worker of
 * another side.  The judge drives its workers from one thread.
 */
#define MAX_LIVE 64
static pid_t live[MAX_LIVE];

static void live_add(pid_t pid)
{
	int i;

	for (i = 0; i < MAX_LIVE; i++)
		if (!live[i]) {
			live[i] = pid;
			return;
		}
}

static void live_del(pid_t pid)
{
	int i;

	for (i = 0; i < MAX_LIVE; i++)
		if (live[i] == pid)
			live[i] = 0;
}

static int is_live(pid_t pid)
{
	int i;

	for (i = 0; i < MAX_LIVE; i++)
		if (live[i] == pid)
			return 1;
	return 0;
}

/*
 * Orphans: a worker's descendant that left its process group (setsid, a
 * daemon) escapes kill(-pgid).  The judge is a child subreaper, so such
 * processes are re-parented to it when their parent dies; after a worker is
 * killed, every child of the judge that is not a live worker is killed and
 * reaped.  (A PID namespace will make this complete: see the sandbox.)
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

		if (pid <= 0 || is_live(pid))
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

/* Runs in the child between fork and exec: only async-signal-safe calls. */
/* What the child reports on the exec-error pipe when it cannot exec. */
struct child_failure {
	int err;
	char step[60];  /* the sandbox step that failed, or "" */
};

static void child_exec(char *const argv[], char *const envp[], const char *cwd,
		       int proto, int out, int err, int errpipe,
		       const struct kj_sandbox *sb, int syncfd)
{
	struct child_failure f;
	int devnull, fd;
	const char *step = NULL;
	char go;

	sigset_t none;

	memset(&f, 0, sizeof(f));
	setpgid(0, 0);
	if (sb) {
		/* Wait until the parent has written our uid and gid maps and
		 * put us in a cgroup; EOF means it gave up on us. */
		if (read(syncfd, &go, 1) != 1)
			_exit(127);
		close(syncfd);
		if (kj__sandbox_child(sb, &step) < 0)
			goto fail;
	}
	/* Default signal dispositions and an empty mask for the worker. */
	for (fd = 1; fd < NSIG; fd++)
		signal(fd, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	devnull = open("/dev/null", O_RDONLY);
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out, 1) < 0 ||
	    dup2(err, 2) < 0 || dup2(proto, PROTO_FD) < 0)
		goto fail;
	/* Everything above the protocol descriptor goes, the exec-error pipe
	 * included (it is close-on-exec and must stay open until execve). */
	for (fd = PROTO_FD + 1; fd < 1024; fd++)
		if (fd != errpipe)
			close(fd);
	if (cwd && chdir(cwd) < 0)
		goto fail;
	execve(argv[0], argv, envp);
fail:
	f.err = errno;
	if (step)
		snprintf(f.step, sizeof(f.step), "%s", step);
	if (write(errpipe, &f, sizeof(f)) < 0) {
		/* nothing more can be said */
	}
	_exit(127);
}

static int write_proc_file(int pid, const char *name, const char *text)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	return kj__write_text(path, text);
}

/* Map root of the child's user namespace to our own user and group. */
static int map_ids(int pid)
{
	char m[64];

	snprintf(m, sizeof(m), "0 %u 1\n", (unsigned)geteuid());
	if (write_proc_file(pid, "uid_map", m) < 0)
		return -1;
	if (write_proc_file(pid, "setgroups", "deny") < 0 && errno != ENOENT)
		return -1;
	snprintf(m, sizeof(m), "0 %u 1\n", (unsigned)getegid());
	return write_proc_file(pid, "gid_map", m);
}

/*
 * Start the child: fork() for a plain one; for a sandboxed one, clone() into
 * new namespaces (it is PID 1 of its own), then map its ids and give it a
 * cgroup before it may go on.  The judge starts workers from its only
 * thread, so the child of a raw clone() (which runs no fork handlers) finds
 * no lock held.
 */
static int spawn(struct kj_proc *p, char *const argv[], char *const envp[],
		 const char *cwd, const struct kj_sandbox *sb, struct kj_error *err)
{
	int sp[2] = { -1, -1 }, po[2] = { -1, -1 }, pe[2] = { -1, -1 };
	int ep[2] = { -1, -1 }, sy[2] = { -1, -1 };
	struct child_failure f;
	ssize_t n;
	pid_t pid;

	kj_proc_init(p);
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0 ||
	    pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0 ||
	    pipe2(ep, O_CLOEXEC) < 0 || (sb && pipe2(sy, O_CLOEXEC) < 0)) {
		kj_error_set(err, KJ_ESPAWN, "cannot create pipes: %s",
			     strerror(errno));
		goto fail;
	}
	if (sb)
		pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID |
				     CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD,
				     NULL, NULL, NULL, NULL);
	else
		pid = fork();
	if (pid < 0) {
		kj_error_set(err, sb ? KJ_ESANDBOX : KJ_ESPAWN, "%s: %s",
			     sb ? "clone into new namespaces" : "fork", strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		close(ep[0]);
		if (sb)
			close(sy[1]);
		child_exec(argv, envp, cwd, sp[1], po[1], pe[1], ep[1], sb, sy[0]);
	}
	/* Both sides call setpgid, so the group exists whoever runs first. */
	setpgid(pid, pid);
	p->pid = pid;
	live_add(pid);
	close_fd(&sp[1]);
	close_fd(&po[1]);
	close_fd(&pe[1]);
	close_fd(&ep[1]);
	close_fd(&sy[0]);
	if (sb) {
		if (map_ids(pid) < 0) {
			kj_error_set(err, KJ_ESANDBOX, "cannot map the sandbox's user: %s",
				     strerror(errno));
			kj_proc_kill(p);
			goto fail;
		}
		kj_cgroup_attach(&p->cg, sb, pid);
		if (write(sy[1], "g", 1) != 1) {
			kj_error_set(err, KJ_ESANDBOX, "the sandboxed process is gone");
			kj_proc_kill(p);
			goto fail;
		}
		close_fd(&sy[1]);
	}
	memset(&f, 0, sizeof(f));
	do
		n = read(ep[0], &f, sizeof(f));
	while (n < 0 && errno == EINTR);
	close_fd(&ep[0]);
	if (n > 0) {
		kj_proc_kill(p);
		if (f.step[0])
			kj_error_set(err, KJ_ESANDBOX, "sandbox: %s: %s", f.step,
				     strerror(f.err));
		else
			kj_error_set(err, KJ_ESPAWN, "cannot run '%s': %s", argv[0],
				     strerror(f.err));
		goto fail;
	}
	/* Nonces start at a random point, so that code in the worker cannot
	 * guess the next one from the previous requests alone. */
	if (getrandom(&p->next_nonce, sizeof(p->next_nonce), 0) !=
	    (ssize_t)sizeof(p->next_nonce))
		p->next_nonce = (uint64_t)kj__now_s() * 0x9e3779b97f4a7c15ull;
	p->proto = sp[0];
	p->out = po[0];
	p->err = pe[0];
	fcntl(p->out, F_SETFL, O_NONBLOCK);
	fcntl(p->err, F_SETFL, O_NONBLOCK);
	fcntl(p->proto, F_SETFL, O_NONBLOCK);
	return KJ_OK;
fail:
	close_fd(&sp[0]);
	close_fd(&sp[1]);
	close_fd(&po[0]);
	close_fd(&po[1]);
	close_fd(&pe[0]);
	close_fd(&pe[1]);
	close_fd(&ep[0]);
	close_fd(&ep[1]);
	close_fd(&sy[0]);
	close_fd(&sy[1]);
	p->pid = 0;
	return err->code;
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

/* Read what is there from a capture pipe; 0 at EOF, 1 if more may come. */
static int drain(int *fd, struct kj_capture *c)
{
	char buf[65536];

	for (;;) {
		ssize_t n = read(*fd, buf, sizeof(buf));

		if (n > 0) {
			size_t room = KJ_PROC_CAPTURE_MAX - c->len, take;

			if (!c->data) {
				c->data = malloc(KJ_PROC_CAPTURE_MAX + 1);
				if (!c->data)
					room = 0;
			}
			take = (size_t)n < room ? (size_t)n : room;
			if (take) {
				memcpy(c->data + c->len, buf, take);
				c->len += take;
				c->data[c->len] = '\0';
			}
			c->dropped += (size_t)n - take;
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

static void reap(struct kj_proc *p, int block)
{
	pid_t r;

	if (!p->pid || p->reaped)
		return;
	struct rusage ru;

	do
		r = wait4(p->pid, &p->status, block ? 0 : WNOHANG, &ru);
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
	/* The whole group: whatever the worker started goes with it; then
	 * whatever left the group. */
	kill(-p->pid, SIGKILL);
	reap(p, 1);
	live_del(p->pid);
	if (p->cg.version) {
		p->oom_killed |= kj_cgroup_oom_killed(&p->cg);
		kj_cgroup_release(&p->cg);
	}
	sweep_orphans();
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
 * Milliseconds from now to `deadline` for poll(), 0 when it has passed.  A
 * wait longer than an int of milliseconds (24.8 days) polls INT_MAX ms at a
 * time: converting a larger double to int is undefined, and on x86 gives
 * INT_MIN, a timeout at once.  kjudge's own --timeout stops at 2147483 s,
 * which fits; other callers need not know.
 */
static int ms_until(double deadline)
{
	double ms = (deadline - kj__now_s()) * 1000;

	if (!(ms > 0))
		return 0;
	return ms >= (double)INT_MAX ? INT_MAX : (int)ms;
}

static int write_all(int fd, const char *s, size_t len, double deadline)
{
	while (len) {
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
			struct pollfd pf = { fd, POLLOUT, 0 };
			int ms = ms_until(deadline);

			if (ms <= 0)
				return KJ_ETIMEDOUT;
			poll(&pf, 1, ms);
			continue;
		}
		return KJ_EWORKER;
	}
	return KJ_OK;
}

/*
 * Take complete lines out of p->line; return the first that is our reply
 * (a JSON object whose "nonce" equals `nonce`), or NULL.
 */
static json_t *take_reply(struct kj_proc *p, uint64_t nonce)
{
	char *nl;

	while (p->line_len && (nl = memchr(p->line, '\n', p->line_len)) != NULL) {
		size_t len = (size_t)(nl - p->line);
		json_t *o = json_loadb(p->line, len, 0, NULL);
		json_t *n = o ? json_object_get(o, "nonce") : NULL;

		memmove(p->line, nl + 1, p->line_len - len - 1);
		p->line_len -= len + 1;
		if (json_is_object(o) && json_is_integer(n) &&
		    (uint64_t)json_integer_value(n) == nonce)
			return o;
		json_decref(o);
		p->noise_lines++;
	}
	return NULL;
}

static int read_proto(struct kj_proc *p)
{
	for (;;) {
		ssize_t n;

		if (p->line_cap - p->line_len < 65536) {
			size_t cap = p->line_cap ? p->line_cap * 2 : 131072;
			char *nl;

			if (cap > KJ_PROC_LINE_MAX + 65536)
				return KJ_EPROTOCOL;
			nl = realloc(p->line, cap);
			if (!nl)
				return KJ_ENOMEM;
			p->line = nl;
			p->line_cap = cap;
		}
		n = read(p->proto, p->line + p->line_len, p->line_cap - p->line_len);
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

	if (p->out >= 0)
		drain(&p->out, &p->cap_out);
	if (p->err >= 0)
		drain(&p->err, &p->cap_err);
	kj_proc_kill(p);
	close_fd(&p->proto);
	switch (rc) {
	case KJ_ETIMEDOUT:
		return kj_error_set(err, rc, "no reply within %g s", timeout_s);
	case KJ_EWORKER:
		if (p->output_over)
			return kj_error_set(err, rc, "worker printed more than %u KiB "
					    "and was stopped", KJ_PROC_CAPTURE_MAX >> 10);
		return kj_error_set(err, rc, "worker %s",
				    kj_proc_describe_exit(p, how, sizeof(how)));
	case KJ_EPROTOCOL:
		return kj_error_set(err, rc, "worker sent a reply line longer "
				    "than %u bytes", KJ_PROC_LINE_MAX);
	default:
		return kj_error_set(err, rc, "%s", kj_strerror(rc));
	}
}

int kj_proc_send(struct kj_proc *p, json_t *req, double timeout_s,
		 uint64_t *nonce, struct kj_error *err)
{
	char *text;
	size_t len;
	int rc;

	if (p->proto < 0) {
		json_decref(req);
		return kj_error_set(err, KJ_EWORKER, "worker is not running");
	}
	*nonce = p->next_nonce++ & 0x3fffffffffffffffull;
	json_object_set_new(req, "nonce", json_integer((json_int_t)*nonce));
	text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	if (!text)
		return kj_error_set(err, KJ_ENOMEM, "cannot encode a request");
	len = strlen(text);
	text[len] = '\n'; /* replaces the NUL; the length is passed explicitly */
	rc = write_all(p->proto, text, len + 1, kj__now_s() + timeout_s);
	free(text);
	if (rc != KJ_OK)
		return fail_request(p, rc, timeout_s, err);
	return KJ_OK;
}

int kj_proc_wait(struct kj_proc *p, uint64_t nonce, double timeout_s,
		 json_t **reply, struct kj_error *err)
{
	double deadline = kj__now_s() + timeout_s;
	int rc;

	*reply = NULL;
	for (;;) {
		struct pollfd pf[3];
		int nf = 0, ms;

		if ((*reply = take_reply(p, nonce)) != NULL)
			return KJ_OK;
		if (p->proto < 0)
			return fail_request(p, KJ_EWORKER, timeout_s, err);
		if (p->line_len > KJ_PROC_LINE_MAX)
			return fail_request(p, KJ_EPROTOCOL, timeout_s, err);
		ms = ms_until(deadline);
		if (ms <= 0)
			return fail_request(p, KJ_ETIMEDOUT, timeout_s, err);
		pf[nf++] = (struct pollfd){ p->proto, POLLIN, 0 };
		if (p->out >= 0)
			pf[nf++] = (struct pollfd){ p->out, POLLIN, 0 };
		if (p->err >= 0)
			pf[nf++] = (struct pollfd){ p->err, POLLIN, 0 };
		if (poll(pf, (nfds_t)nf, ms) < 0 && errno != EINTR)
			return fail_request(p, KJ_EWORKER, timeout_s, err);
		if (p->out >= 0)
			drain(&p->out, &p->cap_out);
		if (p->err >= 0)
			drain(&p->err, &p->cap_err);
		if (p->output_limit && (p->cap_out.dropped || p->cap_err.dropped)) {
			p->output_over = 1;
			return fail_request(p, KJ_EWORKER, timeout_s, err);
		}
		rc = read_proto(p);
		if (rc != KJ_OK) {
			if ((*reply = take_reply(p, nonce)) != NULL)
				return KJ_OK;
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
		uint64_t nonce;

		/* A worker that cannot take the request is killed below anyway
		 * (a failed send has killed it already). */
		kj_proc_send(p, json_pack("{s:s}", "op", "exit"), grace_s, &nonce, NULL);
		while (!p->reaped && kj__now_s() < deadline) {
			struct timespec ts = { 0, 5 * 1000 * 1000 };

			reap(p, 0);
			if (!p->reaped)
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
	kj_proc_init(p);
}
