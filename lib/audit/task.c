/*
 * task.c - one task's audit from end to end: the private directory, the
 * measurement step, the canaries judged, their verdicts folded with the
 * figures that explain them, and the task's JSON entry (kjudge/audit.h).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kjudge/audit.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/locate.h"
#include "runner/runner_internal.h"
#include "sandbox/program.h"
#include "audit_internal.h"
#include "base/banned.h"

/* What each canary's answer is, for the reasons' sentences. */
static const char *const answer_of[KJ_AUDIT_N_] = {
	[KJ_AUDIT_ZEROS] = "0",
	[KJ_AUDIT_ONES] = "1",
	[KJ_AUDIT_EMPTY] = "an uninitialised tensor",
	[KJ_AUDIT_CONSTANT] = "the golden's mean",
	[KJ_AUDIT_INPUT] = "an input",
	[KJ_AUDIT_LOWP_F16] = "the reference computed in float16",
	[KJ_AUDIT_LOWP_BF16] = "the reference computed in bfloat16",
	[KJ_AUDIT_NOISE] = "the golden plus noise at twice the threshold",
	[KJ_AUDIT_STALE] = "another input set's golden",
	[KJ_AUDIT_PARTIAL] = "the golden with its second half zeroed",
};

/* The measurement's environment: the judge's, with every temporary and
 * cache directory torch may make (its inductor cache under TMPDIR) in the
 * private directory, which goes with the audit.  NULL when out of memory;
 * the caller frees the array and its strings. */
static char **measure_env(const struct kj_config *cfg, const char *dir)
{
	static const char *const ours[] = { "TMPDIR=", "TORCHINDUCTOR_CACHE_DIR=",
					    "TRITON_CACHE_DIR=", NULL };
	size_t n = 0, k = 0, i;
	char **env;

	while (cfg->environ && cfg->environ[n])
		n++;
	env = calloc(n + 4, sizeof(*env));
	if (!env)
		return NULL;
	for (i = 0; i < n; i++) {
		size_t j;
		int skip = 0;

		for (j = 0; ours[j]; j++)
			skip |= !strncmp(cfg->environ[i], ours[j], strlen(ours[j]));
		if (!skip && !(env[k++] = strdup(cfg->environ[i])))
			goto oom;
	}
	for (i = 0; ours[i]; i++) {
		size_t len = strlen(ours[i]) + strlen(dir) + 1;

		if (!(env[k] = malloc(len)))
			goto oom;
		snprintf(env[k++], len, "%s%s", ours[i], dir);
	}
	return env;
oom:
	for (i = 0; i < k; i++)
		free(env[i]);
	free(env);
	return NULL;
}

static void env_free(char **env)
{
	size_t i;

	for (i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

int kj__audit_measure(const struct kj_config *cfg, const struct kj_audit_opts *o,
		      const char *dir, const json_t *params, const json_t *peaks, int sol_only,
		      json_t **out, struct kj_error *err)
{
	char python[PATH_MAX], helper[PATH_MAX + 32], task[PATH_MAX + 32], why[300];
	struct kj__run_req q;
	struct kj__run_res r;
	json_t *req;
	char *req_text;
	char *argv[5], **env;
	char measure_word[] = "measure";
	double timeout = o->timeout_s > 0 ? o->timeout_s : 900;
	json_error_t je;
	int rc, oom = 0;

	*out = NULL;
	if (kj__find_in_path(cfg->python, kj_config_env(cfg, "PATH"), python, sizeof(python)) < 0)
		return kj_error_set(err, KJ_ENOENT, "no Python interpreter '%s' (%s; set --python "
				    "or KJ_PYTHON)", cfg->python, cfg->python_source);
	snprintf(helper, sizeof(helper), "%s/kjudge_audit.py", dir);
	snprintf(task, sizeof(task), "%s/task_torch.py", dir);
	req = json_pack("{s:s, s:s, s:s, s:O?, s:o?, s:O?}", "task", task, "dir", dir,
			"device", o->device ? o->device : "", "params", params, "thresholds",
			kj__audit_thresholds(), "peaks", peaks);
	/* The speed of light alone: no canary is computed. */
	if (req && sol_only && json_object_set_new(req, "canaries", json_array()) < 0) {
		json_decref(req);
		req = NULL;
	}
	req_text = req ? kj__json_dumps(req, JSON_COMPACT, &oom) : NULL;
	json_decref(req);
	if (!req_text)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	argv[0] = python;
	argv[1] = helper;
	argv[2] = measure_word;
	argv[3] = req_text;
	argv[4] = NULL;
	memset(&q, 0, sizeof(q));
	q.argv = argv;
	q.envp = env = measure_env(cfg, dir);
	if (!env) {
		free(req_text);
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	q.cwd = dir;
	q.timeout_s = timeout;
	q.flags = KJ__PROGRAM_PIDNS;
	kj__program_init(&r, 8u << 20, KJ__SINK_LIMIT, 16u << 10, KJ__SINK_TAIL);
	rc = kj__program_run(&q, &r, err);
	free(req_text);
	env_free(env);
	if (rc != KJ_OK) {
		kj__program_release(&r);
		return rc;
	}
	if (kj__program_outcome("the audit's measurement", timeout, &r, why, sizeof(why)) < 0) {
		/* The last line of its error stream: the task's exception. */
		const char *e = r.err.buf ? r.err.buf : "";
		size_t len = strlen(e);
		const char *last;

		while (len && (e[len - 1] == '\n' || e[len - 1] == ' '))
			len--;
		for (last = e + len; last > e && last[-1] != '\n'; last--)
			;
		rc = kj_error_set(err, KJ_EINVAL, "%s: %.*s", why, (int)(e + len - last) > 300 ?
				  300 : (int)(e + len - last), last);
		kj__program_release(&r);
		return rc;
	}
	*out = kj__json_loadb(r.out.buf ? r.out.buf : "", r.out.len, 0, &je, &oom);
	kj__program_release(&r);
	if (!*out || !json_is_array(json_object_get(*out, "cases"))) {
		json_decref(*out);
		*out = NULL;
		return oom ? kj_error_set(err, KJ_ENOMEM, "out of memory")
			   : kj_error_set(err, KJ_EPROTOCOL, "the audit's measurement said no cases");
	}
	return KJ_OK;
}

/* The measurement of canary c in case i (NULL: none). */
static json_t *measured(const struct kj_audit_result *r, int i, enum kj_audit_canary c)
{
	json_t *cs = json_object_get(json_array_get(json_object_get(r->measure, "cases"),
						    (size_t)i), "canaries");

	return json_object_get(cs, kj_audit_canary_name(c));
}

static int applies(const struct kj_audit_result *r, int i, enum kj_audit_canary c)
{
	return json_is_true(json_object_get(measured(r, i, c), "applies"));
}

static double num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : (double)NAN;
}

static void reason(struct kj_audit_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void reason(struct kj_audit_result *r, const char *fmt, ...)
{
	char buf[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* A reason that cannot be kept leaves the verdict as it is. */
	json_array_append_new(r->reasons, json_string(buf));
}

/* What a canary judged a second time, alone, says of it. */
static const char *again_note(const struct kj__audit_verdict *v)
{
	return v->again ? " (judged again alone: the device's memory ran out while other "
			  "canaries held it)" : "";
}

/* Fold canary c's verdict over the cases into r. */
static void fold(struct kj_audit_result *r, enum kj_audit_canary c, int judged,
		 const struct kj__audit_verdict *v, int n_cases)
{
	const char *name = kj_audit_canary_name(c);
	int i, rejected = 1;

	if (!judged) {
		r->canary[c] = KJ_AUDIT_NA;
		return;
	}
	if (!v->done || v->reply_rc != KJ_OK || v->n_cases != n_cases) {
		r->canary[c] = KJ_AUDIT_ERROR;
		r->errors++;
		if (v->done && v->reply_rc == KJ_OK)
			reason(r, "%s could not be judged: the pipeline judged %d cases, the "
			       "measurement %d", name, v->n_cases, n_cases);
		else
			reason(r, "%s could not be judged%s: %s", name, again_note(v), v->msg);
		return;
	}
	for (i = 0; i < n_cases; i++) {
		const json_t *m = measured(r, i, c);

		if (!applies(r, i, c))
			continue;
		if (v->cases[i] == 'p') {
			r->canary[c] = KJ_AUDIT_PASS;
			r->weak = 1;
			reason(r, "%s passes case %d: %.1f %% of the golden's %.0f elements are "
			       "within the threshold of %s (MERE at %.3g of its limit, MARE at "
			       "%.3g of its limit)", name, i + 1, 100 * num(m, "within"),
			       num(m, "elements"), answer_of[c], num(m, "mere_ratio"),
			       num(m, "mare_ratio"));
			return;
		}
		if (v->cases[i] != 'f')
			rejected = 0;
	}
	if (rejected) {
		r->canary[c] = KJ_AUDIT_FAIL;
		return;
	}
	r->canary[c] = KJ_AUDIT_ERROR;
	r->errors++;
	reason(r, "%s could not be judged%s: it ended other than by its outputs' rejection (%s)",
	       name, again_note(v), v->msg);
}

/* lowp's headroom: the larger of MERE's and MARE's share of their limits,
 * the largest over the cases. */
static void headroom(struct kj_audit_result *r, int n_cases)
{
	static const enum kj_audit_canary lp[2] = { KJ_AUDIT_LOWP_F16, KJ_AUDIT_LOWP_BF16 };
	int k, i;

	for (k = 0; k < 2; k++)
		for (i = 0; i < n_cases; i++) {
			const json_t *m = measured(r, i, lp[k]);
			double a = num(m, "mere_ratio"), b = num(m, "mare_ratio");
			double x = a > b ? a : b;

			if (!applies(r, i, lp[k]) || !isfinite(x))
				continue;
			if (isnan(r->lowp_ratio[k]) || x > r->lowp_ratio[k])
				r->lowp_ratio[k] = x;
		}
}

int kj_audit_task(const struct kj_config *cfg, const struct kj_audit_opts *o, const char *name,
		  const char *task_file, const char *cases_file, struct kj_audit_result *r,
		  struct kj_error *err)
{
	struct kj__audit_verdict v[KJ_AUDIT_N_];
	int run[KJ_AUDIT_N_], skipped[KJ_AUDIT_N_];
	char dir[PATH_MAX], key[65];
	int rc, c, i, n_cases;

	snprintf(r->task, sizeof(r->task), "%s", name);
	r->reasons = json_array();
	if (!r->reasons)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	if ((rc = kj_audit_key(cfg, o, task_file, cases_file, key, err)) != KJ_OK)
		return rc;
	if (kj__audit_cache_get(cfg, key, r))
		return KJ_OK;
	rc = kj__audit_stage(cfg, o, task_file, cases_file, 0, dir, &r->measure, err);
	if (rc != KJ_OK && !*dir)
		return rc;
	if (rc != KJ_OK)
		goto out;
	n_cases = (int)json_array_size(json_object_get(r->measure, "cases"));
	snprintf(r->device, sizeof(r->device), "%s",
		 json_string_value(json_object_get(r->measure, "device")) ?
		 json_string_value(json_object_get(r->measure, "device")) : "?");
	for (c = 0; c < KJ_AUDIT_N_; c++) {
		run[c] = 0;
		for (i = 0; i < n_cases; i++)
			run[c] |= applies(r, i, (enum kj_audit_canary)c);
		skipped[c] = run[c] && o->only && !(o->only & (1u << c));
		run[c] &= !skipped[c];
	}
	memset(v, 0, sizeof(v));
	rc = kj__audit_judge_all(cfg, o, dir, run, n_cases, v, err);
	if (rc == KJ_EINTR)
		goto out;
	for (c = 0; c < KJ_AUDIT_N_; c++) {
		fold(r, (enum kj_audit_canary)c, run[c], &v[c], n_cases);
		if (skipped[c])
			r->canary[c] = KJ_AUDIT_SKIPPED;
		if (v[c].device[0])
			snprintf(r->device, sizeof(r->device), "%s", v[c].device);
	}
	headroom(r, n_cases);
	if (rc == KJ_OK)
		kj__audit_cache_put(cfg, key, r);
out:
	kj__rm_rf(dir);
	return rc;
}

/* lowp as one canary: a pass of either precision is a pass. */
static enum kj_audit_outcome lowp_of(const struct kj_audit_result *r)
{
	enum kj_audit_outcome a = r->canary[KJ_AUDIT_LOWP_F16], b = r->canary[KJ_AUDIT_LOWP_BF16];

	if (a == KJ_AUDIT_PASS || b == KJ_AUDIT_PASS)
		return KJ_AUDIT_PASS;
	if (a == KJ_AUDIT_ERROR || b == KJ_AUDIT_ERROR)
		return KJ_AUDIT_ERROR;
	if (a == KJ_AUDIT_SKIPPED || b == KJ_AUDIT_SKIPPED)
		return KJ_AUDIT_SKIPPED;
	return a == KJ_AUDIT_FAIL || b == KJ_AUDIT_FAIL ? KJ_AUDIT_FAIL : KJ_AUDIT_NA;
}

json_t *kj_audit_json(const struct kj_audit_result *r)
{
	json_t *o = json_object(), *cs = json_object(), *hr = json_object(), *cases = json_array();
	static const char *const lp[2] = { "float16", "bfloat16" };
	json_t *m = json_object_get(r->measure, "cases");
	json_t *peaks = json_object_get(r->measure, "peaks");
	size_t i;
	int c, bad = !o || !cs || !hr || !cases;

	for (c = 0; !bad && c < KJ_AUDIT_N_; c++) {
		if (c == KJ_AUDIT_LOWP_F16)
			bad |= json_object_set_new(cs, "lowp",
						   json_string(kj_audit_outcome_name(lowp_of(r)))) < 0;
		bad |= json_object_set_new(cs, kj_audit_canary_name((enum kj_audit_canary)c),
					   json_string(kj_audit_outcome_name(r->canary[c]))) < 0;
	}
	for (c = 0; !bad && c < 2; c++)
		bad |= json_object_set_new(hr, lp[c], isnan(r->lowp_ratio[c]) ? json_null()
					   : json_real(r->lowp_ratio[c])) < 0;
	for (i = 0; !bad && i < json_array_size(m); i++) {
		json_t *e = json_array_get(m, i);

		bad |= json_array_append_new(cases, json_pack("{s:O?, s:O?, s:O?, s:O?}",
					     "outputs", json_object_get(e, "outputs"), "flops",
					     json_object_get(e, "flops"), "bytes",
					     json_object_get(e, "bytes"), "sol_ms",
					     json_object_get(e, "sol_ms"))) < 0;
	}
	if (bad) {
		json_decref(cs);
		json_decref(hr);
		json_decref(cases);
		json_decref(o);
		return NULL;
	}
	if (json_object_set_new(o, "task", json_string(r->task)) < 0 ||
	    json_object_set_new(o, "weak", json_boolean(r->weak)) < 0 ||
	    json_object_set_new(o, "device", json_string(r->device)) < 0 ||
	    json_object_set_new(o, "canaries", cs) < 0 ||
	    json_object_set_new(o, "reasons", r->reasons ? json_incref(r->reasons)
				: json_array()) < 0 ||
	    json_object_set_new(o, "lowp_limit_used", hr) < 0 ||
	    json_object_set_new(o, "peaks", peaks ? json_incref(peaks) : json_null()) < 0 ||
	    json_object_set_new(o, "cases", cases) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}
