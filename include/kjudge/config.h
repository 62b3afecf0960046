/*
 * kjudge/config.h - the context a run is judged in: where things are, what
 * is allowed, what the machine's defaults are.
 *
 * The library reads no configuration of its own: the CLI builds a struct
 * kj_config from its flags and the environment (KJ_PYTHON, KJ_CACHE_DIR,
 * KJ_LIMIT_MEM_MB, ...: docs/cli.md lists them; a value that does not parse
 * or is out of range is an exit-2 error naming the variable) and passes it
 * down.  kj_config_init() fills the machine's defaults, which the CLI then
 * overrides.  Every result records the limits in force (kj_limits_json).
 *
 * Ownership: the strings are the caller's and must outlive every use of
 * the configuration; the library never frees or changes them.
 */
#ifndef KJUDGE_CONFIG_H
#define KJUDGE_CONFIG_H

#include <stddef.h>

#include <jansson.h>

/* What a candidate's worker may use.  0 means no limit where the field
 * says it may be 0. */
struct kj_limits {
	double cpu_s;           /* CPU seconds (RLIMIT_CPU); default 4 h */
	long long mem_bytes;    /* memory (cgroup); kj_config_init's default
				 * half of RAM, the CLI's the machine's share
				 * of one worker (struct kj_mem_budget) */
	long long file_bytes;   /* the largest file it writes (RLIMIT_FSIZE);
				 * default a quarter of RAM */
	long procs;             /* processes and threads; default 1024 */
	long nofile;            /* open files; default 4096 */
	long long tmp_bytes;    /* its private /tmp and /dev/shm; default 256 MiB */
	size_t output_bytes;    /* what one call may print on stdout, and on
				 * stderr (a timed request of N calls: N
				 * times as much); 256 KiB */
};

/*
 * The memory budget: the default memory limit of a worker, for the machine
 * and for everything that runs at once.  Every worker that may run at the
 * same time (two for verify and benchmark, the reference's and the
 * candidate's; under eval -j N as kj_eval_workers_at_once counts them) gets
 * the same share of what is available, less what the judge keeps for
 * itself (its processes, the goldens and outputs it maps, its scratch):
 *
 *   headroom   = max(1 GiB, available / 8)
 *   per_worker = (available - headroom) / workers, in whole MiB,
 *                at least KJ_MEM_WORKER_MIN
 *
 * so that workers x per_worker + headroom <= available, unless the floor
 * is all that is left.  `available` is MemAvailable of /proc/meminfo, or
 * the memory limit of the judge's own cgroup (or of one above it) when
 * that is smaller.  A limit the user gave ($KJ_LIMIT_MEM_MB) wins; the
 * budget then says whether it oversubscribes the machine, for the command
 * to warn (the library prints nothing).
 */
#define KJ_MEM_WORKER_MIN (256LL << 20)
#define KJ_MEM_HEADROOM_MIN (1LL << 30)

struct kj_mem_budget {
	long long available;    /* bytes: what the machine has for the run */
	const char *source;     /* "MemAvailable", "cgroup" (the judge's
				 * cgroup's limit is smaller) or "RAM" (neither
				 * could be read: half of the RAM) */
	int workers;            /* workers that may run at once */
	long long headroom;     /* kept for the judge */
	long long per_worker;   /* the formula's limit */
	long long limit;        /* the limit in force: per_worker, or the user's */
	int user_limit;         /* the limit is the user's ($KJ_LIMIT_MEM_MB) */
	int oversubscribed;     /* workers x limit + headroom > available */
	int judge_oom_score_adj; /* the judge's own, after kj_proc_protect_judge */
};

/* max(KJ_MEM_HEADROOM_MIN, available / 8). */
long long kj_mem_headroom(long long available);

/* The formula's limit of one of `workers` workers (at least 1): see above. */
long long kj_mem_worker_limit(long long available, int workers, long long headroom);

/*
 * Fill b for `workers` workers on `available` bytes (from `source`, static
 * storage): the formula's limit, and the one in force, which is user_bytes
 * when it is > 0 (the user's).  Pure: the same arguments give the same
 * budget.
 */
void kj_mem_budget_make(struct kj_mem_budget *b, long long available, const char *source,
			int workers, long long user_bytes);

/* The budget as JSON (a new reference; NULL when out of memory):
 * {available_bytes, source, workers, headroom_bytes, per_worker_bytes,
 *  limit_bytes, user_limit, oversubscribed, judge_oom_score_adj}. */
json_t *kj_mem_budget_json(const struct kj_mem_budget *b);

/* MemAvailable of /proc/meminfo's text, in bytes; -1 when it is not there. */
long long kj_meminfo_available(const char *text);

/*
 * What this machine has for a run, in bytes, with *source saying where the
 * figure came from (see struct kj_mem_budget): MemAvailable, or the
 * judge's cgroup's limit (kj_cgroup_mem_limit) when smaller, or half of
 * the RAM when /proc/meminfo cannot be read.
 */
long long kj_mem_available(const char **source);

struct kj_config {
	/* The workers' Python: a name looked up in PATH, or a path.  Where it
	 * came from, for messages ("--python", "$KJ_PYTHON", or the default's
	 * reason: "the .venv of the checkout kjudge was built in", ...). */
	const char *python;
	const char *python_source;
	/* kjudge_worker.py; NULL: found beside the kjudge binary or in
	 * ../libexec/kjudge. */
	const char *worker;
	/* The golden cache's directory; NULL: no cache.  Its size cap in
	 * bytes (0 keeps nothing but the entries in use); -1: a quarter of
	 * its file system. */
	const char *cache_dir;
	long long cache_max_bytes;
	/* A second golden cache, read and never written ($KJ_CACHE_SHARED):
	 * one on a cluster's shared file system that the shards of a study
	 * find goldens in (docs/slurm.md); NULL: none. */
	const char *cache_shared_dir;
	/* The torch extensions the judge built (lib/runner/extcache.c):
	 * KJ_CACHE_DIR's ext/, kept when eval gives its batch a golden cache
	 * of its own, so that every run on the machine shares them; NULL:
	 * none (KJ_CACHE_DIR=off), every build in the candidate's process. */
	const char *build_cache_dir;
	/* benchmark's default --time_budget in seconds ($KJ_TIME_BUDGET);
	 * 0: the built-in 10. */
	double time_budget_s;
	/* How benchmark's timed rounds run ($KJ_TIMED_ROUNDS; benchmark's
	 * --timed_rounds): KJ_ROUNDS_AUTO, _QUEUED or _SYNCED (pipeline.h). */
	int timed_rounds;
	/* No speed of light in benchmark records ($KJ_SOL=off; benchmark's
	 * --no-sol): every sol_ms null, no TimingImpossible for beating it. */
	int sol_off;
	/* Where the speed of light and the device's peak rates are kept when
	 * not in cache_dir (eval gives its batch a golden cache of its own:
	 * this is KJ_CACHE_DIR, which outlives the batch); NULL: cache_dir. */
	const char *sol_cache_dir;
	/* Where a run makes its scratch directory, and whether it may mount a
	 * private tmpfs there. */
	const char *scratch_parent;
	int scratch_private;
	/* Where the secret seed key lives. */
	const char *state_dir;
	/* Candidates in the sandbox (1), or as plain processes (0: machines
	 * that cannot; kjudge doctor says). */
	int sandbox;
	/* Sandboxed torch workers forked from a template that imported torch
	 * once (1, the default; $KJ_TEMPLATE "on"), or each started on its own
	 * (0, "off"): the verdicts are the same (spawn.h, "Templates"). */
	int worker_template;
	struct kj_limits limits;
	/* How limits.mem_bytes was made (the CLI fills it). */
	struct kj_mem_budget mem;
	/* Comparator threads; 0: one per CPU (at most 16). */
	int threads;
	/* Which outputs are compared where they were made ($KJ_DEVICE_COMPARE,
	 * runner.h's KJ_DEVOUT_*): 1 "auto" (the default) large CUDA tensors,
	 * 0 "off" none (every output through host memory), 2 "all" every
	 * top-level tensor, CPU ones too (the same path, tested on the CPU). */
	int device_outputs;
	/* eval's rhythms and places: how often --publish publishes the
	 * shard's store ($KJ_PUBLISH_S, seconds; default 30, 0 after every
	 * attempt), how often --slurm --wait asks squeue ($KJ_SLURM_POLL_S,
	 * seconds; default 10, at least 0.05), how long one of Slurm's
	 * commands (sbatch, squeue, sacct) may take before it is killed and
	 * following stops ($KJ_SLURM_CMD_S, seconds; default 300), and where
	 * the batch's own directory goes ($TMPDIR; default /tmp). */
	double publish_s;
	double slurm_poll_s;
	double slurm_cmd_s;
	const char *tmp_dir;
	/* Whether eval audits its tasks before judging their candidates
	 * ($KJ_AUDIT "on", the default, or "off"; eval --no-audit). */
	int eval_audit;
	/* Where Slurm runs this process, recorded with a shard's run and its
	 * status file: SLURM_JOB_ID, SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID,
	 * SLURM_RESTART_COUNT, SLURMD_NODENAME, SLURM_CLUSTER_NAME; each NULL
	 * when unset or empty. */
	struct {
		const char *job_id, *array_job_id, *array_task_id, *restart_count,
			*nodename, *cluster_name;
	} slurm;
	/* The judge's environment, NULL-terminated: what a worker may inherit
	 * of it (PATH, LD_LIBRARY_PATH, CUDA_VISIBLE_DEVICES, ...) is taken
	 * from here, never from getenv. */
	char *const *environ;
};

/* The machine's defaults; strings NULL but for python (the interpreter
 * `make install` recorded, else the .venv of the checkout kjudge was built
 * in, else "python3"; python_source says which) and the paths under
 * $HOME-less defaults (/dev/shm or /tmp).  env is the
 * environment to hand on (may be NULL: an empty one). */
void kj_config_init(struct kj_config *c, char *const *env);

/* The value of `name` in c->environ, or NULL. */
const char *kj_config_env(const struct kj_config *c, const char *name);

/* The limits as a JSON object (a new reference; NULL when out of memory):
 * {cpu_s, memory_bytes, file_bytes, procs, open_files, tmp_bytes,
 *  output_bytes_per_call (per stream)}. */
json_t *kj_limits_json(const struct kj_limits *l);

#endif /* KJUDGE_CONFIG_H */
