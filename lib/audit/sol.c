/*
 * sol.c - a task's speed of light for the benchmark (kjudge/audit.h,
 * docs/AUDIT.md, "The speed of light"): the audit's measurement step run
 * with no canary, its per-case figures checked and shaped into the
 * benchmark's `sol` objects, and kept by the task's content.
 *
 * The step runs with the task's trust, never the candidate's: the FLOPs
 * and bytes are the reference's, counted in a process of the judge's.
 * The peak rates are the audit's, kept per device (kj__audit_peaks_get);
 * the step measures them when none are kept for its device and the judge
 * keeps what it measured.  A figure the step could not establish is null
 * with the step's reason; a figure of the wrong kind is null with the
 * judge's.  The cache can cost time, never a figure: an entry that does
 * not read back whole is measured again.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/audit.h"
#include "kjudge/fileio.h"
#include "base/fs.h"
#include "base/hash.h"
#include "base/json.h"
#include "runner/runner_internal.h"
#include "audit_internal.h"
#include "base/banned.h"

/* CACHE_DIR/audit/sol-KEY.json, KEY the SHA-256 of everything the figures
 * depend on: the judge's version, the task's and cases' contents, the
 * measurement's module, the Python and the device.  0, or -1 without a
 * cache or a key. */
static int sol_path(const struct kj_config *cfg, const char *device, const char *task_file,
		    const char *cases_file, char *out, size_t size, struct kj_error *err)
{
	char task_sha[65], cases_sha[65] = "", helper_sha[65], helper[PATH_MAX], key[65];
	char text[PATH_MAX + 512];
	int n;

	if (!cfg->cache_dir || !*cfg->cache_dir || kj__audit_helper(cfg, helper, sizeof(helper)) < 0 ||
	    kj__sha256_file(task_file, task_sha, err) != KJ_OK ||
	    (cases_file && kj__sha256_file(cases_file, cases_sha, err) != KJ_OK) ||
	    kj__sha256_file(helper, helper_sha, err) != KJ_OK)
		return -1;
	n = snprintf(text, sizeof(text), "kjudge-sol 1|%s|%s|%s|%s|%s|%s", KJ_VERSION, task_sha,
		     cases_sha, helper_sha, cfg->python ? cfg->python : "", device ? device : "auto");
	if (n < 0 || (size_t)n >= sizeof(text) || kj__sha256_hex(text, (size_t)n, key) != 0)
		return -1;
	n = snprintf(out, size, "%s/audit/sol-%s.json", cfg->cache_dir, key);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* Whether doc reads back as a whole speed-of-light entry. */
static int sol_whole(const json_t *doc)
{
	const json_t *cases = json_object_get(doc, "cases");
	size_t i;

	if (!json_is_array(cases) || !json_array_size(cases))
		return 0;
	for (i = 0; i < json_array_size(cases); i++) {
		const json_t *e = json_array_get(cases, i), *s = json_object_get(e, "sol_ms");

		if (!json_is_object(e) || !(json_is_null(s) || json_is_number(s)) ||
		    (json_is_null(s) && !json_is_string(json_object_get(e, "why"))))
			return 0;
	}
	return 1;
}

static double num_or_nan(const json_t *v)
{
	return json_is_number(v) ? json_number_value(v) : (double)NAN;
}

/* One case's `sol` object from the step's record m under the peaks. */
static json_t *sol_case(const json_t *m, const json_t *peaks)
{
	const json_t *flops = json_object_get(m, "flops"), *why = json_object_get(m, "sol_why");
	double sol = num_or_nan(json_object_get(m, "sol_ms"));
	double bytes = num_or_nan(json_object_get(m, "bytes"));
	json_t *e = json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?}", "flops", flops,
			      "bytes", json_object_get(m, "bytes"), "dtype",
			      json_object_get(m, "sol_dtype"), "peak_flops_per_s",
			      json_object_get(m, "peak_flops_per_s"), "copy_bytes_per_s",
			      json_object_get(peaks, "copy_bytes_per_s"), "device_name",
			      json_object_get(peaks, "device_name"), "torch",
			      json_object_get(peaks, "torch"));
	const char *text = NULL;
	int bad;

	if (!e)
		return NULL;
	if (json_is_string(why))
		text = json_string_value(why);
	else if (!(isfinite(bytes) && bytes >= 0) ||
		 !(json_is_integer(flops) && json_integer_value(flops) >= 0))
		text = "the measurement's FLOPs or bytes are not counts";
	else if (!(isfinite(sol) && sol > 0))
		text = "the measurement gave no positive speed of light";
	bad = json_object_set_new(e, "sol_ms", text ? json_null() : json_real(sol)) < 0 ||
	      (text && json_object_set_new(e, "why", json_string(text)) < 0);
	if (bad) {
		json_decref(e);
		return NULL;
	}
	return e;
}

/* The benchmark's shape of the step's reply r: {"device_name", "peaks",
 * "cases": [sol_case ...]}.  New reference, NULL when out of memory. */
static json_t *sol_shape(const json_t *r)
{
	const json_t *peaks = json_object_get(r, "peaks"), *m = json_object_get(r, "cases");
	json_t *cases = json_array(), *out;
	size_t i;

	for (i = 0; cases && i < json_array_size(m); i++)
		if (json_array_append_new(cases, sol_case(json_array_get(m, i), peaks)) < 0) {
			json_decref(cases);
			return NULL;
		}
	out = cases ? json_pack("{s:O?, s:O?, s:o}", "device_name",
				json_object_get(peaks, "device_name"), "peaks", peaks, "cases",
				cases) : NULL;
	return out;
}

int kj_audit_sol(const struct kj_config *cfg_in, const char *device, double timeout_s,
		 const char *task_file, const char *cases_file, json_t **out, struct kj_error *err)
{
	struct kj_config own = *cfg_in;
	const struct kj_config *cfg = &own;
	struct kj_audit_opts o;
	struct kj_error ignored;
	char dir[PATH_MAX], path[PATH_MAX];
	json_t *reply = NULL;
	json_error_t je;
	int rc, oom = 0, cached;

	/* Kept where they outlive a batch (kj_config.sol_cache_dir). */
	if (cfg_in->sol_cache_dir)
		own.cache_dir = cfg_in->sol_cache_dir;
	cached = sol_path(cfg, device, task_file, cases_file, path, sizeof(path), &ignored) == 0;

	*out = NULL;
	if (cached && kj__is_file(path)) {
		json_t *doc = kj__json_load_file(path, 0, &je, &oom);

		if (sol_whole(doc)) {
			*out = doc;
			return KJ_OK;
		}
		json_decref(doc);
	}
	memset(&o, 0, sizeof(o));
	o.device = device;
	o.timeout_s = timeout_s;
	rc = kj__audit_stage(cfg, &o, task_file, cases_file, 1, dir, &reply, err);
	if (rc != KJ_OK && !*dir)
		return rc;
	if (rc == KJ_OK && !(*out = sol_shape(reply)))
		rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
	if (rc == KJ_OK && cached && sol_whole(*out)) {
		char dirname[PATH_MAX];
		char *text = kj__json_dumps(*out, JSON_COMPACT, &oom);

		/* Best effort: figures not kept are measured again next time. */
		snprintf(dirname, sizeof(dirname), "%s/audit", cfg->cache_dir);
		if (text && kj__mkdirs(dirname, 0700) == 0)
			kj_write_file_atomic(path, text, strlen(text), &ignored);
		free(text);
	}
	json_decref(reply);
	kj__rm_rf(dir);
	return rc;
}
