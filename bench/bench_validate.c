/*
 * bench_validate.c - time kj_validate_file() per candidate, in one process.
 *
 *   bench_validate [--repeats R] FILE...
 *
 * Loads the default rules and one validator, validates every file once to
 * warm the page cache, then R times (default 5) each, and reports the
 * distribution of per-file times: the median of each file's R runs, then
 * the median, 90th and 99th percentiles and the maximum over the files,
 * and the total for one pass over all of them.  Process start, rule
 * loading and grammar set-up are outside the figures (bench/run_validate_bench
 * times the whole command separately).
 *
 * Output: "key value" pairs on one line, for bench/run_validate_bench:
 *   result files=... bytes_mean=... ms_p50=... ms_p90=... ms_p99=... ms_max=... pass_ms=...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "kjudge/validate.h"

#define MAX_REPEATS 101

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

int main(int argc, char **argv)
{
	struct kj_vrules *rules;
	struct kj_validator *v;
	struct kj_vresult res;
	struct kj_error err;
	double *per_file, runs[MAX_REPEATS], pass = 0, bytes = 0;
	int repeats = 5, first = 1, n, i, r;

	if (argc > 2 && !strcmp(argv[1], "--repeats")) {
		repeats = (int)strtol(argv[2], NULL, 10);
		first = 3;
	}
	n = argc - first;
	if (n < 1 || repeats < 1 || repeats > MAX_REPEATS) {
		fprintf(stderr, "usage: bench_validate [--repeats 1..%d] FILE...\n", MAX_REPEATS);
		return 2;
	}
	per_file = calloc((size_t)n, sizeof(*per_file));
	if (!per_file || kj_vrules_new(&rules, NULL, &err) ||
	    kj_validator_new(&v, rules, &err)) {
		fprintf(stderr, "bench_validate: cannot start\n");
		return 1;
	}
	kj_vresult_init(&res);
	for (i = 0; i < n; i++) { /* warm-up: page cache, allocator */
		struct stat st;

		if (stat(argv[first + i], &st) == 0)
			bytes += (double)st.st_size;
		kj_validate_file(v, argv[first + i], &res, &err);
	}
	for (i = 0; i < n; i++) {
		for (r = 0; r < repeats; r++) {
			double t0 = now_s();

			if (kj_validate_file(v, argv[first + i], &res, &err) != KJ_OK) {
				fprintf(stderr, "bench_validate: %s\n", err.msg);
				return 1;
			}
			runs[r] = now_s() - t0;
		}
		qsort(runs, (size_t)repeats, sizeof(runs[0]), cmp_double);
		per_file[i] = runs[repeats / 2];
		pass += per_file[i];
	}
	qsort(per_file, (size_t)n, sizeof(*per_file), cmp_double);
	printf("result files=%d bytes_mean=%.0f ms_p50=%.3f ms_p90=%.3f ms_p99=%.3f "
	       "ms_max=%.3f pass_ms=%.1f repeats=%d\n",
	       n, bytes / n, per_file[n / 2] * 1e3, per_file[(int)(n * 0.9)] * 1e3,
	       per_file[(int)(n * 0.99)] * 1e3, per_file[n - 1] * 1e3, pass * 1e3, repeats);
	kj_vresult_release(&res);
	kj_validator_free(v);
	kj_vrules_free(rules);
	free(per_file);
	return 0;
}
