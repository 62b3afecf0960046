/*
 * matvec (CUDA): y = A x for an m x n matrix of floats on the GPU, one
 * thread a row summed in float; ps_matvec.h makes A and x and checks y.
 *
 *   usage: matvec M N SEED
 */
#include "ps_cuda.h"
#include "ps_matvec.h"

enum { THREADS = 128 };

__global__ void matvec(const float *a, const float *x, unsigned m, unsigned n, float *y)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= m)
		return;
	float sum = 0.0f;
	for (unsigned j = 0; j < n; j++)
		sum += a[(size_t)i * n + j] * x[j];
	y[i] = sum;
}

int main(int argc, char **argv)
{
	struct ps_matvec p;

	if (argc != 4) {
		fprintf(stderr, "usage: %s M N SEED\n", argv[0]);
		return 2;
	}
	ps_matvec_setup(&p, argv);
	unsigned m = (unsigned)p.m, n = (unsigned)p.n;

	float *d_a, *d_x, *d_y;
	ps_cuda_check(cudaMalloc(&d_a, (size_t)m * n * sizeof *d_a), "cudaMalloc");
	ps_cuda_check(cudaMalloc(&d_x, n * sizeof *d_x), "cudaMalloc");
	ps_cuda_check(cudaMalloc(&d_y, m * sizeof *d_y), "cudaMalloc");
	ps_cuda_check(cudaMemcpy(d_a, p.a, (size_t)m * n * sizeof *d_a, cudaMemcpyHostToDevice), "cudaMemcpy");
	ps_cuda_check(cudaMemcpy(d_x, p.x, n * sizeof *d_x, cudaMemcpyHostToDevice), "cudaMemcpy");

	double t0 = ps_now_ms();
	matvec<<<(m + THREADS - 1) / THREADS, THREADS>>>(d_a, d_x, m, n, d_y);
	ps_cuda_check(cudaGetLastError(), "matvec<<<>>>");
	ps_cuda_check(cudaMemcpy(p.y, d_y, m * sizeof *d_y, cudaMemcpyDeviceToHost), "cudaMemcpy");
	double t1 = ps_now_ms();

	cudaFree(d_a);
	cudaFree(d_x);
	cudaFree(d_y);
	return ps_matvec_finish(&p, t1 - t0);
}
