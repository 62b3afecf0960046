/*
 * test_compare.c - every rule of the comparator, on hand-made tensors.
 *
 * Thresholds are tested from both sides with values that are exactly
 * representable in the dtype under test, so the expected verdicts follow
 * from the rule alone: for the narrow formats one ulp at 1.0 equals the
 * threshold t, and the comparisons are strict (MERE == t fails).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/compare.h"
#include "kjudge/report.h"
#include "kjudge/tensor.h"
#include "unit.h"

/* --- helpers ------------------------------------------------------------------ */

struct pair {
	struct kj_tensor g, a;
	void *gbuf, *abuf;
	size_t n;
	enum kj_dtype gdt, adt;
};

/* Store v, which dt must hold (for uint64, values beyond 2^63 as the
 * int64 of the same bits), at element i of buf. */
static void store_int(void *buf, enum kj_dtype dt, size_t i, int64_t v)
{
	unsigned char *p = buf;
	uint64_t u = (uint64_t)v;

	switch (dt) {
	case KJ_DTYPE_INT8: { int8_t x = (int8_t)v; memcpy(p + i, &x, 1); break; }
	case KJ_DTYPE_INT16: { int16_t x = (int16_t)v; memcpy(p + 2 * i, &x, 2); break; }
	case KJ_DTYPE_INT32: { int32_t x = (int32_t)v; memcpy(p + 4 * i, &x, 4); break; }
	case KJ_DTYPE_INT64: memcpy(p + 8 * i, &v, 8); break;
	case KJ_DTYPE_UINT8: { uint8_t x = (uint8_t)u; memcpy(p + i, &x, 1); break; }
	case KJ_DTYPE_UINT16: { uint16_t x = (uint16_t)u; memcpy(p + 2 * i, &x, 2); break; }
	case KJ_DTYPE_UINT32: { uint32_t x = (uint32_t)u; memcpy(p + 4 * i, &x, 4); break; }
	case KJ_DTYPE_UINT64: memcpy(p + 8 * i, &u, 8); break;
	default:
		KJ_CHECK(!"store_int: not an integer dtype");
	}
}

/* Store v, quantised to dt, at element i of buf. */
static void store(void *buf, enum kj_dtype dt, size_t i, double v)
{
	unsigned char *p = buf;

	switch (dt) {
	case KJ_DTYPE_FLOAT32: {
		float f = (float)v;
		memcpy(p + 4 * i, &f, 4);
		break;
	}
	case KJ_DTYPE_FLOAT64:
		memcpy(p + 8 * i, &v, 8);
		break;
	case KJ_DTYPE_FLOAT16: {
		uint16_t h = kj_f32_to_f16((float)v);
		memcpy(p + 2 * i, &h, 2);
		break;
	}
	case KJ_DTYPE_BFLOAT16: {
		uint16_t h = kj_f32_to_bf16((float)v);
		memcpy(p + 2 * i, &h, 2);
		break;
	}
	case KJ_DTYPE_FLOAT8_E4M3FN:
		p[i] = kj_f32_to_e4m3fn((float)v);
		break;
	case KJ_DTYPE_FLOAT8_E5M2:
		p[i] = kj_f32_to_e5m2((float)v);
		break;
	case KJ_DTYPE_BOOL:
		p[i] = (unsigned char)v;
		break;
	default:
		if (kj_dtype_is_integer(dt)) {
			store_int(buf, dt, i, (int64_t)v);
			break;
		}
		KJ_CHECK(!"store: dtype not handled by the test");
	}
}

/* Two 1-d tensors of n elements, golden of dtype gdt filled with gval,
 * actual of dtype adt filled with aval (both quantised to their dtypes). */
static void pair_make(struct pair *pr, enum kj_dtype gdt, enum kj_dtype adt,
		      size_t n, double gval, double aval)
{
	int64_t shape[1] = { (int64_t)n };
	struct kj_error err;
	size_t i;

	pr->n = n;
	pr->gdt = gdt;
	pr->adt = adt;
	pr->gbuf = calloc(n ? n : 1, kj_dtype_size(gdt));
	pr->abuf = calloc(n ? n : 1, kj_dtype_size(adt));
	KJ_CHECK(pr->gbuf && pr->abuf);
	for (i = 0; i < n; i++) {
		store(pr->gbuf, gdt, i, gval);
		store(pr->abuf, adt, i, aval);
	}
	kj_tensor_init(&pr->g);
	kj_tensor_init(&pr->a);
	KJ_CHECK_OK(kj_tensor_borrow(&pr->g, gdt, 1, shape, pr->gbuf, &err), &err);
	KJ_CHECK_OK(kj_tensor_borrow(&pr->a, adt, 1, shape, pr->abuf, &err), &err);
}

static void pair_free(struct pair *pr)
{
	kj_tensor_release(&pr->g);
	kj_tensor_release(&pr->a);
	free(pr->gbuf);
	free(pr->abuf);
}

/* Compare under the given rules; a verdict must be reached. */
static void run_rules(struct pair *pr, enum kj_cmp_int_rule ir,
		      enum kj_cmp_float64_rule fr, int threads,
		      struct kj_cmp_result *res)
{
	struct kj_cmp_options opt = { .threads = threads, .int_rule = ir,
				      .float64_rule = fr };
	struct kj_error err;

	KJ_CHECK_OK(kj_compare(&pr->g, &pr->a, &opt, res, &err), &err);
	KJ_CHECK_INT(res->pass, res->reason == KJ_CMP_PASS);
}

/* Compare under the seed's rules. */
static void run(struct pair *pr, const char *tdtype, int threads,
		struct kj_cmp_result *res)
{
	struct kj_cmp_options opt = { .threshold_dtype = tdtype,
				      .threads = threads };
	struct kj_error err;

	KJ_CHECK_OK(kj_compare(&pr->g, &pr->a, &opt, res, &err), &err);
	KJ_CHECK_INT(res->pass, res->reason == KJ_CMP_PASS);
}

/* --- thresholds, from both sides ---------------------------------------------------- */

struct threshold_case {
	enum kj_dtype dt;
	const char *tname; /* threshold dtype by name, or NULL */
	double t;
	double golden;
	double mere_in, mere_out;   /* value of every element */
	double mare_in, mare_out;   /* value of one element, the rest exact */
};

static const struct threshold_case threshold_cases[] = {
	/* one ulp at 1.0 is t for the narrow formats */
	{ KJ_DTYPE_FLOAT16, NULL, 0x1p-10, 1.0, -1, 1 + 0x1p-10,
	  1 + 9 * 0x1p-10, 1 + 10 * 0x1p-10 },
	{ KJ_DTYPE_BFLOAT16, NULL, 0x1p-7, 1.0, -1, 1 + 0x1p-7,
	  1 + 9 * 0x1p-7, 1 + 10 * 0x1p-7 },
	{ KJ_DTYPE_FLOAT8_E4M3FN, NULL, 0x1p-3, 1.0, -1, 1.125, 2.0, 2.25 },
	{ KJ_DTYPE_FLOAT8_E5M2, NULL, 0x1p-2, 1.0, -1, 1.25, 3.0, 3.5 },
	{ KJ_DTYPE_FLOAT32, NULL, 0x1p-13, 1.0, 1 + 0.99 * 0x1p-13,
	  1 + 1.01 * 0x1p-13, 1 + 9.9 * 0x1p-13, 1 + 10.1 * 0x1p-13 },
	{ KJ_DTYPE_FLOAT32, "hifloat32", 0x1p-11, 1.0, 1 + 0.99 * 0x1p-11,
	  1 + 1.01 * 0x1p-11, 1 + 9.9 * 0x1p-11, 1 + 10.1 * 0x1p-11 },
	/* the fallback 2^-13 for integers: rel = diff / 10000 */
	{ KJ_DTYPE_INT32, NULL, 0x1p-13, 10000, 10001, 10002, 10012, 10013 },
	{ KJ_DTYPE_FLOAT64, NULL, 0x1p-13, 1.0, 1 + 0.99 * 0x1p-13,
	  1 + 1.01 * 0x1p-13, 1 + 9.9 * 0x1p-13, 1 + 10.1 * 0x1p-13 },
};

KJ_TEST(compare_threshold_table)
{
	KJ_CHECK(kj_threshold_for_dtype(KJ_DTYPE_FLOAT16) == 0x1p-10);
	KJ_CHECK(kj_threshold_for_dtype(KJ_DTYPE_BFLOAT16) == 0x1p-7);
	KJ_CHECK(kj_threshold_for_dtype(KJ_DTYPE_FLOAT32) == 0x1p-13);
	KJ_CHECK(kj_threshold_for_dtype(KJ_DTYPE_FLOAT8_E4M3FN) == 0x1p-3);
	KJ_CHECK(kj_threshold_for_dtype(KJ_DTYPE_FLOAT8_E5M2) == 0x1p-2);
	KJ_CHECK(kj_threshold_for_dtype(KJ_DTYPE_FLOAT64) == 0x1p-13);
	KJ_CHECK(kj_threshold_for_dtype(KJ_DTYPE_INT64) == 0x1p-13);
	KJ_CHECK(kj_threshold_for_name("hifloat32", NULL) == 0x1p-11);
	KJ_CHECK(kj_threshold_for_name("torch.float16", NULL) == 0x1p-10);
	KJ_CHECK(kj_threshold_for_name("float8_e4m3", NULL) == 0x1p-3);
}

KJ_TEST(compare_mere_just_inside_and_outside)
{
	size_t c;

	for (c = 0; c < sizeof(threshold_cases) / sizeof(threshold_cases[0]); c++) {
		const struct threshold_case *tc = &threshold_cases[c];
		struct kj_cmp_result res;
		struct pair pr;

		/* Inside: every element off by 0.99 t; for the narrow
		 * formats, where t is one ulp, 99 of 100 elements off by one
		 * ulp (MERE = 0.99 t). */
		pair_make(&pr, tc->dt, tc->dt, 100, tc->golden,
			  tc->mere_in >= 0 ? tc->mere_in : tc->mere_out);
		if (tc->mere_in < 0)
			store(pr.abuf, tc->dt, 0, tc->golden);
		run(&pr, tc->tname, 1, &res);
		if (!res.pass)
			kj_test_fail(__FILE__, __LINE__, "%s: %s",
				     kj_dtype_name(tc->dt), res.message);
		KJ_CHECK(res.threshold == tc->t);
		KJ_CHECK(res.mere < tc->t);
		KJ_CHECK_INT(res.n_finite, 100);
		pair_free(&pr);

		/* Outside: every element off by 1.01 t, or exactly t. */
		pair_make(&pr, tc->dt, tc->dt, 100, tc->golden, tc->mere_out);
		run(&pr, tc->tname, 1, &res);
		if (res.pass || res.reason != KJ_CMP_ACCURACY)
			kj_test_fail(__FILE__, __LINE__, "%s: expected an "
				     "accuracy failure, got: %s",
				     kj_dtype_name(tc->dt), res.message);
		KJ_CHECK(res.mere >= tc->t);
		KJ_CHECK(res.mare < 10 * tc->t);
		KJ_CHECK(strstr(res.message, "MERE") != NULL);
		KJ_CHECK_INT(res.n_over_threshold,
			     tc->mere_in < 0 ? 0 : 100);
		pair_free(&pr);
	}
}

KJ_TEST(compare_mare_just_inside_and_outside)
{
	size_t c;

	for (c = 0; c < sizeof(threshold_cases) / sizeof(threshold_cases[0]); c++) {
		const struct threshold_case *tc = &threshold_cases[c];
		struct kj_cmp_result res;
		struct pair pr;

		/* 1000 elements, one of them off: MERE stays far below t. */
		pair_make(&pr, tc->dt, tc->dt, 1000, tc->golden, tc->golden);
		store(pr.abuf, tc->dt, 417, tc->mare_in);
		run(&pr, tc->tname, 1, &res);
		if (!res.pass)
			kj_test_fail(__FILE__, __LINE__, "%s: %s",
				     kj_dtype_name(tc->dt), res.message);
		KJ_CHECK(res.mare < 10 * tc->t);
		KJ_CHECK(res.mare > 7 * tc->t);
		KJ_CHECK_INT(res.n_worst, 1);
		KJ_CHECK_INT(res.worst[0].index[0], 417);
		pair_free(&pr);

		pair_make(&pr, tc->dt, tc->dt, 1000, tc->golden, tc->golden);
		store(pr.abuf, tc->dt, 417, tc->mare_out);
		run(&pr, tc->tname, 1, &res);
		if (res.pass || res.reason != KJ_CMP_ACCURACY)
			kj_test_fail(__FILE__, __LINE__, "%s: expected an "
				     "accuracy failure, got: %s",
				     kj_dtype_name(tc->dt), res.message);
		KJ_CHECK(res.mare >= 10 * tc->t);
		KJ_CHECK(res.mere < tc->t);
		KJ_CHECK(strstr(res.message, "MARE above") != NULL);
		KJ_CHECK_INT(res.worst[0].index[0], 417);
		KJ_CHECK_INT(res.n_over_threshold, 1);
		pair_free(&pr);
	}
}

KJ_TEST(compare_hifloat32_is_looser_than_float32)
{
	struct kj_cmp_result res;
	struct pair pr;

	/* rel 2^-12: above float32's 2^-13, below hifloat32's 2^-11. */
	pair_make(&pr, KJ_DTYPE_FLOAT32, KJ_DTYPE_FLOAT32, 64, 1.0, 1 + 0x1p-12);
	run(&pr, NULL, 1, &res);
	KJ_CHECK(!res.pass);
	run(&pr, "hifloat32", 1, &res);
	KJ_CHECK(res.pass);
	KJ_CHECK_STR(res.threshold_dtype, "hifloat32");
	pair_free(&pr);
}

KJ_TEST(compare_denominator_clamps_at_threshold)
{
	struct kj_cmp_result res;
	struct pair pr;

	/* Golden 0: rel = |actual| / t, an absolute error in units of t. */
	pair_make(&pr, KJ_DTYPE_FLOAT32, KJ_DTYPE_FLOAT32, 10, 0.0, 0.5 * 0x1p-13 * 0x1p-13);
	run(&pr, NULL, 1, &res);
	KJ_CHECK(res.pass);
	KJ_CHECK(fabs(res.mere - 0.5 * 0x1p-13) < 1e-12);
	pair_free(&pr);

	pair_make(&pr, KJ_DTYPE_FLOAT32, KJ_DTYPE_FLOAT32, 10, 0.0, 1e-6);
	run(&pr, NULL, 1, &res);
	KJ_CHECK(!res.pass); /* 1e-6 / 1.22e-4 = 8.2e-3 > t */
	pair_free(&pr);
}

KJ_TEST(compare_unknown_threshold_name_is_an_error)
{
	struct kj_cmp_options opt = { .threshold_dtype = "float128", .threads = 1 };
	struct kj_cmp_result res;
	struct kj_error err;
	struct pair pr;

	pair_make(&pr, KJ_DTYPE_FLOAT32, KJ_DTYPE_FLOAT32, 4, 1.0, 1.0);
	KJ_CHECK_INT(kj_compare(&pr.g, &pr.a, &opt, &res, &err), KJ_EDTYPE);
	KJ_CHECK(strstr(err.msg, "float128") != NULL);
	pair_free(&pr);
}

/* --- NaN and Inf ---------------------------------------------------------------- */

static const enum kj_dtype float_dtypes[] = {
	KJ_DTYPE_FLOAT32, KJ_DTYPE_FLOAT16, KJ_DTYPE_BFLOAT16, KJ_DTYPE_FLOAT64,
};

KJ_TEST(compare_nan_same_positions_pass)
{
	size_t d;

	for (d = 0; d < sizeof(float_dtypes) / sizeof(float_dtypes[0]); d++) {
		struct kj_cmp_result res;
		struct pair pr;

		pair_make(&pr, float_dtypes[d], float_dtypes[d], 40, 2.0, 2.0);
		store(pr.gbuf, float_dtypes[d], 0, NAN);
		store(pr.abuf, float_dtypes[d], 0, NAN);
		store(pr.gbuf, float_dtypes[d], 39, -NAN);
		store(pr.abuf, float_dtypes[d], 39, NAN); /* sign of NaN is no matter */
		run(&pr, NULL, 1, &res);
		KJ_CHECK(res.pass);
		KJ_CHECK_INT(res.n_nan_golden, 2);
		KJ_CHECK_INT(res.n_finite, 38);
		pair_free(&pr);
	}
}

KJ_TEST(compare_nan_in_different_positions_fail)
{
	static const size_t where[] = { 0, 7, 8, 511, 512, 999 };
	size_t d, w;

	for (d = 0; d < sizeof(float_dtypes) / sizeof(float_dtypes[0]); d++)
		for (w = 0; w < sizeof(where) / sizeof(where[0]); w++) {
			struct kj_cmp_result res;
			struct pair pr;

			/* NaN only in the actual. */
			pair_make(&pr, float_dtypes[d], float_dtypes[d], 1000, 1.0, 1.0);
			store(pr.abuf, float_dtypes[d], where[w], NAN);
			run(&pr, NULL, 1, &res);
			KJ_CHECK(!res.pass);
			KJ_CHECK_INT(res.reason, KJ_CMP_NAN);
			KJ_CHECK_INT(res.n_nan_mismatch, 1);
			KJ_CHECK_INT(res.n_nan_actual, 1);
			KJ_CHECK_INT(res.n_worst, 1);
			KJ_CHECK_INT(res.worst[0].kind, KJ_CMP_POINT_NAN);
			KJ_CHECK_INT(res.worst[0].index[0], where[w]);
			KJ_CHECK(isnan(res.worst[0].actual));
			pair_free(&pr);

			/* Same count, other places: still a mismatch. */
			pair_make(&pr, float_dtypes[d], float_dtypes[d], 1000, 1.0, 1.0);
			store(pr.gbuf, float_dtypes[d], where[w], NAN);
			store(pr.abuf, float_dtypes[d], (where[w] + 1) % 1000, NAN);
			run(&pr, NULL, 1, &res);
			KJ_CHECK_INT(res.reason, KJ_CMP_NAN);
			KJ_CHECK_INT(res.n_nan_mismatch, 2);
			KJ_CHECK_INT(res.n_nan_golden, 1);
			KJ_CHECK_INT(res.n_nan_actual, 1);
			pair_free(&pr);
		}
}

KJ_TEST(compare_nan_check_comes_before_accuracy)
{
	struct kj_cmp_result res;
	struct pair pr;

	/* Wildly wrong values and a NaN: the reason is the NaN, the figures
	 * are still all there. */
	pair_make(&pr, KJ_DTYPE_FLOAT32, KJ_DTYPE_FLOAT32, 100, 1.0, 5.0);
	store(pr.abuf, KJ_DTYPE_FLOAT32, 3, NAN);
	run(&pr, NULL, 1, &res);
	KJ_CHECK_INT(res.reason, KJ_CMP_NAN);
	KJ_CHECK(res.mere_defined);
	KJ_CHECK(res.mere > 1.0);
	KJ_CHECK_INT(res.n_finite, 99);
	pair_free(&pr);
}

KJ_TEST(compare_inf_signs)
{
	size_t d;

	for (d = 0; d < sizeof(float_dtypes) / sizeof(float_dtypes[0]); d++) {
		enum kj_dtype dt = float_dtypes[d];
		struct kj_cmp_result res;
		struct pair pr;

		/* +Inf against +Inf, -Inf against -Inf: pass. */
		pair_make(&pr, dt, dt, 20, 1.0, 1.0);
		store(pr.gbuf, dt, 2, INFINITY);
		store(pr.abuf, dt, 2, INFINITY);
		store(pr.gbuf, dt, 9, -INFINITY);
		store(pr.abuf, dt, 9, -INFINITY);
		run(&pr, NULL, 1, &res);
		KJ_CHECK(res.pass);
		KJ_CHECK_INT(res.n_inf_golden, 2);
		KJ_CHECK_INT(res.n_finite, 18);
		pair_free(&pr);

		/* +Inf against -Inf: fail at that position. */
		pair_make(&pr, dt, dt, 20, 1.0, 1.0);
		store(pr.gbuf, dt, 11, INFINITY);
		store(pr.abuf, dt, 11, -INFINITY);
		run(&pr, NULL, 1, &res);
		KJ_CHECK_INT(res.reason, KJ_CMP_INF);
		KJ_CHECK_INT(res.n_inf_mismatch, 1);
		KJ_CHECK_INT(res.worst[0].index[0], 11);
		KJ_CHECK(res.worst[0].golden > 0 && res.worst[0].actual < 0);
		pair_free(&pr);

		/* Inf against a finite value. */
		pair_make(&pr, dt, dt, 20, 1.0, 1.0);
		store(pr.gbuf, dt, 19, -INFINITY);
		run(&pr, NULL, 1, &res);
		KJ_CHECK_INT(res.reason, KJ_CMP_INF);
		KJ_CHECK_INT(res.worst[0].index[0], 19);
		pair_free(&pr);
	}
}

KJ_TEST(compare_all_nan_or_inf_passes_without_figures)
{
	struct kj_cmp_result res;
	struct pair pr;

	pair_make(&pr, KJ_DTYPE_FLOAT16, KJ_DTYPE_FLOAT16, 5, NAN, NAN);
	store(pr.gbuf, KJ_DTYPE_FLOAT16, 1, INFINITY);
	store(pr.abuf, KJ_DTYPE_FLOAT16, 1, INFINITY);
	run(&pr, NULL, 1, &res);
	KJ_CHECK(res.pass);
	KJ_CHECK(!res.mere_defined);
	KJ_CHECK_INT(res.n_finite, 0);
	pair_free(&pr);
}

/* --- bool, zero size, shapes, dtypes --------------------------------------------------- */

KJ_TEST(compare_bool_exact)
{
	struct kj_cmp_result res;
	struct pair pr;

	pair_make(&pr, KJ_DTYPE_BOOL, KJ_DTYPE_BOOL, 30, 1, 1);
	store(pr.gbuf, KJ_DTYPE_BOOL, 4, 0);
	store(pr.abuf, KJ_DTYPE_BOOL, 4, 0);
	run(&pr, NULL, 1, &res);
	KJ_CHECK(res.pass);
	KJ_CHECK(!res.mere_defined);
	pair_free(&pr);

	pair_make(&pr, KJ_DTYPE_BOOL, KJ_DTYPE_BOOL, 30, 1, 1);
	store(pr.abuf, KJ_DTYPE_BOOL, 17, 0);
	store(pr.abuf, KJ_DTYPE_BOOL, 29, 0);
	run(&pr, NULL, 1, &res);
	KJ_CHECK_INT(res.reason, KJ_CMP_BOOL);
	KJ_CHECK_INT(res.n_bool_mismatch, 2);
	KJ_CHECK_INT(res.n_worst, 2);
	KJ_CHECK_INT(res.worst[0].index[0], 17);
	KJ_CHECK_INT(res.worst[1].index[0], 29);
	pair_free(&pr);

	/* A float actual of 0.0 and 1.0 is cast to bool without a loss. */
	pair_make(&pr, KJ_DTYPE_BOOL, KJ_DTYPE_FLOAT32, 8, 1, 1.0);
	store(pr.gbuf, KJ_DTYPE_BOOL, 3, 0);
	store(pr.abuf, KJ_DTYPE_FLOAT32, 3, 0.0);
	run(&pr, NULL, 1, &res);
	KJ_CHECK(res.pass);
	pair_free(&pr);
}

KJ_TEST(compare_zero_size)
{
	static const int64_t shapes[][2] = { { 0, 0 }, { 3, 0 }, { 0, 5 } };
	struct kj_cmp_result res;
	struct kj_error err;
	size_t s;
	char b;

	for (s = 0; s < 3; s++) {
		struct kj_tensor g, a;

		kj_tensor_init(&g);
		kj_tensor_init(&a);
		KJ_CHECK_OK(kj_tensor_borrow(&g, KJ_DTYPE_FLOAT32, 2, shapes[s], &b, &err), &err);
		KJ_CHECK_OK(kj_tensor_borrow(&a, KJ_DTYPE_FLOAT32, 2, shapes[s], &b, &err), &err);
		KJ_CHECK_OK(kj_compare(&g, &a, NULL, &res, &err), &err);
		KJ_CHECK(res.pass);
		KJ_CHECK_INT(res.n_elements, 0);
		KJ_CHECK(!res.mere_defined);
	}
}

KJ_TEST(compare_shape_mismatch)
{
	static const struct {
		int gn, an;
		int64_t gs[2], as[2];
	} cases[] = {
		{ 2, 2, { 2, 3 }, { 3, 2 } },
		{ 1, 2, { 6, 0 }, { 2, 3 } },
		{ 0, 1, { 0, 0 }, { 1, 0 } },
		{ 1, 1, { 5, 0 }, { 4, 0 } },
	};
	float buf[8] = { 0 };
	size_t c;

	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct kj_tensor g, a;
		struct kj_cmp_result res;
		struct kj_error err;

		kj_tensor_init(&g);
		kj_tensor_init(&a);
		KJ_CHECK_OK(kj_tensor_borrow(&g, KJ_DTYPE_FLOAT32, cases[c].gn, cases[c].gs, buf, &err), &err);
		KJ_CHECK_OK(kj_tensor_borrow(&a, KJ_DTYPE_FLOAT32, cases[c].an, cases[c].as, buf, &err), &err);
		KJ_CHECK_OK(kj_compare(&g, &a, NULL, &res, &err), &err);
		KJ_CHECK(!res.pass);
		KJ_CHECK_INT(res.reason, KJ_CMP_SHAPE);
		KJ_CHECK(strstr(res.message, "shapes differ") != NULL);
	}
}

KJ_TEST(compare_dtype_mismatch_casts_actual_to_golden)
{
	struct kj_cmp_result res;
	struct pair pr;

	/* 1.0001 in float32 rounds to 1.0 in float16: exact after the cast. */
	pair_make(&pr, KJ_DTYPE_FLOAT16, KJ_DTYPE_FLOAT32, 16, 1.0, 1.0001);
	run(&pr, NULL, 1, &res);
	KJ_CHECK(res.pass);
	KJ_CHECK(res.mare == 0.0);
	KJ_CHECK_INT(res.actual_dtype, KJ_DTYPE_FLOAT32);
	pair_free(&pr);

	/* Lossless casts are compared as their cast values: a whole float
	 * against an int64 golden, and a wrong one fails on its value. */
	pair_make(&pr, KJ_DTYPE_INT64, KJ_DTYPE_FLOAT32, 16, 3, 3.0);
	run(&pr, NULL, 1, &res);
	KJ_CHECK(res.pass);
	KJ_CHECK_INT(res.n_cast_loss, 0);
	pair_free(&pr);
	pair_make(&pr, KJ_DTYPE_INT64, KJ_DTYPE_FLOAT32, 16, 3, 4.0);
	run_rules(&pr, KJ_CMP_INT_EXACT, KJ_CMP_FLOAT64_SPEC, 1, &res);
	KJ_CHECK_INT(res.reason, KJ_CMP_VALUE);
	pair_free(&pr);
	/* int32 against int64, float16 against float32, bool against a float:
	 * every value of the actual's dtype is one of the golden's. */
	pair_make(&pr, KJ_DTYPE_INT64, KJ_DTYPE_INT32, 16, -123456, -123456);
	run_rules(&pr, KJ_CMP_INT_EXACT, KJ_CMP_FLOAT64_SPEC, 1, &res);
	KJ_CHECK(res.pass);
	pair_free(&pr);
	pair_make(&pr, KJ_DTYPE_FLOAT32, KJ_DTYPE_FLOAT16, 16, 0.5, 0.5);
	store(pr.gbuf, KJ_DTYPE_FLOAT32, 3, INFINITY);
	store(pr.abuf, KJ_DTYPE_FLOAT16, 3, INFINITY);
	run(&pr, NULL, 1, &res);
	KJ_CHECK(res.pass);
	pair_free(&pr);
	pair_make(&pr, KJ_DTYPE_FLOAT32, KJ_DTYPE_BOOL, 16, 1.0, 1);
	run(&pr, NULL, 1, &res);
	KJ_CHECK(res.pass);
	pair_free(&pr);
}

/* --- casts that lose information ---------------------------------------------------- */

/* The loss the comparator finds for one actual element against a golden
 * of another dtype (the golden's value 0): KJ_CMP_LOSS_NONE when it passes
 * the cast check (its value then decides). */
struct loss_case {
	enum kj_dtype gdt, adt;
	double a;          /* a float or bool actual */
	int64_t ai;        /* an integer actual (its bits, for uint64) */
	enum kj_cmp_loss loss;
	const char *words; /* in the message, for a loss */
};

static const struct loss_case loss_cases[] = {
	/* a fraction, to an integer or bool */
	{ KJ_DTYPE_INT64, KJ_DTYPE_FLOAT32, 3.75, 0, KJ_CMP_LOSS_FRACTION,
	  "[1] 3.75 is not a whole number" },
	{ KJ_DTYPE_INT32, KJ_DTYPE_FLOAT64, -0.5, 0, KJ_CMP_LOSS_FRACTION, "-0.5 is not" },
	{ KJ_DTYPE_UINT8, KJ_DTYPE_FLOAT16, 1.5, 0, KJ_CMP_LOSS_FRACTION, "1.5 is not" },
	{ KJ_DTYPE_BOOL, KJ_DTYPE_FLOAT32, 0.25, 0, KJ_CMP_LOSS_FRACTION, "0.25 is not" },
	/* beyond the golden dtype's range */
	{ KJ_DTYPE_INT32, KJ_DTYPE_INT64, 0, ((int64_t)1 << 32) + 5, KJ_CMP_LOSS_RANGE,
	  "[1] 4294967301 is out of int32's range" },
	{ KJ_DTYPE_UINT8, KJ_DTYPE_INT8, 0, -1, KJ_CMP_LOSS_RANGE, "-1 is out of uint8's range" },
	{ KJ_DTYPE_INT8, KJ_DTYPE_UINT8, 0, 255, KJ_CMP_LOSS_RANGE, "255 is out of int8's range" },
	{ KJ_DTYPE_INT64, KJ_DTYPE_UINT64, 0, -1, KJ_CMP_LOSS_RANGE,
	  "18446744073709551615 is out of int64's range" },
	{ KJ_DTYPE_UINT64, KJ_DTYPE_INT64, 0, -1, KJ_CMP_LOSS_RANGE, "-1 is out of uint64" },
	{ KJ_DTYPE_BOOL, KJ_DTYPE_INT32, 0, 2, KJ_CMP_LOSS_RANGE, "2 is out of bool's range" },
	{ KJ_DTYPE_UINT8, KJ_DTYPE_FLOAT32, -1.0, 0, KJ_CMP_LOSS_RANGE, "-1 is out of uint8" },
	{ KJ_DTYPE_UINT8, KJ_DTYPE_FLOAT32, 256.0, 0, KJ_CMP_LOSS_RANGE, "256 is out of" },
	{ KJ_DTYPE_INT32, KJ_DTYPE_FLOAT32, 1e30, 0, KJ_CMP_LOSS_RANGE, "is out of int32's" },
	{ KJ_DTYPE_INT64, KJ_DTYPE_FLOAT64, 0x1p63, 0, KJ_CMP_LOSS_RANGE, "is out of int64" },
	{ KJ_DTYPE_FLOAT16, KJ_DTYPE_FLOAT32, 70000.0, 0, KJ_CMP_LOSS_RANGE,
	  "[1] 70000 is out of float16's range" },
	{ KJ_DTYPE_FLOAT16, KJ_DTYPE_INT32, 0, 70000, KJ_CMP_LOSS_RANGE, "70000 is out of" },
	{ KJ_DTYPE_FLOAT8_E4M3FN, KJ_DTYPE_FLOAT32, 500.0, 0, KJ_CMP_LOSS_RANGE, "500 is out" },
	{ KJ_DTYPE_FLOAT8_E4M3FN, KJ_DTYPE_FLOAT32, INFINITY, 0, KJ_CMP_LOSS_RANGE, "inf is out" },
	{ KJ_DTYPE_FLOAT32, KJ_DTYPE_FLOAT64, 1e39, 0, KJ_CMP_LOSS_RANGE, "1e+39 is out of" },
	/* NaN and Inf, to an integer or bool */
	{ KJ_DTYPE_INT32, KJ_DTYPE_FLOAT32, NAN, 0, KJ_CMP_LOSS_NONFINITE,
	  "[1] nan has no int32 value" },
	{ KJ_DTYPE_INT64, KJ_DTYPE_FLOAT64, -INFINITY, 0, KJ_CMP_LOSS_NONFINITE,
	  "-inf has no int64 value" },
	{ KJ_DTYPE_BOOL, KJ_DTYPE_FLOAT16, INFINITY, 0, KJ_CMP_LOSS_NONFINITE, "inf has no bool" },
	/* lossless: whole floats in range, integers that fit, floats that
	 * only round, NaN and Inf between floats */
	{ KJ_DTYPE_INT64, KJ_DTYPE_FLOAT32, 3.0, 0, KJ_CMP_LOSS_NONE, NULL },
	{ KJ_DTYPE_INT64, KJ_DTYPE_FLOAT64, 3e9, 0, KJ_CMP_LOSS_NONE, NULL },
	{ KJ_DTYPE_INT16, KJ_DTYPE_FLOAT16, -2048, 0, KJ_CMP_LOSS_NONE, NULL },
	{ KJ_DTYPE_UINT8, KJ_DTYPE_FLOAT32, 255.0, 0, KJ_CMP_LOSS_NONE, NULL },
	{ KJ_DTYPE_BOOL, KJ_DTYPE_FLOAT32, 1.0, 0, KJ_CMP_LOSS_NONE, NULL },
	{ KJ_DTYPE_INT64, KJ_DTYPE_INT32, 0, INT32_MIN, KJ_CMP_LOSS_NONE, NULL },
	{ KJ_DTYPE_INT16, KJ_DTYPE_UINT8, 0, 255, KJ_CMP_LOSS_NONE, NULL },
	{ KJ_DTYPE_UINT64, KJ_DTYPE_INT8, 0, 127, KJ_CMP_LOSS_NONE, NULL },
	{ KJ_DTYPE_INT8, KJ_DTYPE_INT64, 0, -128, KJ_CMP_LOSS_NONE, NULL },
	{ KJ_DTYPE_BOOL, KJ_DTYPE_UINT8, 0, 1, KJ_CMP_LOSS_NONE, NULL },
	{ KJ_DTYPE_FLOAT32, KJ_DTYPE_INT64, 0, INT64_MAX, KJ_CMP_LOSS_NONE, NULL },
	{ KJ_DTYPE_FLOAT16, KJ_DTYPE_FLOAT32, 1.0001, 0, KJ_CMP_LOSS_NONE, NULL },
	{ KJ_DTYPE_FLOAT16, KJ_DTYPE_FLOAT32, 1e-10, 0, KJ_CMP_LOSS_NONE, NULL },
	{ KJ_DTYPE_FLOAT16, KJ_DTYPE_FLOAT32, -INFINITY, 0, KJ_CMP_LOSS_NONE, NULL },
	{ KJ_DTYPE_BFLOAT16, KJ_DTYPE_FLOAT32, NAN, 0, KJ_CMP_LOSS_NONE, NULL },
};

KJ_TEST(compare_lossy_casts_fail_with_their_own_message)
{
	size_t c;
	int rule;

	for (c = 0; c < sizeof(loss_cases) / sizeof(loss_cases[0]); c++)
		for (rule = 0; rule < 2; rule++) {
			const struct loss_case *lc = &loss_cases[c];
			struct kj_cmp_result res;
			struct pair pr;

			pair_make(&pr, lc->gdt, lc->adt, 3, 0, 0);
			if (kj_dtype_is_integer(lc->adt))
				store_int(pr.abuf, lc->adt, 1, lc->ai);
			else
				store(pr.abuf, lc->adt, 1, lc->a);
			run_rules(&pr, (enum kj_cmp_int_rule)rule, KJ_CMP_FLOAT64_SPEC, 1, &res);
			if (lc->loss == KJ_CMP_LOSS_NONE) {
				if (res.reason == KJ_CMP_CAST || res.n_cast_loss)
					kj_test_fail(__FILE__, __LINE__, "case %zu (%s golden, %s "
						     "actual): a lossless cast refused: %s", c,
						     kj_dtype_name(lc->gdt),
						     kj_dtype_name(lc->adt), res.message);
				pair_free(&pr);
				continue;
			}
			if (res.reason != KJ_CMP_CAST || !strstr(res.message, lc->words))
				kj_test_fail(__FILE__, __LINE__, "case %zu (%s golden, %s actual): "
					     "reason %s, message: %s (wanted '%s')", c,
					     kj_dtype_name(lc->gdt), kj_dtype_name(lc->adt),
					     kj_cmp_reason_name(res.reason), res.message, lc->words);
			KJ_CHECK(!res.pass);
			KJ_CHECK_INT(res.n_cast_loss, 1);
			KJ_CHECK_INT(res.n_worst, 1);
			KJ_CHECK_INT(res.worst[0].kind, KJ_CMP_POINT_CAST);
			KJ_CHECK_INT(res.worst[0].loss, lc->loss);
			KJ_CHECK_INT(res.worst[0].index[0], 1);
			KJ_CHECK(strstr(res.message, "casting the actual's ") != NULL);
			KJ_CHECK(strstr(res.message, "loses information at 1 of 3 elements") != NULL);
			pair_free(&pr);
		}
}

/* The reported case: an int64 golden of counts, the candidate's float
 * counts plus 0.75, which torch's .to() truncates back to the counts. */
KJ_TEST(compare_lossy_cast_counts_plus_three_quarters)
{
	struct kj_cmp_result r1, r3;
	struct pair pr;
	size_t i, n = 2 * (1u << 20) + 7;
	json_t *o, *w;

	pair_make(&pr, KJ_DTYPE_INT64, KJ_DTYPE_FLOAT32, n, 0, 0);
	for (i = 0; i < n; i++) {
		store_int(pr.gbuf, KJ_DTYPE_INT64, i, (int64_t)(i % 97));
		store(pr.abuf, KJ_DTYPE_FLOAT32, i, (double)(i % 97) + 0.75);
	}
	run(&pr, NULL, 1, &r1);
	run(&pr, NULL, 3, &r3);
	KJ_CHECK(!r1.pass);
	KJ_CHECK_INT(r1.reason, KJ_CMP_CAST);
	KJ_CHECK_INT(r1.n_cast_loss, n);
	/* The values after the cast are all equal: only the cast check sees
	 * the fraction. */
	KJ_CHECK_INT(r1.n_value_mismatch, 0);
	KJ_CHECK(strstr(r1.message, "casting the actual's float32 to the golden's int64 loses "
			"information at 2097159 of 2097159 elements: [0] 0.75 is not a whole "
			"number; [1] 1.75 is not a whole number; [2] 2.75 is not a whole number; "
			"...") != NULL);
	KJ_CHECK_STR(r1.message, r3.message);
	KJ_CHECK(memcmp(r1.worst, r3.worst, sizeof(r1.worst)) == 0);
	o = kj_cmp_result_json(&r1);
	KJ_CHECK(o != NULL);
	KJ_CHECK_STR(json_string_value(json_object_get(o, "reason")), "lossy_cast");
	KJ_CHECK_INT(json_integer_value(json_object_get(o, "lossy_cast")), n);
	w = json_array_get(json_object_get(o, "worst"), 1);
	KJ_CHECK_STR(json_string_value(json_object_get(w, "kind")), "lossy_cast");
	KJ_CHECK_STR(json_string_value(json_object_get(w, "loss")), "fraction");
	KJ_CHECK(json_real_value(json_object_get(w, "actual")) == 1.75);
	KJ_CHECK_INT(json_integer_value(json_object_get(w, "golden")), 1);
	json_decref(o);
	pair_free(&pr);

	/* A uint64 beyond int64 keeps its exact value in the record. */
	pair_make(&pr, KJ_DTYPE_INT64, KJ_DTYPE_UINT64, 1, 0, 0);
	store_int(pr.abuf, KJ_DTYPE_UINT64, 0, -1);
	run(&pr, NULL, 1, &r1);
	o = kj_cmp_result_json(&r1);
	w = json_array_get(json_object_get(o, "worst"), 0);
	KJ_CHECK_STR(json_string_value(json_object_get(w, "actual")), "18446744073709551615");
	KJ_CHECK_STR(json_string_value(json_object_get(w, "loss")), "range");
	json_decref(o);
	pair_free(&pr);
}

KJ_TEST(compare_float64_rule_float64_keeps_its_range)
{
	struct kj_cmp_result res;
	struct pair pr;

	/* float32 would make these Inf - Inf = NaN; float64 compares them. */
	pair_make(&pr, KJ_DTYPE_FLOAT64, KJ_DTYPE_FLOAT64, 8, 1e300, 1e300 * (1 + 1e-9));
	run_rules(&pr, KJ_CMP_INT_SPEC, KJ_CMP_FLOAT64_FLOAT64, 1, &res);
	KJ_CHECK(res.pass);
	KJ_CHECK(res.mere > 0 && res.mere < 1e-8);
	KJ_CHECK(res.has_float64_rule && !res.has_int_rule);
	KJ_CHECK_INT(res.float64_rule, KJ_CMP_FLOAT64_FLOAT64);
	pair_free(&pr);
}

/* --- fast path, threads, layouts -------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static double rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (double)(rng_state >> 11) * 0x1p-53;
}

static void swap_all(void *buf, size_t n, size_t w)
{
	unsigned char *p = buf;
	size_t i, k;

	for (i = 0; i < n; i++)
		for (k = 0; k < w / 2; k++) {
			unsigned char c = p[i * w + k];

			p[i * w + k] = p[i * w + w - 1 - k];
			p[i * w + w - 1 - k] = c;
		}
}

/*
 * The vector kernels against the scalar generic path: the same data, once
 * native and once byte-swapped (which takes the generic path).  Sizes cross
 * block and chunk boundaries; values include NaN, Inf, zeros, subnormals.
 */
KJ_TEST(compare_fast_path_agrees_with_generic_path)
{
	static const enum kj_dtype dts[] = { KJ_DTYPE_FLOAT32, KJ_DTYPE_FLOAT16,
					     KJ_DTYPE_BFLOAT16 };
	static const size_t sizes[] = { 1, 7, 8, 9, 513, 100003, (1u << 20) + 77 };
	size_t d, s, i;

	for (d = 0; d < 3; d++)
		for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			struct kj_cmp_result fast, slow;
			struct pair pr;
			size_t n = sizes[s], w = kj_dtype_size(dts[d]);

			pair_make(&pr, dts[d], dts[d], n, 0, 0);
			for (i = 0; i < n; i++) {
				double v = (rnd() - 0.5) * 100;
				double r = rnd();

				store(pr.gbuf, dts[d], i, v);
				store(pr.abuf, dts[d], i, v * (1 + (rnd() - 0.5) * 1e-3));
				if (r < 0.001) {
					store(pr.gbuf, dts[d], i, NAN);
					store(pr.abuf, dts[d], i, NAN);
				} else if (r < 0.002) {
					store(pr.gbuf, dts[d], i, -INFINITY);
					store(pr.abuf, dts[d], i, -INFINITY);
				} else if (r < 0.003) {
					store(pr.gbuf, dts[d], i, 0.0);
				} else if (r < 0.004) {
					store(pr.gbuf, dts[d], i, 1e-41);
					store(pr.abuf, dts[d], i, 3e-42);
				}
			}
			if (n > 600) { /* one mismatch of each kind */
				store(pr.abuf, dts[d], n / 3, NAN);
				store(pr.abuf, dts[d], n / 2, INFINITY);
			}
			run(&pr, NULL, 2, &fast);
			swap_all(pr.gbuf, n, w);
			swap_all(pr.abuf, n, w);
			pr.g.big_endian = pr.a.big_endian = 1;
			run(&pr, NULL, 2, &slow);

			KJ_CHECK_INT(fast.reason, slow.reason);
			KJ_CHECK_INT(fast.n_finite, slow.n_finite);
			KJ_CHECK_INT(fast.n_over_threshold, slow.n_over_threshold);
			KJ_CHECK_INT(fast.n_nan_golden, slow.n_nan_golden);
			KJ_CHECK_INT(fast.n_nan_mismatch, slow.n_nan_mismatch);
			KJ_CHECK_INT(fast.n_inf_golden, slow.n_inf_golden);
			KJ_CHECK_INT(fast.n_inf_mismatch, slow.n_inf_mismatch);
			KJ_CHECK(fast.mare == slow.mare);
			KJ_CHECK(fabs(fast.mere - slow.mere) <= 1e-6 * slow.mere);
			KJ_CHECK_INT(fast.n_worst, slow.n_worst);
			for (i = 0; i < (size_t)fast.n_worst; i++) {
				KJ_CHECK_INT(fast.worst[i].flat, slow.worst[i].flat);
				KJ_CHECK_INT(fast.worst[i].kind, slow.worst[i].kind);
			}
			pair_free(&pr);
		}
}

KJ_TEST(compare_threads_do_not_change_figures)
{
	struct kj_cmp_result r1, r2, r5;
	struct pair pr;
	size_t i, n = 3 * (1u << 20) + 5;

	pair_make(&pr, KJ_DTYPE_FLOAT32, KJ_DTYPE_FLOAT32, n, 0, 0);
	for (i = 0; i < n; i++) {
		double v = rnd() * 10;

		store(pr.gbuf, KJ_DTYPE_FLOAT32, i, v);
		store(pr.abuf, KJ_DTYPE_FLOAT32, i, v + rnd() * 1e-4);
	}
	store(pr.abuf, KJ_DTYPE_FLOAT32, 2500000, NAN);
	run(&pr, NULL, 1, &r1);
	run(&pr, NULL, 2, &r2);
	run(&pr, NULL, 5, &r5);
	KJ_CHECK(r1.mere == r2.mere && r1.mere == r5.mere);
	KJ_CHECK(r1.mare == r2.mare && r1.mare == r5.mare);
	KJ_CHECK_INT(r1.reason, KJ_CMP_NAN);
	KJ_CHECK_INT(r5.worst[0].index[0], 2500000);
	KJ_CHECK(memcmp(r1.worst, r5.worst, sizeof(r1.worst)) == 0);
	pair_free(&pr);
}

KJ_TEST(compare_fortran_against_c_order)
{
	/* The logical 2x3 matrix [[0,1,2],[3,4,5]]: golden in C order, actual
	 * in Fortran order (storage 0,3,1,4,2,5). */
	float gc[6] = { 0, 1, 2, 3, 4, 5 };
	float af[6] = { 0, 3, 1, 4, 2, 5 };
	int64_t shape[2] = { 2, 3 };
	struct kj_tensor g, a;
	struct kj_cmp_result res;
	struct kj_error err;

	kj_tensor_init(&g);
	kj_tensor_init(&a);
	KJ_CHECK_OK(kj_tensor_borrow(&g, KJ_DTYPE_FLOAT32, 2, shape, gc, &err), &err);
	KJ_CHECK_OK(kj_tensor_borrow(&a, KJ_DTYPE_FLOAT32, 2, shape, af, &err), &err);
	a.fortran_order = 1;
	KJ_CHECK_OK(kj_compare(&g, &a, NULL, &res, &err), &err);
	KJ_CHECK(res.pass);
	KJ_CHECK(res.mare == 0.0);

	/* Logical element [1, 2] (value 5) wrong: storage 5 in Fortran. */
	af[5] = 6;
	KJ_CHECK_OK(kj_compare(&g, &a, NULL, &res, &err), &err);
	KJ_CHECK(!res.pass);
	KJ_CHECK_INT(res.worst[0].index[0], 1);
	KJ_CHECK_INT(res.worst[0].index[1], 2);
	KJ_CHECK(res.worst[0].golden == 5.0 && res.worst[0].actual == 6.0);
}

KJ_TEST(compare_worst_points_are_the_worst)
{
	struct kj_cmp_result res;
	struct pair pr;
	size_t i;

	pair_make(&pr, KJ_DTYPE_FLOAT32, KJ_DTYPE_FLOAT32, 5000, 1.0, 1.0);
	for (i = 0; i < 20; i++) /* errors 1..20 ulps-ish, rising with i */
		store(pr.abuf, KJ_DTYPE_FLOAT32, 100 + i * 200, 1.0 + (double)(i + 1) * 1e-3);
	run(&pr, NULL, 1, &res);
	KJ_CHECK(!res.pass);
	KJ_CHECK_INT(res.n_worst, KJ_CMP_WORST);
	for (i = 0; i < KJ_CMP_WORST; i++)
		KJ_CHECK_INT(res.worst[i].index[0], 100 + (19 - i) * 200);
	for (i = 1; i < KJ_CMP_WORST; i++)
		KJ_CHECK(res.worst[i - 1].rel >= res.worst[i].rel);
	pair_free(&pr);
}

KJ_TEST(compare_json_record)
{
	struct kj_cmp_result res;
	struct pair pr;
	json_t *o;

	pair_make(&pr, KJ_DTYPE_FLOAT16, KJ_DTYPE_FLOAT16, 10, 1.0, 1.0);
	store(pr.abuf, KJ_DTYPE_FLOAT16, 6, NAN);
	run(&pr, NULL, 1, &res);
	o = kj_cmp_result_json(&res);
	KJ_CHECK(o != NULL);
	KJ_CHECK(json_is_false(json_object_get(o, "pass")));
	KJ_CHECK_STR(json_string_value(json_object_get(o, "reason")), "nan_mismatch");
	KJ_CHECK_INT(json_integer_value(json_object_get(json_object_get(o, "nan"), "mismatch")), 1);
	KJ_CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(o, "worst"), 0), "actual")), "nan");
	KJ_CHECK(json_real_value(json_object_get(o, "threshold")) == 0x1p-10);
	json_decref(o);
	pair_free(&pr);
}

/* --- the integer and float64 rules ------------------------------------------------------ */

KJ_TEST(compare_rule_names)
{
	enum kj_cmp_int_rule ir = KJ_CMP_INT_EXACT;
	enum kj_cmp_float64_rule fr = KJ_CMP_FLOAT64_FLOAT64;
	struct kj_cmp_options opt = { .int_rule = (enum kj_cmp_int_rule)7 };
	struct kj_cmp_result res;
	struct kj_error err;
	struct pair pr;

	KJ_CHECK_STR(kj_cmp_int_rule_name(KJ_CMP_INT_SPEC), "spec");
	KJ_CHECK_STR(kj_cmp_int_rule_name(KJ_CMP_INT_EXACT), "exact");
	KJ_CHECK_STR(kj_cmp_float64_rule_name(KJ_CMP_FLOAT64_SPEC), "spec");
	KJ_CHECK_STR(kj_cmp_float64_rule_name(KJ_CMP_FLOAT64_FLOAT64), "float64");
	KJ_CHECK_STR(kj_cmp_reason_name(KJ_CMP_VALUE), "value_mismatch");

	KJ_CHECK_OK(kj_cmp_int_rule_from_name("spec", &ir, &err), &err);
	KJ_CHECK_INT(ir, KJ_CMP_INT_SPEC);
	KJ_CHECK_OK(kj_cmp_int_rule_from_name("exact", &ir, &err), &err);
	KJ_CHECK_INT(ir, KJ_CMP_INT_EXACT);
	KJ_CHECK_OK(kj_cmp_float64_rule_from_name("spec", &fr, &err), &err);
	KJ_CHECK_INT(fr, KJ_CMP_FLOAT64_SPEC);
	KJ_CHECK_OK(kj_cmp_float64_rule_from_name("float64", &fr, &err), &err);
	KJ_CHECK_INT(fr, KJ_CMP_FLOAT64_FLOAT64);

	/* Unknown names are refused with the name and the choices, and the
	 * rule is left as it was. */
	KJ_CHECK_INT(kj_cmp_int_rule_from_name("Exact", &ir, &err), KJ_EINVAL);
	KJ_CHECK(strstr(err.msg, "'Exact'") && strstr(err.msg, "spec or exact"));
	KJ_CHECK_INT(ir, KJ_CMP_INT_EXACT);
	KJ_CHECK_INT(kj_cmp_float64_rule_from_name("float32", &fr, &err), KJ_EINVAL);
	KJ_CHECK(strstr(err.msg, "'float32'") && strstr(err.msg, "spec or float64"));
	KJ_CHECK_INT(kj_cmp_int_rule_from_name(NULL, &ir, &err), KJ_EINVAL);

	/* A rule out of range is no verdict. */
	pair_make(&pr, KJ_DTYPE_INT32, KJ_DTYPE_INT32, 4, 1, 1);
	KJ_CHECK_INT(kj_compare(&pr.g, &pr.a, &opt, &res, &err), KJ_EINVAL);
	pair_free(&pr);
}

static const enum kj_dtype int_dtypes[] = {
	KJ_DTYPE_INT8, KJ_DTYPE_INT16, KJ_DTYPE_INT32, KJ_DTYPE_INT64,
	KJ_DTYPE_UINT8, KJ_DTYPE_UINT16, KJ_DTYPE_UINT32, KJ_DTYPE_UINT64,
};

/* The largest and smallest value of an integer dtype, as int64 bits. */
static int64_t int_max(enum kj_dtype dt)
{
	unsigned bits = 8u * (unsigned)kj_dtype_size(dt);

	if (!kj_dtype_is_signed_integer(dt))
		return bits == 64 ? -1 : (int64_t)(((uint64_t)1 << bits) - 1);
	return bits == 64 ? INT64_MAX : (int64_t)(((uint64_t)1 << (bits - 1)) - 1);
}

static int64_t int_min(enum kj_dtype dt)
{
	if (!kj_dtype_is_signed_integer(dt))
		return 0;
	return -int_max(dt) - 1;
}

KJ_TEST(compare_int_exact_every_dtype)
{
	size_t d;

	for (d = 0; d < sizeof(int_dtypes) / sizeof(int_dtypes[0]); d++) {
		enum kj_dtype dt = int_dtypes[d];
		int64_t hi = int_max(dt), lo = int_min(dt);
		struct kj_cmp_result res;
		struct pair pr;

		/* Equal tensors, extremes included: a pass, no figures. */
		pair_make(&pr, dt, dt, 1000, 7, 7);
		store_int(pr.gbuf, dt, 0, hi);
		store_int(pr.abuf, dt, 0, hi);
		store_int(pr.gbuf, dt, 999, lo);
		store_int(pr.abuf, dt, 999, lo);
		run_rules(&pr, KJ_CMP_INT_EXACT, KJ_CMP_FLOAT64_SPEC, 1, &res);
		if (!res.pass)
			kj_test_fail(__FILE__, __LINE__, "%s: %s",
				     kj_dtype_name(dt), res.message);
		KJ_CHECK(res.has_int_rule && !res.has_float64_rule);
		KJ_CHECK_INT(res.int_rule, KJ_CMP_INT_EXACT);
		KJ_CHECK(!res.mere_defined);
		KJ_CHECK_INT(res.n_value_mismatch, 0);
		KJ_CHECK(strstr(res.message, "all 1000") != NULL);

		/* The largest value against one less, the smallest against
		 * one more: differences of 1 beyond what a double holds, for
		 * the 64-bit dtypes. */
		store_int(pr.abuf, dt, 0, (int64_t)((uint64_t)hi - 1));
		store_int(pr.abuf, dt, 999, (int64_t)((uint64_t)lo + 1));
		run_rules(&pr, KJ_CMP_INT_EXACT, KJ_CMP_FLOAT64_SPEC, 1, &res);
		KJ_CHECK(!res.pass);
		KJ_CHECK_INT(res.reason, KJ_CMP_VALUE);
		KJ_CHECK_INT(res.n_value_mismatch, 2);
		KJ_CHECK_INT(res.n_worst, 2);
		KJ_CHECK_INT(res.worst[0].kind, KJ_CMP_POINT_VALUE);
		KJ_CHECK_INT(res.worst[0].index[0], 0);
		KJ_CHECK(res.worst[0].exact);
		KJ_CHECK(res.worst[0].golden_int == hi);
		KJ_CHECK(res.worst[0].actual_int == (int64_t)((uint64_t)hi - 1));
		KJ_CHECK_INT(res.worst[1].index[0], 999);
		KJ_CHECK(res.worst[1].golden_int == lo);
		KJ_CHECK(res.worst[1].actual_int == (int64_t)((uint64_t)lo + 1));
		KJ_CHECK(strstr(res.message, "at 2 of 1000 positions") != NULL);
		pair_free(&pr);
	}
}

KJ_TEST(compare_int64_near_2_63_only_exact_sees_it)
{
	struct kj_cmp_result res;
	struct pair pr;
	char want[128];

	/* 2^63 - 1 against 2^63 - 2: the same float32 (and double), so the
	 * seed's rule sees rel 0; the exact rule sees the difference. */
	pair_make(&pr, KJ_DTYPE_INT64, KJ_DTYPE_INT64, 3, 0, 0);
	store_int(pr.gbuf, KJ_DTYPE_INT64, 1, INT64_MAX);
	store_int(pr.abuf, KJ_DTYPE_INT64, 1, INT64_MAX - 1);
	run_rules(&pr, KJ_CMP_INT_SPEC, KJ_CMP_FLOAT64_SPEC, 1, &res);
	KJ_CHECK(res.pass);
	KJ_CHECK(res.mare == 0.0);
	KJ_CHECK_INT(res.n_value_mismatch, 1); /* for information */
	KJ_CHECK(strstr(res.message, "seed's relative rule") != NULL);
	run_rules(&pr, KJ_CMP_INT_EXACT, KJ_CMP_FLOAT64_SPEC, 1, &res);
	KJ_CHECK_INT(res.reason, KJ_CMP_VALUE);
	snprintf(want, sizeof(want), "[1] golden %lld, actual %lld",
		 (long long)INT64_MAX, (long long)(INT64_MAX - 1));
	KJ_CHECK(strstr(res.message, want) != NULL);
	pair_free(&pr);

	/* uint64: 2^64 - 1 against 2^64 - 2, printed as unsigned. */
	pair_make(&pr, KJ_DTYPE_UINT64, KJ_DTYPE_UINT64, 2, 0, 0);
	store_int(pr.gbuf, KJ_DTYPE_UINT64, 0, -1);
	store_int(pr.abuf, KJ_DTYPE_UINT64, 0, -2);
	run_rules(&pr, KJ_CMP_INT_SPEC, KJ_CMP_FLOAT64_SPEC, 1, &res);
	KJ_CHECK(res.pass);
	run_rules(&pr, KJ_CMP_INT_EXACT, KJ_CMP_FLOAT64_SPEC, 1, &res);
	KJ_CHECK_INT(res.reason, KJ_CMP_VALUE);
	KJ_CHECK(strstr(res.message, "golden 18446744073709551615, actual "
				     "18446744073709551614") != NULL);
	pair_free(&pr);
}

KJ_TEST(compare_argmax_30000_against_30002)
{
	struct kj_cmp_result res;
	struct pair pr;

	/* The seed's rule: rel = 2 / 30000 = 6.7e-5 < 2^-13, a pass. */
	pair_make(&pr, KJ_DTYPE_INT64, KJ_DTYPE_INT64, 1, 30000, 30002);
	run_rules(&pr, KJ_CMP_INT_SPEC, KJ_CMP_FLOAT64_SPEC, 1, &res);
	KJ_CHECK(res.pass);
	KJ_CHECK(res.mare == (double)(2.0f / 30000.0f));
	KJ_CHECK_INT(res.int_rule, KJ_CMP_INT_SPEC);
	KJ_CHECK_INT(res.n_value_mismatch, 1);
	KJ_CHECK(strstr(res.message, "seed's relative rule for integers is "
				     "in force") != NULL);
	KJ_CHECK(strstr(res.message, "1 of 1 int64 elements differ") != NULL);

	/* The exact rule: a wrong answer, named with both values. */
	run_rules(&pr, KJ_CMP_INT_EXACT, KJ_CMP_FLOAT64_SPEC, 1, &res);
	KJ_CHECK(!res.pass);
	KJ_CHECK_INT(res.reason, KJ_CMP_VALUE);
	KJ_CHECK(strstr(res.message, "[0] golden 30000, actual 30002") != NULL);
	pair_free(&pr);

	/* Off by 100 fails the seed's rule too, and the message says which
	 * rule was in force. */
	pair_make(&pr, KJ_DTYPE_INT64, KJ_DTYPE_INT64, 1, 30000, 30100);
	run_rules(&pr, KJ_CMP_INT_SPEC, KJ_CMP_FLOAT64_SPEC, 1, &res);
	KJ_CHECK_INT(res.reason, KJ_CMP_ACCURACY);
	KJ_CHECK(strstr(res.message, "MARE above threshold") != NULL);
	KJ_CHECK(strstr(res.message, "(int rule spec)") != NULL);
	pair_free(&pr);
}

/* One golden element against one actual element of another dtype. */
struct mixed_case {
	enum kj_dtype gdt, adt;
	int64_t g;
	double a;         /* for a float actual */
	int64_t ai;       /* for an integer actual */
	int pass;         /* under the exact rule; what torch's .to() gives */
};

static const struct mixed_case mixed_cases[] = {
	/* integers to integers that hold them, by value */
	{ KJ_DTYPE_INT32, KJ_DTYPE_INT64, 5, 0, 5, 1 },
	{ KJ_DTYPE_INT32, KJ_DTYPE_INT64, 5, 0, 6, 0 },
	{ KJ_DTYPE_INT8, KJ_DTYPE_UINT8, 127, 0, 127, 1 },
	{ KJ_DTYPE_UINT64, KJ_DTYPE_INT64, INT64_MAX, 0, INT64_MAX, 1 },
	{ KJ_DTYPE_UINT16, KJ_DTYPE_INT8, 100, 0, 100, 1 },
	{ KJ_DTYPE_INT64, KJ_DTYPE_INT32, -7, 0, -7, 1 },
	{ KJ_DTYPE_INT64, KJ_DTYPE_INT32, 7, 0, -7, 0 },
	{ KJ_DTYPE_INT32, KJ_DTYPE_BOOL, 1, 0, 1, 1 },
	{ KJ_DTYPE_INT32, KJ_DTYPE_BOOL, 2, 0, 1, 0 },
	/* whole floats to integers */
	{ KJ_DTYPE_INT32, KJ_DTYPE_FLOAT32, 7, 7.0, 0, 1 },
	{ KJ_DTYPE_INT32, KJ_DTYPE_FLOAT32, -7, -7.0, 0, 1 },
	{ KJ_DTYPE_INT32, KJ_DTYPE_FLOAT32, 8, 7.0, 0, 0 },
	{ KJ_DTYPE_INT64, KJ_DTYPE_FLOAT64, 3000000000, 3e9, 0, 1 },
	{ KJ_DTYPE_INT16, KJ_DTYPE_FLOAT16, 2048, 2048, 0, 1 },
	{ KJ_DTYPE_UINT8, KJ_DTYPE_FLOAT32, 255, 255.0, 0, 1 },
	{ KJ_DTYPE_INT64, KJ_DTYPE_FLOAT64, INT64_MIN, -0x1p63, 0, 1 },
};

KJ_TEST(compare_int_mixed_actual_dtypes)
{
	size_t c;

	for (c = 0; c < sizeof(mixed_cases) / sizeof(mixed_cases[0]); c++) {
		const struct mixed_case *mc = &mixed_cases[c];
		struct kj_cmp_result res;
		struct pair pr;

		pair_make(&pr, mc->gdt, mc->adt, 2, 0, 0);
		store_int(pr.gbuf, mc->gdt, 1, mc->g);
		if (kj_dtype_is_integer(mc->adt))
			store_int(pr.abuf, mc->adt, 1, mc->ai);
		else
			store(pr.abuf, mc->adt, 1, mc->ai ? (double)mc->ai : mc->a);
		run_rules(&pr, KJ_CMP_INT_EXACT, KJ_CMP_FLOAT64_SPEC, 1, &res);
		if (res.pass != mc->pass)
			kj_test_fail(__FILE__, __LINE__, "case %zu (%s golden, "
				     "%s actual): %s", c,
				     kj_dtype_name(mc->gdt),
				     kj_dtype_name(mc->adt), res.message);
		KJ_CHECK_INT(res.n_value_mismatch, !mc->pass);
		if (!mc->pass) {
			KJ_CHECK_INT(res.worst[0].index[0], 1);
			KJ_CHECK(res.worst[0].golden_int == mc->g);
		}
		/* The seed's rule agrees wherever the values are equal. */
		run_rules(&pr, KJ_CMP_INT_SPEC, KJ_CMP_FLOAT64_SPEC, 1, &res);
		if (mc->pass)
			KJ_CHECK(res.pass && res.mare == 0.0);
		KJ_CHECK_INT(res.n_cast_loss, 0);
		pair_free(&pr);
	}
}

KJ_TEST(compare_int_nan_and_inf_actuals)
{
	struct kj_cmp_result res;
	struct pair pr;

	/* A NaN or an Inf has no integer value: the cast check names them
	 * first under both rules, and the NaN and Inf counts are kept. */
	pair_make(&pr, KJ_DTYPE_INT32, KJ_DTYPE_FLOAT32, 10, 3, 3);
	store(pr.abuf, KJ_DTYPE_FLOAT32, 4, NAN);
	store(pr.abuf, KJ_DTYPE_FLOAT32, 6, -INFINITY);
	run_rules(&pr, KJ_CMP_INT_EXACT, KJ_CMP_FLOAT64_SPEC, 1, &res);
	KJ_CHECK_INT(res.reason, KJ_CMP_CAST);
	KJ_CHECK_INT(res.n_cast_loss, 2);
	KJ_CHECK_INT(res.n_nan_actual, 1);
	KJ_CHECK_INT(res.n_inf_mismatch, 1);
	KJ_CHECK_INT(res.worst[0].index[0], 4);
	KJ_CHECK_INT(res.worst[1].index[0], 6);
	KJ_CHECK(res.worst[0].golden_int == 3 && !res.worst[0].exact);
	KJ_CHECK(strstr(res.message, "[4] nan has no int32 value; [6] -inf has no int32 value") !=
		 NULL);
	run_rules(&pr, KJ_CMP_INT_SPEC, KJ_CMP_FLOAT64_SPEC, 1, &res);
	KJ_CHECK_INT(res.reason, KJ_CMP_CAST);
	KJ_CHECK_INT(res.n_finite, 8);
	pair_free(&pr);
}

KJ_TEST(compare_int_exact_lists_the_first_positions)
{
	struct kj_cmp_result r1, r3;
	struct pair pr;
	size_t i, n = 3 * (1u << 20) + 11;

	/* 20 wrong elements spread over three chunks. */
	pair_make(&pr, KJ_DTYPE_INT32, KJ_DTYPE_INT32, n, 0, 0);
	for (i = 0; i < n; i++) {
		store_int(pr.gbuf, KJ_DTYPE_INT32, i, (int64_t)(i % 1000));
		store_int(pr.abuf, KJ_DTYPE_INT32, i, (int64_t)(i % 1000));
	}
	for (i = 0; i < 20; i++)
		store_int(pr.abuf, KJ_DTYPE_INT32, n - 1 - i * 150000, -5);
	run_rules(&pr, KJ_CMP_INT_EXACT, KJ_CMP_FLOAT64_SPEC, 1, &r1);
	run_rules(&pr, KJ_CMP_INT_EXACT, KJ_CMP_FLOAT64_SPEC, 3, &r3);
	KJ_CHECK_INT(r1.reason, KJ_CMP_VALUE);
	KJ_CHECK_INT(r1.n_value_mismatch, 20);
	KJ_CHECK_INT(r1.n_worst, KJ_CMP_WORST);
	for (i = 0; i < KJ_CMP_WORST; i++) {
		KJ_CHECK_INT(r1.worst[i].index[0], n - 1 - (19 - i) * 150000);
		KJ_CHECK(r1.worst[i].actual_int == -5);
	}
	KJ_CHECK(strstr(r1.message, "at 20 of") != NULL);
	KJ_CHECK(strstr(r1.message, "; ...") != NULL);
	KJ_CHECK_STR(r1.message, r3.message);
	KJ_CHECK(memcmp(r1.worst, r3.worst, sizeof(r1.worst)) == 0);
	pair_free(&pr);
}

/*
 * Same-dtype integer tensors skip equal blocks by their bytes; with only
 * one side byte-swapped every element is read.  Both must give the same
 * figures, under both rules.
 */
KJ_TEST(compare_int_equal_blocks_agree_with_elementwise)
{
	static const enum kj_dtype dts[] = { KJ_DTYPE_INT16, KJ_DTYPE_INT64,
					     KJ_DTYPE_UINT32 };
	size_t d, i, n = 100003;
	int rule;

	for (d = 0; d < 3; d++)
		for (rule = 0; rule < 2; rule++) {
			struct kj_cmp_result fast, slow;
			struct pair pr;
			size_t w = kj_dtype_size(dts[d]);
			enum kj_cmp_int_rule ir = rule ? KJ_CMP_INT_EXACT
						       : KJ_CMP_INT_SPEC;

			pair_make(&pr, dts[d], dts[d], n, 0, 0);
			for (i = 0; i < n; i++) {
				int64_t v = (int64_t)(rnd() * 30000) + 1;

				store_int(pr.gbuf, dts[d], i, v);
				store_int(pr.abuf, dts[d], i,
					  rnd() < 0.001 ? v + 1 + (int64_t)(rnd() * 3) : v);
			}
			run_rules(&pr, ir, KJ_CMP_FLOAT64_SPEC, 2, &fast);
			swap_all(pr.abuf, n, w);
			pr.a.big_endian = 1;
			run_rules(&pr, ir, KJ_CMP_FLOAT64_SPEC, 2, &slow);
			KJ_CHECK(fast.n_value_mismatch > 50);
			KJ_CHECK_INT(fast.reason, slow.reason);
			KJ_CHECK_INT(fast.n_value_mismatch, slow.n_value_mismatch);
			KJ_CHECK_INT(fast.n_finite, slow.n_finite);
			KJ_CHECK_INT(fast.n_over_threshold, slow.n_over_threshold);
			KJ_CHECK(fast.mere == slow.mere && fast.mare == slow.mare);
			KJ_CHECK_INT(fast.n_worst, slow.n_worst);
			for (i = 0; i < (size_t)fast.n_worst; i++)
				KJ_CHECK_INT(fast.worst[i].flat, slow.worst[i].flat);
			KJ_CHECK_STR(fast.message, slow.message);
			if (!rule)
				KJ_CHECK_INT(fast.n_finite, n);
			pair_free(&pr);
		}
}

KJ_TEST(compare_bool_ignores_the_int_rule)
{
	struct kj_cmp_result res;
	struct pair pr;

	pair_make(&pr, KJ_DTYPE_BOOL, KJ_DTYPE_BOOL, 8, 1, 1);
	store(pr.abuf, KJ_DTYPE_BOOL, 3, 0);
	run_rules(&pr, KJ_CMP_INT_SPEC, KJ_CMP_FLOAT64_SPEC, 1, &res);
	KJ_CHECK_INT(res.reason, KJ_CMP_BOOL);
	KJ_CHECK(!res.has_int_rule);
	run_rules(&pr, KJ_CMP_INT_EXACT, KJ_CMP_FLOAT64_SPEC, 1, &res);
	KJ_CHECK_INT(res.reason, KJ_CMP_BOOL);
	pair_free(&pr);
}

KJ_TEST(compare_float64_beyond_float32_range)
{
	struct kj_cmp_result res;
	struct pair pr;

	/*
	 * 1e39 against itself.  The seed's rule: finite on both sides in
	 * float64, so it enters MERE/MARE; promoted to float32 both are Inf,
	 * and torch gives rel = |Inf - Inf| / Inf = NaN, MERE NaN, a failure.
	 * kjudge counts that rel as Inf (MERE Inf): the same verdict.
	 */
	pair_make(&pr, KJ_DTYPE_FLOAT64, KJ_DTYPE_FLOAT64, 4, 1.0, 1.0);
	store(pr.gbuf, KJ_DTYPE_FLOAT64, 2, 1e39);
	store(pr.abuf, KJ_DTYPE_FLOAT64, 2, 1e39);
	run(&pr, NULL, 1, &res);
	KJ_CHECK(!res.pass);
	KJ_CHECK_INT(res.reason, KJ_CMP_ACCURACY);
	KJ_CHECK(isinf(res.mare) && isinf(res.mere));
	KJ_CHECK_INT(res.n_finite, 4);
	KJ_CHECK_INT(res.n_inf_golden, 0);
	KJ_CHECK_INT(res.worst[0].index[0], 2);
	KJ_CHECK(res.has_float64_rule && res.float64_rule == KJ_CMP_FLOAT64_SPEC);
	KJ_CHECK(strstr(res.message, "float64 promoted to float32") != NULL);

	/* The float64 rule: a pass, rel 0. */
	run_rules(&pr, KJ_CMP_INT_SPEC, KJ_CMP_FLOAT64_FLOAT64, 1, &res);
	KJ_CHECK(res.pass);
	KJ_CHECK(res.mare == 0.0);

	/* The Inf check is on the float64 values: a finite 1e39 golden
	 * against an Inf actual is an Inf mismatch under both rules, although
	 * both are Inf in float32. */
	store(pr.abuf, KJ_DTYPE_FLOAT64, 2, INFINITY);
	run(&pr, NULL, 1, &res);
	KJ_CHECK_INT(res.reason, KJ_CMP_INF);
	run_rules(&pr, KJ_CMP_INT_SPEC, KJ_CMP_FLOAT64_FLOAT64, 1, &res);
	KJ_CHECK_INT(res.reason, KJ_CMP_INF);
	pair_free(&pr);

	/* Below float32's precision the rules differ too: rel 2^-20 in
	 * float64 is 0 after promotion (1 + 2^-30 is 1.0f). */
	pair_make(&pr, KJ_DTYPE_FLOAT64, KJ_DTYPE_FLOAT64, 4, 1.0, 1.0 + 0x1p-30);
	run(&pr, NULL, 1, &res);
	KJ_CHECK(res.pass && res.mare == 0.0);
	run_rules(&pr, KJ_CMP_INT_SPEC, KJ_CMP_FLOAT64_FLOAT64, 1, &res);
	KJ_CHECK(res.pass && res.mare == 0x1p-30);
	pair_free(&pr);
}

KJ_TEST(compare_json_names_the_rules)
{
	struct kj_cmp_result res;
	struct pair pr;
	json_t *o, *w;

	/* An integer golden under the exact rule: exact integers in worst. */
	pair_make(&pr, KJ_DTYPE_INT64, KJ_DTYPE_INT64, 4, 1, 1);
	store_int(pr.gbuf, KJ_DTYPE_INT64, 2, INT64_MAX);
	store_int(pr.abuf, KJ_DTYPE_INT64, 2, INT64_MAX - 1);
	run_rules(&pr, KJ_CMP_INT_EXACT, KJ_CMP_FLOAT64_SPEC, 1, &res);
	o = kj_cmp_result_json(&res);
	KJ_CHECK(o != NULL);
	KJ_CHECK_STR(json_string_value(json_object_get(o, "reason")), "value_mismatch");
	KJ_CHECK_STR(json_string_value(json_object_get(o, "int_rule")), "exact");
	KJ_CHECK(json_is_null(json_object_get(o, "float64_rule")));
	KJ_CHECK_INT(json_integer_value(json_object_get(o, "value_mismatch")), 1);
	KJ_CHECK(json_is_null(json_object_get(o, "mere")));
	w = json_array_get(json_object_get(o, "worst"), 0);
	KJ_CHECK_STR(json_string_value(json_object_get(w, "kind")), "value_mismatch");
	KJ_CHECK(json_integer_value(json_object_get(w, "golden")) == INT64_MAX);
	KJ_CHECK(json_integer_value(json_object_get(w, "actual")) == INT64_MAX - 1);
	KJ_CHECK(json_is_null(json_object_get(w, "rel_err")));
	json_decref(o);
	pair_free(&pr);

	/* uint64 beyond 2^63 - 1: decimal strings, not rounded reals. */
	pair_make(&pr, KJ_DTYPE_UINT64, KJ_DTYPE_UINT64, 1, 0, 0);
	store_int(pr.gbuf, KJ_DTYPE_UINT64, 0, -1);
	store_int(pr.abuf, KJ_DTYPE_UINT64, 0, 5);
	run_rules(&pr, KJ_CMP_INT_EXACT, KJ_CMP_FLOAT64_SPEC, 1, &res);
	o = kj_cmp_result_json(&res);
	w = json_array_get(json_object_get(o, "worst"), 0);
	KJ_CHECK_STR(json_string_value(json_object_get(w, "golden")), "18446744073709551615");
	KJ_CHECK_INT(json_integer_value(json_object_get(w, "actual")), 5);
	json_decref(o);
	pair_free(&pr);

	/* The seed's integer rule is named too. */
	pair_make(&pr, KJ_DTYPE_INT32, KJ_DTYPE_INT32, 4, 30000, 30002);
	run(&pr, NULL, 1, &res);
	o = kj_cmp_result_json(&res);
	KJ_CHECK_STR(json_string_value(json_object_get(o, "int_rule")), "spec");
	KJ_CHECK_INT(json_integer_value(json_object_get(o, "value_mismatch")), 4);
	w = json_array_get(json_object_get(o, "worst"), 0);
	KJ_CHECK_STR(json_string_value(json_object_get(w, "kind")), "rel_err");
	KJ_CHECK_INT(json_integer_value(json_object_get(w, "actual")), 30002);
	json_decref(o);
	pair_free(&pr);

	/* float64 names its rule; float32 names none. */
	pair_make(&pr, KJ_DTYPE_FLOAT64, KJ_DTYPE_FLOAT64, 4, 1, 1);
	run_rules(&pr, KJ_CMP_INT_EXACT, KJ_CMP_FLOAT64_FLOAT64, 1, &res);
	o = kj_cmp_result_json(&res);
	KJ_CHECK(json_is_null(json_object_get(o, "int_rule")));
	KJ_CHECK_STR(json_string_value(json_object_get(o, "float64_rule")), "float64");
	json_decref(o);
	pair_free(&pr);
	pair_make(&pr, KJ_DTYPE_FLOAT32, KJ_DTYPE_FLOAT32, 4, 1, 1);
	run(&pr, NULL, 1, &res);
	o = kj_cmp_result_json(&res);
	KJ_CHECK(json_is_null(json_object_get(o, "int_rule")));
	KJ_CHECK(json_is_null(json_object_get(o, "float64_rule")));
	json_decref(o);
	pair_free(&pr);
}

KJ_TEST(compare_int_spec_rounds_to_float32_once)
{
	struct kj_cmp_result res;
	struct pair pr;
	const int64_t g = ((int64_t)1 << 60) + ((int64_t)1 << 36) + 1;

	/* torch's .float() rounds 2^60 + 2^36 + 1 to 2^60 + 2^37 in one step
	 * (rel 0 against an actual of 2^60 + 2^37); through double it would
	 * first become 2^60 + 2^36, a tie, and then 2^60 (rel 2^-23). */
	pair_make(&pr, KJ_DTYPE_INT64, KJ_DTYPE_INT64, 1, 0, 0);
	store_int(pr.gbuf, KJ_DTYPE_INT64, 0, g);
	store_int(pr.abuf, KJ_DTYPE_INT64, 0, ((int64_t)1 << 60) + ((int64_t)1 << 37));
	run(&pr, NULL, 1, &res);
	KJ_CHECK(res.pass);
	KJ_CHECK(res.mare == 0.0);
	KJ_CHECK_INT(res.n_value_mismatch, 1);
	KJ_CHECK_INT(res.n_worst, 0); /* rel 0 is never listed */
	pair_free(&pr);
}
