/*
 * core.h - what the pipeline's files share (kj__ internals of lib/core/):
 * the golden cache and latency statistics.
 *
 * Include it after the system headers, as internal.h.
 */
#ifndef KJ_CORE_CORE_H
#define KJ_CORE_CORE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "kjudge/error.h"
#include "kjudge/pipeline.h"
#include "kjudge/runner.h"
#include "kjudge/value.h"
#include "kjudge/verdict.h"

/* --- the golden cache (cache.c) -------------------------------------------------
 *
 * Golden outputs and reference latencies, kept by a key derived from
 * content: the task file's SHA-256, the case, the seed, the device key
 * (device, its model, the runtime's versions) and, for latencies, the timing
 * settings.  Layout of $cache_dir:
 *
 *   g-KEY/         a golden run: its .npy files and meta.json, which holds
 *                  the outputs' description and each file's size and
 *                  checksum (base/hash.h)
 *   t-KEY.json     a reference latency
 *   stage-PID-XXXXXX/   where a running judge's reference writes; renamed
 *                  into entries (same file system)
 *   pycache/       the workers' bytecode tree (not an entry)
 *
 * Concurrency: an entry in use is held with a shared flock on its
 * directory, taken before it is published (on the temporary directory, so
 * the lock moves with the rename) or right after it is found.  Trimming
 * takes the exclusive lock without waiting and skips entries it cannot
 * lock, so no entry is evicted while a run uses it.  Integrity: every file
 * of an entry is checked against meta.json (size and checksum) before the
 * entry is used; a damaged entry is removed and rebuilt by the reference,
 * and the case is charged to no one.
 *
 * A second, shared cache (cfg->cache_shared_dir: a cluster's, on its
 * shared file system) is looked in when the cache proper has no entry of
 * the key: read as an entry is (held with a shared flock where the file
 * system has them, every file checked), never written, trimmed or
 * repaired; a damaged or locked entry there is a miss.
 */
struct kj_cache {
	char dir[PATH_MAX];
	char shared[PATH_MAX];  /* a cache read, never written; "" none */
	long long cap;          /* bytes; entries beyond it go, oldest first */
	int threads;            /* for checksums */
	unsigned damaged;       /* entries found damaged and removed */
	/* Entries this handle published under seeds no later run draws
	 * (a fresh run key): removed when it closes. */
	struct kj__own { char name[72]; long long bytes; } *own;
	size_t n_own, cap_own;
};

struct kj__entry {
	char dir[PATH_MAX];     /* where its files are */
	int lock_fd;            /* -1 when not held */
	struct kj_value *outputs;
	json_t *input_desc;
};

void kj__entry_init(struct kj__entry *e);
void kj__entry_release(struct kj__entry *e);

/* Open (create) the cache at dir; removes stage directories that dead
 * judges left.  Close removes the entries put with `own` set. */
int kj__cache_open(struct kj_cache **out, const char *dir, long long cap, int threads,
		   struct kj_error *err);
void kj__cache_close(struct kj_cache *c);

/* The key of an entry, as hex.  KJ_OK, or KJ_ENOMEM (err filled) when
 * the hash could not be made. */
int kj__cache_key(const char *kind, const struct kj_task *t, int case_idx, uint64_t seed,
		  uint64_t extra, char hex[65], struct kj_error *err);

/*
 * A golden entry: 1 found, checked and held (e filled), 0 not there or
 * damaged (then removed), or a code with err filled.
 */
int kj__golden_get(struct kj_cache *c, const char *key, struct kj__entry *e,
		   struct kj_error *err);

/*
 * Publish the files of `outputs` (in stage_dir) with their description as
 * the entry `key`: returns 1 with e filled and held (the files are moved),
 * 0 when it could not be stored (the files stay where they were; nothing
 * is wrong with them), or a code for the judge's own failure.  `own`: the
 * key's seed is the run's alone (no later run can ask for it), so the
 * entry goes when c closes instead of filling the cache.
 */
int kj__golden_put(struct kj_cache *c, const char *key, const char *stage_dir,
		   const struct kj_value *outputs, const json_t *input_desc, int own,
		   struct kj__entry *e, struct kj_error *err);

/* --- records (views.c) ------------------------------------------------------------- */

/* The signature of a verify record (its "kjudge.signature" left out) under
 * the judge's key, as hex.  KJ_OK or KJ_ENOMEM. */
int kj__record_signature(const json_t *rec, const uint64_t key[4], char hex[65]);

/* --- statistics (stats.c) ------------------------------------------------------------ */

/* Order statistics, the one place they are written (the figures below, the
 * benchmark's checks, spec's timings): kj__cmp_double orders doubles for
 * qsort; kj__sort_doubles sorts v in place; over sorted values,
 * kj__median_sorted is the middle one or the mean of the middle two, and
 * kj__quantile_sorted the p-quantile interpolated between neighbours
 * (p = 0.5: the median).  Both are 0 for n = 0. */
int kj__cmp_double(const void *x, const void *y);
void kj__sort_doubles(double *v, size_t n);
double kj__median_sorted(const double *v, size_t n);
double kj__quantile_sorted(const double *v, size_t n, double p);

/* The figures of n samples (ms).  Returns KJ_OK, or KJ_ENOMEM. */
int kj__latency(const double *samples, const double *escaped, size_t n, double peak_mb,
		const char *timer, struct kj_latency *out);

/* The outputs task t's sides leave on the device (struct kj_call's
 * export_outputs): the run's setting (kj_config.device_outputs) where both
 * sides declare KJ_SIDE_CAP_DEVCMP, else none (the host's comparison). */
#define KJ__DEVOUT(t, a)                                                      \
	(KJ_SIDE_CAN(&(t)->ref, KJ_SIDE_CAP_DEVCMP) &&                        \
			 KJ_SIDE_CAN(&(t)->cand, KJ_SIDE_CAP_DEVCMP)           \
		 ? (a)->cfg->device_outputs                                    \
		 : KJ_DEVOUT_OFF)

#endif /* KJ_CORE_CORE_H */
