/*
 * views.c - the seed's JSON files rendered from typed results:
 * verify_result.json (verify.py's fields) and the perf JSON (benchmark.py's),
 * each with kjudge's own fields under "kjudge" (docs/cli.md).
 *
 * Every record is built through one sticky-failure builder: a member that
 * cannot be added (out of memory) fails the whole record, which the caller
 * turns into a judge error.  Nothing here decides a verdict: the counts are
 * computed from the cases' types.
 *
 * A verify record is signed: HMAC-SHA256 under the judge's secret key over
 * its canonical text (sorted keys, compact, reals to 12 digits: the form the
 * CLI writes them in, so that reading the file back gives the same text).
 * The L1 gate (gate.c) accepts only records this judge signed.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/fileio.h"
#include "kjudge/compare.h"
#include "kjudge/pipeline.h"
#include "kjudge/report.h"
#include "core/core.h"
#include "base/hash.h"
#include "base/json.h"
#include "base/internal.h"

/* A record under construction; `bad` is sticky. */
struct rec {
	json_t *o;
	int bad;
};

/* Set key to v (stolen); NULL v or a failed set marks the record bad. */
static void put(struct rec *r, json_t *obj, const char *key, json_t *v)
{
	if (!v || !obj || json_object_set_new(obj, key, v))
		r->bad = 1;
}

static void append(struct rec *r, json_t *arr, json_t *v)
{
	if (!v || !arr || json_array_append_new(arr, v))
		r->bad = 1;
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *copy_or_null(const json_t *v)
{
	return v ? kj__jref(v) : json_null();
}

/* --- the signature ---------------------------------------------------------------- */

int kj__record_signature(const json_t *rec, const uint64_t key[4], char hex[65])
{
	json_t *copy = json_deep_copy(rec), *kj;
	char *text;
	int rc;

	if (!copy)
		return KJ_ENOMEM;
	kj = json_object_get(copy, "kjudge");
	if (kj)
		json_object_del(kj, "signature");
	text = kj_json_text(copy, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII |
			    JSON_REAL_PRECISION(12), NULL);
	json_decref(copy);
	if (!text)
		return KJ_ENOMEM;
	rc = kj__hmac_sha256_hex(key, 4 * sizeof(uint64_t), text, strlen(text), hex) < 0
		     ? KJ_ENOMEM : KJ_OK;
	free(text);
	return rc;
}

/* --- shared parts ------------------------------------------------------------------ */

static const char *env_str(const struct kj_task *t, const char *k)
{
	return json_string_value(json_object_get(t->env, k));
}

/* kjudge's own fields, common to both records. */
static json_t *kjudge_common(struct rec *r, const struct kj_task *t, const struct kj_attempt *a,
			     const struct kj_result *res)
{
	static const char *const env_keys[] = { "python", "torch", "triton", "device_name",
		"cuda", "driver", "sm_clock_mhz", "max_sm_clock_mhz", "mem_clock_mhz" };
	json_t *kj = json_object(), *rules;
	int passed, failed, te, je;
	char why[400];
	size_t i;

	kj_result_counts(res, &passed, &failed, &te, &je);
	kj_verify_exit(res, why, sizeof(why));
	put(r, kj, "version", json_string(KJ_VERSION));
	put(r, kj, "status", json_string(je || res->infra_errors || res->n_cases <= 0 ? "judge_error"
					 : te ? "task_error"
					 : passed == res->n_cases && res->n_cases ? "pass" : "fail"));
	put(r, kj, "counts", json_pack("{s:i, s:i, s:i, s:i}", "pass", passed, "fail", failed,
				       "task_error", te, "judge_error", je));
	put(r, kj, "device", json_string(t->device));
	for (i = 0; i < sizeof(env_keys) / sizeof(env_keys[0]); i++)
		if (json_object_get(t->env, env_keys[i]))
			put(r, kj, env_keys[i], json_incref(json_object_get(t->env, env_keys[i])));
	if (!json_object_get(kj, "torch"))
		put(r, kj, "torch", json_null());
	if (!json_object_get(kj, "device_name"))
		put(r, kj, "device_name", json_null());
	put(r, kj, "seeds", json_string(res->seed_fixed ? "fixed" : "secret"));
	put(r, kj, "task", t->cases_sha256[0]
		? json_pack("{s:s, s:s, s:s, s:s}", "file", t->task_file, "sha256", t->task_sha256,
			    "cases_file", t->cases_file, "cases_sha256", t->cases_sha256)
		: json_pack("{s:s, s:s}", "file", t->task_file, "sha256", t->task_sha256));
	if (t->cand.kernels_disabled)
		put(r, kj, "kernels_disabled", json_pack("{s:I}", "launches_suppressed",
							 (json_int_t)t->cand.launches_suppressed));
	if (t->cand.kernel_names)
		put(r, kj, "kernel_names", json_incref(t->cand.kernel_names));
	put(r, kj, "candidate", t->have_candidate
		? json_pack("{s:s, s:s}", "file", t->cand_file, "sha256", t->cand_sha256)
		: json_pack("{s:s, s:n}", "file", t->cand_file, "sha256"));
	rules = json_object();
	put(r, rules, "int", json_string(kj_cmp_int_rule_name(res->cmp.int_rule)));
	put(r, rules, "float64", json_string(kj_cmp_float64_rule_name(res->cmp.float64_rule)));
	put(r, kj, "rules", rules);
	put(r, kj, "limits", copy_or_null(res->limits));
	put(r, kj, "timings", copy_or_null(res->timings));
	put(r, kj, "scratch", json_string(res->scratch_kind));
	put(r, kj, "sandbox", json_boolean(res->sandboxed));
	put(r, kj, "infrastructure_errors", json_integer(res->infra_errors));
	if (res->anticheat && json_object_update(kj, res->anticheat) != 0)
		r->bad = 1;
	(void)a;
	(void)env_str;
	return kj;
}

/* The parameters of case k of a task with a cases file into o ("params"). */
static void put_params(struct rec *r, json_t *o, const struct kj_task *t, int k)
{
	const json_t *p = json_array_get(t->case_params, (size_t)k);

	if (t->case_params)
		put(r, o, "params", p ? kj__jref(p) : NULL);
}

/* One case's failure in verify.py's form, with kjudge's fields. */
static json_t *failure_json(struct rec *r, const struct kj_task *t, const struct kj_case *c)
{
	json_t *f = json_object();

	put_params(r, f, t, c->index);

	put(r, f, "case_idx", json_integer(c->index + 1));
	put(r, f, "input_desc", c->input_desc ? json_incref(c->input_desc) : json_array());
	put(r, f, "error_type", json_string(kj_etype_name(c->type)));
	put(r, f, "error_msg", json_string(c->message ? c->message : kj_etype_text(c->type)));
	put(r, f, "status", json_string(kj_status_name(kj_case_status(c))));
	put(r, f, "charged", json_string(kj_charge_name(kj_etype_charge(c->type))));
	put(r, f, "category", json_string(kj_category_name(kj_etype_category(c->type))));
	put(r, f, "exception", str_or_null(c->exception));
	put(r, f, "seed", json_integer((json_int_t)c->seed));
	put(r, f, "input_set", json_integer(c->input_set));
	if (c->output)
		put(r, f, "output", json_integer(c->output));
	if (c->metrics)
		put(r, f, "metrics", json_incref(c->metrics));
	if (c->aliases)
		put(r, f, "aliases", json_incref(c->aliases));
	return f;
}

/* --- verify_result.json ------------------------------------------------------------- */

json_t *kj_verify_json(const struct kj_task *t, const struct kj_attempt *a,
		       const struct kj_result *res, struct kj_error *err)
{
	struct rec r = { json_object(), 0 };
	json_t *failures = json_array(), *cases = json_array(), *kj;
	int passed, i;
	char sig[65];

	kj_result_counts(res, &passed, NULL, NULL, NULL);
	put(&r, r.o, "op_name", json_string(t->name));
	put(&r, r.o, "total_cases", json_integer(res->n_cases));
	put(&r, r.o, "passed_cases", json_integer(passed));
	put(&r, r.o, "failed_cases", json_integer(res->n_cases - passed));
	for (i = 0; i < res->n_cases; i++) {
		const struct kj_case *c = &res->cases[i];

		if (kj_case_status(c) != KJ_STATUS_PASS)
			append(&r, failures, failure_json(&r, t, c));
		{
			json_t *e = json_pack("{s:i, s:s}", "case_idx", i + 1, "status",
					      kj_status_name(kj_case_status(c)));

			put_params(&r, e, t, i);
			append(&r, cases, e);
		}
	}
	put(&r, r.o, "failures", failures);
	kj = kjudge_common(&r, t, a, res);
	put(&r, kj, "cases", cases);
	put(&r, kj, "input_sets", json_integer(res->input_sets));
	put(&r, kj, "timed_out", json_boolean(res->timed_out));
	put(&r, kj, "warnings", copy_or_null(res->warnings));
	put(&r, kj, "golden_from_cache", json_integer(res->from_cache));
	put(&r, r.o, "kjudge", kj);
	if (!r.bad && a->have_key) {
		if (kj__record_signature(r.o, a->key, sig) != KJ_OK)
			r.bad = 1;
		else
			put(&r, kj, "signature", json_string(sig));
	}
	if (r.bad) {
		json_decref(r.o);
		kj_error_set(err, KJ_ENOMEM, "the verify record could not be built (out of memory)");
		return NULL;
	}
	return r.o;
}

/* --- the perf JSON ------------------------------------------------------------------- */

static double round_to(double v, double scale)
{
	return round(v * scale) / scale;
}

static json_t *latency_json(struct rec *r, const struct kj_latency *l, int given)
{
	json_t *o = json_object();

	put(r, o, "avg_latency_ms", json_real(l->mean_ms));
	put(r, o, "peak_memory_mb", json_real(l->peak_memory_mb));
	if (given) {
		put(r, o, "judge_ms", json_real(l->judge_ms));
		return o;
	}
	put(r, o, "judge_ms", json_real(l->judge_ms));
	put(r, o, "judge_ci95_ms", json_pack("[f, f]", l->judge_ci_low_ms, l->judge_ci_high_ms));
	put(r, o, "rounds", json_integer(l->rounds));
	put(r, o, "round_sample_ms", json_real(l->round_sample_ms));
	put(r, o, "overhead_ms", json_real(l->overhead_ms));
	put(r, o, "median_ms", json_real(l->median_ms));
	put(r, o, "stdev_ms", json_real(l->stdev_ms));
	put(r, o, "min_ms", json_real(l->min_ms));
	put(r, o, "max_ms", json_real(l->max_ms));
	put(r, o, "ci95_median_ms", json_pack("[f, f]", l->ci_low_ms, l->ci_high_ms));
	put(r, o, "samples", json_integer(l->n));
	put(r, o, "timer", json_string(l->timer[0] ? l->timer : "?"));
	put(r, o, "escaped_ms_total", json_real(l->escaped_ms_total));
	return o;
}

/* A side's share of the speed of light, sol_ms over its median call (null
 * where either is unknown), into its latency object o; returns o. */
static json_t *sol_fraction(struct rec *r, json_t *o, double sol_ms, double median_ms)
{
	put(r, o, "sol_fraction", sol_ms > 0 && median_ms > 0
		  ? json_real(round_to(sol_ms / median_ms, 1e6)) : json_null());
	return o;
}

/* benchmark.py's classification of one speedup; NULL for a valid one. */
static const char *speedup_class(double s)
{
	if (isnan(s))
		return "nan_indices";
	if (isinf(s))
		return "inf_indices";
	if (s < 0)
		return "negative_indices";
	if (s == 0)
		return "zero_indices";
	return NULL;
}

json_t *kj_perf_json(const struct kj_task *t, const struct kj_attempt *a,
		     const struct kj_result *res, struct kj_error *err)
{
	static const char *const idx_names[] = { "nan_indices", "inf_indices", "zero_indices",
		"negative_indices", "none_indices" };
	struct rec r = { json_object(), 0 };
	json_t *per = json_array(), *idx[5], *kj;
	double fw_sum = 0, fw_mem = 0, im_sum = 0, im_mem = 0, logsum = 0;
	int passed = 0, n_fw = 0, n_im = 0, n_valid = 0, i, k;

	for (i = 0; i < 5; i++)
		idx[i] = json_array();
	for (k = 0; k < res->n_cases; k++) {
		const struct kj_case *c = &res->cases[k];
		json_t *rec = json_object();

		put(&r, rec, "case_idx", json_integer(k + 1));
		put_params(&r, rec, t, k);
		put(&r, rec, "input_desc", c->input_desc ? json_incref(c->input_desc) : json_array());
		/* The speed of light, every case: its figures or why none. */
		put(&r, rec, "sol_ms", c->sol_ms > 0 ? json_real(c->sol_ms) : json_null());
		put(&r, rec, "sol", c->sol ? json_incref(c->sol)
					   : json_pack("{s:n, s:s}", "sol_ms", "why", "not measured"));
		if (kj_case_status(c) != KJ_STATUS_PASS || !c->timed) {
			put(&r, rec, "status", json_string("fail"));
			put(&r, rec, "framework", json_null());
			put(&r, rec, "implementation", json_null());
			put(&r, rec, "speedup_vs_torch", json_null());
			put(&r, rec, "error_type", json_string(kj_etype_name(c->type)));
			put(&r, rec, "error_msg", json_string(c->message ? c->message
							      : kj_etype_text(c->type)));
			put(&r, rec, "charged", json_string(kj_charge_name(kj_etype_charge(c->type))));
			put(&r, rec, "exception", str_or_null(c->exception));
			put(&r, rec, "seed", json_integer((json_int_t)c->seed));
			if (c->metrics)
				put(&r, rec, "metrics", json_incref(c->metrics));
		} else {
			double s = round_to(c->speedup, 1e4);
			const char *cls = speedup_class(s);

			passed++;
			put(&r, rec, "status", json_string("pass"));
			put(&r, rec, "framework", sol_fraction(&r, latency_json(&r, &c->ref,
				c->ref_given), c->sol_ms, c->ref.median_ms));
			put(&r, rec, "implementation", sol_fraction(&r, latency_json(&r, &c->cand, 0),
				c->sol_ms, c->cand.median_ms));
			if (cls) {
				for (i = 0; i < 5; i++)
					if (!strcmp(idx_names[i], cls))
						append(&r, idx[i], json_integer(k + 1));
				put(&r, rec, "speedup_vs_torch", json_null());
			} else {
				put(&r, rec, "speedup_vs_torch", json_real(s));
				put(&r, rec, "speedup_of", json_string(c->speedup_bounded
					? "judge_ms" : "median_ms"));
				/* The judge's own speedup and its interval, which
				 * bounds the speedup. */
				put(&r, rec, "judge_speedup", json_real(round_to(c->judge_speedup, 1e4)));
				put(&r, rec, "speedup_ci95", json_pack("[f, f]",
					round_to(c->judge_speedup_lo, 1e4),
					round_to(c->judge_speedup_hi, 1e4)));
				put(&r, rec, "timing_check", json_pack("{s:f, s:f, s:f, s:f, s:b, s:s}",
					"reference_ratio", round_to(c->check_ratio_ref, 1e4),
					"implementation_ratio", round_to(c->check_ratio_cand, 1e4),
					"least_allowed", round_to(c->check_ratio_min, 1e4),
					"resolution_ms", round_to(c->judge_resolution_ms, 1e6),
					"rechecked", c->timing_rechecked, "rounds",
					c->rounds_queued ? "queued" : "synced"));
				logsum += log(s);
				n_valid++;
			}
			if (c->unseen_ms > 0)
				put(&r, rec, "unseen_inputs_ms", json_pack(
					"{s:f, s:o*, s:o*}", "implementation", c->unseen_ms,
					"framework", c->unseen_ref_ms > 0 ? json_real(c->unseen_ref_ms)
					: NULL, "judge_excess", isfinite(c->unseen_excess_ms) &&
					isfinite(c->unseen_excess_ref_ms) ? json_pack("{s:f, s:f}",
					"implementation", round_to(c->unseen_excess_ms, 1e6),
					"framework", round_to(c->unseen_excess_ref_ms, 1e6)) : NULL));
			put(&r, rec, "error_type", json_null());
			put(&r, rec, "error_msg", json_null());
			if (!c->ref_given) {
				fw_sum += c->ref.mean_ms;
				fw_mem += c->ref.peak_memory_mb;
				n_fw++;
			}
			im_sum += c->cand.mean_ms;
			im_mem += c->cand.peak_memory_mb;
			n_im++;
		}
		append(&r, per, rec);
	}
	put(&r, r.o, "op_name", json_string(t->name));
	put(&r, r.o, "warmup", json_integer(res->bench.warmup));
	put(&r, r.o, "repeats", json_integer(res->bench.repeats));
	put(&r, r.o, "total_cases", json_integer(res->n_cases));
	put(&r, r.o, "passed_cases", json_integer(passed));
	put(&r, r.o, "failed_cases", json_integer(res->n_cases - passed));
	for (i = 0; i < 5; i++)
		put(&r, r.o, idx_names[i], idx[i]);
	put(&r, r.o, "framework", json_pack("{s:f, s:f, s:{}}", "avg_latency_ms",
		res->bench.skip_framework ? res->bench.framework_latency_ms
					  : (n_fw ? round_to(fw_sum / n_fw, 1e4) : 0.0),
		"peak_memory_mb", n_fw ? round_to(fw_mem / n_fw, 100) : 0.0, "operators"));
	put(&r, r.o, "implementation", json_pack("{s:f, s:f, s:{}}", "avg_latency_ms",
		n_im ? round_to(im_sum / n_im, 1e4) : 0.0, "peak_memory_mb",
		n_im ? round_to(im_mem / n_im, 100) : 0.0, "operators"));
	put(&r, r.o, "speedup_vs_torch",
	    n_valid ? json_real(round_to(exp(logsum / n_valid), 1e4)) : json_null());
	put(&r, r.o, "per_shape_results", per);
	kj = kjudge_common(&r, t, a, res);
	put(&r, kj, "flush_bytes", json_integer((json_int_t)res->bench.flush_bytes));
	put(&r, kj, "warnings", res->warnings ? kj__jref(res->warnings) : json_array());
	put(&r, kj, "reference_from_cache", json_integer(res->from_cache));
	/* What the physical floor and the clock check stood on. */
	put(&r, kj, "device_limits", json_pack("{s:f, s:f}", "copy_gbs", res->copy_gbs,
					       "launch_ms", res->launch_ms));
	put(&r, kj, "timing", json_pack("{s:f, s:f, s:i, s:i}", "time_budget_s",
					res->bench.budget_s, "target_ci", res->bench.target_ci,
					"timed_sets", res->bench.timed_sets, "max_repeats",
					res->bench.max_repeats));
	put(&r, r.o, "kjudge", kj);
	if (r.bad) {
		json_decref(r.o);
		kj_error_set(err, KJ_ENOMEM, "the perf record could not be built (out of memory)");
		return NULL;
	}
	return r.o;
}

/* --- KernelBench's figures ------------------------------------------------------------ */

static int usable(double v)
{
	return isfinite(v) && v > 0;
}

json_t *kj_kb_runtime_stats(const struct kj_latency *l, size_t n, double *runtime)
{
	double log_med = 0, log_mean = 0, lo = (double)INFINITY, hi = 0;
	int have_mean = 1, have_range = 1;
	long long trials = 0;
	json_t *o = json_object();
	size_t i;

	*runtime = -1.0;
	if (!o)
		return NULL;
	for (i = 0; i < n; i++) {
		/* A case not timed: no runtime, as KernelBench's -1.0. */
		if (!usable(l[i].median_ms) || l[i].n <= 0)
			return o;
		log_med += log(l[i].median_ms);
		trials += l[i].n;
		if (usable(l[i].mean_ms))
			log_mean += log(l[i].mean_ms);
		else
			have_mean = 0;
		if (usable(l[i].min_ms) && usable(l[i].max_ms)) {
			lo = l[i].min_ms < lo ? l[i].min_ms : lo;
			hi = l[i].max_ms > hi ? l[i].max_ms : hi;
		} else {
			have_range = 0;
		}
	}
	if (n == 0)
		return o;
	*runtime = exp(log_med / (double)n);
	if ((have_mean && json_object_set_new(o, "mean", json_real(exp(log_mean / (double)n)))) ||
	    (n == 1 && isfinite(l[0].stdev_ms) && l[0].stdev_ms >= 0 && have_mean &&
	     json_object_set_new(o, "std", json_real(l[0].stdev_ms))) ||
	    (have_range && (json_object_set_new(o, "min", json_real(lo)) ||
			    json_object_set_new(o, "max", json_real(hi)))) ||
	    json_object_set_new(o, "num_trials", json_integer(trials)) ||
	    json_object_set_new(o, "median", json_real(*runtime)) ||
	    (n > 1 && json_object_set_new(o, "cases", json_integer((json_int_t)n)))) {
		json_decref(o);
		*runtime = -1.0;
		return NULL;
	}
	return o;
}
