/*
 * matvec (OpenMP): y = A x for an m x n matrix of floats, one row a loop
 * iteration summed in float; ps_matvec.h makes A and x and checks y.
 *
 *   usage: matvec M N SEED
 */
#include <omp.h>

#include "ps_matvec.h"

static void matvec(const float *a, const float *x, long m, long n, float *y)
{
#pragma omp parallel for schedule(static)
	for (long i = 0; i < m; i++) {
		float sum = 0.0f;
		for (long j = 0; j < n; j++)
			sum += a[i * n + j] * x[j];
		y[i] = sum;
	}
}

int main(int argc, char **argv)
{
	struct ps_matvec p;

	if (argc != 4) {
		fprintf(stderr, "usage: %s M N SEED\n", argv[0]);
		return 2;
	}
	ps_matvec_setup(&p, argv);
	double t0 = ps_now_ms();
	matvec(p.a, p.x, p.m, p.n, p.y);
	double t1 = ps_now_ms();
	printf("threads = %d\n", omp_get_max_threads());
	return ps_matvec_finish(&p, t1 - t0);
}
