/*
 * jacobi (CUDA): iters sweeps of a weighted five-point stencil over an
 * n x n grid whose boundary is fixed, one kernel launch a sweep, one thread
 * a cell; ps_jacobi.h makes the grid and checks the result.
 *
 *   usage: jacobi N ITERS
 */
#include "ps_cuda.h"
#include "ps_jacobi.h"

enum { TILE = 16 };

__global__ void jacobi_sweep(const float *u, float *v, unsigned n)
{
	unsigned j = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned i = blockIdx.y * blockDim.y + threadIdx.y;

	if (i < 1 || j < 1 || i >= n - 1 || j >= n - 1)
		return;
	v[i * n + j] = PS_JACOBI_CENTRE * u[i * n + j] +
		       PS_JACOBI_SIDE * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1]);
}

int main(int argc, char **argv)
{
	struct ps_jacobi p;

	if (argc != 3) {
		fprintf(stderr, "usage: %s N ITERS\n", argv[0]);
		return 2;
	}
	ps_jacobi_setup(&p, argv);
	unsigned n = (unsigned)p.n;
	size_t bytes = (size_t)n * n * sizeof(float);

	float *d_u, *d_v;
	ps_cuda_check(cudaMalloc(&d_u, bytes), "cudaMalloc");
	ps_cuda_check(cudaMalloc(&d_v, bytes), "cudaMalloc");
	ps_cuda_check(cudaMemcpy(d_u, p.u, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
	ps_cuda_check(cudaMemcpy(d_v, p.v, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");

	dim3 block(TILE, TILE), grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
	double t0 = ps_now_ms();
	for (long t = 0; t < p.iters; t++) {
		jacobi_sweep<<<grid, block>>>(d_u, d_v, n);
		float *swap = d_u;
		d_u = d_v;
		d_v = swap;
	}
	ps_cuda_check(cudaGetLastError(), "jacobi_sweep<<<>>>");
	ps_cuda_check(cudaMemcpy(p.u, d_u, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
	double t1 = ps_now_ms();

	cudaFree(d_u);
	cudaFree(d_v);
	return ps_jacobi_finish(&p, p.u, t1 - t0);
}
