/*
 * kjudge/pipeline.h - judging a task's candidate: the attempt, the verify
 * and benchmark loops, the seeds and the golden cache they share, and the
 * typed result every view (verify_result.json, the perf JSON, exit codes,
 * the L1 gate, a results store) is computed from.
 *
 * Theory of operation.
 *
 *   CLI: kj_config from flags + environment
 *     kj_attempt_open      scratch directory (a private tmpfs where allowed),
 *                          the golden cache (the run's own in the scratch
 *                          when it is off), a stage directory in it
 *     runner's open        a struct kj_task: two sides (kjudge/runner.h),
 *                          the task's and the candidate's hashes, its cases
 *     kj_verify / kj_benchmark
 *       for each case (and each input set, with its secret seed):
 *         golden outputs: a checked cache entry, or the reference's run
 *         candidate: run (or timed), outputs compared by the judge
 *         -> struct kj_case, handed to hooks->on_case before the next case
 *     views                kj_verify_json / kj_perf_json, kj_verify_exit
 *     kj_task_close, kj_attempt_close
 *
 * The loops know nothing of torch: every runner that judges by comparing
 * outputs sits under them through struct kj_side_ops.
 *
 * Failure handling (fail closed): a case's outcome is a type from the table
 * of kjudge/verdict.h.  When the judge itself fails (out of memory, one of
 * its own files, a hook that cannot record, an interrupt) the loop stops and
 * returns the code: the cases not reached stay "NotJudged", the ones it
 * passed become "JudgeError" (no view of a run the judge could not finish
 * counts a case as passed), and the run is a judge error.  A result with no
 * cases is a judge error too.  A machine failure that leaves the judge sound (a worker that
 * could not be restarted) makes the affected cases judge errors and the run
 * goes on; the result counts them in infra_errors.
 */
#ifndef KJUDGE_PIPELINE_H
#define KJUDGE_PIPELINE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "kjudge/compare.h"
#include "kjudge/config.h"
#include "kjudge/error.h"
#include "kjudge/runner.h"
#include "kjudge/verdict.h"

/* --- the attempt: where a run's files go ---------------------------------------- */

struct kj_cache;

struct kj_attempt {
	const struct kj_config *cfg;
	char scratch[PATH_MAX];    /* the run's own directory */
	const char *scratch_kind;  /* "shared", "private-tmpfs", "private-tmpfs-huge" */
	char stage[PATH_MAX];      /* reference outputs, in the cache's file system */
	struct kj_cache *cache;    /* the golden cache: cfg->cache_dir, or without
				    * one the run's own in scratch/golden, gone
				    * with the run */
	double t0;                 /* when it began (monotonic seconds) */
	json_t *timings;           /* kjudge.timings: where the time went */
	uint64_t key[4];           /* the judge's secret key (kj_seed_key): signs records */
	uint64_t run_key[4];       /* this run's seeds' key (kj_seed_run_key): fresh
				    * for every run, so a seed printed in a failure
				    * record is worthless to the next run */
	int have_key;
	int run_key_shared;        /* run_key is a batch's (kj_seed_run_key with a
				    * batch): the goldens of its sets serve the
				    * batch's later attempts and stay in the cache;
				    * 0 (fresh): they are this run's alone, and
				    * leave the cache when the attempt closes
				    * (unless the seeds are fixed) */
	int broken;                /* something of the judge's own could not be
				    * recorded: the run ends as a judge error */
};

/* Make the scratch directory (sweeping those of judges that died), open
 * the cache and its stage directory.  On error nothing is left. */
int kj_attempt_open(struct kj_attempt *a, const struct kj_config *cfg,
		    struct kj_error *err);
/* Remove everything the attempt made (the cache's entries stay, but
 * those no later run can find: see run_key_shared). */
void kj_attempt_close(struct kj_attempt *a);
/* Add s seconds to kjudge.timings[key]. */
void kj_attempt_tally(struct kj_attempt *a, const char *key, double s);
/* Add a reply's phases to kjudge.timings[who]. */
void kj_attempt_tally_phases(struct kj_attempt *a, const char *who, const json_t *phases);

/* --- the task: what a runner opened ------------------------------------------------ */

struct kj_task {
	const char *name;               /* the operator's name (the caller's) */
	char task_file[PATH_MAX];
	char cand_file[PATH_MAX];
	char task_sha256[65];           /* SHA-256 of the task file */
	char cand_sha256[65];           /* of the candidate file; "" when none */
	int have_candidate;
	int n_cases;
	/* The task's cases file ({op}_cases.json beside the task file; its
	 * format in docs/cli.md): its path and the SHA-256 of the bytes that
	 * were parsed, "" when the task has none.  With one, case_params is
	 * an array of n_cases objects, each case's parameters {axis: value}
	 * in axis order (the keyword arguments of the task's get_inputs() and
	 * get_init_inputs() on both sides, and "params" in every record of
	 * the case); NULL without one.  Owned by the task: the runner's close
	 * (kj_task_close) releases it. */
	char cases_file[PATH_MAX];
	char cases_sha256[65];
	json_t *case_params;
	/* The task's identity for seeds and golden cache keys: task_sha256
	 * without a cases file, else the SHA-256 of "task_sha256|cases_sha256"
	 * (so a changed cases file never reuses goldens or seeds); "" means
	 * task_sha256 (kj_task_identity). */
	char identity[65];
	struct kj_side ref, cand;
	char device[16];                /* "cpu", "cuda", "cuda:N" */
	char device_key[512];           /* device, its model, runtime versions:
					 * part of every cache key */
	json_t *env;                    /* versions, device, driver, clocks */
	/* Who a failed start is charged to, said by the runner where it
	 * knows: KJ_CHARGE_TASK when the task itself failed (its reference
	 * did not load, it has no cases); KJ_CHARGE_NONE when it did not say
	 * (kj_task_start_charged). */
	enum kj_charge start_charge;
	void *impl;                     /* the runner's */
	int (*start)(struct kj_task *t, struct kj_error *err);
	void (*close)(struct kj_task *t);
};

/*
 * Start the task's workers (the reference and, when there is one, the
 * candidate, side by side) and load them: fills n_cases, device,
 * device_key and env.  A task that cannot be loaded, a device that is not
 * there, a Python without torch: a code with err filled (the judge's input
 * error, exit 2).  A candidate that cannot be loaded is not an error here
 * (t->cand.load_failure says why; every case reports it).
 */
struct kj_judge_opts;
int kj_task_start(struct kj_task *t, const struct kj_attempt *a, const struct kj_judge_opts *o,
		  struct kj_error *err);

/*
 * Who is charged with kj_task_start()'s outcome rc: KJ_CHARGE_NONE for
 * KJ_OK, KJ_CHARGE_TASK when the start refused the task itself (KJ_EINVAL
 * with the runner's start_charge saying so: a reference that does not
 * load, a task without cases), else KJ_CHARGE_JUDGE (a worker that could
 * not start, a device that is not there: the machine's).  Decided from
 * what the runner recorded, never from the words of its message.
 */
enum kj_charge kj_task_start_charged(const struct kj_task *t, int rc);

/* Stop both sides and free the runner's state. */
void kj_task_close(struct kj_task *t);

/* The task's identity (kj_task.identity, else its task_sha256): what seeds
 * and golden cache keys are derived from.  Points into t. */
const char *kj_task_identity(const struct kj_task *t);

/* --- secret seeds ---------------------------------------------------------------- */

/*
 * The judge's secret key, kept in state_dir/seed-key (mode 0600, created
 * on first use, published atomically so two judges starting together agree).
 * Returns KJ_OK or a code with err filled.
 */
int kj_seed_key(const char *state_dir, uint64_t key[4], struct kj_error *err);

/*
 * A key for one run's seeds: the judge's key mixed with 16 fresh random
 * bytes (or with `batch`, 16 bytes an eval batch shares, when not NULL, so
 * that all candidates of a task in one batch see the same inputs and share
 * golden outputs).  KJ_OK or KJ_EIO (no random bytes).
 */
int kj_seed_run_key(const uint64_t key[4], const unsigned char *batch, uint64_t run_key[4],
		    struct kj_error *err);

/* The seed of input set `set` of case `case_idx` of the task whose file
 * hashes to task_sha256, under a run key: unknown to anyone without it. */
uint64_t kj_seed_derive(const uint64_t key[4], const char *task_sha256, int case_idx,
			int set);

/* --- judging ------------------------------------------------------------------------- */

struct kj_judge_opts {
	double timeout_s;               /* per case and side; default 900 */
	int input_sets;                 /* per case (secret seeds); default 2 */
	int seed_fixed;                 /* one given seed for every case */
	uint64_t seed;
	struct kj_cmp_options cmp;      /* rules and threads */
};

/* verify's defaults: exact integers, the seed's float64 rule. */
void kj_judge_opts_init(struct kj_judge_opts *o);

/*
 * How a case is timed.  The reference and the candidate are timed in the
 * same run, in interleaved rounds (a round of the reference, then one of the
 * candidate, ...), each with the other side frozen; the timed calls cycle
 * through `timed_sets` input sets that verify never used, and every timed
 * output is compared with its set's golden one.  Timing goes on until both
 * sides have at least `repeats` samples and the 95 % interval of each
 * median is within `target_ci` of it, or `budget_s` is spent, or
 * `max_repeats` samples are taken: a time budget per case rather than a
 * fixed count.  Before the first sample each side runs `warmup` untimed
 * calls, and more until 200 ms of them have run (clocks settle).
 */
struct kj_bench_opts {
	int warmup;                     /* untimed calls first; default 5 */
	int repeats;                    /* the fewest timed calls per side; default 50 */
	int max_repeats;                /* the most; default 100000 */
	double budget_s;                /* seconds of timing per case; default 10 */
	double target_ci;               /* relative half-width of the 95 % interval
					 * of each median to stop at; default 0.01 */
	int timed_sets;                 /* input sets the timed calls cycle through;
					 * default 4 */
	size_t flush_bytes;             /* default 256 MiB */
	int skip_framework;             /* use framework_latency_ms for the reference */
	double framework_latency_ms;
	/* The baseline's figure per case (kj_latency.judge_ms), measured
	 * earlier in the batch (eval
	 * shares one baseline among a task's candidates, so their speedups
	 * have one denominator): a case k < n_ref_ms with ref_ms[k] > 0 is
	 * timed on the candidate's side only, its reference latency that
	 * value (kj_case.ref_given and ref_cached set).  NULL: none.
	 * Borrowed: the caller's, for the call. */
	const double *ref_ms;
	int n_ref_ms;
	/* The harness's cost per timed call the reference's worker measured
	 * with that baseline (kj_latency.overhead_ms), per case as ref_ms:
	 * the candidate's judge_ms is its rounds' wall time less this.  A
	 * case without one (0, or NULL) measures it again with rounds of
	 * empty calls on the reference's worker. */
	const double *ref_over_ms;
	/* The same baseline's samples' median per case, for the speedup's
	 * samples' side (0 or NULL: ref_ms stands for it). */
	const double *ref_median_ms;
	/* Per case as ref_ms: 1 where ref_over_ms was measured in queued
	 * rounds, 0 in synced ones (NULL: all synced).  A case whose rounds
	 * run the other way measures the harness's cost again with empty
	 * calls: the two ways' costs differ. */
	const double *ref_queued;
	/* The task's speed of light (kj_audit_sol's object: "cases", one
	 * {"sol_ms", ...} per case), borrowed for the call; NULL: none, and
	 * sol_why says why (NULL: "not measured").  Each case's record
	 * carries its entry, and a candidate faster than it beyond the
	 * margin is TimingImpossible (docs/cli.md, "The speed of light"). */
	const json_t *sol;
	const char *sol_why;
	/* How the timed rounds run (docs/cli.md, "Queued rounds"):
	 * KJ_ROUNDS_AUTO (the default) queued on a GPU and synced on the
	 * CPU; KJ_ROUNDS_QUEUED each round's calls put on the device one
	 * after another, one wait after the last; KJ_ROUNDS_SYNCED a wait
	 * after every call. */
	int rounds;
};

enum { KJ_ROUNDS_AUTO = 0, KJ_ROUNDS_QUEUED = 1, KJ_ROUNDS_SYNCED = 2 };

/* The modes' names, indexed by KJ_ROUNDS_*, NULL-terminated (the CLI's
 * choices); a name -> KJ_ROUNDS_*, -1 for any other; and back (a static
 * string). */
extern const char *const kj_rounds_names[];
int kj_rounds_from_name(const char *name);
const char *kj_rounds_name(int rounds);

void kj_bench_opts_init(struct kj_bench_opts *b);

struct kj_result;

/* Called after every case, before the next: a store records it here.
 * Returning non-zero stops the run (a judge error: err says why). */
struct kj_hooks {
	void *ctx;
	int (*on_case)(void *ctx, const struct kj_task *t, const struct kj_result *r,
		       const struct kj_case *c, struct kj_error *err);
};

struct kj_result {
	int benchmark;                  /* 0 verify, 1 benchmark */
	int n_cases;
	struct kj_case *cases;          /* n_cases, index order */
	int input_sets;
	int seed_fixed;
	struct kj_cmp_options cmp;
	int infra_errors;               /* cases the machine failed */
	int from_cache;                 /* golden runs / reference timings reused */
	int timed_out;                  /* some side hit its time limit */
	int device_memory;              /* some side failed saying the device's
					 * memory ran out (kj_reply.device_memory):
					 * where other attempts shared the device,
					 * eval judges the attempt again alone */
	json_t *warnings;               /* [{case_idx, warning, aliases}] */
	json_t *timings;                /* kjudge.timings */
	json_t *limits;                 /* the limits in force */
	/* The anti-cheat layers' members of the record's "kjudge" object
	 * ("static", "strict"; kjudge/anticheat.h), set by the caller before
	 * the record is made, so that the signature covers them; NULL: none.
	 * Owned: kj_result_release() drops it. */
	json_t *anticheat;
	int sandboxed;
	const char *scratch_kind;
	double timeout_s;
	struct kj_bench_opts bench;     /* benchmark's settings */
	double copy_gbs, launch_ms;     /* the device's limits (benchmark) */
};

void kj_result_init(struct kj_result *r);
void kj_result_release(struct kj_result *r);

/*
 * Verify the candidate against the reference on every case.  Returns KJ_OK
 * with res filled (every case judged) or a code with err filled when the
 * run stopped (res then holds what was judged; the rest is NotJudged).
 * Before anything runs: KJ_EINVAL when the task has no cases.
 */
int kj_verify(struct kj_task *t, struct kj_attempt *a, const struct kj_judge_opts *o,
	      const struct kj_hooks *hooks, struct kj_result *res, struct kj_error *err);

/* Benchmark the candidate (the caller applies the gate first).  Per case:
 * golden outputs of an input set verify never used, the reference's
 * latency (unless skip_framework), the candidate's, every distinct timed
 * output compared with the golden ones.  Same returns as kj_verify. */
int kj_benchmark(struct kj_task *t, struct kj_attempt *a, const struct kj_judge_opts *o,
		 const struct kj_bench_opts *b, const struct kj_hooks *hooks,
		 struct kj_result *res, struct kj_error *err);

/* --- views ------------------------------------------------------------------------ */

/*
 * verify_result.json (triton-op-verifier's fields, and kjudge's own under
 * "kjudge"; docs/cli.md), signed with the judge's key so the gate can tell
 * it from a hand-made one.  A new reference, or NULL with err filled.
 */
json_t *kj_verify_json(const struct kj_task *t, const struct kj_attempt *a,
		       const struct kj_result *r, struct kj_error *err);

/* benchmark.py's perf JSON, from the same typed cases. */
json_t *kj_perf_json(const struct kj_task *t, const struct kj_attempt *a,
		     const struct kj_result *r, struct kj_error *err);

/*
 * KernelBench's figures of one side of an attempt's timed cases (its
 * result's runtime and runtime_stats, or ref_runtime and ref_runtime_stats)
 * from l[0..n-1], one latency per case.  The unit is KernelBench's,
 * milliseconds (what every one of its timing functions returns).  The
 * runtime is the judge's figure, the median (every speedup of kjudge's is
 * of medians), of several cases their geometric mean; the object has
 * KernelBench's keys where they are known (mean, std, min, max,
 * num_trials; NAN or 0 in l is unknown) and "median", with several cases
 * "cases" and no std.  When a case has no median, *runtime is -1.0 and the
 * object empty, as KernelBench writes a runtime it did not measure.  A new
 * object, or NULL when out of memory.
 */
json_t *kj_kb_runtime_stats(const struct kj_latency *l, size_t n, double *runtime);

/* The verdict of a verify run: 0 every case passed, 1 the candidate failed
 * some case, 2 a task or judge error (not the candidate's; nothing to
 * charge).  *why (may be NULL) gets a line for the user when not 0. */
int kj_verify_exit(const struct kj_result *r, char *why, size_t size);

/*
 * The case of r that decides its verdict, in the order that charges: the
 * first the candidate failed, else the first task error, else the first
 * judge error; NULL when every case passed (or there is none).  *worst
 * (may be NULL) gets its status, KJ_STATUS_PASS with NULL.  Points into r.
 */
const struct kj_case *kj_result_first(const struct kj_result *r, enum kj_status *worst);

/* Counts of a result by status. */
void kj_result_counts(const struct kj_result *r, int *passed, int *failed, int *task_errors,
		      int *judge_errors);

/* --- the L1 gate ----------------------------------------------------------------------- */

struct kj_gate_opts {
	int allow_fixed_seeds;          /* accept a verify run with --seed */
	const char *device;             /* the benchmark's device, or NULL: checked later */
	int strict;                     /* accept only a verify --strict record that passed */
};

/*
 * Decide whether the verify record at `path` lets this candidate be
 * benchmarked: it must be a record this judge signed, of this candidate file
 * and this task file (SHA-256), with secret seeds (unless allowed), no task,
 * judge or machine errors, every case passed (recomputed from its fields,
 * not from its counts alone), and, when o->device is set, the same device.
 * Returns 0 accepted, 1 refused with `why` filled (one line, then up to
 * five failures of the record), or a code (KJ_ENOENT when the record does
 * not exist, KJ_EIO, KJ_EPROTOCOL when it is not JSON) with err filled.
 * *record_device (may be NULL) gets the record's device.
 */
int kj_gate_check(const char *path, const struct kj_task *t, const uint64_t key[4],
		  const struct kj_gate_opts *o, char *why, size_t size,
		  char *record_device, size_t dsize, struct kj_error *err);

/*
 * The name of the record the gate reads for the candidate suffix impl (the
 * seed's table): verify_result.json for triton_ascend_impl,
 * verify_result_<x>.json for triton_<x>, verify_result_<impl>.json for any
 * other.  verify writes it by default, so that benchmark of the same
 * --triton_impl_name finds it.  Returns 0, or -1 when it does not fit.
 */
int kj_gate_record_name(const char *impl, char *buf, size_t size);

#endif /* KJUDGE_PIPELINE_H */
