/*
 * audit.c - eval's audit of its tasks (eval.h, kj_eval_study_audit;
 * docs/AUDIT.md): before a batch judges a task's candidates, the task's
 * canaries (lib/audit/) are judged once and the outcome recorded in the
 * store, so that the report can say which tasks are weak and compute its
 * figures without them.
 *
 * Once per task and judge: an audit the store already holds proven (weak
 * or strong) under the same audit key (the task's content, the judge's
 * version, the device and the options) is taken as it is; else the audit
 * runs, and reads the audit's own cache (KJ_CACHE_DIR/audit/) first.  An
 * audit that cannot be established (the task's measurement failed, a
 * canary could not be judged) is recorded as not proven, with why: never
 * weak or strong by guess, and never a verdict of a candidate.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/audit.h"
#include "kjudge/eval.h"
#include "kjudge/store.h"
#include "base/json.h"
#include "base/banned.h"

/* The audit of task t recorded in the store: its verdict, its reasons and
 * each canary's end (r NULL: not established, why the one reason). */
static int record(struct kj_eval_study *st, const struct kj_eval_task *t, const char *key,
		  const char *verdict, const struct kj_audit_result *r, const char *why,
		  struct kj_error *err)
{
	const char *canary[KJ_AUDIT_N_], *outcome[KJ_AUDIT_N_];
	struct kj_store_audit a;
	json_t *reasons = r && r->reasons ? json_incref(r->reasons) : json_pack("[s]", why);
	char *text;
	int oom = 0, c, rc;

	text = reasons ? kj__json_dumps(reasons, JSON_COMPACT, &oom) : NULL;
	json_decref(reasons);
	if (!text)
		return kj_error_set(err, KJ_ENOMEM, "the audit of '%s': out of memory", t->name);
	memset(&a, 0, sizeof(a));
	a.task_key = t->key;
	a.audit_key = key;
	a.run_id = st->run_id;
	a.verdict = verdict;
	a.device = r ? r->device : NULL;
	a.reasons = text;
	for (c = 0; r && c < KJ_AUDIT_N_; c++) {
		canary[c] = kj_audit_canary_name((enum kj_audit_canary)c);
		outcome[c] = kj_audit_outcome_name(r->canary[c]);
	}
	a.n_canaries = r ? KJ_AUDIT_N_ : 0;
	a.canary = canary;
	a.outcome = outcome;
	rc = kj_store_audit_put(st->store, &a, err);
	free(text);
	return rc;
}

/* The canaries the audit judged now (0 when it was read from its cache). */
static int judged_now(const struct kj_audit_result *r)
{
	int c, n = 0;

	for (c = 0; !r->cached && c < KJ_AUDIT_N_; c++)
		n += r->canary[c] == KJ_AUDIT_FAIL || r->canary[c] == KJ_AUDIT_PASS ||
		     r->canary[c] == KJ_AUDIT_ERROR;
	return n;
}

/* One task's audit: taken from the store, or run and recorded. */
static int audit_task(struct kj_eval_study *st, const struct kj_config *cfg,
		      const struct kj_audit_opts *o, const struct kj_eval_task *t,
		      const struct kj_eval_audit_hooks *h, void *ctx,
		      struct kj_eval_audit_counts *n, struct kj_error *err)
{
	struct kj_eval_audit_said said;
	struct kj_audit_result r;
	struct kj_error e;
	char key[65] = "", verdict[16];
	int rc, found;

	memset(&said, 0, sizeof(said));
	memset(&e, 0, sizeof(e));
	said.task = t->name;
	kj_audit_result_init(&r);
	rc = kj_audit_key(cfg, o, t->path, t->cases_path, key, &e);
	found = rc == KJ_OK ? kj_store_audit_get(st->store, t->key, key, verdict, err) : 0;
	if (found < 0)
		return err->code;
	if (found && strcmp(verdict, "not_proven") != 0) {
		said.verdict = verdict;
		said.stored = 1;
		n->stored++;
	} else {
		if (rc == KJ_OK)
			rc = kj_audit_task(cfg, o, t->name, t->path, t->cases_path, &r, &e);
		if (rc == KJ_EINTR) {
			kj_audit_result_release(&r);
			return kj_error_set(err, KJ_EINTR, "interrupted");
		}
		said.verdict = rc != KJ_OK ? "not_proven" : r.weak ? "weak"
			     : r.errors ? "not_proven" : "strong";
		said.cached = rc == KJ_OK && r.cached;
		said.reasons = rc == KJ_OK ? r.reasons : NULL;
		said.why = rc != KJ_OK ? e.msg : NULL;
		n->canaries += rc == KJ_OK ? judged_now(&r) : 0;
		rc = record(st, t, key, said.verdict, rc == KJ_OK ? &r : NULL, e.msg, err);
		if (rc != KJ_OK) {
			kj_audit_result_release(&r);
			return rc;
		}
	}
	n->tasks++;
	n->weak += !strcmp(said.verdict, "weak");
	n->not_proven += !strcmp(said.verdict, "not_proven");
	if (h && h->task)
		h->task(ctx, &said);
	kj_audit_result_release(&r);
	return KJ_OK;
}

int kj_eval_study_audit(struct kj_eval_study *st, const struct kj_config *cfg,
			const struct kj_eval_set *set, const struct kj_audit_opts *o,
			const struct kj_eval_audit_hooks *h, void *ctx,
			struct kj_eval_audit_counts *n, struct kj_error *err)
{
	unsigned char *want;
	size_t i;
	int rc = KJ_OK;

	memset(n, 0, sizeof(*n));
	/* The canaries are torch candidates: a suite of specs has none. */
	if (strcmp(set->kind->name, "torch") != 0 || !set->n_tasks)
		return KJ_OK;
	want = calloc(set->n_tasks, 1);
	if (!want)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	/* The tasks this batch judges a candidate of. */
	for (i = 0; i < st->n_todo; i++)
		want[set->cands[st->todo[i]].task] = 1;
	for (i = 0; rc == KJ_OK && i < set->n_tasks; i++)
		if (want[i])
			rc = audit_task(st, cfg, o, &set->tasks[i], h, ctx, n, err);
	free(want);
	return rc;
}
