/*
 * server.c - the server's state (kjudge/serve.h): the store, a run of it,
 * the accepted requests, their answers and the metrics; its opening and
 * closing.  The dispatcher that judges the requests, each in a child
 * process of its own, through eval's batch runner and eval's attempt
 * (kj_eval_pool_run, kj_eval_attempt), is dispatch.c.
 *
 * Theory of operation.
 *
 *   http thread                      dispatcher (the caller of kj_serve_run)
 *   -----------                      ----------
 *   parse, stage a task given by
 *   source and discover it (its key)
 *   under mu: row committed
 *   (kj_store_serve_submit), queued,
 *   202                              next(): under mu, the fair queue's next,
 *                                    its row 'running'; fork (the pool)
 *                                         child: its row read from the store,
 *                                         its task staged, kj_eval_attempt
 *                                    finished(): under mu, its row 'done',
 *   GET ?wait: under mu, the row;    the metrics, `changed` broadcast
 *   not done: wait on `changed`
 *
 * One store connection, under mu, serves both: SQLite's own lock orders it
 * with the judging children's connections (busy timeout 30 s).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "kjudge/fileio.h"
#include "serve/serve_internal.h"
#include "base/fs.h"
#include "base/hash.h"
#include "base/internal.h"
#include "base/json.h"
#include "base/banned.h"

/* jansson's, through base/json.c's guards (a failed allocation is a NULL). */
static json_t *loadb(const char *b, size_t n, size_t flags, json_error_t *je)
{
	int oom;

	return kj__json_loadb(b, n, flags, je, &oom);
}

const double kj__serve_buckets[KJ__SERVE_BUCKETS] = { 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600 };

/* The statuses /metrics counts, in the order of kj_serve.finished. */
const char *const kj__serve_finish_names[5] = { "pass", "fail", "task_error", "judge_error",
					     "cancelled" };

/* --- tasks given by their source --------------------------------------------------------- */

/* The task's source (and cases) as a verify directory of one task, named
 * task_HASH12 by its content, in dir (made), discovered into set. */
int kj__serve_stage_task(const char *dir, const char *src, size_t len, const char *cases,
		      struct kj_eval_set *set, struct kj_error *err)
{
	char hex[KJ_SHA256_HEX], name[64], *both;
	size_t clen = cases ? strlen(cases) : 0;
	int fd, rc;

	both = malloc(len + clen + 1);
	if (!both)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	memcpy(both, src, len);
	both[len] = '\0';
	if (cases)
		memcpy(both + len + 1, cases, clen);
	rc = kj__sha256_hex(both, len + 1 + clen, hex);
	free(both);
	if (rc != 0)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return kj_error_write(err, errno, dir, "cannot make the task's directory");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return kj_error_write(err, errno, dir, "cannot open the task's directory");
	snprintf(name, sizeof(name), "task_%.12s_torch.py", hex);
	rc = kj__write_file_at(fd, name, src, len, 0600, err);
	if (rc == KJ_OK && cases) {
		snprintf(name, sizeof(name), "task_%.12s_cases.json", hex);
		rc = kj__write_file_at(fd, name, cases, clen, 0600, err);
	}
	close(fd);
	return rc == KJ_OK ? kj_eval_discover_suite(dir, set, err) : rc;
}

/* The suite's task of that name: its index, or -1. */
int kj__serve_task_named(const struct kj_eval_set *set, const char *name)
{
	size_t i;

	for (i = 0; i < set->n_tasks; i++)
		if (strcmp(set->tasks[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* The settings' text of a request (what its attempt key hashes). */
char *kj__serve_settings_text(const struct kj_serve *s, const char *mode, const char *options)
{
	struct kj_eval_settings es;
	struct kj_error err;
	json_t *j;
	char *text;

	kj_serve_settings(s->o.base, mode, options, &es);
	j = kj_eval_settings_json(&es);
	text = j ? kj_json_text(j, JSON_COMPACT | JSON_SORT_KEYS, &err) : NULL;
	json_decref(j);
	return text;
}

/* A made id: 'e' and 24 random hex digits. */
static int make_id(char *id, size_t size)
{
	unsigned char b[12];
	size_t i;

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b) || size < 26)
		return -1;
	id[0] = 'e';
	for (i = 0; i < sizeof(b); i++)
		snprintf(id + 1 + 2 * i, 3, "%02x", b[i]);
	return 0;
}

/* kj__serve_submit under mu: the whole of it, the task's staging and
 * hashing too, so that no thread is inside SQLite or libcrypto when the
 * dispatcher forks (fork_prepare). */
static enum kj__serve_verdict submit_locked(struct kj_serve *s, const struct kj_serve_req *r,
					    char *id, size_t size, struct kj_error *err)
{
	struct kj_eval_set set;
	struct kj_store_task row;
	struct kj_store_serve_req sr;
	const struct kj_eval_task *t;
	struct kj_eval_cand c;
	char made[32], stage[PATH_MAX + 32], key[65], *settings = NULL;
	const char *dev_kind = s->o.base->device;
	int have_row = 0, ti;
	enum kj__serve_verdict v = KJ__SERVE_FAILED;

	if (kj__serve_draining(s))
		return KJ__SERVE_DRAINING;
	kj_eval_set_init(&set);
	*stage = '\0';
	if (r->task_name) {
		ti = kj__serve_task_named(s->o.suite, r->task_name);
		if (ti < 0) {
			kj_error_set(err, KJ_ENOENT, "task.name: no task '%s' in the server's suite",
				     r->task_name);
			return KJ__SERVE_NO_TASK;
		}
		t = &s->o.suite->tasks[ti];
	} else {
		/* Staged and discovered as the judging child will: the same
		 * key, and a task that cannot be read is refused now. */
		snprintf(stage, sizeof(stage), "%s/stage-XXXXXX", s->work);
		if (!mkdtemp(stage)) {
			kj_error_write(err, errno, stage, "cannot make a directory");
			return KJ__SERVE_FAILED;
		}
		if (kj__serve_stage_task(stage, r->task_source, r->task_source_len, r->task_cases, &set,
			       err) != KJ_OK || set.n_tasks != 1) {
			if (set.n_tasks > 1)
				kj_error_set(err, KJ_EINVAL, "task: not one task");
			v = err->code == KJ_ENOMEM ? KJ__SERVE_FAILED : KJ__SERVE_BAD;
			goto out;
		}
		t = &set.tasks[0];
		if (kj_eval_task_row(t, &row, err) != KJ_OK)
			goto out;
		have_row = 1;
	}
	if (!r->id && make_id(made, sizeof(made)) != 0) {
		kj_error_set(err, KJ_EIO, "getrandom: %s", strerror(errno));
		goto out;
	}
	/* The attempt key eval would give it (kj_eval_attempt_key). */
	memset(&c, 0, sizeof(c));
	c.model = r->model;
	c.attempt = r->attempt ? r->attempt : r->id ? r->id : made;
	settings = kj__serve_settings_text(s, r->mode, r->options);
	if (!settings || kj__sha256_hex(r->source, r->source_len, c.sha256) != 0 ||
	    kj_eval_attempt_key(t, &c, dev_kind, settings, key, err) != KJ_OK) {
		kj_error_set(err, KJ_ENOMEM, "out of memory");
		goto out;
	}
	memset(&sr, 0, sizeof(sr));
	sr.id = r->id ? r->id : made;
	sr.model = r->model;
	sr.attempt = c.attempt;
	sr.mode = r->mode;
	sr.options = r->options;
	sr.task_key = t->key;
	sr.task_name = t->name;
	sr.by_name = r->task_name != NULL;
	sr.source = r->source;
	sr.source_len = r->source_len;
	sr.attempt_key = key;
	sr.deadline_s = r->deadline_s;
	if (kj__serve_draining(s)) {
		v = KJ__SERVE_DRAINING;
	} else if (kj_serve_queue_depth(s->q) >= (size_t)s->o.queue_max) {
		v = KJ__SERVE_FULL;
	} else if (kj_store_serve_submit(s->store, s->run_id, have_row ? &row : NULL, &sr, id,
					 size, err) == KJ_OK) {
		json_t *got = NULL;

		v = KJ__SERVE_ACCEPTED;
		if (!*id) {
			/* New: queued, in memory as in the store. */
			snprintf(id, size, "%s", sr.id);
			if (kj_store_serve_get(s->store, id, 0, &got, err) == KJ_OK && got) {
				json_int_t seq = json_integer_value(json_object_get(got, "seq"));
				char k[32];

				snprintf(k, sizeof(k), "%lld", (long long)seq);
				json_object_set_new(s->since, k, json_real(kj__now_s()));
				if (kj_serve_queue_push(s->q, seq, r->model) != KJ_OK)
					v = KJ__SERVE_FAILED;
			}
			json_decref(got);
		}
	}
out:
	if (have_row)
		kj_eval_task_row_release(&row);
	kj_eval_set_release(&set);
	if (*stage)
		kj__rm_rf(stage);
	free(settings);
	return v;
}

enum kj__serve_verdict kj__serve_submit(struct kj_serve *s, const struct kj_serve_req *r,
					char *id, size_t size, struct kj_error *err)
{
	enum kj__serve_verdict v;

	pthread_mutex_lock(&s->mu);
	v = submit_locked(s, r, id, size, err);
	pthread_mutex_unlock(&s->mu);
	return v;
}

/* --- answers ------------------------------------------------------------------------------ */

/* The answer of a request's row (under mu). */
static json_t *answer_of(struct kj_serve *s, const json_t *row, struct kj_error *err)
{
	const char *state = json_string_value(json_object_get(row, "state"));
	json_t *a = json_pack("{s:O, s:s, s:O, s:O, s:O, s:O, s:O}", "id",
			      json_object_get(row, "id"), "status",
			      strcmp(state, "cancelled") == 0 ? "cancelled"
			      : strcmp(state, "done") == 0 ? "done" : state,
			      "model", json_object_get(row, "model"), "attempt",
			      json_object_get(row, "attempt"), "task",
			      json_object_get(row, "task_name"), "mode",
			      json_object_get(row, "mode"), "submitted_at",
			      json_object_get(row, "submitted_at"));
	const char *outcome = json_string_value(json_object_get(row, "outcome"));
	json_t *res = NULL;

	if (!a)
		return NULL;
	if (strcmp(state, "done") == 0 || strcmp(state, "cancelled") == 0)
		json_object_set(a, "finished_at", json_object_get(row, "finished_at"));
	if (outcome) {
		/* The judge's own failure, or why it was not judged. */
		res = loadb(outcome, strlen(outcome), 0, NULL);
	} else if (strcmp(state, "done") == 0) {
		if (kj_store_serve_result(s->store, json_string_value(json_object_get(row,
						"attempt_key")), &res, err) != KJ_OK) {
			json_decref(a);
			return NULL;
		}
		if (res)
			json_object_del(res, "state");
	}
	if (res && json_object_set_new(a, "result", res)) {
		json_decref(a);
		return NULL;
	}
	return a;
}

json_t *kj__serve_answer(struct kj_serve *s, const char *id, double wait_s, int *found,
			 struct kj_error *err)
{
	double until = kj__now_s() + wait_s;
	json_t *row = NULL, *a = NULL;

	*found = 0;
	pthread_mutex_lock(&s->mu);
	for (;;) {
		const char *state;

		json_decref(row);
		row = NULL;
		if (kj_store_serve_get(s->store, id, 0, &row, err) != KJ_OK || !row)
			break;
		*found = 1;
		state = json_string_value(json_object_get(row, "state"));
		if (!state || strcmp(state, "done") == 0 || strcmp(state, "cancelled") == 0 ||
		    s->closing || kj__now_s() >= until) {
			break;
		} else {
			double left = until - kj__now_s();
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			if (left > 1)
				left = 1;
			ts.tv_sec += (time_t)left;
			ts.tv_nsec += (long)((left - floor(left)) * 1e9);
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&s->changed, &s->mu, &ts);
		}
	}
	if (row) {
		a = answer_of(s, row, err);
		if (!a && !err->code)
			kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	pthread_mutex_unlock(&s->mu);
	json_decref(row);
	return a;
}

/* A judging child and its process group, killed (SIGKILL: nothing of an
 * evaluation it was judging is committed after it). */
void kj__serve_kill_child(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
}

int kj__serve_cancel(struct kj_serve *s, const char *id, char *state, size_t size,
		     struct kj_error *err)
{
	json_t *row = NULL;
	int rc = -1, changed = 0;

	pthread_mutex_lock(&s->mu);
	if (kj_store_serve_get(s->store, id, 0, &row, err) != KJ_OK) {
		rc = -2;
	} else if (row) {
		long long seq = json_integer_value(json_object_get(row, "seq"));
		const char *st = json_string_value(json_object_get(row, "state"));

		snprintf(state, size, "%s", st);
		rc = 0;
		if (strcmp(st, "running") == 0) {
			/* Its judging child (and the workers under it) killed:
			 * the dispatcher then ends it as cancelled, unless its
			 * verdict was committed first.  One not forked yet is
			 * killed as it starts (started, dispatch.c). */
			char k[32];
			json_t *pid;

			snprintf(k, sizeof(k), "%lld", seq);
			rc = 2;
			if (json_object_set_new(s->cancel, k, json_true()) != 0) {
				rc = -2;
				kj_error_set(err, KJ_ENOMEM, "out of memory");
			} else if ((pid = json_object_get(s->pids, k)) != NULL) {
				kj__serve_kill_child((pid_t)json_integer_value(pid));
			}
		} else if (strcmp(st, "queued") == 0) {
			if (kj_store_serve_set_state(s->store, seq, "queued", "cancelled", NULL,
						     &changed, err) != KJ_OK) {
				rc = -2;
			} else if (changed) {
				kj_serve_queue_remove(s->q, seq);
				s->finished[4]++;
				snprintf(state, size, "cancelled");
				pthread_cond_broadcast(&s->changed);
			}
		}
	}
	pthread_mutex_unlock(&s->mu);
	json_decref(row);
	return rc;
}

/* --- metrics ------------------------------------------------------------------------------- */

struct text {
	char *p;
	size_t n, cap;
	int oom;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int k;

	for (;;) {
		va_start(ap, fmt);
		k = vsnprintf(t->p ? t->p + t->n : NULL, t->p ? t->cap - t->n : 0, fmt, ap);
		va_end(ap);
		if (k < 0) {
			t->oom = 1;
			return;
		}
		if (t->p && t->n + (size_t)k < t->cap) {
			t->n += (size_t)k;
			return;
		}
		{
			size_t cap = (t->cap + (size_t)k + 1) * 2;
			char *p = realloc(t->p, cap);

			if (!p) {
				t->oom = 1;
				return;
			}
			t->p = p;
			t->cap = cap;
		}
	}
}

char *kj__serve_metrics(struct kj_serve *s)
{
	struct text t = { 0 };
	const char *dev;
	json_t *v;
	long long cum = 0;
	int i;

	pthread_mutex_lock(&s->mu);
	put(&t, "# HELP kjudge_serve_queue_depth Evaluations accepted and waiting.\n"
	    "# TYPE kjudge_serve_queue_depth gauge\nkjudge_serve_queue_depth %zu\n",
	    kj_serve_queue_depth(s->q));
	put(&t, "# HELP kjudge_serve_running Evaluations being judged.\n"
	    "# TYPE kjudge_serve_running gauge\nkjudge_serve_running %lld\n", s->running);
	put(&t, "# HELP kjudge_serve_finished_total Evaluations ended, by status.\n"
	    "# TYPE kjudge_serve_finished_total counter\n");
	for (i = 0; i < 5; i++)
		put(&t, "kjudge_serve_finished_total{status=\"%s\"} %lld\n", kj__serve_finish_names[i],
		    s->finished[i]);
	put(&t, "# HELP kjudge_serve_device_busy_seconds_total Seconds of judging, by "
	    "device.\n# TYPE kjudge_serve_device_busy_seconds_total counter\n");
	json_object_foreach(s->busy, dev, v)
		put(&t, "kjudge_serve_device_busy_seconds_total{device=\"%s\"} %.3f\n", dev,
		    json_real_value(v));
	put(&t, "# HELP kjudge_serve_latency_seconds From acceptance to result.\n"
	    "# TYPE kjudge_serve_latency_seconds histogram\n");
	for (i = 0; i < KJ__SERVE_BUCKETS; i++) {
		cum += s->hist[i];
		put(&t, "kjudge_serve_latency_seconds_bucket{le=\"%g\"} %lld\n",
		    kj__serve_buckets[i], cum);
	}
	cum += s->hist[KJ__SERVE_BUCKETS];
	put(&t, "kjudge_serve_latency_seconds_bucket{le=\"+Inf\"} %lld\n"
	    "kjudge_serve_latency_seconds_sum %.3f\nkjudge_serve_latency_seconds_count %lld\n",
	    cum, s->lat_sum, cum);
	pthread_mutex_unlock(&s->mu);
	if (t.oom) {
		free(t.p);
		return NULL;
	}
	return t.p;
}

/* --- fork ---------------------------------------------------------------------------------- */

/*
 * The dispatcher forks a judging child while the HTTP threads go on.  A
 * thread inside SQLite or libcrypto at that moment would leave their
 * global locks held in the child, whose own store connection would then
 * wait forever.  Every use of them in the server's threads is under mu, so
 * mu is taken around each fork of the process: the child starts with none
 * of those locks held.  One server a process (kj_serve_open refuses a
 * second).
 */
static struct kj_serve *forking;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void)
{
	if (forking)
		pthread_mutex_lock(&forking->mu);
}

static void fork_after(void)
{
	if (forking)
		pthread_mutex_unlock(&forking->mu);
}

static void fork_register(void)
{
	pthread_atfork(fork_prepare, fork_after, fork_after);
}

/* --- open, run, close ---------------------------------------------------------------------- */

/* The listening socket: TCP on host:port, or a unix socket (mode 0600). */
static int bind_socket(struct kj_serve *s, struct kj_error *err)
{
	const struct kj_serve_opts *o = &s->o;
	int fd = -1, one = 1;

	if (o->socket_path) {
		struct sockaddr_un un;
		mode_t old;

		memset(&un, 0, sizeof(un));
		un.sun_family = AF_UNIX;
		if (strlen(o->socket_path) >= sizeof(un.sun_path))
			return kj_error_set(err, KJ_EINVAL, "--socket: '%s' is too long for a unix "
					    "socket", o->socket_path);
		snprintf(un.sun_path, sizeof(un.sun_path), "%s", o->socket_path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		old = umask(0177);
		if (fd < 0 || bind(fd, (struct sockaddr *)&un, sizeof(un)) != 0) {
			int e = errno;

			umask(old);
			if (fd >= 0)
				close(fd);
			return kj_error_set(err, e == EADDRINUSE ? KJ_EBUSY : KJ_EIO, "'%s': %s",
					    o->socket_path, strerror(e));
		}
		umask(old);
		chmod(o->socket_path, 0600);
		snprintf(s->address, sizeof(s->address), "unix:%s", o->socket_path);
	} else {
		struct addrinfo hints, *ai = NULL;
		char port[16], host[NI_MAXHOST], serv[NI_MAXSERV];
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int rc;

		memset(&hints, 0, sizeof(hints));
		hints.ai_socktype = SOCK_STREAM;
		hints.ai_flags = AI_NUMERICSERV;
		snprintf(port, sizeof(port), "%d", o->port);
		rc = getaddrinfo(o->host, port, &hints, &ai);
		if (rc != 0)
			return kj_error_set(err, KJ_EINVAL, "--listen: '%s': %s", o->host,
					    gai_strerror(rc));
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0)
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
			int e = errno;

			freeaddrinfo(ai);
			if (fd >= 0)
				close(fd);
			return kj_error_set(err, e == EADDRINUSE ? KJ_EBUSY : KJ_EIO, "--listen "
					    "%s:%d: %s", o->host, o->port, strerror(e));
		}
		freeaddrinfo(ai);
		if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0 ||
		    getnameinfo((struct sockaddr *)&ss, len, host, sizeof(host), serv,
				sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
			close(fd);
			return kj_error_set(err, KJ_EIO, "--listen: the bound address: %s",
					    strerror(errno));
		}
		snprintf(s->address, sizeof(s->address), strchr(host, ':') ? "http://[%s]:%s"
			 : "http://%s:%s", host, serv);
	}
	if (listen(fd, 128) != 0) {
		close(fd);
		return kj_error_set(err, KJ_EIO, "listen: %s", strerror(errno));
	}
	s->listen_fd = fd;
	return KJ_OK;
}

/* The run of the store (eval's study, kj_eval_study_begin: the batch's
 * secret bytes, the run's row with --suite's tasks), the requests a killed
 * server left, and the queue as the store holds it. */
static int begin_run(struct kj_serve *s, struct kj_error *err)
{
	char *settings = kj__serve_settings_text(s, "full", NULL);
	struct kj_eval_study_opts so = { .argc = s->o.argc, .argv = s->o.argv,
					 .suite = s->o.suite_dir ? s->o.suite_dir : "",
					 .cands = "serve", .settings_text = settings,
					 .device = s->o.base->device };
	json_t *queued = NULL, *e;
	size_t i;
	int rc = settings ? kj_eval_study_begin(&s->study, s->o.cfg, s->o.suite, &so, err)
			  : kj_error_set(err, KJ_ENOMEM, "out of memory");

	free(settings);
	s->store = s->study.store;
	s->run_id = s->study.run_id;
	memcpy(s->batch, s->study.batch, sizeof(s->batch));
	if (rc == KJ_OK)
		rc = kj_store_serve_open(s->store, s->run_id, err);
	if (rc == KJ_OK)
		rc = kj_store_serve_queued(s->store, &queued, err);
	json_array_foreach(queued, i, e) {
		char k[32];
		long long seq = json_integer_value(json_array_get(e, 0));

		snprintf(k, sizeof(k), "%lld", seq);
		json_object_set_new(s->since, k, json_real(kj__now_s()));
		if (rc == KJ_OK)
			rc = kj_serve_queue_push(s->q, seq, json_string_value(json_array_get(e, 1)));
	}
	json_decref(queued);
	return rc;
}

int kj_serve_open(const struct kj_serve_opts *o, struct kj_serve **out, struct kj_error *err)
{
	struct kj_serve *s = calloc(1, sizeof(*s));
	int rc;

	*out = NULL;
	if (!s)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	if (forking) {
		free(s);
		return kj_error_set(err, KJ_EBUSY, "a server is already open in this process");
	}
	s->o = *o;
	kj_eval_study_init(&s->study);
	s->listen_fd = -1;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->changed, NULL);
	pthread_once(&fork_once, fork_register);
	forking = s;
	s->q = kj_serve_queue_new();
	s->alone = kj_serve_queue_new();
	s->busy = json_object();
	s->since = json_object();
	s->pids = json_object();
	s->cancel = json_object();
	if (!s->q || !s->alone || !s->busy || !s->since || !s->pids || !s->cancel) {
		kj_serve_close(s);
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	/* One judge per store, as eval: a second would take this one's
	 * running requests for a killed server's.  The children of a killed
	 * server die with it, and their lock with them: a few seconds. */
	rc = kj_eval_study_open(&s->study, o->db_path, 30, err);
	/* The server's directory beside the store (staged tasks, the
	 * devices' locks): what a killed server left there is removed, as
	 * the store's lock says no other server uses it. */
	if (rc == KJ_OK) {
		snprintf(s->work, sizeof(s->work), "%s.serve", o->db_path);
		kj__rm_rf(s->work);
		if (mkdir(s->work, 0700) != 0) {
			rc = kj_error_write(err, errno, s->work, "cannot make the server's directory");
			*s->work = '\0';
		}
	}
	if (rc == KJ_OK)
		rc = begin_run(s, err);
	if (rc == KJ_OK)
		rc = bind_socket(s, err);
	if (rc == KJ_OK)
		rc = kj__serve_http_start(s, err);
	if (rc != KJ_OK) {
		kj_serve_close(s);
		return rc;
	}
	*out = s;
	return KJ_OK;
}

const char *kj_serve_address(const struct kj_serve *s)
{
	return s->address;
}

void kj_serve_close(struct kj_serve *s)
{
	struct kj_error err;

	if (!s)
		return;
	kj__serve_http_stop(s);
	forking = NULL;
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->o.socket_path && strncmp(s->address, "unix:", 5) == 0)
		unlink(s->o.socket_path);
	if (s->study.store && s->study.run_id)
		kj_eval_study_end(&s->study, &err);
	kj_eval_study_close(&s->study);
	if (*s->work)
		kj__rm_rf(s->work);
	kj_serve_queue_free(s->q);
	kj_serve_queue_free(s->alone);
	json_decref(s->busy);
	json_decref(s->since);
	json_decref(s->pids);
	json_decref(s->cancel);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->changed);
	free(s);
}
