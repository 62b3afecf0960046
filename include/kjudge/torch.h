/*
 * kjudge/torch.h - the torch runner: tasks in the triton-op-verifier /
 * KernelBench layout, each side run by a Python worker.
 *
 * A verify directory holds {op}_torch.py (Model, get_inputs() or
 * get_input_groups(), get_init_inputs()) and the candidate
 * {op}_{impl}.py (ModelNew).  kj_torch_open() resolves and hashes the two
 * files and makes the task's two sides (kjudge/runner.h); kj_task_start()
 * starts their workers (kjudge_worker.py, found beside the kjudge binary or
 * in ../libexec/kjudge), the reference as a plain process, the candidate in
 * the sandbox (kjudge/sandbox.h), where it sees a copy of the task file
 * without its reference class, its own file and its own helper modules
 * (files beside it that are neither the task file nor another candidate),
 * read-only.  The pipeline (kjudge/pipeline.h) then drives them.
 *
 * A task may have a cases file, {op}_cases.json beside {op}_torch.py (its
 * format in docs/cli.md): kj_torch_open() reads, hashes and expands it
 * (t->cases_file, t->cases_sha256, t->case_params, t->identity; a bad one is
 * KJ_EINVAL naming the file and why), and each case's parameters go to
 * get_inputs(**params) and get_init_inputs(**params) on both sides.
 *
 * Worker protocol: docs/ARCHITECTURE.md and worker/kjudge_worker.py.
 */
#ifndef KJUDGE_TORCH_H
#define KJUDGE_TORCH_H

#include "kjudge/config.h"
#include "kjudge/error.h"
#include "kjudge/pipeline.h"

struct kj_torch_spec {
	const char *op_name;
	const char *verify_dir;     /* default "." */
	const char *impl_name;      /* default "triton_ascend_impl" */
	const char *device;         /* "cuda", "cuda:N", "cpu", or NULL: cuda when there is one */
	double timeout_s;           /* per request of a case */
	/* The anti-cheat layers (kj_side in kjudge/runner.h; 0 by default):
	 * kernels_disabled: the candidate's worker makes every Triton launch
	 * a no-op before the candidate is imported (verify --disable-kernels);
	 * a candidate still correct so does its work outside its kernels.
	 * profile_kernels: on CUDA, the candidate's worker names the GPU
	 * kernels of one extra profiled forward per case (t->cand.kernel_names). */
	int kernels_disabled;
	int profile_kernels;
	/* The reference's model is torch.compile(Model) (benchmark's
	 * --baseline compile, KernelBench's compiled baseline): compiled at
	 * its first call; its golden outputs and timings are cached apart
	 * from the eager model's (t->device_key ends with "|compile"). */
	int ref_compiled;
};

void kj_torch_spec_init(struct kj_torch_spec *s);

/*
 * Open the task: check the names, resolve the directory, hash the task
 * file and the candidate file (a missing candidate is not an error here:
 * t->have_candidate is 0 and every case reports it), find the Python and
 * the worker.  Nothing is started.  On success the caller owns t and
 * releases it with kj_task_close(); on error t holds nothing.  `a` must
 * outlive t.
 */
int kj_torch_open(const struct kj_config *cfg, struct kj_attempt *a,
		  const struct kj_torch_spec *spec, struct kj_task *t, struct kj_error *err);

/*
 * kj_torch_open in two steps, for workers started before their task is
 * known (a server's warm workers: Python and torch imported while no
 * attempt waits).  kj_torch_prestart does everything of kj_torch_open
 * that reads nothing in spec->verify_dir (a directory that exists, empty
 * for now; spec->op_name is not used) and starts both sides' workers up to
 * their hello: each side's view binds the directories the task's files
 * will be staged in.  Once they are, kj_torch_fill does the rest with
 * spec->op_name (the same verify_dir): the task and candidate files
 * hashed, the cases file read, the candidate's view filled; then
 * kj_task_start goes on from the hello (and starts the workers again if
 * one died meanwhile).  A prestart that fails leaves t holding nothing;
 * after it, t is the caller's as kj_torch_open's (kj_task_close), also
 * when kj_torch_fill fails.
 */
int kj_torch_prestart(const struct kj_config *cfg, struct kj_attempt *a,
		      const struct kj_torch_spec *spec, struct kj_task *t, struct kj_error *err);
int kj_torch_fill(struct kj_task *t, const struct kj_torch_spec *spec, struct kj_error *err);

/*
 * Whether s may be an op name or a candidate suffix: a file stem of the
 * POSIX portable set (letters, digits, '_', '-', '.'), as KernelBench
 * writes its problems ("1_Square_matrix_multiplication_"), at most 120
 * bytes, not starting with '.' or '-' and without "..": never a path, an
 * option or a hidden file.  NULL when it may, else a lowercase phrase
 * saying why not ("holds '/'"), in static storage.
 */
const char *kj_torch_name_problem(const char *s);

#endif /* KJUDGE_TORCH_H */
