/*
 * kjudge/runner.h - what the judging pipeline needs of a runner.
 *
 * A runner knows how to execute one kind of task.  Those that judge by
 * comparing outputs (the torch runner today; a native C-ABI runner later)
 * give the pipeline two sides, the reference and the candidate, each a
 * struct kj_side behind a table of operations.  A side computes one call at
 * a time: the pipeline sends a call to both sides before it waits for
 * either, so they compute at the same time.
 *
 *   pipeline (lib/core/verify.c, bench.c)     runner (lib/runner/torch.c, wire.c)
 *   start(side)                 ------->    spawn its worker, load the module
 *   send(side, call) ... recv(side, reply)  run or time one case, outputs
 *                                           written as .npy into call->out_dir
 *   stop(side), release(side)
 *
 * Trust: a reply of the candidate side comes from the candidate's own
 * process and is taken as a claim, never as a verdict.  The runner maps
 * what a candidate's worker says onto candidate-charged error types only
 * (kjudge/verdict.h); the outputs it names are read and compared by the
 * judge.  Task-charged and judge-charged types come from the reference
 * side's replies and from the judge's own observations.
 *
 * Generic and the torch worker's.  Every runner fills the fields below
 * except those marked "torch worker's": those carry what only the torch
 * runner's Python worker says or does (Python phase names, the Triton
 * launches it suppressed, the GPU kernels its profiler saw), and another
 * runner leaves them zero (phase "", launches_suppressed 0, kernel_names
 * NULL), which the pipeline and eval read as "not claimed".  The calls
 * beyond KJ_CALL_RUN and KJ_CALL_TIME are optional: a side declares them
 * in kj_side_ops.caps (KJ_SIDE_CAP_*).  The torch runner's worker protocol
 * is docs/protocol.md; its generic client is lib/runner/wire.c.
 *
 * Return codes: send/recv/start return KJ_OK whenever the side's outcome is
 * known (including a side that raised, crashed, timed out or could not load
 * its module: reply->ok is then 0 and says why).  Any other code is the
 * judge's own failure (out of memory, KJ_EINTR when the judge was
 * interrupted, KJ_ESANDBOX / KJ_ESPAWN when a worker could not be
 * started), and err says what.
 */
#ifndef KJUDGE_RUNNER_H
#define KJUDGE_RUNNER_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "kjudge/error.h"
#include "kjudge/value.h"
#include "kjudge/verdict.h"

enum kj_side_role { KJ_SIDE_REFERENCE = 0, KJ_SIDE_CANDIDATE = 1 };

enum kj_call_op {
	KJ_CALL_RUN,     /* one call of forward on one input set: its outputs */
	KJ_CALL_TIME,    /* a round of timed calls (benchmark) */
	KJ_CALL_DEVICE,  /* the device's limits: copy bandwidth, launch time */
	/* Outputs compared on the device (lib/core/devcmp.c), the reference's worker
	 * only: */
	KJ_CALL_TAKE,    /* copy exported outputs (items, pass_fds) into its
			  * own memory: reply held, one number or null each */
	KJ_CALL_FIGURES, /* per item {"taken", "kept", "t"}: the comparator's
			  * figures of a copy against a kept output, computed
			  * on the device; the copies are dropped */
	KJ_CALL_DROP,    /* forget every kept output and copy */
};

/* One request to a side.  The model itself is built once, when the side
 * starts (with the side's init seed: kj_side.init_seed). */
struct kj_call {
	enum kj_call_op op;
	int case_idx;            /* 0-based */
	uint64_t seed;           /* KJ_CALL_RUN: the inputs' seed */
	const char *out_dir;     /* where the side writes its tensor files */
	const char *tag;         /* file name prefix, e.g. "ref" */
	/* Every field below is generic; the device ones (export_outputs,
	 * keep, items, pass_fds) go only to a side with KJ_SIDE_CAP_DEVCMP.
	 * KJ_CALL_TIME: the input sets (their seeds), the set of each timed
	 * call in order, untimed warm-up calls first (on set 0) */
	const uint64_t *seeds;
	int n_seeds;
	const int *schedule;
	int n_calls;
	int warmup;
	size_t flush_bytes;      /* cache flush before each timed call */
	int check;               /* keep every distinct output of each set */
	/* An input set the side has never seen, made just before timed call
	 * probe_at (0-based; -1: none) from probe_seed and used by that call
	 * alone, its outputs those of set probe_set (an index past the
	 * seeds', which schedule[probe_at] names too) */
	int probe_at;
	uint64_t probe_seed;
	int probe_set;
	/* A decoy: that set is made, kept and checked as a probe's is, but the
	 * call runs on the cycled set probe_set (one of the seeds'), its output
	 * sent as a new one: the round's work is a probe round's but for the
	 * call's inputs, which the candidate has seen */
	int probe_decoy;
	/* A queued round (never with a probe): the calls put on the device
	 * one after another with no wait between them, one wait after the
	 * last, the outputs matched after it (docs/protocol.md) */
	int queued;
	/* The reference's worker only: each timed call returns the outputs
	 * the side's model made for its set before the round (untimed), so
	 * that the round costs what the harness costs around a call */
	int empty;
	/* With check: per set, how many distinct outputs of this case the
	 * judge has already checked in earlier rounds on this side (NULL: none;
	 * n_known entries, the others 0).  The side names those by number
	 * (0 .. known-1) when a call's outputs equal one of them, and sends
	 * only the new ones, numbered from known on; all zeros tells it to
	 * forget what it kept. */
	const int *known;
	int n_known;
	/* KJ_CALL_RUN, KJ_CALL_TIME: leave top-level tensor outputs on the
	 * device and export them as descriptors ("device" leaves, value.h):
	 * KJ_DEVOUT_AUTO those of CUDA tensors of at least KJ_DEVOUT_MIN
	 * bytes, KJ_DEVOUT_ALL every one (CPU tensors as raw memory files:
	 * tests); 0: none.  keep (KJ_CALL_RUN, the reference): keep such
	 * outputs in the worker instead ("kept" leaves): KJ_KEEP the tensor
	 * itself where its memory is its own (nothing runs on the side before
	 * it is compared), KJ_KEEP_COPY always a copy (a timed set's golden,
	 * kept through the side's own timed rounds); 0: none */
	int export_outputs;
	int keep;
	/* KJ_CALL_TAKE, KJ_CALL_FIGURES: the items (borrowed) and, for TAKE,
	 * the descriptors the items' "fd" index (borrowed, passed to the
	 * worker with the request) */
	const json_t *items;
	const int *pass_fds;
	size_t n_pass_fds;
};

/* Which outputs a side leaves on the device (kj_call.export_outputs). */
enum { KJ_DEVOUT_OFF = 0, KJ_DEVOUT_AUTO = 1, KJ_DEVOUT_ALL = 2 };
enum { KJ_KEEP = 1, KJ_KEEP_COPY = 2 };
#define KJ_DEVOUT_MIN (32u << 20)

/* What a call (or a start) came to.  Owned by the caller: zero it with
 * kj_reply_init(), free it with kj_reply_release() (lib/core/reply.c: the
 * pipeline's, whichever runner fills it). */
struct kj_reply {
	int ok;                  /* the call completed normally */
	/* !ok: how the side failed, as the runner classified it (a
	 * candidate-charged type for either side; the pipeline decides what a
	 * failure of the reference means) */
	enum kj_etype type;
	char *message;           /* cleaned, bounded */
	char *exception;         /* the exception class the worker named, or NULL */
	char phase[16];          /* torch worker's: "import", "init",
				  * "inputs", "forward", "outputs"; "" when
				  * not known (and for other runners) */
	int lost;                /* the worker is gone (timeout, crash, sticky
				  * error): the next call restarts it */
	int disk_full;           /* the file system of out_dir is full (checked
				  * by the judge, not taken from the worker) */
	int device_memory;       /* the worker says the device's memory ran out
				  * (torch.OutOfMemoryError): a claim, which only
				  * ever has the attempt judged again alone
				  * (kj_result.device_memory) */
	/* ok */
	struct kj_value *outputs;   /* a list: one item per output */
	json_t *input_desc;
	int inputs_changed;      /* as the worker reports it */
	json_t *aliases;         /* outputs sharing memory with inputs, or NULL */
	json_t *phases;          /* seconds per phase, for kjudge.timings */
	/* Torch worker's: the candidate's worker's own claims (informational,
	 * never a verdict): Triton launches it made no-ops during the call when its
	 * kernels are disabled (kj_side.kernels_disabled), and the names of
	 * the GPU kernels an extra profiled forward ran (kj_side.profile_kernels,
	 * CUDA only): an array of strings, owned, or NULL when not profiled. */
	long long launches_suppressed;
	json_t *kernel_names;
	/* The descriptors that came with the reply (the candidate's outputs as
	 * sealed memory files, KJ_VAL_TENSOR leaves' fd indexes into them):
	 * owned, closed by kj_reply_release. */
	int *fds;
	size_t n_fds;
	/* KJ_CALL_TIME */
	size_t n_samples;
	double *samples_ms, *escaped_ms;
	double peak_memory_mb;
	double idle_sync_ms;     /* the threshold the side found for escaped work */
	char timer[24];
	size_t n_distinct;
	struct kj_value **distinct; /* each a list like outputs */
	int *distinct_set;       /* the input set each distinct output is of */
	size_t n_calls;
	/* per timed call: its set, and its output as an index of distinct
	 * (-1: one the judge checked in an earlier round, call.known) */
	int *call_set, *call_distinct;
	/* KJ_CALL_TAKE ("taken") and KJ_CALL_FIGURES ("figures"): one entry
	 * per item, owned; NULL otherwise */
	json_t *held;
	/* KJ_CALL_DEVICE */
	double copy_gbs;         /* device-to-device copy, bytes read + written */
	double launch_ms;        /* the smallest kernel, launched and finished */
};

/* Empty r (nothing owned; type KJ_ET_NOT_JUDGED). */
void kj_reply_init(struct kj_reply *r);
/* Free what r owns (its texts, trees and JSON, and close the descriptors
 * that came with it), then empty it as kj_reply_init does: r can be used
 * again, and releasing it twice is harmless. */
void kj_reply_release(struct kj_reply *r);

struct kj_side;

/*
 * What a side can do beyond the required calls (KJ_CALL_RUN, KJ_CALL_TIME,
 * start, stop, release, kill): kj_side_ops.caps, a mask of these.  The
 * pipeline checks the mask before it sends an optional request, and a side
 * without the bit is treated as if the feature were absent, never as if it
 * had answered: without DEVICE a benchmark case cannot check its timing
 * floor and fails as the judge's (JudgeError); without DEVCMP the outputs
 * go through host memory on both sides; without FREEZE on the other side a
 * timed round is not run (JudgeError), since the other side's worker could
 * run beside the timed one.
 */
enum {
	KJ_SIDE_CAP_DEVICE = 1u << 0, /* KJ_CALL_DEVICE: the device's limits */
	KJ_SIDE_CAP_DEVCMP = 1u << 1, /* outputs left on the device:
				       * kj_call.export_outputs and keep, and
				       * (the reference) KJ_CALL_TAKE,
				       * KJ_CALL_FIGURES, KJ_CALL_DROP */
	KJ_SIDE_CAP_FREEZE = 1u << 2, /* kj_side_ops.freeze */
};

/* Whether side s (a struct kj_side *) declares every capability in cap. */
#define KJ_SIDE_CAN(s, cap) ((s)->ops && ((s)->ops->caps & (cap)) == (unsigned)(cap))

struct kj_side_ops {
	/* The runner's name ("torch"), for messages and records: static. */
	const char *name;
	/* What the side can do beyond the required calls (KJ_SIDE_CAP_*). */
	unsigned caps;
	/* Start the worker and load its module.  KJ_OK when the side's state is
	 * known: s->loaded, or s->load_failure saying why not. */
	int (*start)(struct kj_side *s, struct kj_error *err);
	int (*send)(struct kj_side *s, const struct kj_call *call, struct kj_error *err);
	int (*recv)(struct kj_side *s, struct kj_reply *rep, struct kj_error *err);
	/* Stop the worker (it may be started again). */
	void (*stop)(struct kj_side *s);
	/* Freeze (1) or thaw (0) every process of the side's worker, so that
	 * the other side is timed alone.  KJ_OK, or a code when it cannot.
	 * Called only when caps holds KJ_SIDE_CAP_FREEZE (else may be NULL). */
	int (*freeze)(struct kj_side *s, int frozen, struct kj_error *err);
	/* Stop it and free what the runner holds in s->impl. */
	void (*release)(struct kj_side *s);
	/* Kill every process of the side's worker now, without waiting (no
	 * clean exit): stop or release then only reaps it.  So that two
	 * workers end at the same time when nothing more is asked of them. */
	void (*kill)(struct kj_side *s);
};

struct kj_side {
	const struct kj_side_ops *ops;
	void *impl;               /* the runner's */
	enum kj_side_role role;
	char out_dir[PATH_MAX];   /* where its calls write (the pipeline may
				   * point a call elsewhere) */
	int loaded;               /* the worker runs and its module is loaded */
	int started;              /* start was called and not stopped */
	struct kj_reply load_failure; /* when !loaded after start */
	uint64_t init_seed;       /* the model's weights: the same on both sides */
	int sandboxed;
	int infra_errors;         /* starts the machine failed */
	/* What bounded its worker at the last start: the limits in force (a
	 * JSON object, owned; NULL before a start) and how it was isolated
	 * ("sandbox", "pid-namespace", "process-group"). */
	json_t *limits;
	const char *isolation;
	/* Torch worker's: the anti-cheat layers of the candidate side
	 * (eval's; both 0 by default, and nothing of verify or benchmark
	 * changes then), set by the runner from its spec (kjudge/torch.h):
	 * kernels_disabled: its worker makes every Triton launch a no-op
	 * before the candidate is imported; launches_suppressed sums what its
	 * replies claim were suppressed.
	 * profile_kernels: on CUDA its worker runs one more forward under
	 * torch.profiler after the checked call of each case's first input set
	 * and names the GPU kernels that ran; kernel_names is their union, in
	 * order of first report (distinct strings of at most 200 bytes, at
	 * most 200 of them): an array owned by the side, NULL until a reply
	 * named some (always NULL on the CPU, where the layer does not
	 * apply).  Both are the candidate process's claims. */
	int kernels_disabled;
	int profile_kernels;
	long long launches_suppressed;
	json_t *kernel_names;
};

/* The name of a side ("reference", "candidate"): a static string
 * (lib/core/reply.c). */
const char *kj_side_name(enum kj_side_role r);

#endif /* KJUDGE_RUNNER_H */
