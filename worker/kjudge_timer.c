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
 * A queued round (the judge's "queued" rounds, docs/protocol.md): the
 * calls are put on the stream one after another with no wait between them,
 * so that the device runs them back to back and the host's own work around
 * each call (Python, the checks) is hidden behind the device's:
 *   kjt_qbegin(stream)       CUDA: a start event of the round's pool
 *                            recorded on `stream`; CPU: as kjt_begin
 *   ... forward ...
 *   kjt_qend(stream)         CUDA: its stop event recorded, no wait; CPU:
 *                            as kjt_end (the sample taken at once)
 *   kjt_qfinish(thr_ms)      CUDA: the last stop event waited for, then a
 *                            context-wide synchronize timed as kjt_end's
 *                            (work left on another stream beyond the
 *                            round's last call is that call's escaped
 *                            time), then each call's sample read from its
 *                            pair of events.  CPU: nothing to do.
 * Up to KJT_QMAX calls a round; each pair of events is made once, when a
 * round first needs it.
 *
 * Hardware state a call can leave behind (CUDA).  The L2 flush before each
 * timed call writes a buffer larger than the L2 cache, so that no call
 * finds its inputs there; lines marked persisting are not evicted by it.
 * A call that sets the context's persisting-L2 limit
 * (cudaLimitPersistingL2CacheSize) and an access policy window over its
 * inputs (a stream attribute, cudaAccessPropertyPersisting) would keep
 * them in L2 for the next call, however the flush goes.  So before every
 * timed call, outside the timed region and before the flush:
 *   kjt_l2_reset(stream)     the limit set to 0 (cuCtxSetLimit), every
 *                            persisting line made normal
 *                            (cuCtxResetPersistingL2Cache), the stream's
 *                            access policy window cleared
 *                            (cuStreamSetAttribute, 0 bytes)
 * and after it, once the sample is taken:
 *   kjt_l2_check(stream)     1 when the limit is not 0 again, 2 when the
 *                            stream has a window again: the worker fails
 *                            the call (L2PersistenceSet)
 * The limit is what decides: with no set-aside, an access policy window
 * marks nothing persisting.  A device or driver without persisting L2
 * (no such entry points, older than CUDA 11; a device before Ampere, whose
 * driver refuses the limit) leaves both no-ops, as on the CPU; so does one
 * whose driver refuses to set it later (MPS), which then refuses the
 * candidate too (kjt_l2_supported() says whether the controls are in
 * force).  The window is cleared and checked where the driver allows it on
 * the stream (the legacy default stream may not take attributes): it is
 * the limit that is always checked.
 *
 * No libc call here allocates after kjt_init: the arrays are static.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

/* How the driver is found: the unit test (tests/unit/test_timer.c)
 * includes this file with a stand-in driver of its own. */
#ifndef KJT_DLOPEN
#define KJT_DLOPEN dlopen
#define KJT_DLSYM dlsym
#endif

#define KJT_MAX_SAMPLES (1 << 20)
#define KJT_QMAX 4096

typedef int CUresult;
typedef void *CUevent;
typedef void *CUstream;

/* cuda.h's CUlimit CU_LIMIT_PERSISTING_L2_CACHE_SIZE and
 * CUstreamAttrID CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW. */
#define KJT_LIMIT_PERSISTING_L2 0x06
#define KJT_STREAM_ATTR_ACCESS_POLICY_WINDOW 1

/* CUaccessPolicyWindow, the member of the CUstreamAttrValue union that
 * the window attribute uses; the union is 64 bytes in every CUDA 11 and
 * 12 header (padded for its larger members). */
struct kjt_window {
	void *base_ptr;
	size_t num_bytes;
	float hit_ratio;
	int hit_prop, miss_prop;
};
union kjt_attr {
	struct kjt_window window;
	char pad[64];
};

static CUresult (*p_cuEventCreate)(CUevent *, unsigned);
static CUresult (*p_cuEventRecord)(CUevent, CUstream);
static CUresult (*p_cuEventSynchronize)(CUevent);
static CUresult (*p_cuEventElapsedTime)(float *, CUevent, CUevent);
static CUresult (*p_cuCtxSynchronize)(void);
static CUresult (*p_cuCtxSetLimit)(int, size_t);
static CUresult (*p_cuCtxGetLimit)(size_t *, int);
static CUresult (*p_cuCtxResetPersistingL2Cache)(void);
static CUresult (*p_cuStreamGetAttribute)(CUstream, int, union kjt_attr *);
static CUresult (*p_cuStreamSetAttribute)(CUstream, int, const union kjt_attr *);

static int cuda, l2, window;
static CUevent ev_start, ev_stop;
static struct timespec t_begin;
static double samples[KJT_MAX_SAMPLES], escaped[KJT_MAX_SAMPLES];
static int n;
/* The queued round's events: q pairs recorded, `made` made so far. */
static CUevent q_start[KJT_QMAX], q_stop[KJT_QMAX];
static int q, made, q_open;

int kjt_init(int use_cuda);
int kjt_begin(void *stream);
int kjt_end(void *stream, double threshold_ms);
int kjt_qbegin(void *stream);
int kjt_qend(void *stream);
int kjt_qfinish(double threshold_ms);
int kjt_count(void);
int kjt_sample(int i, double *ms, double *escaped_ms);
void kjt_reset(void);
double kjt_now(void);
int kjt_l2_supported(void);
int kjt_l2_reset(void *stream);
int kjt_l2_check(void *stream);

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
	q = made = q_open = 0;
	cuda = 0;
	l2 = 0;
	window = 0;
	if (!use_cuda)
		return 0;
	h = KJT_DLOPEN("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return -1;
	*(void **)&p_cuEventCreate = KJT_DLSYM(h, "cuEventCreate");
	*(void **)&p_cuEventRecord = KJT_DLSYM(h, "cuEventRecord");
	*(void **)&p_cuEventSynchronize = KJT_DLSYM(h, "cuEventSynchronize");
	*(void **)&p_cuEventElapsedTime = KJT_DLSYM(h, "cuEventElapsedTime_v2");
	if (!p_cuEventElapsedTime)
		*(void **)&p_cuEventElapsedTime = KJT_DLSYM(h, "cuEventElapsedTime");
	*(void **)&p_cuCtxSynchronize = KJT_DLSYM(h, "cuCtxSynchronize");
	if (!p_cuEventCreate || !p_cuEventRecord || !p_cuEventSynchronize ||
	    !p_cuEventElapsedTime || !p_cuCtxSynchronize)
		return -2;
	/* The persisting-L2 controls: all or none (a driver that has some
	 * and not the others is treated as having none). */
	*(void **)&p_cuCtxSetLimit = KJT_DLSYM(h, "cuCtxSetLimit");
	*(void **)&p_cuCtxGetLimit = KJT_DLSYM(h, "cuCtxGetLimit");
	*(void **)&p_cuCtxResetPersistingL2Cache = KJT_DLSYM(h, "cuCtxResetPersistingL2Cache");
	*(void **)&p_cuStreamGetAttribute = KJT_DLSYM(h, "cuStreamGetAttribute");
	*(void **)&p_cuStreamSetAttribute = KJT_DLSYM(h, "cuStreamSetAttribute");
	l2 = p_cuCtxSetLimit && p_cuCtxGetLimit && p_cuCtxResetPersistingL2Cache &&
	     p_cuStreamGetAttribute && p_cuStreamSetAttribute;
	/* Flags 0: timing events (CU_EVENT_DEFAULT). */
	if (p_cuEventCreate(&ev_start, 0) || p_cuEventCreate(&ev_stop, 0))
		return -3;
	/* A device without persisting L2 refuses the limit. */
	if (l2) {
		size_t v;

		l2 = p_cuCtxGetLimit(&v, KJT_LIMIT_PERSISTING_L2) == 0;
	}
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

/* After a call's (or a queued round's last) stop event: the event waited
 * for, then a context-wide synchronize timed on the host.  A synchronize
 * that finds nothing to wait for returns in its idle time (threshold_ms);
 * anything beyond it is work left behind on another stream: *late, else
 * 0.  0, or -2 / -3 when the driver failed. */
static int escaped_after(CUevent stop, double threshold_ms, double *late)
{
	double t0;

	if (p_cuEventSynchronize(stop))
		return -2;
	t0 = now_s();
	if (p_cuCtxSynchronize())
		return -3;
	*late = (now_s() - t0) * 1e3;
	if (!(*late > threshold_ms))
		*late = 0.0;
	return 0;
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
		int rc;

		if (p_cuEventRecord(ev_stop, stream))
			return -2;
		if ((rc = escaped_after(ev_stop, threshold_ms, &late)) != 0)
			return rc;
		if (p_cuEventElapsedTime(&f, ev_start, ev_stop))
			return -4;
		ms = (double)f;
	}
	samples[n] = ms + late;
	escaped[n] = late;
	n++;
	return 0;
}

int kjt_qbegin(void *stream)
{
	if (!cuda)
		return kjt_begin(stream);
	if (q_open || q >= KJT_QMAX || n + q >= KJT_MAX_SAMPLES)
		return -1;
	if (q == made) {
		if (p_cuEventCreate(&q_start[q], 0) || p_cuEventCreate(&q_stop[q], 0))
			return -2;
		made++;
	}
	if (p_cuEventRecord(q_start[q], stream))
		return -3;
	q_open = 1;
	return 0;
}

int kjt_qend(void *stream)
{
	if (!cuda)
		return kjt_end(stream, 0.0);
	if (!q_open)
		return -1;
	q_open = 0;
	if (p_cuEventRecord(q_stop[q], stream))
		return -2;
	q++;
	return 0;
}

int kjt_qfinish(double threshold_ms)
{
	double late = 0.0;
	int i, k = q, open = q_open, rc;

	q = q_open = 0;
	if (open)
		return -1;
	if (!cuda || k == 0)
		return 0;
	if ((rc = escaped_after(q_stop[k - 1], threshold_ms, &late)) != 0)
		return rc;
	for (i = 0; i < k; i++) {
		float f = 0;

		if (p_cuEventElapsedTime(&f, q_start[i], q_stop[i]))
			return -4;
		samples[n] = (double)f + (i == k - 1 ? late : 0.0);
		escaped[n] = i == k - 1 ? late : 0.0;
		n++;
	}
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
	q = q_open = 0;
}

int kjt_l2_supported(void)
{
	return cuda && l2;
}

/* Before a timed call: no persisting L2 left (see the theory above).
 * 0 done (or nothing to do), 1 the driver refused the limit: the controls
 * are off from then on. */
int kjt_l2_reset(void *stream)
{
	union kjt_attr a;

	if (!cuda || !l2)
		return 0;
	if (p_cuCtxSetLimit(KJT_LIMIT_PERSISTING_L2, 0) || p_cuCtxResetPersistingL2Cache()) {
		l2 = 0;
		return 1;
	}
	memset(&a, 0, sizeof(a));
	window = p_cuStreamSetAttribute(stream, KJT_STREAM_ATTR_ACCESS_POLICY_WINDOW, &a) == 0;
	return 0;
}

/* After a timed call: 0 nothing set, 1 the persisting limit set again, 2
 * an access policy window on the stream (where it could be cleared); -1
 * when the driver could not be asked for the limit. */
int kjt_l2_check(void *stream)
{
	union kjt_attr a;
	size_t limit = 0;

	if (!cuda || !l2)
		return 0;
	if (p_cuCtxGetLimit(&limit, KJT_LIMIT_PERSISTING_L2))
		return -1;
	if (limit != 0)
		return 1;
	memset(&a, 0, sizeof(a));
	if (window && p_cuStreamGetAttribute(stream, KJT_STREAM_ATTR_ACCESS_POLICY_WINDOW, &a) == 0 &&
	    a.window.num_bytes != 0)
		return 2;
	return 0;
}
