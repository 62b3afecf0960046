/*
 * kjudge/compare.h - the MERE/MARE comparator of triton-op-verifier.
 *
 * kj_compare() decides whether an implementation's output tensor matches the
 * golden one, exactly as "Accuracy threshold description" of the
 * triton-op-verifier spec defines it, and measures by how much:
 *
 *   t    = threshold of the golden dtype (dtype.h; hifloat32 by name)
 *   rel  = |actual - golden| / max(|golden|, t)   over finite elements
 *   MERE = mean(rel), MARE = max(rel)
 *   pass iff MERE < t and MARE < 10 t
 *
 * Checks run in this order, and the first that fails decides the reason:
 *   1. shapes equal                                  KJ_CMP_SHAPE
 *   2. an actual of another dtype: every element survives the cast to the
 *      golden dtype (below)                          KJ_CMP_CAST
 *   3. NaN positions identical                       KJ_CMP_NAN
 *   4. Inf positions and signs identical             KJ_CMP_INF
 *   5. bool golden: every element equal              KJ_CMP_BOOL
 *   6. integer golden under the exact rule: every element equal
 *                                                    KJ_CMP_VALUE
 *   7. otherwise MERE/MARE over the elements finite on both sides, the
 *      actual cast to the golden dtype first, both sides promoted to float32
 *      (float64 in float64 under the float64 rule)   KJ_CMP_ACCURACY
 * No finite element at all (empty tensor, or all NaN/Inf in the same places)
 * passes, as in the original; MERE and MARE are then reported as undefined.
 *
 * Two choices of rule, in struct kj_cmp_options, each zero for the seed's:
 *
 * - Integer goldens (int8 ... int64, uint8 ... uint64).  KJ_CMP_INT_SPEC is
 *   the seed's: they go through MERE/MARE with the fallback t = 2^-13, so an
 *   argmax of 30000 that comes back as 30002 passes.  KJ_CMP_INT_EXACT
 *   compares them exactly: every element equal after the actual is cast to
 *   the golden dtype, in integer arithmetic (never through double, so int64
 *   and uint64 values beyond 2^53 compare exactly).  Bool goldens are exact
 *   under both rules.
 * - float64 goldens.  KJ_CMP_FLOAT64_SPEC is the seed's: the NaN and Inf
 *   checks on the float64 values, then both sides promoted to float32 and
 *   rel computed in float32 (finite values beyond 3.4e38 become Inf there,
 *   and fail).  KJ_CMP_FLOAT64_FLOAT64 computes rel in float64.
 *
 * The cast of the actual to the golden dtype is torch's .to(), and it must
 * lose nothing (check 2): a float with a fraction cast to an integer or
 * bool dtype, a value outside the golden dtype's range (an int64 of 2^32 + 5
 * as int32, -1 as uint8, 2 as bool, 70000 as float16, where torch would
 * keep the low bits, wrap or give Inf), or a NaN or an Inf cast to an
 * integer or bool dtype is a failure of its own, KJ_CMP_CAST, with the
 * first such elements and their values (struct kj_cmp_point's loss).  A
 * float rounded to the nearest value of a narrower float dtype loses no
 * information this check looks at: the comparison's threshold judges it.
 * (A complex tensor never reaches the comparator: it has no kj_dtype.)
 * An actual that survives the cast is compared as its cast value.
 *
 * Whatever the verdict, the result carries all figures: the counts are over
 * the whole tensor even when an earlier check already failed, so one call
 * tells a user everything there is to fix.  The result names the rules that
 * were applied.
 *
 * Speed: one pass over both tensors, no temporary copies, split over threads
 * on large tensors.  The partition into chunks does not depend on the thread
 * count, so the figures are bit-identical whatever `threads` is.
 */
#ifndef KJUDGE_COMPARE_H
#define KJUDGE_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "kjudge/error.h"
#include "kjudge/tensor.h"

/* Why a comparison failed (KJ_CMP_PASS when it did not). */
#define KJ_CMP_REASON_MAP(X)                                              \
	X(PASS, "pass", "outputs match")                                  \
	X(SHAPE, "shape_mismatch", "shapes differ")                       \
	X(CAST, "lossy_cast", "the cast to the golden dtype loses information") \
	X(NAN, "nan_mismatch", "NaN positions differ")                    \
	X(INF, "inf_mismatch", "Inf positions or signs differ")           \
	X(BOOL, "bool_mismatch", "bool elements differ")                  \
	X(VALUE, "value_mismatch", "integer elements differ")             \
	X(ACCURACY, "accuracy", "error above threshold")

enum kj_cmp_reason {
#define KJ__CMP_ENUM(e, name, text) KJ_CMP_##e,
	KJ_CMP_REASON_MAP(KJ__CMP_ENUM)
#undef KJ__CMP_ENUM
	KJ_CMP_REASON_COUNT_
};

/* Stable machine name ("nan_mismatch") and a short human text. */
const char *kj_cmp_reason_name(enum kj_cmp_reason r);
const char *kj_cmp_reason_text(enum kj_cmp_reason r);

/* How integer goldens are compared (see the top of this file). */
enum kj_cmp_int_rule {
	KJ_CMP_INT_SPEC = 0, /* "spec": the seed's MERE/MARE with t = 2^-13 */
	KJ_CMP_INT_EXACT     /* "exact": every element equal */
};

/* How float64 goldens are compared. */
enum kj_cmp_float64_rule {
	KJ_CMP_FLOAT64_SPEC = 0, /* "spec": promoted to float32, as the seed */
	KJ_CMP_FLOAT64_FLOAT64   /* "float64": rel computed in float64 */
};

/* The rules' names ("spec", "exact", "float64"); "?" for a value out of
 * range.  Static storage. */
const char *kj_cmp_int_rule_name(enum kj_cmp_int_rule r);
const char *kj_cmp_float64_rule_name(enum kj_cmp_float64_rule r);

/*
 * Parse a rule's name into *rule.  Returns KJ_OK, or KJ_EINVAL with err
 * filled ("unknown int rule 'x' (expected spec or exact)") and *rule
 * unchanged, so that every command parses and words them the same way.
 */
int kj_cmp_int_rule_from_name(const char *name, enum kj_cmp_int_rule *rule,
			      struct kj_error *err);
int kj_cmp_float64_rule_from_name(const char *name,
				  enum kj_cmp_float64_rule *rule,
				  struct kj_error *err);

/* How many worst positions a result keeps. */
#define KJ_CMP_WORST 8

/* What kind of position a struct kj_cmp_point describes. */
enum kj_cmp_point_kind {
	KJ_CMP_POINT_REL = 0,   /* a finite element, ranked by rel error */
	KJ_CMP_POINT_NAN,       /* NaN on one side only */
	KJ_CMP_POINT_INF,       /* Inf on one side only, or Infs of other sign */
	KJ_CMP_POINT_BOOL,      /* bool elements that differ */
	KJ_CMP_POINT_VALUE,     /* integer elements that differ (exact rule) */
	KJ_CMP_POINT_CAST       /* an actual element the cast does not keep */
};

/* How the cast of an actual element to the golden dtype loses it. */
enum kj_cmp_loss {
	KJ_CMP_LOSS_NONE = 0,
	KJ_CMP_LOSS_FRACTION,   /* a float with a fraction, to an integer or bool */
	KJ_CMP_LOSS_RANGE,      /* beyond what the golden dtype holds */
	KJ_CMP_LOSS_NONFINITE   /* NaN or Inf, to an integer or bool */
};

/* "fraction", "range", "nonfinite" ("none").  Static storage. */
const char *kj_cmp_loss_name(enum kj_cmp_loss l);

struct kj_cmp_point {
	enum kj_cmp_point_kind kind;
	size_t flat;            /* flat index in storage order */
	int64_t index[KJ_MAX_DIMS]; /* multi-index, first ndim entries used */
	double golden, actual;  /* values as compared (actual after the cast) */
	double rel;             /* rel error; NaN for non-REL points.  An
				 * actual value that the cast to the golden
				 * dtype turns into NaN, or that an integer
				 * golden dtype cannot hold, counts as rel =
				 * Inf. */
	/* Integer golden: golden_int is the golden's exact value (golden is
	 * its nearest double) and, when exact is 1, actual_int the actual's
	 * after the cast.  exact is 0 when there is no such integer (a NaN,
	 * an Inf or a float the golden dtype cannot hold: actual is then the
	 * value as loaded).  For a uint64 golden read both as (uint64_t). */
	int exact;
	int64_t golden_int, actual_int;
	/* KJ_CMP_POINT_CAST: how the cast loses the element.  actual is then
	 * the value as loaded, and when exact is 1 (an integer or bool actual)
	 * actual_int is its exact value in the actual's dtype (for a uint64
	 * read it as (uint64_t)). */
	enum kj_cmp_loss loss;
};

struct kj_cmp_options {
	/* Threshold dtype name, e.g. "hifloat32".  NULL: the golden dtype. */
	const char *threshold_dtype;
	/* Worker threads; 0 picks the number of online CPUs (at most 16). */
	int threads;
	/* The rules for integer and float64 goldens; zero is the seed's. */
	enum kj_cmp_int_rule int_rule;
	enum kj_cmp_float64_rule float64_rule;
};

struct kj_cmp_result {
	int pass;                  /* 1 iff reason == KJ_CMP_PASS */
	enum kj_cmp_reason reason; /* the first check that failed */
	char message[512];         /* one line a person can act on */

	enum kj_dtype golden_dtype, actual_dtype;
	int golden_ndim, actual_ndim;
	int64_t golden_shape[KJ_MAX_DIMS], actual_shape[KJ_MAX_DIMS];
	char threshold_dtype[32];  /* name the threshold was looked up by */
	double threshold;          /* t */
	double mere_limit;         /* t */
	double mare_limit;         /* 10 t */

	size_t n_elements;
	size_t n_finite;           /* elements in the MERE/MARE sums */
	int mere_defined;          /* 0 when n_finite == 0 */
	double mere, mare;
	size_t n_over_threshold;   /* finite elements with rel > t */

	size_t n_nan_golden, n_nan_actual, n_nan_mismatch;
	size_t n_inf_golden, n_inf_actual, n_inf_mismatch;
	size_t n_bool_mismatch;
	/* Actual elements the cast to the golden dtype does not keep (0 when
	 * both dtypes are the same). */
	size_t n_cast_loss;
	/* Integer golden: elements that are not exactly equal after the cast
	 * (under either rule; under the seed's it is for information). */
	size_t n_value_mismatch;

	/* The rules applied: has_int_rule when the golden is an integer
	 * dtype, has_float64_rule when it is float64 (the other field is then
	 * meaningless). */
	int has_int_rule, has_float64_rule;
	enum kj_cmp_int_rule int_rule;
	enum kj_cmp_float64_rule float64_rule;

	/* Up to KJ_CMP_WORST points, worst first: the first lossy casts or
	 * NaN/Inf/bool/value mismatches when those checks failed, else the
	 * largest rel errors. */
	int n_worst;
	struct kj_cmp_point worst[KJ_CMP_WORST];
};

/*
 * Compare `actual` against `golden`.  Returns KJ_OK when a verdict was
 * reached (pass or fail: see res->pass) and fills `res` (caller-owned).
 * Returns a KJ_E* code with err filled only when no verdict is possible:
 * KJ_EINVAL for NULL arguments or a rule out of range, KJ_EDTYPE for an
 * unknown threshold dtype name.  opt may be NULL: the seed's rules, the
 * golden dtype's threshold and one thread per CPU.  A thread that cannot be started is not an error: its share of the
 * work runs on the calling thread.  The tensors are only read.
 */
int kj_compare(const struct kj_tensor *golden, const struct kj_tensor *actual,
	       const struct kj_cmp_options *opt, struct kj_cmp_result *res,
	       struct kj_error *err);

#endif /* KJUDGE_COMPARE_H */
