/*
 * audit.c - a task's audit: the canaries written as candidates, the
 * measurement step, each canary judged by kj_verify() in a child of its own,
 * and the verdicts folded into the task's (kjudge/audit.h, docs/AUDIT.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kjudge/audit.h"
#include "kjudge/dtype.h"
#include "kjudge/fileio.h"
#include "kjudge/pipeline.h"
#include "kjudge/proc.h"
#include "kjudge/torch.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/locate.h"
#include "runner/runner_internal.h"
#include "sandbox/program.h"
#include "audit_internal.h"
#include "base/banned.h"

/* The op name every audit's private directory uses: the task's own name
 * may not be one the runner takes ("level1/19_ReLU"), and nothing outside
 * the directory sees it. */
#define OP "task"

const char *const kj_audit_canary_names[KJ_AUDIT_N_ + 1] = {
#define KJ__AUDIT_NAME(e, name) name,
	KJ_AUDIT_CANARY_MAP(KJ__AUDIT_NAME)
#undef KJ__AUDIT_NAME
	NULL
};

const char *kj_audit_canary_name(enum kj_audit_canary c)
{
	return (unsigned)c < KJ_AUDIT_N_ ? kj_audit_canary_names[c] : "?";
}

const char *kj_audit_outcome_name(enum kj_audit_outcome o)
{
	switch (o) {
	case KJ_AUDIT_NA: return "n/a";
	case KJ_AUDIT_FAIL: return "fail";
	case KJ_AUDIT_PASS: return "pass";
	case KJ_AUDIT_ERROR: return "error";
	case KJ_AUDIT_SKIPPED: return "skipped";
	}
	return "error";
}

void kj_audit_result_init(struct kj_audit_result *r)
{
	memset(r, 0, sizeof(*r));
	r->lowp_ratio[0] = r->lowp_ratio[1] = (double)NAN;
}

void kj_audit_result_release(struct kj_audit_result *r)
{
	json_decref(r->reasons);
	json_decref(r->measure);
	kj_audit_result_init(r);
}

int kj__audit_helper(const struct kj_config *cfg, char *out, size_t size)
{
	char worker[PATH_MAX];
	const char *slash;

	/* Beside the torch worker the run uses: a worker the configuration
	 * names brings its helper with it. */
	if (cfg->worker)
		snprintf(worker, sizeof(worker), "%s", cfg->worker);
	else if (kj__beside_self("kjudge_worker.py", worker, sizeof(worker)) < 0)
		return -1;
	slash = strrchr(worker, '/');
	if (!slash || snprintf(out, size, "%.*s/kjudge_audit.py", (int)(slash - worker), worker) >=
		      (int)size)
		return -1;
	return kj__is_file(out) ? 0 : -1;
}

/* Copy the file at from to dir/name.  KJ_OK or a code with err filled. */
static int copy_in(const char *from, const char *dir, const char *name, struct kj_error *err)
{
	char to[PATH_MAX + 300];
	size_t len = 0;
	char *text = kj__read_file(from, 64u << 20, &len, err);
	int rc;

	if (!text)
		return err->code;
	snprintf(to, sizeof(to), "%s/%s", dir, name);
	rc = kj_write_file_atomic(to, text, len, err);
	free(text);
	return rc;
}

/* The comparator's thresholds by dtype name, as lib/tensor/dtype.c has
 * them: what the noise canary and the measurement read. */
json_t *kj__audit_thresholds(void)
{
	json_t *o = json_object();
	int d;

	for (d = 1; o && d < KJ_DTYPE_COUNT_; d++)
		if (json_object_set_new(o, kj_dtype_name((enum kj_dtype)d),
					json_real(kj_threshold_for_dtype((enum kj_dtype)d))) < 0) {
			json_decref(o);
			return NULL;
		}
	return o;
}

/* Write the candidate of canary c into dir: the task's source, then a
 * ModelNew around its Model that answers with the canary. */
static int write_canary(const char *dir, const char *source, size_t len, enum kj_audit_canary c,
			const char *thresholds, struct kj_error *err)
{
	char path[PATH_MAX + 300], tail[2048];
	char *text;
	int n, rc;

	n = snprintf(tail, sizeof(tail),
		     "\n\n# The canary '%s' of kjudge audit: the task's Model, wrapped.\n"
		     "import torch as _kja_torch\n"
		     "import kjudge_audit as _kja\n"
		     "_kja.THRESHOLDS.update(%s)\n\n\n"
		     "class ModelNew(_kja_torch.nn.Module):\n"
		     "    def __init__(self, *args, **kwargs):\n"
		     "        super().__init__()\n"
		     "        self.ref = Model(*args, **kwargs)\n\n"
		     "    def forward(self, *args):\n"
		     "        return _kja.canary(%s%s%s, self.ref, args,\n"
		     "                           globals().get(\"get_inputs\"))\n",
		     kj_audit_canary_name(c), thresholds, "\"", kj_audit_canary_name(c), "\"");
	if (n < 0 || (size_t)n >= sizeof(tail))
		return kj_error_set(err, KJ_EOVERFLOW, "the canary's source does not fit");
	text = malloc(len + (size_t)n + 1);
	if (!text)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	memcpy(text, source, len);
	memcpy(text + len, tail, (size_t)n + 1);
	snprintf(path, sizeof(path), "%s/" OP "_kjaudit_%s.py", dir, kj_audit_canary_name(c));
	rc = kj_write_file_atomic(path, text, len + (size_t)n, err);
	free(text);
	return rc;
}

/* The private verify directory: the task, its cases file, the helper,
 * every canary.  KJ_OK or a code with err filled. */
int kj__audit_layout(const struct kj_config *cfg, const char *dir, const char *task_file,
		     const char *cases_file, struct kj_error *err)
{
	char helper[PATH_MAX];
	size_t len = 0;
	char *source, *thr;
	json_t *t;
	int rc, c, oom = 0;

	if (kj__audit_helper(cfg, helper, sizeof(helper)) < 0)
		return kj_error_set(err, KJ_ENOENT, "the canaries' module kjudge_audit.py is "
				    "missing (it is installed beside the torch worker)");
	if ((rc = copy_in(task_file, dir, OP "_torch.py", err)) != KJ_OK ||
	    (cases_file && (rc = copy_in(cases_file, dir, OP "_cases.json", err)) != KJ_OK) ||
	    (rc = copy_in(helper, dir, "kjudge_audit.py", err)) != KJ_OK)
		return rc;
	source = kj__read_file(task_file, 64u << 20, &len, err);
	if (!source)
		return err->code;
	t = kj__audit_thresholds();
	thr = t ? kj__json_dumps(t, JSON_COMPACT, &oom) : NULL;
	json_decref(t);
	rc = thr ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
	for (c = 0; rc == KJ_OK && c < KJ_AUDIT_N_; c++)
		rc = write_canary(dir, source, len, (enum kj_audit_canary)c, thr, err);
	free(thr);
	free(source);
	return rc;
}

/* --- one canary judged, in a child ------------------------------------------ */

/* A case's end as the audit reads it. */
enum { CASE_PASS = 'p', CASE_REJECTED = 'f', CASE_OTHER = 'x' };

/* What the child hands back: per case, one of the codes above, and the
 * first case's that did not pass message. */
struct child_reply {
	int rc;                      /* KJ_OK: the cases below are the verdict */
	int device_memory;           /* a side said the device's memory ran out */
	int n_cases;
	char cases[KJ__AUDIT_MAX_CASES];
	char device[16];
	char msg[600];
};

/* The child's work: the canary's candidate judged as `kjudge verify`
 * judges one (kj_torch_open, kj_task_start, kj_verify). */
static void judge_canary(const struct kj_config *cfg, const struct kj_audit_opts *o,
			 const char *dir, enum kj_audit_canary c, const unsigned char batch[16],
			 struct child_reply *out)
{
	struct kj_torch_spec spec;
	struct kj_judge_opts judge;
	struct kj_attempt a;
	struct kj_task t;
	struct kj_result res;
	struct kj_error err;
	char impl[64];
	int rc, i, task_open = 0, attempt_open = 0;

	memset(&a, 0, sizeof(a));
	memset(&t, 0, sizeof(t));
	kj_result_init(&res);
	kj_torch_spec_init(&spec);
	kj_judge_opts_init(&judge);
	snprintf(impl, sizeof(impl), "kjaudit_%s", kj_audit_canary_name(c));
	spec.op_name = OP;
	spec.verify_dir = dir;
	spec.impl_name = impl;
	spec.device = o->device;
	if (o->timeout_s > 0)
		spec.timeout_s = judge.timeout_s = o->timeout_s;
	rc = kj_attempt_open(&a, cfg, &err);
	if (rc != KJ_OK)
		goto out;
	attempt_open = 1;
	rc = kj_seed_key(cfg->state_dir, a.key, &err);
	if (rc == KJ_OK) {
		a.have_key = 1;
		rc = kj_seed_run_key(a.key, batch, a.run_key, &err);
		a.run_key_shared = batch != NULL;
	}
	if (rc == KJ_OK && (rc = kj_torch_open(cfg, &a, &spec, &t, &err)) == KJ_OK)
		task_open = 1;
	if (rc == KJ_OK)
		rc = kj_task_start(&t, &a, &judge, &err);
	if (rc == KJ_OK)
		rc = kj_verify(&t, &a, &judge, NULL, &res, &err);
	if (rc == KJ_OK && res.n_cases > KJ__AUDIT_MAX_CASES)
		rc = kj_error_set(&err, KJ_ELIMIT, "the task has %d cases; the audit judges at "
				  "most %d", res.n_cases, KJ__AUDIT_MAX_CASES);
	if (rc == KJ_OK) {
		snprintf(out->device, sizeof(out->device), "%s", t.device);
		out->n_cases = res.n_cases;
		for (i = 0; i < res.n_cases; i++) {
			const struct kj_case *k = &res.cases[i];
			enum kj_status s = kj_case_status(k);

			if (s == KJ_STATUS_PASS)
				out->cases[i] = CASE_PASS;
			else if (s == KJ_STATUS_FAIL &&
				 kj_etype_category(k->type) == KJ_CAT_ACCURACY)
				out->cases[i] = CASE_REJECTED;
			else
				out->cases[i] = CASE_OTHER;
			if (s != KJ_STATUS_PASS && !out->msg[0])
				snprintf(out->msg, sizeof(out->msg), "case %d: %s: %.500s", i + 1,
					 kj_etype_name(k->type),
					 k->message ? k->message : kj_etype_text(k->type));
		}
	}
out:
	out->rc = rc;
	/* Whether the device's memory ran out, wherever it did (a call, the
	 * inputs, a model moved there as a worker loaded it): beside other
	 * canaries that is the audit's own appetite (kj__audit_judge_all). */
	out->device_memory = res.device_memory ||
			     (task_open && (t.ref.load_failure.device_memory ||
					    t.cand.load_failure.device_memory));
	if (rc != KJ_OK)
		snprintf(out->msg, sizeof(out->msg), "%.590s", err.msg);
	kj_result_release(&res);
	if (task_open)
		kj_task_close(&t);
	/* Only an attempt that opened: a failed open released what it made. */
	if (attempt_open)
		kj_attempt_close(&a);
}

/* One child's state in the parent. */
struct child {
	pid_t pid;
	int fd;
	enum kj_audit_canary c;
	int shared;                /* another canary ran while it did */
	size_t got;
	struct child_reply reply;
	double deadline;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int start_child(const struct kj_config *cfg, const struct kj_audit_opts *o,
		       const char *dir, enum kj_audit_canary c, const unsigned char batch[16],
		       double budget_s, struct child *ch, struct kj_error *err)
{
	int p[2];

	memset(ch, 0, sizeof(*ch));
	ch->c = c;
	if (pipe2(p, O_CLOEXEC) < 0)
		return kj_error_set(err, KJ_ESPAWN, "cannot make a pipe: %s", strerror(errno));
	ch->pid = fork();
	if (ch->pid < 0) {
		close(p[0]);
		close(p[1]);
		return kj_error_set(err, KJ_ESPAWN, "cannot fork: %s", strerror(errno));
	}
	if (ch->pid == 0) {
		struct child_reply r;
		const char *b = (const char *)&r;
		size_t off = 0;

		close(p[0]);
		memset(&r, 0, sizeof(r));
		judge_canary(cfg, o, dir, c, batch, &r);
		/* Its worker template goes with it, reaped (spawn.h, "Templates"). */
		kj_proc_templates_release();
		while (off < sizeof(r)) {
			ssize_t w = write(p[1], b + off, sizeof(r) - off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				_exit(3);
			off += (size_t)w;
		}
		_exit(0);
	}
	close(p[1]);
	ch->fd = p[0];
	ch->deadline = now_s() + budget_s;
	return KJ_OK;
}

/* Read what a child has written; 1 when its reply is whole or it ended. */
static int child_read(struct child *ch)
{
	ssize_t n = read(ch->fd, (char *)&ch->reply + ch->got, sizeof(ch->reply) - ch->got);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n > 0) {
		ch->got += (size_t)n;
		return ch->got == sizeof(ch->reply);
	}
	return 1;
}

/* Reap the child, and make its reply an error when it is not whole. */
static void child_end(struct child *ch, int killed)
{
	int status = 0;

	if (killed)
		kill(ch->pid, SIGKILL);
	while (waitpid(ch->pid, &status, 0) < 0 && errno == EINTR)
		;
	close(ch->fd);
	if (ch->got != sizeof(ch->reply) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		memset(&ch->reply, 0, sizeof(ch->reply));
		ch->reply.rc = KJ_EWORKER;
		snprintf(ch->reply.msg, sizeof(ch->reply.msg), "%s",
			 killed ? "the canary's judging did not end within its deadline"
				: "the canary's judging process ended without its verdict");
	}
}

/* Record a finished child's verdict in v. */
static void take(struct child *ch, struct kj__audit_verdict *v)
{
	v->done = 1;
	v->reply_rc = ch->reply.rc;
	v->device_memory = ch->reply.device_memory;
	v->shared = ch->shared;
	v->n_cases = ch->reply.n_cases;
	memcpy(v->cases, ch->reply.cases, sizeof(v->cases));
	snprintf(v->device, sizeof(v->device), "%s", ch->reply.device);
	snprintf(v->msg, sizeof(v->msg), "%s", ch->reply.msg);
	ch->pid = 0;
}

/* Judge the canaries of run[], jobs at once. */
static int pool(const struct kj_config *cfg, const struct kj_audit_opts *o, const char *dir,
		const int run[KJ_AUDIT_N_], int jobs, const unsigned char batch[16], double budget,
		struct kj__audit_verdict out[KJ_AUDIT_N_], struct kj_error *err)
{
	struct child kids[KJ_AUDIT_N_];
	int next = 0, live = 0, i, rc = KJ_OK;

	memset(kids, 0, sizeof(kids));
	for (;;) {
		struct pollfd pf[KJ_AUDIT_N_];
		int idx[KJ_AUDIT_N_], n = 0;
		double t;

		/* A signal the guard caught: every child goes (its workers
		 * with it, by their death signal) and no verdict is made. */
		if (kj_proc_interrupted()) {
			rc = kj_error_set(err, KJ_EINTR, "interrupted");
			break;
		}
		while (rc == KJ_OK && live < jobs && next < KJ_AUDIT_N_) {
			if (run[next]) {
				rc = start_child(cfg, o, dir, (enum kj_audit_canary)next, batch, budget,
						 &kids[next], err);
				if (rc != KJ_OK)
					break;
				/* Those running now and this one share the device. */
				for (i = 0; i < KJ_AUDIT_N_; i++)
					if (kids[i].pid > 0 && i != next) {
						kids[i].shared = 1;
						kids[next].shared = 1;
					}
				live++;
			}
			next++;
		}
		if (!live)
			break;
		t = now_s();
		for (i = 0; i < KJ_AUDIT_N_; i++)
			if (kids[i].pid > 0) {
				if (t >= kids[i].deadline) {
					child_end(&kids[i], 1);
					take(&kids[i], &out[i]);
					live--;
					continue;
				}
				pf[n].fd = kids[i].fd;
				pf[n].events = POLLIN;
				idx[n++] = i;
			}
		if (!n)
			continue;
		if (poll(pf, (nfds_t)n, 1000) < 0 && errno != EINTR)
			break;
		for (i = 0; i < n; i++) {
			struct child *ch = &kids[idx[i]];

			if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)) || !child_read(ch))
				continue;
			child_end(ch, 0);
			take(ch, &out[idx[i]]);
			live--;
		}
	}
	/* Whatever is still running (an interrupted poll) goes. */
	for (i = 0; i < KJ_AUDIT_N_; i++)
		if (kids[i].pid > 0)
			child_end(&kids[i], 1);
	return rc;
}

int kj__audit_judge_all(const struct kj_config *cfg, const struct kj_audit_opts *o,
			const char *dir, const int run[KJ_AUDIT_N_], int n_cases,
			struct kj__audit_verdict out[KJ_AUDIT_N_], struct kj_error *err)
{
	unsigned char batch[16];
	int jobs = o->jobs > 0 ? o->jobs : 1, again[KJ_AUDIT_N_], n_again = 0, c, rc;
	double per_request = o->timeout_s > 0 ? o->timeout_s : 900;
	/* Both sides' requests of every case, twice over for the start. */
	double budget = per_request * 2 * (n_cases + 2);
	FILE *rnd = fopen("/dev/urandom", "rbe");

	if (!rnd || fread(batch, 1, sizeof(batch), rnd) != sizeof(batch)) {
		if (rnd)
			fclose(rnd);
		return kj_error_set(err, KJ_EIO, "no random bytes for the canaries' seeds");
	}
	fclose(rnd);
	rc = pool(cfg, o, dir, run, jobs, batch, budget, out, err);
	if (rc != KJ_OK)
		return rc;
	/* A canary whose side ran out of the device's memory while other
	 * canaries held it is no verdict: the audit's own appetite, not the
	 * task's weakness nor its strength.  Judged again alone, where an
	 * exhausted device is the task's own size (and says so). */
	for (c = 0; c < KJ_AUDIT_N_; c++) {
		again[c] = run[c] && out[c].done && out[c].device_memory && out[c].shared;
		n_again += again[c];
	}
	if (!n_again)
		return KJ_OK;
	for (c = 0; c < KJ_AUDIT_N_; c++)
		if (again[c]) {
			memset(&out[c], 0, sizeof(out[c]));
			out[c].again = 1;
		}
	return pool(cfg, o, dir, again, 1, batch, budget, out, err);
}

int kj__audit_stage(const struct kj_config *cfg, const struct kj_audit_opts *o,
		    const char *task_file, const char *cases_file, int sol_only,
		    char dir[PATH_MAX], json_t **measure, struct kj_error *err)
{
	const char *tmp = kj_config_env(cfg, "TMPDIR");
	char cases_copy[PATH_MAX + 32], sha[65];
	json_t *params = NULL, *peaks = NULL;
	int rc;

	*measure = NULL;
	snprintf(dir, PATH_MAX, "%s/kjudge-audit-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		rc = kj_error_set(err, KJ_EIO, "cannot make a directory in '%s': %s",
				  tmp && *tmp ? tmp : "/tmp", strerror(errno));
		*dir = '\0';
		return rc;
	}
	rc = kj__audit_layout(cfg, dir, task_file, cases_file, err);
	if (rc == KJ_OK && cases_file) {
		snprintf(cases_copy, sizeof(cases_copy), "%s/task_cases.json", dir);
		rc = kj__cases_load(cases_copy, &params, sha, err);
	}
	if (rc == KJ_OK) {
		peaks = kj__audit_peaks_get(cfg, o);
		rc = kj__audit_measure(cfg, o, dir, params, peaks, sol_only, measure, err);
	}
	/* The device's peak rates, measured once and kept for the next. */
	if (rc == KJ_OK && !json_equal(peaks, json_object_get(*measure, "peaks")))
		kj__audit_peaks_put(cfg, o, json_object_get(*measure, "peaks"));
	json_decref(params);
	json_decref(peaks);
	return rc;
}
