/*
 * jacobi (OpenMP): iters sweeps of a weighted five-point stencil over an
 * n x n grid whose boundary is fixed, the rows of a sweep shared among the
 * threads; ps_jacobi.h makes the grid and checks the result.
 *
 *   usage: jacobi N ITERS
 */
#include <omp.h>

#include "ps_jacobi.h"

/* Sweeps between u and v (both hold the starting grid) and returns the one
 * that holds the last sweep. */
static float *jacobi(float *u, float *v, long n, long iters)
{
	for (long t = 0; t < iters; t++) {
#pragma omp parallel for schedule(static)
		for (long i = 1; i < n - 1; i++)
			for (long j = 1; j < n - 1; j++)
				v[i * n + j] = PS_JACOBI_CENTRE * u[i * n + j] +
					       PS_JACOBI_SIDE * (u[(i - 1) * n + j] + u[(i + 1) * n + j] +
								 u[i * n + j - 1] + u[i * n + j + 1]);
		float *swap = u;
		u = v;
		v = swap;
	}
	return u;
}

int main(int argc, char **argv)
{
	struct ps_jacobi p;

	if (argc != 3) {
		fprintf(stderr, "usage: %s N ITERS\n", argv[0]);
		return 2;
	}
	ps_jacobi_setup(&p, argv);
	double t0 = ps_now_ms();
	const float *got = jacobi(p.u, p.v, p.n, p.iters);
	double t1 = ps_now_ms();
	printf("threads = %d\n", omp_get_max_threads());
	return ps_jacobi_finish(&p, got, t1 - t0);
}
