/*
 * pipeline_internal.h - what the pipeline's files share (kj_verify and
 * kj_benchmark, split by concern): pipeline.c (a side, a result),
 * golden.c, devcmp.c, verify.c, bench.c, bench_checks.c.  Internal to
 * lib/core/.  Each function is described where it is defined.
 */
#ifndef KJ_CORE_PIPELINE_INTERNAL_H
#define KJ_CORE_PIPELINE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "kjudge/pipeline.h"
#include "kjudge/runner.h"
#include "kjudge/value.h"
#include "core/core.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/internal.h"

/* --- seed ranges ----------------------------------------------------------------------
 *
 * Every input of a run comes from kj_seed_derive(run key, task, case, set)
 * or, with --seed S (seed_fixed), from S plus an offset.  These numbers are
 * part of what `--seed` replays and of the golden cache's keys: changing one
 * changes every input a stored record or cached golden was made from.  The
 * ranges do not overlap: verify's sets are below 100 (--input_sets), the
 * timed sets below 64 (--timed_sets), the unseen sets PROBE_BATCHES *
 * PROBE_SETS.
 */
#define KJ__SEED_MODEL_CASE (-1) /* the case of the models' init seed (set 0) */
#define KJ__SEED_VERIFY 0        /* verify's input set s: set KJ__SEED_VERIFY + s */
#define KJ__SEED_TIMED 1000      /* the benchmark's timed set j: 1000 + j */
#define KJ__SEED_PROBE 2000      /* the benchmark's unseen set j: 2000 + j */
#define KJ__SEED_FIXED_PROBE 500 /* with --seed S: timed set j is S + j, unseen S + 500 + j */

/* --- one side, one result (pipeline.c) ------------------------------------------ */

int kj__ensure_side(struct kj_side *s, struct kj_case *c, struct kj_result *res,
		    int *usable, struct kj_error *err);
int kj__side_failed(const struct kj_side *s, const struct kj_reply *rep, struct kj_case *c,
		    struct kj_result *res, struct kj_error *err);
int kj__send_call(struct kj_side *s, const struct kj_call *call, struct kj_error *err);
int kj__recv_call(struct kj_attempt *a, struct kj_side *s, struct kj_reply *rep,
		  struct kj_error *err);
int kj__keep_desc(struct kj_case *c, const json_t *desc);
int kj__start_result(struct kj_task *t, struct kj_attempt *a, const struct kj_judge_opts *o,
		     struct kj_result *res, struct kj_error *err);
int kj__finish_result(struct kj_attempt *a, struct kj_result *res, int rc,
		      struct kj_error *err);
int kj__case_hook(const struct kj_hooks *h, struct kj_task *t, struct kj_result *res,
		  struct kj_case *c, struct kj_error *err);

/* --- golden outputs (golden.c) ------------------------------------------------------ */

struct kj__golden {
	struct kj__entry e;     /* when held in the cache */
	int cached;             /* found in the cache (not computed now) */
	struct kj_reply rep;    /* the reference's reply when computed */
	const struct kj_value *outputs;
	const char *dir;
	const json_t *input_desc;
};

void kj__golden_init(struct kj__golden *g);
void kj__golden_release(struct kj__golden *g, const char *stage);
const char *kj__ref_dir(const struct kj_task *t, const struct kj_attempt *a);
int kj__golden_take(struct kj_task *t, struct kj_attempt *a, int case_idx, uint64_t seed,
		    struct kj__golden *g, struct kj_case *c, struct kj_result *res, int *ok,
		    struct kj_error *err);
int kj__golden_cached(struct kj_task *t, struct kj_attempt *a, int case_idx, uint64_t seed,
		      struct kj__golden *g, struct kj_error *err);
int kj__send_ref_run(struct kj_task *t, struct kj_attempt *a, int k, uint64_t seed,
		     int keep, int copy, struct kj_case *c, struct kj_result *res, int *usable,
		     struct kj_error *err);
int kj__timed_golden(struct kj_task *t, struct kj_attempt *a, int k, uint64_t seed, int keep,
		     struct kj__golden *g, struct kj_case *c, struct kj_result *res, int *ok,
		     struct kj_error *err);

/* --- outputs compared, on the device or the host (devcmp.c) ---------------------- */

enum dev_state {
	DEV_HOST,    /* nothing held on a device: compare_all decides */
	DEV_READY,   /* the plan is made: take, then figures */
	DEV_FAILED,  /* c holds a decided failure */
	DEV_REDO,    /* not decidable here: judge it again through host memory */
};

struct kj__devplan {
	json_t *take;   /* items of the take call */
	json_t *fig;    /* items of the figures call */
	int *fds;       /* what take passes to the reference's worker */
	size_t n;       /* pairs in take and fig */
	unsigned char *host; /* per top-level output: compared on the host */
	int taken;      /* take has run: fig's items name the copies */
	int state;      /* kj__dev_pairs' verdict on the trees (enum dev_state),
			 * DEV_REDO after a take that failed */
};

void kj__devplan_release(struct kj__devplan *p);
int kj__held_any(const struct kj_value *v);
int kj__all_kept(const struct kj_value *v);
int kj__dev_pairs(const struct kj_value *gold, const struct kj_value *cand,
		  const struct kj_reply *cr, const struct kj_cmp_options *cmp,
		  struct kj__devplan *p, struct kj_error *err);
int kj__dev_take(struct kj_task *t, struct kj_attempt *a, struct kj__devplan *p, int *st,
		 struct kj_error *err);
int kj__dev_drop(struct kj_task *t, struct kj_attempt *a, struct kj_error *err);
int kj__compare_outputs(struct kj_task *t, struct kj_attempt *a, const struct kj_value *gold,
			const char *gdir, const struct kj_value *cand, const struct kj_reply *cr,
			const struct kj_cmp_options *cmp, int devout, struct kj__devplan *pre,
			struct kj_case *c, int *st, struct kj_error *err);

/* --- the benchmark (bench.c) ----------------------------------------------------------- */

/* The judge's clock of the benchmark's rounds and budget, in seconds:
 * kj__now_s (monotonic).  kj__bench_clock is a test's hook, NULL (off)
 * unless a unit test sets it to a clock its scripted side advances
 * (tests/unit/test_pipeline.c), so that what the judge's clock sees of a
 * round is part of the script and a test takes milliseconds. */
extern double (*kj__bench_clock)(void);
double kj__judge_now(void);

/* --- the benchmark's figures and checks (bench_checks.c) --------------------------- */

/* A growable array of doubles. */
struct kj__dvec {
	double *v;
	size_t n, cap;
};

/* What one side's timing gathered over a case. */
struct kj__timed {
	struct kj__dvec ms, esc;     /* every timed sample */
	struct kj__dvec over;        /* per round: (judge's wall - samples) / calls */
	struct kj__dvec wall;        /* per round: judge's wall / calls */
	struct kj__dvec smean;       /* per round: samples / calls */
	int empty;               /* its rounds are of empty calls (the
				  * reference's worker: the harness's cost) */
	int known_borrowed;      /* `known` is another's (not freed here) */
	double peak_mb;
	double idle_sync_ms;
	char timer[24];
	double wall_per_call;    /* of the last round, judge's clock */
	/* Per input set (n_known of them), the distinct outputs of the case
	 * this side has sent and the judge has checked so far: later rounds
	 * name them instead of sending them again (struct kj_call's known). */
	int *known;
	int n_known;
	int redo;       /* a timed output not decidable on the device: the
			 * case is timed again through host memory */
};

/*
 * Input sets each side sees once each, after its rounds: a call on inputs
 * it has never seen takes what its work takes; one that recognises inputs
 * it has seen (by content, by address) and replays what it worked out
 * before is fast only on those.  The fastest of the candidate's such calls,
 * over the median of its cycled calls, must not be more than REPLAY_RATIO
 * times the same ratio of the reference's (what new inputs cost honest code
 * in the same run: new allocations, cold caches; taken between 1 and 1.5),
 * nor longer by more than two launches and REPLAY_ABS (what one call may be
 * delayed by where nothing replays: on a loaded CPU honest 5 us calls came
 * out 0.02-0.03 ms on all three new sets of both batches, 4.9-7.7 times
 * their median).  Honest code measured 1.0-1.4 on the CPU, and 0.94-1.74
 * on the H100 (1.52 at most over the reference's); a lookup by content
 * 10-35 on a quiet CPU (tests/candidates/content_memo), but 4.7 on a loaded
 * one, where its calls on seen inputs slowed more than the matmul: the
 * ratio a replay shows is its speedup, so the bound (3) is about the most a
 * replay can gain unseen.  A batch
 * that trips is confirmed by a second one on PROBE_SETS more new sets: a
 * replay trips every time, while a call of a few microseconds that the
 * scheduler delayed on all three sets (under eval's parallel workers on a
 * busy CPU) almost never does so twice; the case fails only if both trip.
 */
#define PROBE_SETS 3
#define PROBE_BATCHES 2
#define REPLAY_RATIO 3.0
#define REPLAY_ABS_CPU 0.1   /* ms */
#define REPLAY_ABS_GPU 0.005 /* ms */

/*
 * The judge's figures are a low quantile over rounds, not their median:
 * whatever else runs on the machine (another attempt's workers, the
 * scheduler) only ever adds time to a round, on either side, so the
 * rounds it spared say best what the calls take; and nothing a candidate
 * does can make a round shorter than its calls were.  With a few rounds
 * it is their fastest.
 */
#define JUDGE_Q 0.25

int kj__dvec_add(struct kj__dvec *d, double x);
int kj__median_ci(const struct kj__dvec *d, double *median, double *rel, struct kj_error *err);
int kj__replay_tripped(double fastest, double fastest_r, double med_c, double med_r,
		       int timing_ref, double launch_ms, int gpu, double *ratio_r);
/*
 * The same test on the judge's clock alone, which the candidate's samples
 * cannot sway (a replay that also shrinks its samples of its calls on new
 * inputs: tests/candidates/memo_forger).  excess (excess_r): the
 * candidate's (the reference's; 0: not timed) fastest round holding a call
 * on new inputs less its fastest decoy round, one that does the same work
 * but calls on inputs it has seen (probe_batch); per_call: the candidate's
 * call on inputs it has seen (its samples' median, never more than the
 * judge's clock saw); ratio_r: the reference's ratio of kj__replay_tripped.
 * The candidate's call on new inputs as the judge sees it, *unseen, is
 * per_call + excess - excess_r (the reference's where positive: what new
 * inputs cost honest code); it trips where that is more than REPLAY_RATIO *
 * ratio_r times per_call by more than the judge's slack: two launches,
 * REPLAY_ABS, REPLAY_SLACK of round_ms, the decoy round's time beyond its
 * calls (making and checking a set, the round trip: one round's jitter on
 * the judge's clock grows with it; 0.2-0.6 ms of 6 ms rounds on a quiet
 * CPU), and spread_ms, the candidate's decoy rounds' median above their
 * fastest (what this run's noise made of rounds alike; not the probe
 * rounds', whose spread grows with the very work a replay hides: a loaded
 * CPU put an honest 8 us call's probe rounds 0.57 ms above its decoys').
 * A replay that saves less than that a call is left to the samples' test.
 */
#define REPLAY_SLACK 0.15
int kj__replay_judged(double excess, double excess_r, double per_call, double ratio_r,
		      double round_ms, double spread_ms, double launch_ms, int gpu,
		      double *unseen);
double kj__stat_kept(const struct kj__dvec *d, double p);
int kj__judge_figures(struct kj__timed *t, const struct kj__dvec *ov, double over, double res,
		      struct kj_latency *l);
int kj__judge_speedup(struct kj__timed *tr, struct kj__timed *tc, int timing_ref,
		      const struct kj__dvec *ov, double over, double res, double ref_j,
		      double ref_med, double floor_ms, struct kj_case *c);
double kj__judge_resolution(double over, int gpu, int queued);
/* The share of a case's speed of light a median call may fall below
 * before it is impossible (docs/cli.md, "The speed of light"). */
#define KJ__SOL_MARGIN 0.5
/* Whether a median call of med_ms beats the speed of light sol_ms (> 0;
 * 0: none) by more than KJ__SOL_MARGIN of it. */
int kj__sol_impossible(double med_ms, double sol_ms);

double kj__timing_floor(double launch_ms, const double *ref_ms, size_t n_ref, double shared_ref,
			double out_bytes, double copy_gbs);
/* Whether c's speedup is one the judge's clock cut to less than 0.8 of
 * the samples' ratio: the benchmark then times the case once more from
 * fresh rounds before it stands (bench_checks.c). */
int kj__recheck_cut(const struct kj_case *c);

int kj__cross_check(const struct kj_latency *cand, const struct kj_latency *ref, int timing_ref,
		     double spread, double res, int gpu, double *ratio_ref, double *ratio_cand,
		     double *least);

#endif /* KJ_CORE_PIPELINE_INTERNAL_H */
