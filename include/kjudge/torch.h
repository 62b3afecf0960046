/*
 * kjudge/torch.h - the torch runner: tasks in the triton-op-verifier /
 * KernelBench layout, judged by Python workers.
 *
 * A verify directory holds {op}_torch.py (Model, get_inputs() or
 * get_input_groups(), get_init_inputs()) and the candidate
 * {op}_{impl}.py (ModelNew).  For every case the runner starts nothing new
 * unless a worker died: one reference worker and one candidate worker, each
 * its own process (kjudge_worker.py, beside the kjudge binary), both
 * building their model from the same seed so that the weights are identical.
 * The judge makes the inputs of each case from seeds the candidate cannot
 * know (see kj_torch_seed), on at least two input sets per case; each side
 * writes its outputs as .npy into a private scratch directory, and the judge
 * compares them with kj_compare().  A case that raises, crashes, hangs or
 * disagrees is a failure with a reason; it never stops the other cases.
 */
#ifndef KJUDGE_TORCH_H
#define KJUDGE_TORCH_H

#include <stdint.h>

#include <jansson.h>

#include "kjudge/error.h"
#include "kjudge/fileio.h"

struct kj_torch_opts {
	const char *op_name;
	const char *verify_dir;     /* default "." */
	const char *impl_name;      /* default "triton_ascend_impl" */
	const char *device;         /* "cuda", "cpu", or NULL: cuda when there is one */
	const char *python;         /* interpreter path; NULL: $KJ_PYTHON or python3 */
	const char *worker;         /* kjudge_worker.py; NULL: beside the binary */
	double timeout_s;           /* per case and side; default 900 */
	int input_sets;             /* per case; default 2 (1 with a fixed seed) */
	int seed_fixed;             /* use `seed` for every case, as verify.py */
	uint64_t seed;
	int threads;                /* comparator threads, 0 = auto */
};

void kj_torch_opts_init(struct kj_torch_opts *o);

/*
 * Verify the candidate against the reference on every case.  Returns KJ_OK
 * with *result set to the verify_result.json record (a new reference; the
 * caller json_decrefs it): op_name, total_cases, passed_cases, failed_cases,
 * failures[] (case_idx, input_desc, error_type, error_msg, and kjudge's
 * additions: seed, input_set, output, metrics), plus a "kjudge" object
 * (version, device, seeds).  Returns a KJ_E* code with err filled when
 * nothing could be judged: a missing directory or task file, no Python, a
 * reference that cannot be loaded.
 */
int kj_torch_verify(const struct kj_torch_opts *o, json_t **result,
		    struct kj_error *err);

struct kj_bench_opts {
	int warmup;                 /* untimed calls first; default 5 */
	int repeats;                /* timed calls; default 50 */
	int skip_framework;         /* use framework_latency_ms instead of timing Model */
	double framework_latency_ms;
	size_t flush_bytes;         /* cache flush before each timed call; 256 MiB */
};

void kj_bench_opts_init(struct kj_bench_opts *b);

/*
 * Benchmark the candidate against the reference on every case (the caller
 * applies the verify gate first).  Per case: the golden outputs of a fresh
 * secret input set, the reference's latency (unless skip_framework), the
 * candidate's latency with every timed call's outputs checked against the
 * golden ones, and the inputs hashed around the timed loop.  *result gets
 * the perf JSON of triton-op-verifier's benchmark.py (with kjudge's spread
 * figures added per case).  Returns a KJ_E* code when nothing could be run.
 */
int kj_torch_benchmark(const struct kj_torch_opts *o, const struct kj_bench_opts *b,
		       json_t **result, struct kj_error *err);

/*
 * The secret seed of input set `set` of case `case_idx` for the task file
 * whose bytes hash to task_hash: derived from a random key kept by the judge
 * in $KJ_STATE_DIR (default $XDG_STATE_HOME/kjudge or ~/.local/state/kjudge,
 * created mode 0700, the key file 0600) so that it is stable across runs
 * (golden outputs stay cacheable) and unknown to candidates.
 */
int kj_torch_seed(uint64_t task_hash, int case_idx, int set, uint64_t *seed,
		  struct kj_error *err);

#endif /* KJUDGE_TORCH_H */
