/*
 * histogram (CUDA): counts n pseudo-random 32-bit values into `bins` equal
 * ranges on the GPU, each block into shared memory first, then into the
 * global counts; ps_histogram.h makes the values and writes and checks the
 * counts.
 *
 *   usage: histogram N BINS SEED
 */
#include "ps_cuda.h"
#include "ps_histogram.h"

enum { BLOCKS = 128, THREADS = 256 };

__global__ void histogram(const unsigned *values, unsigned n, unsigned bins, unsigned *counts)
{
	extern __shared__ unsigned block_counts[];

	for (unsigned b = threadIdx.x; b < bins; b += blockDim.x)
		block_counts[b] = 0;
	__syncthreads();

	for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		unsigned bin = (unsigned)(((unsigned long long)values[i] * bins) >> 32);
		atomicAdd(&block_counts[bin], 1u);
	}
	__syncthreads();

	for (unsigned b = threadIdx.x; b < bins; b += blockDim.x)
		if (block_counts[b] != 0)
			atomicAdd(&counts[b], block_counts[b]);
}

int main(int argc, char **argv)
{
	struct ps_histogram p;

	if (argc != 4) {
		fprintf(stderr, "usage: %s N BINS SEED\n", argv[0]);
		return 2;
	}
	ps_histogram_setup(&p, argv);
	unsigned n = (unsigned)p.n, bins = p.bins;

	unsigned *d_values, *d_counts;
	ps_cuda_check(cudaMalloc(&d_values, (size_t)n * sizeof *d_values), "cudaMalloc");
	ps_cuda_check(cudaMalloc(&d_counts, bins * sizeof *d_counts), "cudaMalloc");
	ps_cuda_check(cudaMemcpy(d_values, p.values, (size_t)n * sizeof *d_values, cudaMemcpyHostToDevice), "cudaMemcpy");
	ps_cuda_check(cudaMemset(d_counts, 0, bins * sizeof *d_counts), "cudaMemset");

	double t0 = ps_now_ms();
	histogram<<<BLOCKS, THREADS, bins * sizeof(unsigned)>>>(d_values, n, bins, d_counts);
	ps_cuda_check(cudaGetLastError(), "histogram<<<>>>");
	ps_cuda_check(cudaMemcpy(p.counts, d_counts, bins * sizeof *d_counts, cudaMemcpyDeviceToHost), "cudaMemcpy");
	double t1 = ps_now_ms();

	cudaFree(d_values);
	cudaFree(d_counts);
	return ps_histogram_finish(&p, t1 - t0);
}
