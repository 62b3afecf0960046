/*
 * attempt.c - where one run's files go: its scratch directory (a private
 * tmpfs where the machine allows one), the golden cache, and the stage
 * directory in the cache's file system that the reference writes into, so
 * that keeping its outputs as golden ones is a rename (see
 * kjudge/pipeline.h).
 *
 * Names carry the judge's pid (kjudge-PID-XXXXXX, stage-PID-XXXXXX), so the
 * next run removes what a judge killed before it could clean up left.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kjudge/pipeline.h"
#include "core/core.h"
#include "base/fs.h"
#include "base/json.h"
#include "sandbox/sandbox_internal.h"

/* kjudge-PID-XXXXXX of a judge that no longer runs (not the cache,
 * kjudge-cache-UID). */
static int sweep_scratch(void *ctx, const char *name, const struct stat *st)
{
	const struct kj_config *cfg = ctx;
	const char *parent = cfg->scratch_parent;
	const char *dash = kj__left_by_dead_run(name) ? strchr(name + 7, '-') : NULL;
	char p[PATH_MAX];

	(void)st;
	if (dash && strlen(dash) == 7 &&
	    snprintf(p, sizeof(p), "%s/%s", parent, name) < (int)sizeof(p))
		kj__rm_rf(p);
	return 0;
}

int kj_attempt_open(struct kj_attempt *a, const struct kj_config *cfg, struct kj_error *err)
{
	struct kj_config sweep_ctx = *cfg;
	char own[PATH_MAX];
	const char *cache_dir;
	int rc;

	memset(a, 0, sizeof(*a));
	a->cfg = cfg;
	a->t0 = kj__now_s();
	a->scratch_kind = "shared";
	a->timings = json_object();
	if (!a->timings)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	kj__each_entry(cfg->scratch_parent, sweep_scratch, &sweep_ctx);
	if (snprintf(a->scratch, sizeof(a->scratch), "%s/kjudge-%d-XXXXXX", cfg->scratch_parent,
		     (int)getpid()) >= (int)sizeof(a->scratch) - 64) {
		json_decref(a->timings);
		return kj_error_set(err, KJ_EINVAL, "'%s': scratch path too long",
				    cfg->scratch_parent);
	}
	if (!mkdtemp(a->scratch)) {
		rc = kj_error_set(err, KJ_EIO, "'%s': cannot create a scratch directory: %s",
				  cfg->scratch_parent, strerror(errno));
		json_decref(a->timings);
		a->scratch[0] = '\0';
		return rc;
	}
	/* A tmpfs of the run's own with huge pages, where the machine allows
	 * one; else the plain directory, which works as well, only slower for
	 * large outputs. */
	if (cfg->scratch_private)
		(void)kj__scratch_private(a->scratch, &a->scratch_kind);
	/*
	 * Without a cache ($KJ_CACHE_DIR=off) the run still keeps its goldens
	 * in a cache, one of its own in the scratch directory, gone with it:
	 * nothing is kept past the run or read from an earlier one, and every
	 * golden the run computes has a place of its own that the reference's
	 * later calls cannot overwrite (benchmark's timed and never-seen sets
	 * live through the reference's timed rounds, which write into its
	 * output directory).  The verdicts are those of a run with a cache.
	 */
	cache_dir = cfg->cache_dir;
	if (!cache_dir) {
		if (snprintf(own, sizeof(own), "%s/golden", a->scratch) >= (int)sizeof(own)) {
			kj_attempt_close(a);
			return kj_error_set(err, KJ_EINVAL, "'%s': scratch path too long",
					    cfg->scratch_parent);
		}
		cache_dir = own;
	}
	rc = kj__cache_open(&a->cache, cache_dir, cfg->cache_max_bytes, cfg->threads, err);
	if (rc != KJ_OK) {
		kj_attempt_close(a);
		return rc;
	}
	if (cfg->cache_dir && cfg->cache_shared_dir)
		snprintf(a->cache->shared, sizeof(a->cache->shared), "%s", cfg->cache_shared_dir);
	if (snprintf(a->stage, sizeof(a->stage), "%s/stage-%d-XXXXXX", a->cache->dir,
		     (int)getpid()) >= (int)sizeof(a->stage) - 64 || !mkdtemp(a->stage)) {
		rc = kj_error_set(err, KJ_EIO, "cache '%s': cannot create a stage "
				  "directory: %s", a->cache->dir, strerror(errno));
		a->stage[0] = '\0';
		kj_attempt_close(a);
		return rc;
	}
	return KJ_OK;
}

void kj_attempt_close(struct kj_attempt *a)
{
	if (a->stage[0])
		kj__rm_rf(a->stage);
	if (a->scratch[0]) {
		if (strcmp(a->scratch_kind, "shared") != 0)
			umount2(a->scratch, MNT_DETACH); /* its files go with it */
		kj__rm_rf(a->scratch);
	}
	if (a->cache)
		kj__cache_close(a->cache);
	json_decref(a->timings);
	memset(a, 0, sizeof(*a));
	a->scratch_kind = "shared";
}

void kj_attempt_tally(struct kj_attempt *a, const char *key, double s)
{
	json_t *v = json_object_get(a->timings, key);

	/* Even a figure that cannot be recorded makes the run a judge error:
	 * nothing the judge fails to do is silently skipped. */
	if (json_object_set_new(a->timings, key, json_real(json_number_value(v) + s)))
		a->broken = 1;
}

/* The phases a worker times (kjudge_worker.py's lap names): a reply's
 * other keys, and figures that are not finite and non-negative, are not
 * recorded (the worker is the candidate's process; its figures are for
 * reading, and must not fill the record). */
static const char *const phase_names[] = {
	"inputs_s", "forward_s", "checks_s", "write_s", "warmup_s", "timed_loop_s", "profile_s",
	"queue_s", "wait_s", "match_s",
};

static int phase_known(const char *k, const json_t *v)
{
	size_t i;
	double x = json_number_value(v);

	if (!json_is_number(v) || !isfinite(x) || x < 0)
		return 0;
	for (i = 0; i < sizeof(phase_names) / sizeof(phase_names[0]); i++)
		if (strcmp(k, phase_names[i]) == 0)
			return 1;
	return 0;
}

void kj_attempt_tally_phases(struct kj_attempt *a, const char *who, const json_t *phases)
{
	json_t *dst = json_object_get(a->timings, who), *v, *ph;
	const char *k;

	if (!phases)
		return;
	if (!dst) {
		dst = json_object();
		if (!dst || json_object_set_new(a->timings, who, dst)) {
			a->broken = 1;
			return;
		}
	}
	ph = kj__jref(phases);
	json_object_foreach(ph, k, v)
		if (phase_known(k, v) &&
		    json_object_set_new(dst, k, json_real(json_number_value(
			    json_object_get(dst, k)) + json_number_value(v))))
			a->broken = 1;
	json_decref(ph);
}
