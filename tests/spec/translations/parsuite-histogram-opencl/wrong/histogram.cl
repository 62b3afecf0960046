/*
 * A wrong translation of parsuite's OpenMP histogram into the OpenCL
 * variant's kernel file: it builds, runs and counts almost everything, but
 * its loop stops one value short (i < n - 1), so one bin is one short.  The
 * program's own check prints FAIL, and counts.txt's digest is not the
 * spec's.
 */
__kernel void histogram(__global const uint *values, uint n, uint bins,
			__global uint *counts, __local uint *group_counts)
{
	uint lid = get_local_id(0);

	for (uint b = lid; b < bins; b += get_local_size(0))
		group_counts[b] = 0;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (uint i = get_global_id(0); i < n - 1; i += get_global_size(0))
		atomic_inc(&group_counts[(uint)(((ulong)values[i] * bins) >> 32)]);
	barrier(CLK_LOCAL_MEM_FENCE);
	for (uint b = lid; b < bins; b += get_local_size(0))
		atomic_add(&counts[b], group_counts[b]);
}
