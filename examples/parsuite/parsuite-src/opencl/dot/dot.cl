/*
 * dot.cl - partial dot products: each work-group sums its share of x[i] *
 * y[i] in double, reduces the sums of its work-items in local memory, and
 * writes one partial sum; the host adds the partial sums.
 */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

__kernel void dot_partial(__global const float *x, __global const float *y, uint n,
			  __global double *partial, __local double *scratch)
{
	uint lid = get_local_id(0);
	double sum = 0.0;

	for (uint i = get_global_id(0); i < n; i += get_global_size(0))
		sum += (double)x[i] * (double)y[i];
	scratch[lid] = sum;
	barrier(CLK_LOCAL_MEM_FENCE);

	for (uint stride = get_local_size(0) / 2; stride > 0; stride /= 2) {
		if (lid < stride)
			scratch[lid] += scratch[lid + stride];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (lid == 0)
		partial[get_group_id(0)] = scratch[0];
}
