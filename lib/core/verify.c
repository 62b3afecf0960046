/*
 * verify.c - kj_verify: every case on its input sets, the candidate's
 * outputs of each set against the golden ones.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pipeline_internal.h"

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

/*
 * One input set of one case.  *decided is 1 when c holds a failure (the
 * case is over), 0 when the set passed (c->compared/expected set).
 */
static int verify_set(struct kj_task *t, struct kj_attempt *a, const struct kj_judge_opts *o,
		      struct kj_result *res, int k, int set, uint64_t seed, int devout,
		      struct kj_case *c, int *decided, struct kj_error *err)
{
	struct kj__golden g;
	struct kj_reply cr;
	struct kj_call call;
	int rc, usable, ref_sent = 0, ok = 0, st = DEV_FAILED, kept = 0;
	double t0;

	(void)set;
	*decided = 1;
	kj__golden_init(&g);
	kj_reply_init(&cr);
	c->seed = seed;
	/* The candidate first: one that cannot be loaded needs no reference. */
	rc = kj__ensure_side(&t->cand, c, res, &usable, err);
	if (rc != KJ_OK || !usable)
		goto out;
	rc = kj__golden_cached(t, a, k, seed, &g, err);
	if (rc < 0)
		goto out;
	if (rc == 0) {
		rc = kj__send_ref_run(t, a, k, seed, devout, 0, c, res, &usable, err);
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
	rc = kj__send_call(&t->cand, &call, err);
	if (rc != KJ_OK)
		goto out;
	if (ref_sent) {
		rc = kj__recv_call(a, &t->ref, &g.rep, err);
		if (rc != KJ_OK)
			goto out;
	}
	rc = kj__recv_call(a, &t->cand, &cr, err);
	if (rc != KJ_OK)
		goto out;
	if (ref_sent) {
		rc = kj__golden_take(t, a, k, seed, &g, c, res, &ok, err);
		if (rc != KJ_OK || !ok)
			goto out;
	}
	kj__keep_desc(c, g.input_desc);
	if (!cr.ok) {
		rc = kj__side_failed(&t->cand, &cr, c, res, err);
		goto out;
	}
	if (cr.inputs_changed) {
		rc = kj_case_fail(c, KJ_ET_INPUT_MODIFIED, "the candidate changed its input "
				  "tensors") == KJ_OK ? KJ_OK : kj_error_set(err, KJ_ENOMEM,
									       "out of memory");
		goto out;
	}
	t0 = kj__now_s();
	rc = kj__compare_outputs(t, a, g.outputs, g.dir, cr.outputs, &cr, &o->cmp,
				 call.export_outputs, NULL, c, &st, err);
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
		rc = kj__dev_drop(t, a, err);
	kj__golden_release(&g, kj__ref_dir(t, a));
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

int kj_verify(struct kj_task *t, struct kj_attempt *a, const struct kj_judge_opts *o,
	      const struct kj_hooks *hooks, struct kj_result *res, struct kj_error *err)
{
	int rc, k, s;

	rc = kj__start_result(t, a, o, res, err);
	if (rc != KJ_OK)
		return kj__finish_result(a, res, rc, err);
	for (k = 0; k < res->n_cases; k++) {
		struct kj_case *c = &res->cases[k];
		int decided = 0, compared = 0, expected = 0;

		for (s = 0; s < res->input_sets; s++) {
			uint64_t seed = o->seed_fixed ? o->seed
						      : kj_seed_derive(a->run_key, kj_task_identity(t), k,
								       KJ__SEED_VERIFY + s);

			c->input_set = s + 1;
			rc = verify_set(t, a, o, res, k, s, seed, KJ__DEVOUT(t, a), c, &decided, err);
			if (rc != KJ_OK)
				return kj__finish_result(a, res, rc, err);
			if (decided)
				break;
			compared = c->compared;
			expected = c->expected;
		}
		if (!decided && kj_case_pass(c, compared, expected) != KJ_OK)
			res->infra_errors++; /* cannot happen: a pass without its outputs */
		rc = kj__case_hook(hooks, t, res, c, err);
		if (rc != KJ_OK)
			return kj__finish_result(a, res, rc, err);
	}
	return kj__finish_result(a, res, KJ_OK, err);
}
