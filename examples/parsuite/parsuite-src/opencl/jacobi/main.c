/*
 * jacobi (OpenCL host): iters sweeps of a weighted five-point stencil over an
 * n x n grid whose boundary is fixed, one launch of the kernel of jacobi.cl
 * (read from the working directory) a sweep; ps_jacobi.h makes the grid and
 * checks the result.
 *
 *   usage: jacobi N ITERS
 */
#include "ps_cl.h"
#include "ps_jacobi.h"

enum { TILE = 8 };

int main(int argc, char **argv)
{
	struct ps_jacobi p;
	struct ps_cl cl;

	if (argc != 3) {
		fprintf(stderr, "usage: %s N ITERS\n", argv[0]);
		return 2;
	}
	ps_jacobi_setup(&p, argv);
	cl_uint n = (cl_uint)p.n;
	size_t bytes = (size_t)n * n * sizeof(float);

	ps_cl_open(&cl, "jacobi.cl");
	cl_kernel k = ps_cl_kernel(&cl, "jacobi_sweep");
	cl_mem d_u = ps_cl_buffer(&cl, bytes, p.u);
	cl_mem d_v = ps_cl_buffer(&cl, bytes, p.v);
	ps_cl_arg(k, 2, sizeof n, &n);

	size_t side = (n + TILE - 1) / TILE * TILE;
	size_t global[2] = {side, side}, local[2] = {TILE, TILE};
	double t0 = ps_now_ms();
	for (long t = 0; t < p.iters; t++) {
		ps_cl_arg(k, 0, sizeof d_u, &d_u);
		ps_cl_arg(k, 1, sizeof d_v, &d_v);
		ps_cl_check(clEnqueueNDRangeKernel(cl.queue, k, 2, NULL, global, local, 0, NULL, NULL),
			    "clEnqueueNDRangeKernel");
		cl_mem swap = d_u;
		d_u = d_v;
		d_v = swap;
	}
	ps_cl_read_back(&cl, d_u, bytes, p.u);
	double t1 = ps_now_ms();

	clReleaseMemObject(d_u);
	clReleaseMemObject(d_v);
	clReleaseKernel(k);
	ps_cl_close(&cl);
	return ps_jacobi_finish(&p, p.u, t1 - t0);
}
