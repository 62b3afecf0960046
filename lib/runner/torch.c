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
 *
 * The protocol's client is generic (wire.c): this file gives it the task's
 * layout, the Python environment, each side's sandbox view, the requests
 * of the handshake and the checks of the hello, and serves the extension
 * builds the candidate's worker asks for (extcache.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
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
#include "runner/wire.h"
#include "base/vec.h"

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
	if (KJ__GROW(s->v, s->cap, s->n + 2) != KJ_OK) {
		free(owned);
		return -1;
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
	/* Opened by kj_torch_prestart: the verify directory's files are not
	 * there yet (kj_torch_fill reads them). */
	int files_pending;
	/* What the candidate must never see (real paths), and what was left
	 * out of its view or hidden in it because of them (a JSON array,
	 * recorded with the limits in force). */
	struct forbidden {
		const char *what;
		char real[PATH_MAX];
	} forbid[10];
	int n_forbid;
	json_t *hidden;
	json_t *rhidden;                /* the same for the reference's view */
	/* The protocol's client (wire.h): the worker's command and how it
	 * is shown, and the two sides (the reference's, the candidate's). */
	struct kj__wire wire;
	char fd_flag[8], fd_num[4];
	char *argv[5];
	/* The worker template's command (spawn.h, "Templates"): the worker
	 * in --template mode with its native half, kjudge_template.so beside
	 * it, and the bytecode tree ("-": none); tmpl_argv[0] NULL when
	 * workers start on their own. */
	char tmpl_lib[PATH_MAX], tmpl_flag[12], tmpl_none[2];
	char *tmpl_argv[7];
	char what[PATH_MAX + 200];
	struct kj__wire_side *sides[2];
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

/* What a worker's environment holds of its own (env_build): a child of a
 * template takes these from its start, the rest is the template's. */
static const char *const tmpl_free_env[] = {
	"HOME", "XDG_CACHE_HOME", "TRITON_CACHE_DIR", "TORCH_EXTENSIONS_DIR", "TMPDIR", NULL,
};

/* A worker's sandbox names the template, when there is one. */
static void template_of(struct ttask *tt, struct kj_sandbox *sb)
{
	if (tt->tmpl_argv[0]) {
		sb->template_argv = tt->tmpl_argv;
		sb->template_free_env = tmpl_free_env;
	}
}

/* The candidate's files' quota, at least (ttask.quota_bytes). */
#define QUOTA_MIN (256ull << 20)


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

/* The candidate's files' quota follows the task's outputs (twice them,
 * 256 MiB at least), known from the reference's first golden run.  A
 * remount that fails leaves the smaller quota: the candidate's limit, never
 * a larger one. */
static void grow_quota(void *ctx, struct kj__wire_side *w, const struct kj_value *outputs)
{
	struct ttask *tt = ctx;
	unsigned long long want;
	char opts[64];

	(void)w;
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

/*
 * One build request of the candidate's worker (extcache.c): the answer to
 * send back, {"built": bool, "why"}; NULL with err filled for the judge's
 * own failures (out of memory, an interrupt).  `builds`: whether the
 * request being served may build (load and run; never a timed round).
 */
static json_t *serve_build(void *ctx, struct kj__wire_side *ts, const json_t *msg, int builds,
			   struct kj_error *err)
{
	struct ttask *tt = ctx;
	const char *name = json_string_value(json_object_get(msg, "build"));
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
	c.argv = tt->argv;
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

/* The fix for a Python that cannot run the worker (as kjudge doctor gives
 * it): into buf, with its "; fix: ", or "" for another failure. */
static const char *python_fix(void *ctx, const char *msg, char *buf, size_t size)
{
	const struct ttask *tt = ctx;
	size_t n;

	if (!msg || (!strstr(msg, "No module named 'torch'") &&
		     !strstr(msg, "No module named 'numpy'")))
		return "";
	n = (size_t)snprintf(buf, size, "; fix: ");
	if (n < size)
		kj__python_fix(tt->python, buf + n, size - n);
	if ((n = strlen(buf)) < size)
		snprintf(buf + n, size - n, " (kjudge doctor checks)");
	return buf;
}

static int prepare_candidate(struct ttask *tt, struct kj_error *err);
static int prepare_reference(struct ttask *tt, struct kj_error *err);

/* --- the protocol's client's hooks (wire.h) ------------------------------------------ */

/* Each side's view, made again at each start (both sides in the same kind
 * of sandbox). */
static int hook_prepare(void *ctx, struct kj__wire_side *w, struct kj_error *err)
{
	struct ttask *tt = ctx;

	return w->s->role == KJ_SIDE_CANDIDATE ? prepare_candidate(tt, err)
					       : prepare_reference(tt, err);
}

/* What the view hid, and the candidate's file quota, with the limits. */
static int hook_limits(void *ctx, struct kj__wire_side *w, struct kj_error *err)
{
	struct ttask *tt = ctx;
	struct kj_side *s = w->s;

	if ((s->sandboxed && w->proc.isolation == KJ_ISOLATION_SANDBOX &&
	     (json_object_set(s->limits, "hidden", tt->hidden) ||
	      json_object_set_new(s->limits, "file_quota_bytes",
				  json_integer((json_int_t)tt->quota_bytes)))) ||
	    (s->role == KJ_SIDE_REFERENCE && w->proc.isolation == KJ_ISOLATION_SANDBOX &&
	     json_object_set(s->limits, "hidden", tt->rhidden)))
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	return KJ_OK;
}

/* The handshake: "hello" (which imports torch, the slow part), then
 * "load_task" (the task file only; for the candidate, its view), then
 * "load" (the module under test). */
static json_t *hook_request(void *ctx, enum kj__wire_step step, struct kj__wire_side *w)
{
	struct ttask *tt = ctx;
	struct kj_side *s = w->s;
	int cand = s->role == KJ_SIDE_CANDIDATE;
	json_t *req;

	/* The bytecode tree is written by the reference only.  Workers started
	 * ahead of their attempt on a GPU (serve's warm pairs) make their CUDA
	 * context there, and the candidate's starts the profiler once (CUPTI's
	 * first start takes seconds): both then happen while the pair waits,
	 * not after its request came.  Nothing of the task or the candidate
	 * exists yet. */
	if (step == KJ__WIRE_HELLO) {
		int ahead = w->wire->prestarting && strncmp(tt->t->device, "cuda", 4) == 0;

		return json_pack("{s:s, s:s?, s:b, s:s?, s:b}", "op", "hello", "pycache",
				 tt->pycache[0] ? tt->pycache : NULL, "write_bytecode", !cand,
				 "device", ahead ? tt->t->device : NULL, "prime_profiler",
				 ahead && cand);
	}
	if (step == KJ__WIRE_TASK) {
		req = json_pack("{s:s, s:s, s:s, s:s}", "op", "load_task", "dir",
				cand && tt->cfg->sandbox ? tt->cand_src : tt->dir,
				"task_module", tt->task_mod, "device", tt->t->device);
		/* With a cases file: every case's parameters, so the worker can
		 * check that the task's generators take them.  The candidate's
		 * worker does not count the cases: the reference's count is the
		 * judge's (task_start). */
		if (req && ((tt->t->case_params &&
			     json_object_set(req, "case_params", tt->t->case_params)) ||
			    (cand && json_object_set_new(req, "count", json_false())))) {
			json_decref(req);
			req = NULL;
		}
		return req;
	}
	req = json_pack("{s:s, s:s, s:s, s:I}", "op", "load", "module",
			cand ? tt->cand_mod : tt->task_mod, "cls", cand ? "ModelNew" : "Model",
			"init_seed", (json_int_t)s->init_seed);
	/* The model of the first case is built at load (get_init_inputs with
	 * its parameters); another case's is built at its first call.  The
	 * candidate's anti-cheat layers, only when on. */
	if (req && ((tt->t->case_params &&
		     json_object_set(req, "params", json_array_get(tt->t->case_params, 0))) ||
		    (cand && s->kernels_disabled &&
		     json_object_set_new(req, "kernels_disabled", json_true())) ||
		    (!cand && tt->ref_compiled && json_object_set_new(req, "compile", json_true())) ||
		    (cand && s->profile_kernels &&
		     json_object_set_new(req, "profile_kernels", json_true())) ||
		    (cand && tt->ext_on &&
		     json_object_set_new(req, "ext_builds", json_string(KJ__EXT_INSIDE))))) {
		json_decref(req);
		req = NULL;
	}
	return req;
}

/* The device, from the hellos (before any module is imported). */
static int hook_hello(void *ctx, struct kj__wire_side **sv, int n, struct kj_error *err)
{
	struct ttask *tt = ctx;
	int i;

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
	return KJ_OK;
}

/* A candidate whose write found its file system full filled it itself
 * where it has a quota of its own, or wrote past its file limit. */
static int hook_own_full(void *ctx, struct kj__wire_side *w)
{
	struct ttask *tt = ctx;

	return tt->quota_bytes || kj__tree_bytes(w->s->out_dir) + kj__tree_bytes(tt->cand_home) >
					  tt->cfg->limits.file_bytes;
}

static const struct kj__wire_hooks torch_hooks = {
	.prepare = hook_prepare,
	.limits = hook_limits,
	.request = hook_request,
	.hello = hook_hello,
	.serve = serve_build,
	.outputs = grow_quota,
	.own_full = hook_own_full,
	.start_fix = python_fix,
};

/* The torch worker answers every optional request. */
static const struct kj_side_ops torch_ops = {
	.name = "torch",
	.caps = KJ_SIDE_CAP_DEVICE | KJ_SIDE_CAP_DEVCMP | KJ_SIDE_CAP_FREEZE,
	.start = kj__wire_op_start,
	.send = kj__wire_op_send,
	.recv = kj__wire_op_recv,
	.stop = kj__wire_op_stop,
	.freeze = kj__wire_op_freeze,
	.release = kj__wire_op_release,
	.kill = kj__wire_op_kill,
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
	/* eval's KJ_CACHE_DIR, where the speed of light is kept beside its
	 * batch's own golden cache. */
	forbid(tt, tt->cfg->sol_cache_dir, "the speed of light's cache");
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

/* The candidate's source directory and sandbox root. */
static int candidate_dirs(struct ttask *tt, struct kj_error *err)
{
	if (snprintf(tt->cand_src, sizeof(tt->cand_src), "%s/cand-src", tt->a->scratch) >=
		    (int)sizeof(tt->cand_src) ||
	    snprintf(tt->sb_root, sizeof(tt->sb_root), "%s/sb-root", tt->a->scratch) >=
		    (int)sizeof(tt->sb_root))
		return kj_error_set(err, KJ_EINVAL, "scratch path too long");
	if ((mkdir(tt->cand_src, 0755) < 0 && errno != EEXIST) ||
	    (mkdir(tt->sb_root, 0700) < 0 && errno != EEXIST))
		return kj_error_set(err, KJ_ESANDBOX, "cannot make the sandbox's directories: %s",
				    strerror(errno));
	return KJ_OK;
}

/* What the candidate sees of the verify directory, written into cand_src
 * (its view binds the directory: a worker started before the files were
 * there finds them): its helper modules, the task view and its own file. */
static int candidate_files(struct ttask *tt, struct kj_error *err)
{
	struct kj_task *t = tt->t;
	struct helpers h = { tt, 0, KJ_OK, err };
	char path[PATH_MAX + 512];
	char *src, *view = NULL;
	size_t len = 0;
	int removed = 0, rc;
	struct kj_error e;

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
	return rc;
}

/*
 * The candidate's view and sandbox, made once: a directory with its own
 * file, the task file without the reference class (kj__task_view) and its
 * helper modules (candidate_files: later, for a worker started before
 * they were staged); read-only views of the system and the Python
 * installation; its output directory and HOME writable; the limits of the
 * configuration.
 */
static int prepare_candidate(struct ttask *tt, struct kj_error *err)
{
	struct kj_task *t = tt->t;
	char py_root[PATH_MAX], py_base[PATH_MAX];
	size_t i;
	int rc;

	if (tt->cand_prepared)
		return KJ_OK;
	if ((rc = candidate_dirs(tt, err)) != KJ_OK ||
	    (!tt->files_pending && (rc = candidate_files(tt, err)) != KJ_OK))
		return rc;

	kj_sandbox_init(&tt->sb);
	tt->sb.root_dir = tt->sb_root;
	template_of(tt, &tt->sb);
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
	template_of(tt, &tt->rsb);
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

/* A text of the hello, "" where it has none. */
static const char *hello_str(const json_t *hello, const char *key)
{
	const char *v = json_string_value(json_object_get(hello, key));

	return v ? v : "";
}

static int task_start(struct kj_task *t, struct kj_error *err)
{
	struct ttask *tt = t->impl;
	struct kj__wire_side *both[2] = { tt->sides[0], tt->sides[1] };
	const json_t *hello;
	int rc;
	double t0 = kj__now_s(), b0 = tt->build_s;

	/* Workers started before the task (kj_torch_prestart) said hello:
	 * the device is decided. */
	if (!tt->device_known)
		snprintf(t->device, sizeof(t->device), "%s",
			 tt->device_req[0] ? tt->device_req : "cpu");
	/* The reference is first: its hello says which device there is. */
	rc = kj__wire_start(both, t->have_candidate ? 2 : 1, err);
	/* Builds are recorded apart (build_s); the steps, to say where a
	 * start's time went (the module's step less its builds). */
	kj_attempt_tally(tt->a, "start_s", kj__now_s() - t0 - (tt->build_s - b0));
	kj_attempt_tally(tt->a, "start_spawn_s", tt->wire.spawn_s);
	kj_attempt_tally(tt->a, "start_task_s", tt->wire.task_s);
	kj_attempt_tally(tt->a, "start_module_s", fmax(0, tt->wire.module_s - (tt->build_s - b0)));
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
		 hello_str(hello, "device_name"), hello_str(hello, "torch"),
		 hello_str(hello, "triton"),
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

/*
 * What the task's files decide (kj_torch_open's second half, kj_torch_fill's
 * first): the names, the task and candidate files hashed, the cases file
 * read, the layers asked for, a missing candidate's failure.
 */
static int open_files(struct ttask *tt, const struct kj_torch_spec *spec, struct kj_error *err)
{
	struct kj_task *t = tt->t;
	int rc;

	if ((rc = check_name("--op_name", spec->op_name, err)) != KJ_OK)
		return rc;
	t->name = spec->op_name;
	if (snprintf(tt->task_mod, sizeof(tt->task_mod), "%s_torch", spec->op_name) >= (int)sizeof(tt->task_mod) ||
	    snprintf(tt->cand_mod, sizeof(tt->cand_mod), "%s_%s", spec->op_name, spec->impl_name) >= (int)sizeof(tt->cand_mod) ||
	    snprintf(t->task_file, sizeof(t->task_file), "%s/%s.py", tt->dir, tt->task_mod) >= (int)sizeof(t->task_file) ||
	    snprintf(t->cand_file, sizeof(t->cand_file), "%s/%s.py", tt->dir, tt->cand_mod) >= (int)sizeof(t->cand_file)) {
		rc = kj_error_set(err, KJ_EINVAL, "names too long");
		return rc;
	}
	if (!kj__is_file(t->task_file)) {
		rc = kj_error_set(err, KJ_ENOENT, "'%s': no task file", t->task_file);
		return rc;
	}
	rc = kj__sha256_file(t->task_file, t->task_sha256, err);
	if (rc != KJ_OK)
		return rc;
	/* The cases file, when the task has one: read once, hashed, expanded. */
	if (snprintf(t->cases_file, sizeof(t->cases_file), "%s/%s_cases.json", tt->dir,
		     spec->op_name) >= (int)sizeof(t->cases_file)) {
		rc = kj_error_set(err, KJ_EINVAL, "names too long");
		return rc;
	}
	if (kj__is_file(t->cases_file) || access(t->cases_file, F_OK) == 0) {
		char buf[200];

		rc = kj__cases_load(t->cases_file, &t->case_params, t->cases_sha256, err);
		if (rc != KJ_OK)
			return rc;
		snprintf(buf, sizeof(buf), "%s|%s", t->task_sha256, t->cases_sha256);
		if (kj__sha256_hex(buf, strlen(buf), t->identity) < 0) {
			rc = kj_error_set(err, KJ_ENOMEM, "cannot hash the task (libcrypto failed)");
			return rc;
		}
	} else {
		t->cases_file[0] = '\0';
	}
	t->cand.kernels_disabled = spec->kernels_disabled != 0;
	t->cand.profile_kernels = spec->profile_kernels != 0;
	tt->ref_compiled = spec->ref_compiled != 0;
	t->have_candidate = kj__is_file(t->cand_file);
	if (t->have_candidate && (rc = kj__sha256_file(t->cand_file, t->cand_sha256, err)) != KJ_OK)
		return rc;
	if (!t->have_candidate) {
		/* Every case says so; nothing of it is started. */
		t->cand.load_failure.type = KJ_ET_NO_CANDIDATE;
		if (asprintf(&t->cand.load_failure.message, "'%s': no candidate file", t->cand_file) < 0) {
			t->cand.load_failure.message = NULL;
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
		}
		t->cand.started = 1;
	}
	return KJ_OK;
}

/*
 * Everything of kj_torch_open that reads nothing in the verify directory:
 * the directory resolved, the interpreter and the worker found, the
 * attempt's directories, the environments and the protocol's client.
 */
static int open_base(const struct kj_config *cfg, struct kj_attempt *a,
		     const struct kj_torch_spec *spec, struct kj_task *t, struct kj_error *err)
{
	struct ttask *tt;
	int rc, i;

	memset(t, 0, sizeof(*t));
	if ((rc = check_name("--triton_impl_name", spec->impl_name, err)) != KJ_OK)
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
	/* A template where its native half is there and it is not turned off
	 * (without one, each worker imports torch itself). */
	{
		const char *slash = strrchr(tt->worker, '/');

		tt->tmpl_argv[0] = NULL;
		if (cfg->worker_template && cfg->sandbox && slash &&
		    snprintf(tt->tmpl_lib, sizeof(tt->tmpl_lib), "%.*s/kjudge_template.so",
			     (int)(slash - tt->worker), tt->worker) < (int)sizeof(tt->tmpl_lib) &&
		    kj__is_file(tt->tmpl_lib)) {
			snprintf(tt->tmpl_flag, sizeof(tt->tmpl_flag), "--template");
			tt->tmpl_argv[0] = tt->python;
			tt->tmpl_argv[1] = tt->worker;
			tt->tmpl_argv[2] = tt->tmpl_flag;
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
	/* The protocol's client: the worker, run by the interpreter, with its
	 * channel on descriptor 3.  Starting Python, torch and CUDA takes
	 * seconds (4.8 s on an H200 machine): a short --timeout is meant for
	 * the cases, not for this, nor for the task's own loading.  The
	 * candidate's module is another matter: its import and its
	 * constructor are its own code, and --timeout bounds every wait the
	 * candidate controls. */
	snprintf(tt->fd_flag, sizeof(tt->fd_flag), "--fd");
	snprintf(tt->fd_num, sizeof(tt->fd_num), "3");
	if (tt->tmpl_argv[0]) {
		tt->tmpl_argv[3] = tt->fd_num;
		tt->tmpl_argv[4] = tt->tmpl_lib;
		snprintf(tt->tmpl_none, sizeof(tt->tmpl_none), "-");
		tt->tmpl_argv[5] = tt->pycache[0] ? tt->pycache : tt->tmpl_none;
		tt->tmpl_argv[6] = NULL;
	}
	tt->argv[0] = tt->python;
	tt->argv[1] = tt->worker;
	tt->argv[2] = tt->fd_flag;
	tt->argv[3] = tt->fd_num;
	tt->argv[4] = NULL;
	snprintf(tt->what, sizeof(tt->what), "'%s' (%s)", tt->python, cfg->python_source);
	tt->wire.argv = tt->argv;
	tt->wire.what = tt->what;
	tt->wire.timeout_s = tt->timeout_s;
	tt->wire.startup_s = tt->timeout_s > 300 ? tt->timeout_s : 300;
	tt->wire.cfg = cfg;
	tt->wire.t = t;
	tt->wire.hooks = &torch_hooks;
	tt->wire.ctx = tt;
	for (i = 0; i < 2; i++) {
		struct kj_side *s = i ? &t->cand : &t->ref;

		s->ops = &torch_ops;
		s->role = i ? KJ_SIDE_CANDIDATE : KJ_SIDE_REFERENCE;
		kj_reply_init(&s->load_failure);
		rc = kj__wire_side_new(&tt->wire, s, i ? tt->cenv.v : tt->env.v,
				       !cfg->sandbox ? NULL : i ? &tt->sb : &tt->rsb, err);
		if (rc != KJ_OK)
			goto fail;
		tt->sides[i] = s->impl;
	}
	return KJ_OK;
fail:
	task_close(t);
	memset(t, 0, sizeof(*t));
	return rc;
}

int kj_torch_open(const struct kj_config *cfg, struct kj_attempt *a,
		  const struct kj_torch_spec *spec, struct kj_task *t, struct kj_error *err)
{
	int rc;

	memset(t, 0, sizeof(*t));
	if ((rc = check_name("--op_name", spec->op_name, err)) != KJ_OK ||
	    (rc = open_base(cfg, a, spec, t, err)) != KJ_OK)
		return rc;
	if ((rc = open_files(t->impl, spec, err)) != KJ_OK) {
		task_close(t);
		memset(t, 0, sizeof(*t));
	}
	return rc;
}

int kj_torch_prestart(const struct kj_config *cfg, struct kj_attempt *a,
		      const struct kj_torch_spec *spec, struct kj_task *t, struct kj_error *err)
{
	struct ttask *tt;
	double t0 = kj__now_s();
	int rc = open_base(cfg, a, spec, t, err);

	if (rc != KJ_OK)
		return rc;
	tt = t->impl;
	tt->files_pending = 1;
	snprintf(t->device, sizeof(t->device), "%s", tt->device_req[0] ? tt->device_req : "cpu");
	rc = kj__wire_prestart(tt->sides, 2, err);
	if (rc != KJ_OK) {
		task_close(t);
		memset(t, 0, sizeof(*t));
		return rc;
	}
	kj_attempt_tally(a, "prestart_s", kj__now_s() - t0);
	return KJ_OK;
}

int kj_torch_fill(struct kj_task *t, const struct kj_torch_spec *spec, struct kj_error *err)
{
	struct ttask *tt = t->impl;
	int rc;

	if (!tt || !tt->files_pending)
		return kj_error_set(err, KJ_EINVAL, "internal: the task was not prestarted");
	if ((rc = open_files(tt, spec, err)) != KJ_OK)
		return rc;
	tt->files_pending = 0;
	/* The attempt's own bounds (the prestart knew the defaults only). */
	tt->timeout_s = spec->timeout_s > 0 ? spec->timeout_s : 900;
	tt->wire.timeout_s = tt->timeout_s;
	tt->wire.startup_s = tt->timeout_s > 300 ? tt->timeout_s : 300;
	if (!t->have_candidate) {
		/* Nothing of it is judged: its warm worker goes. */
		t->cand.ops->kill(&t->cand);
		return KJ_OK;
	}
	/* The candidate's view binds its directory: the files show in it. */
	return tt->cand_prepared ? candidate_files(tt, err) : KJ_OK;
}

