/*
 * template.c - worker templates, the judge's side (spawn.h, "Templates";
 * the template's own side is the worker's --template mode and
 * worker/kjudge_template.c).
 *
 * A template is a plain child of the judge (its own process group, in the
 * judge's PID namespace, so that what its children leave is re-parented to
 * the judge, a child subreaper), started with a sandbox's template_argv and
 * the environment of the first start that wanted it.  It says
 * {"ready": true} once it has imported what it imports, then takes one
 * request at a time on its socket (descriptor 3):
 *
 *   u32 length of the rest (little-endian), u32 length of the JSON,
 *   JSON {"argv": [...], "env": [...], "cwd": S|null, "fds": "oep"},
 *   the sandbox's description (kj__sandbox_pack),
 *   with the child's ends of the start's descriptors (SCM_RIGHTS, in the
 *   order out, err, proto (those "fds" names), error pipe, sync socket)
 *
 * and answers one line, {"pid": N} (the child's pid in the judge's PID
 * namespace, already re-parented to the judge and waiting for its go byte)
 * or {"errno": N, "step": S}.  Every wait on it has a deadline; a template
 * that misses one, dies or answers nonsense is killed, and no template is
 * used again by this process: its starts clone as before (slower, the same
 * verdicts).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kjudge/proc.h"
#include "kjudge/sandbox.h"
#include "sandbox/spawn.h"
#include "sandbox/sandbox_internal.h"
#include "base/json.h"

/* How long a template may take to import what it imports (torch: seconds,
 * a minute on a loaded machine with a cold page cache), and to answer a
 * request (two forks: milliseconds). */
#define READY_S 300.0
#define ANSWER_S 20.0
#define MAX_TEMPLATES 8

struct kj__template {
	struct kj_proc_link link;
	pid_t pid;                /* 0: a free slot */
	int sock;
	char *key;                /* argv, then the environment less the free
				   * names, each NUL-terminated */
	size_t key_len;
	unsigned long long used;  /* when it last served (a counter) */
	pid_t owner;              /* the process that started it (a fork of
				   * the judge inherits the slots, not the
				   * template: its children would not be its
				   * own) */
};

static struct kj__template slots[MAX_TEMPLATES];
static unsigned long long uses;
static int templates_off;     /* a template failed: none is used again */

static int free_name(const struct kj_sandbox *sb, const char *entry)
{
	const char *const *f;

	for (f = sb->template_free_env; f && *f; f++) {
		size_t n = strlen(*f);

		if (!strncmp(entry, *f, n) && entry[n] == '=')
			return 1;
	}
	return 0;
}

/* str and its NUL at k + at (k NULL: only counted); the offset after it. */
static size_t key_add(char *k, size_t at, const char *str)
{
	size_t n = strlen(str) + 1;

	if (k)
		memcpy(k + at, str, n);
	return at + n;
}

/* The key's bytes into k (NULL: only counted): its length. */
static size_t key_fill(const struct kj__spawn *s, const char *ns, char *k)
{
	size_t at = 0, i;

	for (i = 0; s->sb->template_argv[i]; i++)
		at = key_add(k, at, s->sb->template_argv[i]);
	at = key_add(k, at, "");
	for (i = 0; s->envp && s->envp[i]; i++)
		if (!free_name(s->sb, s->envp[i]))
			at = key_add(k, at, s->envp[i]);
	return key_add(k, at, ns);
}

/* The key of s's template: NULL when out of memory (*oom set) or when the
 * judge's mount namespace cannot be named (no template).  The judge's mount
 * namespace is part of it: a template sees the files of the namespace it
 * was started in, and a judge that made a private scratch tmpfs since
 * (scratch.c: a new mount namespace) has sandbox roots the template could
 * not reach. */
static char *make_key(const struct kj__spawn *s, size_t *len, int *oom)
{
	char *k, ns[64];
	struct stat st;

	*oom = 0;
	if (stat("/proc/self/ns/mnt", &st) < 0)
		return NULL;
	snprintf(ns, sizeof(ns), "mnt %llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	*len = key_fill(s, ns, NULL);
	if (!(k = malloc(*len))) {
		*oom = 1;
		return NULL;
	}
	key_fill(s, ns, k);
	return k;
}

/* The slot made free: out of the live list, its socket and key gone. */
static void clear(struct kj__template *t)
{
	kj__spawn_unlink(&t->link);
	close(t->sock);
	free(t->key);
	memset(t, 0, sizeof(*t));
	t->sock = -1;
}

/* A slot inherited through fork: forgotten, the template left to the
 * process that started it. */
static void forget(struct kj__template *t)
{
	if (t->pid && t->owner != getpid())
		clear(t);
}

/* The slot's template killed and reaped (unlinked before it is reaped,
 * spawn.h), the slot free. */
static void drop(struct kj__template *t)
{
	pid_t pid;

	forget(t);
	if (!(pid = t->pid))
		return;
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	clear(t);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* A template failed: it and every other one go, and none is started again. */
void kj__template_failed(void)
{
	int i;

	templates_off = 1;
	for (i = 0; i < MAX_TEMPLATES; i++)
		drop(&slots[i]);
}

void kj_proc_templates_release(void)
{
	int i;

	for (i = 0; i < MAX_TEMPLATES; i++)
		drop(&slots[i]);
}

/* One line from the template (at most size - 1 bytes), up to timeout_s.
 * 1 a line, 0 none (end of file, the deadline, a line too long), -1 the
 * signal guard fired. */
static int read_line(int fd, char *buf, size_t size, double timeout_s, int interruptible)
{
	double deadline = kj__now_s() + timeout_s;
	size_t n = 0;

	for (;;) {
		ssize_t r;
		int w;

		if (n + 1 >= size)
			return 0;
		w = kj__spawn_wait_readable(fd, deadline - kj__now_s(), interruptible);
		if (w == -1)
			return -1;
		if (w != 1)
			return 0;
		r = read(fd, buf + n, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return 0;
		if (buf[n] == '\n') {
			buf[n] = '\0';
			return 1;
		}
		n++;
	}
}

/* Start a template for s in slot t; KJ_OK, 1 when none could be started
 * (the caller clones), KJ_EINTR. */
static int start(struct kj__template *t, const struct kj__spawn *s, char *key, size_t key_len,
		 struct kj_error *err)
{
	struct kj__spawn ts;
	struct kj_error e;
	char line[256];
	int rc;

	memset(&ts, 0, sizeof(ts));
	ts.argv = s->sb->template_argv;
	ts.envp = s->envp;
	/* In the judge's own PID namespace: what its children leave must be
	 * re-parented to the judge. */
	ts.flags = KJ__SPAWN_PROTO;
	ts.link = &t->link;
	ts.oom_score_adj = s->oom_score_adj;
	kj_error_clear(&e);
	rc = kj__spawn(&ts, &e);
	if (rc == KJ_EINTR) {
		free(key);
		return kj_error_set(err, KJ_EINTR, "%s", e.msg);
	}
	if (rc == KJ_ENOMEM) {
		free(key);
		return kj_error_set(err, KJ_ENOMEM, "%s", e.msg);
	}
	if (rc != KJ_OK) {
		free(key);
		templates_off = 1;
		return 1;
	}
	t->pid = ts.pid;
	t->owner = getpid();
	t->sock = ts.proto;
	t->key = key;
	t->key_len = key_len;
	rc = read_line(t->sock, line, sizeof(line), READY_S, 1);
	if (rc < 0) {
		drop(t);
		return kj_error_set(err, KJ_EINTR, "interrupted while a worker template started");
	}
	if (rc == 0 || strcmp(line, "{\"ready\": true}")) {
		kj__template_failed();
		return 1;
	}
	return KJ_OK;
}

struct kj__template *kj__template_get(const struct kj__spawn *s, int *rc, struct kj_error *err)
{
	struct kj__template *t = NULL;
	size_t key_len = 0;
	char *key;
	int i, oom;

	*rc = KJ_OK;
	if (templates_off || !s->sb || !s->sb->template_argv || !s->sb->template_argv[0])
		return NULL;
	for (i = 0; i < MAX_TEMPLATES; i++)
		forget(&slots[i]);
	if (!(key = make_key(s, &key_len, &oom))) {
		if (oom)
			*rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
		return NULL;
	}
	for (i = 0; i < MAX_TEMPLATES; i++)
		if (slots[i].pid && slots[i].key_len == key_len &&
		    !memcmp(slots[i].key, key, key_len)) {
			siginfo_t si;

			t = &slots[i];
			memset(&si, 0, sizeof(si));
			/* One that died since is started again. */
			if (waitid(P_PID, (id_t)t->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
			    si.si_pid == t->pid) {
				drop(t);
				break;
			}
			free(key);
			t->used = ++uses;
			return t;
		}
	/* A free slot, else the one used longest ago. */
	for (i = 0; i < MAX_TEMPLATES; i++)
		if (!slots[i].pid) {
			t = &slots[i];
			break;
		}
	if (!t) {
		t = &slots[0];
		for (i = 1; i < MAX_TEMPLATES; i++)
			if (slots[i].used < t->used)
				t = &slots[i];
		drop(t);
	}
	*rc = start(t, s, key, key_len, err);
	if (*rc != KJ_OK) {
		*rc = *rc == 1 ? KJ_OK : *rc;
		return NULL;
	}
	t->used = ++uses;
	return t;
}

static int put_u32(char *p, size_t v)
{
	if (v > UINT32_MAX)
		return -1;
	p[0] = (char)(v & 0xff);
	p[1] = (char)((v >> 8) & 0xff);
	p[2] = (char)((v >> 16) & 0xff);
	p[3] = (char)((v >> 24) & 0xff);
	return 0;
}

/* The request's bytes: NULL when out of memory or too large. */
static char *request(const struct kj__spawn *s, const char *fdnames, size_t *len)
{
	/* Every allocation below: its failure is the judge's out of memory. */
	json_t *j = json_object(), *argv = json_array(), *env = json_array();
	char *text = NULL, *spec = NULL, *msg = NULL;
	size_t spec_len = 0, text_len, i;
	int bad = !j || !argv || !env, oom = 0;

	for (i = 0; !bad && s->argv[i]; i++)
		bad |= json_array_append_new(argv, json_string(s->argv[i])) < 0;
	for (i = 0; !bad && s->envp && s->envp[i]; i++)
		bad |= json_array_append_new(env, json_string(s->envp[i])) < 0;
	if (!bad) {
		bad |= json_object_set(j, "argv", argv) < 0;
		bad |= json_object_set(j, "env", env) < 0;
		bad |= json_object_set_new(j, "cwd", s->cwd ? json_string(s->cwd) : json_null()) < 0;
		bad |= json_object_set_new(j, "fds", json_string(fdnames)) < 0;
	}
	if (!bad)
		text = kj__json_dumps(j, JSON_COMPACT, &oom);
	if (text)
		spec = kj__sandbox_pack(s->sb, &spec_len);
	if (text && spec) {
		text_len = strlen(text);
		msg = malloc(8 + text_len + spec_len);
		if (msg && (put_u32(msg, 4 + text_len + spec_len) < 0 || put_u32(msg + 4, text_len) < 0)) {
			free(msg);
			msg = NULL;
		}
		if (msg) {
			memcpy(msg + 8, text, text_len);
			memcpy(msg + 8 + text_len, spec, spec_len);
			*len = 8 + text_len + spec_len;
		}
	}
	json_decref(j);
	json_decref(argv);
	json_decref(env);
	free(text);
	free(spec);
	return msg;
}

static int send_request(int sock, const char *msg, size_t len, const int *fds, size_t n_fds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 5)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { (void *)(uintptr_t)msg, len };
	struct msghdr m;
	struct cmsghdr *c;
	size_t sent = 0;

	memset(&m, 0, sizeof(m));
	memset(&u, 0, sizeof(u));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = u.buf;
	m.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
	while (sent < len) {
		ssize_t r;

		iov.iov_base = (void *)(uintptr_t)(msg + sent);
		iov.iov_len = len - sent;
		r = sendmsg(sock, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN) {
			struct pollfd p = { sock, POLLOUT, 0 };

			if (poll(&p, 1, (int)(ANSWER_S * 1000)) <= 0)
				return -1;
			continue;
		}
		if (r <= 0)
			return -1;
		sent += (size_t)r;
		/* The descriptors go with the first bytes only. */
		m.msg_control = NULL;
		m.msg_controllen = 0;
	}
	return 0;
}

pid_t kj__template_fork(struct kj__template *t, const struct kj__spawn *s, const int fds[5])
{
	char fdnames[4], line[256], *msg;
	int send[5];
	size_t n = 0, k = 0, len = 0;
	json_t *ans;
	pid_t pid = 0;
	long long v;
	siginfo_t si;
	int oom = 0;

	if (fds[0] >= 0)
		fdnames[k++] = 'o', send[n++] = fds[0];
	if (fds[1] >= 0)
		fdnames[k++] = 'e', send[n++] = fds[1];
	if (fds[2] >= 0)
		fdnames[k++] = 'p', send[n++] = fds[2];
	fdnames[k] = '\0';
	send[n++] = fds[3];
	send[n++] = fds[4];
	if (!(msg = request(s, fdnames, &len)))
		return -1;
	if (send_request(t->sock, msg, len, send, n) < 0 ||
	    read_line(t->sock, line, sizeof(line), ANSWER_S, 0) != 1) {
		free(msg);
		kj__template_failed();
		return 0;
	}
	free(msg);
	ans = kj__json_loadb(line, strlen(line), 0, NULL, &oom);
	if (oom) {
		/* The child (if any) waits for a go byte that never comes: it
		 * ends when the caller closes the sync socket. */
		kj__template_failed();
		return -1;
	}
	if (ans && json_is_integer(json_object_get(ans, "pid")))
		v = (long long)json_integer_value(json_object_get(ans, "pid"));
	else
		v = 0;
	json_decref(ans);
	if (v <= 1 || v > INT32_MAX) {
		kj__template_failed();
		return 0;
	}
	pid = (pid_t)v;
	/* It must be the judge's own child by now (re-parented to it): else
	 * the judge could neither wait for it nor reap it. */
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0) {
		kj__template_failed();
		return 0;
	}
	return pid;
}
