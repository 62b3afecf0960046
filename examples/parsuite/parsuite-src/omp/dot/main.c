/*
 * dot (OpenMP): the dot product of two vectors of n floats, the products
 * summed in double; ps_dot.h makes the vectors and checks the sum.
 *
 *   usage: dot N SEED
 */
#include <omp.h>

#include "ps_dot.h"

static double dot(const float *x, const float *y, long n)
{
	double sum = 0.0;

#pragma omp parallel for reduction(+ : sum) schedule(static)
	for (long i = 0; i < n; i++)
		sum += (double)x[i] * (double)y[i];
	return sum;
}

int main(int argc, char **argv)
{
	struct ps_dot p;

	if (argc != 3) {
		fprintf(stderr, "usage: %s N SEED\n", argv[0]);
		return 2;
	}
	ps_dot_setup(&p, argv);
	double t0 = ps_now_ms();
	double got = dot(p.x, p.y, p.n);
	double t1 = ps_now_ms();
	printf("threads = %d\n", omp_get_max_threads());
	return ps_dot_finish(&p, got, t1 - t0);
}
