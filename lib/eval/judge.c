/*
 * judge.c - one attempt of the torch kind (kinds.c), from its candidate's
 * source to its verdict in the store (kjudge/eval.h): validate, verify,
 * benchmark, the kernels-disabled layer, the profiler layer, every row
 * committed as it comes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kjudge/eval.h"
#include "kjudge/fileio.h"
#include "kjudge/proc.h"
#include "kjudge/store.h"
#include "kjudge/torch.h"
#include "kjudge/anticheat.h"
#include "kjudge/audit.h"
#include "eval/eval_internal.h"
#include "base/fs.h"
#include "base/internal.h"
#include "base/hash.h"
#include "base/json.h"
#include "base/text.h"
#include "store/keys.h"
#include "base/banned.h"

/* The candidate module's suffix in a staged task: {op}_kjudge_impl.py. */
#define IMPL_NAME "kjudge_impl"

/* --- settings and keys ------------------------------------------------------------------ */

json_t *kj_eval_settings_json(const struct kj_eval_settings *s)
{
	const struct kj_judge_opts *j = &s->judge;
	const struct kj_bench_opts *b = &s->bench;

	json_t *o = json_pack("{s:s, s:f, s:i, s:i, s:i, s:{s:i, s:i, s:i, s:f, s:f, s:i}, s:b, "
			      "s:s}",
			      "device", s->device ? s->device : "auto", "timeout_s", j->timeout_s,
			      "input_sets", j->input_sets, "int_rule", (int)j->cmp.int_rule,
			      "float64_rule", (int)j->cmp.float64_rule, "benchmark", "warmup",
			      b->warmup, "repeats", b->repeats, "max_repeats", b->max_repeats,
			      "budget_s", b->budget_s, "target_ci", b->target_ci, "timed_sets",
			      b->timed_sets, "verify_only", s->no_benchmark, "layers",
			      "static,disabled,profile");

	/* Only when set: the compiled baseline, and a run without the speed
	 * of light (which can fail a case); the settings of every other
	 * store, and so their attempts' keys, stay what they were. */
	if (o && ((s->ref_compiled &&
		   json_object_set_new(o, "baseline", json_string("compile"))) ||
		  (b->rounds != KJ_ROUNDS_AUTO &&
		   json_object_set_new(o, "rounds", json_string(kj_rounds_name(b->rounds)))) ||
		  (s->sol_off && json_object_set_new(o, "sol", json_string("off"))))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int kj_eval_attempt_key(const struct kj_eval_task *t, const struct kj_eval_cand *c,
			const char *device_kind, const char *settings_text, char key[65],
			struct kj_error *err)
{
	return kj__store_attempt_key(t->key, c->sha256, c->model, c->attempt, device_kind,
				     KJ_VERSION, settings_text, key) == 0
		? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
}

/* --- the store's statements ------------------------------------------------------------ */

struct ctx {
	struct kj_store *store;
	const char *key;
	const struct kj_eval_task *task;
	const struct kj_eval_cand *cand;
	const char *phase;      /* of the cases being recorded */
	int store_failed;       /* a row could not be committed */
	json_t *params;         /* the task's cases' parameters, or NULL */
	/* Cases (n_own) whose reference figures, given to the benchmark, are
	 * this attempt's own measurement (retime): their records say
	 * ref_measured, as the first run's did. */
	const unsigned char *own_ref;
	int n_own;
};

/* The attempt's row as 'running', its earlier rows gone (services.c). */
static int record_start(struct ctx *x, const struct kj_eval_slot *slot, struct kj_error *err)
{
	return kj__eval_record_start(x->store, x->key, x->task, x->cand, slot, err);
}

/* The case's own record: what verify_result.json says of it. */
static json_t *case_record(const struct ctx *x, const struct kj_case *c)
{
	int own = x && x->own_ref && c->index >= 0 && c->index < x->n_own && x->own_ref[c->index];

	json_t *r = json_pack("{s:i, s:s, s:s, s:i, s:i, s:i, s:i}", "case_idx", c->index + 1,
			      "status", kj_status_name(kj_case_status(c)), "error_type",
			      kj_etype_name(c->type), "input_set", c->input_set, "output", c->output,
			      "compared", c->compared, "expected", c->expected);

	if (!r)
		return NULL;
	if ((c->exception && json_object_set_new(r, "exception", json_string(c->exception))) ||
	    (c->metrics && json_object_set(r, "metrics", c->metrics)) ||
	    (c->input_desc && json_object_set(r, "input_desc", c->input_desc)) ||
	    (c->sol && json_object_set(r, "sol", c->sol)) ||
	    (c->timed && json_object_set_new(r, "timing",
			json_pack("{s:f, s:f, s:f, s:f, s:f, s:b, s:f, s:f, s:i, s:i, s:f, s:s, s:b, "
				  "s:s}",
				  "ref_judge_ms", c->ref.judge_ms, "impl_judge_ms", c->cand.judge_ms,
				  "ref_overhead_ms", c->ref.overhead_ms,
				  "judge_speedup", c->judge_speedup,
				  "judge_speedup_hi", c->judge_speedup_hi,
				  "speedup_bounded", c->speedup_bounded,
				  "ref_median_ms", c->ref.median_ms, "impl_median_ms",
				  c->cand.median_ms, "ref_samples", c->ref.n, "impl_samples",
				  c->cand.n, "speedup", c->speedup, "timer", c->cand.timer,
				  "ref_measured", !c->ref_given || own, "rounds",
				  c->rounds_queued ? "queued" : "synced")))) {
		json_decref(r);
		return NULL;
	}
	return r;
}

/* One case of a phase, committed before the next case runs. */
static int on_case(void *vx, const struct kj_task *t, const struct kj_result *r,
		   const struct kj_case *c, struct kj_error *err)
{
	struct ctx *x = vx;
	json_t *rec = case_record(x, c), *params = NULL;
	char *rec_text = NULL, *params_text = NULL;
	int rc, is_oom = 0;

	(void)t;
	(void)r;
	if (x->params && (size_t)c->index < json_array_size(x->params))
		params = json_array_get(x->params, (size_t)c->index);
	if (!rec || !(rec_text = kj__json_dumps(rec, JSON_COMPACT, &is_oom)) ||
	    (params && !(params_text = kj__json_dumps(params, JSON_COMPACT, &is_oom)))) {
		json_decref(rec);
		free(rec_text);
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	json_decref(rec);
	{
		struct kj_store_case row = {
			.phase = x->phase, .case_idx = c->index + 1, .params = params_text,
			.status = kj_status_name(kj_case_status(c)),
			.error_type = kj_etype_name(c->type),
			.category = c->type == KJ_ET_NONE
					    ? NULL : kj_category_name(kj_etype_category(c->type)),
			.charged = kj_charge_name(kj_etype_charge(c->type)),
			.message = c->message, .record = rec_text,
		};
		struct kj_store_timing tm = {
			.impl_ms = c->cand.median_ms, .ref_ms = c->ref.median_ms,
			.speedup = c->speedup, .impl_samples = c->cand.n, .ref_samples = c->ref.n,
			.sol_ms = c->sol_ms,
		};

		rc = kj_store_case(x->store, x->key, &row,
				   c->timed && strcmp(x->phase, "benchmark") == 0 ? &tm : NULL, err);
	}
	if (rc != KJ_OK)
		x->store_failed = 1;
	free(rec_text);
	free(params_text);
	return rc;
}

/* --- staging the task ---------------------------------------------------------------- */

/* The op name of a task in its staged directory: its own name when that is
 * one (KernelBench's '19_ReLU' is), else kb_ and the name with every byte
 * not a letter or digit as _ ('a b' -> 'kb_a_b'). */
static void op_name(const char *name, char *op, size_t size)
{
	size_t i, o = 0;

	if (!kj_torch_name_problem(name)) {
		snprintf(op, size, "%s", name);
		return;
	}
	o = (size_t)snprintf(op, size, "kb_");
	for (i = 0; name[i] && o + 1 < size && o < 120; i++) {
		char ch = name[i];

		op[o++] = ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			   (ch >= '0' && ch <= '9')) ? ch : '_';
	}
	op[o] = '\0';
}

static int copy_file(const char *from, const char *to, struct kj_error *err)
{
	size_t len = 0;
	char *text = kj__read_file(from, 64u << 20, &len, err);
	int rc;

	if (!text)
		return err ? err->code : KJ_EIO;
	rc = kj_write_file_atomic(to, text, len, err);
	free(text);
	return rc;
}

/* dir/{op}_torch.py, dir/{op}_cases.json, dir/{op}_kjudge_impl.py. */
static int stage(const struct kj_eval_task *t, const struct kj_eval_cand *c, const char *dir,
		 const char *op, struct kj_error *err)
{
	char path[PATH_MAX + 256];
	int rc;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return kj_error_set(err, kj_err_from_errno(errno), "'%s': %s", dir, strerror(errno));
	snprintf(path, sizeof(path), "%s/%s_torch.py", dir, op);
	rc = copy_file(t->path, path, err);
	if (rc == KJ_OK && t->cases_path) {
		snprintf(path, sizeof(path), "%s/%s_cases.json", dir, op);
		rc = copy_file(t->cases_path, path, err);
	}
	if (rc == KJ_OK) {
		snprintf(path, sizeof(path), "%s/%s_" IMPL_NAME ".py", dir, op);
		rc = kj_write_file_atomic(path, c->source, c->source_len, err);
	}
	return rc;
}

/* --- the layers ------------------------------------------------------------------------ */

struct layers {
	int static_ok;          /* 1, 0, or -1 not run */
	char static_msg[600];
	int disabled_ok;
	char disabled_msg[600];
	int profile_ok;         /* -1: not applicable (not a GPU) */
	char profile_msg[600];
	char **kernels;         /* the candidate's own kernels' names (validate) */
	size_t n_kernels;
};

static void layers_release(struct layers *l)
{
	size_t i;

	for (i = 0; i < l->n_kernels; i++)
		free(l->kernels[i]);
	free(l->kernels);
}

/* The static check (kjudge validate): a candidate it finds degraded, or
 * cannot judge, is not clean.  Its kernels' names stay for the profiler. */
static int static_layer(const char *cand_file, struct layers *l, struct kj_error *err)
{
	struct kj_static_layer s;
	int rc = kj_static_layer(cand_file, &s, err);

	if (rc != KJ_OK)
		return rc;
	l->static_ok = s.layer.ok;
	snprintf(l->static_msg, sizeof(l->static_msg), "%s", s.layer.msg);
	l->kernels = s.kernels;
	l->n_kernels = s.n_kernels;
	s.kernels = NULL;
	s.n_kernels = 0;
	kj_static_layer_release(&s);
	return KJ_OK;
}

/* --- one phase on a task --------------------------------------------------------------- */

/* What a phase saw, summed up. */
struct phase {
	int ran;                /* the pipeline returned KJ_OK */
	int n, passed;
	int have_first;         /* a case did not pass: the one that charges */
	enum kj_etype first_type;
	char first_msg[KJ_CASE_MSG_MAX + 1];
	enum kj_status worst;   /* fail before task_error before judge_error */
	double log_speedup;     /* sum of log(speedup) of the cases */
	int timed;
	int retimed;            /* timed again alone after a timing check failed */
	int task_fault;         /* !ran because of the task (it does not load, a bad
				 * cases file, no cases): a task error */
	struct kj_error err;    /* when !ran */
};

/* A phase's cases, in the order that charges: a candidate's failure first
 * (it is the verdict), then the task's, then the judge's. */
static void summarize(const struct kj_result *r, struct phase *p)
{
	const struct kj_case *first = kj_result_first(r, &p->worst);
	int i;

	p->n = r->n_cases;
	p->passed = 0;
	p->log_speedup = 0;
	p->timed = 0;
	for (i = 0; i < r->n_cases; i++) {
		const struct kj_case *c = &r->cases[i];

		if (kj_case_status(c) != KJ_STATUS_PASS)
			continue;
		p->passed++;
		if (c->timed && c->speedup > 0 && isfinite(c->speedup)) {
			p->log_speedup += log(c->speedup);
			p->timed++;
		}
	}
	/* The result is released after the phase: what the verdict needs is
	 * copied. */
	p->have_first = first != NULL;
	if (first) {
		p->first_type = first->type;
		snprintf(p->first_msg, sizeof(p->first_msg), "%s",
			 first->message ? first->message : kj_etype_text(first->type));
	}
}

struct run {
	const struct kj_config *cfg;
	const struct kj_eval_settings *s;
	const struct kj_eval_slot *slot;
	struct ctx *x;
	char dir[PATH_MAX];
	char op[160];
	json_t *env;            /* the task's environment (versions, device) */
	json_t *phases;         /* where the judge's time went, per run of the task */
	struct kj_eval_warm *warm; /* workers started ahead, or NULL: the main
				    * run takes pair 0, the kernel layer's
				    * pair 1 (where each is open) */
};

/* Workers started before their attempt was known (kj_eval_warm_start,
 * kj_eval_warm_more): two pairs, the main run's and the kernel layer's,
 * whose views bind the same verify directory. */
struct kj_eval_warm {
	char dir[PATH_MAX];     /* the verify directory their views bind */
	struct warm_pair {
		struct kj_attempt a;
		struct kj_task t;
		int open;       /* a and t are open (not yet taken) */
		double ready_at; /* when its workers had said hello */
	} p[2];
};

/*
 * The batch's baseline of the task on this device: per case, the
 * reference's figure on the judge's clock the first attempt that measured
 * it recorded (same task, device and settings), and the harness's cost per
 * call and the samples' median measured with it.  *ref gets 3n doubles,
 * the figures, the costs, the medians (0: none for that case; all 0 when no
 * attempt measured any), the caller's to free.  The store's failure is an error; an empty result is not.
 */
static int load_baseline(struct ctx *x, const struct kj_eval_slot *slot, int n, double **ref,
			 struct kj_error *err)
{
	int rc;

	*ref = calloc((size_t)(n > 0 ? 4 * n : 1), sizeof(double));
	if (!*ref)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	rc = kj_store_baseline(x->store, x->task->key, slot->device, slot->settings_text, x->key,
			       n, *ref, err);
	if (rc != KJ_OK) {
		free(*ref);
		*ref = NULL;
		x->store_failed = 1;
	}
	return rc;
}

/* bo's baseline arrays from base, the layout kj_store_baseline fills:
 * per case the figures, the costs, the medians and the rounds, n each. */
static void use_baseline(struct kj_bench_opts *bo, const double *base, int n)
{
	bo->ref_ms = base;
	bo->ref_over_ms = base + n;
	bo->ref_median_ms = base + 2 * n;
	bo->ref_queued = base + 3 * n;
	bo->n_ref_ms = n;
}

/*
 * A timing check that failed while other attempts were starting their
 * workers may be the machine's noise (a 3.7 us kernel's clock check, with
 * four attempts in flight on the H200): the benchmark runs once more, alone
 * (the quiet lock taken whole: no worker starts meanwhile), on fresh
 * inputs (a run key of its own: inputs the candidate has seen could be
 * answered from memory, and the replay check would not see it), and its
 * verdict is the phase's.  A cheat fails again; its rows are replaced.
 * The reference keeps the figures this attempt measured for the batch's
 * baseline (a later attempt may already have been given them: one
 * baseline per task and case, whatever happens to the first candidate).
 */
static int retime(struct run *rn, struct kj_task *t, struct kj_attempt *a,
		  const struct kj_bench_opts *bo, const struct kj_hooks *hooks,
		  struct kj_result *br, struct phase *bench)
{
	struct kj_bench_opts again = *bo;
	int quiet, rc, n = t->n_cases, k;
	double *base = NULL;
	unsigned char *own = NULL;

	if (!bench->have_first || bench->worst != KJ_STATUS_FAIL ||
	    kj_etype_category(bench->first_type) != KJ_CAT_TIMING)
		return KJ_OK;
	if (n > 0) {
		base = calloc((size_t)4 * n, sizeof(double));
		own = calloc((size_t)n, 1);
		if (!base || !own) {
			free(base);
			free(own);
			return kj_error_set(&bench->err, KJ_ENOMEM, "out of memory");
		}
		for (k = 0; k < n; k++) {
			const struct kj_case *c = k < br->n_cases ? &br->cases[k] : NULL;

			if (bo->ref_ms && k < bo->n_ref_ms && bo->ref_ms[k] > 0) {
				base[k] = bo->ref_ms[k];
				base[n + k] = bo->ref_over_ms ? bo->ref_over_ms[k] : 0;
				base[2 * n + k] = bo->ref_median_ms ? bo->ref_median_ms[k] : 0;
				base[3 * n + k] = bo->ref_queued ? bo->ref_queued[k] : 0;
			} else if (c && c->timed && !c->ref_given && c->ref.judge_ms > 0) {
				base[k] = c->ref.judge_ms;
				base[n + k] = c->ref.overhead_ms;
				base[2 * n + k] = c->ref.median_ms;
				base[3 * n + k] = c->rounds_queued;
				own[k] = 1;
			}
		}
		use_baseline(&again, base, n);
	}
	quiet = kj__eval_lock_file(rn->slot, "quiet", LOCK_EX, &bench->err);
	if (quiet < 0) {
		free(base);
		free(own);
		return bench->err.code;
	}
	rc = kj_seed_run_key(a->key, NULL, a->run_key, &bench->err);
	a->run_key_shared = 0;
	if (rc == KJ_OK) {
		kj_result_release(br);
		kj_result_init(br);
		rn->x->own_ref = own;
		rn->x->n_own = n;
		rc = kj_benchmark(t, a, &rn->s->judge, &again, hooks, br, &bench->err);
		rn->x->own_ref = NULL;
		rn->x->n_own = 0;
	}
	close(quiet);
	free(base);
	free(own);
	if (rc == KJ_OK) {
		summarize(br, bench);
		bench->retimed = 1;
	} else {
		bench->ran = 0;
	}
	return rc;
}

/*
 * Where the time of one run of the task went, for attempts.env's
 * judge_phases: the workers' start, the builds of the candidate's torch
 * extensions while its module loaded (build_s, which the start's figure
 * leaves out; a build in a later call is in its phase's figure and in
 * detail's build_s), the wait for the device, verify, the benchmark, and
 * the judge's own record of the phases (kjudge.timings).
 * Best effort: a figure that cannot be noted is left out, and its absence
 * says so (no verdict rests on it).
 */
static json_t *note_phases(struct run *rn, int disabled, double start, double build,
			   double wait, double verify, double bench, const json_t *detail)
{
	json_t *o = json_pack("{s:f,s:f,s:f,s:f,s:f}", "start_s", start - build, "build_s", build,
			      "device_wait_s", wait, "verify_s", verify, "benchmark_s", bench);

	if (!o)
		return NULL;
	if (detail)
		(void)json_object_set_new(o, "detail", json_deep_copy(detail));
	if (!rn->phases)
		rn->phases = json_object();
	if (!rn->phases || json_object_set_new(rn->phases, disabled ? "disabled" : "main", o) != 0)
		return NULL;
	return o;
}

/*
 * Start the task's workers (in parallel with other attempts' timed phases),
 * then, holding the device, verify and (bench) benchmark; `disabled`: the
 * candidate's kernels made no-ops (the kernel layer).  Fills the phases.
 * Returns KJ_OK, or the store's or an interrupt's code (the attempt then
 * stays running).
 */
static int run_task(struct run *rn, int disabled, struct phase *verify, struct phase *bench,
		    json_t **kernel_names, struct kj_error *err)
{
	struct kj_attempt a_own, *a = &a_own;
	struct kj_task t_own, *t = &t_own;
	struct warm_pair *warm = rn->warm && rn->warm->p[disabled != 0].open
					 ? &rn->warm->p[disabled != 0] : NULL;
	struct kj_torch_spec spec;
	struct kj_result vr, br;
	struct kj_hooks hooks = { rn->x, on_case };
	int rc, lock = -1, task_open = 0;
	double t0 = kj__now_s(), t_started = 0, t_device = 0, t_verified = 0, t_bench = 0, built = 0;
	json_t *noted;

	memset(verify, 0, sizeof(*verify));
	if (bench)
		memset(bench, 0, sizeof(*bench));
	kj_result_init(&vr);
	kj_result_init(&br);
	kj_torch_spec_init(&spec);
	spec.op_name = rn->op;
	spec.verify_dir = rn->dir;
	spec.impl_name = IMPL_NAME;
	spec.device = rn->slot->device;
	spec.timeout_s = rn->s->judge.timeout_s;
	spec.kernels_disabled = disabled;
	spec.ref_compiled = !disabled && rn->s->ref_compiled;
	spec.profile_kernels = !disabled && kernel_names && strncmp(rn->slot->device, "cuda", 4) == 0;
	/* On the CPU the judge's own work (another attempt's imports) would
	 * run on the cores being timed: there the device is the whole machine,
	 * taken before the workers start. */
	if (strcmp(rn->slot->device, "cpu") == 0 && (lock = kj__eval_lock_device(rn->slot, err)) < 0)
		return err->code;
	if (warm) {
		/* Workers started before the attempt was known: their attempt
		 * and task are this run's (closed by it). */
		a = &warm->a;
		t = &warm->t;
		warm->open = 0;
		/* How long they had waited ready when the attempt came (0: it
		 * waited for them). */
		kj_attempt_tally(a, "warm_age_s", t0 - warm->ready_at > 0 ? t0 - warm->ready_at : 0);
		rc = KJ_OK;
	} else {
		rc = kj_attempt_open(a, rn->cfg, &verify->err);
	}
	if (rc != KJ_OK) {
		if (lock >= 0)
			close(lock);
		return rc == KJ_ENOMEM ? kj_error_set(err, rc, "%s", verify->err.msg) : KJ_OK;
	}
	if (!warm)
		memset(t, 0, sizeof(*t));
	rc = kj_seed_key(rn->cfg->state_dir, a->key, &verify->err);
	if (rc == KJ_OK) {
		a->have_key = 1;
		rc = kj_seed_run_key(a->key, rn->slot->batch, a->run_key, &verify->err);
		a->run_key_shared = 1;
	}
	if (rc == KJ_OK) {
		rc = warm ? kj_torch_fill(t, &spec, &verify->err)
			  : kj_torch_open(rn->cfg, a, &spec, t, &verify->err);
		/* The names are the judge's own: what is refused is the task's
		 * (its cases file). */
		verify->task_fault = rc == KJ_EINVAL;
	}
	/* A warm task is open whatever its filling said. */
	task_open = warm != NULL;
	if (rc == KJ_OK) {
		/* Workers start (imports, CUDA contexts) under the quiet lock,
		 * shared: a timing run again alone waits for the starts under
		 * way and holds the others back. */
		int quiet = kj__eval_lock_file(rn->slot, "quiet", LOCK_SH, &verify->err);

		task_open = 1;
		rn->x->params = t->case_params;
		rc = quiet < 0 ? verify->err.code : kj_task_start(t, a, &rn->s->judge, &verify->err);
		if (quiet >= 0)
			close(quiet);
	}
	/* A reference that does not load, or a task without cases, is the
	 * task's failure, not the judge's (the runner says so after both
	 * workers started: a Python that cannot start one stays the
	 * machine's). */
	/* A worker whose start ran out of the device's memory (the model's
	 * weights moved there) while other attempts shared it: as a call's,
	 * nobody's failure here (judged again alone, below). */
	if (task_open && rc != KJ_OK && rn->slot->shared &&
	    (t->ref.load_failure.device_memory || t->cand.load_failure.device_memory)) {
		rc = kj_error_set(&verify->err, KJ_EDEVMEM, "a side ran out of memory on %s "
				  "while other attempts shared it, loading its model: judged "
				  "again alone", rn->slot->device);
	} else if (task_open && kj_task_start_charged(t, rc) == KJ_CHARGE_TASK) {
		verify->task_fault = 1;
	}
	if (rc == KJ_OK && !disabled && t->env && !rn->env)
		rn->env = json_incref(t->env);
	t_started = kj__now_s();
	built = json_number_value(json_object_get(a->timings, "build_s"));
	if (rc == KJ_OK && lock < 0 && (lock = kj__eval_lock_device(rn->slot, &verify->err)) < 0)
		rc = verify->err.code;
	t_device = kj__now_s();
	if (rc == KJ_OK) {
		rn->x->phase = disabled ? "disabled" : "verify";
		rc = kj_verify(t, a, &rn->s->judge, &hooks, &vr, &verify->err);
		if (rc == KJ_OK) {
			verify->ran = 1;
			summarize(&vr, verify);
		}
	}
	t_verified = kj__now_s();
	if (rc == KJ_OK && bench && verify->passed == verify->n && verify->n > 0 &&
	    !rn->s->no_benchmark) {
		struct kj_bench_opts bo = rn->s->bench;
		double *base = NULL;
		json_t *sol = NULL;
		struct kj_error sol_err;
		char sol_why[600];

		/* The task's speed of light, counted on the reference's side by
		 * the judge's own step (kept by the task's content: once per
		 * task); a step that fails leaves the cases without a figure,
		 * and their records say why. */
		if (rn->cfg->sol_off)
			bo.sol_why = "not measured (KJ_SOL=off)";
		else if (kj_audit_sol(rn->cfg, t->device, rn->s->judge.timeout_s, t->task_file,
				 t->cases_file[0] ? t->cases_file : NULL, &sol, &sol_err) != KJ_OK) {
			snprintf(sol_why, sizeof(sol_why), "the speed-of-light step failed: %s",
				 sol_err.msg);
			bo.sol_why = sol_why;
		}
		bo.sol = sol;

		/* One baseline per task and case in the batch: the first
		 * candidate's measured one, given to every later one. */
		rc = load_baseline(rn->x, rn->slot, t->n_cases, &base, &bench->err);
		if (rc == KJ_OK) {
			use_baseline(&bo, base, t->n_cases);
			rn->x->phase = "benchmark";
			rc = kj_benchmark(t, a, &rn->s->judge, &bo, &hooks, &br, &bench->err);
		}
		if (rc == KJ_OK) {
			bench->ran = 1;
			summarize(&br, bench);
			rc = retime(rn, t, a, &bo, &hooks, &br, bench);
		}
		/* After the timing again alone: bo's baseline points into it. */
		free(base);
		json_decref(sol);
		if (rc != KJ_OK)
			verify->err = bench->err;
	}
	t_bench = kj__now_s();
	/* A side that ran out of device memory while other attempts may have
	 * held it is no one's failure here: the attempt stops uncharged and
	 * is judged again alone (the second time, an exhausted device is the
	 * side's own). */
	if (rc == KJ_OK && rn->slot->shared && (vr.device_memory || br.device_memory))
		rc = kj_error_set(&verify->err, KJ_EDEVMEM, "a side ran out of memory on %s while "
				  "other attempts shared it: judged again alone",
				  rn->slot->device);
	if (rc == KJ_OK && kernel_names && t->cand.kernel_names)
		*kernel_names = json_incref(t->cand.kernel_names);
	/* The workers go before the device is given up: their memory on it
	 * (inputs, outputs, the reference's kept ones) is the next attempt's
	 * to use, not to find taken.  Nothing more is asked of them: both are
	 * killed at once, and their ends (a CUDA context's teardown each)
	 * overlap. */
	if (task_open && lock >= 0) {
		if (t->ref.ops && t->ref.ops->kill)
			t->ref.ops->kill(&t->ref);
		if (t->cand.ops && t->cand.ops->kill)
			t->cand.ops->kill(&t->cand);
		kj_task_close(t);
		task_open = 0;
	}
	if (lock >= 0)
		close(lock);
	noted = note_phases(rn, disabled, t_started - t0, built, t_device - t_started,
			    t_verified - t_device, t_bench - t_verified, a->timings);
	/* The store's own failure, an interrupt, a device that is not on the
	 * machine or one whose memory ran out while shared stops the attempt
	 * (it stays running, for the next run or the batch's pass alone);
	 * anything else is the phase's verdict. */
	if (rc != KJ_OK && (rn->x->store_failed || verify->err.code == KJ_EINTR ||
			    verify->err.code == KJ_ENOMEM || verify->err.code == KJ_ENODEVICE ||
			    verify->err.code == KJ_EDEVMEM))
		kj_error_set(err, verify->err.code, "%s", verify->err.msg);
	else
		rc = KJ_OK;
	kj_result_release(&vr);
	kj_result_release(&br);
	rn->x->params = NULL;
	if (task_open)
		kj_task_close(t);
	kj_attempt_close(a);
	if (noted)
		(void)json_object_set_new(noted, "close_s", json_real(kj__now_s() - t_bench));
	return rc;
}

/* --- the verdict --------------------------------------------------------------------- */

static void set_verdict(struct kj_eval_outcome *o, const char *status, const char *type,
			const char *category, char *charged, size_t csize, const char *who,
			char *msg, size_t msize, const char *text)
{
	snprintf(o->status, sizeof(o->status), "%s", status);
	snprintf(o->error_type, sizeof(o->error_type), "%s", type);
	snprintf(o->category, sizeof(o->category), "%s", category);
	snprintf(charged, csize, "%s", who);
	snprintf(msg, msize, "%s", text ? text : "");
}

/* The verdict of a phase that did not pass: the first case that charges. */
static void phase_verdict(const struct phase *p, struct kj_eval_outcome *o, char *charged,
			  size_t csize, char *msg, size_t msize)
{
	if (!p->ran) {
		if (p->task_fault)
			set_verdict(o, "task_error", kj_etype_name(KJ_ET_TASK), "task", charged, csize,
				    "task", msg, msize, p->err.msg);
		else
			set_verdict(o, "judge_error", kj_etype_name(KJ_ET_JUDGE), "judge", charged,
				    csize, "judge", msg, msize, p->err.msg);
		return;
	}
	if (!p->have_first) {
		set_verdict(o, "judge_error", kj_etype_name(KJ_ET_JUDGE), "judge", charged, csize,
			    "judge", msg, msize, "no case was judged");
		return;
	}
	set_verdict(o, kj_status_name(kj_etype_status(p->first_type)), kj_etype_name(p->first_type),
		    kj_category_name(kj_etype_category(p->first_type)), charged, csize,
		    kj_charge_name(kj_etype_charge(p->first_type)), msg, msize, p->first_msg);
	if (p->retimed) {
		size_t n = strlen(msg);
		const char *again = " (so again when timed alone on fresh inputs)";

		if (n + strlen(again) < msize)
			memcpy(msg + n, again, strlen(again) + 1);
	}
}

/* The profiler layer and the kernel layer (kjudge/anticheat.h). */
static void profile_layer(const json_t *names, struct layers *l)
{
	struct kj_layer p;

	kj_profile_layer(names, l->kernels, l->n_kernels, &p);
	l->profile_ok = p.ok;
	snprintf(l->profile_msg, sizeof(l->profile_msg), "%s", p.msg);
}

static void disabled_verdict(const struct phase *pd, struct layers *lp)
{
	struct kj_layer d;

	kj_disabled_layer(pd->ran, pd->err.msg, pd->n, pd->passed, pd->worst, pd->first_type,
			  pd->first_msg, &d);
	lp->disabled_ok = d.ok;
	snprintf(lp->disabled_msg, sizeof(lp->disabled_msg), "%s", d.msg);
}

static int record_done(struct ctx *x, const struct kj_eval_outcome *o, const char *charged,
		       const char *msg, const struct phase *v, const struct layers *l,
		       const json_t *env, struct kj_error *err)
{
	char *env_text = NULL;
	int rc, is_oom = 0;

	if (env && !(env_text = kj__json_dumps(env, JSON_COMPACT, &is_oom)))
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	{
		struct kj_store_verdict row = {
			.status = o->status, .clean = o->clean,
			.error_type = *o->error_type ? o->error_type : NULL,
			.category = *o->category ? o->category : NULL,
			.charged = *charged ? charged : "none", .message = *msg ? msg : NULL,
			.cases_total = v->n, .cases_passed = v->passed,
			.static_ok = l->static_ok, .static_msg = *l->static_msg ? l->static_msg : NULL,
			.disabled_ok = l->disabled_ok,
			.disabled_msg = *l->disabled_msg ? l->disabled_msg : NULL,
			.profile_ok = l->profile_ok,
			.profile_msg = *l->profile_msg ? l->profile_msg : NULL,
			.speedup = o->speedup, .judge_s = o->judge_s, .env = env_text,
		};

		rc = kj_store_attempt_done(x->store, x->key, &row, err);
	}
	free(env_text);
	return rc;
}

/*
 * In msg, the staged copy of the task (DIR/OP_torch.py, a scratch path
 * gone when the attempt ends) written as the task's file in the suite
 * (`level1/1_Bad.py`): a task that does not load, or a traceback through
 * it, points at the file its author can open.  Cut to size as msg was.
 */
static void task_file_named(char *msg, size_t size, const char *dir, const char *op,
			    const char *rel)
{
	char staged[PATH_MAX + 300], *out = malloc(size);
	size_t sl, rl = strlen(rel), n = 0;
	const char *p = msg, *hit;

	snprintf(staged, sizeof(staged), "%s/%s_torch.py", dir, op);
	sl = strlen(staged);
	if (!out) /* the message as it was: only less helpful */
		return;
	/* A message cut short (a worker's is bounded) may end inside the
	 * path: past the staged folder and the start of the task's own name
	 * that end is the task's file; short of it, it could be any staged
	 * file, and is shown as cut. */
	for (n = strlen(msg) < sl ? strlen(msg) : sl - 1; n >= 8; n--)
		if (!memcmp(msg + strlen(msg) - n, staged, n)) {
			const char *as = n > strlen(dir) + strlen(op) + 2 ? rel : "...";

			if (strlen(msg) - n + strlen(as) < size)
				memcpy(msg + strlen(msg) - n, as, strlen(as) + 1);
			break;
		}
	n = 0;
	while ((hit = strstr(p, staged)) != NULL) {
		size_t before = (size_t)(hit - p);

		if (n + before + rl >= size)
			break;
		memcpy(out + n, p, before);
		memcpy(out + n + before, rel, rl);
		n += before + rl;
		p = hit + sl;
	}
	/* The rest, cut on a character's boundary where it no longer fits. */
	rl = kj__utf8_prefix(p, strlen(p), size - 1 - n);
	memcpy(out + n, p, rl);
	out[n + rl] = '\0';
	memcpy(msg, out, n + rl + 1);
	free(out);
}

/* --- warm workers ------------------------------------------------------------------- */

/* Pair k of w started (run_task's locks: on the CPU the whole machine,
 * and the quiet lock shared). */
static int warm_pair_start(const struct kj_config *cfg, const struct kj_eval_slot *slot,
			   struct kj_eval_warm *w, int k, struct kj_error *err)
{
	struct warm_pair *p = &w->p[k];
	struct kj_torch_spec spec;
	int rc = KJ_OK, lock = -1, quiet = -1;

	if (strcmp(slot->device, "cpu") == 0 && (lock = kj__eval_lock_device(slot, err)) < 0)
		rc = err->code;
	if (rc == KJ_OK && (quiet = kj__eval_lock_file(slot, "quiet", LOCK_SH, err)) < 0)
		rc = err->code;
	if (rc == KJ_OK)
		rc = kj_attempt_open(&p->a, cfg, err);
	if (rc == KJ_OK) {
		kj_torch_spec_init(&spec);
		spec.verify_dir = w->dir;
		spec.impl_name = IMPL_NAME;
		spec.device = slot->device;
		rc = kj_torch_prestart(cfg, &p->a, &spec, &p->t, err);
		if (rc != KJ_OK)
			kj_attempt_close(&p->a);
	}
	if (quiet >= 0)
		close(quiet);
	if (lock >= 0)
		close(lock);
	p->open = rc == KJ_OK;
	p->ready_at = kj__now_s();
	return rc;
}

int kj_eval_warm_start(const struct kj_config *cfg, const struct kj_eval_slot *slot,
		       struct kj_eval_warm **out, struct kj_error *err)
{
	struct kj_eval_warm *w = calloc(1, sizeof(*w));
	int rc;

	*out = NULL;
	if (!w)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	rc = kj__eval_scratch(slot, "w", "warm", w->dir, sizeof(w->dir), err);
	if (rc == KJ_OK)
		rc = warm_pair_start(cfg, slot, w, 0, err);
	if (rc != KJ_OK) {
		if (*w->dir)
			kj__rm_rf(w->dir);
		free(w);
		return rc;
	}
	*out = w;
	return KJ_OK;
}

int kj_eval_warm_more(const struct kj_config *cfg, const struct kj_eval_slot *slot,
		      struct kj_eval_warm *w, struct kj_error *err)
{
	if (!w || !w->p[0].open || w->p[1].open)
		return KJ_OK;
	return warm_pair_start(cfg, slot, w, 1, err);
}

void kj_eval_warm_release(struct kj_eval_warm *w)
{
	int k;

	if (!w)
		return;
	for (k = 0; k < 2; k++)
		if (w->p[k].open) {
			kj_task_close(&w->p[k].t);
			kj_attempt_close(&w->p[k].a);
		}
	kj__rm_rf(w->dir);
	free(w);
}

/* The torch kind's attempt (kinds.c). */
int kj__eval_torch_attempt(const struct kj_config *cfg, const struct kj_eval_settings *s,
			   const struct kj_eval_slot *slot, const struct kj_eval_set *set,
			   size_t cand, const char *attempt_key, struct kj_eval_outcome *out,
			   struct kj_error *err)
{
	const struct kj_eval_cand *c = &set->cands[cand];
	const struct kj_eval_task *t = &set->tasks[c->task];
	struct ctx x;
	struct run rn;
	struct layers l;
	struct phase v, b, d;
	json_t *kernel_names = NULL, *env = NULL;
	char charged[16] = "", msg[KJ_CASE_MSG_MAX + 1] = "", cand_file[PATH_MAX + 200];
	double t0 = kj__now_s();
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&x, 0, sizeof(x));
	memset(&rn, 0, sizeof(rn));
	memset(&l, 0, sizeof(l));
	memset(&b, 0, sizeof(b));
	memset(&d, 0, sizeof(d));
	l.static_ok = l.disabled_ok = l.profile_ok = -1;
	x.key = attempt_key;
	x.task = t;
	x.cand = c;
	rc = kj_store_open(slot->store_path, 0, 30000, &x.store, err);
	if (rc != KJ_OK)
		return rc;
	rc = record_start(&x, slot, err);
	if (rc != KJ_OK)
		goto out;
	rn.cfg = cfg;
	rn.s = s;
	rn.slot = slot;
	rn.x = &x;
	op_name(t->name, rn.op, sizeof(rn.op));
	if (slot->warm && slot->warm->p[0].open) {
		/* Workers started ahead: the files go where their views look. */
		rn.warm = slot->warm;
		snprintf(rn.dir, sizeof(rn.dir), "%s", rn.warm->dir);
		rc = KJ_OK;
	} else {
		rc = kj__eval_scratch(slot, "a", attempt_key, rn.dir, sizeof(rn.dir), err);
	}
	if (rc == KJ_OK)
		rc = stage(t, c, rn.dir, rn.op, err);
	if (rc != KJ_OK)
		goto out;
	snprintf(cand_file, sizeof(cand_file), "%s/%s_" IMPL_NAME ".py", rn.dir, rn.op);
	/* The static check never stops verification: the attempt's numbers
	 * are measured all the same, it is just not clean. */
	rc = static_layer(cand_file, &l, err);
	if (rc == KJ_OK)
		rc = run_task(&rn, 0, &v, &b, &kernel_names, err);
	if (rc != KJ_OK)
		goto out;
	if (!v.ran || v.passed != v.n || v.n == 0) {
		phase_verdict(&v, out, charged, sizeof(charged), msg, sizeof(msg));
	} else if (!s->no_benchmark && (!b.ran || b.passed != b.n || b.n == 0)) {
		phase_verdict(&b, out, charged, sizeof(charged), msg, sizeof(msg));
	} else {
		/* Every case passed: the attempt passes; now whether cleanly. */
		set_verdict(out, "pass", "", "", charged, sizeof(charged), "none", msg, sizeof(msg),
			    NULL);
		if (!s->no_benchmark && b.timed == b.n && b.n > 0)
			out->speedup = exp(b.log_speedup / b.n);
		/* The kernel layer: with its kernels made no-ops, it must fail.
		 * The layers are all needed for a clean pass: after a failed
		 * static check it is not run (it could only cost time), and one
		 * input set is enough to show that outputs depend on the
		 * kernels. */
		if (l.static_ok != 1) {
			snprintf(l.disabled_msg, sizeof(l.disabled_msg), "not run: the static check "
				 "failed, so the attempt cannot be clean");
		} else {
			struct kj_eval_settings one = *s;

			one.judge.input_sets = 1;
			rn.s = &one;
			rc = run_task(&rn, 1, &d, NULL, NULL, err);
			rn.s = s;
			if (rc != KJ_OK)
				goto out;
			disabled_verdict(&d, &l);
		}
		if (strncmp(slot->device, "cuda", 4) == 0)
			profile_layer(kernel_names, &l);
		out->clean = l.static_ok == 1 && l.disabled_ok == 1 && l.profile_ok != 0;
		if (!out->clean) {
			const char *why = l.static_ok != 1 ? l.static_msg
					  : l.disabled_ok != 1 ? l.disabled_msg : l.profile_msg;

			snprintf(out->error_type, sizeof(out->error_type), "%s",
				 kj_etype_name(l.static_ok != 1     ? KJ_ET_STATIC_CHECK
					       : l.disabled_ok != 1 ? KJ_ET_KERNELS_NOT_USED
								    : KJ_ET_NO_OWN_KERNEL));
			snprintf(out->category, sizeof(out->category), "%s",
				 kj_category_name(l.static_ok != 1 ? KJ_CAT_STATIC : KJ_CAT_ANTICHEAT));
			snprintf(msg, sizeof(msg), "%s", why);
		}
	}
	task_file_named(msg, sizeof(msg), rn.dir, rn.op, t->rel);
	out->judge_s = kj__now_s() - t0;
	/* Workers that never started leave no environment: the judge's own
	 * node is recorded all the same. */
	env = kj__eval_env(cfg, rn.env);
	/* The judge's own record: a worker's judge_phases never stands. */
	if (env)
		json_object_del(env, "judge_phases");
	if (env && rn.phases)
		(void)json_object_set(env, "judge_phases", rn.phases);
	rc = env ? record_done(&x, out, charged, msg, &v, &l, env, err)
		 : kj_error_set(err, KJ_ENOMEM, "out of memory");
out:
	json_decref(env);
	json_decref(rn.env);
	json_decref(rn.phases);
	json_decref(kernel_names);
	if (*rn.dir)
		kj__rm_rf(rn.dir);
	layers_release(&l);
	kj_store_close(x.store);
	return rc;
}
