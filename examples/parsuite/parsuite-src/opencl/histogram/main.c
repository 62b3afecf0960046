/*
 * histogram (OpenCL host): counts n pseudo-random 32-bit values into `bins`
 * equal ranges on the device, with the kernel of histogram.cl (read from the
 * working directory); ps_histogram.h makes the values and writes and checks
 * the counts.
 *
 *   usage: histogram N BINS SEED
 */
#include "ps_cl.h"
#include "ps_histogram.h"

enum { GROUPS = 64, GROUP_SIZE = 64 };

int main(int argc, char **argv)
{
	struct ps_histogram p;
	struct ps_cl cl;

	if (argc != 4) {
		fprintf(stderr, "usage: %s N BINS SEED\n", argv[0]);
		return 2;
	}
	ps_histogram_setup(&p, argv);
	cl_uint n = (cl_uint)p.n, bins = p.bins;

	ps_cl_open(&cl, "histogram.cl");
	cl_kernel k = ps_cl_kernel(&cl, "histogram");
	cl_mem d_values = ps_cl_buffer(&cl, n * sizeof *p.values, p.values);
	cl_mem d_counts = ps_cl_buffer(&cl, bins * sizeof *p.counts, p.counts);
	ps_cl_arg(k, 0, sizeof d_values, &d_values);
	ps_cl_arg(k, 1, sizeof n, &n);
	ps_cl_arg(k, 2, sizeof bins, &bins);
	ps_cl_arg(k, 3, sizeof d_counts, &d_counts);
	ps_cl_arg(k, 4, bins * sizeof(cl_uint), NULL);

	size_t global = GROUPS * GROUP_SIZE, local = GROUP_SIZE;
	double t0 = ps_now_ms();
	ps_cl_check(clEnqueueNDRangeKernel(cl.queue, k, 1, NULL, &global, &local, 0, NULL, NULL), "clEnqueueNDRangeKernel");
	ps_cl_read_back(&cl, d_counts, bins * sizeof *p.counts, p.counts);
	double t1 = ps_now_ms();

	clReleaseMemObject(d_values);
	clReleaseMemObject(d_counts);
	clReleaseKernel(k);
	ps_cl_close(&cl);
	return ps_histogram_finish(&p, t1 - t0);
}
