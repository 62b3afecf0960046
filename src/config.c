/*
 * config.c - the run's context (struct kj_config) from the command line and
 * the environment: the one place where kjudge reads its environment
 * variables.  A value that does not parse, or is out of range, is an exit-2
 * error that names the variable; an unset or empty variable means the
 * default.
 *
 *   KJ_PYTHON         the workers' Python (a name in PATH or a path)
 *   KJ_CACHE_DIR      the golden cache, or "off"; default
 *                     /dev/shm/kjudge-cache-UID, else ~/.cache/kjudge
 *   KJ_CACHE_MAX_MB   its cap; default a quarter of its file system
 *   KJ_CACHE_SHARED   a golden cache read, never written (a cluster's
 *                     shared one); default none
 *   KJ_SCRATCH_DIR    where a run's scratch directory goes; default
 *                     /dev/shm, else $TMPDIR, else /tmp
 *   KJ_SCRATCH        "private" (a tmpfs of the run's own where allowed,
 *                     the default) or "shared" (the plain directory)
 *   KJ_STATE_DIR      the seed key's directory; default
 *                     $XDG_STATE_HOME/kjudge, else ~/.local/state/kjudge
 *   KJ_SANDBOX        "on" (the default) or "off"
 *   KJ_TEMPLATE       "on" (the default) or "off": sandboxed torch workers
 *                     forked from a template that imported torch once
 *   KJ_LIMIT_CPU_S, KJ_LIMIT_MEM_MB, KJ_LIMIT_FILE_MB, KJ_LIMIT_PROCS,
 *   KJ_LIMIT_NOFILE, KJ_LIMIT_TMP_MB,
 *   KJ_LIMIT_OUTPUT_KB                  the candidate's limits (memory's
 *                     default: the machine's share of a worker,
 *                     kj_cli_mem_budget)
 *   KJ_THREADS        comparator threads (0: one per CPU)
 *   KJ_DEVICE_COMPARE "auto" (large CUDA outputs compared on the device,
 *                     the default), "off", "all" (every tensor output)
 *   KJ_TIME_BUDGET    benchmark's default --time_budget, in seconds
 *   KJ_SOL            "on" (the default) or "off": the speed of light of
 *                     benchmark's and eval's records (benchmark's --no-sol)
 *   KJ_PUBLISH_S      eval --publish's period, 0 to 86400 seconds
 *   KJ_SLURM_POLL_S   eval --slurm --wait's period, 0 to 86400 seconds
 *                     (below 0.05: 0.05)
 *   KJ_SLURM_CMD_S    the deadline of one of Slurm's commands (sbatch,
 *                     squeue, sacct), 0.1 to 86400 seconds
 *   KJ_AUDIT          "on" (the default) or "off": whether eval audits its
 *                     tasks (off: as eval --no-audit)
 *   TMPDIR            where eval's batch directory goes; default /tmp
 *   SLURM_JOB_ID, SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID,
 *   SLURM_RESTART_COUNT, SLURMD_NODENAME, SLURM_CLUSTER_NAME
 *                     where Slurm runs a shard (recorded, never acted on)
 *   PATH, CUDA_HOME   where eval looks for nvcc (through cfg->environ)
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kjudge/config.h"
#include "kjudge/pipeline.h"
#include "kjudge/proc.h"
#include "cli.h"
#include "base/banned.h"

extern char **environ;

static char cache_buf[PATH_MAX], state_buf[PATH_MAX], build_buf[PATH_MAX + 8];

/* An environment variable that is set and not empty, or NULL. */
static const char *var(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

static int bad_var(const struct kj_cli_command *cmd, const char *name, const char *v,
		   const char *want)
{
	return kj_cli_error(cmd, "environment variable %s='%s' is not valid: it wants %s",
			    name, v, want);
}

/* A whole number from min to max; 0 ok (dflt kept when unset), 2 bad. */
static int var_ll(const struct kj_cli_command *cmd, const char *name, long long min,
		  long long max, long long *out)
{
	const char *v = var(name);
	char *end, want[96];
	long long x;

	if (!v)
		return 0;
	errno = 0;
	x = strtoll(v, &end, 10);
	if (errno || end == v || *end || x < min || x > max) {
		snprintf(want, sizeof(want), "a whole number from %lld to %lld", min, max);
		return bad_var(cmd, name, v, want);
	}
	*out = x;
	return 0;
}

static int var_double(const struct kj_cli_command *cmd, const char *name, double min,
		      double max, double *out)
{
	const char *v = var(name);
	char *end, want[96];
	double x;

	if (!v)
		return 0;
	errno = 0;
	x = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(x) || x < min || x > max) {
		snprintf(want, sizeof(want), "a number from %g to %g", min, max);
		return bad_var(cmd, name, v, want);
	}
	*out = x;
	return 0;
}

/* One of two words; *out = 1 for the first. */
static int var_choice(const struct kj_cli_command *cmd, const char *name, const char *yes,
		      const char *no, int *out)
{
	const char *v = var(name);
	char want[96];

	if (!v)
		return 0;
	if (!strcmp(v, yes) || !strcmp(v, no)) {
		*out = !strcmp(v, yes);
		return 0;
	}
	snprintf(want, sizeof(want), "'%s' or '%s'", yes, no);
	return bad_var(cmd, name, v, want);
}

int kj_cli_config(const struct kj_cli_command *cmd, struct kj_config *cfg, const char *python)
{
	const char *v, *home = var("HOME");
	long long mb, n, user_mem;
	int rc = 0;

	kj_config_init(cfg, environ);
	if (python && *python) {
		cfg->python = python;
		cfg->python_source = "--python";
	} else if ((v = var("KJ_PYTHON")) != NULL) {
		cfg->python = v;
		cfg->python_source = "$KJ_PYTHON";
	}
	/* The cache. */
	v = var("KJ_CACHE_DIR");
	if (v && !strcmp(v, "off")) {
		cfg->cache_dir = NULL;
	} else if (v) {
		if (v[0] != '/')
			return bad_var(cmd, "KJ_CACHE_DIR", v, "an absolute path, or 'off'");
		cfg->cache_dir = v;
	} else if (access("/dev/shm", W_OK) == 0) {
		snprintf(cache_buf, sizeof(cache_buf), "/dev/shm/kjudge-cache-%u", (unsigned)getuid());
		cfg->cache_dir = cache_buf;
	} else if (home) {
		snprintf(cache_buf, sizeof(cache_buf), "%s/.cache/kjudge", home);
		cfg->cache_dir = cache_buf;
	}
	if (cfg->cache_dir) {
		snprintf(build_buf, sizeof(build_buf), "%s/ext", cfg->cache_dir);
		cfg->build_cache_dir = build_buf;
	}
	v = var("KJ_CACHE_SHARED");
	if (v && v[0] != '/')
		return bad_var(cmd, "KJ_CACHE_SHARED", v, "an absolute path");
	cfg->cache_shared_dir = v;
	mb = -1;
	rc |= var_ll(cmd, "KJ_CACHE_MAX_MB", 0, 1LL << 40, &mb);
	rc |= var_double(cmd, "KJ_TIME_BUDGET", 0.001, 86400, &cfg->time_budget_s);
	if ((v = var("KJ_TIMED_ROUNDS")) != NULL) {
		cfg->timed_rounds = kj_rounds_from_name(v);
		if (cfg->timed_rounds < 0)
			return bad_var(cmd, "KJ_TIMED_ROUNDS", v, "'auto', 'queued' or 'synced'");
	}
	if (mb >= 0)
		cfg->cache_max_bytes = mb << 20;
	/* Scratch. */
	if ((v = var("KJ_SCRATCH_DIR")) != NULL)
		cfg->scratch_parent = v;
	else if (access("/dev/shm", W_OK) != 0 && (v = var("TMPDIR")) != NULL)
		cfg->scratch_parent = v;
	rc |= var_choice(cmd, "KJ_SCRATCH", "private", "shared", &cfg->scratch_private);
	/* State. */
	if ((v = var("KJ_STATE_DIR")) != NULL)
		cfg->state_dir = v;
	else if ((v = var("XDG_STATE_HOME")) != NULL &&
		 snprintf(state_buf, sizeof(state_buf), "%s/kjudge", v) < (int)sizeof(state_buf))
		cfg->state_dir = state_buf;
	else if (home &&
		 snprintf(state_buf, sizeof(state_buf), "%s/.local/state/kjudge", home) <
			 (int)sizeof(state_buf))
		cfg->state_dir = state_buf;
	rc |= var_choice(cmd, "KJ_SANDBOX", "on", "off", &cfg->sandbox);
	rc |= var_choice(cmd, "KJ_TEMPLATE", "on", "off", &cfg->worker_template);
	rc |= var_choice(cmd, "KJ_AUDIT", "on", "off", &cfg->eval_audit);
	rc |= var_choice(cmd, "KJ_SOL", "off", "on", &cfg->sol_off);
	/* Limits. */
	rc |= var_double(cmd, "KJ_LIMIT_CPU_S", 1, 1e7, &cfg->limits.cpu_s);
	mb = 0;
	rc |= var_ll(cmd, "KJ_LIMIT_MEM_MB", 16, 1LL << 30, &mb);
	user_mem = mb << 20;
	{
		/* The machine's share of one of verify's two workers, unless
		 * the user gave the limit (kj_cli_mem_budget budgets again for
		 * a command that runs more). */
		const char *source;
		long long avail = kj_mem_available(&source);

		kj_mem_budget_make(&cfg->mem, avail, source, 2, user_mem);
		cfg->limits.mem_bytes = cfg->mem.limit;
	}
	mb = cfg->limits.file_bytes >> 20;
	rc |= var_ll(cmd, "KJ_LIMIT_FILE_MB", 1, 1LL << 30, &mb);
	cfg->limits.file_bytes = mb << 20;
	n = cfg->limits.procs;
	rc |= var_ll(cmd, "KJ_LIMIT_PROCS", 16, 1 << 22, &n);
	cfg->limits.procs = (long)n;
	n = cfg->limits.nofile;
	rc |= var_ll(cmd, "KJ_LIMIT_NOFILE", 64, 1 << 20, &n);
	cfg->limits.nofile = (long)n;
	mb = cfg->limits.tmp_bytes >> 20;
	rc |= var_ll(cmd, "KJ_LIMIT_TMP_MB", 1, 1LL << 30, &mb);
	cfg->limits.tmp_bytes = mb << 20;
	n = (long long)(cfg->limits.output_bytes >> 10);
	rc |= var_ll(cmd, "KJ_LIMIT_OUTPUT_KB", 1, 1 << 20, &n);
	cfg->limits.output_bytes = (size_t)n << 10;
	n = 0;
	rc |= var_ll(cmd, "KJ_THREADS", 0, 1024, &n);
	cfg->threads = (int)n;
	rc |= var_double(cmd, "KJ_PUBLISH_S", 0, 86400, &cfg->publish_s);
	rc |= var_double(cmd, "KJ_SLURM_POLL_S", 0, 86400, &cfg->slurm_poll_s);
	/* A poll below 0.05 s would only spin on squeue. */
	if (cfg->slurm_poll_s < 0.05)
		cfg->slurm_poll_s = 0.05;
	rc |= var_double(cmd, "KJ_SLURM_CMD_S", 0.1, 86400, &cfg->slurm_cmd_s);
	if ((v = var("TMPDIR")) != NULL)
		cfg->tmp_dir = v;
	cfg->slurm.job_id = var("SLURM_JOB_ID");
	cfg->slurm.array_job_id = var("SLURM_ARRAY_JOB_ID");
	cfg->slurm.array_task_id = var("SLURM_ARRAY_TASK_ID");
	cfg->slurm.restart_count = var("SLURM_RESTART_COUNT");
	cfg->slurm.nodename = var("SLURMD_NODENAME");
	cfg->slurm.cluster_name = var("SLURM_CLUSTER_NAME");
	if ((v = var("KJ_DEVICE_COMPARE")) != NULL) {
		if (!strcmp(v, "auto") || !strcmp(v, "off") || !strcmp(v, "all"))
			cfg->device_outputs = !strcmp(v, "off") ? 0 : !strcmp(v, "auto") ? 1 : 2;
		else
			rc |= bad_var(cmd, "KJ_DEVICE_COMPARE", v, "'auto', 'off' or 'all'");
	}
	return rc ? KJ_EXIT_USAGE : 0;
}

/* Bytes as GiB with one decimal, for a person. */
static double gib(long long bytes)
{
	return (double)bytes / (double)(1LL << 30);
}

void kj_cli_mem_budget(const struct kj_cli_command *cmd, struct kj_config *cfg, int workers,
		       const char *why)
{
	const char *source;
	long long avail = kj_mem_available(&source);
	struct kj_mem_budget *b = &cfg->mem;

	kj_mem_budget_make(b, avail, source, workers, b->user_limit ? b->limit : 0);
	cfg->limits.mem_bytes = b->limit;
	b->judge_oom_score_adj = kj_proc_protect_judge();
	if (!b->oversubscribed)
		return;
	if (b->user_limit)
		fprintf(stderr, "kjudge %s: warning: KJ_LIMIT_MEM_MB=%lld for each of %d workers at "
			"once (%s), with %.1f GiB kept for the judge, is more than the %.1f GiB "
			"available (%s): the kernel, not kjudge, may end a worker before it "
			"reaches its limit\n", cmd->name, b->limit >> 20, b->workers, why,
			gib(b->headroom), gib(b->available), b->source);
	else
		fprintf(stderr, "kjudge %s: warning: %.1f GiB available (%s) is too little for "
			"%d workers at once (%s) and %.1f GiB for the judge: each gets the "
			"floor of %lld MiB, and the kernel, not kjudge, may end one before it "
			"reaches it\n", cmd->name, gib(b->available), b->source, b->workers, why,
			gib(b->headroom), KJ_MEM_WORKER_MIN >> 20);
}
