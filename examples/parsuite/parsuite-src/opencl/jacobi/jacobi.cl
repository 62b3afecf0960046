/*
 * jacobi.cl - one sweep of the weighted five-point stencil, one work-item a
 * cell; boundary cells are left as they are.
 */
#define CENTRE 0.2f
#define SIDE 0.2f

__kernel void jacobi_sweep(__global const float *u, __global float *v, uint n)
{
	uint j = get_global_id(0);
	uint i = get_global_id(1);

	if (i < 1 || j < 1 || i >= n - 1 || j >= n - 1)
		return;
	v[i * n + j] = CENTRE * u[i * n + j] +
		       SIDE * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1]);
}
