/*
 * ps_cl.h - the OpenCL set-up the parsuite OpenCL hosts share: the first
 * device of the first platform, one context and queue, and a program built
 * from a .cl file named relative to the working directory (the program runs
 * in its own source directory, where the kernel file lies).
 *
 * Any OpenCL error stops the program with exit 2 and the call that failed on
 * stderr; a kernel file that does not compile prints the compiler's log
 * there too.  A translation judged by its output must not get a verdict line
 * from a program that never ran its kernel.
 */
#ifndef PS_CL_H
#define PS_CL_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "ps_util.h"

struct ps_cl {
	cl_device_id device;
	cl_context context;
	cl_command_queue queue;
	cl_program program;
};

static inline void ps_cl_check(cl_int err, const char *call)
{
	if (err != CL_SUCCESS) {
		fprintf(stderr, "opencl: %s failed with error %d\n", call, (int)err);
		exit(2);
	}
}

/* Reads the kernel file whole; the caller frees the text. */
static inline char *ps_cl_read(const char *path, size_t *length)
{
	FILE *f = fopen(path, "rb");
	char *text;
	long size;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "opencl: cannot read the kernel file %s\n", path);
		exit(2);
	}
	text = (char *)ps_alloc((size_t)size + 1, 1);
	if (fread(text, 1, (size_t)size, f) != (size_t)size) {
		fprintf(stderr, "opencl: short read of %s\n", path);
		exit(2);
	}
	fclose(f);
	*length = (size_t)size;
	return text;
}

static inline void ps_cl_open(struct ps_cl *cl, const char *kernel_file)
{
	cl_platform_id platform;
	cl_uint count = 0;
	cl_int err;
	size_t length;
	char *source;
	const char *sources[1];

	ps_cl_check(clGetPlatformIDs(1, &platform, &count), "clGetPlatformIDs");
	if (count == 0) {
		fprintf(stderr, "opencl: no platform\n");
		exit(2);
	}
	ps_cl_check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &cl->device, NULL), "clGetDeviceIDs");
	cl->context = clCreateContext(NULL, 1, &cl->device, NULL, NULL, &err);
	ps_cl_check(err, "clCreateContext");
	cl->queue = clCreateCommandQueue(cl->context, cl->device, 0, &err);
	ps_cl_check(err, "clCreateCommandQueue");

	source = ps_cl_read(kernel_file, &length);
	sources[0] = source;
	cl->program = clCreateProgramWithSource(cl->context, 1, sources, &length, &err);
	ps_cl_check(err, "clCreateProgramWithSource");
	free(source);
	err = clBuildProgram(cl->program, 1, &cl->device, "", NULL, NULL);
	if (err != CL_SUCCESS) {
		char log[16384];
		size_t used = 0;

		clGetProgramBuildInfo(cl->program, cl->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, &used);
		log[used < sizeof log ? used : sizeof log - 1] = '\0';
		fprintf(stderr, "opencl: %s does not build:\n%s\n", kernel_file, log);
		exit(2);
	}
}

static inline cl_kernel ps_cl_kernel(struct ps_cl *cl, const char *name)
{
	cl_int err;
	cl_kernel k = clCreateKernel(cl->program, name, &err);

	ps_cl_check(err, name);
	return k;
}

static inline void ps_cl_arg(cl_kernel k, cl_uint index, size_t size, const void *value)
{
	ps_cl_check(clSetKernelArg(k, index, size, value), "clSetKernelArg");
}

/* Copies a device buffer back to the host, waiting for the queue first. */
static inline void ps_cl_read_back(struct ps_cl *cl, cl_mem m, size_t bytes, void *host)
{
	ps_cl_check(clEnqueueReadBuffer(cl->queue, m, CL_TRUE, 0, bytes, host, 0, NULL, NULL), "clEnqueueReadBuffer");
}

/* A device buffer holding a copy of the host's bytes (or empty, for NULL). */
static inline cl_mem ps_cl_buffer(struct ps_cl *cl, size_t bytes, const void *host)
{
	cl_int err;
	cl_mem m = clCreateBuffer(cl->context, host != NULL ? CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR : CL_MEM_READ_WRITE,
				  bytes, (void *)host, &err);

	ps_cl_check(err, "clCreateBuffer");
	return m;
}

static inline void ps_cl_close(struct ps_cl *cl)
{
	clReleaseProgram(cl->program);
	clReleaseCommandQueue(cl->queue);
	clReleaseContext(cl->context);
}

#endif
