/*
 * doctor.c - kjudge doctor's frame: the report and its records, the JSON
 * form, child processes with deadlines, and the parsers the probes share.
 * The probes themselves are in doctor_sandbox.c, doctor_timing.c and
 * doctor_runtimes.c.
 *
 * Children.  Every probe that runs a program or tries something that
 * changes a process (unshare, a seccomp filter, a mount) does it in a
 * child that leads its own process group.  Programs are started by the
 * library's spawn core (lib/sandbox/spawn.h), as workers are: a clean
 * environment (the one given, else the doctor's), fd 0 /dev/null, 1 and 2
 * capture pipes, no other descriptor, the parent-death signal, errno of a
 * failed execve through a close-on-exec pipe, the group in the judge's
 * live list (so the signal guard kills it too).  Probes that try an
 * operation themselves are forked here (kj__doctor_in_child) and write
 * their record on a pipe:
 *
 *   doctor                                 child (own process group)
 *   ------                                 -------------------------
 *   out  <== pipe ==                       fd 1 (a command's stdout, or
 *   err  <== pipe ==                       fd 2  a probe's result record)
 *
 * The doctor reads the pipes with poll() until they close, the deadline
 * passes or the signal guard fires; then it kills the whole group and
 * reaps the child.  Output past a bounded buffer is read and dropped, so a
 * flood neither blocks the child nor grows the doctor.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "doctor/doctor_internal.h"
#include "sandbox/program.h"
#include "sandbox/spawn.h"
#include "base/vec.h"

extern char **environ;

/* --- records ------------------------------------------------------------------------- */

void kj_doctor_report_init(struct kj_doctor_report *r)
{
	memset(r, 0, sizeof(*r));
}

void kj_doctor_report_release(struct kj_doctor_report *r)
{
	free(r->checks);
	kj_doctor_report_init(r);
}

struct kj_doctor_check *kj__doctor_check(struct kj__doctor *d,
					 enum kj_doctor_group g, const char *name)
{
	struct kj_doctor_report *r = d->r;
	struct kj_doctor_check *c;

	if (KJ__GROW(r->checks, r->cap, r->n + 1) != KJ_OK) {
		d->oom = 1;
		c = &d->spill;
		goto fill;
	}
	c = &r->checks[r->n++];
fill:
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->group = g;
	c->status = KJ_DOCTOR_OK;
	return c;
}

void kj__doctor_append(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;
	int n;

	if (len + 1 >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
	/* Cut text says so, rather than ending mid-word as if complete. */
	if (n >= 0 && (size_t)n >= size - len && size > 4)
		memcpy(buf + size - 4, "...", 4);
}

void kj__doctor_set(struct kj_doctor_check *c, enum kj_doctor_status s,
		    const char *fix, const char *fmt, ...)
{
	va_list ap;
	char *p;

	/* The record's promise: a fix exactly for the problems. */
	assert((s == KJ_DOCTOR_OK) == (!fix || !*fix));
	c->status = s;
	snprintf(c->fix, sizeof(c->fix), "%s", fix ? fix : "");
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
	/* One line each: text from files and programs may carry newlines. */
	for (p = c->detail; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
}

const char *kj_doctor_status_name(enum kj_doctor_status s)
{
	switch (s) {
	case KJ_DOCTOR_OK:
		return "ok";
	case KJ_DOCTOR_WARN:
		return "warn";
	default:
		return "fail";
	}
}

static const struct {
	enum kj_doctor_group g;
	const char *name;
	void (*probe)(struct kj__doctor *d);
} groups[] = {
	{ KJ_DOCTOR_SANDBOX, "sandbox", kj__doctor_sandbox },
	{ KJ_DOCTOR_TIMING, "timing", kj__doctor_timing },
	{ KJ_DOCTOR_RUNTIMES, "runtimes", kj__doctor_runtimes },
};

#define N_GROUPS (sizeof(groups) / sizeof(groups[0]))

const char *kj_doctor_group_name(enum kj_doctor_group g)
{
	size_t i;

	for (i = 0; i < N_GROUPS; i++)
		if (groups[i].g == g)
			return groups[i].name;
	return "?";
}

enum kj_doctor_group kj_doctor_group_from_name(const char *name)
{
	size_t i;

	for (i = 0; name && i < N_GROUPS; i++)
		if (!strcmp(groups[i].name, name))
			return groups[i].g;
	return (enum kj_doctor_group)0;
}

int kj_doctor_run(const struct kj_doctor_options *o, struct kj_doctor_report *r,
		  struct kj_error *err)
{
	struct kj__doctor d;
	unsigned mask = o && o->groups ? o->groups : KJ_DOCTOR_ALL;
	size_t i;

	memset(&d, 0, sizeof(d));
	d.o = o;
	d.r = r;
	d.timeout_s = o && o->timeout_s > 0 ? o->timeout_s : 30.0;
	for (i = 0; i < N_GROUPS; i++)
		if (mask & groups[i].g)
			groups[i].probe(&d);
	memset(r->count, 0, sizeof(r->count));
	for (i = 0; i < r->n; i++)
		r->count[r->checks[i].status]++;
	if (d.oom)
		return kj_error_set(err, KJ_ENOMEM, "out of memory for the "
				    "doctor's records");
	return KJ_OK;
}

json_t *kj_doctor_report_json(const struct kj_doctor_report *r)
{
	json_t *doc, *checks;
	size_t i;

	checks = json_array();
	for (i = 0; checks && i < r->n; i++) {
		const struct kj_doctor_check *c = &r->checks[i];

		if (json_array_append_new(checks, json_pack(
			"{s:s, s:s, s:s, s:s, s:s}", "name", c->name,
			"group", kj_doctor_group_name(c->group),
			"status", kj_doctor_status_name(c->status),
			"detail", c->detail, "fix", c->fix)) != 0) {
			json_decref(checks);
			return NULL;
		}
	}
	if (!checks)
		return NULL;
	doc = json_pack("{s:o, s:{s:I, s:I, s:I}}", "checks", checks, "summary",
			"ok", (json_int_t)r->count[KJ_DOCTOR_OK],
			"warn", (json_int_t)r->count[KJ_DOCTOR_WARN],
			"fail", (json_int_t)r->count[KJ_DOCTOR_FAIL]);
	return doc;
}

/* --- children ---------------------------------------------------------------------------- */

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/*
 * Wait for the child to exit, until the deadline, without reaping it: while
 * it is a zombie its pid, which is also its group's id, cannot be reused,
 * so killing the group afterwards cannot hit a stranger.  Then kill what is
 * left of the group (a daemon a program started, or the child itself when
 * the deadline passed), take it out of the live list (link, when it is in
 * one) and reap the child into *status.  Returns 1 when the deadline
 * passed, else 0.
 */
static int finish(pid_t pid, struct kj_proc_link *link, double deadline, int *status)
{
	const struct timespec tick = { 0, 5 * 1000 * 1000 };
	int timed_out = 0;

	for (;;) {
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (si.si_pid == pid)
			break;
		if (kj__now_s() >= deadline || kj_proc_interrupted()) {
			timed_out = 1;
			kill(pid, SIGKILL); /* in case it left its group */
			break;
		}
		nanosleep(&tick, NULL);
	}
	kill(-pid, SIGKILL);
	kj__spawn_unlink(link);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return timed_out;
}

/* A pipe being read into a bounded buffer. */
struct sink {
	int fd;       /* -1 once closed */
	char *buf;    /* NUL-terminated */
	size_t size, len;
};

/* Read what is there into the sink, dropping what does not fit; close the
 * descriptor at end of file. */
static void drain(struct sink *k)
{
	char tmp[4096];
	ssize_t n = read(k->fd, tmp, sizeof(tmp));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close_fd(&k->fd);
		return;
	}
	if (k->len + 1 < k->size) {
		size_t room = k->size - 1 - k->len;
		size_t take = (size_t)n < room ? (size_t)n : room;

		memcpy(k->buf + k->len, tmp, take);
		k->len += take;
		k->buf[k->len] = '\0';
	}
}

/* Has pid exited?  It is not reaped (WNOWAIT): see finish(). */
static int exited(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	       si.si_pid == pid;
}

/*
 * Read both sinks until they close or the deadline passes.  A descendant
 * can hold a pipe open after the child is gone (a daemon it started): once
 * the child has exited, what comes within 0.2 s is read and the rest is
 * not waited for.  Returns 0, or -1 when the deadline passed.
 */
static int read_until(struct sink k[2], pid_t pid, double deadline)
{
	double grace_end = 0;

	while (k[0].fd >= 0 || k[1].fd >= 0) {
		struct pollfd p[2];
		struct sink *which[2];
		double t = kj__now_s(), slice = deadline - t;
		int n = 0, i, rc;

		if (slice <= 0 || kj_proc_interrupted())
			return -1;
		if (!grace_end && exited(pid))
			grace_end = t + 0.2;
		if (grace_end && t >= grace_end)
			return 0;
		/* Wake now and then to notice the child's exit. */
		if (slice > 0.05)
			slice = 0.05;
		for (i = 0; i < 2; i++)
			if (k[i].fd >= 0) {
				p[n].fd = k[i].fd;
				p[n].events = POLLIN;
				p[n].revents = 0;
				which[n++] = &k[i];
			}
		rc = poll(p, (nfds_t)n, (int)(slice * 1000) + 1);
		if (rc < 0 && errno != EINTR)
			return -1;
		for (i = 0; rc > 0 && i < n; i++)
			if (p[i].revents)
				drain(which[i]);
	}
	return 0;
}

int kj__doctor_run_cmd(const char *const argv[], const char *const envp[],
		       double timeout_s, struct kj__cmd *c)
{
	/* execve's prototype predates const; it changes neither array. */
	union {
		const char *const *c;
		char *const *m;
	} a = { argv }, e = { envp };
	struct kj__run_req q;
	struct kj__run_res r;
	struct kj_error err;
	int rc;

	memset(c, 0, sizeof(*c));
	memset(&q, 0, sizeof(q));
	q.argv = a.m;
	q.envp = envp ? e.m : environ;
	q.timeout_s = timeout_s;
	kj__program_init(&r, sizeof(c->out) - 1, KJ__SINK_HEAD, sizeof(c->err) - 1, KJ__SINK_HEAD);
	rc = kj__program_run(&q, &r, &err);
	if (rc == KJ_OK) {
		c->started = r.started;
		c->exec_errno = r.exec_errno;
		c->timed_out = r.timed_out;
		c->status = r.status;
		c->out_len = r.out.len;
		c->err_len = r.err.len;
		memcpy(c->out, r.out.buf, r.out.len + 1);
		memcpy(c->err, r.err.buf, r.err.len + 1);
	}
	kj__program_release(&r);
	if (rc == KJ_OK)
		return 0;
	errno = rc == KJ_EINTR ? EINTR : rc == KJ_ENOMEM ? ENOMEM : EAGAIN;
	return -1;
}

/* The first line of s that is not blank, into line. */
static int first_line(const char *s, char *line, size_t size)
{
	while (*s) {
		size_t n = strcspn(s, "\n");
		size_t i;

		for (i = 0; i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'); i++)
			;
		if (i < n) {
			while (n > i && (s[n - 1] == '\r' || s[n - 1] == ' '))
				n--;
			snprintf(line, size, "%.*s", (int)(n - i), s + i);
			return 0;
		}
		s += n + (s[n] == '\n');
	}
	return -1;
}

int kj__doctor_cmd_line(const char *const argv[], double timeout_s, char *line,
			size_t size)
{
	struct kj__cmd *c = malloc(sizeof(*c));
	int rc = -1;

	if (!c) {
		snprintf(line, size, "out of memory");
		return -1;
	}
	if (kj__doctor_run_cmd(argv, NULL, timeout_s, c) < 0) {
		snprintf(line, size, "cannot start a child: %s", strerror(errno));
	} else if (!c->started) {
		snprintf(line, size, "cannot run %s: %s", argv[0],
			 strerror(c->exec_errno));
	} else if (c->timed_out) {
		snprintf(line, size, "%s did not answer within %g s", argv[0],
			 timeout_s);
	} else {
		rc = WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0 ? 0 : -1;
		if (first_line(c->out, line, size) < 0 &&
		    first_line(c->err, line, size) < 0)
			snprintf(line, size, "%s printed nothing", argv[0]);
	}
	free(c);
	return rc;
}

int kj__doctor_in_child(int (*fn)(void *arg, char *msg, size_t size), void *arg,
			double timeout_s, char *msg, size_t size)
{
	/* The child writes its value as one byte, then its message. */
	char buf[1 + KJ_DOCTOR_DETAIL_MAX], none[8] = "";
	struct sink k[2] = { { -1, buf, sizeof(buf), 0 }, { -1, none, sizeof(none), 0 } };
	int p[2], status = 0, timed_out;
	double deadline;
	pid_t pid;

	pid_t parent = getpid();

	msg[0] = '\0';
	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(msg, size, "cannot make a pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(msg, size, "cannot fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		char m[KJ_DOCTOR_DETAIL_MAX] = "";
		unsigned char v;
		size_t off = 0, mlen;

		setpgid(0, 0);
		/* A probe ends with the doctor, however the doctor ends. */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() != parent)
			_exit(0);
		close(p[0]);
		v = (unsigned char)fn(arg, m, sizeof(m));
		mlen = strlen(m);
		buf[0] = (char)v;
		memcpy(buf + 1, m, mlen);
		while (off < mlen + 1) {
			ssize_t n = write(p[1], buf + off, mlen + 1 - off);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			off += (size_t)n;
		}
		/* _exit: the copy of this process must not run atexit
		 * handlers or flush stdio buffers it shares with the parent. */
		_exit(0);
	}
	setpgid(pid, pid);
	close(p[1]);
	k[0].fd = p[0];
	buf[0] = '\0';
	deadline = kj__now_s() + timeout_s;
	timed_out = read_until(k, pid, deadline) < 0;
	close_fd(&k[0].fd);
	if (finish(pid, NULL, timed_out ? 0 : deadline, &status) || timed_out) {
		snprintf(msg, size, "the probe did not finish within %g s",
			 timeout_s);
		return -1;
	}
	if (k[0].len == 0) {
		if (WIFSIGNALED(status))
			snprintf(msg, size, "the probe was killed by signal %d (%s)",
				 WTERMSIG(status), strsignal(WTERMSIG(status)));
		else
			snprintf(msg, size, "the probe ended without an answer");
		return -1;
	}
	snprintf(msg, size, "%.*s", (int)(k[0].len - 1), buf + 1);
	return (unsigned char)buf[0];
}

/* --- parsers ----------------------------------------------------------------------------- */

int kj__doctor_has_word(const char *list, const char *word)
{
	size_t w = strlen(word);
	const char *p = list;

	if (!w)
		return 0;
	while ((p = strstr(p, word)) != NULL) {
		int start = p == list || p[-1] == ',' || p[-1] == ' ' ||
			    p[-1] == '\t' || p[-1] == '\n';
		char end = p[w];

		if (start && (end == '\0' || end == ',' || end == ' ' ||
			      end == '\t' || end == '\n'))
			return 1;
		p += w;
	}
	return 0;
}

/* Copy the n bytes of a /proc/mounts field into out, decoding the octal
 * escapes the kernel writes for spaces, tabs, newlines and backslashes. */
static int unescape_field(const char *s, size_t n, char *out, size_t size)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		char ch = s[i];

		if (ch == '\\' && i + 3 < n &&
		    s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
		    s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
			ch = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 +
				    (s[i + 3] - '0'));
			i += 3;
		}
		if (o + 1 >= size)
			return -1;
		out[o++] = ch;
	}
	out[o] = '\0';
	return 0;
}

int kj__doctor_next_line(const char **cursor, const char **line, size_t *len)
{
	const char *s = *cursor, *end;

	if (!s || !*s)
		return 0;
	end = strchr(s, '\n');
	*line = s;
	*len = end ? (size_t)(end - s) : strlen(s);
	*cursor = end ? end + 1 : s + *len;
	return 1;
}

int kj__doctor_cgroup_mount(const char *mounts, const char *controller,
			    char *out, size_t size)
{
	const char *cursor = mounts, *line;
	size_t len;

	while (kj__doctor_next_line(&cursor, &line, &len)) {
		const char *f[4];
		size_t fl[4];
		const char *p = line;
		int k;

		/* device mountpoint fstype options ... */
		for (k = 0; k < 4; k++) {
			while (p < line + len && *p == ' ')
				p++;
			f[k] = p;
			while (p < line + len && *p != ' ')
				p++;
			fl[k] = (size_t)(p - f[k]);
		}
		if (fl[3] > 0) {
			char opts[1024];

			snprintf(opts, sizeof(opts), "%.*s", (int)fl[3], f[3]);
			if (!controller && fl[2] == 7 && !strncmp(f[2], "cgroup2", 7))
				return unescape_field(f[1], fl[1], out, size);
			if (controller && fl[2] == 6 && !strncmp(f[2], "cgroup", 6) &&
			    kj__doctor_has_word(opts, controller))
				return unescape_field(f[1], fl[1], out, size);
		}
	}
	return -1;
}

int kj__doctor_cgroup_path(const char *self_cgroup, const char *controller,
			   char *out, size_t size)
{
	const char *cursor = self_cgroup, *line;
	size_t len;

	while (kj__doctor_next_line(&cursor, &line, &len)) {
		const char *c1 = memchr(line, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;

		if (c2) {
			char ctl[512];
			size_t plen = len - (size_t)(c2 + 1 - line);

			snprintf(ctl, sizeof(ctl), "%.*s", (int)(c2 - c1 - 1), c1 + 1);
			if (controller ? kj__doctor_has_word(ctl, controller)
				       : (c1 - line == 1 && line[0] == '0' && !ctl[0]))
				return snprintf(out, size, "%.*s", (int)plen, c2 + 1) <
						       (int)size
					       ? 0
					       : -1;
		}
	}
	return -1;
}

enum kj_doctor_status kj__doctor_governors(const char *const *gov, int n,
					   char *detail, size_t size)
{
	enum kj_doctor_status s = KJ_DOCTOR_OK;
	char done[1024] = { 0 };
	int i, j, lacking = 0;

	detail[0] = '\0';
	if (n > 1024)
		n = 1024;
	/* One clause per governor, naming its CPUs as ranges: a 128-CPU
	 * machine on one governor is one short line. */
	for (i = 0; i < n; i++) {
		int count = 0, start = -1;

		if (!gov[i]) {
			lacking++;
			continue;
		}
		if (done[i])
			continue;
		if (strcmp(gov[i], "performance"))
			s = KJ_DOCTOR_WARN;
		for (j = i; j < n; j++)
			count += gov[j] && !strcmp(gov[j], gov[i]);
		kj__doctor_append(detail, size, "%s%s on CPU%s", detail[0] ? "; " : "",
				  gov[i], count == 1 ? "" : "s");
		count = 0;
		for (j = i; j <= n; j++) {
			if (j < n && gov[j] && !strcmp(gov[j], gov[i])) {
				done[j] = 1;
				if (start < 0)
					start = j;
				continue;
			}
			if (start < 0)
				continue;
			if (start == j - 1)
				kj__doctor_append(detail, size, "%s%d",
						  count++ ? ", " : " ", start);
			else
				kj__doctor_append(detail, size, "%s%d-%d",
						  count++ ? ", " : " ", start, j - 1);
			start = -1;
		}
	}
	if (lacking)
		kj__doctor_append(detail, size, "%s%d CPU%s without cpufreq",
				  detail[0] ? "; " : "", lacking,
				  lacking == 1 ? "" : "s");
	return s;
}

/* The next comma-separated field of a CSV line, trimmed, into out. */
static const char *csv_field(const char *p, char *out, size_t size)
{
	size_t n;

	while (*p == ' ')
		p++;
	n = strcspn(p, ",\n");
	snprintf(out, size, "%.*s", (int)n, p);
	while (*out && out[strlen(out) - 1] == ' ')
		out[strlen(out) - 1] = '\0';
	return p[n] == ',' ? p + n + 1 : NULL;
}

/* "1980 MHz" -> 1980; "[N/A]", "[Not Supported]" -> -1. */
static int parse_mhz(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (end == s || v < 0 || v > 1000000)
		return -1;
	return (int)v;
}

int kj__doctor_parse_gpu(const char *line, struct kj__gpu *g)
{
	char f[6][96];
	const char *p = line;
	char *end;
	int i;

	memset(g, 0, sizeof(*g));
	for (i = 0; i < 6; i++) {
		if (!p)
			return -1;
		p = csv_field(p, f[i], sizeof(f[i]));
	}
	if (!f[0][0])
		return -1;
	snprintf(g->name, sizeof(g->name), "%s", f[0]);
	snprintf(g->driver, sizeof(g->driver), "%.31s", f[1]);
	g->sm_mhz = parse_mhz(f[2]);
	g->max_sm_mhz = parse_mhz(f[3]);
	errno = 0;
	g->reasons = strtoll(f[4], &end, 16);
	if (errno || end == f[4] || *end)
		g->reasons = -1;
	g->persistence = !strcmp(f[5], "Enabled") ? 1 : !strcmp(f[5], "Disabled") ? 0 : -1;
	return 0;
}

int kj__doctor_slowdowns(long long mask, char *buf, size_t size)
{
	/* nvmlClocksEventReasons: 0x1 idle and 0x2 applications clocks are
	 * states the user chose or expects; 0x100 a display clock setting is
	 * not about compute.  The rest lower the clock under load. */
	static const struct {
		long long bit;
		const char *name;
	} bits[] = {
		{ 0x4, "software power cap" },
		{ 0x8, "hardware slowdown" },
		{ 0x10, "sync boost" },
		{ 0x20, "software thermal slowdown" },
		{ 0x40, "hardware thermal slowdown" },
		{ 0x80, "power brake" },
	};
	size_t i;
	int n = 0;

	buf[0] = '\0';
	if (mask < 0)
		return 0;
	for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (mask & bits[i].bit) {
			kj__doctor_append(buf, size, "%s%s", n ? ", " : "", bits[i].name);
			n++;
		}
	return n;
}
