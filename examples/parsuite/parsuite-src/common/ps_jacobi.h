/*
 * ps_jacobi.h - the jacobi kernel's grid and check: an n x n grid with a
 * random boundary in [0, 1) and a zero interior, swept iters times with
 * v = CENTRE * u + SIDE * (the sum of u's four neighbours) on the interior.
 * Compilers may fuse that multiply and add (GPUs do by default), so the
 * grids of different APIs differ in their last bits: a variant is checked
 * here against a serial sweep within 1e-5, and the spec's oracle is the
 * verdict line.
 */
#ifndef PS_JACOBI_H
#define PS_JACOBI_H

#include <string.h>

#include "ps_util.h"

#define PS_JACOBI_CENTRE 0.2f
#define PS_JACOBI_SIDE 0.2f

struct ps_jacobi {
	long n, iters;
	float *init;  /* the starting grid, kept for the check */
	float *u, *v; /* two copies of it for the variant to sweep between */
};

/* argv: N ITERS (the caller has checked argc); the grid's seed is N. */
static inline void ps_jacobi_setup(struct ps_jacobi *p, char **argv)
{
	p->n = ps_arg("N", argv[1], 1L << 13);
	p->iters = ps_arg("ITERS", argv[2], 1L << 20);
	uint32_t state = ps_seed(p->n);
	long n = p->n;
	size_t bytes = (size_t)(n * n) * sizeof(float);

	p->init = (float *)ps_alloc(1, bytes);
	for (long k = 0; k < n; k++) {
		p->init[k] = ps_unit(&state);
		p->init[(n - 1) * n + k] = ps_unit(&state);
		p->init[k * n] = ps_unit(&state);
		p->init[k * n + n - 1] = ps_unit(&state);
	}
	p->u = (float *)ps_alloc(1, bytes);
	p->v = (float *)ps_alloc(1, bytes);
	memcpy(p->u, p->init, bytes);
	memcpy(p->v, p->init, bytes);
}

/* got: the variant's final grid (on the host). */
static inline int ps_jacobi_finish(struct ps_jacobi *p, const float *got, double ms)
{
	long n = p->n;
	size_t cells = (size_t)(n * n);
	float *u = (float *)ps_alloc(cells, sizeof *u);
	float *v = (float *)ps_alloc(cells, sizeof *v);

	memcpy(u, p->init, cells * sizeof *u);
	memcpy(v, p->init, cells * sizeof *v);
	for (long t = 0; t < p->iters; t++) {
		for (long i = 1; i < n - 1; i++) {
			const float *up = u + (i - 1) * n, *row = u + i * n, *down = u + (i + 1) * n;
			float *out = v + i * n;

			for (long j = 1; j < n - 1; j++)
				out[j] = PS_JACOBI_CENTRE * row[j] +
					 PS_JACOBI_SIDE * (up[j] + down[j] + row[j - 1] + row[j + 1]);
		}
		float *swap = u;
		u = v;
		v = swap;
	}
	double worst = ps_max_diff(got, u, cells);

	printf("checksum = %.6f\n", ps_sum(got, cells));
	printf("max_abs_diff = %.3e\n", worst);
	printf("time_ms = %.3f\n", ms);
	free(u);
	free(v);
	free(p->init);
	free(p->u);
	free(p->v);
	return ps_verdict(worst <= 1e-5, "jacobi", "the grid differs from a serial sweep by more than 1e-5");
}

#endif
