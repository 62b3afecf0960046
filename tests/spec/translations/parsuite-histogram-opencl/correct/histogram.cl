/*
 * A correct translation of parsuite's OpenMP histogram into the OpenCL
 * variant's kernel file: every work-item adds its values straight into the
 * global counts with atomic increments (no local histogram; the host's
 * local-memory argument goes unused).  Slower than the pristine kernel, the
 * same counts.
 */
__kernel void histogram(__global const uint *values, uint n, uint bins,
			__global uint *counts, __local uint *unused)
{
	(void)unused;
	for (uint i = get_global_id(0); i < n; i += get_global_size(0))
		atomic_inc(&counts[(uint)(((ulong)values[i] * bins) >> 32)]);
}
