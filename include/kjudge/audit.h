/*
 * kjudge/audit.h - a task's audit: built-in canary candidates that a strong
 * task must reject, each judged as any candidate is.
 *
 * Theory of operation (docs/AUDIT.md).  kj_audit_task() copies the task
 * file (and its cases file) into a private verify directory of its own,
 * beside the canaries' helper module (kjudge_audit.py, installed beside
 * the torch worker), and writes one candidate file per canary: a ModelNew
 * that wraps the task's reference Model (its source is copied into the
 * candidate, since the sandbox shows a candidate the task file without its
 * reference class) and returns a cheap wrong answer (zeros, ones, an
 * uninitialised tensor, the golden's mean, an input, the reference in
 * float16 and bfloat16, the golden plus noise at twice the threshold, the
 * golden of another input set, the golden on the first half only).
 *
 * First the measurement step: kjudge_audit.py, run with the task's trust
 * (a plain process under a deadline, as the reference's worker runs; it
 * runs the task's code and the canaries, never a candidate's) computes for
 * each case which canaries apply and the figures that explain a verdict
 * (the share of the golden's elements within the threshold, MERE and MARE
 * against their limits), and the reference's FLOPs and bytes.  Then each
 * canary that applies to some case is judged by the library's kj_verify()
 * exactly as `kjudge verify` judges a candidate: the same runner, sandbox,
 * seeds and comparator, in a child process of its own (jobs of them at
 * once).  The canaries of one task share a batch key, so they see the same
 * inputs and the reference's goldens come from the golden cache after
 * the first.
 *
 * Verdicts, fail closed.  A canary "fails" a case only when the pipeline
 * said the case failed for its outputs (an accuracy failure: wrong values,
 * types or count); it "passes" a case when the pipeline passed it, which
 * makes the task weak.  Any other end (the canary raised, a worker could
 * not start, a judge error) is "error": the audit proves nothing of that
 * canary and says so.  Over the cases: pass when some case passed, else
 * fail when every case it applies to failed, else error; n/a when it
 * applies to no case.
 */
#ifndef KJUDGE_AUDIT_H
#define KJUDGE_AUDIT_H

#include <jansson.h>

#include "kjudge/config.h"
#include "kjudge/error.h"

/* X(ENUM, name) in the order the audit runs and reports them. */
#define KJ_AUDIT_CANARY_MAP(X)      \
	X(ZEROS, "zeros")           \
	X(ONES, "ones")             \
	X(EMPTY, "empty")           \
	X(CONSTANT, "constant")     \
	X(INPUT, "input")           \
	X(LOWP_F16, "lowp_float16") \
	X(LOWP_BF16, "lowp_bfloat16") \
	X(NOISE, "noise")           \
	X(STALE, "stale")           \
	X(PARTIAL, "partial")

enum kj_audit_canary {
#define KJ__AUDIT_ENUM(e, name) KJ_AUDIT_##e,
	KJ_AUDIT_CANARY_MAP(KJ__AUDIT_ENUM)
#undef KJ__AUDIT_ENUM
	KJ_AUDIT_N_
};

/* The canaries' names in enum order, NULL-terminated (an option's choices). */
extern const char *const kj_audit_canary_names[KJ_AUDIT_N_ + 1];

/* "zeros", ...; "?" out of range.  Static storage. */
const char *kj_audit_canary_name(enum kj_audit_canary c);

/* What came of one canary on a task. */
enum kj_audit_outcome {
	KJ_AUDIT_NA = 0,   /* applies to no case */
	KJ_AUDIT_FAIL,     /* rejected by the comparator on every case it applies to */
	KJ_AUDIT_PASS,     /* passed some case: the task is weak */
	KJ_AUDIT_ERROR,    /* could not be judged: nothing proven */
	KJ_AUDIT_SKIPPED   /* not asked for (struct kj_audit_opts' only) */
};

/* "n/a", "fail", "pass", "error", "skipped".  Static storage. */
const char *kj_audit_outcome_name(enum kj_audit_outcome o);

struct kj_audit_opts {
	const char *device;  /* "cuda", "cuda:N", "cpu"; NULL: cuda when there is one */
	double timeout_s;    /* per request of a case, and the measurement's own
			      * (0: 900) */
	int jobs;            /* canaries judged at once (< 1: 1) */
	unsigned only;       /* bit c: canary c is judged; 0: every canary */
};

/* A task's audit.  Strings and JSON owned by it (kj_audit_release). */
struct kj_audit_result {
	char task[256];
	char device[16];                 /* where it ran, as the pipeline said */
	enum kj_audit_outcome canary[KJ_AUDIT_N_];
	int weak;                        /* some canary passed */
	int errors;                      /* canaries that could not be judged */
	int cached;                      /* read from the audit's cache (an audit
					  * of the same task content, judge
					  * version and options, every canary
					  * judged), not judged now */
	json_t *reasons;                 /* [TEXT, ...]: why weak, why not judged */
	json_t *measure;                 /* the measurement's reply ({"cases": [...]}) */
	double lowp_ratio[2];            /* float16, bfloat16: the larger of MERE / its
					  * limit and MARE / its limit over the cases
					  * (< 1: within the thresholds); NaN: n/a */
};

void kj_audit_result_init(struct kj_audit_result *r);
void kj_audit_result_release(struct kj_audit_result *r);

/*
 * Audit the task named `name` (its file task_file, its cases file
 * cases_file or NULL) under cfg, or read its audit from the cache in
 * cfg->cache_dir/audit/ (kept by the task's content, the judge's version
 * and o; docs/AUDIT.md).  KJ_OK with r filled (weak or not,
 * canaries that could not be judged in r->errors and r->reasons); a code
 * with err filled when the task itself cannot be audited (it does not
 * load, the measurement fails: the task's or the machine's), r then holds
 * what was known.  Interrupted: KJ_EINTR.
 */
int kj_audit_task(const struct kj_config *cfg, const struct kj_audit_opts *o, const char *name,
		  const char *task_file, const char *cases_file, struct kj_audit_result *r,
		  struct kj_error *err);

/* The key of the audit of the task file task_file (its cases file
 * cases_file or NULL) under cfg and o: the SHA-256 of the judge's version,
 * both files' contents, the canaries' module, o's device, canaries and
 * timeout, in hex; the audit's cache keeps it by this key, and eval's store
 * (struct kj_store_audit's audit_key).  KJ_OK, or a code with err filled
 * (a file that cannot be read, the canaries' module missing). */
int kj_audit_key(const struct kj_config *cfg, const struct kj_audit_opts *o,
		 const char *task_file, const char *cases_file, char key[65], struct kj_error *err);

/* The task's entry of `kjudge audit --json`: {"task", "weak", "canaries":
 * {"zeros": "fail"|"pass"|"n/a"|"error", ..., "lowp": ...}, "reasons",
 * "headroom", "cases"}.  New reference, NULL when out of memory. */
json_t *kj_audit_json(const struct kj_audit_result *r);

/*
 * The speed of light of every case of a task, for the benchmark
 * (docs/AUDIT.md, "The speed of light"): the audit's measurement step with
 * no canary, on `device` (NULL: cuda when there is one), under timeout_s
 * (0: 900).  *out (a new reference, the caller's): {"device_name",
 * "peaks", "cases": [{"sol_ms": ms or null, "why" (with null), "flops",
 * "bytes", "dtype", "peak_flops_per_s", "copy_bytes_per_s",
 * "device_name", "torch"}]}, kept in cfg->cache_dir's audit/ by the
 * task's content, the judge's version, the Python and the device.  KJ_OK,
 * or a code with err filled (the step failed: no figure at all).
 */
int kj_audit_sol(const struct kj_config *cfg, const char *device, double timeout_s,
		 const char *task_file, const char *cases_file, json_t **out, struct kj_error *err);

#endif /* KJUDGE_AUDIT_H */
