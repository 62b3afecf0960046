/*
 * ps_matvec.h - the matvec kernel's inputs and check: y = A x for an m x n
 * matrix with entries in [-0.5, 0.5).  A variant sums each row in float, in
 * an order of its own, so the printed checksum (the sum of y) is compared
 * within an absolute tolerance (the spec's oracle), and every y[i] here
 * within 1e-3 of a row summed in double.
 */
#ifndef PS_MATVEC_H
#define PS_MATVEC_H

#include "ps_util.h"

struct ps_matvec {
	long m, n;
	float *a, *x;
	float *y; /* filled by the variant */
};

/* argv: M N SEED (the caller has checked argc). */
static inline void ps_matvec_setup(struct ps_matvec *p, char **argv)
{
	p->m = ps_arg("M", argv[1], 1L << 14);
	p->n = ps_arg("N", argv[2], 1L << 14);
	uint32_t state = ps_seed(ps_arg("SEED", argv[3], 1L << 30));

	p->a = (float *)ps_alloc((size_t)(p->m * p->n), sizeof *p->a);
	p->x = (float *)ps_alloc((size_t)p->n, sizeof *p->x);
	p->y = (float *)ps_alloc((size_t)p->m, sizeof *p->y);
	for (long k = 0; k < p->m * p->n; k++)
		p->a[k] = ps_unit(&state) - 0.5f;
	for (long j = 0; j < p->n; j++)
		p->x[j] = ps_unit(&state) - 0.5f;
}

static inline int ps_matvec_finish(struct ps_matvec *p, double ms)
{
	float *want = (float *)ps_alloc((size_t)p->m, sizeof *want);

	for (long i = 0; i < p->m; i++) {
		const float *row = p->a + i * p->n;
		double sum = 0.0;

		for (long j = 0; j < p->n; j++)
			sum += (double)row[j] * (double)p->x[j];
		want[i] = (float)sum;
	}
	double worst = ps_max_diff(p->y, want, (size_t)p->m);

	printf("checksum = %.6f\n", ps_sum(p->y, (size_t)p->m));
	printf("max_abs_diff = %.3e\n", worst);
	printf("time_ms = %.3f\n", ms);
	free(want);
	free(p->a);
	free(p->x);
	free(p->y);
	return ps_verdict(worst <= 1e-3, "matvec", "y differs from a double-precision product by more than 1e-3");
}

#endif
