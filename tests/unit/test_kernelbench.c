/*
 * test_kernelbench.c - KernelBench's figures of timed cases
 * (kj_kb_runtime_stats) and the op names taken (kj_torch_name_problem).
 */
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "kjudge/pipeline.h"
#include "kjudge/torch.h"
#include "unit.h"

static struct kj_latency lat(double median, double mean, double lo, double hi, int n)
{
	struct kj_latency l;

	memset(&l, 0, sizeof(l));
	l.median_ms = median;
	l.mean_ms = mean;
	l.stdev_ms = 0.5;
	l.min_ms = lo;
	l.max_ms = hi;
	l.n = n;
	return l;
}

/* One case: the median is the runtime, KernelBench's keys beside it; two:
 * the geometric mean of the medians, the range over both, no std; a case
 * without a median: no runtime (-1.0) and an empty object, never a figure
 * of the other case. */
KJ_TEST(kb_runtime_stats_of_one_case_several_and_an_untimed_one)
{
	struct kj_latency l[2] = { lat(2.0, 2.5, 1.0, 9.0, 50), lat(8.0, 8.0, 7.0, 10.0, 30) };
	double rt;
	json_t *o;

	o = kj_kb_runtime_stats(l, 1, &rt);
	KJ_CHECK(o && rt == 2.0);
	KJ_CHECK(json_real_value(json_object_get(o, "mean")) == 2.5);
	KJ_CHECK(json_real_value(json_object_get(o, "std")) == 0.5);
	KJ_CHECK(json_integer_value(json_object_get(o, "num_trials")) == 50);
	KJ_CHECK(json_object_get(o, "cases") == NULL);
	json_decref(o);

	o = kj_kb_runtime_stats(l, 2, &rt);
	KJ_CHECK(o && fabs(rt - 4.0) < 1e-12);
	KJ_CHECK(json_object_get(o, "std") == NULL);
	KJ_CHECK(json_real_value(json_object_get(o, "min")) == 1.0);
	KJ_CHECK(json_real_value(json_object_get(o, "max")) == 10.0);
	KJ_CHECK(json_integer_value(json_object_get(o, "num_trials")) == 80);
	KJ_CHECK(json_integer_value(json_object_get(o, "cases")) == 2);
	json_decref(o);

	l[1].median_ms = (double)NAN;
	o = kj_kb_runtime_stats(l, 2, &rt);
	KJ_CHECK(o && rt == -1.0 && json_object_size(o) == 0);
	json_decref(o);
	l[1] = lat(8.0, 8.0, 7.0, 10.0, 0);
	o = kj_kb_runtime_stats(l, 2, &rt);
	KJ_CHECK(o && rt == -1.0 && json_object_size(o) == 0);
	json_decref(o);
	o = kj_kb_runtime_stats(NULL, 0, &rt);
	KJ_CHECK(o && rt == -1.0 && json_object_size(o) == 0);
	json_decref(o);
}

KJ_TEST(kb_op_names_are_file_stems_never_paths)
{
	static const char *const good[] = { "1_Square_matrix_multiplication_", "19_ReLU",
					    "softmax", "v1.2-relu", "a_b" };
	static const char *const bad[] = { "", ".", "..", "../x", "a/b", "x..y", ".hidden",
					   "-x", "a b", "a\\b", "x\x1by", "caf\xc3\xa9" };
	char longname[200];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		KJ_CHECK(kj_torch_name_problem(good[i]) == NULL);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		KJ_CHECK(kj_torch_name_problem(bad[i]) != NULL);
	KJ_CHECK(kj_torch_name_problem(NULL) != NULL);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	KJ_CHECK(kj_torch_name_problem(longname) != NULL);
	longname[120] = '\0';
	KJ_CHECK(kj_torch_name_problem(longname) == NULL);
}
