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
	long long mem_bytes;    /* memory (cgroup); default half of RAM */
	long long file_bytes;   /* the largest file it writes (RLIMIT_FSIZE);
				 * default a quarter of RAM */
	long procs;             /* processes and threads; default 1024 */
	long nofile;            /* open files; default 4096 */
	long long tmp_bytes;    /* its private /tmp and /dev/shm; default 256 MiB */
	size_t output_bytes;    /* what one call may print on stdout, and on
				 * stderr (a timed request of N calls: N
				 * times as much); 256 KiB */
};

struct kj_config {
	/* The workers' Python: a name looked up in PATH, or a path.  Where it
	 * came from, for messages ("--python", "$KJ_PYTHON", "the default"). */
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
	/* benchmark's default --time_budget in seconds ($KJ_TIME_BUDGET);
	 * 0: the built-in 10. */
	double time_budget_s;
	/* Where a run makes its scratch directory, and whether it may mount a
	 * private tmpfs there. */
	const char *scratch_parent;
	int scratch_private;
	/* Where the secret seed key lives. */
	const char *state_dir;
	/* Candidates in the sandbox (1), or as plain processes (0: machines
	 * that cannot; kjudge doctor says). */
	int sandbox;
	struct kj_limits limits;
	/* Comparator threads; 0: one per CPU (at most 16). */
	int threads;
	/* Which outputs are compared where they were made ($KJ_DEVICE_COMPARE,
	 * runner.h's KJ_DEVOUT_*): 1 "auto" (the default) large CUDA tensors,
	 * 0 "off" none (every output through host memory), 2 "all" every
	 * top-level tensor, CPU ones too (the same path, tested on the CPU). */
	int device_outputs;
	/* The judge's environment, NULL-terminated: what a worker may inherit
	 * of it (PATH, LD_LIBRARY_PATH, CUDA_VISIBLE_DEVICES, ...) is taken
	 * from here, never from getenv. */
	char *const *environ;
};

/* The machine's defaults; strings NULL but for python ("python3") and the
 * paths under $HOME-less defaults (/dev/shm or /tmp).  env is the
 * environment to hand on (may be NULL: an empty one). */
void kj_config_init(struct kj_config *c, char *const *env);

/* The value of `name` in c->environ, or NULL. */
const char *kj_config_env(const struct kj_config *c, const char *name);

/* The limits as a JSON object (a new reference; NULL when out of memory):
 * {cpu_s, memory_bytes, file_bytes, procs, open_files, tmp_bytes,
 *  output_bytes_per_call (per stream)}. */
json_t *kj_limits_json(const struct kj_limits *l);

#endif /* KJUDGE_CONFIG_H */
