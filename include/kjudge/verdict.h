/*
 * kjudge/verdict.h - what one case of a judged attempt came to, as typed
 * data that fails closed.
 *
 * Every case ends as a struct kj_case with a status and an error type from
 * the one table below.  The table says, for each type, what it means and
 * who is charged with it: the candidate (a failure: the candidate did
 * something wrong), the task (its reference or its input generators failed:
 * nobody's candidate is to blame), or the judge (the machine or kjudge
 * itself failed: the run is a judge error, exit 2, and nothing is charged to
 * anyone).  The status follows from the type.
 *
 * A pass is established, never inferred.  A case starts out as a judge
 * error ("not judged"); it becomes a pass only through kj_case_pass(),
 * which demands that the comparison positively said so for every output the
 * reference produced.  Every other way out of a case sets a type from the
 * table.  An error while running, comparing or recording therefore leaves a
 * failure or a judge error behind, never a pass.
 *
 * Error types that charge the task or the judge are set only by the judge:
 * what a worker reports is mapped onto the candidate's types, and the
 * candidate's own exception class (which it may name as it likes, even
 * "SandboxError") is kept in a field of its own, `exception`.
 *
 * Ownership: struct kj_case is caller-owned; kj_case_init() makes it
 * empty, kj_case_release() frees what it holds.  Strings set through the
 * functions below are copied (after cleaning: valid UTF-8, bounded).
 */
#ifndef KJUDGE_VERDICT_H
#define KJUDGE_VERDICT_H

#include <stdint.h>

#include <jansson.h>

#include "kjudge/error.h"

enum kj_status {
	KJ_STATUS_PASS = 0,
	KJ_STATUS_FAIL,        /* the candidate is charged */
	KJ_STATUS_TASK_ERROR,  /* the task is charged */
	KJ_STATUS_JUDGE_ERROR, /* the judge or the machine */
};

enum kj_charge { KJ_CHARGE_NONE, KJ_CHARGE_CANDIDATE, KJ_CHARGE_TASK, KJ_CHARGE_JUDGE };

/*
 * Failure categories, for breakdowns across many attempts (the metrics of
 * kjudge eval): where in its life an attempt failed.
 */
#define KJ_CATEGORY_MAP(X)                                                        \
	X(NONE, "none")                                                           \
	X(STATIC, "static")      /* the static check (validate) */                \
	X(BUILD, "build")        /* loading, compiling, constructing */           \
	X(RUNTIME, "runtime")    /* raised, crashed, broke a rule while running */ \
	X(ACCURACY, "accuracy")  /* ran, and the outputs are wrong */             \
	X(TIMEOUT, "timeout")    /* wall or CPU time */                           \
	X(LIMIT, "limit")        /* memory, output and other sandbox limits */    \
	X(TIMING, "timing")      /* the timing checks */                          \
	X(TASK, "task")          /* the task's own failure */                     \
	X(JUDGE, "judge")        /* the judge's or the machine's */         \
	X(ANTICHEAT, "anticheat") /* a pass the anti-cheat layers refused */

enum kj_category {
#define KJ__CAT_ENUM(e, name) KJ_CAT_##e,
	KJ_CATEGORY_MAP(KJ__CAT_ENUM)
#undef KJ__CAT_ENUM
};

/*
 * X(ENUM, "Name", CHARGE, CATEGORY, "what it means").  The names are what
 * error_type says in every record; the seed's own names are kept where the
 * seed has one (AccuracyError, AssertionError for an output count that
 * differs).  Append only: the numbers are stored.
 */
#define KJ_VERDICT_MAP(X)                                                                   \
	X(NONE, "", NONE, NONE, "the case passed")                                          \
	X(ACCURACY, "AccuracyError", CANDIDATE, ACCURACY,                                   \
	  "an output differs from the reference's beyond the comparison rule")              \
	X(OUTPUT_TYPE, "OutputTypeMismatch", CANDIDATE, ACCURACY,                           \
	  "an output is of another kind or structure than the reference's")                 \
	X(OUTPUT_COUNT, "AssertionError", CANDIDATE, ACCURACY,                              \
	  "the candidate returned another number of outputs than the reference")            \
	X(INPUT_MODIFIED, "InputModified", CANDIDATE, RUNTIME,                              \
	  "the candidate wrote into its input tensors")                                     \
	X(TIMED_MISMATCH, "TimedOutputMismatch", CANDIDATE, TIMING,                         \
	  "an output of a timed call differs from the reference's")                         \
	X(NO_CANDIDATE, "CandidateNotFound", CANDIDATE, BUILD,                              \
	  "there is no candidate file")                                                     \
	X(LOAD, "LoadError", CANDIDATE, BUILD,                                              \
	  "the candidate could not be imported or its model not constructed")               \
	X(COMPILE, "CompilationError", CANDIDATE, BUILD,                                    \
	  "a kernel of the candidate did not compile")                                      \
	X(FORWARD, "ForwardError", CANDIDATE, RUNTIME,                                      \
	  "the candidate's forward raised an exception")                                    \
	X(CUDA, "CUDAError", CANDIDATE, RUNTIME,                                            \
	  "the candidate caused a CUDA error (sticky: its worker was replaced)")            \
	X(CRASH, "WorkerCrashed", CANDIDATE, RUNTIME,                                       \
	  "the candidate's worker died (a signal, an exit) before it replied")              \
	X(PROTOCOL, "ProtocolError", CANDIDATE, RUNTIME,                                    \
	  "the candidate's worker broke the protocol (a malformed reply, an output "        \
	  "that is not a plain file in its directory)")                                     \
	X(TIMEOUT, "Timeout", CANDIDATE, TIMEOUT,                                           \
	  "the candidate did not finish within the time limit")                             \
	X(CPU_LIMIT, "CPUTimeLimitExceeded", CANDIDATE, TIMEOUT,                            \
	  "the candidate used more CPU time than allowed")                                  \
	X(MEMORY_LIMIT, "MemoryLimitExceeded", CANDIDATE, LIMIT,                            \
	  "the candidate used more memory than allowed")                                    \
	X(OUTPUT_LIMIT, "OutputLimitExceeded", CANDIDATE, LIMIT,                            \
	  "the candidate printed more than allowed")                                        \
	X(TASK_INPUTS, "TaskInputError", CANDIDATE, RUNTIME,                                \
	  "the task's input generators failed in the candidate's worker only (the "         \
	  "candidate changed something they use)")                                          \
	X(REFERENCE, "ReferenceError", TASK, TASK,                                          \
	  "the task's reference failed on the case (raised, crashed, timed out)")           \
	X(TASK, "TaskError", TASK, TASK,                                                    \
	  "the task itself is broken: its input generators raise, or it has no outputs")    \
	X(UNSUPPORTED, "UnsupportedOutput", TASK, TASK,                                     \
	  "the reference returns an output kjudge cannot compare (complex tensors, "        \
	  "objects)")                                                                       \
	X(SANDBOX, "SandboxError", JUDGE, JUDGE,                                            \
	  "the sandbox could not be set up")                                                \
	X(SPAWN, "SpawnError", JUDGE, JUDGE, "a worker process could not be started")       \
	X(JUDGE, "JudgeError", JUDGE, JUDGE,                                                \
	  "the judge failed: out of memory, its own files, a record it could not build")    \
	X(NOT_JUDGED, "NotJudged", JUDGE, JUDGE,                                            \
	  "the case was never judged (the run stopped before it)")                          \
	X(TAMPERED, "HarnessTampered", CANDIDATE, TIMING,                                   \
	  "the candidate replaced something the worker's harness relies on")                \
	X(LAZY_OUTPUT, "LazyOutput", CANDIDATE, TIMING,                                     \
	  "an output is a tensor subclass or another object whose work could run when "     \
	  "it is read, outside the timed region")                                           \
	X(TIMING_MISMATCH, "TimingMismatch", CANDIDATE, TIMING,                             \
	  "the judge's own clock saw time that the candidate's timings do not account for") \
	X(TIMING_IMPOSSIBLE, "TimingImpossible", CANDIDATE, TIMING,                         \
	  "a timed call was faster than the device can launch a kernel or write the "       \
	  "call's outputs")                                                                 \
	X(REPLAY, "ReplayDetected", CANDIDATE, TIMING,                                      \
	  "the candidate was fast only on inputs it had seen before: on new ones its "      \
	  "calls took several times its median")                                            \
	X(L2_PERSIST, "L2PersistenceSet", CANDIDATE, TIMING,                                \
	  "a timed call left persisting-L2 state set (the persisting L2 limit, or an "      \
	  "access policy window on the timed stream), which keeps data in the L2 cache "    \
	  "across the flush between calls")                                             \
	/* Attempt-level types: what eval (and verify's --strict) writes of a */        \
	/* whole attempt, never of one case. */                                         \
	X(STATIC_CHECK, "StaticCheck", CANDIDATE, STATIC,                                   \
	  "the static check (validate) refused the candidate's source")                     \
	X(KERNELS_NOT_USED, "KernelsNotUsed", CANDIDATE, ANTICHEAT,                         \
	  "the candidate still passed with its own kernels disabled")                       \
	X(NO_OWN_KERNEL, "NoOwnKernel", CANDIDATE, ANTICHEAT,                               \
	  "the profiler saw none of the candidate's own kernels run")                       \
	X(BASELINE_FAILED, "BaselineFailed", TASK, TASK,                                    \
	  "the spec's own reference does not pass its oracle: no translation is judged")    \
	X(NO_TARGET, "NO_TARGET", CANDIDATE, BUILD,                                         \
	  "the translation has no file of the target spec's translation_targets")

enum kj_etype {
#define KJ__ET_ENUM(e, name, charge, cat, text) KJ_ET_##e,
	KJ_VERDICT_MAP(KJ__ET_ENUM)
#undef KJ__ET_ENUM
	KJ_ET_COUNT_
};

const char *kj_etype_name(enum kj_etype t);     /* "AccuracyError" */
const char *kj_etype_text(enum kj_etype t);     /* what it means */
enum kj_charge kj_etype_charge(enum kj_etype t);
enum kj_category kj_etype_category(enum kj_etype t);
enum kj_status kj_etype_status(enum kj_etype t);
/* The type of a name, or -1 when there is none. */
int kj_etype_from_name(const char *name);

const char *kj_status_name(enum kj_status s);    /* "pass", "fail", "task_error", "judge_error" */
const char *kj_charge_name(enum kj_charge c);    /* "none", "candidate", "task", "judge" */
const char *kj_category_name(enum kj_category c);

/* Longest message a case keeps, in bytes (verify.py keeps 2000 characters). */
#define KJ_CASE_MSG_MAX 4000

/*
 * One side's timing of a case.  The samples (n, mean ... max, the median's
 * interval, escaped) are the native harness's, taken inside the side's own
 * process: a distribution to report and a figure to cross-check, never
 * what a speedup rests on.  judge_ms is the judge's own: per timed call,
 * the median over the side's rounds of the round's wall time (from the
 * request sent to the reply received, on the judge's monotonic clock) per
 * call, less the harness's cost per call measured on the reference's
 * worker (overhead_ms); the speedup is the ratio of the two sides'
 * judge_ms.  round_sample_ms is the median over the same rounds of the
 * round's mean sample: the samples' figure the cross-check compares with
 * judge_ms.
 */
struct kj_latency {
	int n;                  /* samples */
	double mean_ms, median_ms, stdev_ms, min_ms, max_ms;
	double ci_low_ms, ci_high_ms; /* 95 % interval of the median */
	double escaped_ms_total;
	double peak_memory_mb;
	char timer[24];
	int rounds;             /* timed rounds the judge's figures come from */
	double judge_ms;        /* the judge's clock (above); 0: not measured */
	double judge_ci_low_ms, judge_ci_high_ms; /* its 95 % interval */
	double round_sample_ms; /* the samples' figure per round (above) */
	double overhead_ms;     /* the harness's cost per call taken off */
};

struct kj_case {
	int index;              /* 0-based */
	int input_set;          /* 1-based set that decided the case; 0 none */
	uint64_t seed;          /* of that set */
	enum kj_etype type;     /* KJ_ET_NONE exactly when the case passed */
	char *message;          /* cleaned, owned; NULL for a pass */
	char *exception;        /* the candidate's exception class, or NULL */
	int output;             /* 1-based output that failed, 0 when none */
	int compared;           /* outputs the comparison passed */
	int expected;           /* outputs the reference produced */
	json_t *input_desc;     /* owned reference, or NULL */
	json_t *metrics;        /* the comparator's record of a failure, or NULL */
	json_t *aliases;        /* outputs that share memory with inputs, or NULL */
	/* benchmark only */
	int timed;              /* the latencies below were measured */
	struct kj_latency ref, cand;
	int ref_given;          /* ref came from --framework_latency_ms */
	int ref_cached;         /* ref came from the cache */
	double speedup;         /* the speedup (docs/cli.md, "The judge's
				 * clock"): the samples' medians' ratio
				 * within the judge's interval; NaN when
				 * undefined */
	double judge_speedup;   /* the judge's own: the median over pairs of
				 * rounds of their judge's figures' ratio */
	double judge_speedup_lo, judge_speedup_hi; /* its 95 % interval */
	int speedup_bounded;    /* the samples' ratio fell outside that
				 * interval: the speedup is its nearest end */
	double unseen_ms;       /* the fastest call on inputs the candidate had
				 * never seen (0: none made) */
	double unseen_ref_ms;   /* the same of the reference's (0: none made) */
	/* The judge's clock on those calls: each side's fastest round holding
	 * one less its fastest round of as many calls on inputs it had seen
	 * (the new inputs' making included, on both sides); set with
	 * unseen_ms */
	double unseen_excess_ms, unseen_excess_ref_ms;
	/* The cross-check of the samples against the judge's clock: each
	 * side's round_sample_ms / judge_ms (the reference's 1 when it was
	 * not timed here), and the least the candidate's may be */
	double check_ratio_ref, check_ratio_cand, check_ratio_min;
	double judge_resolution_ms; /* what the judge's figure of a call may be
				     * off by: the harness's cost per call is
				     * taken off as the reference's worker
				     * measured it (docs/cli.md) */
	int timing_rechecked;   /* the cross-check tripped once and the case
				 * was timed again */
	int rounds_queued;      /* its rounds were queued (kj_bench_opts.rounds) */
	/* The case's speed of light (docs/cli.md, "The speed of light"):
	 * sol_ms > 0 where the judge established one, else 0; sol the
	 * record's object (its figures, or why there is none), owned, or
	 * NULL where the benchmark was given none */
	double sol_ms;
	json_t *sol;
};

/* An empty case: a judge error "not judged", index i. */
void kj_case_init(struct kj_case *c, int index);
void kj_case_release(struct kj_case *c);

enum kj_status kj_case_status(const struct kj_case *c);

/*
 * Record a failure of type t with the message fmt (cleaned and bounded; a
 * message that cannot be stored still leaves the type).  Any earlier
 * verdict of the case is replaced.  Returns 0, or KJ_ENOMEM when the
 * message could not be kept (the type is set all the same).
 */
int kj_case_fail(struct kj_case *c, enum kj_etype t, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The same with the message given as bytes of untrusted text (a traceback,
 * captured output), cleaned before it is kept. */
int kj_case_fail_text(struct kj_case *c, enum kj_etype t, const char *text, size_t len);

/* Keep the candidate's exception class name (cleaned, bounded). */
int kj_case_set_exception(struct kj_case *c, const char *name);

/*
 * The case passed: every one of the `expected` outputs the reference
 * produced was compared and the comparison said so (compared == expected,
 * expected > 0).  Anything else makes the case a judge error that says
 * what was missing, and returns KJ_EINVAL.
 */
int kj_case_pass(struct kj_case *c, int compared, int expected);

#endif /* KJUDGE_VERDICT_H */
