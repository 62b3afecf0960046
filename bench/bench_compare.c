/*
 * bench_compare.c - throughput of kj_compare() and the machine's memory read
 * bandwidth, measured in the same run on the same buffers.
 *
 *   bench_compare [--mib N] [--repeats R] [--threads T]
 *
 * For float32, float16 and bfloat16 it fills a golden and an actual tensor
 * of N MiB each (default 1024) with finite values that differ in the last
 * mantissa bit, so that every element takes the full path of the rule, and
 * times kj_compare() R times after one warm-up call.  Throughput is the bytes
 * of both tensors divided by the time.  Then it reads the same two buffers
 * with T threads and a plain vector sum: the read bandwidth the comparator
 * is measured against.
 *
 * Output: one line per figure, "key value" pairs, for bench/run_compare_bench
 * to put beside numpy's figures:
 *   result name=compare_float32 gbps_median=... gbps_min=... gbps_max=... ms_median=...
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kjudge/compare.h"
#include "kjudge/tensor.h"

#define MAX_REPEATS 101
#define MAX_THREADS 64

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

static void report(const char *name, double bytes, double *secs, int n)
{
	qsort(secs, (size_t)n, sizeof(*secs), cmp_double);
	printf("result name=%s gbps_median=%.2f gbps_min=%.2f gbps_max=%.2f "
	       "ms_median=%.1f repeats=%d\n",
	       name, bytes / secs[n / 2] / 1e9, bytes / secs[n - 1] / 1e9,
	       bytes / secs[0] / 1e9, secs[n / 2] * 1e3, n);
	fflush(stdout);
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Finite values with exponents in a moderate range; the actual differs from
 * the golden in the lowest mantissa bit of every element. */
static void fill(enum kj_dtype dt, void *gbuf, void *abuf, size_t n)
{
	uint64_t s = 0x243f6a8885a308d3ull;
	size_t i;

	if (dt == KJ_DTYPE_FLOAT32) {
		uint32_t *g = gbuf, *a = abuf;

		for (i = 0; i < n; i++) {
			uint32_t r = (uint32_t)xorshift(&s);
			/* exponent 120..135: values from 2^-7 to 2^8 */
			uint32_t v = (r & 0x807fffffu) | ((120u + (r >> 27 & 15u)) << 23);

			g[i] = v;
			a[i] = v ^ 1u;
		}
	} else {
		uint16_t *g = gbuf, *a = abuf;
		int bf = dt == KJ_DTYPE_BFLOAT16;

		for (i = 0; i < n; i++) {
			uint64_t r = xorshift(&s);
			uint16_t v;

			if (bf) /* exponent 120..135 */
				v = (uint16_t)((r & 0x807fu) | ((120u + (r >> 20 & 15u)) << 7));
			else    /* exponent 8..23 of 31 */
				v = (uint16_t)((r & 0x83ffu) | ((8u + (r >> 20 & 15u)) << 10));
			g[i] = v;
			a[i] = v ^ 1u;
		}
	}
}

static int bench_dtype(enum kj_dtype dt, size_t bytes, int repeats, int threads)
{
	size_t n = bytes / kj_dtype_size(dt);
	int64_t shape[1] = { (int64_t)n };
	void *gbuf = aligned_alloc(4096, bytes), *abuf = aligned_alloc(4096, bytes);
	struct kj_cmp_options opt = { .threads = threads };
	struct kj_tensor g, a;
	struct kj_cmp_result res;
	struct kj_error err;
	double secs[MAX_REPEATS];
	char name[64];
	int r;

	if (!gbuf || !abuf) {
		fprintf(stderr, "bench_compare: cannot allocate 2 x %zu bytes\n", bytes);
		return 1;
	}
	fill(dt, gbuf, abuf, n);
	kj_tensor_init(&g);
	kj_tensor_init(&a);
	if (kj_tensor_borrow(&g, dt, 1, shape, gbuf, &err) ||
	    kj_tensor_borrow(&a, dt, 1, shape, abuf, &err)) {
		fprintf(stderr, "bench_compare: %s\n", err.msg);
		return 1;
	}
	for (r = -1; r < repeats; r++) {
		double t0 = now_s();

		if (kj_compare(&g, &a, &opt, &res, &err) != KJ_OK) {
			fprintf(stderr, "bench_compare: %s\n", err.msg);
			return 1;
		}
		if (r >= 0)
			secs[r] = now_s() - t0;
	}
	printf("verdict dtype=%s pass=%d mere=%.3g mare=%.3g finite=%zu\n",
	       kj_dtype_name(dt), res.pass, res.mere, res.mare, res.n_finite);
	snprintf(name, sizeof(name), "compare_%s", kj_dtype_name(dt));
	report(name, 2.0 * (double)bytes, secs, repeats);
	free(gbuf);
	free(abuf);
	return 0;
}

/* --- read bandwidth ------------------------------------------------------------ */

typedef uint64_t v4u __attribute__((vector_size(32)));

/* A thread's share of the read: the same slice of both buffers, read side by
 * side, the access pattern of the comparator. */
struct reader {
	const unsigned char *p, *q;
	size_t len;
	uint64_t sum;
};

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx2", "default")))
#endif
static uint64_t read_sum(const unsigned char *p, const unsigned char *q, size_t len)
{
	v4u s0 = { 0 }, s1 = { 0 }, s2 = { 0 }, s3 = { 0 }, x;
	size_t i;
	uint64_t s = 0;
	int k;

	for (i = 0; i + 64 <= len; i += 64) {
		memcpy(&x, p + i, 32);
		s0 += x;
		memcpy(&x, q + i, 32);
		s1 += x;
		memcpy(&x, p + i + 32, 32);
		s2 += x;
		memcpy(&x, q + i + 32, 32);
		s3 += x;
	}
	s0 += s1 + s2 + s3;
	for (k = 0; k < 4; k++)
		s += s0[k];
	return s;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;

	r->sum = read_sum(r->p, r->q, r->len);
	return NULL;
}

static int bench_bandwidth(size_t bytes, int repeats, int threads)
{
	unsigned char *p = aligned_alloc(4096, bytes), *q = aligned_alloc(4096, bytes);
	size_t share = bytes / (size_t)threads / 64 * 64;
	struct reader rd[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	double secs[MAX_REPEATS];
	uint64_t total = 0;
	int r, t;

	if (!p || !q) {
		fprintf(stderr, "bench_compare: cannot allocate 2 x %zu bytes\n", bytes);
		return 1;
	}
	memset(p, 1, bytes);
	memset(q, 2, bytes);
	for (r = -1; r < repeats; r++) {
		double t0 = now_s();

		for (t = 0; t < threads; t++) {
			rd[t].p = p + (size_t)t * share;
			rd[t].q = q + (size_t)t * share;
			rd[t].len = share;
			if (t > 0)
				pthread_create(&tid[t], NULL, reader_main, &rd[t]);
		}
		reader_main(&rd[0]);
		total += rd[0].sum;
		for (t = 1; t < threads; t++) {
			pthread_join(tid[t], NULL);
			total += rd[t].sum;
		}
		if (r >= 0)
			secs[r] = now_s() - t0;
	}
	printf("checksum %llu\n", (unsigned long long)total);
	report("read_bandwidth", 2.0 * (double)(share * (size_t)threads), secs, repeats);
	free(p);
	free(q);
	return 0;
}

int main(int argc, char **argv)
{
	size_t mib = 1024;
	int repeats = 5, threads = 0, i;
	long ncpu;

	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--mib"))
			mib = strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--repeats"))
			repeats = (int)strtol(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--threads"))
			threads = (int)strtol(argv[i + 1], NULL, 10);
	}
	if (mib < 1 || repeats < 1 || repeats > MAX_REPEATS || threads < 0 ||
	    threads > MAX_THREADS) {
		fprintf(stderr, "usage: bench_compare [--mib N] [--repeats 1..%d] "
				"[--threads 0..%d]\n", MAX_REPEATS, MAX_THREADS);
		return 2;
	}
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	printf("config mib=%zu repeats=%d threads=%d cpus=%ld\n", mib, repeats,
	       threads ? threads : (int)ncpu, ncpu);
	if (bench_dtype(KJ_DTYPE_FLOAT32, mib << 20, repeats, threads) ||
	    bench_dtype(KJ_DTYPE_FLOAT16, mib << 20, repeats, threads) ||
	    bench_dtype(KJ_DTYPE_BFLOAT16, mib << 20, repeats, threads) ||
	    bench_bandwidth(mib << 20, repeats, threads ? threads : (int)ncpu))
		return 1;
	return 0;
}
