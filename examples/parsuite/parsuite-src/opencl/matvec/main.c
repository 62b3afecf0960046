/*
 * matvec (OpenCL host): y = A x for an m x n matrix of floats on the device,
 * one work-item a row, with the kernel of matvec.cl (read from the working
 * directory); ps_matvec.h makes A and x and checks y.
 *
 *   usage: matvec M N SEED
 */
#include "ps_cl.h"
#include "ps_matvec.h"

enum { GROUP_SIZE = 64 };

int main(int argc, char **argv)
{
	struct ps_matvec p;
	struct ps_cl cl;

	if (argc != 4) {
		fprintf(stderr, "usage: %s M N SEED\n", argv[0]);
		return 2;
	}
	ps_matvec_setup(&p, argv);
	cl_uint m = (cl_uint)p.m, n = (cl_uint)p.n;

	ps_cl_open(&cl, "matvec.cl");
	cl_kernel k = ps_cl_kernel(&cl, "matvec");
	cl_mem d_a = ps_cl_buffer(&cl, (size_t)m * n * sizeof *p.a, p.a);
	cl_mem d_x = ps_cl_buffer(&cl, n * sizeof *p.x, p.x);
	cl_mem d_y = ps_cl_buffer(&cl, m * sizeof *p.y, NULL);
	ps_cl_arg(k, 0, sizeof d_a, &d_a);
	ps_cl_arg(k, 1, sizeof d_x, &d_x);
	ps_cl_arg(k, 2, sizeof m, &m);
	ps_cl_arg(k, 3, sizeof n, &n);
	ps_cl_arg(k, 4, sizeof d_y, &d_y);

	size_t local = GROUP_SIZE, global = (m + GROUP_SIZE - 1) / GROUP_SIZE * GROUP_SIZE;
	double t0 = ps_now_ms();
	ps_cl_check(clEnqueueNDRangeKernel(cl.queue, k, 1, NULL, &global, &local, 0, NULL, NULL), "clEnqueueNDRangeKernel");
	ps_cl_read_back(&cl, d_y, m * sizeof *p.y, p.y);
	double t1 = ps_now_ms();

	clReleaseMemObject(d_a);
	clReleaseMemObject(d_x);
	clReleaseMemObject(d_y);
	clReleaseKernel(k);
	ps_cl_close(&cl);
	return ps_matvec_finish(&p, t1 - t0);
}
