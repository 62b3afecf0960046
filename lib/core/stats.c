/*
 * stats.c - the figures of a set of latency samples: mean (benchmark.py's
 * avg_latency_ms), median, sample standard deviation, extremes, and a
 * distribution-free 95 % confidence interval of the median.
 *
 * The interval takes the order statistics at ranks n/2 -+ 1.96 sqrt(n)/2
 * (the normal approximation of the binomial count of samples below the
 * median), which needs no assumption about the shape of the distribution;
 * timing samples are skewed and often bimodal.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/verdict.h"
#include "core/core.h"
#include "base/internal.h"

int kj__cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

void kj__sort_doubles(double *v, size_t n)
{
	if (n)
		qsort(v, n, sizeof(double), kj__cmp_double);
}

double kj__median_sorted(const double *v, size_t n)
{
	if (!n)
		return 0;
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double kj__quantile_sorted(const double *v, size_t n, double p)
{
	double pos;
	size_t i;

	if (!n)
		return 0;
	pos = p * (double)(n - 1);
	i = (size_t)pos;
	return i + 1 < n ? v[i] + (pos - (double)i) * (v[i + 1] - v[i]) : v[i];
}

int kj__latency(const double *samples, const double *escaped, size_t n, double peak_mb,
		const char *timer, struct kj_latency *out)
{
	double *v, sum = 0, sq = 0, mean, half;
	size_t i;
	long lo, hi;

	memset(out, 0, sizeof(*out));
	out->peak_memory_mb = peak_mb;
	if (timer)
		snprintf(out->timer, sizeof(out->timer), "%s", timer);
	out->n = (int)n;
	if (!n)
		return KJ_OK;
	v = malloc(n * sizeof(double));
	if (!v)
		return KJ_ENOMEM;
	for (i = 0; i < n; i++) {
		v[i] = samples[i];
		sum += v[i];
		if (escaped)
			out->escaped_ms_total += escaped[i];
	}
	mean = sum / (double)n;
	for (i = 0; i < n; i++)
		sq += (v[i] - mean) * (v[i] - mean);
	kj__sort_doubles(v, n);
	out->mean_ms = mean;
	out->median_ms = kj__median_sorted(v, n);
	out->stdev_ms = n > 1 ? sqrt(sq / (double)(n - 1)) : 0.0;
	out->min_ms = v[0];
	out->max_ms = v[n - 1];
	half = 1.96 * sqrt((double)n) / 2;
	lo = (long)floor((double)n / 2 - half);
	hi = (long)ceil((double)n / 2 + half);
	if (lo < 1)
		lo = 1;
	if (hi > (long)n)
		hi = (long)n;
	out->ci_low_ms = v[lo - 1];
	out->ci_high_ms = v[hi - 1];
	free(v);
	return KJ_OK;
}
