/*
 * report.c - JSON records of results (see report.h).
 */
#include <math.h>

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
	default:
		return "rel_err";
	}
}

static json_t *point_json(const struct kj_cmp_point *p, int ndim)
{
	return json_pack("{s:s, s:o, s:I, s:o, s:o, s:o}",
			 "kind", point_kind_name(p->kind),
			 "index", shape_json(ndim, p->index),
			 "flat", (json_int_t)p->flat,
			 "golden", kj_json_number(p->golden),
			 "actual", kj_json_number(p->actual),
			 "rel_err", p->kind == KJ_CMP_POINT_REL
				 ? kj_json_number(p->rel) : json_null());
}

json_t *kj_cmp_result_json(const struct kj_cmp_result *r)
{
	json_t *worst = json_array(), *o;
	int i;

	if (!worst)
		return NULL;
	for (i = 0; i < r->n_worst; i++)
		if (json_array_append_new(worst,
					  point_json(&r->worst[i], r->golden_ndim))) {
			json_decref(worst);
			return NULL;
		}
	o = json_pack(
		"{s:b, s:s, s:s,"
		" s:{s:s, s:o}, s:{s:s, s:o},"
		" s:s, s:f, s:f, s:f, s:o, s:o,"
		" s:I, s:I, s:I,"
		" s:{s:I, s:I, s:I}, s:{s:I, s:I, s:I}, s:I, s:o}",
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
		"worst", worst);
	return o;
}
