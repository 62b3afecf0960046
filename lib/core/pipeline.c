/*
 * pipeline.c - the verify and benchmark loops over a task's two sides (see
 * kjudge/pipeline.h for the theory of operation).
 *
 * Every case is judged into a struct kj_case that starts as "NotJudged";
 * the only way to a pass is kj_case_pass() after every output of the
 * reference was compared and found equal.  The judge's own failures stop
 * the loop with a code; the candidate's and the task's are typed failures.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/pipeline.h"
#include "kjudge/runner.h"
#include "kjudge/value.h"
#include "core/core.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/internal.h"

void kj_judge_opts_init(struct kj_judge_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->timeout_s = 900;
	o->input_sets = 2;
	o->cmp.int_rule = KJ_CMP_INT_EXACT;
	o->cmp.float64_rule = KJ_CMP_FLOAT64_SPEC;
}

void kj_bench_opts_init(struct kj_bench_opts *b)
{
	memset(b, 0, sizeof(*b));
	b->warmup = 5;
	b->repeats = 50;
	b->max_repeats = 100000;
	b->budget_s = 10;
	b->target_ci = 0.01;
	b->timed_sets = 4;
	b->flush_bytes = (size_t)256 << 20;
}

void kj_result_init(struct kj_result *r)
{
	memset(r, 0, sizeof(*r));
	r->scratch_kind = "shared";
}

void kj_result_release(struct kj_result *r)
{
	int i;

	for (i = 0; r->cases && i < r->n_cases; i++)
		kj_case_release(&r->cases[i]);
	free(r->cases);
	json_decref(r->warnings);
	json_decref(r->anticheat);
	json_decref(r->timings);
	json_decref(r->limits);
	kj_result_init(r);
}

const struct kj_case *kj_result_first(const struct kj_result *r, enum kj_status *worst)
{
	const struct kj_case *first = NULL;
	enum kj_status w = KJ_STATUS_PASS;
	int i;

	for (i = 0; i < r->n_cases; i++) {
		enum kj_status s = kj_case_status(&r->cases[i]);

		if (s == KJ_STATUS_PASS)
			continue;
		if (!first || (s == KJ_STATUS_FAIL && w != KJ_STATUS_FAIL) ||
		    (s == KJ_STATUS_TASK_ERROR && w == KJ_STATUS_JUDGE_ERROR)) {
			first = &r->cases[i];
			w = s;
		}
	}
	if (worst)
		*worst = w;
	return first;
}

void kj_result_counts(const struct kj_result *r, int *passed, int *failed, int *task_errors,
		      int *judge_errors)
{
	int i, p = 0, f = 0, te = 0, je = 0;

	for (i = 0; i < r->n_cases; i++)
		switch (kj_case_status(&r->cases[i])) {
		case KJ_STATUS_PASS:
			p++;
			break;
		case KJ_STATUS_FAIL:
			f++;
			break;
		case KJ_STATUS_TASK_ERROR:
			te++;
			break;
		default:
			je++;
		}
	if (passed)
		*passed = p;
	if (failed)
		*failed = f;
	if (task_errors)
		*task_errors = te;
	if (judge_errors)
		*judge_errors = je;
}

int kj_verify_exit(const struct kj_result *r, char *why, size_t size)
{
	int passed, failed, te, je, i;

	kj_result_counts(r, &passed, &failed, &te, &je);
	if (why && size)
		why[0] = '\0';
	/* No cases: the run stopped before it could hold any (nothing was
	 * judged, so nothing is the candidate's). */
	if (je || r->infra_errors || r->n_cases <= 0) {
		for (i = 0; i < r->n_cases; i++)
			if (kj_case_status(&r->cases[i]) == KJ_STATUS_JUDGE_ERROR)
				break;
		if (why)
			snprintf(why, size, "the judge or the machine failed (case %d: %s); the "
				 "verdict is not the candidate's", i < r->n_cases ? i + 1 : 0,
				 i < r->n_cases ? kj_etype_name(r->cases[i].type) : "infrastructure");
		return 2;
	}
	if (te) {
		for (i = 0; i < r->n_cases; i++)
			if (kj_case_status(&r->cases[i]) == KJ_STATUS_TASK_ERROR)
				break;
		if (why)
			snprintf(why, size, "the task failed on case %d (%s); the verdict is not "
				 "the candidate's", i + 1, kj_etype_name(r->cases[i].type));
		return 2;
	}
	if (r->n_cases > 0 && passed == r->n_cases)
		return 0;
	if (why)
		snprintf(why, size, "%d of %d cases failed", r->n_cases - passed, r->n_cases);
	return 1;
}

const char *kj_task_identity(const struct kj_task *t)
{
	return t->identity[0] ? t->identity : t->task_sha256;
}

void kj_task_close(struct kj_task *t)
{
	if (t->close)
		t->close(t);
	t->close = NULL;
}

int kj_task_start(struct kj_task *t, const struct kj_attempt *a, const struct kj_judge_opts *o,
		  struct kj_error *err)
{
	/* One model per side for the whole attempt, with the same weights on
	 * both: seeded like verify.py's (the fixed seed) or from the run's key. */
	uint64_t init = o->seed_fixed ? o->seed : kj_seed_derive(a->run_key, kj_task_identity(t), -1, 0);

	t->ref.init_seed = t->cand.init_seed = init;
	t->start_charge = KJ_CHARGE_NONE;
	return t->start ? t->start(t, err) : kj_error_set(err, KJ_EINVAL, "no runner");
}

enum kj_charge kj_task_start_charged(const struct kj_task *t, int rc)
{
	if (rc == KJ_OK)
		return KJ_CHARGE_NONE;
	return rc == KJ_EINVAL && t->start_charge == KJ_CHARGE_TASK ? KJ_CHARGE_TASK
								     : KJ_CHARGE_JUDGE;
}

/* --- one side --------------------------------------------------------------------- */

/*
 * Make s usable for the next call: started, with its module loaded.
 * *usable is 1 when it is; else c holds why not (the candidate's load
 * failure, the task's, or the machine's).  A code only for the judge's
 * own failures.
 */
static int ensure_side(struct kj_side *s, struct kj_case *c, struct kj_result *res,
		       int *usable, struct kj_error *err)
{
	struct kj_error e;
	int rc;

	*usable = 0;
	if (s->loaded)
		return *usable = 1, KJ_OK;
	if (s->started)
		s->ops->stop(s);
	rc = s->ops->start(s, &e);
	if (rc == KJ_ENOMEM || rc == KJ_EINTR) {
		*err = e;
		return rc;
	}
	if (rc != KJ_OK) {
		/* The machine could not start a worker: nobody's verdict. */
		res->infra_errors++;
		s->infra_errors++;
		return kj_case_fail(c, rc == KJ_ESANDBOX ? KJ_ET_SANDBOX : KJ_ET_SPAWN,
				    "the %s's worker could not be started: %s",
				    kj_side_name(s->role), e.msg) == KJ_OK
			       ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	if (s->loaded)
		return *usable = 1, KJ_OK;
	if (s->role == KJ_SIDE_CANDIDATE) {
		const struct kj_reply *f = &s->load_failure;
		enum kj_etype t = kj_etype_charge(f->type) == KJ_CHARGE_CANDIDATE ? f->type
										 : KJ_ET_LOAD;

		rc = kj_case_fail(c, t, "%s", f->message ? f->message : "the candidate "
				  "could not be loaded");
		if (rc == KJ_OK)
			rc = kj_case_set_exception(c, f->exception);
	} else {
		rc = kj_case_fail(c, KJ_ET_TASK, "the task could not be loaded again: %s",
				  s->load_failure.message ? s->load_failure.message : "");
	}
	return rc == KJ_OK ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
}

/*
 * A call of side s failed (rep->ok == 0): what it means for the case.  The
 * candidate is only ever charged with candidate types, whatever its worker
 * claimed; the reference's failures are the task's.  A full file system is
 * the machine's (the runner checks that itself).
 */
static int side_failed(const struct kj_side *s, const struct kj_reply *rep, struct kj_case *c,
		       struct kj_result *res, struct kj_error *err)
{
	const char *msg = rep->message ? rep->message : "";
	int rc;

	if (rep->type == KJ_ET_TIMEOUT)
		res->timed_out = 1;
	if (rep->device_memory)
		res->device_memory = 1;
	if (rep->disk_full) {
		res->infra_errors++;
		/* The runner's message begins "no space left on MOUNT". */
		rc = kj_case_fail(c, KJ_ET_JUDGE, "the %s's outputs: %s", kj_side_name(s->role),
				  msg);
	} else if (s->role == KJ_SIDE_CANDIDATE) {
		enum kj_etype t = kj_etype_charge(rep->type) == KJ_CHARGE_CANDIDATE ? rep->type
										   : KJ_ET_PROTOCOL;

		rc = kj_case_fail(c, t, "%s", msg);
		if (rc == KJ_OK)
			rc = kj_case_set_exception(c, rep->exception);
	} else if (!strcmp(rep->phase, "inputs")) {
		rc = kj_case_fail(c, KJ_ET_TASK, "the task's input generators failed: %s", msg);
	} else {
		rc = kj_case_fail(c, KJ_ET_REFERENCE, "the reference failed (%s): %s",
				  kj_etype_name(rep->type), msg);
	}
	return rc == KJ_OK ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
}

static int send_call(struct kj_side *s, const struct kj_call *call, struct kj_error *err)
{
	return s->ops->send(s, call, err);
}

static int recv_call(struct kj_attempt *a, struct kj_side *s, struct kj_reply *rep,
		     struct kj_error *err)
{
	int rc = s->ops->recv(s, rep, err);

	if (rc == KJ_OK)
		kj_attempt_tally_phases(a, kj_side_name(s->role), rep->phases);
	return rc;
}

/* --- golden outputs ---------------------------------------------------------------- */

struct golden {
	struct kj__entry e;     /* when held in the cache */
	int cached;             /* found in the cache (not computed now) */
	struct kj_reply rep;    /* the reference's reply when computed */
	const struct kj_value *outputs;
	const char *dir;
	const json_t *input_desc;
};

static void golden_init(struct golden *g)
{
	memset(g, 0, sizeof(*g));
	kj__entry_init(&g->e);
	kj_reply_init(&g->rep);
}

static void golden_release(struct golden *g, const char *stage)
{
	/* Files not kept in the cache (or half written by a reference that
	 * failed) are the stage's: gone with this set. */
	kj__clear_dir(stage, ".npy");
	kj__entry_release(&g->e);
	kj_reply_release(&g->rep);
	golden_init(g);
}

/* Where the reference writes golden outputs: the stage, never its own
 * output directory, which its timed rounds clear while the goldens of the
 * timed sets must live on (kj_attempt_open always makes a stage). */
static const char *ref_dir(const struct kj_task *t, const struct kj_attempt *a)
{
	return a->stage[0] ? a->stage : t->ref.out_dir;
}

static int held_any(const struct kj_value *v);

/*
 * The reference's reply r to a run call is in: check it can be compared
 * and keep it (in the cache when there is one).  *ok is 0 when c now holds
 * the task's failure.
 */
static int golden_take(struct kj_task *t, struct kj_attempt *a, int case_idx, uint64_t seed,
		       struct golden *g, struct kj_case *c, struct kj_result *res, int *ok,
		       struct kj_error *err)
{
	char why[300], key[65];
	int rc;

	*ok = 0;
	if (!g->rep.ok)
		return side_failed(&t->ref, &g->rep, c, res, err);
	if (!g->rep.outputs || g->rep.outputs->n == 0)
		return kj_case_fail(c, KJ_ET_TASK, "the reference returned no outputs") == KJ_OK
			       ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
	if (kj_value_unsupported(g->rep.outputs, why, sizeof(why)))
		return kj_case_fail(c, KJ_ET_UNSUPPORTED, "the reference returned %s: kjudge "
				    "compares tensors, numbers, strings, None and lists, tuples "
				    "and dicts of them", why) == KJ_OK
			       ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
	g->outputs = g->rep.outputs;
	g->input_desc = g->rep.input_desc;
	g->dir = ref_dir(t, a);
	/* Outputs kept on the device have no file for the cache. */
	if (a->cache && a->stage[0] && !held_any(g->rep.outputs)) {
		rc = kj__cache_key("g", t, case_idx, seed, 0, key, err);
		if (rc != KJ_OK)
			return rc;
		rc = kj__golden_put(a->cache, key, a->stage, g->rep.outputs, g->rep.input_desc,
				    &g->e, err);
		if (rc < 0)
			return rc;
		if (rc == 1)
			g->dir = g->e.dir;
	}
	*ok = 1;
	return KJ_OK;
}

/* A golden run from the cache: 1 found (g filled), 0 not, or a code. */
static int golden_cached(struct kj_task *t, struct kj_attempt *a, int case_idx, uint64_t seed,
			 struct golden *g, struct kj_error *err)
{
	char key[65];
	int rc;

	if (!a->cache)
		return 0;
	rc = kj__cache_key("g", t, case_idx, seed, 0, key, err);
	if (rc != KJ_OK)
		return rc;
	rc = kj__golden_get(a->cache, key, &g->e, err);
	if (rc != 1)
		return rc;
	g->cached = 1;
	g->outputs = g->e.outputs;
	g->dir = g->e.dir;
	g->input_desc = g->e.input_desc;
	return 1;
}

/*
 * Compare a candidate's outputs (a list) with the golden ones.  *same is 1
 * when every output compared equal; else c holds the failure.
 */
/* The candidate sent a list of as many outputs as the reference: *ok is 1,
 * else 0 and c holds its failure. */
static int output_count(const struct kj_value *gold, const struct kj_value *cand,
			struct kj_case *c, int *ok, struct kj_error *err)
{
	*ok = 0;
	if (!cand || cand->kind != KJ_VAL_LIST)
		return kj_case_fail(c, KJ_ET_PROTOCOL, "the candidate's worker sent no outputs") ==
				       KJ_OK ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
	if (cand->n != gold->n)
		return kj_case_fail(c, KJ_ET_OUTPUT_COUNT, "output count mismatch: reference %zu, "
				    "candidate %zu", gold->n, cand->n) == KJ_OK
			       ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
	*ok = 1;
	return KJ_OK;
}

static int compare_all(const struct kj_value *gold, const char *gdir,
		       const struct kj_value *cand, const struct kj_reply *cr,
		       const struct kj_cmp_options *cmp, struct kj_case *c, int *same,
		       struct kj_error *err)
{
	size_t i;
	int rc;

	*same = 0;
	rc = output_count(gold, cand, c, same, err);
	if (rc != KJ_OK || !*same)
		return rc;
	*same = 0;
	for (i = 0; i < gold->n; i++) {
		rc = kj_value_compare(gold->items[i], gdir, cand->items[i], cr->fds, cr->n_fds, cmp,
				      (int)i + 1,
				      c, same, err);
		if (rc != KJ_OK || !*same)
			return rc;
	}
	c->compared = (int)gold->n;
	c->expected = (int)gold->n;
	*same = 1;
	return KJ_OK;
}

/* --- outputs compared on the device --------------------------------------------- */

/*
 * A large output need not go through host memory to be judged.  With
 * device outputs on (kj_config.device_outputs), the reference's worker keeps
 * its top-level tensor outputs of a set on the device ("kept" leaves), and
 * the candidate's worker exports its own as descriptors (CUDA virtual
 * memory; on the CPU, for tests, raw memory files: "device" leaves), which
 * the judge passes to the reference's worker.  There only the judge's code
 * and the task's run.  It first copies each into memory of its own (take:
 * bytes the candidate can no longer change; inside the judge's clock for a
 * timed round), then computes the comparator's figures between the copy and
 * its kept output on the device (figures: elements not finite, the sum and
 * the largest of rel, compare.h's rule in float32).
 *
 * The judge decides, and only one way: the outputs pass when, for every
 * one, dtype and shape are the reference's, every element is finite on both
 * sides, and MERE and MARE are at most DEV_MARGIN times their limits (the
 * summation order on the device differs from the C comparator's; the margin
 * is what makes the two agree).  Anything else (a figure near a limit, a NaN
 * or an Inf, a malformed figure, an error of the reference's worker on the
 * way, a candidate's descriptor that cannot be imported) decides nothing:
 * the set, or the timed case, is judged again through host memory (sealed
 * memory files and the C comparator), which decides and words every
 * failure.  So a device path that breaks can make a run slower, never a
 * verdict different.
 */
#define DEV_MARGIN 0.5

enum dev_state {
	DEV_HOST,    /* nothing held on a device: compare_all decides */
	DEV_READY,   /* the plan is made: take, then figures */
	DEV_FAILED,  /* c holds a decided failure */
	DEV_REDO,    /* not decidable here: judge it again through host memory */
};

struct devplan {
	json_t *take;   /* items of the take call */
	json_t *fig;    /* items of the figures call */
	int *fds;       /* what take passes to the reference's worker */
	size_t n;       /* pairs in take and fig */
	unsigned char *host; /* per top-level output: compared on the host */
	int taken;      /* take has run: fig's items name the copies */
	int state;      /* dev_pairs' verdict on the trees (enum dev_state),
			 * DEV_REDO after a take that failed */
};

static void devplan_release(struct devplan *p)
{
	json_decref(p->take);
	json_decref(p->fig);
	free(p->fds);
	free(p->host);
	memset(p, 0, sizeof(*p));
}

static int held_any(const struct kj_value *v)
{
	struct kj_value_held h;

	kj_value_held(v, &h);
	return h.kept || h.dev;
}

/* Whether every tensor of a golden tree is kept on the device (no file of
 * it in the stage, which holds one set at a time). */
static int all_kept(const struct kj_value *v)
{
	struct kj_value_held h;

	kj_value_held(v, &h);
	return h.kept > 0 && h.kept == h.tensors;
}

static int fail_oom(struct kj_case *c, struct kj_error *err, enum kj_etype t, const char *msg)
{
	return kj_case_fail(c, t, "%s", msg) == KJ_OK ? KJ_OK
		: kj_error_set(err, KJ_ENOMEM, "out of memory");
}

/*
 * The pairs of a kept golden output and an exported candidate one that can
 * be compared on the device, from the two trees alone (nothing is decided
 * here): p->state is DEV_HOST when neither tree holds anything on a device,
 * DEV_READY with p filled, DEV_REDO when some output cannot be compared
 * either way (held on one side only, another dtype or shape, a dtype the
 * device rule does not cover); the checks that fail a candidate are
 * dev_check's.
 */
static int dev_pairs(const struct kj_value *gold, const struct kj_value *cand,
		     const struct kj_reply *cr, const struct kj_cmp_options *cmp,
		     struct devplan *p, struct kj_error *err)
{
	struct kj_value_held hg, hc;
	size_t i;

	memset(p, 0, sizeof(*p));
	kj_value_held(gold, &hg);
	kj_value_held(cand, &hc);
	p->state = DEV_HOST;
	if (!hg.kept && !hg.dev && !hc.kept && !hc.dev)
		return KJ_OK;
	p->state = DEV_REDO;
	if (hg.dev || hg.nested || hc.kept || hc.nested || !gold || !cand ||
	    gold->kind != KJ_VAL_LIST || cand->kind != KJ_VAL_LIST || cand->n != gold->n)
		return KJ_OK;
	p->take = json_array();
	p->fig = json_array();
	p->fds = malloc((hc.dev ? hc.dev : 1) * sizeof(int));
	p->host = calloc(gold->n ? gold->n : 1, 1);
	if (!p->take || !p->fig || !p->fds || !p->host)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	for (i = 0; i < gold->n; i++) {
		const struct kj_value *g = gold->items[i], *x = cand->items[i];
		enum kj_dtype dt;
		double n = 1, t;
		int d, known = 1;

		if (!held_any(g) && !held_any(x)) {
			p->host[i] = 1;
			continue;
		}
		if (g->kind != KJ_VAL_TENSOR || g->kept < 0 || x->kind != KJ_VAL_TENSOR ||
		    x->dev == KJ_DEV_NONE || strcmp(g->dtype, x->dtype) || g->ndim != x->ndim ||
		    x->fd < 0 || (size_t)x->fd >= cr->n_fds)
			return KJ_OK;
		dt = kj_dtype_from_name(g->dtype);
		if (dt != KJ_DTYPE_FLOAT32 && dt != KJ_DTYPE_FLOAT16 && dt != KJ_DTYPE_BFLOAT16)
			return KJ_OK;
		for (d = 0; d < g->ndim; d++) {
			if (g->shape[d] != x->shape[d])
				return KJ_OK;
			n *= (double)g->shape[d];
		}
		if (!(n > 0) || n > 9e15)
			return KJ_OK;
		t = cmp->threshold_dtype ? kj_threshold_for_name(cmp->threshold_dtype, &known)
					 : kj_threshold_for_dtype(dt);
		if (!known || !(t > 0))
			return KJ_OK;
		p->fds[p->n] = cr->fds[x->fd];
		if (json_array_append_new(p->take, json_pack("{s:I, s:I, s:s}", "fd", (json_int_t)p->n,
							      "nbytes", (json_int_t)(n * (double)
								kj_dtype_size(dt)),
							      "device", x->dev == KJ_DEV_CUDA
								? "cuda" : "host")) ||
		    json_array_append_new(p->fig, json_pack("{s:i, s:f, s:I, s:s}", "kept", g->kept,
							     "t", t, "numel", (json_int_t)n,
							     "dtype", g->dtype)))
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
		p->n++;
	}
	p->state = p->n ? DEV_READY : DEV_REDO;
	return KJ_OK;
}

/* What fails a candidate whose outputs are held on a device, whatever the
 * figures: *st becomes DEV_FAILED (c filled) or stays. */
static int dev_check(const struct kj_value *gold, const struct kj_value *cand, struct kj_case *c,
		     int *st, struct kj_error *err)
{
	struct kj_value_held hc;

	int rc, ok;

	kj_value_held(cand, &hc);
	*st = DEV_FAILED;
	if (hc.kept || hc.nested)
		return fail_oom(c, err, KJ_ET_PROTOCOL, "the candidate's worker named outputs "
				"the judge never asked for (kept, or exported below the top level)");
	rc = output_count(gold, cand, c, &ok, err);
	if (rc == KJ_OK && ok)
		*st = DEV_READY;
	return rc;
}

/* One device call (op, with items and the descriptors to pass) to the
 * reference's worker; *ok is 0 when it did not answer as asked (nobody's
 * failure: the caller judges again on the host). */
static int dev_call(struct kj_task *t, struct kj_attempt *a, enum kj_call_op op,
		    const json_t *items, const int *fds, size_t n_fds, struct kj_reply *r,
		    int *ok, struct kj_error *err)
{
	struct kj_call call;
	int rc;

	*ok = 0;
	kj_reply_init(r);
	if (!t->ref.loaded || !KJ_SIDE_CAN(&t->ref, KJ_SIDE_CAP_DEVCMP))
		return KJ_OK;
	memset(&call, 0, sizeof(call));
	call.op = op;
	call.items = items;
	call.pass_fds = fds;
	call.n_pass_fds = n_fds;
	rc = send_call(&t->ref, &call, err);
	if (rc == KJ_OK)
		rc = recv_call(a, &t->ref, r, err);
	if (rc == KJ_OK)
		*ok = r->ok && (op == KJ_CALL_DROP || json_array_size(r->held) == json_array_size(items));
	return rc;
}

/* The copies of the plan's outputs, into the reference's worker's memory:
 * *st stays DEV_READY, or becomes DEV_REDO. */
static int dev_take(struct kj_task *t, struct kj_attempt *a, struct devplan *p, int *st,
		    struct kj_error *err)
{
	struct kj_reply r;
	size_t i;
	int ok, rc = dev_call(t, a, KJ_CALL_TAKE, p->take, p->fds, p->n, &r, &ok, err);

	for (i = 0; rc == KJ_OK && ok && i < p->n; i++) {
		const json_t *id = json_array_get(r.held, i);

		if (!json_is_integer(id) || json_integer_value(id) < 0 ||
		    json_object_set_new(json_array_get(p->fig, i), "taken",
					json_integer(json_integer_value(id))))
			ok = 0;
	}
	kj_reply_release(&r);
	if (rc == KJ_OK && !ok)
		*st = p->state = DEV_REDO;
	p->taken = rc == KJ_OK && ok;
	return rc;
}

/* The figures of the plan's copies against the kept outputs, and the
 * decision: *st becomes DEV_HOST when every output passed (the caller
 * counts it a pass), else DEV_REDO. */
static int dev_figures(struct kj_task *t, struct kj_attempt *a, struct devplan *p, int *st,
		       struct kj_error *err)
{
	struct kj_reply r;
	size_t i;
	int ok, rc = dev_call(t, a, KJ_CALL_FIGURES, p->fig, NULL, 0, &r, &ok, err);

	for (i = 0; rc == KJ_OK && ok && i < p->n; i++) {
		const json_t *f = json_array_get(r.held, i), *it = json_array_get(p->fig, i);
		const json_t *jn = json_object_get(f, "n"), *jnf = json_object_get(f, "nonfinite");
		double tt = json_real_value(json_object_get(it, "t"));
		double sum = json_number_value(json_object_get(f, "sum_rel"));
		double mx = json_number_value(json_object_get(f, "max_rel"));
		json_int_t n = json_integer_value(json_object_get(it, "numel"));

		ok = json_is_integer(jn) && json_integer_value(jn) == n && n > 0 &&
		     json_is_integer(jnf) && json_integer_value(jnf) == 0 &&
		     json_is_number(json_object_get(f, "sum_rel")) &&
		     json_is_number(json_object_get(f, "max_rel")) && isfinite(sum) &&
		     isfinite(mx) && sum >= 0 && mx >= 0 && sum / (double)n <= DEV_MARGIN * tt &&
		     mx <= DEV_MARGIN * 10 * tt;
	}
	kj_reply_release(&r);
	if (rc == KJ_OK)
		*st = ok ? DEV_HOST : DEV_REDO;
	return rc;
}

/* Forget the reference's worker's kept outputs and copies (after a set, or
 * a timed case, that kept some). */
static int dev_drop(struct kj_task *t, struct kj_attempt *a, struct kj_error *err)
{
	struct kj_reply r;
	int ok, rc = dev_call(t, a, KJ_CALL_DROP, NULL, NULL, 0, &r, &ok, err);

	kj_reply_release(&r);
	return rc;
}

/*
 * Compare a candidate's outputs with the golden ones, on the device where
 * they are held there: *st is DEV_HOST when they passed (c->compared set),
 * DEV_FAILED when c holds the failure, DEV_REDO when the caller must judge
 * the outputs again through host memory.  devout: what the candidate's
 * call asked for (KJ_DEVOUT_OFF: sealed files, so that an output left on
 * the device is its failure, never DEV_REDO).  pre: a plan of the same
 * trees whose copies were taken already (a timed round takes them inside
 * its clock), or NULL.
 */
static int compare_outputs(struct kj_task *t, struct kj_attempt *a, const struct kj_value *gold,
			   const char *gdir, const struct kj_value *cand, const struct kj_reply *cr,
			   const struct kj_cmp_options *cmp, int devout, struct devplan *pre,
			   struct kj_case *c, int *st, struct kj_error *err)
{
	struct devplan own, *p = pre ? pre : &own;
	size_t i;
	int rc = KJ_OK, same = 0;

	*st = DEV_FAILED;
	if (!pre)
		rc = dev_pairs(gold, cand, cr, cmp, &own, err);
	if (rc != KJ_OK)
		goto out;
	if (p->state == DEV_HOST) {
		rc = compare_all(gold, gdir, cand, cr, cmp, c, &same, err);
		*st = same ? DEV_HOST : DEV_FAILED;
		goto out;
	}
	rc = dev_check(gold, cand, c, st, err);
	if (rc != KJ_OK || *st == DEV_FAILED)
		goto out;
	if (p->state == DEV_REDO || !p->host) {
		*st = DEV_REDO;
		goto out;
	}
	/* What is not held on a device, in order, on the host. */
	for (i = 0; i < gold->n; i++) {
		if (!p->host[i])
			continue;
		rc = kj_value_compare(gold->items[i], gdir, cand->items[i], cr->fds, cr->n_fds, cmp,
				      (int)i + 1, c, &same, err);
		if (rc != KJ_OK)
			goto out;
		if (!same) {
			*st = DEV_FAILED;
			goto out;
		}
	}
	*st = p->n ? DEV_READY : DEV_REDO;
	if (*st == DEV_READY && !p->taken)
		rc = dev_take(t, a, p, st, err);
	if (rc == KJ_OK && *st == DEV_READY)
		rc = dev_figures(t, a, p, st, err);
	if (rc == KJ_OK && *st == DEV_HOST) {
		c->compared = (int)gold->n;
		c->expected = (int)gold->n;
		kj_attempt_tally(a, "device_compared_n", (double)p->n);
	}
out:
	if (!pre)
		devplan_release(&own);
	if (rc == KJ_OK && *st == DEV_REDO && devout == KJ_DEVOUT_OFF) {
		/* Through host memory, yet not decidable: outputs left on the
		 * device that nobody asked for. */
		*st = DEV_FAILED;
		rc = fail_oom(c, err, KJ_ET_PROTOCOL, "the candidate's worker left outputs on the "
			      "device where the judge asked for sealed memory files");
	}
	return rc;
}

static int keep_desc(struct kj_case *c, const json_t *desc)
{
	if (!c->input_desc && desc)
		c->input_desc = kj__jref(desc);
	return KJ_OK;
}

/* An output that shares memory with an input: a note on a failure, a
 * warning on a pass. */
static int note_aliases(struct kj_result *res, struct kj_case *c, const json_t *al, int failed)
{
	if (!json_array_size(al))
		return KJ_OK;
	if (failed) {
		char *m = NULL;

		if (asprintf(&m, "%s\nnote: an output aliases an input (shares its memory)",
			     c->message ? c->message : "") < 0)
			return KJ_ENOMEM;
		free(c->message);
		c->message = m;
		json_decref(c->aliases);
		c->aliases = kj__jref(al);
		return KJ_OK;
	}
	return json_array_append_new(res->warnings, json_pack("{s:i, s:s, s:O}", "case_idx",
							      c->index + 1, "warning",
							      "an output aliases an input (shares "
							      "its memory)", "aliases", al))
		       ? KJ_ENOMEM : KJ_OK;
}

/* Send the reference the run of case k on the set of `seed` (its outputs
 * to the stage, or its own directory); *usable as ensure_side's. */
static int send_ref_run(struct kj_task *t, struct kj_attempt *a, int k, uint64_t seed,
			int keep, int copy, struct kj_case *c, struct kj_result *res, int *usable,
			struct kj_error *err)
{
	struct kj_call call;
	int rc;

	rc = ensure_side(&t->ref, c, res, usable, err);
	if (rc != KJ_OK || !*usable)
		return rc;
	memset(&call, 0, sizeof(call));
	call.op = KJ_CALL_RUN;
	call.case_idx = k;
	call.seed = seed;
	call.out_dir = ref_dir(t, a);
	call.tag = "ref";
	call.export_outputs = keep;
	/* A timed set's golden lives through the reference's own timed
	 * rounds, whose calls may hand out the same buffer again: a copy. */
	call.keep = keep == KJ_DEVOUT_OFF ? 0 : copy ? KJ_KEEP_COPY : KJ_KEEP;
	return send_call(&t->ref, &call, err);
}

/* --- verify ------------------------------------------------------------------------- */

/*
 * One input set of one case.  *decided is 1 when c holds a failure (the
 * case is over), 0 when the set passed (c->compared/expected set).
 */
static int verify_set(struct kj_task *t, struct kj_attempt *a, const struct kj_judge_opts *o,
		      struct kj_result *res, int k, int set, uint64_t seed, int devout,
		      struct kj_case *c, int *decided, struct kj_error *err)
{
	struct golden g;
	struct kj_reply cr;
	struct kj_call call;
	int rc, usable, ref_sent = 0, ok = 0, st = DEV_FAILED, kept = 0;
	double t0;

	(void)set;
	*decided = 1;
	golden_init(&g);
	kj_reply_init(&cr);
	c->seed = seed;
	/* The candidate first: one that cannot be loaded needs no reference. */
	rc = ensure_side(&t->cand, c, res, &usable, err);
	if (rc != KJ_OK || !usable)
		goto out;
	rc = golden_cached(t, a, k, seed, &g, err);
	if (rc < 0)
		goto out;
	if (rc == 0) {
		rc = send_ref_run(t, a, k, seed, devout, 0, c, res, &usable, err);
		if (rc != KJ_OK || !usable)
			goto out;
		ref_sent = 1;
		kept = devout != KJ_DEVOUT_OFF;
	} else {
		res->from_cache++;
	}
	memset(&call, 0, sizeof(call));
	call.op = KJ_CALL_RUN;
	call.case_idx = k;
	call.seed = seed;
	call.out_dir = t->cand.out_dir;
	call.tag = "cand";
	/* Left on the device only where the golden is kept there too. */
	call.export_outputs = ref_sent ? devout : KJ_DEVOUT_OFF;
	rc = send_call(&t->cand, &call, err);
	if (rc != KJ_OK)
		goto out;
	if (ref_sent) {
		rc = recv_call(a, &t->ref, &g.rep, err);
		if (rc != KJ_OK)
			goto out;
	}
	rc = recv_call(a, &t->cand, &cr, err);
	if (rc != KJ_OK)
		goto out;
	if (ref_sent) {
		rc = golden_take(t, a, k, seed, &g, c, res, &ok, err);
		if (rc != KJ_OK || !ok)
			goto out;
	}
	keep_desc(c, g.input_desc);
	if (!cr.ok) {
		rc = side_failed(&t->cand, &cr, c, res, err);
		goto out;
	}
	if (cr.inputs_changed) {
		rc = kj_case_fail(c, KJ_ET_INPUT_MODIFIED, "the candidate changed its input "
				  "tensors") == KJ_OK ? KJ_OK : kj_error_set(err, KJ_ENOMEM,
									       "out of memory");
		goto out;
	}
	t0 = kj__now_s();
	rc = compare_outputs(t, a, g.outputs, g.dir, cr.outputs, &cr, &o->cmp, call.export_outputs,
			     NULL, c, &st, err);
	kj_attempt_tally(a, "compare_s", kj__now_s() - t0);
	if (rc != KJ_OK || st == DEV_REDO)
		goto out;
	if (note_aliases(res, c, cr.aliases, st != DEV_HOST) != KJ_OK) {
		rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
		goto out;
	}
	*decided = st != DEV_HOST;
out:
	if (kept && rc == KJ_OK)
		rc = dev_drop(t, a, err);
	golden_release(&g, ref_dir(t, a));
	kj_reply_release(&cr);
	/* Only files its reply names are read; the rest go with the set. */
	kj__clear_dir(t->cand.out_dir, ".npy");
	/* Not decided on the device: the same set through host memory. */
	if (rc == KJ_OK && st == DEV_REDO) {
		kj_attempt_tally(a, "device_redo_n", 1);
		return verify_set(t, a, o, res, k, set, seed, KJ_DEVOUT_OFF, c, decided, err);
	}
	return rc;
}

static int start_result(struct kj_task *t, struct kj_attempt *a, const struct kj_judge_opts *o,
			struct kj_result *res, struct kj_error *err)
{
	int i;

	kj_result_init(res);
	if (t->n_cases <= 0)
		return kj_error_set(err, KJ_EINVAL, "'%s': the task has no cases", t->task_file);
	res->cases = calloc((size_t)t->n_cases, sizeof(*res->cases));
	res->warnings = json_array();
	res->limits = json_object();
	if (!res->cases || !res->warnings || !res->limits)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	res->n_cases = t->n_cases;
	for (i = 0; i < t->n_cases; i++)
		kj_case_init(&res->cases[i], i);
	res->input_sets = o->seed_fixed ? 1 : (o->input_sets > 0 ? o->input_sets : 2);
	res->seed_fixed = o->seed_fixed;
	res->cmp = o->cmp;
	res->timeout_s = o->timeout_s;
	res->sandboxed = t->cand.sandboxed;
	res->scratch_kind = a->scratch_kind;
	/* What was asked for, and what the machine put in force around the
	 * candidate's worker (a limit the machine cannot set shows here as
	 * none: the sandbox refuses to start where it could set one and did
	 * not). */
	if (json_object_set_new(res->limits, "configured", kj_limits_json(&a->cfg->limits)) ||
	    json_object_set_new(res->limits, "candidate_in_force",
				t->cand.limits ? kj__jref(t->cand.limits) : json_null()) ||
	    json_object_set_new(res->limits, "reference_in_force",
				t->ref.limits ? kj__jref(t->ref.limits) : json_null()) ||
	    json_object_set_new(res->limits, "sandbox", json_boolean(t->cand.sandboxed)) ||
	    json_object_set_new(res->limits, "isolation", json_pack("{s:s?, s:s?}", "reference",
				t->ref.isolation, "candidate", t->cand.isolation)) ||
	    json_object_set_new(res->limits, "timeout_s", json_real(o->timeout_s)) ||
	    json_object_set_new(res->limits, "memory_budget", kj_mem_budget_json(&a->cfg->mem)))
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	return KJ_OK;
}

/*
 * The end of a run: the timings, and whatever the judge failed to record.
 * A run that ends on the judge's own failure is a judge error in every view:
 * the cases it passed before are passes no more, so that no reader (the
 * seed's gate reads passed_cases == total_cases alone) sees every case
 * passed in a run the judge could not finish.
 */
static int finish_result(struct kj_attempt *a, struct kj_result *res, int rc,
			 struct kj_error *err)
{
	int i;

	kj_attempt_tally(a, "total_s", kj__now_s() - a->t0);
	res->timings = json_deep_copy(a->timings);
	if (rc == KJ_OK && (!res->timings || a->broken))
		rc = kj_error_set(err, KJ_ENOMEM, "the judge could not record its own figures "
				  "(out of memory)");
	for (i = 0; rc != KJ_OK && i < res->n_cases; i++)
		if (kj_case_status(&res->cases[i]) == KJ_STATUS_PASS)
			/* The type is set even when the message cannot be kept. */
			kj_case_fail(&res->cases[i], KJ_ET_JUDGE, "the case passed, then the "
				     "run ended on the judge's own failure (%s): its pass is not "
				     "kept", err ? err->msg : kj_strerror(rc));
	return rc;
}

static int hook(const struct kj_hooks *h, struct kj_task *t, struct kj_result *res,
		struct kj_case *c, struct kj_error *err)
{
	if (!h || !h->on_case)
		return KJ_OK;
	if (h->on_case(h->ctx, t, res, c, err) != 0)
		return err->code ? err->code : kj_error_set(err, KJ_EIO, "the case could not be "
							    "recorded");
	return KJ_OK;
}

int kj_verify(struct kj_task *t, struct kj_attempt *a, const struct kj_judge_opts *o,
	      const struct kj_hooks *hooks, struct kj_result *res, struct kj_error *err)
{
	int rc, k, s;

	rc = start_result(t, a, o, res, err);
	if (rc != KJ_OK)
		return finish_result(a, res, rc, err);
	for (k = 0; k < res->n_cases; k++) {
		struct kj_case *c = &res->cases[k];
		int decided = 0, compared = 0, expected = 0;

		for (s = 0; s < res->input_sets; s++) {
			uint64_t seed = o->seed_fixed ? o->seed
						      : kj_seed_derive(a->run_key, kj_task_identity(t), k, s);

			c->input_set = s + 1;
			rc = verify_set(t, a, o, res, k, s, seed, KJ__DEVOUT(t, a), c, &decided, err);
			if (rc != KJ_OK)
				return finish_result(a, res, rc, err);
			if (decided)
				break;
			compared = c->compared;
			expected = c->expected;
		}
		if (!decided && kj_case_pass(c, compared, expected) != KJ_OK)
			res->infra_errors++; /* cannot happen: a pass without its outputs */
		rc = hook(hooks, t, res, c, err);
		if (rc != KJ_OK)
			return finish_result(a, res, rc, err);
	}
	return finish_result(a, res, KJ_OK, err);
}

/* --- benchmark ----------------------------------------------------------------------- */

/* A growable array of doubles. */
struct dvec {
	double *v;
	size_t n, cap;
};

static int dvec_add(struct dvec *d, double x)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 256;
		double *v = realloc(d->v, cap * sizeof(double));

		if (!v)
			return KJ_ENOMEM;
		d->v = v;
		d->cap = cap;
	}
	d->v[d->n++] = x;
	return KJ_OK;
}

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* The median of d and the relative half-width of its 95 % interval
 * (order statistics); INFINITY with fewer than 5 values. */
static int median_ci(const struct dvec *d, double *median, double *rel, struct kj_error *err)
{
	struct kj_latency l;

	*median = 0;
	*rel = INFINITY;
	if (d->n < 5)
		return KJ_OK;
	if (kj__latency(d->v, NULL, d->n, 0, NULL, &l) != KJ_OK)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	*median = l.median_ms;
	if (l.median_ms > 0)
		*rel = (l.ci_high_ms - l.ci_low_ms) / 2 / l.median_ms;
	return KJ_OK;
}

static double median_of(struct dvec *d)
{
	if (!d->n)
		return 0;
	qsort(d->v, d->n, sizeof(double), cmp_dbl);
	return d->n % 2 ? d->v[d->n / 2] : (d->v[d->n / 2 - 1] + d->v[d->n / 2]) / 2;
}

/* What one side's timing gathered over a case. */
struct timed {
	struct dvec ms, esc;     /* every timed sample */
	struct dvec over;        /* per round: (judge's wall - samples) / calls */
	struct dvec wall;        /* per round: judge's wall / calls */
	struct dvec smean;       /* per round: samples / calls */
	int empty;               /* its rounds are of empty calls (the
				  * reference's worker: the harness's cost) */
	int known_borrowed;      /* `known` is another's (not freed here) */
	double peak_mb;
	double idle_sync_ms;
	char timer[24];
	double wall_per_call;    /* of the last round, judge's clock */
	/* Per input set (n_known of them), the distinct outputs of the case
	 * this side has sent and the judge has checked so far: later rounds
	 * name them instead of sending them again (struct kj_call's known). */
	int *known;
	int n_known;
	int redo;       /* a timed output not decidable on the device: the
			 * case is timed again through host memory */
};

/* Its rounds forgotten (the samples and the per-round figures), what the
 * judge has checked of its outputs kept. */
static void timed_reset(struct timed *t)
{
	t->ms.n = t->esc.n = t->over.n = t->wall.n = t->smean.n = 0;
}

static void timed_release(struct timed *t)
{
	free(t->ms.v);
	free(t->esc.v);
	free(t->over.v);
	free(t->wall.v);
	free(t->smean.v);
	if (!t->known_borrowed)
		free(t->known);
	memset(t, 0, sizeof(*t));
}

/* The total bytes of the tensors of an output tree. */
/* The bytes of the tensors an input description lists
 * ([{"type": "tensor", "shape": [..], "dtype": "torch.float32"}, ...]). */
static double desc_bytes(const json_t *desc)
{
	double sum = 0;
	size_t i, d;

	for (i = 0; i < json_array_size(desc); i++) {
		const json_t *e = json_array_get(desc, i), *shape = json_object_get(e, "shape");
		const char *dt = json_string_value(json_object_get(e, "dtype"));
		double n = 1;

		if (!json_is_array(shape) || !dt)
			continue;
		if (!strncmp(dt, "torch.", 6))
			dt += 6;
		for (d = 0; d < json_array_size(shape); d++)
			n *= (double)json_integer_value(json_array_get(shape, d));
		sum += n * (double)kj_dtype_size(kj_dtype_from_name(dt));
	}
	return sum;
}

/* What the input sets of a timed case may hold together on one side: each
 * worker keeps its sets (and a copy, to see changes) through the case. */
#define TIMED_SETS_BYTES (4.0 * (1u << 30))

/*
 * Input sets each side sees once each, after its rounds: a call on inputs
 * it has never seen takes what its work takes; one that recognises inputs
 * it has seen (by content, by address) and replays what it worked out
 * before is fast only on those.  The fastest of the candidate's such calls,
 * over the median of its cycled calls, must not be more than REPLAY_RATIO
 * times the same ratio of the reference's (what new inputs cost honest code
 * in the same run: new allocations, cold caches; taken between 1 and 1.5),
 * nor more than two launches longer.  Honest code measured 1.0-1.4 on the
 * CPU, a lookup by content 10-17 (tests/candidates/content_memo).  A batch
 * that trips is confirmed by a second one on PROBE_SETS more new sets: a
 * replay trips every time, while a call of a few microseconds that the
 * scheduler delayed on all three sets (under eval's parallel workers on a
 * busy CPU) almost never does so twice; the case fails only if both trip.
 */
#define PROBE_SETS 3
#define PROBE_BATCHES 2
#define REPLAY_RATIO 5.0

/* The fewest timed rounds per side the judge's figures are medians of
 * (unless --max_repeats ends the rounds first). */
#define MIN_ROUNDS 5

/* How long a timed round of one side lasts, about. */
#define ROUND_MS_GPU 100.0
#define ROUND_MS_CPU 25.0

/*
 * One round of side s: `n_calls` timed calls cycling through the sets from
 * `offset`, after `warmup` untimed ones, with the other side frozen.  The
 * judge's clock brackets the request.  *ok is 0 when c now holds the side's
 * failure (the candidate's: a wrong timed output, its inputs changed, a
 * malformed round).
 */
/* One call of a round on a set the side has never seen (kj_call.probe_*). */
struct probe {
	int at;          /* its place in the round */
	int set;         /* its golden: gold[set] */
	uint64_t seed;
	double *ms;      /* its sample, out */
};

static int time_round(struct kj_task *t, struct kj_attempt *a, const struct kj_judge_opts *o,
		      const struct kj_bench_opts *b, struct kj_result *res, int k,
		      struct kj_side *s, struct kj_side *other, const uint64_t *seeds, int n_sets,
		      struct golden *gold, int offset, int n_calls, int warmup, struct timed *acc,
		      int record, const struct probe *pr, int devout, struct kj_case *c, int *ok,
		      struct kj_error *err)
{
	struct kj_call call;
	struct kj_reply r;
	struct devplan *plans = NULL;
	int *schedule = NULL, rc, i, frozen = 0, st = DEV_HOST, exported = 0;
	double t0, wall, sum = 0;
	size_t u;

	*ok = 0;
	kj_reply_init(&r);
	if (n_calls) {
		schedule = malloc((size_t)n_calls * sizeof(int));
		if (!schedule)
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
		for (i = 0; i < n_calls; i++)
			schedule[i] = (offset + i) % n_sets;
		if (pr)
			schedule[pr->at] = pr->set;
	}
	memset(&call, 0, sizeof(call));
	call.op = KJ_CALL_TIME;
	call.case_idx = k;
	call.out_dir = s->out_dir;
	call.tag = s->role == KJ_SIDE_REFERENCE ? "reft" : "cand";
	call.seeds = seeds;
	call.n_seeds = n_sets;
	call.schedule = schedule;
	call.n_calls = n_calls;
	call.warmup = warmup;
	call.flush_bytes = b->flush_bytes;
	call.check = 1; /* both sides do the same work around the calls */
	call.probe_at = pr ? pr->at : -1;
	call.probe_seed = pr ? pr->seed : 0;
	call.probe_set = pr ? pr->set : -1;
	call.known = acc->known;
	call.n_known = pr ? pr->set + 1 : n_sets;
	if (call.n_known > acc->n_known)
		call.n_known = acc->n_known;
	/* Both sides alike, as for the rest of the work around the calls. */
	call.export_outputs = devout;
	call.empty = acc->empty;
	if (other && other->loaded && !KJ_SIDE_CAN(other, KJ_SIDE_CAP_FREEZE)) {
		rc = kj_case_fail(c, KJ_ET_JUDGE, "the %s's runner (%s) cannot freeze its worker: "
				  "the %s cannot be timed alone", kj_side_name(other->role),
				  other->ops->name, kj_side_name(s->role)) == KJ_OK
			     ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
		goto out;
	}
	if (other && other->loaded) {
		rc = other->ops->freeze(other, 1, err);
		if (rc != KJ_OK)
			goto out;
		frozen = 1;
	}
	t0 = kj__now_s();
	rc = send_call(s, &call, err);
	if (rc == KJ_OK)
		rc = recv_call(a, s, &r, err);
	/* The candidate's outputs left on the device are copied by the
	 * reference's worker before the judge's clock stops: what they hold
	 * when the copy is made is what is judged, and all the work that made
	 * it is inside the round's time. */
	for (u = 0; rc == KJ_OK && r.ok && s->role == KJ_SIDE_CANDIDATE && devout != KJ_DEVOUT_OFF &&
		    !exported && u < r.n_distinct; u++)
		exported = held_any(r.distinct[u]);
	if (exported) {
		if (frozen) {
			rc = other->ops->freeze(other, 0, err);
			frozen = 0;
		}
		/* One plan per distinct output (zeroed ones release as they
		 * are); one of a set the round did not use is refused below. */
		plans = calloc(r.n_distinct, sizeof(*plans));
		if (rc == KJ_OK && !plans)
			rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
		for (u = 0; rc == KJ_OK && u < r.n_distinct; u++) {
			if (r.distinct_set[u] < 0 || r.distinct_set[u] >= call.n_known)
				break;
			rc = dev_pairs(gold[r.distinct_set[u]].outputs, r.distinct[u], &r, &o->cmp,
				       &plans[u], err);
			if (rc == KJ_OK && plans[u].state == DEV_READY)
				rc = dev_take(t, a, &plans[u], &st, err);
		}
	}
	wall = (kj__now_s() - t0) * 1e3;
	if (frozen) {
		int rc2 = other->ops->freeze(other, 0, err);

		if (rc == KJ_OK)
			rc = rc2;
	}
	if (rc != KJ_OK)
		goto out;
	if (!r.ok) {
		rc = side_failed(s, &r, c, res, err);
		goto out;
	}
	if (r.n_samples != (size_t)n_calls || (n_calls && r.n_calls != (size_t)n_calls)) {
		rc = kj_case_fail(c, s->role == KJ_SIDE_CANDIDATE ? KJ_ET_PROTOCOL : KJ_ET_REFERENCE,
				  "the %s's worker reported %zu timed calls for %d", kj_side_name(s->role),
				  r.n_samples, n_calls) == KJ_OK
			     ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n_calls; i++)
		if (r.call_set[i] != schedule[i]) {
			rc = kj_case_fail(c, KJ_ET_PROTOCOL, "the %s's worker timed call %d on "
					  "another input set than asked", kj_side_name(s->role),
					  i + 1) == KJ_OK ? KJ_OK : kj_error_set(err, KJ_ENOMEM,
										  "out of memory");
			goto out;
		}
	/* The new distinct outputs are known from now on: checked below (the
	 * candidate's; a wrong one ends the case) or the reference's own. */
	for (u = 0; u < r.n_distinct; u++) {
		if (r.distinct_set[u] < 0 || r.distinct_set[u] >= call.n_known) {
			rc = kj_case_fail(c, s->role == KJ_SIDE_CANDIDATE ? KJ_ET_PROTOCOL
									   : KJ_ET_REFERENCE,
					  "the %s's worker sent outputs of an input set the round "
					  "did not use", kj_side_name(s->role)) == KJ_OK
				     ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
			goto out;
		}
		acc->known[r.distinct_set[u]]++;
	}
	if (s->role == KJ_SIDE_CANDIDATE) {
		if (r.inputs_changed) {
			rc = kj_case_fail(c, KJ_ET_INPUT_MODIFIED, "the candidate changed its input "
					  "tensors during the timed runs") == KJ_OK
				     ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
			goto out;
		}
		/* Every distinct output of the round against its set's golden. */
		for (u = 0; u < r.n_distinct; u++) {
			struct golden *g = &gold[r.distinct_set[u]];
			double tc = kj__now_s();

			rc = compare_outputs(t, a, g->outputs, g->dir, r.distinct[u], &r, &o->cmp,
					     devout, plans ? &plans[u] : NULL, c, &st, err);
			kj_attempt_tally(a, "compare_s", kj__now_s() - tc);
			if (rc != KJ_OK)
				goto out;
			if (st == DEV_REDO) {
				acc->redo = 1;
				goto out;
			}
			if (st != DEV_HOST) {
				char *m = NULL;

				if (c->type != KJ_ET_PROTOCOL) {
					if (asprintf(&m, "an output of the timed runs is wrong: %s",
						     c->message ? c->message : "") < 0) {
						rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
						goto out;
					}
					free(c->message);
					c->message = m;
					c->type = KJ_ET_TIMED_MISMATCH;
				}
				goto out;
			}
		}
	}
	/* A sample longer than the judge saw the whole round take cannot be. */
	for (i = 0; (record || pr) && i < n_calls; i++)
		if (r.samples_ms[i] > wall) {
			rc = kj_case_fail(c, s->role == KJ_SIDE_CANDIDATE ? KJ_ET_TIMING_MISMATCH
									   : KJ_ET_REFERENCE,
					  "the %s reported a call of %.6g ms in a round the "
					  "judge's clock saw take %.6g ms", kj_side_name(s->role),
					  r.samples_ms[i], wall) == KJ_OK
				     ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
			goto out;
		}
	if (pr) {
		/* Its own sample, not the round's. */
		*pr->ms = r.samples_ms[pr->at];
		*ok = 1;
		goto out;
	}
	acc->wall_per_call = n_calls ? wall / n_calls : wall;
	acc->peak_mb = r.peak_memory_mb > acc->peak_mb ? r.peak_memory_mb : acc->peak_mb;
	acc->idle_sync_ms = r.idle_sync_ms;
	snprintf(acc->timer, sizeof(acc->timer), "%s", r.timer);
	if (record && n_calls) {
		for (i = 0; i < n_calls; i++) {
			sum += r.samples_ms[i];
			if (dvec_add(&acc->ms, r.samples_ms[i]) || dvec_add(&acc->esc, r.escaped_ms[i])) {
				rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
				goto out;
			}
		}
		if (dvec_add(&acc->over, (wall - sum) / n_calls) ||
		    dvec_add(&acc->wall, wall / n_calls) || dvec_add(&acc->smean, sum / n_calls)) {
			rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
			goto out;
		}
	}
	*ok = 1;
out:
	for (u = 0; plans && u < r.n_distinct; u++)
		devplan_release(&plans[u]);
	free(plans);
	free(schedule);
	kj_reply_release(&r);
	kj__clear_dir(s->out_dir, ".npy");
	return rc;
}

/* The device's limits, once per benchmark run, from the reference's worker. */
static int device_limits(struct kj_task *t, struct kj_attempt *a, struct kj_result *res,
			 struct kj_case *c, int *ok, struct kj_error *err)
{
	struct kj_call call;
	struct kj_reply r;
	int rc, usable;

	*ok = 1;
	if (res->copy_gbs > 0)
		return KJ_OK;
	*ok = 0;
	if (!KJ_SIDE_CAN(&t->ref, KJ_SIDE_CAP_DEVICE))
		return kj_case_fail(c, KJ_ET_JUDGE, "the reference's runner (%s) cannot measure the "
				    "device's limits: the timing floor cannot be checked",
				    t->ref.ops ? t->ref.ops->name : "none") == KJ_OK
			       ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
	rc = ensure_side(&t->ref, c, res, &usable, err);
	if (rc != KJ_OK || !usable)
		return rc;
	memset(&call, 0, sizeof(call));
	call.op = KJ_CALL_DEVICE;
	kj_reply_init(&r);
	rc = send_call(&t->ref, &call, err);
	if (rc == KJ_OK)
		rc = recv_call(a, &t->ref, &r, err);
	if (rc == KJ_OK && !r.ok)
		rc = side_failed(&t->ref, &r, c, res, err);
	else if (rc == KJ_OK) {
		res->copy_gbs = r.copy_gbs;
		res->launch_ms = r.launch_ms;
		*ok = 1;
	}
	kj_reply_release(&r);
	return rc;
}

/* The golden outputs of one timed input set: from the cache, or from the
 * reference (*ok = 0 when the case failed on the way). */
static int timed_golden(struct kj_task *t, struct kj_attempt *a, int k, uint64_t seed, int keep,
			struct golden *g, struct kj_case *c, struct kj_result *res, int *ok,
			struct kj_error *err)
{
	int rc, usable;

	*ok = 0;
	rc = golden_cached(t, a, k, seed, g, err);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		res->from_cache++;
		*ok = 1;
		return KJ_OK;
	}
	rc = send_ref_run(t, a, k, seed, keep, 1, c, res, &usable, err);
	if (rc != KJ_OK || !usable)
		return rc;
	rc = recv_call(a, &t->ref, &g->rep, err);
	if (rc == KJ_OK)
		rc = golden_take(t, a, k, seed, g, c, res, ok, err);
	return rc;
}

/* One batch of probes: each of the n sets from gold[first] in a round of
 * three calls, between two on cycled sets, on both sides (the candidate's
 * outputs checked as every timed call's are); the fastest call of each
 * side on them, out.  *offset moves on as the rounds do. */
static int probe_batch(struct kj_task *t, struct kj_attempt *a, const struct kj_judge_opts *o,
		       const struct kj_bench_opts *b, struct kj_result *res, int k,
		       const uint64_t *seeds, int n_sets, struct golden *gold, int first,
		       const uint64_t *probe_seeds, int n, int timing_ref, struct timed *tr,
		       struct timed *tc, int *offset, double *fastest, double *fastest_r,
		       int devout, struct kj_case *c, int *ok, struct kj_error *err)
{
	int j, rc = KJ_OK;

	*ok = 1;
	*fastest = *fastest_r = INFINITY;
	for (j = 0; j < n; j++) {
		double ms = 0, ref_ms = 0;
		struct probe pc = { 1, first + j, probe_seeds[j], &ms };
		struct probe pf = { 1, first + j, probe_seeds[j], &ref_ms };

		rc = time_round(t, a, o, b, res, k, &t->cand, &t->ref, seeds, n_sets, gold, *offset,
				3, 0, tc, 0, &pc, devout, c, ok, err);
		if (rc == KJ_OK && *ok && timing_ref)
			rc = time_round(t, a, o, b, res, k, &t->ref, &t->cand, seeds, n_sets, gold,
					*offset, 3, 0, tr, 0, &pf, devout, c, ok, err);
		if (rc != KJ_OK || !*ok)
			return rc;
		*offset = (*offset + 2) % n_sets;
		if (ms < *fastest)
			*fastest = ms;
		if (ref_ms < *fastest_r)
			*fastest_r = ref_ms;
	}
	return rc;
}

/* Whether a batch's fastest calls on new inputs say replay (above). */
static int replay_tripped(double fastest, double fastest_r, double med_c, double med_r,
			  int timing_ref, double launch_ms, double *ratio_r)
{
	*ratio_r = 1.0;
	/* The reference's own ratio, between 1 and 1.5: what new inputs cost
	 * honest code here, not what its noise could make of it. */
	if (timing_ref && med_r > 0 && fastest_r / med_r > 1.0)
		*ratio_r = fastest_r / med_r < 1.5 ? fastest_r / med_r : 1.5;
	return med_c > 0 && fastest > REPLAY_RATIO * *ratio_r * med_c &&
	       fastest - med_c > 2 * launch_ms;
}

/* The median absolute deviation of d, scaled to a standard deviation's
 * (1.4826: normal data). */
static double mad_of(struct dvec *d)
{
	struct dvec dev = { NULL, 0, 0 };
	double m = median_of(d), r;
	size_t i;

	for (i = 0; i < d->n; i++)
		if (dvec_add(&dev, fabs(d->v[i] - m)) != KJ_OK) {
			free(dev.v);
			return INFINITY; /* no spread known: no bound can be met */
		}
	r = 1.4826 * median_of(&dev);
	free(dev.v);
	return r;
}

/*
 * The judge's figures are a low quantile over rounds, not their median:
 * whatever else runs on the machine (another attempt's workers, the
 * scheduler) only ever adds time to a round, on either side, so the
 * rounds it spared say best what the calls take; and nothing a candidate
 * does can make a round shorter than its calls were.  With a few rounds
 * it is their fastest.
 */
#define JUDGE_Q 0.25

/* The p-quantile of d (sorts d), and its 95 % interval (order statistics,
 * the binomial's normal approximation). */
static void quantile_ci(struct dvec *d, double p, double *q, double *lo, double *hi)
{
	double k, half, pos;
	long l, h;
	size_t i;

	*q = *lo = *hi = 0;
	if (!d->n)
		return;
	qsort(d->v, d->n, sizeof(double), cmp_dbl);
	pos = p * (double)(d->n - 1);
	i = (size_t)pos;
	*q = i + 1 < d->n ? d->v[i] + (pos - (double)i) * (d->v[i + 1] - d->v[i]) : d->v[i];
	k = p * (double)d->n;
	half = 1.96 * sqrt((double)d->n * p * (1 - p));
	l = (long)floor(k - half) - 1;
	h = (long)ceil(k + half) - 1;
	*lo = d->v[l < 0 ? 0 : l];
	*hi = d->v[h >= (long)d->n ? (long)d->n - 1 : h < 0 ? 0 : h];
}

static double quantile_of(struct dvec *d, double p)
{
	double q, lo, hi;

	quantile_ci(d, p, &q, &lo, &hi);
	return q;
}

/* The p-quantile (p >= 0) or, with p < 0, the MAD of d, d left in its
 * order (its rounds stay paired with the other side's); NAN without memory. */
static double stat_kept(const struct dvec *d, double p)
{
	struct dvec c = { NULL, 0, 0 };
	double r;

	if (d->n && !(c.v = malloc(d->n * sizeof(double))))
		return NAN;
	if (d->n)
		memcpy(c.v, d->v, d->n * sizeof(double));
	c.n = c.cap = d->n;
	r = p >= 0 ? quantile_of(&c, p) : mad_of(&c);
	free(c.v);
	return r;
}

/*
 * The harness's cost per call to take off round i of a side: the median
 * of the reference's worker's in the same ABBA pair and its neighbours
 * (rounds of as many calls, at about the same time: a cost that drifts
 * over the case falls on both sides, while one round of the reference's
 * that the scheduler delayed does not make the candidate's look free),
 * where it measured one per pair; else `over`.
 */
static double over_at(const struct dvec *ov, size_t n_rounds, size_t i, double over)
{
	double a, b, c;

	if (!ov || ov->n != n_rounds || i >= ov->n)
		return over;
	if (ov->n < 3)
		return ov->v[i];
	if (i == 0)
		i = 1;
	else if (i == ov->n - 1)
		i = ov->n - 2;
	a = ov->v[i - 1];
	b = ov->v[i];
	c = ov->v[i + 1];
	/* The middle one of three. */
	if ((a <= b && b <= c) || (c <= b && b <= a))
		return b;
	if ((b <= a && a <= c) || (c <= a && a <= b))
		return a;
	return c;
}

/*
 * A side's figures from the judge's clock (kj_latency's judge_ms and its
 * interval, round_sample_ms, overhead_ms): its rounds' wall time per call
 * less the harness's cost per call (over_at), at JUDGE_Q; its samples per
 * round at the same quantile.  The interval is widened by `res` on each
 * side: what taking off a cost another worker measured may be off by.
 * Call after kj__latency.
 */
static int judge_figures(struct timed *t, const struct dvec *ov, double over, double res,
			 struct kj_latency *l)
{
	struct dvec j = { NULL, 0, 0 };
	size_t i;
	int rc = KJ_OK;

	for (i = 0; rc == KJ_OK && i < t->wall.n; i++)
		rc = dvec_add(&j, t->wall.v[i] - over_at(ov, t->wall.n, i, over));
	if (rc != KJ_OK) {
		free(j.v);
		return rc;
	}
	quantile_ci(&j, JUDGE_Q, &l->judge_ms, &l->judge_ci_low_ms, &l->judge_ci_high_ms);
	l->judge_ci_low_ms -= res;
	l->judge_ci_high_ms += res;
	free(j.v);
	l->rounds = (int)t->wall.n;
	l->round_sample_ms = quantile_of(&t->smean, JUDGE_Q);
	l->overhead_ms = over;
	return KJ_OK;
}

/*
 * The speedup.  The judge's own is the median over pairs of rounds (the
 * reference's and the candidate's of one ABBA pair, so that what changed
 * between pairs falls on both) of the ratio of their judge's figures, each
 * round's wall time per call less the harness's cost (over_at: the
 * reference's round's of the pair; the given or shared baseline's figure
 * `ref_j` where the reference was not timed); the candidate's no less than
 * the physical floor.  Its 95 % interval is the median's (order
 * statistics), widened by the judge's resolution `res` on the candidate's
 * figure.  The samples' medians measure a call to the microsecond where
 * the judge's clock sees rounds: their ratio is the speedup unless it is
 * above that interval, then the interval's upper end (speedup_bounded):
 * the speedup never exceeds what the judge's clock saw by more than that
 * interval, whatever the samples say.
 */
static int judge_speedup(struct timed *tr, struct timed *tc, int timing_ref,
			 const struct dvec *ov, double over, double res, double ref_j,
			 double ref_med, double floor_ms, struct kj_case *c)
{
	struct dvec r = { NULL, 0, 0 };
	struct kj_latency l;
	size_t i, n = timing_ref && tr->wall.n < tc->wall.n ? tr->wall.n : tc->wall.n;
	double s, lo, hi, jc_fig = c->cand.judge_ms, den;

	for (i = 0; i < n; i++) {
		double o = over_at(ov, tc->wall.n, i, over);
		double jr = timing_ref ? tr->wall.v[i] - o : ref_j, jc = tc->wall.v[i] - o;

		if (jc < floor_ms)
			jc = floor_ms;
		if (jr > 0 && jc > 0 && dvec_add(&r, jr / jc) != KJ_OK) {
			free(r.v);
			return KJ_ENOMEM;
		}
	}
	if (kj__latency(r.v, NULL, r.n, 0, NULL, &l) != KJ_OK) {
		free(r.v);
		return KJ_ENOMEM;
	}
	free(r.v);
	/* The pairs' interval, widened by what the candidate's figure may be
	 * off by (res): a call of jc_fig could be one of jc_fig +- res.  Where
	 * res reaches the floor the judge's clock bounds nothing from above. */
	lo = l.ci_low_ms;
	hi = l.ci_high_ms;
	if (jc_fig < floor_ms)
		jc_fig = floor_ms; /* as the pairs' figures were */
	if (res > 0 && jc_fig > 0) {
		lo *= jc_fig / (jc_fig + res);
		den = jc_fig - res;
		if (den < floor_ms)
			den = floor_ms;
		hi = den > 0 ? hi * jc_fig / den : (double)INFINITY;
	} else if (res > 0) {
		lo = 0.0; /* nothing to go by: the samples' ratio stands */
		hi = INFINITY;
	}
	c->judge_speedup = l.median_ms;
	c->judge_speedup_lo = lo;
	c->judge_speedup_hi = isfinite(hi) ? hi : 0.0; /* 0: unbounded */
	s = ref_med > 0 && c->cand.median_ms > 0 ? ref_med / c->cand.median_ms : 0.0;
	c->speedup_bounded = 0;
	if (!r.n) {
		s = 0.0; /* no round the judge could figure: no speedup */
	} else if (s > hi) {
		/* Never more than the judge's clock allows.  (Samples that
		 * say less than the judge saw only cost their own side.) */
		s = hi;
		c->speedup_bounded = 1;
	}
	c->speedup = s;
	return KJ_OK;
}

/*
 * The cross-check.  Each side's samples, as a figure per round, over its
 * judge's-clock figure: the reference's (trusted code, in the same harness)
 * says what the ratio is for honest work here, about 1.  The candidate's
 * may fall below it by CHECK_REL of its figure, plus CHECK_SPREAD times the
 * spread of the harness's cost per call over the reference's rounds or the
 * judge's resolution (judge_resolution), whichever is more, plus CHECK_ABS
 * (per device kind), over its figure: what two workers running the same
 * code differ by (docs/ARCHITECTURE.md, "The judge's clock", gives the
 * figures these come from).  Samples that claim less than that are not the
 * time the calls took: TimingMismatch, once it trips twice (the caller
 * times the case again after a first trip: final 0 sets *tripped).  The
 * speedup never rests on them; this makes a forgery a failure instead of a
 * wasted effort.
 */
#define CHECK_REL_CPU 0.10
#define CHECK_REL_GPU 0.05
#define CHECK_ABS_CPU 0.02  /* ms */
#define CHECK_ABS_GPU 0.002 /* ms */
#define CHECK_SPREAD 3.0
/* The harness's cost per call of two workers running the same harness
 * differs by this share of it (docs/PERFORMANCE.md, "The judge's clock":
 * on the H100, charged one cost for all rounds, a 20 us matmul's came out
 * up to 0.12 ms a call either side of the reference worker's 0.40; most of
 * that is the cost changing between rounds, which the pairing takes off). */
#define OVER_REL_CPU 0.05
#define OVER_REL_GPU 0.10

/* What the judge's figure of a call may be off by, beyond what the
 * rounds' own scatter shows: OVER_REL of the harness's cost per call (each
 * round is charged the cost of the reference's round in its pair, so what
 * changes over time falls on both; what stays is two workers' difference). */
static double judge_resolution(double over, int gpu)
{
	return (gpu ? OVER_REL_GPU : OVER_REL_CPU) * fabs(over);
}

static int check_samples(struct kj_case *c, int timing_ref, double over, double spread,
			 double res, int gpu, int final, int *tripped, struct kj_error *err)
{
	double jc = c->cand.judge_ms, rc_ = 0, rr = 1.0, slack, least;

	if (timing_ref && c->ref.judge_ms > 0)
		rr = c->ref.round_sample_ms / c->ref.judge_ms;
	/* The reference's ratio counts as no more than 1: its samples
	 * claiming more than its rounds held leaves no room for a candidate's
	 * to claim less. */
	if (rr > 1.0)
		rr = 1.0;
	slack = (gpu ? CHECK_REL_GPU : CHECK_REL_CPU) +
		((CHECK_SPREAD * spread > res ? CHECK_SPREAD * spread : res) +
		 (gpu ? CHECK_ABS_GPU : CHECK_ABS_CPU)) / (jc > 0 ? jc : 1e-9);
	least = rr * (1.0 - slack);
	if (jc > 0)
		rc_ = c->cand.round_sample_ms / jc;
	c->check_ratio_ref = rr;
	c->check_ratio_cand = rc_;
	c->check_ratio_min = least;
	c->judge_resolution_ms = res;
	if (!(jc > 0) || rc_ >= least)
		return KJ_OK;
	if (!final) {
		*tripped = 1; /* the caller times the case again */
		return KJ_OK;
	}
	return kj_case_fail(c, KJ_ET_TIMING_MISMATCH, "the candidate's samples say %.4g ms a call, "
			    "its rounds on the judge's clock %.4g ms a call less the harness's %.4g "
			    "ms: a ratio of %.3g, where the reference's is %.3g and the least "
			    "allowed %.3g", c->cand.round_sample_ms, jc + over, over, rc_, rr,
			    least) == KJ_OK ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
}

static int bench_case(struct kj_task *t, struct kj_attempt *a, const struct kj_judge_opts *o,
		      const struct kj_bench_opts *b, struct kj_result *res, int k, int devout,
		      struct kj_case *c, int *redo, struct kj_error *err)
{
	int n_sets = b->timed_sets > 0 ? b->timed_sets : 1, n_probe = PROBE_SETS;
	const int n_gold = n_sets + PROBE_BATCHES * PROBE_SETS;
	struct golden *gold = calloc((size_t)n_gold, sizeof(*gold));
	uint64_t *seeds = calloc((size_t)n_sets, sizeof(uint64_t));
	uint64_t probe_seeds[PROBE_BATCHES * PROBE_SETS];
	struct timed tr, tc, te;
	int rc = KJ_OK, usable, ok = 0, j, offset = 0, rounds = 0, round_calls = 5, kept = 0;
	double t_start, out_bytes = 0, med_c = 0, rel_c = INFINITY, med_r = 0, rel_r = INFINITY;
	double one = 0; /* what a set takes: inputs twice (the copy), outputs */
	double cand_floor = 0, round_ms, warm_pace = 0, res_ms = 0;
	const struct dvec *ov = NULL;
	int retimed = 0, probed = 0;
	double shared_ref = b->ref_ms && k < b->n_ref_ms && b->ref_ms[k] > 0 ? b->ref_ms[k] : 0;
	int timing_ref = !b->skip_framework && !(shared_ref > 0);
	/* The harness's cost per call: from the reference's rounds, else as
	 * measured with the shared baseline, else from rounds of empty calls
	 * on the reference's worker. */
	double shared_over = !timing_ref && shared_ref > 0 && b->ref_over_ms &&
			     b->ref_over_ms[k] > 0 ? b->ref_over_ms[k] : 0;
	int timing_empty = !timing_ref && !(shared_over > 0);
	size_t least;

	memset(&tr, 0, sizeof(tr));
	memset(&tc, 0, sizeof(tc));
	memset(&te, 0, sizeof(te));
	tr.known = calloc((size_t)n_gold, sizeof(int));
	tc.known = calloc((size_t)n_gold, sizeof(int));
	tr.n_known = tc.n_known = n_gold;
	/* The empty calls' outputs are the reference's own: one numbering
	 * of distinct outputs on its worker. */
	te.known = tr.known;
	te.n_known = tr.n_known;
	te.known_borrowed = 1;
	te.empty = 1;
	c->input_set = 1;
	if (!gold || !seeds || !tr.known || !tc.known) {
		rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
		goto out;
	}
	for (j = 0; j < n_gold; j++)
		golden_init(&gold[j]);
	for (j = 0; j < n_sets; j++)
		seeds[j] = o->seed_fixed ? o->seed + (uint64_t)j
					 : kj_seed_derive(a->run_key, kj_task_identity(t), k, 1000 + j);
	for (j = 0; j < PROBE_BATCHES * PROBE_SETS; j++)
		probe_seeds[j] = o->seed_fixed ? o->seed + 500 + (uint64_t)j
					       : kj_seed_derive(a->run_key, kj_task_identity(t), k, 2000 + j);
	c->seed = seeds[0];
	rc = ensure_side(&t->cand, c, res, &usable, err);
	if (rc != KJ_OK || !usable)
		goto out;
	/* Golden outputs of every timed input set: from the cache or the
	 * reference, which runs them one after the other. */
	for (j = 0; j < n_sets; j++) {
		rc = timed_golden(t, a, k, seeds[j], devout, &gold[j], c, res, &ok, err);
		if (rc != KJ_OK || !ok)
			goto out;
		kept |= held_any(gold[j].outputs);
		if (!gold[j].e.dir[0] && !all_kept(gold[j].outputs)) {
			/* Not kept in the cache (it could not be stored there):
			 * the stage holds one set at a time, so later sets would
			 * overwrite it.  Time with one. */
			n_sets = j + 1;
			break;
		}
		if (j == 0) {
			/* As many sets as fit. */
			one = kj_value_tensor_bytes(gold[0].outputs) + 2 * desc_bytes(gold[0].input_desc);
			if (one * n_sets > TIMED_SETS_BYTES)
				n_sets = one >= TIMED_SETS_BYTES / 2 ? 1 : (int)(TIMED_SETS_BYTES / one);
		}
	}
	/* The sets the candidate will see once each, after the rounds (they
	 * follow the cycled ones in gold[]): only where there is a cache to
	 * keep their goldens in and room for them. */
	if (n_sets < 2 || one * (n_sets + n_probe) > TIMED_SETS_BYTES)
		n_probe = 0;
	for (j = 0; j < n_probe; j++) {
		rc = timed_golden(t, a, k, probe_seeds[j], devout, &gold[n_sets + j], c, res, &ok,
				  err);
		if (rc != KJ_OK || !ok)
			goto out;
		kept |= held_any(gold[n_sets + j].outputs);
		if (!gold[n_sets + j].e.dir[0] && !all_kept(gold[n_sets + j].outputs)) {
			n_probe = j;
			break;
		}
	}
	/* Outputs left on the device only where every golden is kept there
	 * (goldens from the cache are files): else each side's timed outputs
	 * go through host memory, the same on both. */
	for (j = 0; devout != KJ_DEVOUT_OFF && j < n_sets + n_probe; j++)
		if (!held_any(gold[j].outputs))
			devout = KJ_DEVOUT_OFF;
	keep_desc(c, gold[0].input_desc);
	out_bytes = kj_value_tensor_bytes(gold[0].outputs);
	rc = device_limits(t, a, res, c, &ok, err);
	if (rc != KJ_OK || !ok)
		goto out;
	if (timing_ref || timing_empty) {
		rc = ensure_side(&t->ref, c, res, &usable, err);
		if (rc != KJ_OK || !usable)
			goto out;
	}
	/* Warm-up: the seed's calls, then more until 200 ms of them ran, so
	 * that clocks and caches settle before the first sample. */
	t_start = kj__now_s();
	{
		int w = b->warmup > 0 ? b->warmup : 1, pass;

		for (pass = 0; pass < 2; pass++) {
			double pace;

			if (timing_ref) {
				rc = time_round(t, a, o, b, res, k, &t->ref, &t->cand, seeds, n_sets, gold,
						0, 0, w, &tr, 0, NULL, devout, c, &ok, err);
				if (rc != KJ_OK || !ok)
					goto out;
			}
			rc = time_round(t, a, o, b, res, k, &t->cand, &t->ref, seeds, n_sets, gold, 0, 0,
					w, &tc, 0, NULL, devout, c, &ok, err);
			if (rc != KJ_OK || !ok)
				goto out;
			/* A round without timed calls: wall_per_call is its whole
			 * wall time, the w calls and the round's own work. */
			pace = (tc.wall_per_call > tr.wall_per_call ? tc.wall_per_call
								    : tr.wall_per_call) / w;
			warm_pace = pace;
			if (pass == 1 || w * pace >= 200)
				break;
			w = (int)(200 / (pace > 0.001 ? pace : 0.001));
			if (w > 100000)
				w = 100000;
		}
		/* The empty calls' outputs are made in this round, untimed
		 * and outside every measured one. */
		if (timing_empty) {
			rc = time_round(t, a, o, b, res, k, &t->ref, &t->cand, seeds, n_sets, gold,
					0, 0, 1, &te, 0, NULL, devout, c, &ok, err);
			if (rc != KJ_OK || !ok)
				goto out;
		}
	}
	/* Interleaved rounds until both medians are known well enough, and
	 * at least MIN_ROUNDS of them: the judge's figures are quantiles over
	 * rounds.  On the CPU rounds are shorter: the more of them, the more
	 * the scheduler spared. */
	least = b->repeats > 5 ? (size_t)b->repeats : 5;
	round_ms = strcmp(tc.timer, "cuda_event") ? ROUND_MS_CPU : ROUND_MS_GPU;
retime:
	for (;;) {
		double per = tc.wall_per_call > tr.wall_per_call ? tc.wall_per_call : tr.wall_per_call;

		/* The first round as long as the others: its pace from the
		 * warm-up (rounds of one length take the same harness cost off
		 * both sides of a pair). */
		if (rounds == 0)
			per = warm_pace;
		if (per > 0)
			round_calls = (int)(round_ms / per); /* about round_ms of each side per round */
		/* --max_repeats spread over MIN_ROUNDS rounds at least. */
		if (b->max_repeats / MIN_ROUNDS > 0 && round_calls > b->max_repeats / MIN_ROUNDS)
			round_calls = b->max_repeats / MIN_ROUNDS;
		if (round_calls < 3)
			round_calls = 3;
		if (round_calls > 1000)
			round_calls = 1000;
		/* Reference and candidate in turn, in ABBA order (the first of
		 * a pair alternates), so that whatever follows the other side's
		 * round (clocks, caches, the freeze) falls on both alike. */
		{
			int pass;

			for (pass = 0; pass < 2; pass++) {
				int cand_now = (pass == 0) == (rounds % 2 == 1);

				if (!cand_now && !timing_ref)
					continue;
				rc = cand_now ? time_round(t, a, o, b, res, k, &t->cand, &t->ref, seeds,
							   n_sets, gold, offset, round_calls, 0, &tc,
							   1, NULL, devout, c, &ok, err)
					      : time_round(t, a, o, b, res, k, &t->ref, &t->cand, seeds,
							   n_sets, gold, offset, round_calls, 0, &tr,
							   1, NULL, devout, c, &ok, err);
				if (rc != KJ_OK || !ok)
					goto out;
			}
		}
		/* The harness alone, on the reference's worker, where the
		 * reference itself is not timed. */
		if (timing_empty) {
			rc = time_round(t, a, o, b, res, k, &t->ref, &t->cand, seeds, n_sets, gold,
					offset, round_calls, 0, &te, 1, NULL, devout, c, &ok, err);
			if (rc != KJ_OK || !ok)
				goto out;
		}
		offset = (offset + round_calls) % n_sets;
		rounds++;
		if ((rc = median_ci(&tc.ms, &med_c, &rel_c, err)) != KJ_OK ||
		    (timing_ref && (rc = median_ci(&tr.ms, &med_r, &rel_r, err)) != KJ_OK))
			goto out;
		if (tc.ms.n >= (size_t)b->max_repeats)
			break;
		if (rounds < MIN_ROUNDS)
			continue;
		if (tc.ms.n >= (size_t)b->repeats && (!timing_ref || tr.ms.n >= (size_t)b->repeats) &&
		    rel_c <= b->target_ci && (!timing_ref || rel_r <= b->target_ci))
			break;
		/* The budget ends the rounds once each side has its --repeats
		 * (the least it takes, as the seed's count was), 5 at least. */
		if (kj__now_s() - t_start >= b->budget_s && tc.ms.n >= least &&
		    (!timing_ref || tr.ms.n >= least))
			break;
	}
	/* The sets neither side has seen in its rounds (above); a second
	 * batch where the first trips, if there is room for its goldens. */
	if (n_probe > 0 && !probed) {
		double fastest, fastest_r, ratio_r;
		int batch, tripped = 0, first = n_sets;

		for (batch = 0; batch < PROBE_BATCHES; batch++) {
			if (batch > 0) {
				int got = 0;

				if (one * (first + n_probe) > TIMED_SETS_BYTES)
					break;
				for (j = 0; j < n_probe; j++) {
					struct golden *g = &gold[first + j];

					rc = timed_golden(t, a, k, probe_seeds[batch * PROBE_SETS + j],
							  devout, g, c, res, &ok, err);
					if (rc != KJ_OK || !ok)
						goto out;
					kept |= held_any(g->outputs);
					if ((!g->e.dir[0] && !all_kept(g->outputs)) ||
					    (devout != KJ_DEVOUT_OFF && !held_any(g->outputs)))
						break;
					got++;
				}
				if (got < n_probe)
					break; /* no room: the first batch's verdict stands */
			}
			rc = probe_batch(t, a, o, b, res, k, seeds, n_sets, gold, first,
					 probe_seeds + batch * PROBE_SETS, n_probe, timing_ref, &tr,
					 &tc, &offset, &fastest, &fastest_r, devout, c, &ok, err);
			if (rc != KJ_OK || !ok)
				goto out;
			c->unseen_ms = fastest;
			c->unseen_ref_ms = timing_ref ? fastest_r : 0;
			tripped = replay_tripped(fastest, fastest_r, med_c, med_r, timing_ref,
						 res->launch_ms, &ratio_r);
			if (!tripped)
				break;
			if (batch == 0)
				kj_attempt_tally(a, "replay_confirm_n", 1);
			first += n_probe;
		}
		if (tripped) {
			rc = kj_case_fail(c, KJ_ET_REPLAY, "on inputs it had never seen the candidate's "
					  "fastest call took %.4g ms, %.3gx its median of %.4g ms on "
					  "the inputs it was timed on again and again (the reference's: "
					  "%.3gx): its speed comes from having seen them", fastest,
					  fastest / med_c, med_c, ratio_r) == KJ_OK
				     ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
			goto out;
		}
	}
	/* Seen once: a case timed again keeps this verdict (the sets are
	 * no longer unseen). */
	probed = 1;
	if (kj__latency(tc.ms.v, tc.esc.v, tc.ms.n, tc.peak_mb, tc.timer, &c->cand) != KJ_OK ||
	    (timing_ref && kj__latency(tr.ms.v, tr.esc.v, tr.ms.n, tr.peak_mb, tr.timer, &c->ref) !=
				   KJ_OK)) {
		rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
		goto out;
	}
	/* The judge's clock decides.  Each side's figure is the median over
	 * its rounds of the round's wall time per call less the harness's
	 * cost per call, which the reference's worker measured (its rounds'
	 * time its own samples do not account for; or empty calls'; or the
	 * shared baseline's): the same amount taken off both sides.  Then the
	 * candidate's samples are checked against it (judge_figures). */
	{
		double over = timing_ref ? stat_kept(&tr.over, JUDGE_Q)
			      : timing_empty ? stat_kept(&te.over, JUDGE_Q) : shared_over;
		double spread = timing_ref     ? stat_kept(&tr.over, -1)
				: timing_empty ? stat_kept(&te.over, -1) : 0;
		int gpu = !strcmp(tc.timer, "cuda_event"), tripped = 0;

		if (isnan(over) || isnan(spread)) {
			rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
			goto out;
		}

		ov = timing_ref ? &tr.over : timing_empty ? &te.over : NULL;
		res_ms = judge_resolution(over, gpu);
		if (judge_figures(&tc, ov, over, res_ms, &c->cand) != KJ_OK ||
		    (timing_ref && judge_figures(&tr, &tr.over, over, 0, &c->ref) != KJ_OK)) {
			rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
			goto out;
		}
		rc = check_samples(c, timing_ref, over, spread, res_ms, gpu, retimed, &tripped, err);
		if (rc != KJ_OK || c->type != KJ_ET_NOT_JUDGED)
			goto out;
		if (tripped) {
			/* Once more, from fresh rounds: what upset one set of
			 * rounds (another process on the machine, a worker moved
			 * between cores) seldom comes back; a forgery does. */
			timed_reset(&tr);
			timed_reset(&tc);
			timed_reset(&te);
			rounds = 0;
			retimed = 1;
			c->timing_rechecked = 1;
			kj_attempt_tally(a, "timing_recheck_n", 1);
			goto retime;
		}
	}
	/* The physical floor: a call cannot be faster than the smallest kernel,
	 * or than writing its outputs once at the device's copy bandwidth. */
	{
		/* The smallest kernel, as the device probe timed it; but never
		 * more than the reference's own fastest call, which launched at
		 * least that much on the same device in the same rounds (under
		 * eval, other attempts' workers starting CUDA on the GPU made
		 * the probe's 0.0143 ms of a 64 x 64 add whose calls took
		 * 0.0037 ms). */
		double launch = res->launch_ms;
		double floor_ms, bytes_ms = 0.5 * out_bytes / (res->copy_gbs * 1e9) * 1e3;
		size_t s_i;

		for (s_i = 0; timing_ref && s_i < tr.ms.n; s_i++)
			if (tr.ms.v[s_i] > 0 && tr.ms.v[s_i] < launch)
				launch = tr.ms.v[s_i];
		/* A baseline given from earlier in the batch: its median took
		 * at least a kernel too. */
		if (!timing_ref && shared_ref > 0 && shared_ref < launch)
			launch = shared_ref;
		floor_ms = 0.5 * launch;

		if (bytes_ms > floor_ms)
			floor_ms = bytes_ms;
		/* The samples' median.  (The judge's figure is a difference
		 * of two times, the round's and the harness's: on a busy
		 * machine it can fall below the floor for an honest call; the
		 * speedup's bound keeps it from counting for more.) */
		if (med_c < floor_ms) {
			rc = kj_case_fail(c, KJ_ET_TIMING_IMPOSSIBLE, "the candidate's median call took "
					  "%.4g ms, less than the device needs for it (%.4g ms: %.0f "
					  "bytes of outputs at %.4g GB/s, a kernel launch %.4g ms)", med_c,
					  floor_ms, out_bytes, res->copy_gbs, res->launch_ms) == KJ_OK
				     ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
			goto out;
		}
		cand_floor = floor_ms;
	}
	if (!timing_ref) {
		memset(&c->ref, 0, sizeof(c->ref));
		c->ref.mean_ms = c->ref.median_ms = c->ref.judge_ms =
			shared_ref > 0 ? shared_ref : b->framework_latency_ms;
		if (shared_ref > 0 && b->ref_median_ms && b->ref_median_ms[k] > 0)
			c->ref.median_ms = b->ref_median_ms[k];
		c->ref.overhead_ms = c->cand.overhead_ms;
		c->ref_given = 1;
		c->ref_cached = shared_ref > 0;
	}
	c->timed = 1;
	{
		rc = judge_speedup(&tr, &tc, timing_ref, ov, c->cand.overhead_ms, res_ms,
				   c->ref.judge_ms, c->ref.median_ms, cand_floor, c);
		if (rc != KJ_OK) {
			rc = kj_error_set(err, rc, "out of memory");
			goto out;
		}
	}
	c->compared = (int)gold[0].outputs->n;
	c->expected = (int)gold[0].outputs->n;
	if (kj_case_pass(c, c->compared, c->expected) != KJ_OK)
		res->infra_errors++;
out:
	*redo = rc == KJ_OK && (tc.redo || tr.redo);
	if (kept && rc == KJ_OK)
		rc = dev_drop(t, a, err);
	for (j = 0; gold && j < n_gold; j++)
		golden_release(&gold[j], ref_dir(t, a));
	free(gold);
	free(seeds);
	timed_release(&tr);
	timed_release(&tc);
	timed_release(&te);
	kj__clear_dir(t->cand.out_dir, ".npy");
	kj__clear_dir(t->ref.out_dir, ".npy");
	return rc;
}

int kj_benchmark(struct kj_task *t, struct kj_attempt *a, const struct kj_judge_opts *o,
		 const struct kj_bench_opts *b, const struct kj_hooks *hooks,
		 struct kj_result *res, struct kj_error *err)
{
	int rc, k;

	rc = start_result(t, a, o, res, err);
	if (rc != KJ_OK)
		return finish_result(a, res, rc, err);
	res->benchmark = 1;
	res->input_sets = b->timed_sets > 0 ? b->timed_sets : 1;
	res->bench = *b;
	for (k = 0; k < res->n_cases; k++) {
		int redo = 0;

		rc = bench_case(t, a, o, b, res, k, KJ__DEVOUT(t, a), &res->cases[k], &redo,
				err);
		if (rc == KJ_OK && redo) {
			/* A timed output the device could not decide: the case
			 * timed again, every output through host memory. */
			kj_attempt_tally(a, "device_redo_n", 1);
			rc = bench_case(t, a, o, b, res, k, KJ_DEVOUT_OFF, &res->cases[k], &redo,
					err);
		}
		if (rc == KJ_OK)
			rc = hook(hooks, t, res, &res->cases[k], err);
		if (rc != KJ_OK)
			return finish_result(a, res, rc, err);
	}
	return finish_result(a, res, KJ_OK, err);
}
