/*
 * kjudge_timer.c - the worker's timing harness in native code
 * (build/kjudge_timer.so, loaded by kjudge_worker.py through ctypes before
 * any task or candidate code is imported).
 *
 * Why native.  The worker runs the code under test in its own process, so
 * anything in Python there is the candidate's to replace: time.perf_counter,
 * torch.cuda.Event.elapsed_time, the worker's own methods.  The timestamps
 * of a timed call are taken here instead, with the clock and the CUDA
 * driver's events (libcuda, the driver API: cudaStream_t and CUstream are
 * the same handle) that this library resolved for itself when it was
 * loaded, and kept in this library's memory until the worker reads them out
 * after the call.  This raises the bar, no more: native code in the same
 * process can be overwritten too.  What decides is the judge's own clock,
 * which checks every timed request's figures against the time it saw pass
 * (lib/core/pipeline.c).
 *
 * One timed call:
 *   kjt_begin(stream)        CPU: CLOCK_MONOTONIC; CUDA: the start event
 *                            recorded on `stream`
 *   ... forward ...
 *   kjt_end(stream, thr_ms)  CUDA: the stop event recorded and waited for,
 *                            then a context-wide synchronize timed on the
 *                            host: when it waits longer than thr_ms (the
 *                            idle synchronize latency the worker measured),
 *                            work left on another stream is added to the
 *                            sample as escaped time.  CPU: the clock again.
 * The samples stay here until kjt_sample() reads them and kjt_reset()
 * clears them.
 *
 * No libc call here allocates after kjt_init: the arrays are static.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define KJT_MAX_SAMPLES (1 << 20)

typedef int CUresult;
typedef void *CUevent;
typedef void *CUstream;

static CUresult (*p_cuEventCreate)(CUevent *, unsigned);
static CUresult (*p_cuEventRecord)(CUevent, CUstream);
static CUresult (*p_cuEventSynchronize)(CUevent);
static CUresult (*p_cuEventElapsedTime)(float *, CUevent, CUevent);
static CUresult (*p_cuCtxSynchronize)(void);

static int cuda;
static CUevent ev_start, ev_stop;
static struct timespec t_begin;
static double samples[KJT_MAX_SAMPLES], escaped[KJT_MAX_SAMPLES];
static int n;

int kjt_init(int use_cuda);
int kjt_begin(void *stream);
int kjt_end(void *stream, double threshold_ms);
int kjt_count(void);
int kjt_sample(int i, double *ms, double *escaped_ms);
void kjt_reset(void);
double kjt_now(void);

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double kjt_now(void)
{
	return now_s();
}

/* Resolve the driver's entry points and make the two events (the caller's
 * thread must have the device's context current: torch has made it so).
 * 0, or a negative number saying which step failed. */
int kjt_init(int use_cuda)
{
	void *h;

	n = 0;
	cuda = 0;
	if (!use_cuda)
		return 0;
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return -1;
	*(void **)&p_cuEventCreate = dlsym(h, "cuEventCreate");
	*(void **)&p_cuEventRecord = dlsym(h, "cuEventRecord");
	*(void **)&p_cuEventSynchronize = dlsym(h, "cuEventSynchronize");
	*(void **)&p_cuEventElapsedTime = dlsym(h, "cuEventElapsedTime_v2");
	if (!p_cuEventElapsedTime)
		*(void **)&p_cuEventElapsedTime = dlsym(h, "cuEventElapsedTime");
	*(void **)&p_cuCtxSynchronize = dlsym(h, "cuCtxSynchronize");
	if (!p_cuEventCreate || !p_cuEventRecord || !p_cuEventSynchronize ||
	    !p_cuEventElapsedTime || !p_cuCtxSynchronize)
		return -2;
	/* Flags 0: timing events (CU_EVENT_DEFAULT). */
	if (p_cuEventCreate(&ev_start, 0) || p_cuEventCreate(&ev_stop, 0))
		return -3;
	cuda = 1;
	return 0;
}

int kjt_begin(void *stream)
{
	if (!cuda) {
		clock_gettime(CLOCK_MONOTONIC, &t_begin);
		return 0;
	}
	return p_cuEventRecord(ev_start, stream) ? -1 : 0;
}

int kjt_end(void *stream, double threshold_ms)
{
	double ms, late = 0.0;
	float f = 0;

	if (n >= KJT_MAX_SAMPLES)
		return -1;
	if (!cuda) {
		struct timespec t;

		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = (double)(t.tv_sec - t_begin.tv_sec) * 1e3 +
		     (double)(t.tv_nsec - t_begin.tv_nsec) * 1e-6;
	} else {
		double t0;

		if (p_cuEventRecord(ev_stop, stream) || p_cuEventSynchronize(ev_stop))
			return -2;
		t0 = now_s();
		if (p_cuCtxSynchronize())
			return -3;
		late = (now_s() - t0) * 1e3;
		if (p_cuEventElapsedTime(&f, ev_start, ev_stop))
			return -4;
		ms = (double)f;
		/* A synchronize that finds nothing to wait for returns in its
		 * idle time; anything beyond it is work the call left behind. */
		if (!(late > threshold_ms))
			late = 0.0;
	}
	samples[n] = ms + late;
	escaped[n] = late;
	n++;
	return 0;
}

int kjt_count(void)
{
	return n;
}

int kjt_sample(int i, double *ms, double *escaped_ms)
{
	if (i < 0 || i >= n)
		return -1;
	*ms = samples[i];
	*escaped_ms = escaped[i];
	return 0;
}

void kjt_reset(void)
{
	n = 0;
}
