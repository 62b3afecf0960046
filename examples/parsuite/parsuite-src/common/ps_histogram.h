/*
 * ps_histogram.h - the histogram kernel's inputs and check: n pseudo-random
 * 32-bit values counted into `bins` equal ranges, the counts written one a
 * line to counts.txt (the file the spec's oracle hashes) and compared with a
 * serial count.  The bin of a value is the high half of value * bins, which
 * spreads the 32-bit range evenly without a division.
 */
#ifndef PS_HISTOGRAM_H
#define PS_HISTOGRAM_H

#include <string.h>

#include "ps_util.h"

/* Local memory holds one work-group's counts, which bounds the bins. */
#define PS_HISTOGRAM_MAX_BINS 4096

struct ps_histogram {
	long n;
	unsigned bins;
	uint32_t *values;
	uint32_t *counts; /* zeroed here, filled by the variant */
};

/* argv: N BINS SEED (the caller has checked argc). */
static inline void ps_histogram_setup(struct ps_histogram *p, char **argv)
{
	p->n = ps_arg("N", argv[1], 1L << 28);
	p->bins = (unsigned)ps_arg("BINS", argv[2], PS_HISTOGRAM_MAX_BINS);
	uint32_t state = ps_seed(ps_arg("SEED", argv[3], 1L << 30));

	p->values = (uint32_t *)ps_alloc((size_t)p->n, sizeof *p->values);
	p->counts = (uint32_t *)ps_alloc(p->bins, sizeof *p->counts);
	for (long i = 0; i < p->n; i++)
		p->values[i] = ps_next(&state);
}

/* Writes counts.txt, prints the figures and the verdict, frees the problem
 * and returns the exit status. */
static inline int ps_histogram_finish(struct ps_histogram *p, double ms)
{
	uint32_t *want = (uint32_t *)ps_alloc(p->bins, sizeof *want);

	for (long i = 0; i < p->n; i++)
		want[((uint64_t)p->values[i] * p->bins) >> 32]++;
	int same = memcmp(p->counts, want, p->bins * sizeof *want) == 0;
	int written = ps_write_lines("counts.txt", p->counts, p->bins) == 0;

	printf("time_ms = %.3f\n", ms);
	free(want);
	free(p->values);
	free(p->counts);
	if (!written)
		return 2;
	return ps_verdict(same, "histogram", "the counts differ from a serial count");
}

#endif
