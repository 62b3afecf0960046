/*
 * kjudge/eval.h - batch evaluation: a suite of tasks, many candidates (of
 * several models, several attempts each), every verdict in the results
 * store (kjudge/store.h).
 *
 * Theory of operation.
 *
 *   kj_eval_discover_suite       the suite's tasks, found recursively:
 *                                KernelBench's layout (levelL/P_Name.py,
 *                                sidecar P_Name.cases.json) and the verify
 *                                directory's ({op}_torch.py, {op}_cases.json)
 *   kj_eval_discover_candidates  KernelBench's generation layout
 *                                (level_L_problem_P_sample_S_kernel.py, the
 *                                model the directory's name), MODEL/TASK/
 *                                ATTEMPT.py, or a JSONL file of generations;
 *                                a bad line or a candidate for no task of the
 *                                suite is named in set->problems and skipped
 *   kj_eval_attempt_key          the content key of an attempt
 *   kj_eval_attempt              one attempt judged, in a process of its own
 *                                (eval's child): validate, verify (every
 *                                case committed to the store before the
 *                                next), benchmark when every case passed,
 *                                the kernels-disabled layer, the profiler
 *                                layer on a GPU, the attempt's verdict.
 *
 * Failure handling (fail closed): an attempt is a clean pass only when every
 * case of verify and benchmark passed and every anti-cheat layer positively
 * passed; a layer that cannot run counts as failed, with why.  The judge's
 * own failures (the store cannot be written, a worker cannot start) end the
 * attempt as a judge error, charged to nobody, and --retry-failed runs it
 * again.
 */
#ifndef KJUDGE_EVAL_H
#define KJUDGE_EVAL_H

#include <signal.h>
#include <stdint.h>

#include <jansson.h>

#include "kjudge/config.h"
#include "kjudge/error.h"
#include "kjudge/pipeline.h"

/* One task of the suite.  Strings are owned by the set. */
struct kj_eval_task {
	char *name;              /* '19_ReLU' (KernelBench's stem), 'softmax' (op) */
	char *path;              /* the task file, absolute */
	char *rel;               /* relative to the suite: 'level1/19_ReLU.py' */
	char *cases_path;        /* the sidecar cases file, or NULL */
	int level, problem;      /* KernelBench's ids, -1 when not that layout */
	char task_sha256[65];
	char cases_sha256[65];   /* "" without a sidecar */
	char key[65];            /* the store's task key (docs/store.md): of
				  * the name, rel and the content key,
				  * sha256(task_sha256 ':' cases_sha256), or
				  * for a translation direction that of both
				  * specs and both source trees (docs/spec.md) */
	/* A translation direction of a spec suite (lib/eval/spec_suite.c):
	 * name 'SOURCE_UID:TARGET_API', path the target spec; all three NULL
	 * for a torch task. */
	char *spec_source;       /* the source spec file, absolute */
	char *spec_target;       /* the target spec file, absolute */
	char *spec_root;         /* the suite's root, absolute (spec verify's --root) */
	char *api_source;        /* the two specs' parallel_api ('cuda', 'omp') */
	char *api_target;
};

/* One file of a candidate: its name (relative, '/'-separated) and its
 * bytes (data[len] is a NUL the file does not hold).  Owned by the set. */
struct kj_eval_file {
	char *name;
	char *data;
	size_t len;
};

/* One candidate.  Strings are owned by the set. */
struct kj_eval_cand {
	int task;                /* index into set->tasks */
	char *model;
	char *attempt;           /* the attempt's label */
	long long round;         /* -1: not given */
	char *source;            /* the candidate's text (read in) */
	size_t source_len;
	struct kj_eval_file *files;   /* a translation's files (the spec kind),
				       * sorted by name, source their JSON object
				       * (what the store keeps and the key hashes);
				       * NULL for a torch candidate, whose one file
				       * is source */
	size_t n_files;
	char *origin;            /* its path, or 'FILE:LINE' */
	long long prompt_tokens, completion_tokens;   /* -1: not given */
	double generation_s;     /* < 0: not given */
	char sha256[65];         /* of the source */
};

struct kj_eval_kind;

struct kj_eval_set {
	const struct kj_eval_kind *kind;   /* the suite's kind (a row of
					    * kj_eval_kinds), set by discovery;
					    * torch until then */
	struct kj_eval_task *tasks;
	size_t n_tasks;
	struct kj_eval_cand *cands;
	size_t n_cands;
	json_t *problems;        /* [{"where", "why"}]: what was skipped */
};

/* An empty set, of the torch kind. */
void kj_eval_set_init(struct kj_eval_set *set);
void kj_eval_set_release(struct kj_eval_set *set);

/*
 * A spec suite's study scoped (lib/eval/spec_suite.c): of set's directions
 * those kept whose target API is in apis (a comma list; NULL: all), that
 * some candidate attempts, and that can run on this machine (a direction
 * runs its target's reference, and its source's when timed: CUDA needs
 * NVIDIA's driver, /dev/nvidiactl, and nvcc, looked for in here's PATH
 * and CUDA_HOME (its environ, as the CLI read it); not checked when here
 * is NULL, for a plan that other machines judge); the others leave the set with
 * their candidates.  Each direction that cannot run is named in *not_run
 * ([{"task", "why"}], new), counted with its translations in counts
 * ([0] directions outside apis, [1] not attempted, [2] not run, [3] the
 * translations left out with them).  An API of apis that no direction
 * targets: KJ_EINVAL with err filled.
 */
int kj_eval_spec_scope(struct kj_eval_set *set, const char *apis, int timed,
		       const struct kj_config *here,
		       json_t **not_run, size_t counts[4], struct kj_error *err);

/* The suite's tasks, sorted by relative path (a spec suite, a directory
 * holding manifest.jsonl and specs/: its translation directions, sorted by
 * name, see lib/eval/spec_suite.c).  A directory without a
 * task, two tasks of one name, an unreadable file: a code with err filled
 * (the user's input error). */
int kj_eval_discover_suite(const char *dir, struct kj_eval_set *set, struct kj_error *err);

/* The candidates at `path` (a directory or a .jsonl file) for the suite's
 * tasks, read as the set's kind reads them (discover the suite first; for
 * a spec suite, translations: a JSONL line's "files" {NAME: TEXT} or
 * "path" DIR, or MODEL/TASK/ATTEMPT/ directories, the candidate's files
 * its list of files and its source the files as one JSON object).  What
 * cannot be used is added to set->problems and skipped; only a path that
 * cannot be read at all, or out of memory, is an error. */
int kj_eval_discover_candidates(const char *path, struct kj_eval_set *set,
				struct kj_error *err);

/* What the judging of an eval depends on: every setting that can change a
 * verdict or a figure, so that a run with other settings never reuses a
 * result (and the same command finds its own). */
struct kj_eval_settings {
	struct kj_judge_opts judge;
	struct kj_bench_opts bench;
	const char *device;      /* "cpu", "cuda"; NULL: cuda when there is one */
	const char *python;      /* the workers' Python, or NULL */
	int no_benchmark;        /* verify only */
	int ref_compiled;        /* the reference is torch.compile(Model), verify's
				  * and the benchmark's (--baseline compile) */
	int sol_off;             /* no speed of light (KJ_SOL=off, kj_config.sol_off):
				  * no case is TimingImpossible by it */
};

/* The settings as the JSON the store keeps (runs.settings); new reference
 * or NULL (out of memory). */
json_t *kj_eval_settings_json(const struct kj_eval_settings *s);

/* attempt_key (65 bytes): sha256 of the task's key, the candidate's hash,
 * its model and attempt label, the device kind, the judge's version and
 * the settings' JSON text. */
int kj_eval_attempt_key(const struct kj_eval_task *t, const struct kj_eval_cand *c,
			const char *device_kind, const char *settings_text, char key[65],
			struct kj_error *err);

/* Where an attempt runs and what it shares with the batch. */
struct kj_eval_slot {
	const char *store_path;  /* the store (the child opens its own connection) */
	long long run_id;
	const char *work_dir;    /* the batch's directory: staged tasks, device locks */
	const char *device;      /* this attempt's device: "cpu", "cuda:N" */
	const unsigned char *batch; /* 16 bytes every attempt of the batch shares */
	const char *settings_text;  /* kj_eval_settings_json's text */
	int shared;              /* other attempts may run on this device at the
				  * same time: a side that runs out of device
				  * memory then stops the attempt uncharged
				  * (KJ_EDEVMEM), to be judged again alone */
	struct kj_eval_warm *warm; /* workers started before the attempt was
				    * known (kj_eval_warm_start), or NULL; a
				    * torch attempt takes them for its main
				    * run and its kernel layer (where there
				    * are two pairs), another kind leaves them */
};

/*
 * Warm workers (lib/eval/judge.c): a torch attempt's two workers started
 * before the attempt is known, up to their hello (Python and torch
 * imported, the device seen), in the sandbox views of a verify directory
 * made for it in slot->work_dir, which the attempt then stages its files
 * into.  A server's judging child makes them while no request waits
 * (kj_eval_pool_ops.prestart) and hands them to its attempt through
 * kj_eval_slot.warm.  On the CPU the start holds the device's lock, as a
 * cold start does (no worker starts while another attempt is timed).
 * kj_eval_warm_start: KJ_OK with *out (the caller's, released with
 * kj_eval_warm_release, also after an attempt took its workers), else the
 * code of a start that failed and *out NULL: the attempt then starts its
 * own workers, and reports such a failure as its own start's.
 */
struct kj_eval_warm;
int kj_eval_warm_start(const struct kj_config *cfg, const struct kj_eval_slot *slot,
		       struct kj_eval_warm **out, struct kj_error *err);
/* A second pair in w, for the attempt's kernel layer (the candidate's
 * kernels made no-ops), whose views bind the same directory: started when
 * the child has waited a while (a request that comes first is not made
 * to wait for it; its layer then starts its own).  KJ_OK (also when w
 * has it already or has no first pair), or the code of a start that
 * failed (w stays as it was). */
int kj_eval_warm_more(const struct kj_config *cfg, const struct kj_eval_slot *slot,
		      struct kj_eval_warm *w, struct kj_error *err);
void kj_eval_warm_release(struct kj_eval_warm *w);

/* An attempt's verdict, as committed. */
struct kj_eval_outcome {
	char status[16];         /* pass, fail, task_error, judge_error */
	int clean;
	char error_type[64];
	char category[16];
	double speedup;          /* 0 when not benchmarked */
	double judge_s;
	char message[1024];      /* why, in one line, where the judge says more than the
				  * error type (a translation's failing strategy and
				  * last lines); "" otherwise */
};

/*
 * A kind of task (lib/eval/kind.c): what eval does differently for
 * KernelBench-style tasks ("torch": a PyTorch model and a candidate module,
 * judged through the torch workers, lib/eval/judge.c) and for the
 * translation directions of a spec suite ("spec": whole programs built and
 * run by their specs, lib/eval/spec_suite.c and spec_attempt.c).  Adding a
 * kind is adding a row to kj_eval_kinds; eval asks the set's row, never
 * the tasks, what to do.
 */
enum {
	KJ_EVAL_KIND_APIS = 1 << 0,       /* --api scopes its tasks (kj_eval_spec_scope) */
	KJ_EVAL_KIND_PROGRAMS = 1 << 1,   /* an attempt runs one program, not two
					   * workers (eval's memory budget) */
};

struct kj_eval_kind {
	const char *name;                 /* "torch", "spec" */
	unsigned flags;                   /* KJ_EVAL_KIND_* */
	int bench_warmup, bench_repeats;  /* the benchmark's defaults; 0: eval's own */
	const char *cand_layout;          /* what a directory of candidates holds, for
					   * the user told that none was found */
	/* Whether the directory dir is a suite of this kind. */
	int (*detect)(const char *dir);
	/* The suite's tasks into set (kj_eval_discover_suite's contract). */
	int (*discover)(const char *dir, struct kj_eval_set *set, struct kj_error *err);
	/* The candidates of a directory (kj_eval_discover_candidates'). */
	int (*read_dir)(const char *path, struct kj_eval_set *set, struct kj_error *err);
	/* A JSONL line's candidate: what the line lacks (NULL: it has what
	 * this kind needs), then the candidate read from it for task (dir:
	 * the JSONL file's directory, where: 'FILE:LINE', extra: the line's
	 * counts) or a problem named in the set. */
	const char *(*line_lacks)(json_t *line);
	int (*read_line)(struct kj_eval_set *set, int task, const char *model,
			 const char *attempt, json_t *line, const char *dir, const char *where,
			 struct kj_eval_cand *extra);
	/* One attempt judged (kj_eval_attempt's contract). */
	int (*attempt)(const struct kj_config *cfg, const struct kj_eval_settings *s,
		       const struct kj_eval_slot *slot, const struct kj_eval_set *set,
		       size_t cand, const char *attempt_key, struct kj_eval_outcome *out,
		       struct kj_error *err);
};

/* The kinds, NULL-terminated, in the order detection asks them: the first
 * whose detect says yes is the suite's kind (torch, last, takes any
 * directory). */
extern const struct kj_eval_kind *const kj_eval_kinds[];

/* The kind of the suite directory dir (never NULL: torch at the least). */
const struct kj_eval_kind *kj_eval_kind_of(const char *dir);

/*
 * Judge candidate c on task t and commit everything to the store: the
 * attempt's row (first as 'running', its earlier rows removed), each case
 * result as it comes, the layers, the verdict ('done').  Runs in the
 * caller's process (eval forks one per attempt): it starts workers and
 * waits for them.  Returns KJ_OK with *out filled when the verdict is
 * committed (whatever it is), else a code with err filled: the verdict
 * could not be committed, and the attempt stays 'running' for the next run.
 */
int kj_eval_attempt(const struct kj_config *cfg, const struct kj_eval_settings *s,
		    const struct kj_eval_slot *slot, const struct kj_eval_set *set, size_t cand,
		    const char *attempt_key, struct kj_eval_outcome *out, struct kj_error *err);

/*
 * The batch's golden outputs on a tmpfs of their own with transparent huge
 * pages (lib/eval/batch.c): when the shared cache at shared_dir is itself in
 * memory (a tmpfs, as /dev/shm is), a tmpfs is mounted at work_dir/golden in
 * a new mount namespace of this process, which the attempts it forks
 * inherit, and the shared cache's bytecode tree is bound into it.  Writing a
 * 6.4 GB golden there takes about half the time it takes on /dev/shm's
 * 4 KiB pages; the goldens go when the batch ends (those of the shared cache
 * stay where they are, unused).  Call before any thread starts.  Returns 1
 * with dir (size bytes) set to the batch's cache, or 0 when the batch keeps
 * the shared cache (a cache on a disk, no cache, no namespace or no huge
 * pages to be had); *how names what was done.
 */
int kj_eval_batch_cache(const char *shared_dir, const char *work_dir, char *dir, size_t size,
			const char **how);

/*
 * How many workers a batch of `jobs` attempts at once may run at the same
 * time, for the memory budget (config.h's struct kj_mem_budget): a torch
 * attempt runs two, the reference's and the candidate's (its kernel layer
 * and its timing again alone run after them, with the same two gone or
 * replaced), and starts them in parallel with the other attempts' timed
 * phases on a GPU; on the CPU it takes the device, the whole machine,
 * before they start, so one attempt's two run at a time.  An attempt of a
 * suite of specs runs one program at a time (its build, its run, a
 * reference's check).  At least 1.
 */
int kj_eval_workers_at_once(int jobs, int on_cpu, int spec_suite);

/* Unmount what kj_eval_batch_cache mounted at dir (before its directory is
 * removed: the bytecode tree bound into it is the shared cache's). */
void kj_eval_batch_cache_end(const char *dir);

/*
 * The batch runner (pool.c): a batch's attempts judged at most `jobs` at
 * once, each in a child process of its own, as git's run_processes_parallel
 * runs commands: the caller says which attempt comes next, judges one in
 * the child, and hears of a start that failed and of each attempt that
 * ended.  The attempts are spread over the devices, each to the one with
 * the fewest running.  The child hands its verdict back as a struct
 * kj_eval_result written whole to a pipe; the parent reads it whole and
 * checks its size and mark, so a child that died midway is told from one
 * that answered.
 */
#define KJ_EVAL_RESULT_MAGIC 0x6b6a7276u /* "kjrv" */

struct kj_eval_result {
	uint32_t magic;            /* KJ_EVAL_RESULT_MAGIC */
	uint32_t size;             /* sizeof(struct kj_eval_result) */
	int code;                  /* KJ_OK: outcome holds the committed verdict;
				    * KJ_ENODEVICE: the device is not there;
				    * else the verdict could not be committed */
	struct kj_eval_outcome outcome;
	char error[KJ_ERROR_MSG_MAX]; /* why, when code is not KJ_OK */
};

struct kj_eval_pool_ops {
	/* The next attempt to start into *cand: 1, or 0 when none is left;
	 * -1: none now, but more may come (a server's queue): the pool asks
	 * again within a tenth of a second, and ends only on 0. */
	int (*next)(void *ctx, size_t *cand);
	/* In the child, with SIGINT, SIGTERM, SIGHUP and SIGCHLD at their
	 * defaults and the signal mask as the pool found it: judge cand on
	 * device into *r (code, outcome, error).  The pool then writes r and
	 * ends the child.  warm: what prestart made in this child (NULL in a
	 * child forked for cand, or when prestart made nothing); judge owns
	 * it. */
	void (*judge)(void *ctx, size_t cand, const char *device, void *warm,
		      struct kj_eval_result *r);
	/* cand could not be started (why: "pipe: ...", "fork: ..."); the
	 * pool starts no more and stops the batch. */
	void (*start_failed)(void *ctx, size_t cand, const char *why);
	/* cand's child ended with wait status `status`: r its result when one
	 * came whole, else NULL (killed, or ended before it answered).
	 * Nonzero stops the batch. */
	int (*finished)(void *ctx, size_t cand, const struct kj_eval_result *r, int status);
	/* Before each wait, at least once a second (a progress display);
	 * may be NULL. */
	void (*tick)(void *ctx);
	/* cand's child started as process pid (the leader of its own
	 * process group once it runs: a server's cancel kills the group);
	 * may be NULL. */
	void (*started)(void *ctx, size_t cand, pid_t pid);
	/* Warm children (both NULL: none, every child is forked for its
	 * attempt).  While next() may have more, every free slot holds a
	 * child forked before its attempt is known: prestart, in it (signals
	 * as for judge), makes what can be made ahead on device (a server's
	 * workers with torch imported) and returns it (NULL: nothing); the
	 * child then waits for the attempt next() gives, judged with it.  A
	 * child retired without one (next() has no more, or it waited
	 * warm_idle_s) hands it to release_warm and ends. */
	void *(*prestart)(void *ctx, const char *device);
	void (*release_warm)(void *ctx, void *warm);
	/* May be NULL: once a warm child has waited a second unasked, more
	 * made ahead into warm (a server's second pair of workers, for the
	 * kernel layer); an attempt given meanwhile waits for it. */
	void (*prestart_more)(void *ctx, void *warm, const char *device);
};

struct kj_eval_pool {
	int jobs;                        /* at most this many at once, >= 1 */
	const char (*devices)[16];       /* "cpu", "cuda", "cuda:N" */
	int n_devices;                   /* >= 1 */
	/* Set by the caller's signal handler: the batch stops at once (no
	 * handler of the pool's own takes SIGINT from the caller). */
	const volatile sig_atomic_t *stop;
	/* A warm child that waited this long for an attempt is retired and
	 * a fresh one forked (0: 600 s). */
	double warm_idle_s;
};

/*
 * Run the batch until next() has no more and every child has ended, or it
 * is stopped (*stop, a failed start, finished() nonzero): then the
 * children still running get SIGTERM and are reaped, and their attempts
 * are not reported.  SIGCHLD is blocked but while the pool sleeps, and
 * handled; both are as they were when it returns.  KJ_OK when the batch
 * ran to its end, KJ_EINTR when stopped, KJ_ENOMEM.
 */
int kj_eval_pool_run(const struct kj_eval_pool *p, const struct kj_eval_pool_ops *ops,
		     void *ctx, struct kj_error *err);

/* A list of GPUs, "0,1,3", into devices "cuda:0", ... (at most max, each
 * at most once).  KJ_OK, or KJ_EINVAL saying what is wrong (services.c). */
int kj_eval_parse_gpus(const char *list, char devs[][16], int max, int *n, struct kj_error *err);

/* The device a batch runs on when none is named: "cuda" where NVIDIA's
 * driver is loaded, else "cpu" (as the runner decides, near enough,
 * without starting torch). */
const char *kj_eval_default_device(void);

/* --- a study in its store (lib/eval/study.c) --------------------------------------------
 *
 * What `kjudge eval` does between reading its options and printing its
 * summary: kj_eval_study_open (the store, locked against a second eval),
 * kj_eval_study_begin (the batch's secret bytes, the run's row with the
 * suite's tasks, every attempt's key, a shard's attempts, which of them are
 * left to judge), kj_eval_study_run (those through the batch runner),
 * kj_eval_study_end (the run's row finished), kj_eval_study_close.  The
 * library prints nothing: the run says what happens through its hooks.
 */

/* Attempts counted: those of the study (of the shard), and how they ended
 * in earlier runs (kj_eval_study_begin); the command adds this run's. */
struct kj_eval_counts {
	size_t total, done, passed, clean, failed, errors, skipped;
	size_t judge_errors;          /* earlier runs' judge errors, not retried */
};

struct kj_eval_study {
	struct kj_store *store;       /* owned: open for writing */
	int lock;                     /* owned: the store's eval lock, or -1 */
	long long run_id;
	unsigned char batch[16];      /* the batch's secret bytes */
	char batch_hex[33];
	char (*keys)[65];             /* owned: per candidate, its attempt key */
	size_t *todo, n_todo;         /* owned: the candidates left to judge */
	unsigned char *in_shard;      /* owned: per candidate (a shard), else NULL */
	struct kj_eval_counts counts;
};

/* What kj_eval_study_begin records and selects by: borrowed. */
struct kj_eval_study_opts {
	int argc;
	char **argv;                  /* the command line (the run's row) */
	const char *suite, *cands;    /* as given (the run's row) */
	const char *settings_text;    /* kj_eval_settings_json's text */
	const char *device;           /* the device kind: cpu, cuda */
	const char *gpus;             /* --gpus as given, or NULL */
	const char *shard;            /* "I/K", or NULL */
	int shard_i, shard_k;         /* shard_k 0: the whole study */
	const struct kj_eval_plan *plan; /* the shard's plan, or NULL */
	int retry;                    /* run again earlier runs' judge errors */
};

/* A task's row of the store (store.h's struct kj_store_task) with its
 * files read (64 MiB each at most): KJ_OK, the row's source and cases
 * the caller's to free with kj_eval_task_row_release; else the read's
 * code, nothing left to free. */
struct kj_store_task;
int kj_eval_task_row(const struct kj_eval_task *t, struct kj_store_task *r,
		     struct kj_error *err);
void kj_eval_task_row_release(struct kj_store_task *r);

void kj_eval_study_init(struct kj_eval_study *st);
void kj_eval_study_close(struct kj_eval_study *st);

/* The store at db_path, created when missing, and its eval lock (waited
 * for up to wait_s seconds).  The codes of kj_store_open and
 * kj_eval_lock_store (KJ_EBUSY: another eval holds it). */
int kj_eval_study_open(struct kj_eval_study *st, const char *db_path, int wait_s,
		       struct kj_error *err);

/* See above.  KJ_OK; KJ_EINVAL (a plan's batch that is not the store's);
 * a suite's file that cannot be read (nothing written); the store's codes;
 * KJ_ENOMEM. */
int kj_eval_study_begin(struct kj_eval_study *st, const struct kj_config *cfg,
			const struct kj_eval_set *set, const struct kj_eval_study_opts *o,
			struct kj_error *err);

/* The run's row finished (runs.finished_at). */
int kj_eval_study_end(struct kj_eval_study *st, struct kj_error *err);

/* How the study's attempts are run: set by the caller, except the last
 * two. */
struct kj_eval_run {
	const struct kj_config *cfg;
	const struct kj_eval_settings *s;
	const struct kj_eval_set *set;
	struct kj_eval_slot slot;     /* store_path, work_dir, settings_text;
				       * the rest is the run's */
	int jobs;
	const char (*devices)[16];
	int n_devices;
	const volatile sig_atomic_t *stop; /* the caller's signal flag */
	const char *publish_dir;      /* a shard publishing (--publish), or NULL */
	int shard_i;
	/* Out: a start failed (the batch stopped); the device is not there
	 * (the batch stopped, nothing charged: why). */
	int start_failed;
	char no_device[KJ_ERROR_MSG_MAX];
};

/* What the run says, in the parent (child: in each judging child before it
 * judges; tick may be NULL). */
struct kj_eval_run_hooks {
	void (*child)(void *ctx);
	/* cand's verdict, committed (r->code KJ_OK), or why it was not (r
	 * NULL: its judge was killed or ended early; status its wait status). */
	void (*done)(void *ctx, size_t cand, const struct kj_eval_result *r, int status);
	/* cand's device memory ran out while others shared the device: set
	 * aside, uncharged, for the pass alone. */
	void (*aside)(void *ctx, size_t cand, const char *why);
	/* The pass alone begins, with n attempts. */
	void (*again)(void *ctx, size_t n);
	/* A start failed: the batch stops. */
	void (*start_failed)(void *ctx, const char *why);
	/* A failure the run goes on from (a shard's store not published). */
	void (*warn)(void *ctx, const char *why);
	void (*tick)(void *ctx);
};

/* The study's attempts left (st->todo) judged; KJ_OK, or KJ_ENOMEM. */
int kj_eval_study_run(const struct kj_eval_study *st, struct kj_eval_run *run,
		      const struct kj_eval_run_hooks *h, void *ctx, struct kj_error *err);

/* --- the tasks' audit (lib/eval/audit.c) ------------------------------------------------
 *
 * Before a batch judges a task's candidates, the task's audit (kjudge/
 * audit.h, docs/AUDIT.md): its canaries judged once, and recorded in the
 * store (kj_store_audit_put) by the task's key and the audit's key.  An
 * audit the store holds proven under the same keys is not run again; the
 * audit's own cache (KJ_CACHE_DIR/audit/) answers before its canaries
 * run.  One that cannot be established is recorded as not proven, with
 * why; it never touches a candidate's verdict.
 */

/* What the study says of one task's audit, borrowed for the call. */
struct kj_eval_audit_said {
	const char *task;             /* the task's name */
	const char *verdict;          /* "weak", "strong", "not_proven" */
	int stored;                   /* taken from the store: nothing run */
	int cached;                   /* read from the audit's cache */
	const json_t *reasons;        /* the audit's reasons ([TEXT]), or NULL */
	const char *why;              /* why it was not established, or NULL */
};

struct kj_eval_audit_hooks {
	void (*task)(void *ctx, const struct kj_eval_audit_said *s);
};

struct kj_eval_audit_counts {
	size_t tasks, weak, not_proven;
	size_t stored;                /* taken from the store */
	size_t canaries;              /* canaries judged now (none from a cache) */
};

/* The audit of every task of set that st->todo holds a candidate of, in
 * the suite's order, under o (for a suite of torch tasks; a suite of
 * specs has nothing to audit), each said to h->task and counted in *n.
 * KJ_OK; KJ_EINTR when interrupted; else the store's codes (an audit that
 * cannot be recorded), err filled. */
struct kj_audit_opts;
int kj_eval_study_audit(struct kj_eval_study *st, const struct kj_config *cfg,
			const struct kj_eval_set *set, const struct kj_audit_opts *o,
			const struct kj_eval_audit_hooks *h, void *ctx,
			struct kj_eval_audit_counts *n, struct kj_error *err);

/* --- shards (lib/eval/plan.c) ------------------------------------------------------------
 *
 * A cluster run cuts an evaluation into shards, each judged on its own node
 * into a store of its own (docs/slurm.md).  Which attempts a shard holds is
 * written once, in a plan: their content keys (kj_eval_attempt_key), the
 * settings' text and the device kind those keys were made with, and the
 * batch's bytes, so every shard judges on the inputs the others do.
 */

/*
 * Assign the attempts todo[0..n) (indices into set->cands) to k shards:
 * shard[i] for todo[i].  Tasks are kept whole where they fit (a task's
 * goldens and baseline are made once per shard that holds it); a task of
 * more than ceil(n / k) attempts is cut into pieces of at most that many;
 * the pieces, largest first, go to the least-loaded shard.  Deterministic:
 * the same set and k give the same shards on every node.
 */
int kj_eval_shard_assign(const struct kj_eval_set *set, const size_t *todo, size_t n, int k,
			 int *shard, struct kj_error *err);

/* The most shards an evaluation is cut into. */
#define KJ_EVAL_SHARDS_MAX 100000

/* "I/K" (0 <= I < K <= KJ_EVAL_SHARDS_MAX) into *i and *k: KJ_OK, or
 * KJ_EINVAL naming the text. */
int kj_eval_shard_parse(const char *text, int *i, int *k, struct kj_error *err);

/* A plan: owned strings and arrays, released with kj_eval_plan_release. */
struct kj_eval_plan {
	char id[17];             /* 16 hex digits of the SHA-256 of the rest */
	int shards;
	size_t n;
	char (*keys)[65];        /* the attempts' keys ... */
	int *shard;              /* ... and the shard of each */
	char batch[33];          /* the batch's 16 bytes, hex */
	char *settings;          /* kj_eval_settings_json's text */
	char *device;            /* the device kind: cpu, cuda */
	char *suite, *candidates; /* where they were found, or NULL */
};

void kj_eval_plan_init(struct kj_eval_plan *p);
void kj_eval_plan_release(struct kj_eval_plan *p);

/*
 * Which candidates of set are shard i of k's: in[c] = 1, else 0 (in has
 * set->n_cands bytes).  With a plan, the attempts it gives shard i, each
 * of which must be among set's (keys[c]: candidate c's attempt key), else
 * KJ_EINVAL: the suite, the candidates or the settings changed since the
 * plan was made.  Without one (plan NULL), kj_eval_shard_assign over
 * every candidate.  KJ_OK, KJ_EINVAL, or KJ_ENOMEM.
 */
int kj_eval_shard_select(const struct kj_eval_set *set, const char (*keys)[65],
			 const struct kj_eval_plan *plan, int i, int k, unsigned char *in,
			 struct kj_error *err);

/*
 * What a shard leaves in its publishing directory DIR (publish.c), for
 * the judge that follows it (docs/slurm.md):
 * kj_eval_shard_publish   the store as DIR/shard-I.db, atomically
 *                         (kj_store_publish);
 * kj_eval_shard_status    DIR/shard-I.json, its ending (written, atomically,
 *                         only when it ended by itself: what tells --wait
 *                         the shard is done, and how): the exit code, the
 *                         counts, the node, the time and Slurm's ids;
 * kj_eval_shard_clean     what a publishing killed midway left
 *                         (shard-I.db.tmp-PID): only this shard writes
 *                         those, and it runs once at a time.
 * KJ_OK or a code with err naming the file.
 */
struct kj_store;
int kj_eval_shard_publish(struct kj_store *store, const char *dir, int i, struct kj_error *err);
int kj_eval_shard_status(const struct kj_config *cfg, const char *dir, int i, int k,
			 const char *plan_id, int exit_code, size_t total, size_t done,
			 struct kj_error *err);
void kj_eval_shard_clean(const char *dir, int i);

/*
 * The store's flock, one eval per store: a second would take the first's
 * running attempts for ones a killed judge left, and judge them twice
 * (SQLite's own locks are fcntl's, apart).  Tried for wait_s seconds (a
 * requeued shard can start while the children of its killed run are still
 * going).  The descriptor, close-on-exec, held for the run (children
 * inherit it, and the lock dies with the last of them), or -1 with err:
 * KJ_EBUSY (another eval holds it) or the open's error.
 */
int kj_eval_lock_store(const char *db_path, int wait_s, struct kj_error *err);

/* The plan of the attempts todo[0..n), keys[todo[i]] each, over `shards`
 * shards (fewer when there are fewer attempts; at least 1). */
int kj_eval_plan_make(const struct kj_eval_set *set, const size_t *todo, size_t n,
		      const char (*keys)[65], int shards, const char *settings_text,
		      const char *device, const char batch_hex[33], const char *suite,
		      const char *candidates, struct kj_eval_plan *p, struct kj_error *err);

/* The plan as the JSON of its file (new reference), or NULL when out of
 * memory. */
json_t *kj_eval_plan_json(const struct kj_eval_plan *p);

/* Read a plan file: one that is not a plan, or whose id does not match its
 * contents (edited by hand), is refused (KJ_EINVAL). */
int kj_eval_plan_load(const char *path, struct kj_eval_plan *p, struct kj_error *err);

/* --- Slurm (lib/eval/slurm.c) ---------------------------------------------------------- */

/* What the shards' batch script runs.  Borrowed strings; paths absolute. */
struct kj_eval_slurm_job {
	const char *kjudge;      /* the judge's binary */
	const char *suite, *cands;
	const char *plan_path;   /* DIR/plan.json */
	const char *shards_dir;  /* where shards publish (--publish) */
	const char *logs_dir;    /* the array tasks' output */
	const char *plan_id;
	int shards;
	const char *const *eval_args; /* the settings' flags, as words */
	int n_eval_args;
};

/* The batch script (sh) of `sbatch --array=0-(K-1)`: each array task runs
 * `kjudge eval ... --shard $SLURM_ARRAY_TASK_ID/K --plan ... --publish ...`
 * into a store under ${KJ_SHARD_DIR:-${TMPDIR:-/tmp}} on its node.  Every
 * shell word single-quoted; the logs' directory in its #SBATCH --output
 * line single-quoted for sbatch's reader, a quote escaped and each '%'
 * doubled for Slurm's filename patterns.  A word with a newline, or a logs
 * directory kj_eval_slurm_path_ok refuses, is KJ_EINVAL.  The caller frees
 * the text; NULL with err filled. */
char *kj_eval_slurm_script(const struct kj_eval_slurm_job *j, struct kj_error *err);

/* Whether path can be written into an #SBATCH line (the logs' directory
 * of the shards, under --slurm-dir or FILE.slurm): no newline, and no
 * backslash (sbatch would read it as an escape, Slurm as "replace no
 * filename pattern").  KJ_OK, or KJ_EINVAL with err saying why. */
int kj_eval_slurm_path_ok(const char *path, struct kj_error *err);

/* One array task (or job) as squeue lists it. */
struct kj_eval_slurm_task {
	long long job;           /* the (array) job's id */
	int task;                /* the array index; -1 for a job of no array */
	char state[32];          /* PENDING, RUNNING, COMPLETING, ... */
};

/* The lines of `squeue -h -r -o '%i %T'` ("123_4 RUNNING", "123_[5-7,9%2]
 * PENDING", "124 PENDING") into *out (n entries, the caller's to free; a
 * pending range expanded).  A line of another shape is KJ_EINVAL. */
int kj_eval_slurm_parse_queue(const char *text, struct kj_eval_slurm_task **out, size_t *n,
			      struct kj_error *err);

#endif /* KJUDGE_EVAL_H */
