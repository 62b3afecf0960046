/*
 * torch.c - the torch runner: the two sides of a task in the
 * triton-op-verifier layout, each a Python worker (see kjudge/torch.h).
 *
 * Theory of operation.
 *
 *   judge                                    reference worker (plain process)
 *     hello -> versions, device      <-fd 3->  imports torch
 *     load_task -> cases                       imports {op}_torch, counts cases
 *     load                                     finds Model
 *     run / time -> outputs as .npy            in the stage directory
 *
 *   judge                                    candidate worker (sandbox)
 *     hello, load_task                <-fd 3->  the task view (no Model)
 *     load                                     imports {op}_{impl}: the first
 *                                              candidate code that runs
 *     run / time -> outputs as .npy            in its own directory
 *
 * The candidate's module is loaded by a request of its own, after the task
 * file was imported by another: whatever fails before it is not the
 * candidate's doing, whatever fails from it on is, whatever its worker
 * says.  Replies are parsed defensively (kjudge/value.h for outputs) and
 * every text in them is cleaned (base/text.h) before it is kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kjudge/fileio.h"
#include "kjudge/pipeline.h"
#include "kjudge/proc.h"
#include "kjudge/runner.h"
#include "kjudge/sandbox.h"
#include "kjudge/torch.h"
#include "kjudge/value.h"
#include "base/fs.h"
#include "base/hash.h"
#include "base/locate.h"
#include "base/text.h"
#include "base/json.h"
#include "runner/runner_internal.h"

/* Bytes of a worker's stderr (or stdout) shown with a failure. */
#define TAIL_BYTES 1500
/* Helper modules beside a candidate that its sandbox gets, at most. */
#define HELPERS_MAX_BYTES (256LL << 20)

void kj_torch_spec_init(struct kj_torch_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->verify_dir = ".";
	s->impl_name = "triton_ascend_impl";
	s->timeout_s = 900;
}

/* --- a growable list of strings --------------------------------------------------- */

struct strv {
	char **v;
	size_t n, cap;
};

static int strv_add(struct strv *s, char *owned)
{
	if (!owned)
		return -1;
	if (s->n + 2 > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		char **v = realloc(s->v, cap * sizeof(*v));

		if (!v) {
			free(owned);
			return -1;
		}
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = owned;
	s->v[s->n] = NULL;
	return 0;
}

static int strv_addf(struct strv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int strv_addf(struct strv *s, const char *fmt, ...)
{
	char *p = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&p, fmt, ap);
	va_end(ap);
	return n < 0 ? -1 : strv_add(s, p);
}

static void strv_free(struct strv *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* --- the task's state --------------------------------------------------------------- */

struct tside;

struct ttask {
	const struct kj_config *cfg;
	struct kj_attempt *a;
	struct kj_task *t;
	char python[PATH_MAX];
	char worker[PATH_MAX];
	char timer[PATH_MAX];           /* kjudge_timer.so, beside the worker */
	char dir[PATH_MAX];             /* the verify directory (real path) */
	char task_mod[256], cand_mod[384];
	int ref_compiled;       /* the reference is torch.compile(Model) */
	char device_req[16];
	double timeout_s;
	struct strv env, cenv;          /* the two workers' environments */
	/* the sandbox */
	struct kj_sandbox sb;
	struct strv sb_paths;           /* strings the sandbox's lists point to */
	char sb_root[PATH_MAX];
	char cand_src[PATH_MAX];        /* what the candidate sees of the task */
	char cand_home[PATH_MAX];
	char ref_home[PATH_MAX];
	/* The reference's sandbox: the same kind as the candidate's (its
	 * namespaces, seccomp filter, cgroup and limits), so that both are
	 * timed under the same conditions, with a view of its own: the task's
	 * directory, its output directories and the bytecode tree. */
	struct kj_sandbox rsb;
	char rsb_root[PATH_MAX];
	int ref_prepared;
	/* The candidate's own files (its home, its output directory): a
	 * tmpfs of their own, of quota_bytes (the larger of 256 MiB and twice
	 * the task's outputs), where the run's scratch is a private mount
	 * namespace; quota_bytes is 0 where there is none. */
	char cand_files[PATH_MAX];
	unsigned long long quota_bytes;
	char pycache[PATH_MAX];
	int device_known;               /* t->device is decided */
	int cand_prepared;
	/* What the candidate must never see (real paths), and what was left
	 * out of its view or hidden in it because of them (a JSON array,
	 * recorded with the limits in force). */
	struct forbidden {
		const char *what;
		char real[PATH_MAX];
	} forbid[8];
	int n_forbid;
	json_t *hidden;
	json_t *rhidden;                /* the same for the reference's view */
	struct tside *sides[2];
	/* Torch extensions built by the judge (extcache.c), when the run has
	 * a cache and a sandbox: the candidate's build root (seen inside at
	 * KJ__EXT_INSIDE), the cache's directory of entries, the builder's
	 * root, environment and view (the first sb_view_n read-only paths of
	 * the candidate's sandbox: the system, the Python installation, the
	 * environment's paths and the worker), the toolchain's description,
	 * and the builds run so far. */
	int ext_on;
	char ext_host[PATH_MAX];
	char ext_root[PATH_MAX];
	char bsb_root[PATH_MAX];
	struct strv benv;
	int sb_view_n;
	char ext_identity[4096];
	int ext_builds;
	double build_s;                 /* the judge's time serving builds */
};

/* The candidate's files' quota, at least (ttask.quota_bytes). */
#define QUOTA_MIN (256ull << 20)

struct tside {
	struct ttask *tt;
	struct kj_side *s;
	struct kj_proc proc;
	uint64_t nonce;
	int pending;                    /* a call was sent and not received */
	enum kj_call_op pending_op;
	char pending_dir[PATH_MAX];     /* where that call writes */
	/* that call's known outputs per set (struct kj_call's), for reading
	 * the reply's call list */
	int pending_known[128];
	int n_pending_known;
	json_t *hello;                  /* the hello reply of the last start */
	int cases;                      /* what load_task said */
};

/* --- environments ------------------------------------------------------------------ */

/*
 * A worker's environment: what Python, torch and Triton need, and its own
 * HOME, TMPDIR and caches under `home`, so that one side's compiled kernels
 * (Triton, torch extensions) are never found by the other.
 */
static int env_build(struct ttask *tt, struct strv *e, const char *home, const char *ext)
{
	static const char *const pass[] = {
		"PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "CUDA_VISIBLE_DEVICES",
		"CUDA_HOME", "TRITON_INTERPRET", "LANG", "OMP_NUM_THREADS",
	};
	size_t i;
	int bad = 0;

	for (i = 0; i < sizeof(pass) / sizeof(pass[0]); i++) {
		const char *v = kj_config_env(tt->cfg, pass[i]);

		if (v)
			bad |= strv_addf(e, "%s=%s", pass[i], v);
	}
	bad |= strv_addf(e, "PYTHONUNBUFFERED=1");
	bad |= strv_addf(e, "PYTHONDONTWRITEBYTECODE=1");
	bad |= strv_addf(e, "PYTHONNOUSERSITE=1");
	bad |= strv_addf(e, "HOME=%s", home);
	bad |= strv_addf(e, "XDG_CACHE_HOME=%s/cache", home);
	bad |= strv_addf(e, "TRITON_CACHE_DIR=%s/cache/triton", home);
	if (ext)
		bad |= strv_addf(e, "TORCH_EXTENSIONS_DIR=%s", ext);
	else
		bad |= strv_addf(e, "TORCH_EXTENSIONS_DIR=%s/cache/torch_extensions", home);
	bad |= strv_addf(e, "TMPDIR=%s/tmp", home);
	return bad ? -1 : 0;
}

/*
 * The builder's environment (extcache.c): what the compiler, nvcc and
 * ninja need, nothing of any run's; its HOME and TMPDIR are the sandbox's
 * private /tmp.
 */
static int env_builder(struct ttask *tt, struct strv *e)
{
	static const char *const pass[] = { "PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "LANG" };
	size_t i;
	int bad = 0;

	for (i = 0; i < sizeof(pass) / sizeof(pass[0]); i++) {
		const char *v = kj_config_env(tt->cfg, pass[i]);

		if (v)
			bad |= strv_addf(e, "%s=%s", pass[i], v);
	}
	bad |= strv_addf(e, "PYTHONUNBUFFERED=1");
	bad |= strv_addf(e, "PYTHONDONTWRITEBYTECODE=1");
	bad |= strv_addf(e, "PYTHONNOUSERSITE=1");
	bad |= strv_addf(e, "HOME=/tmp");
	bad |= strv_addf(e, "TMPDIR=/tmp");
	return bad ? -1 : 0;
}

/* --- replies --------------------------------------------------------------------------- */

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The tail of a worker's stderr (else stdout), cleaned. */
static char *output_tail(const struct kj_proc *p)
{
	const struct kj_capture *c = p->cap_err.len ? &p->cap_err : &p->cap_out;
	size_t len = c->len, off = len > TAIL_BYTES ? len - TAIL_BYTES : 0;

	/* Start after a character boundary: cleaning turns a cut character
	 * into one replacement, which is fine. */
	return kj__text_clean(c->data ? c->data + off : "", len - off, TAIL_BYTES + 16);
}

/* reply->message = "prefix: text" (+ "\n" + the worker's output tail). */
static int set_message(struct kj_reply *r, const char *prefix, const char *text,
		       const struct kj_proc *p)
{
	struct kj__buf b;
	char *tail = p ? output_tail(p) : NULL;
	int bad = p && !tail;

	kj__buf_init(&b, KJ_CASE_MSG_MAX);
	if (prefix)
		bad |= kj__buf_addf(&b, "%s: ", prefix);
	bad |= kj__buf_addf(&b, "%s", text ? text : "");
	if (tail && *tail)
		bad |= kj__buf_addf(&b, "\n%s", tail);
	free(tail);
	free(r->message);
	r->message = NULL;
	if (bad) {
		kj__buf_release(&b);
		return KJ_ENOMEM;
	}
	r->message = kj__text_cleans(b.data ? b.data : "", KJ_CASE_MSG_MAX);
	kj__buf_release(&b);
	return r->message ? KJ_OK : KJ_ENOMEM;
}

/* Whether the file system of dir is full (the judge looks for itself). */
static int fs_full(const char *dir)
{
	struct statvfs fs;

	return statvfs(dir, &fs) == 0 &&
	       ((unsigned long long)fs.f_bavail * fs.f_frsize < (1ull << 20) ||
		(fs.f_files && fs.f_favail == 0));
}

/*
 * A request that failed at the process level (kj_proc_send/wait): the
 * worker timed out, died, broke the protocol, or the judge was interrupted.
 * Fills r (the worker is gone); returns a code only for the judge's own.
 */
static int proc_failed(struct tside *ts, int rc, const struct kj_error *e, struct kj_reply *r,
		       struct kj_error *err)
{
	struct kj_proc *p = &ts->proc;
	const char *role = kj_side_name(ts->s->role);
	char msg[700];

	if (rc == KJ_EINTR || rc == KJ_ENOMEM)
		return kj_error_set(err, rc, "%s", e->msg);
	/* A worker that failed once the judge was interrupted failed of the
	 * interrupt (the judge's own end kills its workers): nobody's verdict. */
	if (kj_proc_interrupted())
		return kj_error_set(err, KJ_EINTR, "interrupted (the %s's worker: %s)", role, e->msg);
	r->ok = 0;
	r->lost = 1;
	ts->s->loaded = 0;
	ts->pending = 0;
	if (rc == KJ_ETIMEDOUT) {
		r->type = KJ_ET_TIMEOUT;
		snprintf(msg, sizeof(msg), "验证超时（%g秒）: the %s did not finish the case",
			 ts->tt->timeout_s, role);
	} else {
		r->type = rc == KJ_EPROTOCOL ? KJ_ET_PROTOCOL : KJ_ET_CRASH;
		/* The sandbox's limits, each a verdict of its own. */
		if (p->output_over)
			r->type = KJ_ET_OUTPUT_LIMIT;
		else if (p->oom_killed)
			r->type = KJ_ET_MEMORY_LIMIT;
		else if (p->isolation == KJ_ISOLATION_SANDBOX && p->reaped && WIFSIGNALED(p->status) &&
			 (WTERMSIG(p->status) == SIGXCPU || WTERMSIG(p->status) == SIGKILL) &&
			 ts->tt->cfg->limits.cpu_s > 0 && p->cpu_s >= ts->tt->cfg->limits.cpu_s - 0.5)
			/* As PID 1 of its namespace the worker ignores SIGXCPU;
			 * the hard limit's SIGKILL and its CPU time tell. */
			r->type = KJ_ET_CPU_LIMIT;
		snprintf(msg, sizeof(msg), "the %s's worker: %s", role, e->msg);
	}
	if (set_message(r, NULL, msg, p) != KJ_OK)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	return KJ_OK;
}

/* A worker's {"ok": false} reply: classified by the judge from the phase
 * and the request it answers, the texts kept as claims. */
static int reply_failed(struct tside *ts, const json_t *rep, struct kj_reply *r,
			struct kj_error *err)
{
	const char *phase = jstr(rep, "phase"), *exc = jstr(rep, "exception");
	const char *cls = jstr(rep, "error_type");
	const char *dir = ts->pending_dir[0] ? ts->pending_dir : ts->s->out_dir;
	int sticky = json_is_true(json_object_get(rep, "sticky"));
	char where[PATH_MAX + 640];

	r->ok = 0;
	snprintf(r->phase, sizeof(r->phase), "%s", phase && strlen(phase) < 16 ? phase : "");
	if (!strcmp(r->phase, "inputs"))
		r->type = KJ_ET_TASK_INPUTS;
	else if (!strcmp(r->phase, "import") || !strcmp(r->phase, "init"))
		r->type = KJ_ET_LOAD;
	else if (cls && !strcmp(cls, "HarnessTampered"))
		r->type = KJ_ET_TAMPERED;
	else if (cls && !strcmp(cls, "LazyOutput"))
		r->type = KJ_ET_LAZY_OUTPUT;
	else if (cls && !strcmp(cls, "L2PersistenceSet"))
		r->type = KJ_ET_L2_PERSIST;
	else if (sticky)
		r->type = KJ_ET_CUDA;
	else if (cls && strstr(cls, "CompilationError"))
		r->type = KJ_ET_COMPILE;
	else
		r->type = KJ_ET_FORWARD;
	if (sticky || json_is_true(json_object_get(rep, "exits"))) {
		/* A CUDA error is sticky: the worker exits (as after SystemExit);
		 * never reuse it. */
		r->lost = 1;
		ts->s->loaded = 0;
	}
	if (exc || cls) {
		r->exception = kj__text_cleans(exc ? exc : cls, 200);
		if (!r->exception)
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	/* A write that failed for want of space is the machine's, when the
	 * judge sees the file system full itself. */
	if (ts->s->role == KJ_SIDE_REFERENCE || !strcmp(r->phase, "outputs"))
		r->disk_full = fs_full(dir);
	/* A candidate that filled the file system itself is not the machine's
	 * failure: what it wrote is its own. */
	if (r->disk_full && ts->s->role == KJ_SIDE_CANDIDATE &&
	    (ts->tt->quota_bytes ||
	     kj__tree_bytes(ts->s->out_dir) + kj__tree_bytes(ts->tt->cand_home) >
		     ts->tt->cfg->limits.file_bytes)) {
		r->disk_full = 0;
		r->type = KJ_ET_OUTPUT_LIMIT;
	}
	/* The machine's failure names the file system, as every full disk
	 * the judge reports does. */
	if (set_message(r, r->disk_full ? kj__nospace_text(ENOSPC, dir, where, sizeof(where))
					: NULL, jstr(rep, "error_msg"), NULL) != KJ_OK)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	return KJ_OK;
}

/* A reply that is not what the protocol says: the candidate's doing, or
 * (for the reference) the task's. */
static int reply_malformed(struct tside *ts, struct kj_reply *r, const char *what,
			   struct kj_error *err)
{
	r->ok = 0;
	r->type = KJ_ET_PROTOCOL;
	r->lost = 1;
	ts->s->loaded = 0;
	ts->s->ops->stop(ts->s);
	if (set_message(r, "malformed reply", what, NULL) != KJ_OK)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	return KJ_OK;
}

static int parse_outputs(const json_t *j, struct kj_value **out, struct kj_error *e)
{
	int rc = kj_value_parse(j, out, e);

	if (rc == KJ_OK && (*out)->kind != KJ_VAL_LIST) {
		kj_value_free(*out);
		*out = NULL;
		return kj_error_set(e, KJ_EPROTOCOL, "outputs are not a list");
	}
	return rc;
}

static int parse_samples(const json_t *a, double **out, size_t *n)
{
	size_t i, len = json_array_size(a);

	*out = NULL;
	*n = 0;
	if (!json_is_array(a))
		return KJ_EPROTOCOL;
	if (!len)
		return KJ_OK;
	*out = malloc(len * sizeof(double));
	if (!*out)
		return KJ_ENOMEM;
	for (i = 0; i < len; i++) {
		const json_t *v = json_array_get(a, i);

		if (!json_is_number(v)) {
			free(*out);
			*out = NULL;
			return KJ_EPROTOCOL;
		}
		(*out)[i] = json_number_value(v);
	}
	*n = len;
	return KJ_OK;
}

/* The candidate's files' quota follows the task's outputs (twice them,
 * 256 MiB at least), known from the reference's first golden run.  A
 * remount that fails leaves the smaller quota: the candidate's limit, never
 * a larger one. */
static void grow_quota(struct ttask *tt, const struct kj_value *outputs)
{
	unsigned long long want;
	char opts[64];

	if (!tt->quota_bytes || !outputs)
		return;
	want = (unsigned long long)(2 * kj_value_tensor_bytes(outputs));
	if (want <= tt->quota_bytes)
		return;
	snprintf(opts, sizeof(opts), "size=%llu", want);
	if (mount(NULL, tt->cand_files, NULL, MS_REMOUNT | MS_NOSUID | MS_NODEV, opts) != 0)
		return;
	tt->quota_bytes = want;
	/* The record says the quota in force from now on (a record that
	 * cannot take it keeps the smaller one it had). */
	if (tt->t->cand.limits)
		json_object_set_new(tt->t->cand.limits, "file_quota_bytes",
				    json_integer((json_int_t)want));
}

/* Kernel names kept at most, and bytes of each. */
#define KERNEL_NAMES_MAX 200
#define KERNEL_NAME_BYTES 200

/*
 * What a candidate's reply claims of the anti-cheat layers, when the side
 * has them on (informational: never a verdict): the Triton launches its
 * worker suppressed, and the GPU kernels of its profiled forward, added to
 * the side's union (cleaned, bounded, deduplicated).
 */
static int layer_claims(struct tside *ts, const json_t *rep, struct kj_reply *r,
			struct kj_error *err)
{
	struct kj_side *s = ts->s;
	const json_t *names = json_object_get(rep, "kernel_names");
	size_t i, j;

	if (s->kernels_disabled) {
		json_int_t n = json_integer_value(json_object_get(rep, "launches_suppressed"));

		r->launches_suppressed = n > 0 ? (long long)n : 0;
		if (s->launches_suppressed < (1LL << 62))
			s->launches_suppressed += r->launches_suppressed;
	}
	if (!s->profile_kernels || !json_is_array(names))
		return KJ_OK;
	r->kernel_names = json_array();
	if (!r->kernel_names)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	for (i = 0; i < json_array_size(names) && json_array_size(r->kernel_names) < KERNEL_NAMES_MAX;
	     i++) {
		const char *n = json_string_value(json_array_get(names, i));
		char *clean;
		int dup = 0;

		if (!n || !*n)
			continue;
		clean = kj__text_cleans(n, KERNEL_NAME_BYTES);
		if (!clean)
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
		for (j = 0; !dup && j < json_array_size(r->kernel_names); j++)
			dup = !strcmp(json_string_value(json_array_get(r->kernel_names, j)), clean);
		if (!dup && json_array_append_new(r->kernel_names, json_string(clean))) {
			free(clean);
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
		}
		free(clean);
	}
	if (!s->kernel_names && !(s->kernel_names = json_array()))
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	for (i = 0; i < json_array_size(r->kernel_names); i++) {
		json_t *n = json_array_get(r->kernel_names, i);
		int dup = 0;

		for (j = 0; !dup && j < json_array_size(s->kernel_names); j++)
			dup = json_equal(json_array_get(s->kernel_names, j), n);
		if (!dup && json_array_size(s->kernel_names) < KERNEL_NAMES_MAX &&
		    json_array_append(s->kernel_names, n))
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	return KJ_OK;
}

/* An {"ok": true} reply to a run or time call. */
static int reply_ok(struct tside *ts, enum kj_call_op op, json_t *rep, struct kj_reply *r,
		    struct kj_error *err)
{
	struct kj_error e;
	const json_t *d;
	size_t i, n;
	int rc;

	r->ok = 1;
	r->phases = json_incref(json_object_get(rep, "phases"));
	r->inputs_changed = json_is_true(json_object_get(rep, "inputs_changed"));
	if ((d = json_object_get(rep, "input_desc")) && json_is_array(d))
		r->input_desc = kj__jref(d);
	if ((d = json_object_get(rep, "aliases")) && json_array_size(d))
		r->aliases = kj__jref(d);
	if (ts->s->role == KJ_SIDE_CANDIDATE && (rc = layer_claims(ts, rep, r, err)) != KJ_OK)
		return rc;
	if (op == KJ_CALL_RUN) {
		rc = parse_outputs(json_object_get(rep, "outputs"), &r->outputs, &e);
		if (rc == KJ_ENOMEM)
			return kj_error_set(err, rc, "out of memory");
		if (rc != KJ_OK)
			return reply_malformed(ts, r, e.msg, err);
		if (ts->s->role == KJ_SIDE_REFERENCE)
			grow_quota(ts->tt, r->outputs);
		return KJ_OK;
	}
	if (op == KJ_CALL_TAKE || op == KJ_CALL_FIGURES || op == KJ_CALL_DROP) {
		d = json_object_get(rep, op == KJ_CALL_TAKE ? "taken" : "figures");
		if (op != KJ_CALL_DROP && !json_is_array(d))
			return reply_malformed(ts, r, "device comparison", err);
		r->held = d ? kj__jref(d) : NULL;
		return KJ_OK;
	}
	if (op == KJ_CALL_DEVICE) {
		r->copy_gbs = json_number_value(json_object_get(rep, "copy_gbs"));
		r->launch_ms = json_number_value(json_object_get(rep, "launch_ms"));
		if (!(r->copy_gbs > 0) || !(r->launch_ms >= 0))
			return reply_malformed(ts, r, "device limits", err);
		return KJ_OK;
	}
	rc = parse_samples(json_object_get(rep, "samples_ms"), &r->samples_ms, &r->n_samples);
	if (rc == KJ_OK)
		rc = parse_samples(json_object_get(rep, "escaped_ms"), &r->escaped_ms, &n);
	if (rc == KJ_ENOMEM)
		return kj_error_set(err, rc, "out of memory");
	if (rc != KJ_OK || n != r->n_samples)
		return reply_malformed(ts, r, "timing samples", err);
	for (i = 0; i < r->n_samples; i++)
		if (!(r->samples_ms[i] >= 0) || !(r->escaped_ms[i] >= 0) || !isfinite(r->samples_ms[i]))
			return reply_malformed(ts, r, "a timing sample that is not a finite, "
					       "non-negative number", err);
	r->peak_memory_mb = json_number_value(json_object_get(rep, "peak_memory_mb"));
	r->idle_sync_ms = json_number_value(json_object_get(rep, "idle_sync_ms"));
	snprintf(r->timer, sizeof(r->timer), "%s", jstr(rep, "timer") && strlen(jstr(rep, "timer")) < 24
		 ? jstr(rep, "timer") : "?");
	/* Distinct outputs by input set: [[outputs, ...] per set]; calls:
	 * [[set, distinct], ...] per timed call. */
	d = json_object_get(rep, "distinct_outputs");
	if (d) {
		size_t k, total = 0;

		if (!json_is_array(d))
			return reply_malformed(ts, r, "distinct outputs", err);
		for (k = 0; k < json_array_size(d); k++)
			total += json_array_size(json_array_get(d, k));
		if (total > 100000)
			return reply_malformed(ts, r, "too many distinct outputs", err);
		if (total) {
			r->distinct = calloc(total, sizeof(*r->distinct));
			r->distinct_set = calloc(total, sizeof(int));
			if (!r->distinct || !r->distinct_set)
				return kj_error_set(err, KJ_ENOMEM, "out of memory");
		}
		for (k = 0; k < json_array_size(d); k++) {
			const json_t *per = json_array_get(d, k);

			if (!json_is_array(per))
				return reply_malformed(ts, r, "distinct outputs", err);
			for (i = 0; i < json_array_size(per); i++) {
				rc = parse_outputs(json_array_get(per, i), &r->distinct[r->n_distinct], &e);
				if (rc == KJ_ENOMEM)
					return kj_error_set(err, rc, "out of memory");
				if (rc != KJ_OK)
					return reply_malformed(ts, r, e.msg, err);
				r->distinct_set[r->n_distinct++] = (int)k;
			}
		}
	}
	d = json_object_get(rep, "calls");
	n = json_array_size(d);
	if (d && (!json_is_array(d) || n != r->n_samples))
		return reply_malformed(ts, r, "a call list that does not match the samples", err);
	if (n) {
		r->call_set = calloc(n, sizeof(int));
		r->call_distinct = calloc(n, sizeof(int));
		if (!r->call_set || !r->call_distinct)
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		const json_t *c = json_array_get(d, i);
		json_int_t set = json_integer_value(json_array_get(c, 0));
		json_int_t u = json_integer_value(json_array_get(c, 1));
		json_int_t known = 0;
		size_t j, base = 0;

		if (set >= 0 && set < ts->n_pending_known)
			known = ts->pending_known[set];
		/* Below known: an output the judge checked in an earlier round
		 * of the case.  Else the new distinct output u - known of set
		 * `set`, as an index of the flat list. */
		if (json_is_array(c) && set >= 0 && u >= 0 && u < known) {
			r->call_set[i] = (int)set;
			r->call_distinct[i] = -1;
			continue;
		}
		u -= known;
		for (j = 0; j < r->n_distinct && r->distinct_set[j] != (int)set; j++)
			;
		base = j;
		if (!json_is_array(c) || set < 0 || u < 0 || base + (size_t)u >= r->n_distinct ||
		    r->distinct_set[base + (size_t)u] != (int)set)
			return reply_malformed(ts, r, "a call naming an output that is not there", err);
		r->call_set[i] = (int)set;
		r->call_distinct[i] = (int)(base + (size_t)u);
	}
	r->n_calls = n;
	return KJ_OK;
}

/* --- starting workers ---------------------------------------------------------------- */

static int request_all(struct tside **sv, int n, json_t *const *reqs, json_t **reps,
		       double timeout_s, int *rcs, struct kj_error *errs)
{
	uint64_t nonce[2];
	int i;

	for (i = 0; i < n; i++) {
		reps[i] = NULL;
		rcs[i] = reqs[i] ? kj_proc_send(&sv[i]->proc, reqs[i], timeout_s, &nonce[i], &errs[i])
				 : KJ_ENOMEM;
		if (!reqs[i])
			kj_error_set(&errs[i], KJ_ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++)
		if (rcs[i] == KJ_OK)
			rcs[i] = kj_proc_wait(&sv[i]->proc, nonce[i], timeout_s, &reps[i], &errs[i]);
	return KJ_OK;
}

/*
 * One build request of the candidate's worker (extcache.c): the answer to
 * send back, {"built": bool, "why"}; NULL with err filled for the judge's
 * own failures (out of memory, an interrupt).  `builds`: whether the
 * request being served may build (load and run; never a timed round).
 */
static json_t *serve_build(struct tside *ts, const json_t *msg, int builds, struct kj_error *err)
{
	struct ttask *tt = ts->tt;
	const char *name = json_string_value(json_object_get(msg, "build"));
	char fd_flag[] = "--fd", fd_num[] = "3";
	char *argv[] = { tt->python, tt->worker, fd_flag, fd_num, NULL };
	struct kj__ext_result res;
	struct kj__ext_ctx c;
	struct kj_sandbox view;
	double t0 = kj__now_s();
	int rc;

	if (!builds || !tt->ext_on || ts->s->role != KJ_SIDE_CANDIDATE || !name)
		return json_pack("{s:b, s:s}", "built", 0, "why", "the judge builds only while "
				 "the candidate's module loads or runs untimed");
	/* The builds of a run share one budget, the candidate's timeout: the
	 * time they take is not counted against its requests. */
	if (tt->ext_builds >= KJ__EXT_BUILDS_MAX || tt->build_s >= tt->timeout_s - 1)
		return json_pack("{s:b, s:s}", "built", 0, "why", "too many builds in one run, "
				 "or their time is spent");
	if (!tt->ext_identity[0] &&
	    kj__ext_identity(ts->hello, kj_config_env(tt->cfg, "PATH"),
			     kj_config_env(tt->cfg, "CUDA_HOME"), tt->ext_identity,
			     sizeof(tt->ext_identity)) < 0) {
		tt->ext_identity[0] = '\0';
		return json_pack("{s:b, s:s}", "built", 0, "why", "the toolchain's description "
				 "is too long");
	}
	view = tt->sb;
	view.n_ro = tt->sb_view_n;
	c.cache_root = tt->ext_root;
	c.host = tt->ext_host;
	c.identity = tt->ext_identity;
	c.view = &view;
	c.root_dir = tt->bsb_root;
	c.argv = argv;
	c.envp = tt->benv.v;
	c.timeout_s = tt->timeout_s - tt->build_s;
	rc = kj__ext_serve(&c, name, &res, err);
	if (rc == KJ_ENOMEM || rc == KJ_EINTR)
		return NULL;
	if (rc != KJ_OK)
		snprintf(res.why, sizeof(res.why), "%s", err->msg);
	tt->ext_builds += res.ran;
	tt->build_s += kj__now_s() - t0;
	kj_attempt_tally(tt->a, "build_s", kj__now_s() - t0);
	kj_attempt_tally(tt->a, "build_n", res.ran);
	kj_attempt_tally(tt->a, "build_cached_n", res.cached);
	if (res.damaged)
		kj_attempt_tally(tt->a, "build_damaged_n", 1);
	if (res.built)
		return json_pack("{s:b, s:b, s:s}", "built", 1, "cached", res.cached, "key", res.key);
	{
		/* The build's output is the candidate's compiler's: cleaned
		 * (valid UTF-8, bounded) before it goes back, as every text. */
		char *why = kj__text_cleans(res.why, sizeof(res.why));
		json_t *ans = why ? json_pack("{s:b, s:b, s:s}", "built", 0, "failed", res.failed,
					      "why", why) : NULL;

		free(why);
		if (!ans)
			kj_error_set(err, KJ_ENOMEM, "out of memory");
		return ans;
	}
}

/*
 * Wait for the reply to the request `nonce` of ts, serving the build
 * requests its worker sends meanwhile (a line with the request's nonce, a
 * "build" and no "ok"; serve_build).  The time a build takes is the
 * judge's, not the request's: the request's timeout counts the worker's
 * time alone.  The codes of kj_proc_wait.
 */
static int wait_reply(struct tside *ts, uint64_t nonce, double timeout_s, int builds,
		      json_t **rep, struct kj_error *e)
{
	double spent = 0;

	for (;;) {
		double t0 = kj__now_s();
		json_t *ans;
		int rc = kj_proc_wait(&ts->proc, nonce, timeout_s - spent, rep, e);

		if (rc != KJ_OK)
			return rc;
		spent += kj__now_s() - t0;
		if (json_object_get(*rep, "ok") || !json_object_get(*rep, "build"))
			return KJ_OK;
		e->code = KJ_OK;
		ans = serve_build(ts, *rep, builds, e);
		json_decref(*rep);
		*rep = NULL;
		if (!ans)
			return e->code == KJ_EINTR ? KJ_EINTR : kj_error_set(e, KJ_ENOMEM, "out of "
									      "memory");
		rc = kj_proc_answer(&ts->proc, nonce, ans, timeout_s - spent > 1 ? timeout_s - spent
										: 1, e);
		if (rc != KJ_OK)
			return rc;
	}
}

static void side_kill(struct tside *ts)
{
	if (ts->proc.pid)
		kj_proc_release(&ts->proc, 2.0);
	kj_proc_init(&ts->proc);
	ts->pending = 0;
	ts->s->loaded = 0;
}

/* The fix for a Python that cannot run the worker (as kjudge doctor gives
 * it): into buf, with its "; fix: ", or "" for another failure. */
static const char *python_fix(const char *msg, const char *python, char *buf, size_t size)
{
	size_t n;

	if (!msg || (!strstr(msg, "No module named 'torch'") &&
		     !strstr(msg, "No module named 'numpy'")))
		return "";
	n = (size_t)snprintf(buf, size, "; fix: ");
	if (n < size)
		kj__python_fix(python, buf + n, size - n);
	if ((n = strlen(buf)) < size)
		snprintf(buf + n, size - n, " (kjudge doctor checks)");
	return buf;
}

/* What the hello of a failed start said, for the error. */
static int start_error(struct tside *ts, int rc, const struct kj_error *e, const json_t *rep,
		       struct kj_error *err)
{
	const char *msg = rc != KJ_OK ? e->msg : jstr(rep, "error_msg");
	char *tail = output_tail(&ts->proc);
	/* The exception's line: the worker puts it first. */
	char *clean = kj__text_clean(msg ? msg : "", msg ? kj__first_line(msg, 600) : 0, 600);
	char fix[1200];
	int code = rc == KJ_EINTR || rc == KJ_ENOMEM ? rc
		   : kj_proc_interrupted() ? KJ_EINTR /* as proc_failed's */
		   : ts->s->sandboxed ? KJ_ESANDBOX : KJ_ESPAWN;

	kj_error_set(err, code, "the %s's worker did not start with '%s' (%s): %s%s%s%.300s",
		     kj_side_name(ts->s->role), ts->tt->python, ts->tt->cfg->python_source,
		     clean ? clean : "", python_fix(msg, ts->tt->python, fix, sizeof(fix)),
		     tail && *tail ? "\n" : "",
		     tail ? tail : "");
	free(tail);
	free(clean);
	return code;
}

static int prepare_candidate(struct ttask *tt, struct kj_error *err);
static int prepare_reference(struct ttask *tt, struct kj_error *err);

/*
 * Start the workers of n sides together and load their modules: all are
 * spawned, then all get "hello" (which imports torch, the slow part), then
 * "load_task", then "load"; each wait comes after every send, so the
 * workers start up side by side.  Returns KJ_OK when every side's state is
 * known (loaded, or load_failure filled); a code when a worker could not be
 * started at all (the machine's failure or the judge's).
 */
static int start_sides(struct ttask *tt, struct tside **sv, int n, struct kj_error *err)
{
	char fd_flag[] = "--fd", fd_num[] = "3";
	char *argv[] = { tt->python, tt->worker, fd_flag, fd_num, NULL };
	json_t *reqs[2] = { NULL, NULL }, *reps[2] = { NULL, NULL };
	int i, rc, rcs[2], skip[2];
	struct kj_error es[2];
	/* Starting Python, torch and CUDA takes seconds (4.8 s on an H200
	 * machine): a short --timeout is meant for the cases, not for this,
	 * nor for the task's own loading.  The candidate's module is another
	 * matter: its import and its constructor are its own code, and
	 * --timeout bounds every wait the candidate controls. */
	double startup_s = tt->timeout_s > 300 ? tt->timeout_s : 300;

	for (i = 0; i < n; i++) {
		struct tside *ts = sv[i];
		struct kj_side *s = ts->s;

		side_kill(ts);
		kj_reply_release(&s->load_failure);
		json_decref(ts->hello);
		ts->hello = NULL;
		s->started = 1;
		if (tt->cfg->sandbox) {
			/* Both sides in the same kind of sandbox. */
			int cand = s->role == KJ_SIDE_CANDIDATE;

			rc = cand ? prepare_candidate(tt, err) : prepare_reference(tt, err);
			if (rc != KJ_OK)
				return rc;
			rc = kj_proc_spawn_in(&ts->proc, argv, cand ? tt->cenv.v : tt->env.v,
					      s->out_dir, cand ? &tt->sb : &tt->rsb, err);
		} else {
			rc = kj_proc_spawn(&ts->proc, argv,
					   s->role == KJ_SIDE_CANDIDATE ? tt->cenv.v : tt->env.v,
					   s->out_dir, err);
		}
		if (rc != KJ_OK)
			return rc;
		/* The candidate's output is limited per request, the reference's
		 * only kept as a tail. */
		ts->proc.output_limit = s->sandboxed;
		ts->proc.output_bytes = tt->cfg->limits.output_bytes;
		json_decref(s->limits);
		s->limits = kj_proc_limits_json(&ts->proc);
		s->isolation = kj_isolation_name(ts->proc.isolation);
		if (!s->limits || (s->sandboxed && ts->proc.isolation == KJ_ISOLATION_SANDBOX &&
				   (json_object_set(s->limits, "hidden", tt->hidden) ||
				    json_object_set_new(s->limits, "file_quota_bytes",
							json_integer((json_int_t)tt->quota_bytes)))) ||
		    (s->role == KJ_SIDE_REFERENCE && ts->proc.isolation == KJ_ISOLATION_SANDBOX &&
		     json_object_set(s->limits, "hidden", tt->rhidden)))
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	/* hello: the bytecode tree is written by the reference only. */
	for (i = 0; i < n; i++)
		reqs[i] = json_pack("{s:s, s:s?, s:b}", "op", "hello", "pycache",
				    tt->pycache[0] ? tt->pycache : NULL, "write_bytecode",
				    sv[i]->s->role == KJ_SIDE_REFERENCE);
	request_all(sv, n, reqs, reps, startup_s, rcs, es);
	rc = KJ_OK;
	for (i = 0; i < n; i++) {
		if (rc == KJ_OK && (rcs[i] != KJ_OK || !json_is_true(json_object_get(reps[i], "ok"))))
			rc = start_error(sv[i], rcs[i], &es[i], reps[i], err);
		if (rc == KJ_OK)
			sv[i]->hello = reps[i];
		else
			json_decref(reps[i]);
	}
	if (rc != KJ_OK)
		return rc;
	/* Without --device, the reference's hello decides: cuda when torch
	 * sees one.  The workers need it before they import the modules
	 * (Triton's interpreter is chosen at import). */
	if (!tt->device_known) {
		const json_t *hello = sv[0]->hello;

		if (!tt->device_req[0])
			snprintf(tt->t->device, sizeof(tt->t->device), "%s",
				 json_is_true(json_object_get(hello, "cuda_available")) ? "cuda" : "cpu");
		tt->device_known = 1;
	}
	/* A reference that does not see the GPU asked for: the machine has
	 * none that torch can use, or not that one (nothing of the task or
	 * the candidate is to blame). */
	for (i = 0; i < n; i++)
		if (sv[i]->s->role == KJ_SIDE_REFERENCE && !strncmp(tt->t->device, "cuda", 4)) {
			const json_t *count = json_object_get(sv[i]->hello, "cuda_count");
			long ord = tt->t->device[4] == ':' ? strtol(tt->t->device + 5, NULL, 10) : 0;

			if (!json_is_true(json_object_get(sv[i]->hello, "cuda_available")))
				return kj_error_set(err, KJ_ENODEVICE, "--device %s: this machine has "
						    "no CUDA device that torch can use "
						    "(torch.cuda.is_available() is False in '%s'); "
						    "use --device cpu", tt->t->device, tt->python);
			if (json_is_integer(count) && ord >= json_integer_value(count))
				return kj_error_set(err, KJ_ENODEVICE, "--device %s: torch sees %lld "
						    "CUDA device%s here (cuda:0 to cuda:%lld, as "
						    "CUDA_VISIBLE_DEVICES numbers them)", tt->t->device,
						    (long long)json_integer_value(count),
						    json_integer_value(count) == 1 ? "" : "s",
						    (long long)json_integer_value(count) - 1);
		}
	/* A candidate's worker that does not see the GPU the run uses: the
	 * sandbox hid it, before any of the candidate's code ran. */
	for (i = 0; i < n; i++)
		if (sv[i]->s->role == KJ_SIDE_CANDIDATE && !strncmp(tt->t->device, "cuda", 4) &&
		    !json_is_true(json_object_get(sv[i]->hello, "cuda_available")))
			return kj_error_set(err, sv[i]->s->sandboxed ? KJ_ESANDBOX : KJ_ESPAWN,
					    "the candidate's worker sees no CUDA device where the "
					    "reference's does (%s)", sv[i]->s->sandboxed
					    ? "the sandbox does not show it the GPU" : "its environment");
	/* load_task: the task file only (for the candidate: its view). */
	for (i = 0; i < n; i++) {
		struct kj_side *s = sv[i]->s;

		reqs[i] = json_pack("{s:s, s:s, s:s, s:s}", "op", "load_task", "dir",
				    s->role == KJ_SIDE_CANDIDATE && tt->cfg->sandbox ? tt->cand_src
										  : tt->dir,
				    "task_module", tt->task_mod, "device", tt->t->device);
		/* With a cases file: every case's parameters, so the worker can
		 * check that the task's generators take them. */
		if (reqs[i] && tt->t->case_params &&
		    json_object_set(reqs[i], "case_params", tt->t->case_params)) {
			json_decref(reqs[i]);
			reqs[i] = NULL;
		}
	}
	request_all(sv, n, reqs, reps, startup_s, rcs, es);
	for (i = 0; i < n; i++) {
		struct tside *ts = sv[i];
		struct kj_reply *f = &ts->s->load_failure;

		if (rcs[i] == KJ_EINTR || rcs[i] == KJ_ENOMEM) {
			rc = kj_error_set(err, rcs[i], "%s", es[i].msg);
		} else if (rcs[i] != KJ_OK) {
			if (proc_failed(ts, rcs[i], &es[i], f, err) != KJ_OK)
				rc = err->code;
			f->type = KJ_ET_TASK;
		} else if (!json_is_true(json_object_get(reps[i], "ok"))) {
			if (reply_failed(ts, reps[i], f, err) != KJ_OK)
				rc = err->code;
			/* Nothing of the candidate has run yet: the task's. */
			f->type = KJ_ET_TASK;
			snprintf(f->phase, sizeof(f->phase), "task");
		} else {
			ts->cases = (int)json_integer_value(json_object_get(reps[i], "cases"));
		}
		json_decref(reps[i]);
	}
	if (rc != KJ_OK)
		return rc;
	/* load: the module under test (not where load_task failed). */
	for (i = 0; i < n; i++) {
		struct kj_side *s = sv[i]->s;
		int cand = s->role == KJ_SIDE_CANDIDATE;
		uint64_t nonce = 0;
		json_t *req;

		skip[i] = s->load_failure.type != KJ_ET_NOT_JUDGED;
		if (skip[i])
			continue;
		req = json_pack("{s:s, s:s, s:s, s:I}", "op", "load", "module",
				cand ? tt->cand_mod : tt->task_mod, "cls", cand ? "ModelNew" : "Model",
				"init_seed", (json_int_t)s->init_seed);
		/* The model of the first case is built at load (get_init_inputs
		 * with its parameters); another case's is built at its first
		 * call.  The candidate's anti-cheat layers, only when on. */
		if (req && ((tt->t->case_params &&
			     json_object_set(req, "params", json_array_get(tt->t->case_params, 0))) ||
			    (cand && s->kernels_disabled &&
			     json_object_set_new(req, "kernels_disabled", json_true())) ||
			    (!cand && tt->ref_compiled &&
			     json_object_set_new(req, "compile", json_true())) ||
			    (cand && s->profile_kernels &&
			     json_object_set_new(req, "profile_kernels", json_true())) ||
			    (cand && tt->ext_on &&
			     json_object_set_new(req, "ext_builds", json_string(KJ__EXT_INSIDE))))) {
			json_decref(req);
			req = NULL;
		}
		if (!req)
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
		rcs[i] = kj_proc_send(&sv[i]->proc, req, cand ? tt->timeout_s : startup_s, &nonce,
				      &es[i]);
		sv[i]->nonce = nonce;
	}
	/* The candidate's reply first (the last side): a build it asks for
	 * while its module loads is served at once, beside the reference's
	 * import, as its own build would have run; the reference's reply
	 * waits on its channel meanwhile. */
	for (i = n - 1; i >= 0; i--) {
		struct tside *ts = sv[i];
		struct kj_reply *f = &ts->s->load_failure;
		json_t *rep = NULL;

		if (skip[i])
			continue; /* load_task failed */
		if (rcs[i] == KJ_OK)
			rcs[i] = wait_reply(ts, ts->nonce,
					    ts->s->role == KJ_SIDE_CANDIDATE ? tt->timeout_s : startup_s,
					    1, &rep, &es[i]);
		if (rcs[i] == KJ_EINTR || rcs[i] == KJ_ENOMEM) {
			rc = kj_error_set(err, rcs[i], "%s", es[i].msg);
		} else if (rcs[i] != KJ_OK) {
			if (proc_failed(ts, rcs[i], &es[i], f, err) != KJ_OK)
				rc = err->code;
			if (f->type == KJ_ET_CRASH)
				f->type = KJ_ET_LOAD;
		} else if (!json_is_true(json_object_get(rep, "ok"))) {
			if (reply_failed(ts, rep, f, err) != KJ_OK)
				rc = err->code;
			f->type = KJ_ET_LOAD;
		} else {
			ts->s->loaded = 1;
		}
		json_decref(rep);
	}
	return rc;
}

/* --- the side operations ---------------------------------------------------------------- */

static int op_start(struct kj_side *s, struct kj_error *err)
{
	struct tside *ts = s->impl;

	/* No candidate file: nothing to start; load_failure says so. */
	if (s->role == KJ_SIDE_CANDIDATE && !ts->tt->t->have_candidate)
		return KJ_OK;
	return start_sides(ts->tt, &ts, 1, err);
}

static int op_send(struct kj_side *s, const struct kj_call *call, struct kj_error *err)
{
	struct tside *ts = s->impl;
	struct ttask *tt = ts->tt;
	struct kj_error e;
	json_t *req;
	int rc;

	if (call->op == KJ_CALL_RUN) {
		req = json_pack("{s:s, s:i, s:I, s:s, s:s}", "op", "run", "case", call->case_idx,
				"seed", (json_int_t)call->seed, "out_dir", call->out_dir, "tag", call->tag);
	} else if (call->op == KJ_CALL_DEVICE) {
		req = json_pack("{s:s}", "op", "device");
	} else if (call->op == KJ_CALL_TAKE || call->op == KJ_CALL_FIGURES ||
		   call->op == KJ_CALL_DROP) {
		if (s->role != KJ_SIDE_REFERENCE)
			return kj_error_set(err, KJ_EINVAL, "internal: device comparisons run on "
					    "the reference's side only");
		req = json_pack("{s:s}", "op", call->op == KJ_CALL_TAKE ? "take"
					 : call->op == KJ_CALL_FIGURES ? "figures" : "drop");
		if (req && call->items && json_object_set_new(req, "items", kj__jref(call->items))) {
			json_decref(req);
			req = NULL;
		}
	} else {
		json_t *seeds = json_array(), *schedule = json_array();
		int i, bad = !seeds || !schedule;

		for (i = 0; !bad && i < call->n_seeds; i++)
			bad |= json_array_append_new(seeds, json_integer((json_int_t)call->seeds[i]));
		for (i = 0; !bad && i < call->n_calls; i++)
			bad |= json_array_append_new(schedule, json_integer(call->schedule[i]));
		if (bad) {
			json_decref(seeds);
			json_decref(schedule);
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
		}
		req = json_pack("{s:s, s:i, s:o, s:o, s:i, s:I, s:s, s:s, s:b}", "op", "time_round",
				"case", call->case_idx, "seeds", seeds, "schedule", schedule,
				"warmup", call->warmup, "flush_bytes", (json_int_t)call->flush_bytes,
				"out_dir", call->out_dir, "tag", call->tag, "check", call->check);
		if (req && call->empty && (s->role != KJ_SIDE_REFERENCE ||
					   json_object_set_new(req, "empty", json_true()))) {
			json_decref(req);
			return kj_error_set(err, s->role != KJ_SIDE_REFERENCE ? KJ_EINVAL
										 : KJ_ENOMEM,
					    s->role != KJ_SIDE_REFERENCE
						    ? "empty calls are the reference's worker's"
						    : "out of memory");
		}
		if (req && call->check && call->known && call->n_known > 0) {
			json_t *known = json_array();

			for (i = 0; known && i < call->n_known; i++)
				if (json_array_append_new(known, json_integer(call->known[i])) != 0) {
					json_decref(known);
					known = NULL;
				}
			if (!known || json_object_set_new(req, "known", known) != 0) {
				json_decref(req);
				req = NULL;
			}
		}
		if (req && call->probe_at >= 0 && call->probe_at < call->n_calls &&
		    json_object_set_new(req, "probe", json_pack("{s:I, s:i, s:i}", "seed",
							       (json_int_t)call->probe_seed, "at",
							       call->probe_at, "set",
							       call->probe_set)) != 0) {
			json_decref(req);
			req = NULL;
		}
	}
	/* The candidate's outputs come back as sealed memory files, never as
	 * files it could still change or name (value.h); in timed rounds the
	 * reference's too, so that both sides do the same work around their
	 * calls (the judge's clock compares the two). */
	if (req && ((s->role == KJ_SIDE_CANDIDATE && call->op == KJ_CALL_RUN) ||
		    call->op == KJ_CALL_TIME) &&
	    json_object_set_new(req, "sealed", json_true()) != 0) {
		json_decref(req);
		req = NULL;
	}
	if (req && (call->op == KJ_CALL_RUN || call->op == KJ_CALL_TIME) && call->export_outputs &&
	    json_object_set_new(req, "export", json_integer(call->export_outputs)) != 0) {
		json_decref(req);
		req = NULL;
	}
	if (req && call->op == KJ_CALL_RUN && call->keep && s->role == KJ_SIDE_REFERENCE &&
	    json_object_set_new(req, "keep", json_integer(call->keep)) != 0) {
		json_decref(req);
		req = NULL;
	}
	/* The case's parameters (a task with a cases file), on both sides. */
	if (req && (call->op == KJ_CALL_RUN || call->op == KJ_CALL_TIME) && tt->t->case_params) {
		json_t *p = json_array_get(tt->t->case_params, (size_t)call->case_idx);

		if (!p) {
			json_decref(req);
			return kj_error_set(err, KJ_EINVAL, "internal: case %d of %zu", call->case_idx + 1,
					    json_array_size(tt->t->case_params));
		}
		if (json_object_set(req, "params", p)) {
			json_decref(req);
			req = NULL;
		}
	}
	if (!req)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	ts->pending_op = call->op;
	ts->n_pending_known = 0;
	if (call->op == KJ_CALL_TIME && call->known) {
		int i, n = call->n_known;

		if (n < 0 || n > (int)(sizeof(ts->pending_known) / sizeof(ts->pending_known[0]))) {
			json_decref(req);
			return kj_error_set(err, KJ_EINVAL, "internal: a timed round of %d input sets", n);
		}
		for (i = 0; i < n; i++)
			ts->pending_known[i] = call->known[i];
		ts->n_pending_known = n;
	}
	snprintf(ts->pending_dir, sizeof(ts->pending_dir), "%s", call->out_dir ? call->out_dir : "");
	/* A timed round calls forward warmup + n_calls times: it may print as
	 * much as that many calls. */
	ts->proc.output_calls = call->op == KJ_CALL_TIME && call->warmup + call->n_calls > 1
				? (unsigned)call->warmup + (unsigned)call->n_calls : 1;
	if (call->op == KJ_CALL_TAKE) {
		ts->proc.send_fds = call->pass_fds;
		ts->proc.n_send_fds = call->n_pass_fds;
	}
	rc = kj_proc_send(&ts->proc, req, tt->timeout_s, &ts->nonce, &e);
	ts->pending = 1;
	if (rc != KJ_OK) {
		/* Kept for recv, which reports it as the call's outcome. */
		ts->pending = 2;
		ts->s->loaded = 0;
		if (rc == KJ_EINTR || rc == KJ_ENOMEM)
			return kj_error_set(err, rc, "%s", e.msg);
	}
	return KJ_OK;
}

static int op_recv(struct kj_side *s, struct kj_reply *r, struct kj_error *err)
{
	struct tside *ts = s->impl;
	struct kj_error e;
	json_t *rep = NULL;
	int rc;

	kj_reply_init(r);
	if (!ts->pending)
		return kj_error_set(err, KJ_EINVAL, "internal: no call to receive");
	if (ts->pending == 2) {
		kj_error_set(&e, KJ_EWORKER, "the worker was gone before the call");
		return proc_failed(ts, KJ_EWORKER, &e, r, err);
	}
	ts->pending = 0;
	rc = wait_reply(ts, ts->nonce, ts->tt->timeout_s, ts->pending_op == KJ_CALL_RUN, &rep, &e);
	if (rc != KJ_OK)
		return proc_failed(ts, rc, &e, r, err);
	kj_proc_take_fds(&ts->proc, &r->fds, &r->n_fds);
	if (ts->proc.fds_over) {
		/* Descriptors were dropped: what came may not be what was sent.
		 * The worker is killed, as after any broken protocol. */
		json_decref(rep);
		kj_proc_kill(&ts->proc);
		kj_error_set(&e, KJ_EPROTOCOL, "worker sent more than %d descriptors at once, or "
			     "more than the judge could take", KJ_PROC_FDS_MAX);
		return proc_failed(ts, KJ_EPROTOCOL, &e, r, err);
	}
	if (!json_is_true(json_object_get(rep, "ok")))
		rc = reply_failed(ts, rep, r, err);
	else
		rc = reply_ok(ts, ts->pending_op, rep, r, err);
	json_decref(rep);
	if (rc == KJ_OK && r->lost)
		side_kill(ts);
	return rc;
}

static void op_stop(struct kj_side *s)
{
	struct tside *ts = s->impl;

	side_kill(ts);
	s->started = 0;
}

static int op_freeze(struct kj_side *s, int frozen, struct kj_error *err)
{
	struct tside *ts = s->impl;

	return kj_proc_freeze(&ts->proc, frozen, err);
}

static void op_release(struct kj_side *s)
{
	struct tside *ts = s->impl;

	if (!ts)
		return;
	side_kill(ts);
	json_decref(ts->hello);
	kj_reply_release(&s->load_failure);
	json_decref(s->limits);
	s->limits = NULL;
	json_decref(s->kernel_names);
	s->kernel_names = NULL;
	free(ts);
	s->impl = NULL;
}

static void op_kill(struct kj_side *s)
{
	struct tside *ts = s->impl;

	if (ts)
		kj_proc_signal_kill(&ts->proc);
}

static const struct kj_side_ops torch_ops = {
	op_start, op_send, op_recv, op_stop, op_freeze, op_release, op_kill,
};

/* --- the candidate's sandbox ------------------------------------------------------------ */

static const char *keep_path(struct ttask *tt, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A string that lives as long as the task (the sandbox points at it). */
static const char *keep_path(struct ttask *tt, const char *fmt, ...)
{
	char *p = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (n < 0 || strv_add(&tt->sb_paths, p) < 0)
		return NULL;
	return p;
}

static int sb_ro_in(struct kj_sandbox *sb, const char *path, struct kj_error *err)
{
	if (!path)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	if (kj_sandbox_ro(sb, path) < 0)
		return kj_error_set(err, KJ_ESANDBOX, "the sandbox cannot hold another path ('%s')",
				    path);
	return KJ_OK;
}

static int sb_ro(struct ttask *tt, const char *path, struct kj_error *err)
{
	return sb_ro_in(&tt->sb, path, err);
}

/* Whether the real path `path` is the real directory `dir` or lies in it. */
static int within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return 1;
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

/* Something the candidate must never see, when it exists. */
static void forbid(struct ttask *tt, const char *path, const char *what)
{
	struct forbidden *f = &tt->forbid[tt->n_forbid];

	if (path && tt->n_forbid < (int)(sizeof(tt->forbid) / sizeof(tt->forbid[0])) &&
	    realpath(path, f->real)) {
		f->what = what;
		tt->n_forbid++;
	}
}

/* One line of a record of what a view leaves out (tt->hidden, the
 * candidate's; tt->rhidden, the reference's). */
static int note_in(json_t *record, const char *path, const char *action, const char *from,
		   const char *what, struct kj_error *err)
{
	if (json_array_append_new(record, json_pack("{s:s, s:s, s:s, s:s}", "path", path,
						    "action", action, "from", from, "what", what)))
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	return KJ_OK;
}

static int note_hidden(struct ttask *tt, const char *path, const char *action, const char *from,
		       const char *what, struct kj_error *err)
{
	return note_in(tt->hidden, path, action, from, what, err);
}

/* Whether the real path `real` is the real path of `path`. */
static int same_real(const char *real, const char *path)
{
	char r[PATH_MAX];

	return path && path[0] && realpath(path, r) && !strcmp(r, real);
}

/* Whether the real path `real` is the directory `dir` (real path of
 * `dir` taken) or one directly in it. */
static int is_or_in(const char *real, const char *dir)
{
	char d[PATH_MAX];
	size_t n;

	if (!realpath(dir, d))
		return 0;
	n = strlen(d);
	if (strncmp(real, d, n) != 0)
		return 0;
	return real[n] == '\0' || (real[n] == '/' && real[n + 1] && !strchr(real + n + 1, '/'));
}

/*
 * Why a directory the configuration names (PYTHONPATH, LD_LIBRARY_PATH,
 * CUDA_HOME, the Python installation) is never bound whole, or NULL: it is
 * the whole file system, a home directory (root's, /home or one in it,
 * wherever /home leads, the judge's own), or a tree of the host's private
 * and changing files, where users keep keys, histories, mail, sockets and
 * databases.  Directories inside them are bound as any other (a Python
 * under /root/.pyenv, a virtual environment in a home): the configuration
 * named them.
 */
static const char *never_whole(const struct ttask *tt, const char *real)
{
	static const char *const host[] = { "/var", "/var/lib", "/var/tmp", "/var/log",
		"/run", "/srv", "/mnt", "/media", "/boot", "/tmp", "/dev", "/proc",
		"/lost+found" };
	char buf[4096];
	struct passwd pw, *got = NULL;
	size_t i;

	if (!strcmp(real, "/"))
		return "the whole file system";
	for (i = 0; i < sizeof(host) / sizeof(host[0]); i++)
		if (!strcmp(real, host[i]))
			return "the host's private files";
	if (!strcmp(real, "/root") || is_or_in(real, "/home") ||
	    same_real(real, kj_config_env(tt->cfg, "HOME")) ||
	    (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &got) == 0 && got &&
	     same_real(real, got->pw_dir)))
		return "a home directory";
	return NULL;
}

/*
 * A path of the system, the Python installation or the environment
 * (PYTHONPATH, ...), read-only in the candidate's view unless it shows
 * something the candidate must never see: one that is such a thing or lies
 * in one is left out; one that holds one is bound with that directory
 * hidden (kj_sandbox_hide), at the place the bind shows it.  Either is
 * recorded in tt->hidden.  Whatever the configuration names, the task's
 * directory, the cache, the seed key and the run's scratch stay out, and
 * so do the whole file system, the home directories and the host's
 * private trees (never_whole).
 */
static int sb_view(struct ttask *tt, const char *path, const char *from, struct kj_error *err)
{
	char real[PATH_MAX];
	const char *why;
	int i, rc;

	if (!path)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	/* Not there (or not for the judge): the sandbox would skip it too. */
	if (!realpath(path, real))
		return KJ_OK;
	if ((why = never_whole(tt, real)) != NULL)
		return note_hidden(tt, path, "not bound", from, why, err);
	for (i = 0; i < tt->n_forbid; i++)
		if (within(real, tt->forbid[i].real))
			return note_hidden(tt, path, "not bound", from, tt->forbid[i].what, err);
	if ((rc = sb_ro(tt, path, err)) != KJ_OK)
		return rc;
	for (i = 0; i < tt->n_forbid; i++) {
		const struct forbidden *f = &tt->forbid[i];
		const char *at;

		if (!within(f->real, real))
			continue;
		at = keep_path(tt, "%s%s", path, f->real + strlen(real));
		if (!at)
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
		if (kj_sandbox_hide(&tt->sb, at) < 0)
			return kj_error_set(err, KJ_ESANDBOX, "the sandbox cannot hold another "
					    "path ('%s')", at);
		if ((rc = note_hidden(tt, at, "hidden", path, f->what, err)) != KJ_OK)
			return rc;
	}
	return KJ_OK;
}

/* Each absolute directory of a colon-separated list, read-only (sb_view). */
static int bind_list(struct ttask *tt, const char *list, const char *from, struct kj_error *err)
{
	int rc;

	while (list && *list) {
		const char *end = strchr(list, ':');
		size_t len = end ? (size_t)(end - list) : strlen(list);

		if (len && list[0] == '/' && len < PATH_MAX &&
		    (rc = sb_view(tt, keep_path(tt, "%.*s", (int)len, list), from, err)) != KJ_OK)
			return rc;
		list = end ? end + 1 : NULL;
	}
	return KJ_OK;
}

/*
 * What the candidate must never see: the task's directory (the reference),
 * the golden cache, the state directory (the seed key), the run's scratch
 * (its own parts are bound one by one) and the judge's own directory (the
 * build directory, or where the worker is installed), unless that
 * directory holds the Python installation or the system (then the worker's
 * directory is a system one and holds nothing of the judge's own but the
 * worker, which the candidate's worker runs anyway).
 */
static void forbid_all(struct ttask *tt, const char *const *sys, size_t n_sys,
		       const char *py_root, const char *py_base)
{
	const char *keep[16];
	char jdir[PATH_MAX], real[PATH_MAX], *slash;
	size_t i, n = 0;
	int judge_dir = 1;

	forbid(tt, tt->dir, "the task's directory");
	forbid(tt, tt->cfg->cache_dir, "the golden cache");
	forbid(tt, tt->cfg->cache_shared_dir, "the shared golden cache");
	forbid(tt, tt->cfg->build_cache_dir, "the build cache");
	forbid(tt, tt->cfg->state_dir, "the state directory (the seed key)");
	forbid(tt, tt->a->scratch, "the run's scratch directory");
	if (!realpath(tt->worker, jdir) || !(slash = strrchr(jdir, '/')) || slash == jdir)
		return;
	*slash = '\0';
	keep[n++] = py_root;
	keep[n++] = py_base;
	for (i = 0; i < n_sys && n < sizeof(keep) / sizeof(keep[0]); i++)
		keep[n++] = sys[i];
	for (i = 0; i < n; i++)
		if (realpath(keep[i], real) && within(real, jdir))
			judge_dir = 0;
	if (judge_dir)
		forbid(tt, jdir, "the judge's own files");
}

struct helpers {
	struct ttask *tt;
	long long bytes;
	int rc;
	struct kj_error *err;
};

/* Copy one entry of the verify directory into the candidate's view when it
 * is a helper module of the candidate's: neither the task file, nor another
 * candidate of the task ({op}_*.py), nor a result or a bytecode cache. */
static int copy_helper(void *ctx, const char *name, const struct stat *st)
{
	struct helpers *h = ctx;
	struct ttask *tt = h->tt;
	char src[PATH_MAX], dst[PATH_MAX];
	size_t op_len = strlen(tt->t->name);
	size_t nl = strlen(name);

	if (name[0] == '.' || !strcmp(name, "__pycache__") ||
	    !strncmp(name, "verify_result", 13) ||
	    (!strncmp(name, tt->t->name, op_len) && name[op_len] == '_' && nl > 3 &&
	     !strcmp(name + nl - 3, ".py")))
		return 0;
	if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode))
		return 0;
	if (snprintf(src, sizeof(src), "%s/%s", tt->dir, name) >= (int)sizeof(src) ||
	    snprintf(dst, sizeof(dst), "%s/%s", tt->cand_src, name) >= (int)sizeof(dst))
		return 0;
	if (kj__copy_tree(src, dst, HELPERS_MAX_BYTES - h->bytes, &h->bytes, h->err) != KJ_OK) {
		h->rc = h->err->code;
		return 1;
	}
	return 0;
}

/* The system's directories that both views show, read-only. */
static const char *const sys_ro[] = { "/usr", "/lib", "/lib64", "/lib32",
	"/bin", "/sbin", "/etc", "/opt", "/sys" };

/* The interpreter's installation: a virtual environment's root and the
 * base installation its python links to (each two levels above
 * bin/python), wherever they are. */
static void python_roots(const char *python, char py_root[PATH_MAX], char py_base[PATH_MAX])
{
	int i;

	snprintf(py_root, PATH_MAX, "%s", python);
	if (!realpath(python, py_base))
		snprintf(py_base, PATH_MAX, "%s", python);
	for (i = 0; i < 4; i++) {
		char *at = i % 2 ? py_base : py_root, *slash = strrchr(at, '/');

		if (slash && slash != at)
			*slash = '\0';
	}
}

/* The devices and limits of a worker's sandbox: the same for both sides. */
static void sb_limits(const struct ttask *tt, struct kj_sandbox *sb)
{
	/* GPU nodes unless the attempt runs on the CPU by request (the
	 * device may not be decided yet: the reference's hello decides it). */
	sb->gpu = kj__nvidia_driver_loaded() && strcmp(tt->device_req, "cpu") != 0;
	sb->cpu_s = tt->cfg->limits.cpu_s;
	sb->mem_bytes = tt->cfg->limits.mem_bytes;
	sb->fsize_bytes = tt->cfg->limits.file_bytes;
	sb->nproc = tt->cfg->limits.procs;
	sb->nofile = tt->cfg->limits.nofile;
	sb->tmp_bytes = tt->cfg->limits.tmp_bytes;
}

/*
 * The candidate's view and sandbox, made once: a directory with its own
 * file, the task file without the reference class (kj__task_view) and its
 * helper modules; read-only views of the system and the Python
 * installation; its output directory and HOME writable; the limits of the
 * configuration.
 */
static int prepare_candidate(struct ttask *tt, struct kj_error *err)
{
	struct kj_task *t = tt->t;
	struct helpers h = { tt, 0, KJ_OK, err };
	char path[PATH_MAX + 512], py_root[PATH_MAX], py_base[PATH_MAX];
	char *src, *view = NULL;
	size_t len = 0, i;
	int removed = 0, rc;
	struct kj_error e;

	if (tt->cand_prepared)
		return KJ_OK;
	if (snprintf(tt->cand_src, sizeof(tt->cand_src), "%s/cand-src", tt->a->scratch) >=
		    (int)sizeof(tt->cand_src) ||
	    snprintf(tt->sb_root, sizeof(tt->sb_root), "%s/sb-root", tt->a->scratch) >=
		    (int)sizeof(tt->sb_root))
		return kj_error_set(err, KJ_EINVAL, "scratch path too long");
	if ((mkdir(tt->cand_src, 0755) < 0 && errno != EEXIST) ||
	    (mkdir(tt->sb_root, 0700) < 0 && errno != EEXIST))
		return kj_error_set(err, KJ_ESANDBOX, "cannot make the sandbox's directories: %s",
				    strerror(errno));
	/* Helper modules first: the task view and the candidate's own file
	 * are written over any of the same name. */
	if (kj__each_entry(tt->dir, copy_helper, &h) != 0 && h.rc != KJ_OK)
		return h.rc;
	src = kj__read_file(t->task_file, 64u << 20, &len, &e);
	if (!src)
		return kj_error_set(err, e.code, "%s", e.msg);
	if (kj__task_view(src, len, "Model", &view, &removed) < 0) {
		free(src);
		return kj_error_set(err, KJ_ENOMEM, "'%s': cannot make the candidate's view of "
				    "the task", t->task_file);
	}
	free(src);
	snprintf(path, sizeof(path), "%s/%s.py", tt->cand_src, tt->task_mod);
	rc = kj_write_file_atomic(path, view, strlen(view), err);
	free(view);
	if (rc != KJ_OK)
		return rc;
	src = kj__read_file(t->cand_file, 64u << 20, &len, &e);
	if (!src)
		return kj_error_set(err, e.code, "%s", e.msg);
	snprintf(path, sizeof(path), "%s/%s.py", tt->cand_src, tt->cand_mod);
	rc = kj_write_file_atomic(path, src, len, err);
	free(src);
	if (rc != KJ_OK)
		return rc;

	kj_sandbox_init(&tt->sb);
	tt->sb.root_dir = tt->sb_root;
	python_roots(tt->python, py_root, py_base);
	json_decref(tt->hidden);
	tt->hidden = json_array();
	if (!tt->hidden)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	tt->n_forbid = 0;
	forbid_all(tt, sys_ro, sizeof(sys_ro) / sizeof(sys_ro[0]), py_root, py_base);
	for (i = 0; i < sizeof(sys_ro) / sizeof(sys_ro[0]); i++)
		if ((rc = sb_view(tt, sys_ro[i], sys_ro[i], err)) != KJ_OK)
			return rc;
	if ((rc = sb_view(tt, keep_path(tt, "%s", py_root), "the Python installation", err)) != KJ_OK ||
	    (rc = sb_view(tt, keep_path(tt, "%s", py_base), "the Python installation", err)) != KJ_OK ||
	    (rc = bind_list(tt, kj_config_env(tt->cfg, "PYTHONPATH"), "PYTHONPATH", err)) != KJ_OK ||
	    (rc = bind_list(tt, kj_config_env(tt->cfg, "LD_LIBRARY_PATH"), "LD_LIBRARY_PATH",
			    err)) != KJ_OK ||
	    (rc = bind_list(tt, kj_config_env(tt->cfg, "CUDA_HOME"), "CUDA_HOME", err)) != KJ_OK)
		return rc;
	/* The judge's own binds come after the hides: they show through
	 * them (the worker in its hidden directory, the candidate's source
	 * and the bytecode tree in a hidden scratch or cache). */
	if ((rc = sb_ro(tt, tt->worker, err)) != KJ_OK ||
	    (rc = sb_ro(tt, tt->timer, err)) != KJ_OK)
		return rc;
	/* What the builder of extensions sees too (extcache.c); nothing of
	 * the candidate's own from here on. */
	tt->sb_view_n = tt->sb.n_ro;
	if ((rc = sb_ro(tt, tt->cand_src, err)) != KJ_OK)
		return rc;
	if (tt->pycache[0] && (rc = sb_ro(tt, tt->pycache, err)) != KJ_OK)
		return rc;
	if (kj_sandbox_rw(&tt->sb, t->cand.out_dir) < 0 || kj_sandbox_rw(&tt->sb, tt->cand_home) < 0 ||
	    (tt->ext_on && kj_sandbox_rw_at(&tt->sb, tt->ext_host, KJ__EXT_INSIDE) < 0))
		return kj_error_set(err, KJ_ESANDBOX, "the sandbox cannot hold another path");
	sb_limits(tt, &tt->sb);
	t->cand.sandboxed = 1;
	tt->cand_prepared = 1;
	return KJ_OK;
}

/* A path of the Python installation or the environment, read-only in the
 * reference's view (the task's own code: nothing is hidden from it but
 * what is not named), unless it is never bound whole (never_whole; then
 * recorded in tt->rhidden). */
static int ref_view(struct ttask *tt, const char *path, const char *from, struct kj_error *err)
{
	char real[PATH_MAX];
	const char *why;

	if (!path)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	if (realpath(path, real) && (why = never_whole(tt, real)) != NULL)
		return note_in(tt->rhidden, path, "not bound", from, why, err);
	return sb_ro_in(&tt->rsb, path, err);
}

/* Each absolute entry of a colon-separated list, in the reference's view
 * (ref_view). */
static int ref_list(struct ttask *tt, const char *list, const char *from, struct kj_error *err)
{
	int rc;

	while (list && *list) {
		const char *end = strchr(list, ':');
		size_t len = end ? (size_t)(end - list) : strlen(list);

		if (len && list[0] == '/' && len < PATH_MAX &&
		    (rc = ref_view(tt, keep_path(tt, "%.*s", (int)len, list), from, err)) != KJ_OK)
			return rc;
		list = end ? end + 1 : NULL;
	}
	return KJ_OK;
}

/*
 * The reference's sandbox, made once: the same kind as the candidate's
 * (kj_proc_spawn_in: namespaces, seccomp filter, cgroup, the same limits),
 * so that the two sides of a benchmark are timed under the same conditions
 * (a seccomp filter costs every system call a little, a cgroup changes how
 * the scheduler counts), with its own view: the system, the Python
 * installation and the environment's paths read-only, the task's
 * directory read-only (its module and whatever files sit beside it), its
 * output directories, its HOME and the bytecode tree writable.
 */
static int prepare_reference(struct ttask *tt, struct kj_error *err)
{
	char py_root[PATH_MAX], py_base[PATH_MAX];
	size_t i;
	int rc;

	if (tt->ref_prepared)
		return KJ_OK;
	if (snprintf(tt->rsb_root, sizeof(tt->rsb_root), "%s/sb-root-ref", tt->a->scratch) >=
	    (int)sizeof(tt->rsb_root))
		return kj_error_set(err, KJ_EINVAL, "scratch path too long");
	if (mkdir(tt->rsb_root, 0700) < 0 && errno != EEXIST)
		return kj_error_set(err, KJ_ESANDBOX, "cannot make the sandbox's directories: %s",
				    strerror(errno));
	/* The bytecode tree is bound only where it exists. */
	if (tt->pycache[0] && kj__mkdirs(tt->pycache, 0755) < 0)
		tt->pycache[0] = '\0';
	kj_sandbox_init(&tt->rsb);
	tt->rsb.root_dir = tt->rsb_root;
	python_roots(tt->python, py_root, py_base);
	json_decref(tt->rhidden);
	if (!(tt->rhidden = json_array()))
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	for (i = 0; i < sizeof(sys_ro) / sizeof(sys_ro[0]); i++)
		if ((rc = sb_ro_in(&tt->rsb, sys_ro[i], err)) != KJ_OK)
			return rc;
	if ((rc = ref_view(tt, keep_path(tt, "%s", py_root), "the Python installation",
			   err)) != KJ_OK ||
	    (rc = ref_view(tt, keep_path(tt, "%s", py_base), "the Python installation",
			   err)) != KJ_OK ||
	    (rc = ref_list(tt, kj_config_env(tt->cfg, "PYTHONPATH"), "PYTHONPATH", err)) != KJ_OK ||
	    (rc = ref_list(tt, kj_config_env(tt->cfg, "LD_LIBRARY_PATH"), "LD_LIBRARY_PATH",
			   err)) != KJ_OK ||
	    (rc = ref_list(tt, kj_config_env(tt->cfg, "CUDA_HOME"), "CUDA_HOME", err)) != KJ_OK ||
	    (rc = sb_ro_in(&tt->rsb, tt->worker, err)) != KJ_OK ||
	    (rc = sb_ro_in(&tt->rsb, tt->timer, err)) != KJ_OK ||
	    (rc = sb_ro_in(&tt->rsb, tt->dir, err)) != KJ_OK)
		return rc;
	if (kj_sandbox_rw(&tt->rsb, tt->t->ref.out_dir) < 0 ||
	    kj_sandbox_rw(&tt->rsb, tt->ref_home) < 0 ||
	    (tt->a->stage[0] && kj_sandbox_rw(&tt->rsb, tt->a->stage) < 0) ||
	    (tt->pycache[0] && kj_sandbox_rw(&tt->rsb, tt->pycache) < 0))
		return kj_error_set(err, KJ_ESANDBOX, "the sandbox cannot hold another path");
	sb_limits(tt, &tt->rsb);
	tt->ref_prepared = 1;
	return KJ_OK;
}

/* --- the task ---------------------------------------------------------------------------- */

static int make_dir(const char *base, const char *sub, char *out, size_t size,
		    struct kj_error *err)
{
	if (snprintf(out, size, "%s/%s", base, sub) >= (int)size)
		return kj_error_set(err, KJ_EINVAL, "scratch path too long");
	if (kj__mkdirs(out, 0700) < 0)
		return kj_error_set(err, KJ_EIO, "'%s': cannot create: %s", out, strerror(errno));
	return KJ_OK;
}

static void task_close(struct kj_task *t)
{
	struct ttask *tt = t->impl;

	if (t->ref.ops)
		t->ref.ops->release(&t->ref);
	if (t->cand.ops)
		t->cand.ops->release(&t->cand);
	json_decref(t->env);
	t->env = NULL;
	json_decref(t->case_params);
	t->case_params = NULL;
	if (!tt)
		return;
	strv_free(&tt->env);
	strv_free(&tt->cenv);
	strv_free(&tt->benv);
	strv_free(&tt->sb_paths);
	json_decref(tt->hidden);
	json_decref(tt->rhidden);
	if (tt->quota_bytes)
		umount2(tt->cand_files, MNT_DETACH);
	free(tt);
	t->impl = NULL;
}

static int task_start(struct kj_task *t, struct kj_error *err)
{
	struct ttask *tt = t->impl;
	struct tside *both[2] = { tt->sides[0], tt->sides[1] };
	const json_t *hello;
	int rc;
	double t0 = kj__now_s(), b0 = tt->build_s;

	snprintf(t->device, sizeof(t->device), "%s", tt->device_req[0] ? tt->device_req : "cpu");
	/* The reference is first: its hello says which device there is. */
	rc = start_sides(tt, both, t->have_candidate ? 2 : 1, err);
	/* Builds are recorded apart (build_s). */
	kj_attempt_tally(tt->a, "start_s", kj__now_s() - t0 - (tt->build_s - b0));
	if (rc != KJ_OK)
		return rc;
	hello = tt->sides[0]->hello;
	if (strncmp(t->device, "cuda", 4) == 0 &&
	    !json_is_true(json_object_get(hello, "cuda_available")))
		return kj_error_set(err, KJ_ENODEVICE, "--device %s: this machine has no CUDA device "
				    "that torch can use (torch.cuda.is_available() is False in "
				    "'%s'); use --device cpu", t->device, tt->python);
	if (!t->ref.loaded) {
		t->start_charge = KJ_CHARGE_TASK;
		return kj_error_set(err, KJ_EINVAL, "'%s': the task cannot be loaded: %.1500s",
				    t->task_file, t->ref.load_failure.message ? t->ref.load_failure.message
									      : "");
	}
	/* With a cases file the judge's own list decides. */
	t->n_cases = t->case_params ? (int)json_array_size(t->case_params) : tt->sides[0]->cases;
	if (t->n_cases <= 0) {
		t->start_charge = KJ_CHARGE_TASK;
		return kj_error_set(err, KJ_EINVAL, "'%s': the task has no cases (get_inputs() "
				    "or get_input_groups() returned nothing)", t->task_file);
	}
	t->env = json_deep_copy(hello);
	if (!t->env)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	json_object_del(t->env, "ok");
	json_object_del(t->env, "nonce");
	json_object_del(t->env, "id");
	snprintf(t->device_key, sizeof(t->device_key), "%s|%s|%s|%s%s", t->device,
		 jstr(hello, "device_name") ? jstr(hello, "device_name") : "",
		 jstr(hello, "torch") ? jstr(hello, "torch") : "",
		 jstr(hello, "triton") ? jstr(hello, "triton") : "",
		 tt->ref_compiled ? "|compile" : "");
	return KJ_OK;
}

const char *kj_torch_name_problem(const char *s)
{
	size_t i;

	if (!s || !*s)
		return "is empty";
	for (i = 0; s[i]; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-' || s[i] == '.'))
			return "is not a file stem (letters, digits, '_', '-', '.')";
	if (i > 120)
		return "is longer than 120 bytes";
	if (s[0] == '.' || s[0] == '-')
		return "starts with '.' or '-'";
	if (strstr(s, ".."))
		return "holds '..'";
	return NULL;
}

static int check_name(const char *what, const char *s, struct kj_error *err)
{
	const char *why = kj_torch_name_problem(s);

	/* The name is shown escaped: it may hold any byte. */
	if (why) {
		char shown[200];

		kj__text_shown(s ? s : "", 0, shown, sizeof(shown));
		return kj_error_set(err, KJ_EINVAL, "%s '%s' %s", what, shown, why);
	}
	return KJ_OK;
}

/* A stage a dead judge left in the extension cache (extcache.c makes
 * them read-only when sealing). */
static void sweep_stage(const char *path, void *arg)
{
	(void)arg;
	chmod(path, 0700);
	kj__rm_rf(path);
}

int kj_torch_open(const struct kj_config *cfg, struct kj_attempt *a,
		  const struct kj_torch_spec *spec, struct kj_task *t, struct kj_error *err)
{
	struct ttask *tt;
	int rc, i;

	memset(t, 0, sizeof(*t));
	if ((rc = check_name("--op_name", spec->op_name, err)) != KJ_OK ||
	    (rc = check_name("--triton_impl_name", spec->impl_name, err)) != KJ_OK)
		return rc;
	tt = calloc(1, sizeof(*tt));
	if (!tt)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	t->impl = tt;
	t->close = task_close;
	t->start = task_start;
	t->name = spec->op_name;
	tt->cfg = cfg;
	tt->a = a;
	tt->t = t;
	tt->timeout_s = spec->timeout_s > 0 ? spec->timeout_s : 900;
	snprintf(tt->device_req, sizeof(tt->device_req), "%s", spec->device ? spec->device : "");
	if (!realpath(spec->verify_dir, tt->dir) || !kj__is_dir(tt->dir)) {
		rc = kj_error_set(err, KJ_ENOENT, "'%s': not a directory", spec->verify_dir);
		goto fail;
	}
	if (snprintf(tt->task_mod, sizeof(tt->task_mod), "%s_torch", spec->op_name) >= (int)sizeof(tt->task_mod) ||
	    snprintf(tt->cand_mod, sizeof(tt->cand_mod), "%s_%s", spec->op_name, spec->impl_name) >= (int)sizeof(tt->cand_mod) ||
	    snprintf(t->task_file, sizeof(t->task_file), "%s/%s.py", tt->dir, tt->task_mod) >= (int)sizeof(t->task_file) ||
	    snprintf(t->cand_file, sizeof(t->cand_file), "%s/%s.py", tt->dir, tt->cand_mod) >= (int)sizeof(t->cand_file)) {
		rc = kj_error_set(err, KJ_EINVAL, "names too long");
		goto fail;
	}
	if (!kj__is_file(t->task_file)) {
		rc = kj_error_set(err, KJ_ENOENT, "'%s': no task file", t->task_file);
		goto fail;
	}
	rc = kj__sha256_file(t->task_file, t->task_sha256, err);
	if (rc != KJ_OK)
		goto fail;
	/* The cases file, when the task has one: read once, hashed, expanded. */
	if (snprintf(t->cases_file, sizeof(t->cases_file), "%s/%s_cases.json", tt->dir,
		     spec->op_name) >= (int)sizeof(t->cases_file)) {
		rc = kj_error_set(err, KJ_EINVAL, "names too long");
		goto fail;
	}
	if (kj__is_file(t->cases_file) || access(t->cases_file, F_OK) == 0) {
		char buf[200];

		rc = kj__cases_load(t->cases_file, &t->case_params, t->cases_sha256, err);
		if (rc != KJ_OK)
			goto fail;
		snprintf(buf, sizeof(buf), "%s|%s", t->task_sha256, t->cases_sha256);
		if (kj__sha256_hex(buf, strlen(buf), t->identity) < 0) {
			rc = kj_error_set(err, KJ_ENOMEM, "cannot hash the task (libcrypto failed)");
			goto fail;
		}
	} else {
		t->cases_file[0] = '\0';
	}
	t->cand.kernels_disabled = spec->kernels_disabled != 0;
	t->cand.profile_kernels = spec->profile_kernels != 0;
	tt->ref_compiled = spec->ref_compiled != 0;
	t->have_candidate = kj__is_file(t->cand_file);
	if (t->have_candidate && (rc = kj__sha256_file(t->cand_file, t->cand_sha256, err)) != KJ_OK)
		goto fail;
	/* The interpreter and the worker, by the rules kjudge doctor reports on. */
	if (kj__find_in_path(cfg->python, kj_config_env(cfg, "PATH"), tt->python, sizeof(tt->python)) < 0) {
		rc = kj_error_set(err, KJ_ENOENT, "no Python interpreter '%s' (%s; set --python "
				  "or KJ_PYTHON)", cfg->python, cfg->python_source);
		goto fail;
	}
	if (cfg->worker)
		snprintf(tt->worker, sizeof(tt->worker), "%s", cfg->worker);
	else if (kj__beside_self("kjudge_worker.py", tt->worker, sizeof(tt->worker)) < 0)
		tt->worker[0] = '\0';
	if (!kj__is_file(tt->worker)) {
		rc = kj_error_set(err, KJ_ENOENT, "'%s': the torch worker is missing (it is "
				  "installed beside kjudge or in ../libexec/kjudge)", tt->worker);
		goto fail;
	}
	{
		const char *slash = strrchr(tt->worker, '/');

		if (!slash || snprintf(tt->timer, sizeof(tt->timer), "%.*s/kjudge_timer.so",
				       (int)(slash - tt->worker), tt->worker) >= (int)sizeof(tt->timer) ||
		    !kj__is_file(tt->timer)) {
			rc = kj_error_set(err, KJ_ENOENT, "'%s': the worker's timing harness is "
					  "missing (it is installed beside the worker)", tt->timer);
			goto fail;
		}
	}
	/* The bytecode tree in the cache, when there is a cache (not the
	 * run's own one of $KJ_CACHE_DIR=off: nothing is kept past the run). */
	if (cfg->cache_dir && snprintf(tt->pycache, sizeof(tt->pycache), "%s/pycache", cfg->cache_dir) >=
				(int)sizeof(tt->pycache))
		tt->pycache[0] = '\0';
	if ((rc = make_dir(a->scratch, "cand-files", tt->cand_files, sizeof(tt->cand_files),
			   err)) != KJ_OK)
		goto fail;
	if (a->scratch_kind && !strncmp(a->scratch_kind, "private", 7)) {
		char opts[64];

		snprintf(opts, sizeof(opts), "size=%llu,mode=0700", QUOTA_MIN);
		/* In the run's own mount namespace: gone with it. */
		if (mount("kjudge-cand", tt->cand_files, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
			rc = kj_error_set(err, KJ_ESANDBOX, "cannot mount the candidate's files' "
					  "tmpfs at %s: %s", tt->cand_files, strerror(errno));
			goto fail;
		}
		tt->quota_bytes = QUOTA_MIN;
	}
	if ((rc = make_dir(tt->cand_files, "home", tt->cand_home, sizeof(tt->cand_home), err)) != KJ_OK ||
	    (rc = make_dir(a->scratch, "ref-home", tt->ref_home, sizeof(tt->ref_home), err)) != KJ_OK)
		goto fail;
	{
		char p[PATH_MAX];
		static const char *const sub[] = { "tmp", "cache" };
		size_t k;

		for (k = 0; k < 2; k++) {
			if ((rc = make_dir(tt->cand_home, sub[k], p, sizeof(p), err)) != KJ_OK ||
			    (rc = make_dir(tt->ref_home, sub[k], p, sizeof(p), err)) != KJ_OK)
				goto fail;
		}
	}
	/* Extensions built by the judge: where there is a cache to keep them
	 * and a sandbox to build them in (its own, for each build). */
	tt->ext_on = cfg->build_cache_dir && cfg->sandbox;
	if (tt->ext_on) {
		if (snprintf(tt->ext_root, sizeof(tt->ext_root), "%s", cfg->build_cache_dir) >=
		    (int)sizeof(tt->ext_root)) {
			rc = kj_error_set(err, KJ_EINVAL, "build cache path too long");
			goto fail;
		}
		if (kj__mkdirs(tt->ext_root, 0700) < 0) {
			rc = kj_error_set(err, KJ_EIO, "build cache '%s': cannot create: %s",
					  tt->ext_root, strerror(errno));
			goto fail;
		}
		if ((rc = make_dir(tt->cand_files, "ext", tt->ext_host, sizeof(tt->ext_host),
				   err)) != KJ_OK ||
		    (rc = make_dir(a->scratch, "sb-root-build", tt->bsb_root, sizeof(tt->bsb_root),
				   err)) != KJ_OK)
			goto fail;
		if (env_builder(tt, &tt->benv) < 0) {
			rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
			goto fail;
		}
		kj__sweep_dead_runs(tt->ext_root, "stage-", sweep_stage, NULL);
	}
	if (env_build(tt, &tt->env, tt->ref_home, NULL) < 0 ||
	    env_build(tt, &tt->cenv, tt->cand_home, tt->ext_on ? KJ__EXT_INSIDE : NULL) < 0) {
		rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
		goto fail;
	}
	if ((rc = make_dir(a->scratch, "reference", t->ref.out_dir, sizeof(t->ref.out_dir), err)) != KJ_OK ||
	    (rc = make_dir(tt->cand_files, "out", t->cand.out_dir, sizeof(t->cand.out_dir), err)) != KJ_OK)
		goto fail;
	for (i = 0; i < 2; i++) {
		struct kj_side *s = i ? &t->cand : &t->ref;
		struct tside *ts = calloc(1, sizeof(*ts));

		if (!ts) {
			rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
			goto fail;
		}
		ts->tt = tt;
		ts->s = s;
		kj_proc_init(&ts->proc);
		s->impl = ts;
		s->ops = &torch_ops;
		s->role = i ? KJ_SIDE_CANDIDATE : KJ_SIDE_REFERENCE;
		kj_reply_init(&s->load_failure);
		tt->sides[i] = ts;
	}
	if (!t->have_candidate) {
		/* Every case says so; nothing of it is started. */
		t->cand.load_failure.type = KJ_ET_NO_CANDIDATE;
		if (asprintf(&t->cand.load_failure.message, "'%s': no candidate file", t->cand_file) < 0) {
			t->cand.load_failure.message = NULL;
			rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
			goto fail;
		}
		t->cand.started = 1;
	}
	return KJ_OK;
fail:
	task_close(t);
	memset(t, 0, sizeof(*t));
	return rc;
}
