/*
 * matvec.cl - y = A x, one work-item a row, each row summed in float.
 */
__kernel void matvec(__global const float *a, __global const float *x, uint m, uint n,
		     __global float *y)
{
	uint i = get_global_id(0);

	if (i >= m)
		return;
	float sum = 0.0f;
	for (uint j = 0; j < n; j++)
		sum += a[i * n + j] * x[j];
	y[i] = sum;
}
