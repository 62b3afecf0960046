/*
 * ps_cuda.h - the CUDA error check the parsuite CUDA variants share.  A
 * failed call stops the program with exit 2 and the call on stderr, so a run
 * whose kernel never ran cannot print a verdict line.
 */
#ifndef PS_CUDA_H
#define PS_CUDA_H

#include <cuda_runtime.h>

#include "ps_util.h"

static inline void ps_cuda_check(cudaError_t err, const char *call)
{
	if (err != cudaSuccess) {
		fprintf(stderr, "cuda: %s failed: %s\n", call, cudaGetErrorString(err));
		exit(2);
	}
}

#endif
