/*
 * report.c - JSON records of results (see report.h).
 */
#include <math.h>
#include <stdio.h>

#include "kjudge/report.h"
#include "base/internal.h"

json_t *kj_json_number(double v)
{
	if (isnan(v))
		return json_string("nan");
	if (isinf(v))
		return json_string(v > 0 ? "inf" : "-inf");
	return json_real(v);
}

static json_t *shape_json(int ndim, const int64_t *shape)
{
	json_t *a = json_array();
	int d;

	for (d = 0; a && d < ndim; d++)
		if (json_array_append_new(a, json_integer(shape[d])) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static const char *point_kind_name(enum kj_cmp_point_kind k)
{
	switch (k) {
	case KJ_CMP_POINT_NAN:
		return "nan_mismatch";
	case KJ_CMP_POINT_INF:
		return "inf_mismatch";
	case KJ_CMP_POINT_BOOL:
		return "bool_mismatch";
	case KJ_CMP_POINT_VALUE:
		return "value_mismatch";
	case KJ_CMP_POINT_CAST:
		return "lossy_cast";
	default:
		return "rel_err";
	}
}

/*
 * An exact integer of dtype dt (the bits as struct kj_cmp_point holds them):
 * a JSON integer, or for a uint64 beyond what jansson's integers hold
 * (2^63 - 1) its decimal digits as a string, so that no value is rounded.
 */
static json_t *int_json(int64_t v, enum kj_dtype dt)
{
	char digits[24];

	if (dt == KJ_DTYPE_UINT64 && v < 0) {
		snprintf(digits, sizeof(digits), "%llu",
			 (unsigned long long)(uint64_t)v);
		return json_string(digits);
	}
	return json_integer((json_int_t)v);
}

/* Integer goldens give their values exactly; the actual too when the cast
 * gave an integer, else (NaN, Inf, out of range) it is the value loaded.  A
 * lossy cast's actual is the value loaded, exact in its own dtype adt when
 * that is an integer one, and the point says how the cast loses it. */
static json_t *point_json(const struct kj_cmp_point *p, int ndim,
			  enum kj_dtype gdt, enum kj_dtype adt)
{
	int is_int = kj_dtype_is_integer(gdt), cast = p->kind == KJ_CMP_POINT_CAST;
	json_t *actual;

	if (cast)
		actual = p->exact ? int_json(p->actual_int, adt) : kj_json_number(p->actual);
	else
		actual = is_int && p->exact ? int_json(p->actual_int, gdt)
					    : kj_json_number(p->actual);
	return json_pack("{s:s, s:o, s:I, s:o, s:o, s:o, s:s*}",
			 "kind", point_kind_name(p->kind),
			 "index", shape_json(ndim, p->index),
			 "flat", (json_int_t)p->flat,
			 "golden", is_int ? int_json(p->golden_int, gdt)
					  : kj_json_number(p->golden),
			 "actual", actual,
			 "rel_err", p->kind == KJ_CMP_POINT_REL
				 ? kj_json_number(p->rel) : json_null(),
			 "loss", cast ? kj_cmp_loss_name(p->loss) : NULL);
}

json_t *kj_cmp_result_json(const struct kj_cmp_result *r)
{
	json_t *worst = json_array(), *o;
	int i;

	if (!worst)
		return NULL;
	for (i = 0; i < r->n_worst; i++)
		if (json_array_append_new(worst,
					  point_json(&r->worst[i], r->golden_ndim,
						     r->golden_dtype, r->actual_dtype))) {
			json_decref(worst);
			return NULL;
		}
	o = json_pack(
		"{s:b, s:s, s:s,"
		" s:{s:s, s:o}, s:{s:s, s:o},"
		" s:s, s:f, s:f, s:f, s:o, s:o,"
		" s:I, s:I, s:I,"
		" s:{s:I, s:I, s:I}, s:{s:I, s:I, s:I}, s:I, s:I, s:I,"
		" s:o, s:o, s:o}",
		"pass", r->pass,
		"reason", kj_cmp_reason_name(r->reason),
		"message", r->message,
		"golden", "dtype", kj_dtype_name(r->golden_dtype),
		"shape", shape_json(r->golden_ndim, r->golden_shape),
		"actual", "dtype", kj_dtype_name(r->actual_dtype),
		"shape", shape_json(r->actual_ndim, r->actual_shape),
		"threshold_dtype", r->threshold_dtype,
		"threshold", r->threshold,
		"mere_limit", r->mere_limit,
		"mare_limit", r->mare_limit,
		"mere", r->mere_defined ? kj_json_number(r->mere) : json_null(),
		"mare", r->mere_defined ? kj_json_number(r->mare) : json_null(),
		"elements", (json_int_t)r->n_elements,
		"finite_elements", (json_int_t)r->n_finite,
		"over_threshold", (json_int_t)r->n_over_threshold,
		"nan", "golden", (json_int_t)r->n_nan_golden,
		"actual", (json_int_t)r->n_nan_actual,
		"mismatch", (json_int_t)r->n_nan_mismatch,
		"inf", "golden", (json_int_t)r->n_inf_golden,
		"actual", (json_int_t)r->n_inf_actual,
		"mismatch", (json_int_t)r->n_inf_mismatch,
		"bool_mismatch", (json_int_t)r->n_bool_mismatch,
		"value_mismatch", (json_int_t)r->n_value_mismatch,
		"lossy_cast", (json_int_t)r->n_cast_loss,
		"int_rule", r->has_int_rule
				    ? json_string(kj_cmp_int_rule_name(r->int_rule))
				    : json_null(),
		"float64_rule", r->has_float64_rule
					? json_string(kj_cmp_float64_rule_name(
						  r->float64_rule))
					: json_null(),
		"worst", worst);
	return o;
}
