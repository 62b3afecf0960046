/*
 * anticheat.c - the anti-cheat layers' decisions (kjudge/anticheat.h),
 * shared by eval's attempts and the --strict of verify and benchmark, so
 * that a candidate gets the same words from each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/anticheat.h"
#include "kjudge/pipeline.h"
#include "kjudge/validate.h"

/* The record lists at most this many findings: a file full of them says
 * enough with the first ones, and `kjudge validate` gives them all. */
#define MAX_FINDINGS 20

static int put(json_t *o, const char *key, json_t *v)
{
	return !v || json_object_set_new(o, key, v) != 0;
}

static int push(json_t *a, json_t *v)
{
	return !v || json_array_append_new(a, v) != 0;
}

/* The "static" member from a result (rc KJ_OK) or from why the check
 * could not judge the file.  NULL on OOM. */
static json_t *static_record(const struct kj_static_layer *s, const struct kj_vresult *res,
			     int judged)
{
	json_t *o = json_object(), *failed = json_array(), *launched = json_array(),
	       *kernels = json_array(), *found = json_array();
	int bad = !o || !failed || !launched || !kernels || !found, c;
	size_t i, shown = 0;

	for (c = 0; judged && !bad && c < KJ_VCHECK_COUNT_; c++)
		if (res->failed[c])
			bad = push(failed, json_string(kj_vcheck_name((enum kj_vcheck)c, res->kind)));
	for (i = 0; judged && !bad && i < res->n_called; i++)
		bad = push(launched, json_string(res->called[i]));
	for (i = 0; !bad && i < s->n_kernels; i++)
		bad = push(kernels, json_string(s->kernels[i]));
	for (i = 0; judged && !bad && i < res->n_violations && shown < MAX_FINDINGS; i++) {
		const struct kj_vviolation *v = &res->violations[i];

		if (v->warning)
			continue;
		shown++;
		bad = push(found, json_pack("{s:s, s:i, s:s, s:s}", "check",
					    kj_vcheck_name(v->check, res->kind), "line", v->line,
					    "call", v->call ? v->call : "", "reason",
					    v->reason ? v->reason : ""));
	}
	if (!bad)
		bad = put(o, "status", json_string(s->layer.ok == 1 ? "pass" : "fail")) ||
		      put(o, "message", json_string(s->layer.msg)) ||
		      put(o, "regression_type", judged && res->regression_type != KJ_VTYPE_VALID
			  ? json_integer(res->regression_type) : json_null()) ||
		      put(o, "failed_checks", json_incref(failed)) ||
		      put(o, "launched", json_incref(launched)) ||
		      put(o, "kernels", json_incref(kernels)) ||
		      put(o, "violations", json_incref(found));
	json_decref(failed);
	json_decref(launched);
	json_decref(kernels);
	json_decref(found);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int kj_static_layer(const char *path, struct kj_static_layer *out, struct kj_error *err)
{
	struct kj_vrules *rules = NULL;
	struct kj_validator *v = NULL;
	struct kj_vresult res;
	struct kj_error e;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	kj_vresult_init(&res);
	rc = kj_vrules_new(&rules, NULL, &e);
	if (rc == KJ_OK)
		rc = kj_validator_new(&v, rules, &e);
	if (rc == KJ_OK)
		rc = kj_validate_file(v, path, &res, &e);
	if (rc == KJ_ENOMEM)
		goto oom;
	if (rc != KJ_OK) {
		out->layer.ok = 0;
		snprintf(out->layer.msg, sizeof(out->layer.msg), "the static check could not "
			 "judge it: %s", e.msg);
	} else if (res.regression_type != KJ_VTYPE_VALID) {
		out->layer.ok = 0;
		snprintf(out->layer.msg, sizeof(out->layer.msg), "degraded, type %d%s%s",
			 (int)res.regression_type, res.suggestion && *res.suggestion ? ": " : "",
			 res.suggestion ? res.suggestion : "");
	} else {
		out->layer.ok = 1;
		snprintf(out->layer.msg, sizeof(out->layer.msg), "valid: %zu kernel%s launched "
			 "from forward", res.n_called, res.n_called == 1 ? "" : "s");
	}
	if (rc == KJ_OK && res.n_kernels) {
		out->kernels = calloc(res.n_kernels, sizeof(*out->kernels));
		if (!out->kernels)
			goto oom;
		for (i = 0; i < res.n_kernels; i++) {
			if (!(out->kernels[i] = strdup(res.kernels[i].name)))
				goto oom;
			out->n_kernels++;
		}
	}
	out->record = static_record(out, &res, rc == KJ_OK);
	if (!out->record)
		goto oom;
	kj_vresult_release(&res);
	kj_validator_free(v);
	kj_vrules_free(rules);
	return KJ_OK;
oom:
	kj_static_layer_release(out);
	kj_vresult_release(&res);
	kj_validator_free(v);
	kj_vrules_free(rules);
	return kj_error_set(err, KJ_ENOMEM, "out of memory");
}

void kj_static_layer_release(struct kj_static_layer *s)
{
	size_t i;

	for (i = 0; i < s->n_kernels; i++)
		free(s->kernels[i]);
	free(s->kernels);
	json_decref(s->record);
	memset(s, 0, sizeof(*s));
}

void kj_profile_layer(const json_t *names, char *const *kernels, size_t n_kernels,
		      struct kj_layer *out)
{
	size_t i, k;
	json_t *n;

	if (!names || !json_is_array(names)) {
		out->ok = 0;
		snprintf(out->msg, sizeof(out->msg), "the profiler's record of the kernels that "
			 "ran is missing");
		return;
	}
	json_array_foreach(names, i, n) {
		const char *s = json_string_value(n);

		for (k = 0; s && k < n_kernels; k++)
			if (strstr(s, kernels[k])) {
				out->ok = 1;
				snprintf(out->msg, sizeof(out->msg), "the profiler saw its kernel "
					 "'%.200s' run in forward", kernels[k]);
				return;
			}
	}
	out->ok = 0;
	snprintf(out->msg, sizeof(out->msg), "none of the %zu GPU kernels that ran in forward "
		 "is one of its own %zu", json_array_size(names), n_kernels);
}

void kj_disabled_layer(int ran, const char *err_msg, int n, int passed, enum kj_status worst,
		       enum kj_etype first_type, const char *first_msg, struct kj_layer *out)
{
	if (!ran) {
		out->ok = 0;
		snprintf(out->msg, sizeof(out->msg), "the layer could not run: %.500s",
			 err_msg ? err_msg : "");
	} else if (passed == n) {
		out->ok = 0;
		snprintf(out->msg, sizeof(out->msg), "with its kernels disabled it still passed "
			 "all %d cases: its kernels do not do the work", n);
	} else if (worst != KJ_STATUS_FAIL) {
		out->ok = 0;
		snprintf(out->msg, sizeof(out->msg), "the layer could not decide: with its kernels "
			 "disabled a case ended as %s (%.300s)", kj_status_name(worst),
			 first_msg ? first_msg : "");
	} else {
		out->ok = 1;
		snprintf(out->msg, sizeof(out->msg), "with its kernels disabled it failed %d of %d "
			 "cases (%s)", n - passed, n, kj_etype_name(first_type));
	}
}

void kj_disabled_layer_result(int ran, const char *err_msg, const struct kj_result *r,
			      struct kj_layer *out)
{
	enum kj_status worst = KJ_STATUS_PASS;
	const struct kj_case *first = NULL;
	int passed = 0, i;

	/* The first case that charges: a candidate's failure before the
	 * task's, the task's before the judge's (as eval's phases). */
	for (i = 0; ran && i < r->n_cases; i++) {
		const struct kj_case *c = &r->cases[i];
		enum kj_status s = kj_case_status(c);

		if (s == KJ_STATUS_PASS) {
			passed++;
		} else if (!first || (s == KJ_STATUS_FAIL && worst != KJ_STATUS_FAIL) ||
			   (s == KJ_STATUS_TASK_ERROR && worst == KJ_STATUS_JUDGE_ERROR)) {
			first = c;
			worst = s;
		}
	}
	kj_disabled_layer(ran, err_msg, r->n_cases, passed, worst,
			  first ? first->type : KJ_ET_NONE,
			  first && first->message ? first->message : "", out);
}

json_t *kj_layer_json(const struct kj_layer *l)
{
	return json_pack("{s:s, s:s}", "status", l->ok == 1 ? "pass" : l->ok == 0 ? "fail"
			 : "not_run", "message", l->msg);
}
