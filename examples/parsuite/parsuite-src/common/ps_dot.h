/*
 * ps_dot.h - the dot kernel's inputs and check: two vectors of n floats in
 * [0, 1), their dot product summed in double.  The order of the sum depends
 * on the API, so the printed "dot = " value is compared within a relative
 * tolerance (the spec's oracle) and here within 1e-9 of a serial sum.
 */
#ifndef PS_DOT_H
#define PS_DOT_H

#include "ps_util.h"

struct ps_dot {
	long n;
	float *x, *y;
};

/* argv: N SEED (the caller has checked argc). */
static inline void ps_dot_setup(struct ps_dot *p, char **argv)
{
	p->n = ps_arg("N", argv[1], 1L << 28);
	uint32_t state = ps_seed(ps_arg("SEED", argv[2], 1L << 30));

	p->x = (float *)ps_alloc((size_t)p->n, sizeof *p->x);
	p->y = (float *)ps_alloc((size_t)p->n, sizeof *p->y);
	for (long i = 0; i < p->n; i++) {
		p->x[i] = ps_unit(&state);
		p->y[i] = ps_unit(&state);
	}
}

static inline int ps_dot_finish(struct ps_dot *p, double got, double ms)
{
	double want = 0.0;

	for (long i = 0; i < p->n; i++)
		want += (double)p->x[i] * (double)p->y[i];
	printf("dot = %.10e\n", got);
	printf("time_ms = %.3f\n", ms);
	free(p->x);
	free(p->y);
	return ps_verdict(fabs(got - want) <= 1e-9 * fabs(want), "dot", "the sum differs from a serial sum");
}

#endif
