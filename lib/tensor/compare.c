/*
 * compare.c - the MERE/MARE comparator (see compare.h for the rules).
 *
 * Theory of operation.
 *
 * The tensors are cut into chunks of CHUNK_ELEMS elements.  Worker threads
 * take chunks from an atomic counter and fill one struct chunk_acc per chunk;
 * after all chunks are done the accumulators are merged in chunk order.  So
 * the figures do not depend on how many threads ran, nor on which thread did
 * which chunk.
 *
 * Inside a chunk the data is read in blocks of BLOCK_ELEMS elements.  When
 * both tensors have the same dtype (float32, float16 or bfloat16), the same
 * storage order and native byte order, a block goes through a fast kernel
 * written with GCC/Clang vector extensions: it converts eight elements at a
 * time to float32, classifies NaN/Inf, computes the relative error and
 * reduces sums, maxima and counts in registers.  It never branches per
 * element and writes nothing to memory.  A block whose figures show that it
 * holds a position worth reporting (a NaN/Inf mismatch, or an error larger
 * than the smallest of the worst few so far) is read a second time by the
 * scalar code to find those positions; that happens a few dozen times per
 * tensor, not per block.
 *
 * Every other combination (different dtypes, byte orders or storage orders,
 * bool, float64, float8) goes through the scalar generic path, which
 * implements the same rules element by element.  It is the reference the
 * fast kernels are tested against.
 *
 * Integer goldens have a path of their own (chunk_int), in integer
 * arithmetic: every value is held as the 64 bits of its two's complement,
 * so int64 and uint64 compare exactly where a double would round.  When
 * both sides have the same dtype and layout, a block whose bytes are equal
 * is equal in value and is counted without being looked at element by
 * element.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/compare.h"
#include "tensor/tensor_internal.h"

#define CHUNK_ELEMS ((size_t)1 << 20)
#define BLOCK_ELEMS 512
#define MAX_THREADS 16

/* --- reasons ------------------------------------------------------------- */

static const struct {
	const char *name, *text;
} reason_table[KJ_CMP_REASON_COUNT_] = {
#define KJ__CMP_ROW(e, name, text) [KJ_CMP_##e] = { name, text },
	KJ_CMP_REASON_MAP(KJ__CMP_ROW)
#undef KJ__CMP_ROW
};

const char *kj_cmp_reason_name(enum kj_cmp_reason r)
{
	return (unsigned)r < KJ_CMP_REASON_COUNT_ ? reason_table[r].name : "?";
}

const char *kj_cmp_reason_text(enum kj_cmp_reason r)
{
	return (unsigned)r < KJ_CMP_REASON_COUNT_ ? reason_table[r].text : "?";
}

const char *kj_cmp_loss_name(enum kj_cmp_loss l)
{
	switch (l) {
	case KJ_CMP_LOSS_FRACTION:
		return "fraction";
	case KJ_CMP_LOSS_RANGE:
		return "range";
	case KJ_CMP_LOSS_NONFINITE:
		return "nonfinite";
	default:
		return "none";
	}
}

/* --- rules ---------------------------------------------------------------- */

static const char *const int_rule_names[] = {
	[KJ_CMP_INT_SPEC] = "spec",
	[KJ_CMP_INT_EXACT] = "exact",
};

static const char *const float64_rule_names[] = {
	[KJ_CMP_FLOAT64_SPEC] = "spec",
	[KJ_CMP_FLOAT64_FLOAT64] = "float64",
};

#define N_INT_RULES (sizeof(int_rule_names) / sizeof(int_rule_names[0]))
#define N_FLOAT64_RULES \
	(sizeof(float64_rule_names) / sizeof(float64_rule_names[0]))

const char *kj_cmp_int_rule_name(enum kj_cmp_int_rule r)
{
	return (unsigned)r < N_INT_RULES ? int_rule_names[r] : "?";
}

const char *kj_cmp_float64_rule_name(enum kj_cmp_float64_rule r)
{
	return (unsigned)r < N_FLOAT64_RULES ? float64_rule_names[r] : "?";
}

/* Parse name, one of names[0..n), into *out: KJ_OK, or KJ_EINVAL naming
 * the rule (`what`) and the choices. */
static int parse_rule(const char *const *names, size_t n, const char *what,
		      const char *choices, const char *name, int *out,
		      struct kj_error *err)
{
	size_t i;

	for (i = 0; name && i < n; i++)
		if (!strcmp(names[i], name)) {
			*out = (int)i;
			return KJ_OK;
		}
	return kj_error_set(err, KJ_EINVAL, "unknown %s rule '%s' (expected "
			    "%s)", what, name ? name : "", choices);
}

int kj_cmp_int_rule_from_name(const char *name, enum kj_cmp_int_rule *rule,
			      struct kj_error *err)
{
	int i, rc = parse_rule(int_rule_names, N_INT_RULES, "int",
			       "spec or exact", name, &i, err);

	if (rc == KJ_OK)
		*rule = (enum kj_cmp_int_rule)i;
	return rc;
}

int kj_cmp_float64_rule_from_name(const char *name,
				  enum kj_cmp_float64_rule *rule,
				  struct kj_error *err)
{
	int i, rc = parse_rule(float64_rule_names, N_FLOAT64_RULES, "float64",
			       "spec or float64", name, &i, err);

	if (rc == KJ_OK)
		*rule = (enum kj_cmp_float64_rule)i;
	return rc;
}

/* --- per-chunk accumulation -------------------------------------------------- */

/* One remembered position (its multi-index is computed at the very end).
 * For an integer golden, gx and ax hold the exact values as in struct
 * kj_cmp_point (ax only when exact). */
struct pt {
	size_t flat;
	double golden, actual, rel;
	int exact;
	uint64_t gx, ax;
	enum kj_cmp_loss loss;  /* LIST_CAST: how the cast loses it */
};

/* A short list of positions: either the first few (by flat index, for
 * mismatches) or the worst few (by rel, for accuracy). */
struct pt_list {
	int n;
	struct pt p[KJ_CMP_WORST];
};

/* The first-positions lists come before LIST_REL, the worst-first one. */
enum { LIST_CAST, LIST_NAN, LIST_INF, LIST_BOOL, LIST_VALUE, LIST_REL, LIST_COUNT_ };

struct chunk_acc {
	double sum;          /* sum of rel over finite elements */
	double max;          /* max rel, -1 if no finite element */
	size_t n_finite, n_over;
	size_t nan_g, nan_a, nan_mis;
	size_t inf_g, inf_a, inf_mis;
	size_t bool_mis, value_mis, cast_mis;
	struct pt_list list[LIST_COUNT_];
};

static void acc_init(struct chunk_acc *c)
{
	memset(c, 0, sizeof(*c));
	c->max = -1.0;
}

/* Keep the first KJ_CMP_WORST mismatches.  Positions arrive in increasing
 * flat order within a chunk, so appending is enough. */
static void list_append_pt(struct pt_list *l, const struct pt *x)
{
	if (l->n < KJ_CMP_WORST)
		l->p[l->n++] = *x;
}

static void list_append(struct pt_list *l, size_t flat, double g, double a)
{
	struct pt x = { .flat = flat, .golden = g, .actual = a,
			.rel = (double)NAN };

	list_append_pt(l, &x);
}

/* Is x worse than y?  Larger rel first; equal rel: smaller index first, so
 * that the order is total and the merge deterministic. */
static int pt_worse(const struct pt *x, const struct pt *y)
{
	return x->rel > y->rel || (x->rel == y->rel && x->flat < y->flat);
}

/* Insert into the worst-first list, dropping the least bad when full. */
static void list_insert_worst(struct pt_list *l, const struct pt *x)
{
	int i;

	if (l->n == KJ_CMP_WORST && !pt_worse(x, &l->p[l->n - 1]))
		return;
	i = l->n < KJ_CMP_WORST ? l->n++ : l->n - 1;
	while (i > 0 && pt_worse(x, &l->p[i - 1])) {
		l->p[i] = l->p[i - 1];
		i--;
	}
	l->p[i] = *x;
}

/* The rel a position must beat to enter the worst list.  Exact matches
 * (rel 0) are never listed. */
static double list_floor(const struct pt_list *l)
{
	return l->n < KJ_CMP_WORST ? 0.0 : l->p[l->n - 1].rel;
}

/*
 * The rule for one element, in scalar form.  Both the generic path and the
 * fast path's second reading of a block go through here, so a listed
 * position always agrees with the counted figures.  `g` and `a` are the
 * values as loaded (before the cast), `ac` the actual after the cast to the
 * golden dtype; `f64` selects float64 arithmetic.
 */
struct elem {
	int gn, an, gi, ai, nan_mis, inf_mis, finite;
	double rel;
};

static void elem_eval(double g, double a, double ac, double t, int f64,
		      struct elem *e)
{
	e->gn = isnan(g) != 0;
	e->an = isnan(a) != 0;
	e->gi = isinf(g) != 0; /* glibc: -1 for -Inf */
	e->ai = isinf(a) != 0;
	e->nan_mis = e->gn != e->an;
	e->inf_mis = (e->gi != e->ai) || (e->gi && e->ai && g != a);
	e->finite = !(e->gn || e->an || e->gi || e->ai);
	e->rel = 0.0;
	if (!e->finite)
		return;
	if (f64) {
		e->rel = fabs(ac - g) / fmax(fabs(g), t);
	} else {
		float gf = (float)g, af = (float)ac, tf = (float)t;

		e->rel = (double)(fabsf(af - gf) / fmaxf(fabsf(gf), tf));
	}
	/* A finite actual that the cast made NaN is infinitely wrong. */
	if (isnan(e->rel))
		e->rel = INFINITY;
}

static void acc_elem(struct chunk_acc *c, const struct elem *e, size_t flat,
		     double g, double ac, double t)
{
	c->nan_g += (size_t)e->gn;
	c->nan_a += (size_t)e->an;
	c->inf_g += (size_t)e->gi;
	c->inf_a += (size_t)e->ai;
	if (e->nan_mis) {
		c->nan_mis++;
		list_append(&c->list[LIST_NAN], flat, g, ac);
	}
	if (e->inf_mis) {
		c->inf_mis++;
		list_append(&c->list[LIST_INF], flat, g, ac);
	}
	if (e->finite) {
		c->n_finite++;
		c->sum += e->rel;
		if (e->rel > c->max)
			c->max = e->rel;
		if (e->rel > t)
			c->n_over++;
		if (e->rel > list_floor(&c->list[LIST_REL])) {
			struct pt x = { .flat = flat, .golden = g, .actual = ac,
					.rel = e->rel };

			list_insert_worst(&c->list[LIST_REL], &x);
		}
	}
}

/* --- the job shared by all threads ----------------------------------------------- */

struct job {
	const struct kj_tensor *g, *a;
	enum kj_dtype gdt, adt;
	int gswap, aswap;
	int same_order;     /* storage orders agree: flat indices coincide */
	int is_bool;        /* golden is bool: exact comparison */
	int is_int;         /* golden is an integer dtype: chunk_int */
	int int_exact;      /* ... under the exact rule */
	int int_bytes;      /* ... with the same dtype and layout both sides */
	int f64;            /* compute in float64 */
	int cast;           /* the dtypes differ: each actual's cast is checked */
	int fast;           /* the vector kernel applies */
	double t;
	size_t n, n_chunks;
	struct chunk_acc *acc;
	atomic_size_t next;
	/* The highest rank_key() of the last entry of any chunk's full worst
	 * list.  At least KJ_CMP_WORST positions rank at or above it, so a
	 * block whose best possible rank is below it holds no listed position
	 * and need not be read twice. */
	_Atomic uint64_t floor_key;
};

/* Storage index in `a` of the element at storage index `flat` of `g`, when
 * their orders differ (one C, one Fortran; same shape). */
static size_t map_flat(const struct kj_tensor *g, const struct kj_tensor *a,
		       size_t flat)
{
	int64_t idx[KJ_MAX_DIMS];
	size_t off = 0;
	int d;

	kj_tensor_unravel(g, flat, idx);
	if (a->fortran_order) {
		for (d = a->ndim - 1; d >= 0; d--)
			off = off * (size_t)a->shape[d] + (size_t)idx[d];
	} else {
		for (d = 0; d < a->ndim; d++)
			off = off * (size_t)a->shape[d] + (size_t)idx[d];
	}
	return off;
}

static void check_cast(const struct job *j, size_t i, size_t ai, double g,
		       double a, struct chunk_acc *c);

static void chunk_generic(const struct job *j, size_t lo, size_t hi,
			  struct chunk_acc *c)
{
	size_t i;

	for (i = lo; i < hi; i++) {
		size_t ai = j->same_order ? i : map_flat(j->g, j->a, i);
		double g = kj__load_f64(j->g->data, i, j->gdt, j->gswap);
		double a = kj__load_f64(j->a->data, ai, j->adt, j->aswap);
		double ac = j->adt == j->gdt ? a : kj__round_to_dtype(a, j->gdt);
		struct elem e;

		if (j->cast)
			check_cast(j, i, ai, g, a, c);

		if (j->is_bool) {
			/* Bool golden: every element equal, no error figures.
			 * A NaN actual is still a NaN mismatch. */
			elem_eval(g, a, ac, j->t, 1, &e);
			e.finite = 0;
			acc_elem(c, &e, i, g, ac, j->t);
			if (!e.nan_mis && !e.inf_mis && (g != 0) != (ac != 0)) {
				c->bool_mis++;
				list_append(&c->list[LIST_BOOL], i, g, ac);
			}
			continue;
		}
		elem_eval(g, a, ac, j->t, j->f64, &e);
		acc_elem(c, &e, i, g, ac, j->t);
	}
}

/* --- integer goldens ---------------------------------------------------------------- */

/*
 * Integers are held as uint64_t: the 64 bits of their two's complement,
 * sign-extended for the signed dtypes.  Two values of one dtype are equal
 * exactly when these bits are.
 */

/* An integer of another dtype cast to dtype dt as torch (C++) does: the low
 * bits kept, sign-extended when dt is signed. */
static uint64_t wrap_int(uint64_t x, enum kj_dtype dt)
{
	unsigned bits = 8u * (unsigned)kj_dtype_size(dt);
	uint64_t mask;

	if (bits >= 64)
		return x;
	mask = ((uint64_t)1 << bits) - 1;
	x &= mask;
	if (kj_dtype_is_signed_integer(dt) && (x >> (bits - 1)) & 1)
		x |= ~mask;
	return x;
}

/*
 * A finite float cast to integer dtype dt as torch does: truncated toward
 * zero; to uint8 through int64 (torch's own rule, so that negative values
 * wrap the same way on every machine).  Returns 1 with *x set, or 0 when
 * the value is beyond what dt holds: torch's result is undefined there (it
 * differs between CPUs and kernels), so there is nothing to compare with.
 */
static int float_to_int(double v, enum kj_dtype dt, uint64_t *x)
{
	double t = trunc(v), lo, hi;
	unsigned bits = 8u * (unsigned)kj_dtype_size(dt);

	if (dt == KJ_DTYPE_UINT8) {
		if (!(t >= -0x1p63 && t < 0x1p63))
			return 0;
		*x = (uint64_t)(int64_t)t & 0xffu;
		return 1;
	}
	if (kj_dtype_is_signed_integer(dt)) {
		lo = -ldexp(1.0, (int)bits - 1);
		hi = ldexp(1.0, (int)bits - 1);
	} else {
		lo = 0.0;
		hi = ldexp(1.0, (int)bits);
	}
	if (!(t >= lo && t < hi))
		return 0;
	*x = kj_dtype_is_signed_integer(dt) ? (uint64_t)(int64_t)t
					    : (uint64_t)t;
	return 1;
}

/* The value of bits x of dtype dt, as torch's .float() and .double() give
 * it: rounded to nearest once, straight from the integer. */
static float int_to_f32(uint64_t x, int is_signed)
{
	return is_signed ? (float)kj__int_from_bits(x) : (float)x;
}

static double int_to_f64(uint64_t x, int is_signed)
{
	return is_signed ? (double)kj__int_from_bits(x) : (double)x;
}

/* --- the cast's losses -------------------------------------------------------------- */

/* Whether the integer of bits x (read as signed when is_signed) is a value
 * of integer or bool dtype dt. */
static int int_fits(uint64_t x, int is_signed, enum kj_dtype dt)
{
	unsigned bits = dt == KJ_DTYPE_BOOL ? 1u : 8u * (unsigned)kj_dtype_size(dt);
	int neg = is_signed && kj__int_from_bits(x) < 0;

	if (kj_dtype_is_signed_integer(dt)) {
		if (neg)
			return bits >= 64 || kj__int_from_bits(x) >= -((int64_t)1 << (bits - 1));
		return x <= ((uint64_t)1 << (bits - 1)) - 1;
	}
	return !neg && (bits >= 64 || x <= ((uint64_t)1 << bits) - 1);
}

/*
 * What the cast of one actual element to the golden dtype gdt loses (see
 * compare.h): `a` is the value as loaded; for an integer or bool actual
 * (aint) x holds its bits and is_signed how to read them.  Rounding to a
 * narrower float dtype is no loss here (the threshold judges it); a finite
 * value the float dtype turns into Inf or NaN, or an Inf it turns into NaN
 * (float8_e4m3fn has no Inf), is.
 */
static enum kj_cmp_loss cast_loss(double a, uint64_t x, int aint, int is_signed,
				  enum kj_dtype gdt)
{
	if (kj_dtype_is_float(gdt)) {
		double v = aint ? int_to_f64(x, is_signed) : a;
		double cv = kj__round_to_dtype(v, gdt);

		if (isnan(v))
			return KJ_CMP_LOSS_NONE;
		return isnan(cv) || (isfinite(v) && !isfinite(cv)) ? KJ_CMP_LOSS_RANGE
								   : KJ_CMP_LOSS_NONE;
	}
	if (aint)
		return int_fits(x, is_signed, gdt) ? KJ_CMP_LOSS_NONE : KJ_CMP_LOSS_RANGE;
	if (!isfinite(a))
		return KJ_CMP_LOSS_NONFINITE;
	if (trunc(a) != a)
		return KJ_CMP_LOSS_FRACTION;
	{
		/* A whole number: the dtype's bounds are powers of two, exact
		 * in a double. */
		unsigned bits = gdt == KJ_DTYPE_BOOL ? 1u : 8u * (unsigned)kj_dtype_size(gdt);
		double lo = kj_dtype_is_signed_integer(gdt) ? -ldexp(1.0, (int)bits - 1) : 0.0;
		double hi = kj_dtype_is_signed_integer(gdt) ? ldexp(1.0, (int)bits - 1)
							    : ldexp(1.0, (int)bits);

		return a >= lo && a < hi ? KJ_CMP_LOSS_NONE : KJ_CMP_LOSS_RANGE;
	}
}

/* Check the cast of actual element ai (golden element i, of value g) and
 * count and list it when the cast loses it. */
static void check_cast(const struct job *j, size_t i, size_t ai, double g,
		       double a, struct chunk_acc *c)
{
	int aint = !kj_dtype_is_float(j->adt);
	int is_signed = kj_dtype_is_signed_integer(j->adt);
	uint64_t x = aint ? kj__load_int_bits(j->a->data, ai, j->adt, j->aswap) : 0;
	enum kj_cmp_loss loss = cast_loss(a, x, aint, is_signed, j->gdt);
	struct pt p = { .flat = i, .golden = g, .rel = (double)NAN, .exact = aint,
			.ax = x, .loss = loss };

	if (loss == KJ_CMP_LOSS_NONE)
		return;
	if (j->is_int)
		p.gx = kj__load_int_bits(j->g->data, i, j->gdt, j->gswap);
	p.actual = aint ? int_to_f64(x, is_signed) : a;
	c->cast_mis++;
	list_append_pt(&c->list[LIST_CAST], &p);
}

/*
 * Both integer rules over elements [lo, hi).  The NaN and Inf checks apply
 * to a float actual as loaded (an integer golden has neither).  Then the
 * actual is cast to the golden dtype; under the exact rule an element
 * passes iff the two integers are equal, under the seed's rel is computed
 * in float32 from the integers (an actual the cast cannot hold is rel Inf).
 * Differing elements are counted under both rules.
 */
static void int_elems(const struct job *j, size_t lo, size_t hi,
		      struct chunk_acc *c)
{
	int gsigned = kj_dtype_is_signed_integer(j->gdt);
	int aint = !kj_dtype_is_float(j->adt);
	float tf = (float)j->t;
	size_t i;

	for (i = lo; i < hi; i++) {
		size_t ai = j->same_order ? i : map_flat(j->g, j->a, i);
		uint64_t gx = kj__load_int_bits(j->g->data, i, j->gdt, j->gswap);
		struct pt x = { .flat = i, .gx = gx, .rel = (double)NAN };
		int ok = 1;

		x.golden = int_to_f64(gx, gsigned);
		if (j->cast)
			check_cast(j, i, ai, x.golden,
				   aint ? 0.0 : kj__load_f64(j->a->data, ai, j->adt, j->aswap), c);
		if (aint) {
			x.ax = wrap_int(kj__load_int_bits(j->a->data, ai, j->adt,
							  j->aswap),
					j->gdt);
		} else {
			x.actual = kj__load_f64(j->a->data, ai, j->adt, j->aswap);
			if (isnan(x.actual)) {
				c->nan_a++;
				c->nan_mis++;
				list_append_pt(&c->list[LIST_NAN], &x);
				continue;
			}
			if (isinf(x.actual)) {
				c->inf_a++;
				c->inf_mis++;
				list_append_pt(&c->list[LIST_INF], &x);
				continue;
			}
			ok = float_to_int(x.actual, j->gdt, &x.ax);
		}
		x.exact = ok;
		if (ok)
			x.actual = int_to_f64(x.ax, gsigned);
		if (!ok || x.ax != gx) {
			c->value_mis++;
			list_append_pt(&c->list[LIST_VALUE], &x);
		}
		if (j->int_exact)
			continue;
		if (ok) {
			float gf = int_to_f32(gx, gsigned);
			float af = int_to_f32(x.ax, gsigned);

			x.rel = (double)(fabsf(af - gf) / fmaxf(fabsf(gf), tf));
		} else {
			x.rel = INFINITY;
		}
		c->n_finite++;
		c->sum += x.rel;
		if (x.rel > c->max)
			c->max = x.rel;
		if (x.rel > j->t)
			c->n_over++;
		if (x.rel > list_floor(&c->list[LIST_REL]))
			list_insert_worst(&c->list[LIST_REL], &x);
	}
}

static void chunk_int(const struct job *j, size_t lo, size_t hi,
		      struct chunk_acc *c)
{
	size_t w = kj_dtype_size(j->gdt), off;
	const unsigned char *gp = j->g->data, *ap = j->a->data;

	if (!j->int_bytes) {
		int_elems(j, lo, hi, c);
		return;
	}
	/* Same dtype, byte order and layout: equal bytes are equal values,
	 * every rel 0, nothing to list. */
	for (off = lo; off < hi; off += BLOCK_ELEMS) {
		size_t n = hi - off < BLOCK_ELEMS ? hi - off : BLOCK_ELEMS;

		if (memcmp(gp + off * w, ap + off * w, n * w) != 0) {
			int_elems(j, off, off + n, c);
		} else if (!j->int_exact) {
			c->n_finite += n;
			if (c->max < 0.0)
				c->max = 0.0;
		}
	}
}

/* --- the fast kernels -------------------------------------------------------------- */

typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef uint32_t v8u __attribute__((vector_size(32)));
typedef uint16_t v8h __attribute__((vector_size(16)));

/* Figures of one block, reduced from the vector lanes in a fixed order. */
struct blk {
	double sum;
	float max;
	uint32_t n_finite, n_over;
	uint32_t nan_g, nan_a, nan_mis, inf_g, inf_a, inf_mis;
};

static inline v8f as_v8f(v8u u)
{
	v8f f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

static inline v8u as_v8u(v8f f)
{
	v8u u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static inline v8u sel_u(v8i m, v8u x, v8u y)
{
	return ((v8u)m & x) | (~(v8u)m & y);
}

static inline v8f sel_f(v8i m, v8f x, v8f y)
{
	return as_v8f(sel_u(m, as_v8u(x), as_v8u(y)));
}

static inline v8f load_f32(const unsigned char *p)
{
	v8f v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* float16 -> float32, exactly, for eight lanes (the same re-biasing as
 * kj_f16_to_f32 in dtype.c). */
static inline v8f load_f16(const unsigned char *p)
{
	v8h h;
	v8u u, em, sign, o, norm, inf, sub;
	const v8u k113 = (v8u){ 0 } + (113u << 23);

	memcpy(&h, p, sizeof(h));
	u = __builtin_convertvector(h, v8u);
	em = u & 0x7fffu;
	sign = (u & 0x8000u) << 16;
	o = em << 13;
	norm = o + (112u << 23);
	inf = o | 0x7f800000u;
	sub = as_v8u(as_v8f(o + k113) - as_v8f(k113));
	o = sel_u((v8i)(em >= 0x7c00u), inf,
		  sel_u((v8i)(em < 0x0400u), sub, norm));
	return as_v8f(o | sign);
}

static inline v8f load_bf16(const unsigned char *p)
{
	v8h h;

	memcpy(&h, p, sizeof(h));
	return as_v8f(__builtin_convertvector(h, v8u) << 16);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(KJ_NO_AVX2)
#include <immintrin.h>
#define KJ_HAVE_AVX2 1
#define KJ_AVX2 __attribute__((target("avx2,f16c")))

/* float16 -> float32 with the F16C instruction: the same exact values as
 * load_f16, one instruction instead of a dozen. */
KJ_AVX2 static inline v8f load_f16_f16c(const unsigned char *p)
{
	__m128i h;
	__m256 f;
	v8f r;

	memcpy(&h, p, sizeof(h));
	f = _mm256_cvtph_ps(h);
	memcpy(&r, &f, sizeof(r));
	return r;
}

/* bfloat16 -> float32: one widening move and a shift. */
KJ_AVX2 static inline v8f load_bf16_avx2(const unsigned char *p)
{
	__m128i h;
	__m256i w;
	v8f r;

	memcpy(&h, p, sizeof(h));
	w = _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16);
	memcpy(&r, &w, sizeof(r));
	return r;
}
#endif

/*
 * Two kernels per dtype, each compiled for the x86-64 baseline and again for
 * AVX2 (picked at run time; the same operations in the same order, so both
 * give bit-identical figures).
 *
 * The common kernel assumes what is nearly always true: every element of
 * the block is finite on both sides.  It only computes rel, its sum, its
 * maximum and the count above t.  If the assumption is false, some rel is
 * NaN or Inf (NaN - x, Inf - x and x / Inf all are), so the block sum is not
 * finite, and the caller runs the full kernel on that block.  A finite-value
 * overflow (|a - g| > FLT_MAX) takes the same way, which is also correct.
 *
 * The full kernel classifies NaN and Inf on both sides and keeps all counts.
 * Lanes stay apart until the end, where they are reduced in lane order; the
 * counts fit in 32 bits per lane because a block is BLOCK_ELEMS long.  The
 * tail (n % 8) is padded with zeros on both sides, which counts as finite
 * with rel 0: the pad is subtracted from n_finite at the end.
 */
/* Run BODY(g, a) over the block: full vectors straight from memory, then
 * the tail (n % 8 elements) copied into a zero-padded vector.  Keeping the
 * tail out of the main loop keeps the accumulators in registers. */
#define KJ_FOR_VECTORS(LOAD, WIDTH, ...)                                        \
	for (i = 0; i + 8 <= n; i += 8) {                                        \
		v8f g = LOAD(gp + i * (WIDTH)), a = LOAD(ap + i * (WIDTH));      \
		__VA_ARGS__                                                      \
	}                                                                        \
	if (i < n) {                                                             \
		unsigned char tg[8 * (WIDTH)] = { 0 }, ta[8 * (WIDTH)] = { 0 };  \
		v8f g, a;                                                        \
		memcpy(tg, gp + i * (WIDTH), (n - i) * (WIDTH));                 \
		memcpy(ta, ap + i * (WIDTH), (n - i) * (WIDTH));                 \
		g = LOAD(tg);                                                    \
		a = LOAD(ta);                                                    \
		pad = i + 8 - n;                                                 \
		__VA_ARGS__                                                      \
	}

/* One vector of the common kernel: rel of eight finite elements. */
#define KJ_COMMON_STEP(g, a, sum, max, over, VMAX)                               \
	{                                                                        \
		v8f d_ = as_v8f(as_v8u((a) - (g)) & 0x7fffffffu);                \
		v8f den_ = VMAX(as_v8f(as_v8u(g) & 0x7fffffffu), tv);            \
		v8f rel_ = d_ / den_;                                            \
		sum += rel_;                                                     \
		max = VMAX(rel_, max);                                           \
		over -= rel_ > tv;                                               \
	}

/* The main loop takes two vectors at a time into two sets of accumulators,
 * so that the sum and max dependency chains of one overlap the other's. */
#define KJ_COMMON_KERNEL(NAME, WIDTH, LOAD, ATTR, VMAX)                          \
	ATTR static void NAME(const unsigned char *gp, const unsigned char *ap,  \
			      size_t n, float t, struct blk *b)                  \
	{                                                                        \
		const v8f tv = (v8f){ 0 } + t;                                   \
		v8f sum0 = { 0 }, max0 = { 0 }, sum1 = { 0 }, max1 = { 0 };      \
		v8i over0 = { 0 }, over1 = { 0 };                                \
		size_t i, k;                                                     \
		for (i = 0; i + 16 <= n; i += 16) {                              \
			v8f g0 = LOAD(gp + i * (WIDTH));                         \
			v8f a0 = LOAD(ap + i * (WIDTH));                         \
			v8f g1 = LOAD(gp + (i + 8) * (WIDTH));                   \
			v8f a1 = LOAD(ap + (i + 8) * (WIDTH));                   \
			KJ_COMMON_STEP(g0, a0, sum0, max0, over0, VMAX)          \
			KJ_COMMON_STEP(g1, a1, sum1, max1, over1, VMAX)          \
		}                                                                \
		for (; i + 8 <= n; i += 8) {                                     \
			v8f g = LOAD(gp + i * (WIDTH));                          \
			v8f a = LOAD(ap + i * (WIDTH));                          \
			KJ_COMMON_STEP(g, a, sum0, max0, over0, VMAX)            \
		}                                                                \
		if (i < n) { /* zero padding: rel 0 */                           \
			unsigned char tg[8 * (WIDTH)] = { 0 };                   \
			unsigned char ta[8 * (WIDTH)] = { 0 };                   \
			v8f g, a;                                                \
			memcpy(tg, gp + i * (WIDTH), (n - i) * (WIDTH));         \
			memcpy(ta, ap + i * (WIDTH), (n - i) * (WIDTH));         \
			g = LOAD(tg);                                            \
			a = LOAD(ta);                                            \
			KJ_COMMON_STEP(g, a, sum0, max0, over0, VMAX)            \
		}                                                                \
		sum0 += sum1;                                                    \
		max0 = VMAX(max0, max1);                                         \
		over0 += over1;                                                  \
		memset(b, 0, sizeof(*b));                                        \
		for (k = 0; k < 8; k++) {                                        \
			b->sum += (double)sum0[k];                               \
			b->max = max0[k] > b->max ? max0[k] : b->max;            \
			b->n_over += (uint32_t)over0[k];                         \
		}                                                                \
		b->n_finite = (uint32_t)n;                                       \
	}

#define KJ_FULL_KERNEL(NAME, WIDTH, LOAD, ATTR, VMAX)                                \
	ATTR static void NAME(const unsigned char *gp, const unsigned char *ap,  \
			      size_t n, float t, struct blk *b)                  \
	{                                                                        \
		const v8i absmask = (v8i){ 0 } + 0x7fffffff;                     \
		const v8i infbits = (v8i){ 0 } + 0x7f800000;                     \
		const v8f tv = (v8f){ 0 } + t;                                   \
		v8f sum = { 0 }, max = { 0 };                                    \
		v8i nfin = { 0 }, over = { 0 }, ng = { 0 }, na = { 0 };          \
		v8i nm = { 0 }, ig = { 0 }, ia = { 0 }, im = { 0 };              \
		size_t i, k, pad = 0;                                            \
		KJ_FOR_VECTORS(LOAD, WIDTH, {                                    \
			v8f d, den, rel;                                         \
			v8i gb, ab, gn, an, gi, ai, fin;                         \
			memcpy(&gb, &g, sizeof(gb));                             \
			memcpy(&ab, &a, sizeof(ab));                             \
			gb &= absmask;                                           \
			ab &= absmask;                                           \
			gn = gb > infbits;                                       \
			an = ab > infbits;                                       \
			gi = gb == infbits;                                      \
			ai = ab == infbits;                                      \
			ng -= gn;                                                \
			na -= an;                                                \
			nm -= gn ^ an;                                           \
			ig -= gi;                                                \
			ia -= ai;                                                \
			im -= (gi ^ ai) | (gi & ai & (g != a));                  \
			fin = ~(gn | an | gi | ai);                              \
			d = as_v8f(as_v8u(a - g) & 0x7fffffffu);                 \
			den = as_v8f((v8u)gb);                                   \
			den = VMAX(den, tv);                                     \
			rel = sel_f(fin, d / den, (v8f){ 0 });                   \
			sum += rel;                                              \
			max = VMAX(rel, max);                                    \
			nfin -= fin;                                             \
			over -= rel > tv;                                        \
		})                                                               \
		memset(b, 0, sizeof(*b));                                        \
		for (k = 0; k < 8; k++) {                                        \
			b->sum += (double)sum[k];                                \
			b->max = max[k] > b->max ? max[k] : b->max;              \
			b->n_finite += (uint32_t)nfin[k];                        \
			b->n_over += (uint32_t)over[k];                          \
			b->nan_g += (uint32_t)ng[k];                             \
			b->nan_a += (uint32_t)na[k];                             \
			b->nan_mis += (uint32_t)nm[k];                           \
			b->inf_g += (uint32_t)ig[k];                             \
			b->inf_a += (uint32_t)ia[k];                             \
			b->inf_mis += (uint32_t)im[k];                           \
		}                                                                \
		b->n_finite -= (uint32_t)pad;                                    \
	}

#define KJ_KERNELS(SUFFIX, WIDTH, LOAD, ATTR, VMAX)                              \
	KJ_COMMON_KERNEL(common_##SUFFIX, WIDTH, LOAD, ATTR, VMAX)               \
	KJ_FULL_KERNEL(full_##SUFFIX, WIDTH, LOAD, ATTR, VMAX)

/* max(x, y) of vectors without NaN: a select in portable code, the MAXPS
 * instruction on AVX2.  The kernels never take the max of a NaN: the common
 * kernel's figures are thrown away when a NaN appears, and the full kernel
 * zeroes the rel of non-finite elements first. */
static inline v8f vmax_sel(v8f x, v8f y)
{
	return sel_f(x > y, x, y);
}

KJ_KERNELS(f32, 4, load_f32, , vmax_sel)
KJ_KERNELS(f16, 2, load_f16, , vmax_sel)
KJ_KERNELS(bf16, 2, load_bf16, , vmax_sel)

#ifdef KJ_HAVE_AVX2
KJ_AVX2 static inline v8f vmax_avx2(v8f x, v8f y)
{
	__m256 a, b, m;
	v8f r;

	memcpy(&a, &x, sizeof(a));
	memcpy(&b, &y, sizeof(b));
	m = _mm256_max_ps(a, b);
	memcpy(&r, &m, sizeof(r));
	return r;
}

KJ_KERNELS(f32_avx2, 4, load_f32, KJ_AVX2, vmax_avx2)
KJ_KERNELS(f16_avx2, 2, load_f16_f16c, KJ_AVX2, vmax_avx2)
KJ_KERNELS(bf16_avx2, 2, load_bf16_avx2, KJ_AVX2, vmax_avx2)
#endif

typedef void (*kernel_fn)(const unsigned char *, const unsigned char *,
			  size_t, float, struct blk *);

struct kernels {
	kernel_fn common, full;
};

static int baseline_only;

void kj__compare_baseline_only(int on)
{
	baseline_only = on;
}

static int have_avx2(void)
{
#ifdef KJ_HAVE_AVX2
	static int cached = -1;

	if (baseline_only)
		return 0;
	if (cached < 0) {
		__builtin_cpu_init();
		cached = __builtin_cpu_supports("avx2") &&
			 __builtin_cpu_supports("f16c");
	}
	return cached;
#else
	return 0;
#endif
}

#ifdef KJ_HAVE_AVX2
#define KJ_AVX2_KERNELS(s) { common_##s##_avx2, full_##s##_avx2 }
#else
#define KJ_AVX2_KERNELS(s) { NULL, NULL }
#endif

static const struct {
	enum kj_dtype dt;
	struct kernels baseline, avx2;
} kernel_table[] = {
	{ KJ_DTYPE_FLOAT32, { common_f32, full_f32 }, KJ_AVX2_KERNELS(f32) },
	{ KJ_DTYPE_FLOAT16, { common_f16, full_f16 }, KJ_AVX2_KERNELS(f16) },
	{ KJ_DTYPE_BFLOAT16, { common_bf16, full_bf16 }, KJ_AVX2_KERNELS(bf16) },
};

/* The kernels for a dtype on this machine; {NULL, NULL} when it has none. */
static struct kernels fast_kernels(enum kj_dtype dt)
{
	struct kernels none = { NULL, NULL };
	size_t i;

	for (i = 0; i < sizeof(kernel_table) / sizeof(kernel_table[0]); i++)
		if (kernel_table[i].dt == dt)
			return have_avx2() ? kernel_table[i].avx2
					   : kernel_table[i].baseline;
	return none;
}

/*
 * A position's rank in the worst list as one 64-bit number: the bits of its
 * rel (a non-negative float, whose bit patterns sort like its values) above
 * the complement of its block index (so that, at equal rel, the earlier
 * block ranks higher, as the list's order wants).  Block indices beyond
 * 32 bits saturate, which only makes the test below more conservative.
 */
static uint64_t rank_key(double rel, size_t flat)
{
	float f = (float)rel;
	uint32_t bits;
	size_t blk = flat / BLOCK_ELEMS;

	memcpy(&bits, &f, sizeof(bits));
	if (blk > UINT32_MAX)
		blk = UINT32_MAX;
	return ((uint64_t)bits << 32) | (UINT32_MAX - (uint32_t)blk);
}

static void raise_floor_key(struct job *j, const struct pt_list *l)
{
	uint64_t key, old;

	if (l->n < KJ_CMP_WORST)
		return;
	key = rank_key(l->p[l->n - 1].rel, l->p[l->n - 1].flat);
	old = atomic_load_explicit(&j->floor_key, memory_order_relaxed);
	while (old < key &&
	       !atomic_compare_exchange_weak_explicit(&j->floor_key, &old, key,
						      memory_order_relaxed,
						      memory_order_relaxed))
		;
}

/* One element of a fast dtype as float, straight from memory. */
static inline float load_fast(const unsigned char *p, size_t i, enum kj_dtype dt)
{
	uint16_t h;
	float f;

	switch (dt) {
	case KJ_DTYPE_FLOAT32:
		memcpy(&f, p + 4 * i, sizeof(f));
		return f;
	case KJ_DTYPE_FLOAT16:
		memcpy(&h, p + 2 * i, sizeof(h));
		return kj_f16_to_f32(h);
	default:
		memcpy(&h, p + 2 * i, sizeof(h));
		return kj_bf16_to_f32(h);
	}
}

/*
 * The second reading of a block that only the worst list needs (no NaN or
 * Inf mismatch in it): the rule of elem_eval for finite elements, without
 * the generic loader.  The figures were counted by the kernel already.
 */
static void rescan_rel(const struct job *j, size_t off, size_t n,
		       struct pt_list *l)
{
	const unsigned char *gp = j->g->data, *ap = j->a->data;
	float tf = (float)j->t;
	size_t i;

	for (i = off; i < off + n; i++) {
		float g = load_fast(gp, i, j->gdt), a = load_fast(ap, i, j->gdt);
		float rel;

		if (!isfinite(g) || !isfinite(a))
			continue;
		rel = fabsf(a - g) / fmaxf(fabsf(g), tf);
		if ((double)rel > list_floor(l)) {
			struct pt x = { .flat = i, .golden = (double)g,
					.actual = (double)a, .rel = (double)rel };

			list_insert_worst(l, &x);
		}
	}
}

static void chunk_fast(struct job *j, size_t lo, size_t hi,
		       struct chunk_acc *c)
{
	struct kernels kern = fast_kernels(j->gdt);
	size_t w = kj_dtype_size(j->gdt), off;
	const unsigned char *gp = j->g->data, *ap = j->a->data;
	struct chunk_acc scratch;
	float t = (float)j->t;

	for (off = lo; off < hi; off += BLOCK_ELEMS) {
		size_t n = hi - off < BLOCK_ELEMS ? hi - off : BLOCK_ELEMS;
		struct blk b;
		int want_nan, want_inf, want_rel;

		kern.common(gp + off * w, ap + off * w, n, t, &b);
		if (!isfinite(b.sum))
			kern.full(gp + off * w, ap + off * w, n, t, &b);
		c->sum += b.sum;
		c->n_finite += b.n_finite;
		c->n_over += b.n_over;
		c->nan_g += b.nan_g;
		c->nan_a += b.nan_a;
		c->nan_mis += b.nan_mis;
		c->inf_g += b.inf_g;
		c->inf_a += b.inf_a;
		c->inf_mis += b.inf_mis;
		if (b.n_finite && (double)b.max > c->max)
			c->max = (double)b.max;

		/* A second, scalar reading only where it can change a list.
		 * Ties with the chunk's own floor lose (earlier positions win
		 * ties, and they came first); against other chunks, rank_key
		 * decides. */
		want_nan = b.nan_mis && c->list[LIST_NAN].n < KJ_CMP_WORST;
		want_inf = b.inf_mis && c->list[LIST_INF].n < KJ_CMP_WORST;
		want_rel = (double)b.max > list_floor(&c->list[LIST_REL]) &&
			   rank_key((double)b.max, off) >=
				   atomic_load_explicit(&j->floor_key,
							memory_order_relaxed);
		if (want_rel && !want_nan && !want_inf) {
			rescan_rel(j, off, n, &c->list[LIST_REL]);
			raise_floor_key(j, &c->list[LIST_REL]);
		} else if (want_nan || want_inf || want_rel) {
			int l;

			acc_init(&scratch);
			for (l = 0; l < LIST_COUNT_; l++)
				scratch.list[l] = c->list[l];
			chunk_generic(j, off, off + n, &scratch);
			for (l = 0; l < LIST_COUNT_; l++)
				c->list[l] = scratch.list[l];
			raise_floor_key(j, &c->list[LIST_REL]);
		}
	}
}

/* --- threads ----------------------------------------------------------------------- */

static void run_chunk(struct job *j, size_t k)
{
	size_t lo = k * CHUNK_ELEMS;
	size_t hi = lo + CHUNK_ELEMS < j->n ? lo + CHUNK_ELEMS : j->n;

	acc_init(&j->acc[k]);
	if (j->fast)
		chunk_fast(j, lo, hi, &j->acc[k]);
	else if (j->is_int)
		chunk_int(j, lo, hi, &j->acc[k]);
	else
		chunk_generic(j, lo, hi, &j->acc[k]);
}

static void *worker(void *arg)
{
	struct job *j = arg;
	size_t k;

	while ((k = atomic_fetch_add(&j->next, 1)) < j->n_chunks)
		run_chunk(j, k);
	return NULL;
}

static void run_job(struct job *j, int threads)
{
	pthread_t tid[MAX_THREADS];
	int started = 0, i;

	if (threads <= 0)
		threads = kj__online_cpus();
	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	if ((size_t)threads > j->n_chunks)
		threads = (int)j->n_chunks;
	for (i = 1; i < threads; i++) {
		if (pthread_create(&tid[started], NULL, worker, j) != 0)
			break; /* the calling thread does the rest */
		started++;
	}
	worker(j);
	for (i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
}

/* --- merging and the verdict -------------------------------------------------------- */

static void merge(const struct job *j, struct chunk_acc *tot)
{
	size_t k;
	int l, i;

	acc_init(tot);
	for (k = 0; k < j->n_chunks; k++) {
		const struct chunk_acc *c = &j->acc[k];

		tot->sum += c->sum;
		if (c->max > tot->max)
			tot->max = c->max;
		tot->n_finite += c->n_finite;
		tot->n_over += c->n_over;
		tot->nan_g += c->nan_g;
		tot->nan_a += c->nan_a;
		tot->nan_mis += c->nan_mis;
		tot->inf_g += c->inf_g;
		tot->inf_a += c->inf_a;
		tot->inf_mis += c->inf_mis;
		tot->bool_mis += c->bool_mis;
		tot->value_mis += c->value_mis;
		tot->cast_mis += c->cast_mis;
		/* Chunks come in index order, so appending keeps the first. */
		for (l = 0; l < LIST_REL; l++)
			for (i = 0; i < c->list[l].n; i++)
				list_append_pt(&tot->list[l], &c->list[l].p[i]);
		for (i = 0; i < c->list[LIST_REL].n; i++)
			list_insert_worst(&tot->list[LIST_REL],
					  &c->list[LIST_REL].p[i]);
	}
}

static void fill_points(const struct kj_tensor *g, const struct pt_list *l,
			enum kj_cmp_point_kind kind, struct kj_cmp_result *res)
{
	int i;

	res->n_worst = l->n;
	for (i = 0; i < l->n; i++) {
		struct kj_cmp_point *p = &res->worst[i];

		p->kind = kind;
		p->flat = l->p[i].flat;
		kj_tensor_unravel(g, p->flat, p->index);
		p->golden = l->p[i].golden;
		p->actual = l->p[i].actual;
		p->rel = kind == KJ_CMP_POINT_REL ? l->p[i].rel : (double)NAN;
		p->exact = l->p[i].exact;
		p->golden_int = kj__int_from_bits(l->p[i].gx);
		p->actual_int = kj__int_from_bits(l->p[i].ax);
		p->loss = l->p[i].loss;
	}
}

/* A message under construction: appends never overrun, and text past the
 * end is dropped (the buffer is always NUL-terminated). */
struct line {
	char *buf;
	size_t size, len;
};

static void line_init(struct line *l, char *buf, size_t size)
{
	l->buf = buf;
	l->size = size;
	l->len = 0;
	buf[0] = '\0';
}

__attribute__((format(printf, 2, 3)))
static void line_add(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len + 1 >= l->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, l->size - l->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		l->buf[l->len] = '\0';
	else if ((size_t)n >= l->size - l->len)
		l->len = l->size - 1;
	else
		l->len += (size_t)n;
}

/* "[3, 7]": a point's multi-index. */
static void line_index(struct line *l, const struct kj_cmp_point *p, int ndim)
{
	int d;

	line_add(l, "[");
	for (d = 0; d < ndim; d++)
		line_add(l, "%s%lld", d ? ", " : "", (long long)p->index[d]);
	line_add(l, "]");
}

/* "[3] golden 30000, actual 30002": a value mismatch of an integer golden,
 * with the exact integers where there are any. */
static void line_value(struct line *l, const struct kj_cmp_point *p, int ndim,
		       enum kj_dtype gdt)
{
	int u = !kj_dtype_is_signed_integer(gdt);

	line_index(l, p, ndim);
	if (u)
		line_add(l, " golden %llu, actual ",
			 (unsigned long long)(uint64_t)p->golden_int);
	else
		line_add(l, " golden %lld, actual ", (long long)p->golden_int);
	if (!p->exact)
		line_add(l, "%.17g (not representable in %s)", p->actual,
			 kj_dtype_name(gdt));
	else if (u)
		line_add(l, "%llu", (unsigned long long)(uint64_t)p->actual_int);
	else
		line_add(l, "%lld", (long long)p->actual_int);
}

/* "[3] 3.75 is not a whole number": an actual element the cast to the
 * golden dtype gdt loses, with its value in its own dtype adt. */
static void line_cast(struct line *l, const struct kj_cmp_point *p, int ndim,
		      enum kj_dtype adt, enum kj_dtype gdt)
{
	line_index(l, p, ndim);
	if (!p->exact) {
		/* The shortest text that reads back as the same value of the
		 * actual's dtype (3.75, 1e+39), not 17 digits of its double. */
		char num[40];
		int prec;

		for (prec = 1; prec < 17; prec++) {
			double back;

			snprintf(num, sizeof(num), "%.*g", prec, p->actual);
			back = strtod(num, NULL);
			if (adt == KJ_DTYPE_FLOAT64 ? back == p->actual
						    : (float)back == (float)p->actual)
				break;
		}
		if (prec == 17 || !isfinite(p->actual))
			snprintf(num, sizeof(num), "%.17g", p->actual);
		else if (trunc(p->actual) == p->actual && fabs(p->actual) < 1e15)
			snprintf(num, sizeof(num), "%.0f", p->actual);
		line_add(l, " %s", num);
	} else if (kj_dtype_is_signed_integer(adt))
		line_add(l, " %lld", (long long)p->actual_int);
	else
		line_add(l, " %llu", (unsigned long long)(uint64_t)p->actual_int);
	switch (p->loss) {
	case KJ_CMP_LOSS_FRACTION:
		line_add(l, " is not a whole number");
		break;
	case KJ_CMP_LOSS_NONFINITE:
		line_add(l, " has no %s value", kj_dtype_name(gdt));
		break;
	default:
		line_add(l, " is out of %s's range", kj_dtype_name(gdt));
		break;
	}
}

/* "[3, 7]" for the first listed point, for messages. */
static void first_index(const struct kj_cmp_result *res, int ndim, char *buf,
			size_t size)
{
	struct line l;

	line_init(&l, buf, size);
	if (res->n_worst)
		line_index(&l, &res->worst[0], ndim);
}

/* How many positions a value-mismatch message names. */
#define MSG_VALUES 3

static void verdict(const struct job *j, const struct chunk_acc *tot,
		    struct kj_cmp_result *res)
{
	const char *gname = kj_dtype_name(j->gdt);
	struct line msg;
	char at[160];
	int i;

	line_init(&msg, res->message, sizeof(res->message));
	res->n_finite = tot->n_finite;
	res->n_over_threshold = tot->n_over;
	res->n_nan_golden = tot->nan_g;
	res->n_nan_actual = tot->nan_a;
	res->n_nan_mismatch = tot->nan_mis;
	res->n_inf_golden = tot->inf_g;
	res->n_inf_actual = tot->inf_a;
	res->n_inf_mismatch = tot->inf_mis;
	res->n_bool_mismatch = tot->bool_mis;
	res->n_value_mismatch = tot->value_mis;
	res->n_cast_loss = tot->cast_mis;
	res->mere_defined = !j->is_bool && tot->n_finite > 0;
	if (res->mere_defined) {
		res->mere = tot->sum / (double)tot->n_finite;
		res->mare = tot->max;
	}

	if (tot->cast_mis) {
		/* Before the value checks: an element the cast does not keep
		 * has no value of the golden dtype to compare. */
		res->reason = KJ_CMP_CAST;
		fill_points(j->g, &tot->list[LIST_CAST], KJ_CMP_POINT_CAST, res);
		line_add(&msg, "casting the actual's %s to the golden's %s loses "
			 "information at %zu of %zu elements: ", kj_dtype_name(j->adt),
			 gname, tot->cast_mis, res->n_elements);
		for (i = 0; i < res->n_worst && i < MSG_VALUES; i++) {
			line_add(&msg, "%s", i ? "; " : "");
			line_cast(&msg, &res->worst[i], j->g->ndim, j->adt, j->gdt);
		}
		if (tot->cast_mis > MSG_VALUES)
			line_add(&msg, "; ...");
	} else if (tot->nan_mis) {
		res->reason = KJ_CMP_NAN;
		fill_points(j->g, &tot->list[LIST_NAN], KJ_CMP_POINT_NAN, res);
		first_index(res, j->g->ndim, at, sizeof(at));
		line_add(&msg, "NaN positions differ at %zu of %zu elements "
			 "(golden has %zu NaN, actual %zu), first at %s",
			 tot->nan_mis, res->n_elements, tot->nan_g, tot->nan_a,
			 at);
	} else if (tot->inf_mis) {
		res->reason = KJ_CMP_INF;
		fill_points(j->g, &tot->list[LIST_INF], KJ_CMP_POINT_INF, res);
		first_index(res, j->g->ndim, at, sizeof(at));
		line_add(&msg, "Inf positions or signs differ at %zu of %zu "
			 "elements (golden has %zu Inf, actual %zu), first at %s",
			 tot->inf_mis, res->n_elements, tot->inf_g, tot->inf_a,
			 at);
	} else if (j->is_bool) {
		res->reason = tot->bool_mis ? KJ_CMP_BOOL : KJ_CMP_PASS;
		fill_points(j->g, &tot->list[LIST_BOOL], KJ_CMP_POINT_BOOL, res);
		first_index(res, j->g->ndim, at, sizeof(at));
		if (tot->bool_mis)
			line_add(&msg, "bool elements differ at %zu of %zu "
				 "positions, first at %s",
				 tot->bool_mis, res->n_elements, at);
		else
			line_add(&msg, "all %zu bool elements equal",
				 res->n_elements);
	} else if (j->int_exact) {
		res->reason = tot->value_mis ? KJ_CMP_VALUE : KJ_CMP_PASS;
		fill_points(j->g, &tot->list[LIST_VALUE], KJ_CMP_POINT_VALUE,
			    res);
		if (!tot->value_mis) {
			line_add(&msg, "all %zu %s elements equal (exact integer "
				 "rule)", res->n_elements, gname);
		} else {
			line_add(&msg, "%s elements differ at %zu of %zu "
				 "positions (exact integer rule): ", gname,
				 tot->value_mis, res->n_elements);
			for (i = 0; i < res->n_worst && i < MSG_VALUES; i++) {
				line_add(&msg, "%s", i ? "; " : "");
				line_value(&msg, &res->worst[i], j->g->ndim,
					   j->gdt);
			}
			if (tot->value_mis > MSG_VALUES)
				line_add(&msg, "; ...");
		}
	} else {
		fill_points(j->g, &tot->list[LIST_REL], KJ_CMP_POINT_REL, res);
		if (!res->mere_defined) {
			res->reason = KJ_CMP_PASS;
			line_add(&msg, "no finite elements to compare (%zu "
				 "elements, NaN and Inf in the same places)",
				 res->n_elements);
		} else if (res->mere < res->mere_limit &&
			   res->mare < res->mare_limit) {
			res->reason = KJ_CMP_PASS;
			line_add(&msg, "MERE %.3g < %.3g and MARE %.3g < %.3g "
				 "(%s threshold)",
				 res->mere, res->mere_limit, res->mare,
				 res->mare_limit, res->threshold_dtype);
		} else {
			const char *which = res->mere >= res->mere_limit
				? (res->mare >= res->mare_limit ? "MERE and MARE"
								: "MERE")
				: "MARE";

			res->reason = KJ_CMP_ACCURACY;
			first_index(res, j->g->ndim, at, sizeof(at));
			line_add(&msg, "%s above threshold: MERE %.3g (limit "
				 "%.3g), MARE %.3g (limit %.3g, %s); %zu of %zu "
				 "elements above %.3g, worst at %s",
				 which, res->mere, res->mere_limit, res->mare,
				 res->mare_limit, res->threshold_dtype,
				 tot->n_over, tot->n_finite, res->threshold,
				 at);
			if (j->gdt == KJ_DTYPE_FLOAT64 && !j->f64)
				line_add(&msg, "; float64 promoted to float32 "
					 "as the seed does (float64 rule spec)");
		}
		/* A pass or a failure under the seed's integer rule says so,
		 * with how far from exact the integers are: a pass may hide
		 * elements that differ. */
		if (j->is_int && res->mere_defined)
			line_add(&msg, "; the seed's relative rule for integers "
				 "is in force (int rule spec): %zu of %zu %s "
				 "elements differ", tot->value_mis,
				 res->n_elements, gname);
	}
	res->pass = res->reason == KJ_CMP_PASS;
}

static int same_shape(const struct kj_tensor *x, const struct kj_tensor *y)
{
	int d;

	if (x->ndim != y->ndim)
		return 0;
	for (d = 0; d < x->ndim; d++)
		if (x->shape[d] != y->shape[d])
			return 0;
	return 1;
}

/* A tensor's order matters only when some dimension > 1 is not the only
 * one; for 0-d and 1-d tensors, and for shapes like (1, n), both orders lay
 * the elements out the same way. */
static int effectively_fortran(const struct kj_tensor *t)
{
	int d, big = 0;

	if (!t->fortran_order)
		return 0;
	for (d = 0; d < t->ndim; d++)
		big += t->shape[d] > 1;
	return big > 1;
}

int kj_compare(const struct kj_tensor *golden, const struct kj_tensor *actual,
	       const struct kj_cmp_options *opt, struct kj_cmp_result *res,
	       struct kj_error *err)
{
	struct job j;
	struct chunk_acc tot;
	const char *tname;
	int threads = opt ? opt->threads : 0, known = 1, host_be;
	enum kj_cmp_int_rule int_rule = opt ? opt->int_rule : KJ_CMP_INT_SPEC;
	enum kj_cmp_float64_rule f64_rule =
		opt ? opt->float64_rule : KJ_CMP_FLOAT64_SPEC;

	if (!golden || !actual || !res)
		return kj_error_set(err, KJ_EINVAL,
				    "kj_compare: NULL tensor or result");
	if ((unsigned)int_rule >= N_INT_RULES ||
	    (unsigned)f64_rule >= N_FLOAT64_RULES)
		return kj_error_set(err, KJ_EINVAL, "kj_compare: int rule %d or "
				    "float64 rule %d out of range",
				    (int)int_rule, (int)f64_rule);
	memset(res, 0, sizeof(*res));
	res->has_int_rule = kj_dtype_is_integer(golden->dtype);
	res->int_rule = int_rule;
	res->has_float64_rule = golden->dtype == KJ_DTYPE_FLOAT64;
	res->float64_rule = f64_rule;
	res->golden_dtype = golden->dtype;
	res->actual_dtype = actual->dtype;
	res->golden_ndim = golden->ndim;
	res->actual_ndim = actual->ndim;
	memcpy(res->golden_shape, golden->shape, sizeof(res->golden_shape));
	memcpy(res->actual_shape, actual->shape, sizeof(res->actual_shape));
	res->n_elements = golden->nelem;

	tname = opt && opt->threshold_dtype ? opt->threshold_dtype
					    : kj_dtype_name(golden->dtype);
	res->threshold = kj_threshold_for_name(tname, &known);
	if (!known)
		return kj_error_set(err, KJ_EDTYPE,
				    "unknown threshold dtype '%s'", tname);
	snprintf(res->threshold_dtype, sizeof(res->threshold_dtype), "%s",
		 tname);
	res->mere_limit = res->threshold;
	res->mare_limit = 10.0 * res->threshold;

	if (!same_shape(golden, actual)) {
		char gs[128], as[128];

		res->reason = KJ_CMP_SHAPE;
		snprintf(res->message, sizeof(res->message),
			 "shapes differ: golden %s, actual %s",
			 kj_shape_format(golden, gs, sizeof(gs)),
			 kj_shape_format(actual, as, sizeof(as)));
		return KJ_OK;
	}

	memset(&j, 0, sizeof(j));
	host_be = !kj__host_little_endian();
	j.g = golden;
	j.a = actual;
	j.gdt = golden->dtype;
	j.adt = actual->dtype;
	j.gswap = golden->big_endian != host_be && kj_dtype_size(j.gdt) > 1;
	j.aswap = actual->big_endian != host_be && kj_dtype_size(j.adt) > 1;
	j.same_order = effectively_fortran(golden) == effectively_fortran(actual);
	j.is_bool = golden->dtype == KJ_DTYPE_BOOL;
	j.is_int = kj_dtype_is_integer(golden->dtype);
	j.int_exact = j.is_int && int_rule == KJ_CMP_INT_EXACT;
	j.int_bytes = j.is_int && j.gdt == j.adt && j.gswap == j.aswap &&
		      j.same_order;
	j.f64 = golden->dtype == KJ_DTYPE_FLOAT64 &&
		f64_rule == KJ_CMP_FLOAT64_FLOAT64;
	/* A bool actual (0 or 1) survives every cast. */
	j.cast = j.gdt != j.adt && j.adt != KJ_DTYPE_BOOL;
	j.fast = j.gdt == j.adt && !j.gswap && !j.aswap && j.same_order &&
		 fast_kernels(j.gdt).common != NULL;
	j.t = res->threshold;
	j.n = golden->nelem;
	j.n_chunks = (j.n + CHUNK_ELEMS - 1) / CHUNK_ELEMS;
	atomic_init(&j.next, 0);
	atomic_init(&j.floor_key, 0);

	if (j.n_chunks) {
		j.acc = malloc(j.n_chunks * sizeof(*j.acc));
		if (!j.acc)
			return kj_error_set(err, KJ_ENOMEM,
					    "out of memory for %zu chunk "
					    "accumulators", j.n_chunks);
		run_job(&j, threads);
	}
	merge(&j, &tot);
	free(j.acc);
	verdict(&j, &tot, res);
	return KJ_OK;
}
