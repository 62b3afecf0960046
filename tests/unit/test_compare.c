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

/* Two 1-d tensors of n elements, golden of dtype gdt filled with gval,
 * actual of dtype adt filled with aval (both quantised to their dtypes). */
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
	case KJ_DTYPE_INT32: {
		int32_t x = (int32_t)v;
		memcpy(p + 4 * i, &x, 4);
		break;
	}
	case KJ_DTYPE_INT64: {
		int64_t x = (int64_t)v;
		memcpy(p + 8 * i, &x, 8);
		break;
	}
	case KJ_DTYPE_BOOL:
	case KJ_DTYPE_UINT8:
		p[i] = (unsigned char)v;
		break;
	default:
		KJ_CHECK(!"store: dtype not handled by the test");
	}
}

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

static void run(struct pair *pr, const char *tdtype, int threads,
		struct kj_cmp_result *res)
{
	struct kj_cmp_options opt = { tdtype, threads };
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
	struct kj_cmp_options opt = { "float128", 1 };
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

	/* A float actual is cast to bool: nonzero is true. */
	pair_make(&pr, KJ_DTYPE_BOOL, KJ_DTYPE_FLOAT32, 8, 1, 0.25);
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

	/* 70000 is finite in float32 but Inf in float16: infinitely wrong. */
	pair_make(&pr, KJ_DTYPE_FLOAT16, KJ_DTYPE_FLOAT32, 16, 65504.0, 65504.0);
	store(pr.abuf, KJ_DTYPE_FLOAT32, 5, 70000.0);
	run(&pr, NULL, 1, &res);
	KJ_CHECK_INT(res.reason, KJ_CMP_ACCURACY);
	KJ_CHECK(isinf(res.mare));
	KJ_CHECK_INT(res.worst[0].index[0], 5);
	pair_free(&pr);

	/* An int64 golden against a float actual: truncated like torch. */
	pair_make(&pr, KJ_DTYPE_INT64, KJ_DTYPE_FLOAT32, 16, 7, 7.75);
	run(&pr, NULL, 1, &res);
	KJ_CHECK(res.pass);
	pair_free(&pr);

	/* A float8 golden: 500 casts to NaN in e4m3fn, rel Inf. */
	pair_make(&pr, KJ_DTYPE_FLOAT8_E4M3FN, KJ_DTYPE_FLOAT32, 4, 448, 448);
	store(pr.abuf, KJ_DTYPE_FLOAT32, 2, 500.0);
	run(&pr, NULL, 1, &res);
	KJ_CHECK_INT(res.reason, KJ_CMP_ACCURACY);
	KJ_CHECK(isinf(res.mare));
	pair_free(&pr);
}

KJ_TEST(compare_float64_keeps_its_range)
{
	struct kj_cmp_result res;
	struct pair pr;

	/* float32 would make these Inf - Inf = NaN; float64 compares them. */
	pair_make(&pr, KJ_DTYPE_FLOAT64, KJ_DTYPE_FLOAT64, 8, 1e300, 1e300 * (1 + 1e-9));
	run(&pr, NULL, 1, &res);
	KJ_CHECK(res.pass);
	KJ_CHECK(res.mere > 0 && res.mere < 1e-8);
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
