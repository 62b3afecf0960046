/*
 * audit_internal.h - what the audit's files share (lib/audit/).
 */
#ifndef KJ_AUDIT_INTERNAL_H
#define KJ_AUDIT_INTERNAL_H

#include <stddef.h>

#include <jansson.h>

#include "kjudge/audit.h"
#include "kjudge/config.h"
#include "kjudge/error.h"

/* The most cases of a task the audit judges; a task with more is an error
 * of the audit, said, never a partial verdict. */
#define KJ__AUDIT_MAX_CASES 256

/* One canary's verdict as its judging child handed it back. */
struct kj__audit_verdict {
	int done;                   /* it was judged (or its child ended) */
	int reply_rc;               /* KJ_OK: cases[] is the pipeline's verdict */
	int device_memory;          /* a side said the device's memory ran out */
	int shared;                 /* other canaries ran beside it */
	int again;                  /* judged a second time, alone, after its
				     * device memory ran out beside others */
	int n_cases;
	char cases[KJ__AUDIT_MAX_CASES]; /* 'p' passed, 'f' rejected for its
					  * outputs, 'x' anything else */
	char device[16];
	char msg[600];              /* the first case that did not pass, or why
				     * there is no verdict */
};

/* kjudge_audit.py beside the torch worker the run uses, into out: 0, or
 * -1 when it is not there. */
int kj__audit_helper(const struct kj_config *cfg, char *out, size_t size);

/* The comparator's thresholds {dtype name: t}.  New reference, NULL when
 * out of memory. */
json_t *kj__audit_thresholds(void);

/* Judge every canary c with run[c] set, jobs at once, each in a child of
 * its own, into out[c]; a canary whose device memory ran out while others
 * ran beside it is judged again alone.  KJ_OK, or a code with err
 * filled when a child could not be started (those started are judged and
 * reaped). */
int kj__audit_judge_all(const struct kj_config *cfg, const struct kj_audit_opts *o,
			const char *dir, const int run[KJ_AUDIT_N_], int n_cases,
			struct kj__audit_verdict out[KJ_AUDIT_N_], struct kj_error *err);

/* The measurement step (task.c): kjudge_audit.py over the task in dir
 * with the cases' parameters params (NULL: no cases file) and the peak
 * rates kept for the device (NULL: none; the step measures them when they
 * are not its device's), its reply into *out (a new reference); sol_only:
 * no canary, the speed of light's figures alone (sol.c).  KJ_OK or a code
 * with err filled. */
int kj__audit_measure(const struct kj_config *cfg, const struct kj_audit_opts *o,
		      const char *dir, const json_t *params, const json_t *peaks, int sol_only,
		      json_t **out, struct kj_error *err);

/* A private verify directory made under $TMPDIR (dir, the caller's to
 * remove with kj__rm_rf when *dir is set), laid out for the task, and the
 * measurement step run in it (kj__audit_measure, with the kept peak rates,
 * keeping those it measured) into *measure (new reference).  KJ_OK or a
 * code with err filled (audit.c). */
int kj__audit_stage(const struct kj_config *cfg, const struct kj_audit_opts *o,
		    const char *task_file, const char *cases_file, int sol_only,
		    char dir[PATH_MAX], json_t **measure, struct kj_error *err);

/* The private verify directory's layout (audit.c). */
int kj__audit_layout(const struct kj_config *cfg, const char *dir, const char *task_file,
		     const char *cases_file, struct kj_error *err);

/* The audit's cache (cache.c; its key is kj_audit_key's): an entry read
 * into r (1, r->cached set; 0: none, or one that does not
 * read back whole); an audit with every canary judged written (best
 * effort).  No cache without cfg->cache_dir. */
int kj__audit_cache_get(const struct kj_config *cfg, const char *key, struct kj_audit_result *r);
void kj__audit_cache_put(const struct kj_config *cfg, const char *key,
			 const struct kj_audit_result *r);

/* The device's peak rates kept in the cache (cache.c), by the judge's
 * version, the Python and the device asked for: a new reference or NULL;
 * and kept (best effort).  The measurement step checks that the kept
 * rates are its device's (its name, torch's version) before it uses them. */
json_t *kj__audit_peaks_get(const struct kj_config *cfg, const struct kj_audit_opts *o);
void kj__audit_peaks_put(const struct kj_config *cfg, const struct kj_audit_opts *o,
			 const json_t *peaks);

#endif /* KJ_AUDIT_INTERNAL_H */
