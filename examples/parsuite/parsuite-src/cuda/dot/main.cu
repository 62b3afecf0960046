/*
 * dot (CUDA): the dot product of two vectors of n floats on the GPU, the
 * products summed in double: one partial sum per block, added here.
 * ps_dot.h makes the vectors and checks the sum.
 *
 *   usage: dot N SEED
 */
#include "ps_cuda.h"
#include "ps_dot.h"

enum { BLOCKS = 128, THREADS = 256 };

__global__ void dot_partial(const float *x, const float *y, unsigned n, double *partial)
{
	__shared__ double scratch[THREADS];
	double sum = 0.0;

	for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		sum += (double)x[i] * (double)y[i];
	scratch[threadIdx.x] = sum;
	__syncthreads();

	for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
		if (threadIdx.x < stride)
			scratch[threadIdx.x] += scratch[threadIdx.x + stride];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		partial[blockIdx.x] = scratch[0];
}

int main(int argc, char **argv)
{
	struct ps_dot p;
	double partial[BLOCKS];

	if (argc != 3) {
		fprintf(stderr, "usage: %s N SEED\n", argv[0]);
		return 2;
	}
	ps_dot_setup(&p, argv);
	unsigned n = (unsigned)p.n;

	float *d_x, *d_y;
	double *d_partial;
	ps_cuda_check(cudaMalloc(&d_x, (size_t)n * sizeof *d_x), "cudaMalloc");
	ps_cuda_check(cudaMalloc(&d_y, (size_t)n * sizeof *d_y), "cudaMalloc");
	ps_cuda_check(cudaMalloc(&d_partial, sizeof partial), "cudaMalloc");
	ps_cuda_check(cudaMemcpy(d_x, p.x, (size_t)n * sizeof *d_x, cudaMemcpyHostToDevice), "cudaMemcpy");
	ps_cuda_check(cudaMemcpy(d_y, p.y, (size_t)n * sizeof *d_y, cudaMemcpyHostToDevice), "cudaMemcpy");

	double t0 = ps_now_ms();
	dot_partial<<<BLOCKS, THREADS>>>(d_x, d_y, n, d_partial);
	ps_cuda_check(cudaGetLastError(), "dot_partial<<<>>>");
	ps_cuda_check(cudaMemcpy(partial, d_partial, sizeof partial, cudaMemcpyDeviceToHost), "cudaMemcpy");
	double got = 0.0;
	for (int b = 0; b < BLOCKS; b++)
		got += partial[b];
	double t1 = ps_now_ms();

	cudaFree(d_x);
	cudaFree(d_y);
	cudaFree(d_partial);
	return ps_dot_finish(&p, got, t1 - t0);
}
