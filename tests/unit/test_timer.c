/*
 * test_timer.c - the native timing harness's persisting-L2 controls
 * (worker/kjudge_timer.c: kjt_l2_reset before every timed call, kjt_l2_check
 * after it), on a machine without a GPU.  The harness is compiled into this
 * test with a stand-in for libcuda (KJT_DLOPEN, KJT_DLSYM) that keeps the
 * one context's persisting-L2 limit and the stream's access policy window
 * as a driver would, and can lack entry points or refuse calls as older
 * drivers, devices before Ampere and the legacy default stream do.  What is
 * checked is the harness's own logic: what it resets, what it reports, and
 * that it stays out of the way where the controls do not exist.
 */
#include <stddef.h>
#include <string.h>

#include "unit.h"

static size_t sim_limit;      /* the context's persisting-L2 limit */
static size_t sim_window;     /* the stream's window, in bytes */
static int sim_resets;        /* cuCtxResetPersistingL2Cache calls */
static int sim_calls;         /* calls of any persisting-L2 entry point */
static int sim_no_l2;         /* a device without persisting L2 */
static int sim_no_attr;       /* a stream that takes no attributes */
static const char *sim_absent; /* an entry point the driver lacks */

static void *fake_dlopen(const char *file, int mode);
static void *fake_dlsym(void *h, const char *name);

#define KJT_DLOPEN fake_dlopen
#define KJT_DLSYM fake_dlsym
#include "../../worker/kjudge_timer.c"

/* Events: each one its own slot, stamped with the device's time (sim_now,
 * in milliseconds; one more at every record) when it is recorded. */
static double sim_events[64], sim_now;
static int sim_n_events, sim_records;

static int f_event_create(CUevent *e, unsigned flags)
{
	(void)flags;
	if (sim_n_events >= 64)
		return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
	*e = &sim_events[sim_n_events++];
	return 0;
}

static int f_event_record(CUevent e, CUstream s)
{
	(void)s;
	sim_records++;
	*(double *)e = sim_now;
	sim_now += 1;
	return 0;
}

static int f_event_sync(CUevent e)
{
	(void)e;
	return 0;
}

static int f_elapsed(float *ms, CUevent a, CUevent b)
{
	*ms = (float)(*(double *)b - *(double *)a);
	return 0;
}

static int f_ctx_sync(void)
{
	return 0;
}

/* CUDA_ERROR_UNSUPPORTED_LIMIT, CUDA_ERROR_INVALID_HANDLE */
#define E_LIMIT 215
#define E_HANDLE 400

static int f_set_limit(int which, size_t v)
{
	sim_calls++;
	if (which != KJT_LIMIT_PERSISTING_L2 || sim_no_l2)
		return E_LIMIT;
	sim_limit = v;
	return 0;
}

static int f_get_limit(size_t *v, int which)
{
	sim_calls++;
	if (which != KJT_LIMIT_PERSISTING_L2 || sim_no_l2)
		return E_LIMIT;
	*v = sim_limit;
	return 0;
}

static int f_reset_l2(void)
{
	sim_calls++;
	if (sim_no_l2)
		return E_LIMIT;
	sim_resets++;
	return 0;
}

static int f_get_attr(CUstream s, int attr, union kjt_attr *v)
{
	(void)s;
	sim_calls++;
	if (attr != KJT_STREAM_ATTR_ACCESS_POLICY_WINDOW || sim_no_attr)
		return E_HANDLE;
	memset(v, 0, sizeof(*v));
	v->window.num_bytes = sim_window;
	return 0;
}

static int f_set_attr(CUstream s, int attr, const union kjt_attr *v)
{
	(void)s;
	sim_calls++;
	if (attr != KJT_STREAM_ATTR_ACCESS_POLICY_WINDOW || sim_no_attr)
		return E_HANDLE;
	sim_window = v->window.num_bytes;
	return 0;
}

static void *fake_dlopen(const char *file, int mode)
{
	static int handle;

	(void)mode;
	return strcmp(file, "libcuda.so.1") == 0 ? &handle : NULL;
}

static void *fake_dlsym(void *h, const char *name)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} table[] = {
		{ "cuEventCreate", (void (*)(void))f_event_create },
		{ "cuEventRecord", (void (*)(void))f_event_record },
		{ "cuEventSynchronize", (void (*)(void))f_event_sync },
		{ "cuEventElapsedTime_v2", (void (*)(void))f_elapsed },
		{ "cuCtxSynchronize", (void (*)(void))f_ctx_sync },
		{ "cuCtxSetLimit", (void (*)(void))f_set_limit },
		{ "cuCtxGetLimit", (void (*)(void))f_get_limit },
		{ "cuCtxResetPersistingL2Cache", (void (*)(void))f_reset_l2 },
		{ "cuStreamGetAttribute", (void (*)(void))f_get_attr },
		{ "cuStreamSetAttribute", (void (*)(void))f_set_attr },
	};
	size_t i;
	void *p = NULL;

	(void)h;
	if (sim_absent && !strcmp(name, sim_absent))
		return NULL;
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(name, table[i].name))
			memcpy(&p, &table[i].fn, sizeof(p));
	return p;
}

static void sim_init(void)
{
	sim_limit = sim_window = 0;
	sim_resets = sim_calls = sim_no_l2 = sim_no_attr = 0;
	sim_absent = NULL;
}

static void *const stream = (void *)0x1234;

KJ_TEST(timer_l2_cpu_calls_no_driver)
{
	sim_init();
	sim_limit = 1 << 20;
	KJ_CHECK_INT(kjt_init(0), 0);
	KJ_CHECK_INT(kjt_l2_supported(), 0);
	KJ_CHECK_INT(kjt_l2_reset(NULL), 0);
	KJ_CHECK_INT(kjt_l2_check(NULL), 0);
	KJ_CHECK_INT(sim_calls, 0);
}

KJ_TEST(timer_l2_reset_clears_and_check_catches)
{
	sim_init();
	KJ_CHECK_INT(kjt_init(1), 0);
	KJ_CHECK_INT(kjt_l2_supported(), 1);
	/* What an earlier call left: a set-aside and a window. */
	sim_limit = 4 << 20;
	sim_window = 1 << 20;
	KJ_CHECK_INT(kjt_l2_reset(stream), 0);
	KJ_CHECK_INT(sim_limit, 0);
	KJ_CHECK_INT(sim_window, 0);
	KJ_CHECK_INT(sim_resets, 1);
	KJ_CHECK_INT(kjt_l2_check(stream), 0);
	/* The call sets the limit again: caught. */
	sim_limit = 2 << 20;
	KJ_CHECK_INT(kjt_l2_check(stream), 1);
	/* Reset before the next call; this one sets a window only. */
	KJ_CHECK_INT(kjt_l2_reset(stream), 0);
	KJ_CHECK_INT(sim_resets, 2);
	sim_window = 64 << 10;
	KJ_CHECK_INT(kjt_l2_check(stream), 2);
}

KJ_TEST(timer_l2_driver_without_the_calls)
{
	sim_init();
	sim_absent = "cuCtxResetPersistingL2Cache";
	KJ_CHECK_INT(kjt_init(1), 0);
	KJ_CHECK_INT(kjt_l2_supported(), 0);
	sim_limit = 1 << 20;
	sim_calls = 0;
	KJ_CHECK_INT(kjt_l2_reset(stream), 0);
	KJ_CHECK_INT(kjt_l2_check(stream), 0);
	KJ_CHECK_INT(sim_calls, 0);
	KJ_CHECK_INT(sim_limit, 1 << 20);
}

KJ_TEST(timer_l2_device_without_persisting_l2)
{
	sim_init();
	sim_no_l2 = 1;
	KJ_CHECK_INT(kjt_init(1), 0);
	KJ_CHECK_INT(kjt_l2_supported(), 0);
	KJ_CHECK_INT(kjt_l2_reset(stream), 0);
	KJ_CHECK_INT(kjt_l2_check(stream), 0);
}

KJ_TEST(timer_l2_driver_that_refuses_later_turns_the_controls_off)
{
	sim_init();
	KJ_CHECK_INT(kjt_init(1), 0);
	KJ_CHECK_INT(kjt_l2_supported(), 1);
	sim_no_l2 = 1;
	KJ_CHECK_INT(kjt_l2_reset(stream), 1);
	KJ_CHECK_INT(kjt_l2_supported(), 0);
	KJ_CHECK_INT(kjt_l2_check(stream), 0);
}

KJ_TEST(timer_l2_stream_without_attributes_still_checks_the_limit)
{
	sim_init();
	sim_no_attr = 1;
	KJ_CHECK_INT(kjt_init(1), 0);
	sim_limit = 1 << 20;
	KJ_CHECK_INT(kjt_l2_reset(stream), 0);
	KJ_CHECK_INT(sim_limit, 0);
	KJ_CHECK_INT(sim_resets, 1);
	KJ_CHECK_INT(kjt_l2_check(stream), 0);
	sim_limit = 1 << 20;
	KJ_CHECK_INT(kjt_l2_check(stream), 1);
}

/* A queued round: each call's sample from its own pair of events, read
 * when the round is finished and not before; the pairs made once and
 * used again by the next round; the CPU's queued calls are plain ones. */
KJ_TEST(timer_queued_round_samples_per_call)
{
	double ms, esc;
	int i, made_after_one;

	sim_init();
	sim_n_events = 0;
	KJ_CHECK_INT(kjt_init(1), 0);
	for (i = 0; i < 3; i++) {
		KJ_CHECK_INT(kjt_qbegin(stream), 0);
		sim_now += 2 * i; /* the call: 1 + 2i ms between its events */
		KJ_CHECK_INT(kjt_qend(stream), 0);
	}
	KJ_CHECK_INT(kjt_count(), 0); /* nothing read before the round ends */
	KJ_CHECK_INT(kjt_qfinish(1e9), 0);
	KJ_CHECK_INT(kjt_count(), 3);
	for (i = 0; i < 3; i++) {
		KJ_CHECK_INT(kjt_sample(i, &ms, &esc), 0);
		KJ_CHECK(ms == 1 + 2 * i);
		KJ_CHECK(esc == 0);
	}
	made_after_one = sim_n_events;
	KJ_CHECK_INT(made_after_one, 2 + 6); /* kjt_init's two, three pairs */
	kjt_reset();
	for (i = 0; i < 3; i++) {
		KJ_CHECK_INT(kjt_qbegin(stream), 0);
		KJ_CHECK_INT(kjt_qend(stream), 0);
	}
	KJ_CHECK_INT(kjt_qfinish(1e9), 0);
	KJ_CHECK_INT(sim_n_events, made_after_one);
	KJ_CHECK_INT(kjt_count(), 3);
	KJ_CHECK_INT(kjt_qfinish(1e9), 0); /* an empty round: nothing */
	KJ_CHECK_INT(kjt_count(), 3);
	/* An end without a begin is refused. */
	KJ_CHECK(kjt_qend(stream) != 0);
	/* On the CPU a queued call is timed at once. */
	KJ_CHECK_INT(kjt_init(0), 0);
	KJ_CHECK_INT(kjt_qbegin(stream), 0);
	KJ_CHECK_INT(kjt_qend(stream), 0);
	KJ_CHECK_INT(kjt_count(), 1);
	KJ_CHECK_INT(kjt_qfinish(0), 0);
	KJ_CHECK_INT(kjt_count(), 1);
}
