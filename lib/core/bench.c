/*
 * bench.c - kj_benchmark: per case, the golden outputs of the timed sets,
 * the warm-up, the interleaved rounds of both sides until the stopping rule
 * holds, the unseen sets, then the checks of bench_checks.c over what the
 * rounds recorded.
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pipeline_internal.h"

double (*kj__bench_clock)(void);

double kj__judge_now(void)
{
	return kj__bench_clock ? kj__bench_clock() : kj__now_s();
}

/* Its rounds forgotten (the samples and the per-round figures), what the
 * judge has checked of its outputs kept. */
static void timed_reset(struct kj__timed *t)
{
	t->ms.n = t->esc.n = t->over.n = t->wall.n = t->smean.n = 0;
}

static void timed_release(struct kj__timed *t)
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

/* The fewest timed rounds per side the judge's figures are medians of
 * (unless --max_repeats ends the rounds first). */
#define MIN_ROUNDS 5

/* How long a timed round of one side lasts, about. */
#define ROUND_MS_GPU 100.0
#define ROUND_MS_CPU 25.0

/* The shortest call (warm-up calls back to back, on the judge's clock) of
 * both sides for which --timed_rounds auto queues a GPU's rounds: a queued
 * round hides the host's work around each call (about 0.3-0.5 ms on the
 * H100) only where the device's work is longer; where it is not, the round
 * waits on the host, and the sides' host costs, which differ, are what the
 * judge's clock would see (the 20 us A/A of docs/PERFORMANCE.md). */
#define QUEUE_MIN_MS 1.0

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
	double *wall;    /* the round's wall time on the judge's clock, out */
	int decoy;       /* set made from seed, call on cycled set `set`
			  * (kj_call's probe_decoy) */
};

static int time_round(struct kj_task *t, struct kj_attempt *a, const struct kj_judge_opts *o,
		      const struct kj_bench_opts *b, struct kj_result *res, int k,
		      struct kj_side *s, struct kj_side *other, const uint64_t *seeds, int n_sets,
		      struct kj__golden *gold, int offset, int n_calls, int warmup,
		      struct kj__timed *acc, int record, const struct probe *pr, int devout,
		      int queued, struct kj_case *c, int *ok, struct kj_error *err)
{
	struct kj_call call;
	struct kj_reply r;
	struct kj__devplan *plans = NULL;
	int *schedule = NULL, rc, i, frozen = 0, st = DEV_HOST, exported = 0;
	double t0, wall, sum = 0, take_ms = 0;
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
	call.probe_decoy = pr && pr->decoy;
	call.queued = queued && !pr;
	call.known = acc->known;
	call.n_known = pr && !pr->decoy ? pr->set + 1 : n_sets;
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
	t0 = kj__judge_now();
	rc = kj__send_call(s, &call, err);
	if (rc == KJ_OK)
		rc = kj__recv_call(a, s, &r, err);
	/* The candidate's outputs left on the device are copied by the
	 * reference's worker before the judge's clock stops: what they hold
	 * when the copy is made is what is judged, and the work that made it
	 * is inside the round's time (the copies' own time is taken off, below). */
	for (u = 0; rc == KJ_OK && r.ok && s->role == KJ_SIDE_CANDIDATE && devout != KJ_DEVOUT_OFF &&
		    !exported && u < r.n_distinct; u++)
		exported = kj__held_any(r.distinct[u]);
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
			rc = kj__dev_pairs(gold[r.distinct_set[u]].outputs, r.distinct[u], &r,
					   &o->cmp, &plans[u], err);
			if (rc == KJ_OK && plans[u].state == DEV_READY) {
				double t1 = kj__judge_now();

				rc = kj__dev_take(t, a, &plans[u], &st, err);
				take_ms += (kj__judge_now() - t1) * 1e3;
			}
		}
	}
	/* The copies' own time is the judge's, not the round's: a kernel
	 * whose outputs differ at every call (atomics) has each of them
	 * taken, which the reference's rounds of one output per set do not
	 * pay (75_conv_transposed_2D on the H100: 1 ms a call).  Work the
	 * candidate left running can overlap a copy by at most its length
	 * (what it copies must be there when the copy is made). */
	wall = (kj__judge_now() - t0) * 1e3 - take_ms;
	if (take_ms > 0)
		kj_attempt_tally(a, "take_s", take_ms / 1e3);
	if (frozen) {
		int rc2 = other->ops->freeze(other, 0, err);

		if (rc == KJ_OK)
			rc = rc2;
	}
	if (rc != KJ_OK)
		goto out;
	if (!r.ok) {
		rc = kj__side_failed(s, &r, c, res, err);
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
			struct kj__golden *g = &gold[r.distinct_set[u]];
			double tc = kj__now_s();

			rc = kj__compare_outputs(t, a, g->outputs, g->dir, r.distinct[u], &r,
						 &o->cmp, devout, plans ? &plans[u] : NULL, c, &st,
						 err);
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
		/* Its own sample, not the round's; and the round's wall. */
		*pr->ms = r.samples_ms[pr->at];
		*pr->wall = wall;
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
			if (kj__dvec_add(&acc->ms, r.samples_ms[i]) ||
			    kj__dvec_add(&acc->esc, r.escaped_ms[i])) {
				rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
				goto out;
			}
		}
		if (kj__dvec_add(&acc->over, (wall - sum) / n_calls) ||
		    kj__dvec_add(&acc->wall, wall / n_calls) ||
		    kj__dvec_add(&acc->smean, sum / n_calls)) {
			rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
			goto out;
		}
	}
	*ok = 1;
out:
	for (u = 0; plans && u < r.n_distinct; u++)
		kj__devplan_release(&plans[u]);
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
	rc = kj__ensure_side(&t->ref, c, res, &usable, err);
	if (rc != KJ_OK || !usable)
		return rc;
	memset(&call, 0, sizeof(call));
	call.op = KJ_CALL_DEVICE;
	kj_reply_init(&r);
	rc = kj__send_call(&t->ref, &call, err);
	if (rc == KJ_OK)
		rc = kj__recv_call(a, &t->ref, &r, err);
	if (rc == KJ_OK && !r.ok)
		rc = kj__side_failed(&t->ref, &r, c, res, err);
	else if (rc == KJ_OK) {
		res->copy_gbs = r.copy_gbs;
		res->launch_ms = r.launch_ms;
		*ok = 1;
	}
	kj_reply_release(&r);
	return rc;
}

/*
 * One batch of unseen sets: for each, a round of 3 calls on each side with
 * the set's call in the middle (made from its seed just before it), and a
 * decoy round beside it: a set made from another seed just as the probe's
 * is, and kept and checked as it is, but the middle call on a cycled set,
 * its output sent as a new one.  *fastest (*fastest_r): the fastest of the
 * candidate's (the reference's) samples of the calls on new inputs.  The
 * judge's own view, which no sample enters, *excess (*excess_r): each
 * side's fastest probe round less its fastest decoy round on the judge's
 * clock, what a call on inputs never seen took beyond one on inputs seen
 * in a round that does the same work around it; *decoy_ms: the
 * candidate's fastest decoy round; *spread_ms: its decoy rounds' median
 * above their fastest (the run's jitter, without the probed work's).  The
 * walls pool over the batches in w.  The reference's rounds
 * run only where it is timed (*fastest_r and *excess_r are 0 otherwise).
 */
#define DECOY_SEED 0x9e3779b97f4a7c15ULL /* decoy j's seed: probe j's plus this */
/* The probe ([side][0]) and decoy ([side][1]) rounds' walls so far, side 0
 * the candidate's: the batches pool them. */
struct walls {
	double v[2][2][PROBE_BATCHES * PROBE_SETS];
	int n[2][2];
};

/* The fastest of w's rounds of one kind, and (*med) their median. */
static double walls_low(const struct walls *w, int side, int decoy, double *med)
{
	double s[PROBE_BATCHES * PROBE_SETS];
	int n = w->n[side][decoy];

	*med = INFINITY;
	if (!n)
		return INFINITY;
	memcpy(s, w->v[side][decoy], (size_t)n * sizeof(double));
	kj__sort_doubles(s, (size_t)n);
	*med = kj__quantile_sorted(s, (size_t)n, 0.5);
	return s[0];
}
static int probe_batch(struct kj_task *t, struct kj_attempt *a, const struct kj_judge_opts *o,
		       const struct kj_bench_opts *b, struct kj_result *res, int k,
		       const uint64_t *seeds, int n_sets, struct kj__golden *gold, int first,
		       const uint64_t *probe_seeds, int n, int timing_ref, struct kj__timed *tr,
		       struct kj__timed *tc, int *offset, double *fastest, double *fastest_r,
		       struct walls *w, double *excess, double *excess_r, double *decoy_ms,
		       double *spread_ms, int devout, struct kj_case *c, int *ok,
		       struct kj_error *err)
{
	int j, step, rc = KJ_OK;

	*ok = 1;
	*fastest = *fastest_r = INFINITY;
	*excess = *excess_r = 0;
	for (j = 0; j < n; j++) {
		/* Probe then decoy, decoy then probe: what drifts over the
		 * batch falls on both. */
		for (step = 0; step < 2; step++) {
			int decoy = (step + j) % 2, side;

			for (side = 0; side < (timing_ref ? 2 : 1); side++) {
				double ms = 0, wall = 0;
				int cycled = (*offset + 1) % n_sets;
				struct probe p = { 1, decoy ? cycled : first + j,
						   decoy ? probe_seeds[j] + DECOY_SEED : probe_seeds[j],
						   &ms, &wall, decoy };

				rc = time_round(t, a, o, b, res, k, side ? &t->ref : &t->cand,
						side ? &t->cand : &t->ref, seeds, n_sets, gold,
						*offset, 3, 0, side ? tr : tc, 0, &p, devout, 0, c,
						ok, err);
				if (rc != KJ_OK || !*ok)
					return rc;
				if (w->n[side][decoy] < PROBE_BATCHES * PROBE_SETS)
					w->v[side][decoy][w->n[side][decoy]++] = wall;
				if (decoy)
					continue;
				if (!side && ms < *fastest)
					*fastest = ms;
				if (side && ms < *fastest_r)
					*fastest_r = ms;
			}
			*offset = (*offset + 2) % n_sets;
		}
	}
	{
		double med, dmed, d = walls_low(w, 0, 1, &dmed);

		*excess = walls_low(w, 0, 0, &med) - d;
		*decoy_ms = d;
		*spread_ms = isfinite(dmed) ? dmed - d : 0;
		*excess_r = timing_ref ? walls_low(w, 1, 0, &med) - walls_low(w, 1, 1, &dmed) : 0;
	}
	if (!timing_ref)
		*fastest_r = 0;
	return rc;
}

/* One case's benchmark: what its phases (below, in order) share. */
struct bcase {
	struct kj_task *t;
	struct kj_attempt *a;
	const struct kj_judge_opts *o;
	const struct kj_bench_opts *b;
	struct kj_result *res;
	struct kj_case *c;
	struct kj_error *err;
	int k;
	int devout;             /* outputs left on the device (kj_call.export_outputs) */
	int n_sets;             /* the timed sets the rounds cycle through */
	int n_probe;            /* unseen sets per batch */
	int n_gold;             /* gold[]: the timed sets', then the unseen sets' */
	struct kj__golden *gold;
	uint64_t *seeds;
	uint64_t probe_seeds[PROBE_BATCHES * PROBE_SETS];
	struct kj__timed tr, tc, te; /* the reference's, the candidate's, empty calls' */
	int timing_ref, timing_empty;
	int kept;               /* some golden is kept on the reference's device */
	double shared_ref, shared_over;
	double one;             /* what a set takes: inputs twice (the copy), outputs */
	double out_bytes, warm_pace;
	int offset, rounds, round_calls;
	int queued;             /* the rounds queued (kj_call.queued) */
	double med_c, rel_c, med_r, rel_r;
};

/* The golden outputs of the timed and the unseen sets, the device's
 * limits, both sides started: *ok is 0 when c now holds a failure. */
static int bench_goldens(struct bcase *B, int *ok)
{
	struct kj_task *t = B->t;
	struct kj_attempt *a = B->a;
	struct kj_result *res = B->res;
	struct kj_case *c = B->c;
	struct kj_error *err = B->err;
	struct kj__golden *gold = B->gold;
	int rc, usable, j, k = B->k;

	*ok = 0;
	rc = kj__ensure_side(&t->cand, c, res, &usable, err);
	if (rc != KJ_OK || !usable)
		return rc;
	/* Golden outputs of every timed input set: from the cache or the
	 * reference, which runs them one after the other. */
	for (j = 0; j < B->n_sets; j++) {
		rc = kj__timed_golden(t, a, k, B->seeds[j], B->devout, &gold[j], c, res, ok, err);
		if (rc != KJ_OK || !*ok)
			return rc;
		B->kept |= kj__held_any(gold[j].outputs);
		if (!gold[j].e.dir[0] && !kj__all_kept(gold[j].outputs)) {
			/* Not kept in the cache (it could not be stored there):
			 * the stage holds one set at a time, so later sets would
			 * overwrite it.  Time with one. */
			B->n_sets = j + 1;
			break;
		}
		if (j == 0) {
			/* As many sets as fit. */
			B->one = kj_value_tensor_bytes(gold[0].outputs) +
				 2 * desc_bytes(gold[0].input_desc);
			if (B->one * B->n_sets > TIMED_SETS_BYTES)
				B->n_sets = B->one >= TIMED_SETS_BYTES / 2
						    ? 1 : (int)(TIMED_SETS_BYTES / B->one);
		}
	}
	/* The sets the candidate will see once each, after the rounds (they
	 * follow the cycled ones in gold[]): only where there is a cache to
	 * keep their goldens in and room for them. */
	if (B->n_sets < 2 || B->one * (B->n_sets + B->n_probe) > TIMED_SETS_BYTES)
		B->n_probe = 0;
	for (j = 0; j < B->n_probe; j++) {
		struct kj__golden *g = &gold[B->n_sets + j];

		rc = kj__timed_golden(t, a, k, B->probe_seeds[j], B->devout, g, c, res, ok, err);
		if (rc != KJ_OK || !*ok)
			return rc;
		B->kept |= kj__held_any(g->outputs);
		if (!g->e.dir[0] && !kj__all_kept(g->outputs)) {
			B->n_probe = j;
			break;
		}
	}
	/* Outputs left on the device only where every golden is kept there
	 * (goldens from the cache are files): else each side's timed outputs
	 * go through host memory, the same on both. */
	for (j = 0; B->devout != KJ_DEVOUT_OFF && j < B->n_sets + B->n_probe; j++)
		if (!kj__held_any(gold[j].outputs))
			B->devout = KJ_DEVOUT_OFF;
	kj__keep_desc(c, gold[0].input_desc);
	B->out_bytes = kj_value_tensor_bytes(gold[0].outputs);
	rc = device_limits(t, a, res, c, ok, err);
	if (rc != KJ_OK || !*ok)
		return rc;
	if (B->timing_ref || B->timing_empty) {
		*ok = 0;
		rc = kj__ensure_side(&t->ref, c, res, &usable, err);
		if (rc != KJ_OK || !usable)
			return rc;
		*ok = 1;
	}
	return KJ_OK;
}

/* One round of a side's: n_calls timed calls from the rounds' offset
 * (record: its samples kept), after `warmup` untimed ones. */
static int bench_round(struct bcase *B, struct kj_side *s, struct kj_side *other,
		       struct kj__timed *acc, int n_calls, int warmup, int record, int *ok)
{
	return time_round(B->t, B->a, B->o, B->b, B->res, B->k, s, other, B->seeds, B->n_sets,
			  B->gold, record ? B->offset : 0, n_calls, warmup, acc, record, NULL,
			  B->devout, B->queued, B->c, ok, B->err);
}

/* Warm-up: the seed's calls, then more until 200 ms of them ran, so that
 * clocks and caches settle before the first sample. */
static int bench_warmup(struct bcase *B, int *ok)
{
	struct kj_task *t = B->t;
	int w = B->b->warmup > 0 ? B->b->warmup : 1, pass, rc;

	for (pass = 0; pass < 2; pass++) {
		double pace;

		if (B->timing_ref) {
			rc = bench_round(B, &t->ref, &t->cand, &B->tr, 0, w, 0, ok);
			if (rc != KJ_OK || !*ok)
				return rc;
		}
		rc = bench_round(B, &t->cand, &t->ref, &B->tc, 0, w, 0, ok);
		if (rc != KJ_OK || !*ok)
			return rc;
		/* A round without timed calls: wall_per_call is its whole
		 * wall time, the w calls and the round's own work. */
		pace = (B->tc.wall_per_call > B->tr.wall_per_call ? B->tc.wall_per_call
								  : B->tr.wall_per_call) / w;
		B->warm_pace = pace;
		if (pass == 1 || w * pace >= 200)
			break;
		w = (int)(200 / (pace > 0.001 ? pace : 0.001));
		if (w > 100000)
			w = 100000;
	}
	/* Queued rounds on a GPU (the device's timer) where both sides'
	 * calls are long enough, unless asked otherwise: the device runs a
	 * round's calls back to back. */
	B->queued = B->b->rounds == KJ_ROUNDS_QUEUED ||
		    (B->b->rounds == KJ_ROUNDS_AUTO && !strcmp(B->tc.timer, "cuda_event") &&
		     B->tc.wall_per_call / w >= QUEUE_MIN_MS &&
		     (B->timing_ref ? B->tr.wall_per_call / w
				    : B->shared_ref > 0 ? B->shared_ref : 0) >= QUEUE_MIN_MS);
	B->c->rounds_queued = B->queued;
	/* A baseline's harness cost measured the other way is not this
	 * round's: measured again, with empty calls, this way. */
	if (!B->timing_ref && B->shared_over > 0 &&
	    (B->b->ref_queued && B->k < B->b->n_ref_ms && B->b->ref_queued[B->k] > 0) !=
		    (B->queued != 0)) {
		B->shared_over = 0;
		B->timing_empty = 1;
	}
	/* The empty calls' outputs are made in this round, untimed and
	 * outside every measured one. */
	if (B->timing_empty)
		return bench_round(B, &t->ref, &t->cand, &B->te, 0, 1, 0, ok);
	return KJ_OK;
}

/*
 * Interleaved rounds until both medians are known well enough, and at
 * least MIN_ROUNDS of them: the judge's figures are quantiles over rounds.
 * On the CPU rounds are shorter: the more of them, the more the scheduler
 * spared.  The stopping rule: --max_repeats samples of the candidate's;
 * else, after MIN_ROUNDS, --repeats samples of each side with both
 * medians' intervals within --target_ci, or the budget spent on the
 * judge's clock since t_start once each side has its --repeats (5 at
 * least, as the seed's count was).
 */
static int bench_rounds(struct bcase *B, double t_start, int *ok)
{
	struct kj_task *t = B->t;
	const struct kj_bench_opts *b = B->b;
	struct kj__timed *tr = &B->tr, *tc = &B->tc;
	size_t least = b->repeats > 5 ? (size_t)b->repeats : 5;
	double round_ms = strcmp(tc->timer, "cuda_event") ? ROUND_MS_CPU : ROUND_MS_GPU;
	int rc;

	for (;;) {
		double per = tc->wall_per_call > tr->wall_per_call ? tc->wall_per_call
								     : tr->wall_per_call;
		int pass, n = 0;

		/* The first round as long as the others: its pace from the
		 * warm-up (rounds of one length take the same harness cost off
		 * both sides of a pair). */
		if (B->rounds == 0)
			per = B->warm_pace;
		if (per > 0)
			B->round_calls = (int)(round_ms / per); /* about round_ms of each side */
		/* --max_repeats spread over MIN_ROUNDS rounds at least. */
		if (b->max_repeats / MIN_ROUNDS > 0 && B->round_calls > b->max_repeats / MIN_ROUNDS)
			B->round_calls = b->max_repeats / MIN_ROUNDS;
		if (B->round_calls < 3)
			B->round_calls = 3;
		if (B->round_calls > 1000)
			B->round_calls = 1000;
		/* Reference and candidate in turn, in ABBA order (the first of
		 * a pair alternates), so that whatever follows the other side's
		 * round (clocks, caches, the freeze) falls on both alike. */
		for (pass = 0; pass < 2; pass++) {
			int cand_now = (pass == 0) == (B->rounds % 2 == 1);

			if (!cand_now && !B->timing_ref)
				continue;
			n = B->round_calls;
			rc = cand_now ? bench_round(B, &t->cand, &t->ref, tc, n, 0, 1, ok)
				      : bench_round(B, &t->ref, &t->cand, tr, n, 0, 1, ok);
			if (rc != KJ_OK || !*ok)
				return rc;
		}
		/* The harness alone, on the reference's worker, where the
		 * reference itself is not timed. */
		if (B->timing_empty) {
			rc = bench_round(B, &t->ref, &t->cand, &B->te, B->round_calls, 0, 1, ok);
			if (rc != KJ_OK || !*ok)
				return rc;
		}
		B->offset = (B->offset + B->round_calls) % B->n_sets;
		B->rounds++;
		if ((rc = kj__median_ci(&tc->ms, &B->med_c, &B->rel_c, B->err)) != KJ_OK ||
		    (B->timing_ref &&
		     (rc = kj__median_ci(&tr->ms, &B->med_r, &B->rel_r, B->err)) != KJ_OK))
			return rc;
		if (tc->ms.n >= (size_t)b->max_repeats)
			break;
		if (B->rounds < MIN_ROUNDS)
			continue;
		if (tc->ms.n >= (size_t)b->repeats &&
		    (!B->timing_ref || tr->ms.n >= (size_t)b->repeats) &&
		    B->rel_c <= b->target_ci && (!B->timing_ref || B->rel_r <= b->target_ci))
			break;
		if (kj__judge_now() - t_start >= b->budget_s && tc->ms.n >= least &&
		    (!B->timing_ref || tr->ms.n >= least))
			break;
	}
	return KJ_OK;
}

/* The harness's cost per call (p = JUDGE_Q) or its spread (p < 0: the
 * MAD) from the rounds that measured it: the reference's, else the empty
 * calls'; else `given` (the shared baseline's).  NAN without memory. */
static double harness_over(const struct bcase *B, double p, double given)
{
	if (B->timing_ref)
		return kj__stat_kept(&B->tr.over, p);
	if (B->timing_empty)
		return kj__stat_kept(&B->te.over, p);
	return given;
}

/* The sets neither side has seen in its rounds (PROBE_SETS); a second
 * batch where the first trips, if there is room for its goldens: *ok is 0
 * when c now holds a failure (Replay, or one on the way). */
static int bench_unseen(struct bcase *B, int *ok)
{
	struct kj_task *t = B->t;
	struct kj_attempt *a = B->a;
	struct kj_case *c = B->c;
	struct kj_error *err = B->err;
	double fastest = 0, fastest_r = 0, ratio_r = 1, excess = 0, excess_r = 0, unseen = 0;
	double per_call, wall_call, over, decoy_ms = 0, spread_ms = 0;
	int batch, tripped = 0, by_judge = 0, first = B->n_sets, j, rc;
	int gpu = !strcmp(B->tc.timer, "cuda_event");
	struct walls w;

	*ok = 1;
	memset(&w, 0, sizeof(w));
	/* The candidate's call on the inputs it was timed on: its samples'
	 * median, never more than the judge's clock saw its rounds take a call
	 * less the harness's cost (samples that claim more would hide a
	 * replay), nor less than half of it (the harness's cost is the
	 * reference's, which may be more than this worker's: an honest call is
	 * not made to look free).  Samples inflated to hide a replay so must
	 * claim about the work's own time, and then claim no speedup. */
	wall_call = kj__stat_kept(&B->tc.wall, JUDGE_Q);
	over = harness_over(B, JUDGE_Q, B->shared_over);
	if (isnan(wall_call) || isnan(over))
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	wall_call -= over > 0 ? over : 0;
	if (wall_call < B->res->launch_ms)
		wall_call = B->res->launch_ms;
	per_call = wall_call > 0 ? fmin(B->med_c, fmax(wall_call, 0.5 * B->med_c)) : B->med_c;
	for (batch = 0; batch < PROBE_BATCHES; batch++) {
		if (batch > 0) {
			int got = 0;

			if (B->one * (first + B->n_probe) > TIMED_SETS_BYTES)
				break;
			for (j = 0; j < B->n_probe; j++) {
				struct kj__golden *g = &B->gold[first + j];

				rc = kj__timed_golden(t, a, B->k,
						      B->probe_seeds[batch * PROBE_SETS + j],
						      B->devout, g, c, B->res, ok, err);
				if (rc != KJ_OK || !*ok)
					return rc;
				B->kept |= kj__held_any(g->outputs);
				if ((!g->e.dir[0] && !kj__all_kept(g->outputs)) ||
				    (B->devout != KJ_DEVOUT_OFF && !kj__held_any(g->outputs)))
					break;
				got++;
			}
			if (got < B->n_probe)
				break; /* no room: the first batch's verdict stands */
		}
		rc = probe_batch(t, a, B->o, B->b, B->res, B->k, B->seeds, B->n_sets, B->gold,
				 first, B->probe_seeds + batch * PROBE_SETS, B->n_probe,
				 B->timing_ref, &B->tr, &B->tc, &B->offset, &fastest, &fastest_r,
				 &w, &excess, &excess_r, &decoy_ms, &spread_ms, B->devout, c, ok, err);
		if (rc != KJ_OK || !*ok)
			return rc;
		c->unseen_ms = fastest;
		c->unseen_ref_ms = B->timing_ref ? fastest_r : 0;
		c->unseen_excess_ms = excess;
		c->unseen_excess_ref_ms = excess_r;
		tripped = kj__replay_tripped(fastest, fastest_r, B->med_c, B->med_r, B->timing_ref,
					     B->res->launch_ms, gpu, &ratio_r);
		by_judge = !tripped && kj__replay_judged(excess, B->timing_ref ? excess_r : 0,
							 per_call, ratio_r, decoy_ms - 3 * wall_call,
							 spread_ms, B->res->launch_ms, gpu, &unseen);
		tripped |= by_judge;
		if (!tripped)
			break;
		if (batch == 0)
			kj_attempt_tally(a, "replay_confirm_n", 1);
		first += B->n_probe;
	}
	if (!tripped)
		return KJ_OK;
	*ok = 0;
	if (by_judge)
		return kj_case_fail(c, KJ_ET_REPLAY, "on inputs it had never seen the candidate's "
				    "call took %.4g ms on the judge's clock (its rounds holding one "
				    "took %.4g ms longer than rounds of as many calls on inputs it "
				    "had seen, the reference's %.4g ms), %.3gx its %.4g ms a call on "
				    "the inputs it was timed on again and again (the reference's: "
				    "%.3gx), whatever its samples say: its speed comes from having "
				    "seen them", unseen, excess, excess_r, unseen / per_call,
				    per_call, ratio_r) == KJ_OK
			       ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
	return kj_case_fail(c, KJ_ET_REPLAY, "on inputs it had never seen the candidate's fastest "
			    "call took %.4g ms, %.3gx its median of %.4g ms on the inputs it was "
			    "timed on again and again (the reference's: %.3gx): its speed comes "
			    "from having seen them", fastest, fastest / B->med_c, B->med_c,
			    ratio_r) == KJ_OK
		       ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
}

/* The case's rounds forgotten, to be timed once more from fresh ones
 * (recorded as a recheck); returns 1, the benchmark's "retimed". */
static int retime(struct bcase *B)
{
	timed_reset(&B->tr);
	timed_reset(&B->tc);
	timed_reset(&B->te);
	B->rounds = 0;
	B->c->timing_rechecked = 1;
	kj_attempt_tally(B->a, "timing_recheck_n", 1);
	return 1;
}

/*
 * The judge's clock decides.  Each side's figure is the median over its
 * rounds of the round's wall time per call less the harness's cost per
 * call, which the reference's worker measured (its rounds' time its own
 * samples do not account for; or empty calls'; or the shared baseline's):
 * the same amount taken off both sides.  Then the candidate's samples are
 * checked against it (kj__judge_figures, kj__cross_check): samples that
 * claim less set *tripped the first time (the caller times the case
 * again), and are TimingMismatch the second (final).  *ov and *res_ms:
 * what the speedup is figured with.
 */
static int bench_clock(struct bcase *B, int final, const struct kj__dvec **ov, double *res_ms,
		       int *tripped)
{
	struct kj_case *c = B->c;
	struct kj__timed *tr = &B->tr, *te = &B->te;
	double over = harness_over(B, JUDGE_Q, B->shared_over);
	double spread = harness_over(B, -1, 0);
	int gpu = !strcmp(B->tc.timer, "cuda_event");

	*tripped = 0;
	if (isnan(over) || isnan(spread))
		return kj_error_set(B->err, KJ_ENOMEM, "out of memory");
	*ov = B->timing_ref ? &tr->over : B->timing_empty ? &te->over : NULL;
	*res_ms = kj__judge_resolution(over, gpu, B->queued);
	if (kj__judge_figures(&B->tc, *ov, over, *res_ms, &c->cand) != KJ_OK ||
	    (B->timing_ref && kj__judge_figures(tr, &tr->over, over, 0, &c->ref) != KJ_OK))
		return kj_error_set(B->err, KJ_ENOMEM, "out of memory");
	c->judge_resolution_ms = *res_ms;
	if (!kj__cross_check(&c->cand, &c->ref, B->timing_ref, spread, *res_ms, gpu,
			     &c->check_ratio_ref, &c->check_ratio_cand, &c->check_ratio_min))
		return KJ_OK;
	if (!final) {
		*tripped = 1;
		return KJ_OK;
	}
	return kj_case_fail(c, KJ_ET_TIMING_MISMATCH, "the candidate's samples say %.4g ms a call, "
			    "its rounds on the judge's clock %.4g ms a call less the harness's %.4g "
			    "ms: a ratio of %.3g, where the reference's is %.3g and the least "
			    "allowed %.3g", c->cand.round_sample_ms, c->cand.judge_ms + over, over,
			    c->check_ratio_cand, c->check_ratio_ref, c->check_ratio_min) == KJ_OK
		       ? KJ_OK : kj_error_set(B->err, KJ_ENOMEM, "out of memory");
}

/* Case k's speed of light from the benchmark's options into c: a copy of
 * its entry, or one that says why there is none.  KJ_OK or KJ_ENOMEM. */
static int sol_set(const struct kj_bench_opts *b, int k, struct kj_case *c)
{
	const json_t *e = json_array_get(json_object_get(b->sol, "cases"), (size_t)k);
	const json_t *v = json_object_get(e, "sol_ms");

	json_decref(c->sol);
	c->sol_ms = 0;
	if (json_is_object(e)) {
		c->sol = json_deep_copy(e);
		if (json_is_number(v) && json_number_value(v) > 0)
			c->sol_ms = json_number_value(v);
	} else {
		c->sol = json_pack("{s:n, s:s}", "sol_ms", "why",
				   b->sol ? "the speed-of-light step gave no figure for this case"
				   : b->sol_why ? b->sol_why : "not measured");
	}
	return c->sol ? KJ_OK : KJ_ENOMEM;
}

/*
 * The speed of light decides (docs/cli.md, "The speed of light").  A
 * reference (trusted code) whose median call beats it by the margin shows
 * the peak rates understate this device: the case then has no figure,
 * and says why.  Else a candidate whose median call does is
 * TimingImpossible, with both numbers.  ref_med: the reference's median
 * (0: none the judge measured); *ok is 0 when c now holds the failure.
 */
static int sol_decide(struct kj_case *c, double med_c, double ref_med, int *ok)
{
	char why[300];
	const json_t *s = c->sol;

	*ok = 1;
	if (ref_med > 0 && kj__sol_impossible(ref_med, c->sol_ms)) {
		snprintf(why, sizeof(why), "the reference's median call took %.4g ms, below the "
			 "speed of light of %.4g ms by more than its margin: the peak rates "
			 "understate this device", ref_med, c->sol_ms);
		c->sol_ms = 0;
		if (json_object_set_new(c->sol, "sol_ms", json_null()) < 0 ||
		    json_object_set_new(c->sol, "why", json_string(why)) < 0)
			return KJ_ENOMEM;
		return KJ_OK;
	}
	if (!kj__sol_impossible(med_c, c->sol_ms))
		return KJ_OK;
	*ok = 0;
	return kj_case_fail(c, KJ_ET_TIMING_IMPOSSIBLE, "the candidate's median call took %.4g "
			    "ms, less than %.0f %% of its speed of light of %.4g ms (%.0f FLOPs at "
			    "%.4g FLOP/s, %.0f bytes at %.4g B/s, %s)", med_c,
			    100 * (1 - KJ__SOL_MARGIN), c->sol_ms,
			    json_number_value(json_object_get(s, "flops")),
			    json_number_value(json_object_get(s, "peak_flops_per_s")),
			    json_number_value(json_object_get(s, "bytes")),
			    json_number_value(json_object_get(s, "copy_bytes_per_s")),
			    json_string_value(json_object_get(s, "device_name")) ?
			    json_string_value(json_object_get(s, "device_name")) : "?");
}

static int bench_case(struct kj_task *t, struct kj_attempt *a, const struct kj_judge_opts *o,
		      const struct kj_bench_opts *b, struct kj_result *res, int k, int devout,
		      struct kj_case *c, int *redo, struct kj_error *err)
{
	struct bcase B;
	int rc = KJ_OK, ok = 0, j, retimed = 0, probed = 0, n_seeds;
	double t_start, cand_floor = 0, res_ms = 0;
	const struct kj__dvec *ov = NULL;

	memset(&B, 0, sizeof(B));
	B.t = t;
	B.a = a;
	B.o = o;
	B.b = b;
	B.res = res;
	B.c = c;
	B.err = err;
	B.k = k;
	B.devout = devout;
	B.n_sets = b->timed_sets > 0 ? b->timed_sets : 1;
	B.n_probe = PROBE_SETS;
	B.n_gold = B.n_sets + PROBE_BATCHES * PROBE_SETS;
	B.gold = calloc((size_t)B.n_gold, sizeof(*B.gold));
	B.seeds = calloc((size_t)B.n_sets, sizeof(uint64_t));
	B.round_calls = 5;
	B.rel_c = B.rel_r = INFINITY;
	B.shared_ref = b->ref_ms && k < b->n_ref_ms && b->ref_ms[k] > 0 ? b->ref_ms[k] : 0;
	B.timing_ref = !b->skip_framework && !(B.shared_ref > 0);
	/* The harness's cost per call: from the reference's rounds, else as
	 * measured with the shared baseline, else from rounds of empty calls
	 * on the reference's worker. */
	B.shared_over = !B.timing_ref && B.shared_ref > 0 && b->ref_over_ms &&
			b->ref_over_ms[k] > 0 ? b->ref_over_ms[k] : 0;
	B.timing_empty = !B.timing_ref && !(B.shared_over > 0);
	B.tr.known = calloc((size_t)B.n_gold, sizeof(int));
	B.tc.known = calloc((size_t)B.n_gold, sizeof(int));
	B.tr.n_known = B.tc.n_known = B.n_gold;
	/* The empty calls' outputs are the reference's own: one numbering
	 * of distinct outputs on its worker. */
	B.te.known = B.tr.known;
	B.te.n_known = B.tr.n_known;
	B.te.known_borrowed = 1;
	B.te.empty = 1;
	c->input_set = 1;
	if (!B.gold || !B.seeds || !B.tr.known || !B.tc.known) {
		rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
		goto out;
	}
	for (j = 0; j < B.n_gold; j++)
		kj__golden_init(&B.gold[j]);
	n_seeds = B.n_sets;
	for (j = 0; j < n_seeds; j++)
		B.seeds[j] = o->seed_fixed ? o->seed + (uint64_t)j
					   : kj_seed_derive(a->run_key, kj_task_identity(t), k,
							    KJ__SEED_TIMED + j);
	for (j = 0; j < PROBE_BATCHES * PROBE_SETS; j++)
		B.probe_seeds[j] = o->seed_fixed
					   ? o->seed + KJ__SEED_FIXED_PROBE + (uint64_t)j
					   : kj_seed_derive(a->run_key, kj_task_identity(t), k,
							    KJ__SEED_PROBE + j);
	c->seed = B.seeds[0];
	if (sol_set(b, k, c) != KJ_OK) {
		rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
		goto out;
	}
	rc = bench_goldens(&B, &ok);
	if (rc != KJ_OK || !ok)
		goto out;
	t_start = kj__judge_now();
	rc = bench_warmup(&B, &ok);
	if (rc != KJ_OK || !ok)
		goto out;
timing:
	for (;;) {
		int tripped = 0;

		rc = bench_rounds(&B, t_start, &ok);
		if (rc != KJ_OK || !ok)
			goto out;
		/* Seen once: a case timed again keeps this verdict (the sets
		 * are no longer unseen). */
		if (B.n_probe > 0 && !probed) {
			rc = bench_unseen(&B, &ok);
			if (rc != KJ_OK || !ok)
				goto out;
		}
		probed = 1;
		if (kj__latency(B.tc.ms.v, B.tc.esc.v, B.tc.ms.n, B.tc.peak_mb, B.tc.timer,
				&c->cand) != KJ_OK ||
		    (B.timing_ref && kj__latency(B.tr.ms.v, B.tr.esc.v, B.tr.ms.n, B.tr.peak_mb,
						 B.tr.timer, &c->ref) != KJ_OK)) {
			rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
			goto out;
		}
		rc = bench_clock(&B, retimed, &ov, &res_ms, &tripped);
		if (rc != KJ_OK || c->type != KJ_ET_NOT_JUDGED)
			goto out;
		if (!tripped)
			break;
		/* Once more, from fresh rounds: what upset one set of rounds
		 * (another process on the machine, a worker moved between
		 * cores) seldom comes back; a forgery does. */
		retimed = retime(&B);
	}
	/* The physical floor (kj__timing_floor): the reference's samples
	 * where it was timed, else the baseline given from earlier in the
	 * batch. */
	{
		double floor_ms = kj__timing_floor(res->launch_ms, B.tr.ms.v,
						   B.timing_ref ? B.tr.ms.n : 0,
						   B.timing_ref ? 0 : B.shared_ref, B.out_bytes,
						   res->copy_gbs);

		/* The samples' median.  (The judge's figure is a difference
		 * of two times, the round's and the harness's: on a busy
		 * machine it can fall below the floor for an honest call; the
		 * speedup's bound keeps it from counting for more.) */
		if (B.med_c < floor_ms) {
			rc = kj_case_fail(c, KJ_ET_TIMING_IMPOSSIBLE, "the candidate's median call took "
					  "%.4g ms, less than the device needs for it (%.4g ms: %.0f "
					  "bytes of outputs at %.4g GB/s, a kernel launch %.4g ms)",
					  B.med_c, floor_ms, B.out_bytes, res->copy_gbs,
					  res->launch_ms) == KJ_OK
				     ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
			goto out;
		}
		cand_floor = floor_ms;
	}
	if (!B.timing_ref) {
		memset(&c->ref, 0, sizeof(c->ref));
		c->ref.mean_ms = c->ref.median_ms = c->ref.judge_ms =
			B.shared_ref > 0 ? B.shared_ref : b->framework_latency_ms;
		if (B.shared_ref > 0 && b->ref_median_ms && b->ref_median_ms[k] > 0)
			c->ref.median_ms = b->ref_median_ms[k];
		c->ref.overhead_ms = c->cand.overhead_ms;
		c->ref_given = 1;
		c->ref_cached = B.shared_ref > 0;
	}
	/* The reference's median where the judge measured it, here or
	 * earlier in the batch (a --framework_latency_ms is the user's). */
	rc = sol_decide(c, B.med_c, B.timing_ref || B.shared_ref > 0 ? c->ref.median_ms : 0, &ok);
	if (rc != KJ_OK) {
		if (rc == KJ_ENOMEM)
			rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
		goto out;
	}
	if (!ok)
		goto out;
	c->timed = 1;
	rc = kj__judge_speedup(&B.tr, &B.tc, B.timing_ref, ov, c->cand.overhead_ms, res_ms,
			       c->ref.judge_ms, c->ref.median_ms, cand_floor, c);
	if (rc != KJ_OK) {
		rc = kj_error_set(err, rc, "out of memory");
		goto out;
	}
	/* A speedup the judge's clock cut far below what the samples say is
	 * measured once more from fresh rounds before it stands, as a
	 * cross-check that trips is: what slowed one side's rounds (the
	 * machine, for an honest A/A of a 20 us kernel, cut to 0.14 and 0.62
	 * on the H100) seldom comes back; a forgery is cut again. */
	if (!retimed && kj__recheck_cut(c)) {
		retimed = retime(&B);
		c->timed = 0;
		goto timing;
	}
	c->compared = (int)B.gold[0].outputs->n;
	c->expected = (int)B.gold[0].outputs->n;
	if (kj_case_pass(c, c->compared, c->expected) != KJ_OK)
		res->infra_errors++;
out:
	*redo = rc == KJ_OK && (B.tc.redo || B.tr.redo);
	if (B.kept && rc == KJ_OK)
		rc = kj__dev_drop(t, a, err);
	for (j = 0; B.gold && j < B.n_gold; j++)
		kj__golden_release(&B.gold[j], kj__ref_dir(t, a));
	free(B.gold);
	free(B.seeds);
	timed_release(&B.tr);
	timed_release(&B.tc);
	timed_release(&B.te);
	kj__clear_dir(t->cand.out_dir, ".npy");
	kj__clear_dir(t->ref.out_dir, ".npy");
	return rc;
}

/*
 * Samples that contradicted the judge's clock in one case (TimingMismatch,
 * twice) are not taken in any: every case that passed fails with it too.
 * A case passes the cross-check only where the samples agree with the
 * clock, so a forger's passing cases are those where the machine's noise
 * made the clock agree with its forgery, and a speedup over them alone
 * is the forgery's (t0220's sample_forger at 1.3-1.7 against its honest
 * twin's 1.0 on the CPU, its other cases failed).  Per case, in turn:
 * their records are written after this (kj_benchmark).
 */
static int void_forged(struct kj_result *res, struct kj_error *err)
{
	int k, caught = -1;

	for (k = 0; k < res->n_cases && caught < 0; k++)
		if (res->cases[k].type == KJ_ET_TIMING_MISMATCH)
			caught = k;
	for (k = 0; caught >= 0 && k < res->n_cases; k++) {
		struct kj_case *c = &res->cases[k];

		if (kj_case_status(c) != KJ_STATUS_PASS)
			continue;
		c->timed = 0;
		c->speedup = NAN;
		if (kj_case_fail(c, KJ_ET_TIMING_MISMATCH, "the candidate's samples contradicted "
				 "the judge's clock in case %d: they are not taken in any case",
				 caught + 1) != KJ_OK)
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	return KJ_OK;
}

int kj_benchmark(struct kj_task *t, struct kj_attempt *a, const struct kj_judge_opts *o,
		 const struct kj_bench_opts *b, const struct kj_hooks *hooks,
		 struct kj_result *res, struct kj_error *err)
{
	int rc, k;

	rc = kj__start_result(t, a, o, res, err);
	if (rc != KJ_OK)
		return kj__finish_result(a, res, rc, err);
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
		if (rc != KJ_OK)
			return kj__finish_result(a, res, rc, err);
	}
	rc = void_forged(res, err);
	/* Each case's record once the run's verdict is known. */
	for (k = 0; rc == KJ_OK && k < res->n_cases; k++)
		rc = kj__case_hook(hooks, t, res, &res->cases[k], err);
	return kj__finish_result(a, res, rc, err);
}
