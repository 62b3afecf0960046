/*
 * golden.c - the golden outputs of an input set: from the cache, or from a
 * run of the reference, checked before anything is compared with them.
 */

#include <stdint.h>
#include <string.h>

#include "core/pipeline_internal.h"

void kj__golden_init(struct kj__golden *g)
{
	memset(g, 0, sizeof(*g));
	kj__entry_init(&g->e);
	kj_reply_init(&g->rep);
}

void kj__golden_release(struct kj__golden *g, const char *stage)
{
	/* Files not kept in the cache (or half written by a reference that
	 * failed) are the stage's: gone with this set. */
	kj__clear_dir(stage, ".npy");
	kj__entry_release(&g->e);
	kj_reply_release(&g->rep);
	kj__golden_init(g);
}

/* Where the reference writes golden outputs: the stage, never its own
 * output directory, which its timed rounds clear while the goldens of the
 * timed sets must live on (kj_attempt_open always makes a stage). */
const char *kj__ref_dir(const struct kj_task *t, const struct kj_attempt *a)
{
	return a->stage[0] ? a->stage : t->ref.out_dir;
}

/*
 * The reference's reply r to a run call is in: check it can be compared
 * and keep it (in the cache when there is one).  *ok is 0 when c now holds
 * the task's failure.
 */
int kj__golden_take(struct kj_task *t, struct kj_attempt *a, int case_idx, uint64_t seed,
		    struct kj__golden *g, struct kj_case *c, struct kj_result *res, int *ok,
		    struct kj_error *err)
{
	char why[300], key[65];
	int rc;

	*ok = 0;
	if (!g->rep.ok)
		return kj__side_failed(&t->ref, &g->rep, c, res, err);
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
	g->dir = kj__ref_dir(t, a);
	/* Outputs kept on the device have no file for the cache. */
	if (a->cache && a->stage[0] && !kj__held_any(g->rep.outputs)) {
		rc = kj__cache_key("g", t, case_idx, seed, 0, key, err);
		if (rc != KJ_OK)
			return rc;
		/* Goldens of fresh seeds, which no later run can ask for, leave
		 * the cache with the attempt instead of filling it. */
		rc = kj__golden_put(a->cache, key, a->stage, g->rep.outputs, g->rep.input_desc,
				    !res->seed_fixed && !a->run_key_shared, &g->e, err);
		if (rc < 0)
			return rc;
		if (rc == 1)
			g->dir = g->e.dir;
	}
	*ok = 1;
	return KJ_OK;
}

/* A golden run from the cache: 1 found (g filled), 0 not, or a code. */
int kj__golden_cached(struct kj_task *t, struct kj_attempt *a, int case_idx, uint64_t seed,
		      struct kj__golden *g, struct kj_error *err)
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

/* Send the reference the run of case k on the set of `seed` (its outputs
 * to the stage, or its own directory); *usable as kj__ensure_side's. */
int kj__send_ref_run(struct kj_task *t, struct kj_attempt *a, int k, uint64_t seed,
		     int keep, int copy, struct kj_case *c, struct kj_result *res, int *usable,
		     struct kj_error *err)
{
	struct kj_call call;
	int rc;

	rc = kj__ensure_side(&t->ref, c, res, usable, err);
	if (rc != KJ_OK || !*usable)
		return rc;
	memset(&call, 0, sizeof(call));
	call.op = KJ_CALL_RUN;
	call.case_idx = k;
	call.seed = seed;
	call.out_dir = kj__ref_dir(t, a);
	call.tag = "ref";
	call.export_outputs = keep;
	/* A timed set's golden lives through the reference's own timed
	 * rounds, whose calls may hand out the same buffer again: a copy. */
	call.keep = keep == KJ_DEVOUT_OFF ? 0 : copy ? KJ_KEEP_COPY : KJ_KEEP;
	return kj__send_call(&t->ref, &call, err);
}

/* The golden outputs of one timed input set: from the cache, or from the
 * reference (*ok = 0 when the case failed on the way). */
int kj__timed_golden(struct kj_task *t, struct kj_attempt *a, int k, uint64_t seed, int keep,
		     struct kj__golden *g, struct kj_case *c, struct kj_result *res, int *ok,
		     struct kj_error *err)
{
	int rc, usable;

	*ok = 0;
	rc = kj__golden_cached(t, a, k, seed, g, err);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		res->from_cache++;
		*ok = 1;
		return KJ_OK;
	}
	rc = kj__send_ref_run(t, a, k, seed, keep, 1, c, res, &usable, err);
	if (rc != KJ_OK || !usable)
		return rc;
	rc = kj__recv_call(a, &t->ref, &g->rep, err);
	if (rc == KJ_OK)
		rc = kj__golden_take(t, a, k, seed, g, c, res, ok, err);
	return rc;
}
