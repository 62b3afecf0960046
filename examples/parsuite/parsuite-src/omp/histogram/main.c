/*
 * histogram (OpenMP): counts n pseudo-random 32-bit values into `bins` equal
 * ranges; ps_histogram.h makes the values and writes and checks the counts.
 *
 *   usage: histogram N BINS SEED
 *
 * Each thread counts into a histogram of its own; the threads' histograms
 * are added at the end.
 */
#include <omp.h>

#include "ps_histogram.h"

static void histogram(const uint32_t *values, long n, unsigned bins, uint32_t *counts)
{
#pragma omp parallel
	{
		uint32_t *mine = (uint32_t *)ps_alloc(bins, sizeof *mine);

#pragma omp for schedule(static)
		for (long i = 0; i < n; i++)
			mine[((uint64_t)values[i] * bins) >> 32]++;
#pragma omp critical
		for (unsigned b = 0; b < bins; b++)
			counts[b] += mine[b];
		free(mine);
	}
}

int main(int argc, char **argv)
{
	struct ps_histogram p;

	if (argc != 4) {
		fprintf(stderr, "usage: %s N BINS SEED\n", argv[0]);
		return 2;
	}
	ps_histogram_setup(&p, argv);
	double t0 = ps_now_ms();
	histogram(p.values, p.n, p.bins, p.counts);
	double t1 = ps_now_ms();
	printf("threads = %d\n", omp_get_max_threads());
	return ps_histogram_finish(&p, t1 - t0);
}
