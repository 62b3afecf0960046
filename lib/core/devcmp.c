/*
 * devcmp.c - a candidate's outputs compared with the golden ones: through
 * host memory (the C comparator), or on the device where both are held
 * there (the plan, take, figures and drop calls to the reference's worker).
 */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/pipeline_internal.h"

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

void kj__devplan_release(struct kj__devplan *p)
{
	json_decref(p->take);
	json_decref(p->fig);
	free(p->fds);
	free(p->host);
	memset(p, 0, sizeof(*p));
}

int kj__held_any(const struct kj_value *v)
{
	struct kj_value_held h;

	kj_value_held(v, &h);
	return h.kept || h.dev;
}

/* Whether every tensor of a golden tree is kept on the device (no file of
 * it in the stage, which holds one set at a time). */
int kj__all_kept(const struct kj_value *v)
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
int kj__dev_pairs(const struct kj_value *gold, const struct kj_value *cand,
		  const struct kj_reply *cr, const struct kj_cmp_options *cmp,
		  struct kj__devplan *p, struct kj_error *err)
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

		if (!kj__held_any(g) && !kj__held_any(x)) {
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
	rc = kj__send_call(&t->ref, &call, err);
	if (rc == KJ_OK)
		rc = kj__recv_call(a, &t->ref, r, err);
	if (rc == KJ_OK)
		*ok = r->ok && (op == KJ_CALL_DROP || json_array_size(r->held) == json_array_size(items));
	return rc;
}

/* The copies of the plan's outputs, into the reference's worker's memory:
 * *st stays DEV_READY, or becomes DEV_REDO. */
int kj__dev_take(struct kj_task *t, struct kj_attempt *a, struct kj__devplan *p, int *st,
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
static int dev_figures(struct kj_task *t, struct kj_attempt *a, struct kj__devplan *p, int *st,
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
int kj__dev_drop(struct kj_task *t, struct kj_attempt *a, struct kj_error *err)
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
int kj__compare_outputs(struct kj_task *t, struct kj_attempt *a, const struct kj_value *gold,
			const char *gdir, const struct kj_value *cand, const struct kj_reply *cr,
			const struct kj_cmp_options *cmp, int devout, struct kj__devplan *pre,
			struct kj_case *c, int *st, struct kj_error *err)
{
	struct kj__devplan own, *p = pre ? pre : &own;
	size_t i;
	int rc = KJ_OK, same = 0;

	*st = DEV_FAILED;
	if (!pre)
		rc = kj__dev_pairs(gold, cand, cr, cmp, &own, err);
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
		rc = kj__dev_take(t, a, p, st, err);
	if (rc == KJ_OK && *st == DEV_READY)
		rc = dev_figures(t, a, p, st, err);
	if (rc == KJ_OK && *st == DEV_HOST) {
		c->compared = (int)gold->n;
		c->expected = (int)gold->n;
		kj_attempt_tally(a, "device_compared_n", (double)p->n);
	}
out:
	if (!pre)
		kj__devplan_release(&own);
	if (rc == KJ_OK && *st == DEV_REDO && devout == KJ_DEVOUT_OFF) {
		/* Through host memory, yet not decidable: outputs left on the
		 * device that nobody asked for. */
		*st = DEV_FAILED;
		rc = fail_oom(c, err, KJ_ET_PROTOCOL, "the candidate's worker left outputs on the "
			      "device where the judge asked for sealed memory files");
	}
	return rc;
}
