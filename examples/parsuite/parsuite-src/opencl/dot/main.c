/*
 * dot (OpenCL host): the dot product of two vectors of n floats on the
 * device, with the kernel of dot.cl (read from the working directory): one
 * partial sum per work-group, added here in double.  ps_dot.h makes the
 * vectors and checks the sum.
 *
 *   usage: dot N SEED
 */
#include "ps_cl.h"
#include "ps_dot.h"

enum { GROUPS = 64, GROUP_SIZE = 64 };

int main(int argc, char **argv)
{
	struct ps_dot p;
	struct ps_cl cl;
	double partial[GROUPS];

	if (argc != 3) {
		fprintf(stderr, "usage: %s N SEED\n", argv[0]);
		return 2;
	}
	ps_dot_setup(&p, argv);
	cl_uint n = (cl_uint)p.n;

	ps_cl_open(&cl, "dot.cl");
	cl_kernel k = ps_cl_kernel(&cl, "dot_partial");
	cl_mem d_x = ps_cl_buffer(&cl, n * sizeof *p.x, p.x);
	cl_mem d_y = ps_cl_buffer(&cl, n * sizeof *p.y, p.y);
	cl_mem d_partial = ps_cl_buffer(&cl, sizeof partial, NULL);
	ps_cl_arg(k, 0, sizeof d_x, &d_x);
	ps_cl_arg(k, 1, sizeof d_y, &d_y);
	ps_cl_arg(k, 2, sizeof n, &n);
	ps_cl_arg(k, 3, sizeof d_partial, &d_partial);
	ps_cl_arg(k, 4, GROUP_SIZE * sizeof(cl_double), NULL);

	size_t global = GROUPS * GROUP_SIZE, local = GROUP_SIZE;
	double t0 = ps_now_ms();
	ps_cl_check(clEnqueueNDRangeKernel(cl.queue, k, 1, NULL, &global, &local, 0, NULL, NULL), "clEnqueueNDRangeKernel");
	ps_cl_read_back(&cl, d_partial, sizeof partial, partial);
	double got = 0.0;
	for (int g = 0; g < GROUPS; g++)
		got += partial[g];
	double t1 = ps_now_ms();

	clReleaseMemObject(d_x);
	clReleaseMemObject(d_y);
	clReleaseMemObject(d_partial);
	clReleaseKernel(k);
	ps_cl_close(&cl);
	return ps_dot_finish(&p, got, t1 - t0);
}
