/*
 * cache.c - a task's audit kept by the task's content and the judge's
 * version, so that a suite audited again (and eval's batches, later) pays
 * for a task's canaries once (kjudge/audit.h, docs/AUDIT.md).
 *
 * The key is the SHA-256 of the judge's version, the task file's and the
 * cases file's SHA-256, the canaries' module's, the device asked for, the
 * canaries asked for and the timeout: anything else judged again.  An
 * entry is CACHE_DIR/audit/KEY.json, written atomically; only an audit
 * with every canary judged is kept (an error may be the machine's of the
 * moment).  An entry that does not read back as a whole audit is ignored
 * and the task audited again: the cache can cost time, never a verdict
 * other than the pipeline's.  The device's peak rates are kept beside
 * the entries, so that every task of a suite is measured against the same
 * rates (kj__audit_peaks_get).
 */
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
#include "audit_internal.h"
#include "base/banned.h"

int kj_audit_key(const struct kj_config *cfg, const struct kj_audit_opts *o,
		 const char *task_file, const char *cases_file, char key[65], struct kj_error *err)
{
	char task_sha[65], cases_sha[65] = "", helper_sha[65], helper[PATH_MAX], text[1024];
	int rc, n;

	if (kj__audit_helper(cfg, helper, sizeof(helper)) < 0)
		return kj_error_set(err, KJ_ENOENT, "the canaries' module kjudge_audit.py is "
				    "missing (it is installed beside the torch worker)");
	if ((rc = kj__sha256_file(task_file, task_sha, err)) != KJ_OK ||
	    (cases_file && (rc = kj__sha256_file(cases_file, cases_sha, err)) != KJ_OK) ||
	    (rc = kj__sha256_file(helper, helper_sha, err)) != KJ_OK)
		return rc;
	n = snprintf(text, sizeof(text), "kjudge-audit 1|%s|%s|%s|%s|%s|%u|%.17g", KJ_VERSION,
		     task_sha, cases_sha, helper_sha, o->device ? o->device : "auto", o->only,
		     o->timeout_s);
	if (n < 0 || (size_t)n >= sizeof(text) || kj__sha256_hex(text, (size_t)n, key) != 0)
		return kj_error_set(err, KJ_ENOMEM, "the audit's cache key cannot be made");
	return KJ_OK;
}

static int entry_path(const struct kj_config *cfg, const char *key, char *out, size_t size)
{
	if (!cfg->cache_dir || !*cfg->cache_dir)
		return -1;
	return snprintf(out, size, "%s/audit/%s.json", cfg->cache_dir, key) < (int)size ? 0 : -1;
}

int kj__audit_cache_get(const struct kj_config *cfg, const char *key, struct kj_audit_result *r)
{
	char path[PATH_MAX];
	json_error_t je;
	json_t *doc, *e, *cs, *hr, *reasons, *measure;
	int oom = 0, c, k;
	static const char *const lp[2] = { "float16", "bfloat16" };

	if (entry_path(cfg, key, path, sizeof(path)) < 0 || !kj__is_file(path))
		return 0;
	doc = kj__json_load_file(path, 0, &je, &oom);
	e = json_object_get(doc, "entry");
	cs = json_object_get(e, "canaries");
	hr = json_object_get(e, "lowp_limit_used");
	reasons = json_object_get(e, "reasons");
	measure = json_object_get(doc, "measure");
	if (!json_is_object(cs) || !json_is_object(hr) || !json_is_array(reasons) ||
	    !json_is_array(json_object_get(measure, "cases")) ||
	    !json_is_string(json_object_get(e, "device"))) {
		json_decref(doc);
		return 0;
	}
	for (c = 0; c < KJ_AUDIT_N_; c++) {
		const char *v = json_string_value(json_object_get(cs, kj_audit_canary_name(
			(enum kj_audit_canary)c)));
		int o;

		for (o = KJ_AUDIT_NA; o <= KJ_AUDIT_SKIPPED; o++)
			if (v && !strcmp(v, kj_audit_outcome_name((enum kj_audit_outcome)o)))
				break;
		/* An entry with an error was never written: one that says so
		 * is not this cache's. */
		if (o > KJ_AUDIT_SKIPPED || o == KJ_AUDIT_ERROR) {
			json_decref(doc);
			return 0;
		}
		r->canary[c] = (enum kj_audit_outcome)o;
		r->weak |= o == KJ_AUDIT_PASS;
	}
	for (k = 0; k < 2; k++) {
		json_t *v = json_object_get(hr, lp[k]);

		r->lowp_ratio[k] = json_is_number(v) ? json_number_value(v) : (double)NAN;
	}
	snprintf(r->device, sizeof(r->device), "%s", json_string_value(json_object_get(e, "device")));
	json_decref(r->reasons);
	r->reasons = json_incref(reasons);
	r->measure = json_incref(measure);
	r->cached = 1;
	json_decref(doc);
	return 1;
}

void kj__audit_cache_put(const struct kj_config *cfg, const char *key,
			 const struct kj_audit_result *r)
{
	char path[PATH_MAX], dir[PATH_MAX];
	struct kj_error err;
	json_t *doc;
	char *text;
	int oom = 0;

	if (r->errors || entry_path(cfg, key, path, sizeof(path)) < 0 ||
	    snprintf(dir, sizeof(dir), "%s/audit", cfg->cache_dir) >= (int)sizeof(dir) ||
	    kj__mkdirs(dir, 0700) != 0)
		return;
	doc = json_pack("{s:o?, s:O?}", "entry", kj_audit_json(r), "measure", r->measure);
	text = doc ? kj__json_dumps(doc, JSON_COMPACT, &oom) : NULL;
	json_decref(doc);
	/* Best effort: an entry that cannot be written costs the next run
	 * its time only. */
	if (text)
		kj_write_file_atomic(path, text, strlen(text), &err);
	free(text);
}

/* CACHE_DIR/audit/KEY.json, KEY of "kjudge-audit-peaks", the way they
 * are measured (2: the GPU's bandwidth from 1 GiB buffers, copies and an
 * elementwise op), the judge's version, the Python and the device asked
 * for.  0, or -1 without a cache. */
static int peaks_path(const struct kj_config *cfg, const struct kj_audit_opts *o, char *out,
		      size_t size)
{
	char text[PATH_MAX + 128], key[65];
	int n = snprintf(text, sizeof(text), "kjudge-audit-peaks 2|%s|%s|%s", KJ_VERSION,
			 cfg->python ? cfg->python : "", o->device ? o->device : "auto");

	if (n < 0 || (size_t)n >= sizeof(text) || kj__sha256_hex(text, (size_t)n, key) != 0)
		return -1;
	return entry_path(cfg, key, out, size) < 0 ? -1 : 0;
}

json_t *kj__audit_peaks_get(const struct kj_config *cfg, const struct kj_audit_opts *o)
{
	char path[PATH_MAX];
	json_error_t je;
	json_t *p;
	int oom = 0;

	if (peaks_path(cfg, o, path, sizeof(path)) < 0 || !kj__is_file(path))
		return NULL;
	p = kj__json_load_file(path, 0, &je, &oom);
	if (!json_is_object(p)) {
		json_decref(p);
		return NULL;
	}
	return p;
}

void kj__audit_peaks_put(const struct kj_config *cfg, const struct kj_audit_opts *o,
			 const json_t *peaks)
{
	char path[PATH_MAX], dir[PATH_MAX];
	struct kj_error err;
	char *text;
	int oom = 0;

	if (!json_is_object(peaks) || peaks_path(cfg, o, path, sizeof(path)) < 0 ||
	    snprintf(dir, sizeof(dir), "%s/audit", cfg->cache_dir) >= (int)sizeof(dir) ||
	    kj__mkdirs(dir, 0700) != 0)
		return;
	text = kj__json_dumps(peaks, JSON_COMPACT, &oom);
	/* Best effort: rates not kept are measured again by the next task. */
	if (text)
		kj_write_file_atomic(path, text, strlen(text), &err);
	free(text);
}
