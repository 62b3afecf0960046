/*
 * pipeline.c - the verify and benchmark loops over a task's two sides (see
 * kjudge/pipeline.h for the theory of operation): the options, the result
 * and the task, and what both loops do with a side (start it, send it a
 * call, read its reply, charge its failure) and with a run's result.
 *
 * Every case is judged into a struct kj_case that starts as "NotJudged";
 * the only way to a pass is kj_case_pass() after every output of the
 * reference was compared and found equal.  The judge's own failures stop
 * the loop with a code; the candidate's and the task's are typed failures.
 * The loops' parts are in golden.c, devcmp.c, verify.c, bench.c and
 * bench_checks.c (pipeline_internal.h).
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pipeline_internal.h"

void kj_judge_opts_init(struct kj_judge_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->timeout_s = 900;
	o->input_sets = 2;
	o->cmp.int_rule = KJ_CMP_INT_EXACT;
	o->cmp.float64_rule = KJ_CMP_FLOAT64_SPEC;
}

const char *const kj_rounds_names[] = { "auto", "queued", "synced", NULL };

int kj_rounds_from_name(const char *name)
{
	int i;

	for (i = 0; name && kj_rounds_names[i]; i++)
		if (!strcmp(name, kj_rounds_names[i]))
			return i;
	return -1;
}

const char *kj_rounds_name(int rounds)
{
	return rounds >= KJ_ROUNDS_AUTO && rounds <= KJ_ROUNDS_SYNCED ? kj_rounds_names[rounds]
								       : "auto";
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
	uint64_t init = o->seed_fixed ? o->seed : kj_seed_derive(a->run_key, kj_task_identity(t),
								  KJ__SEED_MODEL_CASE, 0);

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

/*
 * Make s usable for the next call: started, with its module loaded.
 * *usable is 1 when it is; else c holds why not (the candidate's load
 * failure, the task's, or the machine's).  A code only for the judge's
 * own failures.
 */
int kj__ensure_side(struct kj_side *s, struct kj_case *c, struct kj_result *res,
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
	/* A load that ran out of the device's memory says so, as a call's
	 * failure does (kj__side_failed): where others share the device, the
	 * judge's to handle. */
	if (s->load_failure.device_memory)
		res->device_memory = 1;
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
int kj__side_failed(const struct kj_side *s, const struct kj_reply *rep, struct kj_case *c,
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

int kj__send_call(struct kj_side *s, const struct kj_call *call, struct kj_error *err)
{
	return s->ops->send(s, call, err);
}

int kj__recv_call(struct kj_attempt *a, struct kj_side *s, struct kj_reply *rep,
		  struct kj_error *err)
{
	int rc = s->ops->recv(s, rep, err);

	if (rc == KJ_OK)
		kj_attempt_tally_phases(a, kj_side_name(s->role), rep->phases);
	return rc;
}

int kj__keep_desc(struct kj_case *c, const json_t *desc)
{
	if (!c->input_desc && desc)
		c->input_desc = kj__jref(desc);
	return KJ_OK;
}

int kj__start_result(struct kj_task *t, struct kj_attempt *a, const struct kj_judge_opts *o,
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
int kj__finish_result(struct kj_attempt *a, struct kj_result *res, int rc,
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

int kj__case_hook(const struct kj_hooks *h, struct kj_task *t, struct kj_result *res,
		  struct kj_case *c, struct kj_error *err)
{
	if (!h || !h->on_case)
		return KJ_OK;
	if (h->on_case(h->ctx, t, res, c, err) != 0)
		return err->code ? err->code : kj_error_set(err, KJ_EIO, "the case could not be "
							    "recorded");
	return KJ_OK;
}
