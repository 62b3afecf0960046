/*
 * histogram.cl - counts values into bins: each work-group counts its share
 * into local memory, then adds its counts to the global ones.  The bin of a
 * value is the high 32 bits of value * bins.
 */
__kernel void histogram(__global const uint *values, uint n, uint bins,
			__global uint *counts, __local uint *group_counts)
{
	uint lid = get_local_id(0);
	uint lsize = get_local_size(0);

	for (uint b = lid; b < bins; b += lsize)
		group_counts[b] = 0;
	barrier(CLK_LOCAL_MEM_FENCE);

	for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {
		uint bin = (uint)(((ulong)values[i] * bins) >> 32);
		atomic_inc(&group_counts[bin]);
	}
	barrier(CLK_LOCAL_MEM_FENCE);

	for (uint b = lid; b < bins; b += lsize)
		if (group_counts[b] != 0)
			atomic_add(&counts[b], group_counts[b]);
}
