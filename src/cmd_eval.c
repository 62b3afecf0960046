/*
 * cmd_eval.c - `kjudge eval SUITE CANDIDATES --db FILE`: every candidate of
 * a study judged on its task, every verdict in the results store.
 *
 * The parent finds the tasks and candidates, opens the store, records the
 * run and the suite, and hands the attempts to the batch runner
 * (lib/eval/pool.c), which forks one judge per attempt (at most -j at
 * once); each child judges its attempt with the library (lib/eval/judge.c:
 * its workers started in parallel with the others' timed phases, which hold
 * the device's lock) and commits every row itself before it hands the
 * parent its verdict (a struct kj_eval_result, read whole).  A child dies with the parent (PR_SET_PDEATHSIG) and
 * its workers with it, so a judge killed at any moment leaves attempts
 * either done or 'running'; the same command runs the running ones again
 * and skips the done ones.
 *
 * Exit: 0 every attempt has its verdict, 1 some attempt ended as a judge
 * error (see --retry-failed), 2 bad input (no suite, a store that is not
 * one, a locked store), 128 + N after signal N.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kjudge/eval.h"
#include "kjudge/fileio.h"
#include "kjudge/store.h"
#include "cli.h"
#include "cmd_eval.h"
#include "eval_progress.h"
#include "interrupt.h"
#include "base/fs.h"
#include "base/internal.h"
#include "base/banned.h"

enum {
	OPT_DB,
	OPT_JOBS,
	OPT_GPUS,
	OPT_DEVICE,
	OPT_RETRY,
	OPT_TIMEOUT,
	OPT_INPUT_SETS,
	OPT_WARMUP,
	OPT_REPEATS,
	OPT_MAX_REPEATS,
	OPT_BUDGET,
	OPT_VERIFY_ONLY,
	OPT_BASELINE,
	OPT_PYTHON,
	OPT_QUIET,
	OPT_SHARD,
	OPT_PLAN,
	OPT_PUBLISH,
	OPT_SLURM,
	OPT_SHARDS,
	OPT_PARTITION,
	OPT_GPUS_PER_TASK,
	OPT_TIME,
	OPT_SBATCH_ARG,
	OPT_SLURM_DIR,
	OPT_WAIT,
	OPT_MAX_RESUBMITS,
	OPT_API,
	OPT_COUNT_
};

/* What the reference is (kj_eval_settings.ref_compiled). */
static const char *const eval_baselines[] = { "eager", "compile", NULL };

const struct kj_cli_option kj_eval_options[] = {
	[OPT_DB] = { .name = "db", .type = KJ_CLI_STRING, .metavar = "FILE",
		     .flags = KJ_CLI_REQUIRED,
		     .help = "the results store (SQLite, created when missing)" },
	[OPT_JOBS] = { .name = "jobs", .short_name = 'j', .type = KJ_CLI_INT, .metavar = "N",
		       .min = 1, .max = 256, .def = "2",
		       .help = "attempts in flight at once (their imports and builds run in "
			       "parallel; timed phases take one device each)" },
	[OPT_GPUS] = { .name = "gpus", .type = KJ_CLI_STRING, .metavar = "LIST",
		       .help = "GPUs to use, e.g. 0,1,3 (one timed attempt per GPU at a time)" },
	[OPT_DEVICE] = { .name = "device", .type = KJ_CLI_CHOICE, .metavar = "DEV",
			 .choices = kj_cli_devices, .def = "cuda when there is one, else cpu",
			 .help = "where both sides run" },
	[OPT_RETRY] = { .name = "retry-failed", .type = KJ_CLI_FLAG,
			.help = "run again the attempts that ended as judge errors (the "
				"judge's or the machine's failures)" },
	[OPT_TIMEOUT] = { .name = "timeout", .type = KJ_CLI_NUMBER, .metavar = "S",
			  .unit = "seconds", .min = 0.001, .max = KJ_CLI_TIMEOUT_MAX,
			  .def = "900", .help = "seconds each case may take on each side" },
	[OPT_INPUT_SETS] = { .name = "input_sets", .type = KJ_CLI_INT, .metavar = "N",
			     .min = 1, .max = 100, .def = "2",
			     .help = "input sets per case with secret seeds (correctness trials)" },
	[OPT_WARMUP] = { .name = "warmup", .type = KJ_CLI_INT, .metavar = "N", .min = 0,
			 .max = 100000, .def = "5", .help = "untimed calls before timing" },
	[OPT_REPEATS] = { .name = "repeats", .type = KJ_CLI_INT, .metavar = "N", .min = 1,
			  .max = 1000000, .def = "50",
			  .help = "the fewest timed calls per side and case" },
	[OPT_MAX_REPEATS] = { .name = "max_repeats", .type = KJ_CLI_INT, .metavar = "N",
			      .min = 1, .max = 10000000, .def = "100000",
			      .help = "the most timed calls per side and case" },
	[OPT_BUDGET] = { .name = "time_budget", .type = KJ_CLI_NUMBER, .metavar = "S",
			 .unit = "seconds", .min = 0.01, .max = 86400, .def = "$KJ_TIME_BUDGET, "
			 "else 10", .help = "seconds of timing per case" },
	[OPT_VERIFY_ONLY] = { .name = "verify-only", .type = KJ_CLI_FLAG,
			      .help = "no benchmark: correctness and the layers only" },
	[OPT_BASELINE] = { .name = "baseline", .type = KJ_CLI_CHOICE, .metavar = "B",
			   .choices = eval_baselines, .def = "eager",
			   .help = "the reference as verified and timed: eager, or "
				   "torch.compile(Model) (on the CPU it needs a C++ compiler)" },
	[OPT_PYTHON] = { .name = "python", .type = KJ_CLI_STRING, .metavar = "PATH",
			 .def = "$KJ_PYTHON, then the .venv of kjudge's checkout, else python3",
			 .help = "Python interpreter with torch" },
	[OPT_QUIET] = { .name = "quiet", .short_name = 'q', .type = KJ_CLI_FLAG,
			.help = "no progress, only the closing lines" },
	[OPT_SHARD] = { .name = "shard", .type = KJ_CLI_STRING, .metavar = "I/K",
			.help = "judge only shard I of K (0 <= I < K): the attempts kjudge's "
				"plan gives it (docs/slurm.md)" },
	[OPT_PLAN] = { .name = "plan", .type = KJ_CLI_STRING, .metavar = "FILE",
		       .help = "with --shard: the shards as a plan file of --slurm says, its "
			       "batch and settings checked against this command's" },
	[OPT_PUBLISH] = { .name = "publish", .type = KJ_CLI_STRING, .metavar = "DIR",
			  .help = "with --shard: publish the store atomically as DIR/shard-I.db "
				  "(as it goes and at the end; its status in DIR/shard-I.json), "
				  "and start from what DIR already holds" },
	[OPT_SLURM] = { .name = "slurm", .type = KJ_CLI_FLAG,
			.help = "run on a Slurm cluster: plan the shards and submit one "
				"sbatch --array job (docs/slurm.md)" },
	[OPT_SHARDS] = { .name = "shards", .type = KJ_CLI_INT, .metavar = "K", .min = 1,
			 .max = 10000, .def = "the tasks to judge, at most 16",
			 .help = "with --slurm: the number of shards (array tasks)" },
	[OPT_PARTITION] = { .name = "partition", .type = KJ_CLI_STRING, .metavar = "P",
			    .help = "with --slurm: the partition (sbatch --partition)" },
	[OPT_GPUS_PER_TASK] = { .name = "gpus-per-task", .type = KJ_CLI_INT, .metavar = "N",
				.min = 0, .max = 64, .def = "1, 0 with --device cpu",
				.help = "with --slurm: GPUs per shard (sbatch --gres=gpu:N)" },
	[OPT_TIME] = { .name = "time", .type = KJ_CLI_STRING, .metavar = "LIMIT",
		       .help = "with --slurm: each shard's time limit (sbatch --time)" },
	[OPT_SBATCH_ARG] = { .name = "sbatch-arg", .type = KJ_CLI_STRING, .metavar = "ARG",
			     .help = "with --slurm: one more argument for sbatch (may be given "
				     "more than once)" },
	[OPT_SLURM_DIR] = { .name = "slurm-dir", .type = KJ_CLI_STRING, .metavar = "DIR",
			    .def = "FILE.slurm, beside the store",
			    .help = "with --slurm: the shared directory of the plans, the job "
				    "scripts, the shards' stores and logs" },
	[OPT_WAIT] = { .name = "wait", .type = KJ_CLI_FLAG,
		       .help = "with --slurm: follow the job, resubmit shards the machine "
			       "lost, merge them as they finish" },
	[OPT_MAX_RESUBMITS] = { .name = "max-resubmits", .type = KJ_CLI_INT, .metavar = "N",
				.min = 0, .max = 100, .def = "3",
				.help = "with --wait: how often one shard is submitted again" },
	[OPT_API] = { .name = "api", .type = KJ_CLI_STRING, .metavar = "LIST",
		      .help = "a suite of specs: only the directions into these APIs, e.g. "
			      "omp,opencl" },
	[OPT_COUNT_] = { .name = NULL },
};

/* --- signals ------------------------------------------------------------------------- */

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/*
 * The parent's signals: SIGINT, SIGTERM and SIGHUP stop the batch (no
 * SA_RESTART: a wait returns EINTR); the batch runner resets them in each
 * child and keeps SIGCHLD to itself.
 */
static void parent_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* --- the store's rows of the run --------------------------------------------------------- */

/* A write of the run's rows failed (the store rolled it back): say why,
 * and the exit status (1 for a full disk or no memory, the judge's; else
 * 2). */
static int store_fail(const struct kj_cli_command *cmd, const struct kj_error *err)
{
	kj_cli_error(cmd, "%s", err->msg);
	return kj_cli_exit_for(cmd, err->code);
}

/* The batch's bytes as the store and a plan write them: 32 hex digits. */
static void batch_hex_of(const unsigned char b[16], char hex[33])
{
	int i;

	for (i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", b[i]);
}

/* And back: 1 when hex is 32 hex digits (b filled), else 0. */
static int batch_of_hex(const char *hex, unsigned char b[16])
{
	int i;

	if (!hex || strlen(hex) != 32)
		return 0;
	for (i = 0; i < 16; i++) {
		unsigned x;

		if (sscanf(hex + 2 * i, "%2x", &x) != 1)
			return 0;
		b[i] = (unsigned char)x;
	}
	return 1;
}

/* The batch's 16 bytes (meta 'batch', made at the first eval of the
 * store): every attempt of the study sees the same secret inputs, so golden
 * outputs are computed once per task and case, and a resumed run judges
 * on the inputs the first one did.  0, or the exit status after printing
 * why. */
static int batch_bytes(const struct kj_cli_command *cmd, struct kj_store *store,
		       const char *want, unsigned char batch[16])
{
	unsigned char fresh[16];
	char hex[33], have[33];
	const char *offer = NULL;
	struct kj_error err;
	int rand_errno = 0;

	/* What is written when the store holds no batch yet: the plan's, or
	 * 16 random bytes. */
	if (want ? batch_of_hex(want, fresh)
		 : getrandom(fresh, sizeof(fresh), 0) == (ssize_t)sizeof(fresh)) {
		batch_hex_of(fresh, hex);
		offer = hex;
	} else if (!want) {
		rand_errno = errno;
	}
	if (kj_store_batch(store, offer, have, &err) != KJ_OK)
		return store_fail(cmd, &err);
	if (!*have) {
		if (want)
			kj_cli_error(cmd, "the plan's batch '%s' is not 32 hex digits", want);
		else
			kj_cli_error(cmd, "getrandom: %s", strerror(rand_errno));
		return KJ_EXIT_USAGE;
	}
	/* The store holds 32 hex digits (kj_store_batch checks). */
	(void)batch_of_hex(have, batch);
	batch_hex_of(batch, hex);
	if (want && strcmp(hex, want) != 0) {
		/* A shard's store is of one plan: the batch is the plan's. */
		kj_cli_error(cmd, "the store's batch (%s) is not the plan's (%s): a store "
			     "of another plan", hex, want);
		return KJ_EXIT_USAGE;
	}
	return 0;
}

/* The machine of the run (runs.env): its name, its CPUs, the judge and
 * the devices; each attempt's row has its own device's environment.  NULL
 * when it cannot be made (the column stays NULL; nothing depends on it). */
/* The run's env (docs/store.md): the machine, a shard's place, and what
 * discovery left out ("skipped": the record of a study keeps what it did
 * not judge, and why).  NULL when it cannot be made (the run is recorded
 * without). */
static char *run_env(const struct kj_config *cfg, const char *gpus, const char *shard,
		     const char *plan, const json_t *skipped)
{
	const struct {
		const char *name, *value;
	} slurm_vars[] = { { "SLURM_JOB_ID", cfg->slurm.job_id },
			   { "SLURM_ARRAY_JOB_ID", cfg->slurm.array_job_id },
			   { "SLURM_ARRAY_TASK_ID", cfg->slurm.array_task_id },
			   { "SLURM_RESTART_COUNT", cfg->slurm.restart_count },
			   { "SLURMD_NODENAME", cfg->slurm.nodename },
			   { "SLURM_CLUSTER_NAME", cfg->slurm.cluster_name } };
	char host[256] = "";
	json_t *env;
	char *text;
	struct kj_error err;
	size_t i;

	gethostname(host, sizeof(host) - 1);
	env = json_pack("{s:s, s:I, s:s, s:s}", "hostname", host, "cpus",
			(json_int_t)sysconf(_SC_NPROCESSORS_ONLN), "kjudge", KJ_VERSION, "gpus",
			gpus ? gpus : "");
	/* A shard says which, of which plan, and where Slurm ran it. */
	if (env && shard)
		json_object_set_new(env, "shard", json_string(shard));
	if (env && plan)
		json_object_set_new(env, "plan", json_string(plan));
	for (i = 0; env && shard && i < sizeof(slurm_vars) / sizeof(slurm_vars[0]); i++)
		if (slurm_vars[i].value)
			json_object_set_new(env, slurm_vars[i].name,
					    json_string(slurm_vars[i].value));
	if (env && json_array_size(skipped) &&
	    json_object_set_new(env, "skipped", json_deep_copy(skipped)) != 0) {
		json_decref(env);
		return NULL;
	}
	text = env ? kj_json_text(env, JSON_COMPACT, &err) : NULL;
	json_decref(env);
	return text;
}

/* The run's row, the suite's tasks and which tasks the run's suite holds:
 * one transaction.  *run_id gets the run's id.  0, or the exit status after
 * printing why. */
static int record_run(const struct kj_cli_command *cmd, const struct kj_config *cfg,
		      struct kj_store *store, int argc, char **argv,
		      const char *suite, const char *cands, const char *settings, const char *gpus,
		      const char *shard, const char *plan, const struct kj_eval_set *set,
		      long long *run_id)
{
	json_t *argj = json_array();
	char *args_text = NULL, *env_text = NULL;
	struct kj_store_task *rows;
	struct kj_error err;
	size_t i;
	int rc = 0, k;

	for (k = 0; argj && k < argc; k++)
		if (json_array_append_new(argj, json_string(argv[k])) != 0)
			break;
	rows = calloc(set->n_tasks ? set->n_tasks : 1, sizeof(*rows));
	if (!rows || !argj || !(args_text = kj_json_text(argj, JSON_COMPACT, &err))) {
		json_decref(argj);
		free(rows);
		kj_cli_error(cmd, "out of memory");
		return KJ_EXIT_FAIL;
	}
	json_decref(argj);
	/* The suite's files, read before the transaction begins: a file that
	 * cannot be read leaves nothing written. */
	for (i = 0; i < set->n_tasks && !rc; i++) {
		const struct kj_eval_task *t = &set->tasks[i];
		struct kj_store_task *r = &rows[i];
		char *src = NULL, *cases = NULL;

		src = kj__read_file(t->path, 64u << 20, &r->source_len, &err);
		if (src && t->cases_path)
			cases = kj__read_file(t->cases_path, 64u << 20, &r->cases_len, &err);
		r->source = src;
		r->cases = cases;
		if (!src || (t->cases_path && !cases)) {
			kj_cli_error(cmd, "%s", err.msg);
			rc = KJ_EXIT_USAGE;
			break;
		}
		r->key = t->key;
		r->name = t->name;
		r->path = t->rel;
		r->level = t->level;
		r->problem = t->problem;
		r->sha256 = t->task_sha256;
		r->cases_sha256 = t->cases_sha256;
	}
	if (!rc) {
		struct kj_store_run run = {
			.judge_version = KJ_VERSION, .command = args_text, .suite = suite,
			.candidates = cands, .settings = settings,
		};

		env_text = run_env(cfg, gpus, shard, plan, set->problems);
		run.env = env_text;
		if (kj_store_run_begin(store, &run, rows, set->n_tasks, run_id, &err) != KJ_OK)
			rc = store_fail(cmd, &err);
	}
	for (i = 0; i < set->n_tasks; i++) {
		free((char *)(uintptr_t)rows[i].source);
		free((char *)(uintptr_t)rows[i].cases);
	}
	free(rows);
	free(env_text);
	free(args_text);
	return rc;
}

static int finish_run(struct kj_store *store, long long run_id)
{
	struct kj_error err;

	return kj_store_run_end(store, run_id, &err) == KJ_OK ? 0 : -1;
}

/* --- candidates ---------------------------------------------------------------------- */

/*
 * Nothing to judge: a mistyped or empty candidates folder, a layout kjudge
 * does not read, a generations file of skipped lines.  Said with what was
 * looked for, so that the fix is plain; exit 2, as any input that cannot be
 * judged, before a store is made.
 */
static int no_candidates(const struct kj_cli_command *cmd, const char *suite,
			 const char *cands, const struct kj_eval_set *set)
{
	struct stat st;
	size_t skipped = json_array_size(set->problems);
	char also[96] = "", example[320];
	const char *what;

	if (skipped)
		snprintf(also, sizeof(also), "; %zu %s skipped (named above)", skipped,
			 skipped == 1 ? "entry was" : "entries were");
	snprintf(example, sizeof(example), "%s%s", set->n_tasks ?
		 kj_cli_shown(set->tasks[0].name) : "", set->n_tasks > 1 ? ", ..." : "");
	if (stat(cands, &st) == 0 && !S_ISDIR(st.st_mode))
		what = "lines of JSON objects, each with \"task\", \"model\" and "
		       "\"source\" or \"path\"";
	else
		what = set->kind->cand_layout;
	return kj_cli_error(cmd, "'%s': no candidate found: looked for %s ('%s': %zu task%s: "
			    "%s)%s", kj_cli_shown(cands), what, kj_cli_shown(suite),
			    set->n_tasks, set->n_tasks == 1 ? "" : "s", example, also);
}

/* What the store holds of an attempt: 0 nothing or running (to run), 1
 * done, 2 done as a judge error; -1 on error, err filled. */
static int attempt_state(struct kj_store *store, const char *key, struct progress *p,
			 struct kj_error *err)
{
	struct kj_store_state st;
	int v = 0;

	if (kj_store_attempt_state(store, key, &st, err) != KJ_OK)
		return -1;
	if (st.found && strcmp(st.state, "done") == 0)
		v = strcmp(st.status, "judge_error") == 0 ? 2 : 1;
	if (v == 1) { /* the verdict of an earlier run counts in the summary */
		if (strcmp(st.status, "pass") == 0) {
			p->passed++;
			p->clean += st.clean;
		} else if (strcmp(st.status, "fail") == 0) {
			p->failed++;
		} else {
			p->errors++;
		}
	}
	return v;
}

/* --- a suite of specs: the study's scope ---------------------------------------------- */

/*
 * The directions of a suite of specs that the study holds (--api, those a
 * translation attempts, those that can run here), the others said on
 * stderr: a direction that cannot run here is not run, never a failure.
 * 0, or -1 with *exit_code set after printing why.
 */
static int scope_specs(const struct kj_cli_command *cmd, struct kj_eval_set *set,
		       const char *apis, int timed, const struct kj_config *here, int quiet,
		       int *exit_code)
{
	struct kj_error err;
	json_t *not_run = NULL, *v;
	size_t counts[4], i;
	int rc;

	rc = kj_eval_spec_scope(set, apis, timed, here, &not_run, counts, &err);
	if (rc != KJ_OK) {
		kj_cli_error(cmd, "%s", err.msg);
		*exit_code = kj_cli_exit_for(cmd, rc);
		return -1;
	}
	json_array_foreach(not_run, i, v)
		fprintf(stderr, "kjudge eval: not run here: %s: %s\n",
			kj_cli_shown(json_string_value(json_object_get(v, "task"))),
			kj_cli_shown(json_string_value(json_object_get(v, "why"))));
	if (!quiet && (counts[0] || counts[1] || counts[2]))
		fprintf(stderr, "kjudge eval: the study: %zu direction%s (%zu outside --api, %zu "
			"that no translation attempts, %zu not run here, left out with their %zu "
			"translation%s)\n", set->n_tasks, set->n_tasks == 1 ? "" : "s", counts[0],
			counts[1], counts[2], counts[3], counts[3] == 1 ? "" : "s");
	rc = 0;
	/* The directions not run are the run's too (runs.env, "not_run"),
	 * for the report to name. */
	if (json_array_size(not_run) && !set->problems && !(set->problems = json_array()))
		rc = -1;
	json_array_foreach(not_run, i, v) {
		json_t *p = rc ? NULL : json_pack("{s:O, s:O, s:b}", "where",
						  json_object_get(v, "task"), "why",
						  json_object_get(v, "why"), "not_run", 1);

		if (!p || json_array_append_new(set->problems, p) != 0)
			rc = -1;
	}
	json_decref(not_run);
	if (rc) {
		kj_cli_error(cmd, "out of memory");
		*exit_code = KJ_EXIT_FAIL;
		return -1;
	}
	if (set->n_tasks == 0) {
		kj_cli_error(cmd, "no direction left to judge: %zu outside --api, %zu that no "
			     "translation attempts, %zu not run here", counts[0], counts[1],
			     counts[2]);
		*exit_code = KJ_EXIT_USAGE;
		return -1;
	}
	return 0;
}

/* --- shards (docs/slurm.md) ------------------------------------------------------------ */

/* --- the batch ---------------------------------------------------------------------------- */

/* Publish the shard's store: 0, or -1 after printing why (the shard goes
 * on: its local store holds everything). */
static int publish(const struct kj_cli_command *cmd, struct kj_store *store, const char *dir,
		   int i)
{
	struct kj_error err;

	if (kj_eval_shard_publish(store, dir, i, &err) == KJ_OK)
		return 0;
	kj_cli_error(cmd, "%s", err.msg);
	return -1;
}

/* The shard's status file, or why it could not be written. */
static void shard_status(const struct kj_cli_command *cmd, const struct kj_config *cfg,
			 const char *dir, int i, int k, const char *plan_id, int exit_code,
			 size_t total, size_t done)
{
	struct kj_error err;

	if (kj_eval_shard_status(cfg, dir, i, k, plan_id, exit_code, total, done, &err) != KJ_OK)
		kj_cli_error(cmd, "%s", err.msg);
}

/* What the batch runner's callbacks share: the batch and what is said of
 * it. */
struct batch {
	const struct kj_cli_command *cmd;
	const struct kj_config *cfg;
	const struct kj_eval_settings *s;
	struct kj_eval_slot slot;
	const struct kj_eval_set *set;
	const char (*keys)[65];
	const size_t *todo;
	size_t n_todo, next;
	struct progress *prog;
	int exit_code;
	char no_device[KJ_ERROR_MSG_MAX];
	/* The attempts whose device's memory ran out while others shared it
	 * (KJ_EDEVMEM): judged again, one at a time, after the others. */
	size_t *alone;
	size_t n_alone;
	/* A shard's publishing (--publish): the store, where, how often. */
	struct kj_store *store;
	const char *publish_dir;
	int shard_i;
	double last_publish;
};

static int batch_next(void *ctx, size_t *cand)
{
	struct batch *b = ctx;

	if (b->next >= b->n_todo)
		return 0;
	*cand = b->todo[b->next++];
	return 1;
}

/* In the child: judge one attempt. */
static void batch_judge(void *ctx, size_t cand, const char *device, struct kj_eval_result *r)
{
	struct batch *b = ctx;
	struct kj_error err;

	if (kj_cli_guard(b->cmd))
		_exit(3);
	b->slot.device = device;
	r->code = kj_eval_attempt(b->cfg, b->s, &b->slot, b->set, cand, b->keys[cand],
				  &r->outcome, &err);
	if (r->code != KJ_OK)
		snprintf(r->error, sizeof(r->error), "%s", err.msg);
}

static void batch_start_failed(void *ctx, size_t cand, const char *why)
{
	struct batch *b = ctx;

	(void)cand;
	kj_cli_error(b->cmd, "%s", why);
	b->exit_code = KJ_EXIT_FAIL;
	stop_signal = SIGTERM;
}

static void batch_tick(void *ctx)
{
	kj__progress_bar(((struct batch *)ctx)->prog);
}

/* An attempt's verdict in the counts and on its line. */
static void say_verdict(struct batch *b, const struct kj_eval_cand *c,
			const struct kj_eval_outcome *o)
{
	struct progress *prog = b->prog;
	const char *st = o->status, *type = *o->error_type ? o->error_type : "-";
	char speed[40] = "", why[sizeof(o->message)];
	size_t n;

	if (strcmp(st, "pass") == 0) {
		prog->passed++;
		prog->clean += o->clean != 0;
	} else if (strcmp(st, "fail") == 0) {
		prog->failed++;
	} else {
		prog->errors++;
	}
	if (strcmp(st, "judge_error") == 0)
		b->exit_code = b->exit_code ? b->exit_code : KJ_EXIT_FAIL;
	if (prog->quiet)
		return;
	/* The why stays on its line. */
	snprintf(why, sizeof(why), "%s", o->message);
	for (n = 0; why[n]; n++)
		if (why[n] == '\n' || why[n] == '\r')
			why[n] = ' ';
	if (o->speedup > 0)
		snprintf(speed, sizeof(speed), ", %.3gx", o->speedup);
	/* Names from the suite and the generations: shown, never raw. */
	if (strcmp(st, "pass") == 0)
		kj__progress_say(prog, "%s %s/%s: pass, %s%s%s\n",
			     kj_cli_shown(b->set->tasks[c->task].name), kj_cli_shown(c->model),
			     kj_cli_shown(c->attempt), o->clean ? "clean" : "not clean: ",
			     o->clean ? "" : kj_cli_shown(type), speed);
	else
		kj__progress_say(prog, "%s %s/%s: %s %s%s%s\n",
			     kj_cli_shown(b->set->tasks[c->task].name), kj_cli_shown(c->model),
			     kj_cli_shown(c->attempt), kj_cli_shown(st), kj_cli_shown(type),
			     *why ? ": " : "", kj_cli_shown(why));
}

static int batch_finished(void *ctx, size_t cand, const struct kj_eval_result *r, int status)
{
	struct batch *b = ctx;
	struct progress *prog = b->prog;
	const struct kj_eval_cand *c = &b->set->cands[cand];

	if (r && r->code == KJ_ENODEVICE) {
		/* The device is not there: the machine's fault, for the whole
		 * batch; the attempt stays running, for a next run on a
		 * machine that has it. */
		snprintf(b->no_device, sizeof(b->no_device), "%s", r->error);
		return 1;
	}
	if (r && r->code == KJ_EDEVMEM && b->alone) {
		/* Nothing charged: the attempt waits for the pass alone. */
		b->alone[b->n_alone++] = cand;
		if (!prog->quiet)
			kj__progress_say(prog, "%s %s/%s: %s\n",
				     kj_cli_shown(b->set->tasks[c->task].name),
				     kj_cli_shown(c->model), kj_cli_shown(c->attempt),
				     kj_cli_shown(r->error));
		return 0;
	}
	prog->done++;
	prog->done_here++;
	prog->last_done = kj__now_s();
	if (r && r->code == KJ_OK) {
		say_verdict(b, c, &r->outcome);
	} else {
		/* The attempt's verdict could not be committed: it stays
		 * running in the store, for the next run. */
		prog->errors++;
		b->exit_code = KJ_EXIT_FAIL;
		kj__progress_say(prog, "kjudge eval: %s %s/%s: not judged: %s\n",
			     kj_cli_shown(b->set->tasks[c->task].name), kj_cli_shown(c->model),
			     kj_cli_shown(c->attempt),
			     r && *r->error ? kj_cli_shown(r->error)
			     : WIFSIGNALED(status) ? "its judge was killed" : "its judge ended early");
	}
	if (b->publish_dir && kj__now_s() - b->last_publish >= b->cfg->publish_s) {
		publish(b->cmd, b->store, b->publish_dir, b->shard_i);
		b->last_publish = kj__now_s();
	}
	return 0;
}

/* The batch's end said: interrupted, stopped for a device that is not
 * there, or its summary (the run's row finished).  Returns the exit
 * status. */
static int batch_end(struct batch *b, int rc, const struct kj_error *err, size_t judge_errors)
{
	struct progress *prog = b->prog;
	int exit_code = b->exit_code;

	if (rc == KJ_ENOMEM) {
		kj_cli_error(b->cmd, "%s", err->msg);
		exit_code = KJ_EXIT_FAIL;
	} else if (stop_signal || *b->no_device) {
		if (prog->drawn)
			fputc('\n', stderr);
		if (stop_signal) {
			fprintf(stderr, "kjudge eval: interrupted (signal %d): %zu of %zu attempts "
				"done; the same command goes on from here\n", (int)stop_signal,
				prog->done, prog->total);
			exit_code = 128 + (int)stop_signal;
		} else {
			fprintf(stderr, "kjudge eval: %s\nkjudge eval: stopped, nothing charged: %zu "
				"of %zu attempts done; the same command where the device is goes on "
				"from here\n", kj_cli_shown(b->no_device), prog->done, prog->total);
			exit_code = KJ_EXIT_USAGE;
		}
	} else {
		if (finish_run(b->store, b->slot.run_id) != 0)
			exit_code = KJ_EXIT_FAIL;
		if (prog->tty && !prog->quiet) {
			kj__progress_bar(prog);
			fputc('\n', stderr);
		}
		if (judge_errors) {
			fprintf(stderr, "kjudge eval: %zu attempts ended as judge errors in earlier runs; "
			       "--retry-failed runs them again\n", judge_errors);
			if (!exit_code)
				exit_code = KJ_EXIT_FAIL;
		}
		fprintf(stderr, "kjudge eval: %zu attempts: %zu passed (%zu clean), %zu failed, %zu judge or "
		       "task errors (%zu of them from earlier runs); results in %s (kjudge report %s)\n",
		       prog->total, prog->passed, prog->clean, prog->failed, prog->errors, prog->skipped,
		       kj_cli_shown(b->slot.store_path),
		       kj_cli_shown(b->slot.store_path));
	}
	return exit_code;
}

/* `eval --slurm`: x's study as the command found it, completed with the
 * cluster's options and the run's context.  Returns the exit status. */
static int eval_slurm(struct kj_cmd_eval_ctx *x, const struct kj_cli_value *v,
		      const struct kj_config *cfg, int argc, char **argv)
{
	const char **extra = calloc((size_t)argc + 1, sizeof(*extra));
	int n_extra = 0, a, opts_done = 0, rc;

	if (!extra) {
		kj_cli_error(x->cmd, "out of memory");
		return KJ_EXIT_FAIL;
	}
	/* Every --sbatch-arg, in order (the parser keeps the last). */
	for (a = 1; a < argc; a++) {
		const char *val;

		if (opts_done)
			continue;
		if (strcmp(argv[a], "--") == 0)
			opts_done = 1;
		else if (kj_cli_long_is(argv[a], "sbatch-arg", &val) && val)
			extra[n_extra++] = val;
		else if (kj_cli_long_is(argv[a], "sbatch-arg", &val) && a + 1 < argc)
			extra[n_extra++] = argv[++a];
	}
	x->python = cfg->python;
	x->poll_s = cfg->slurm_poll_s;
	x->slurm_cmd_s = cfg->slurm_cmd_s;
	x->environ = cfg->environ;
	x->path_env = kj_config_env(cfg, "PATH");
	x->partition = v[OPT_PARTITION].text;
	x->time_limit = v[OPT_TIME].text;
	x->slurm_dir = v[OPT_SLURM_DIR].text;
	x->gpus_per_task = v[OPT_GPUS_PER_TASK].count ? (int)v[OPT_GPUS_PER_TASK].integer : -1;
	x->shards = v[OPT_SHARDS].count ? (int)v[OPT_SHARDS].integer : 0;
	x->wait = v[OPT_WAIT].count > 0;
	x->max_resubmits = v[OPT_MAX_RESUBMITS].count ? (int)v[OPT_MAX_RESUBMITS].integer : 3;
	x->sbatch_args = extra;
	x->n_sbatch_args = n_extra;
	x->apis = v[OPT_API].text;
	rc = kj__cmd_eval_slurm(x);
	free(extra);
	return rc;
}

/* --- the command ------------------------------------------------------------------------ */

/* "0,1,3" into devices "cuda:0", ...; 0 or -1 after printing why. */
static int parse_gpus(const struct kj_cli_command *cmd, const char *list, char devs[][16],
		      int max, int *n)
{
	const char *p = list;
	int k;

	*n = 0;
	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p || v < 0 || v > 1023 || (*end && *end != ',') || *n == max)
			return kj_cli_error(cmd, "--gpus '%s': a comma list of GPU numbers, e.g. 0,1",
					    list), -1;
		for (k = 0; k < *n; k++)
			if (strtol(devs[k] + 5, NULL, 10) == v)
				return kj_cli_error(cmd, "--gpus '%s': GPU %ld is named twice", list,
						    v), -1;
		snprintf(devs[(*n)++], 16, "cuda:%ld", v);
		p = *end ? end + 1 : end;
	}
	if (*n == 0)
		return kj_cli_error(cmd, "--gpus: no GPU named"), -1;
	return 0;
}

/* The options of eval as the command reads them. */
struct eval_opts {
	const char *db_path, *python, *publish_dir;
	int jobs, retry, quiet, slurm;
	char devs[64][16];               /* --gpus, else the device */
	int n_devs;
	int shard_i, shard_k;            /* --shard I/K; k 0: none */
	char shard_text[32];
};

/* The options into o and the settings s: 0, or the exit status after
 * saying what is wrong. */
static int read_options(const struct kj_cli_command *cmd, const struct kj_cli_value *v,
			struct kj_eval_settings *s, struct eval_opts *o)
{
	struct kj_error err;
	int k;

	memset(o, 0, sizeof(*o));
	o->jobs = 2;
	o->n_devs = 1;
	o->shard_i = -1;
	o->db_path = v[OPT_DB].text;
	if (v[OPT_JOBS].count)
		o->jobs = (int)v[OPT_JOBS].integer;
	if (v[OPT_DEVICE].count)
		s->device = v[OPT_DEVICE].text;
	o->retry = v[OPT_RETRY].count > 0;
	if (v[OPT_TIMEOUT].count)
		s->judge.timeout_s = v[OPT_TIMEOUT].number;
	if (v[OPT_INPUT_SETS].count)
		s->judge.input_sets = (int)v[OPT_INPUT_SETS].integer;
	if (v[OPT_WARMUP].count)
		s->bench.warmup = (int)v[OPT_WARMUP].integer;
	if (v[OPT_REPEATS].count)
		s->bench.repeats = (int)v[OPT_REPEATS].integer;
	if (v[OPT_MAX_REPEATS].count)
		s->bench.max_repeats = (int)v[OPT_MAX_REPEATS].integer;
	if (v[OPT_BUDGET].count)
		s->bench.budget_s = v[OPT_BUDGET].number;
	s->no_benchmark = v[OPT_VERIFY_ONLY].count > 0;
	s->ref_compiled = v[OPT_BASELINE].count && v[OPT_BASELINE].choice == 1;
	if (v[OPT_PYTHON].count)
		o->python = v[OPT_PYTHON].text;
	o->quiet = v[OPT_QUIET].count > 0;
	if (v[OPT_GPUS].count && parse_gpus(cmd, v[OPT_GPUS].text, o->devs, 64, &o->n_devs))
		return KJ_EXIT_USAGE;
	if (!v[OPT_GPUS].count)
		snprintf(o->devs[0], 16, "%s", s->device ? s->device : "");
	o->slurm = v[OPT_SLURM].count > 0;
	o->publish_dir = v[OPT_PUBLISH].text;
	if (v[OPT_SHARD].count &&
	    kj_eval_shard_parse(v[OPT_SHARD].text, &o->shard_i, &o->shard_k, &err) != KJ_OK) {
		kj_cli_error(cmd, "--shard %s", err.msg);
		return KJ_EXIT_USAGE;
	}
	if ((v[OPT_PLAN].count || v[OPT_PUBLISH].count) && !v[OPT_SHARD].count)
		return kj_cli_error(cmd, "--%s needs --shard I/K", v[OPT_PLAN].count ? "plan"
				    : "publish");
	if (o->slurm && v[OPT_SHARD].count)
		return kj_cli_error(cmd, "--slurm plans the shards itself: no --shard");
	for (k = OPT_SHARDS; !o->slurm && k <= OPT_MAX_RESUBMITS; k++)
		if (v[k].count)
			return kj_cli_error(cmd, "--%s needs --slurm", kj_eval_options[k].name);
	if (o->slurm && !s->device)
		/* The nodes', not this (login) machine's. */
		s->device = v[OPT_GPUS_PER_TASK].count && v[OPT_GPUS_PER_TASK].integer == 0
			   ? "cpu" : "cuda";
	if (o->slurm && strcmp(s->device, "cpu") == 0 && v[OPT_GPUS_PER_TASK].count &&
	    v[OPT_GPUS_PER_TASK].integer > 0)
		return kj_cli_error(cmd, "--gpus-per-task with --device cpu");
	if (o->shard_k)
		snprintf(o->shard_text, sizeof(o->shard_text), "%d/%d", o->shard_i, o->shard_k);
	return 0;
}

int kj_cmd_eval(const struct kj_cli_command *cmd, int argc, char **argv)
{
	struct kj_cli_args args;
	struct kj_config cfg;
	struct kj_eval_settings s;
	struct kj_eval_set set;
	struct kj_store *store = NULL;
	struct kj_error err;
	struct progress prog;
	struct batch b;
	struct kj_eval_pool pool;
	static const struct kj_eval_pool_ops ops = { batch_next, batch_judge, batch_start_failed,
						     batch_finished, batch_tick };
	struct eval_opts o;
	char (*keys)[65] = NULL, work[PATH_MAX], *settings_text = NULL;
	char batch_dir[PATH_MAX];
	const char *no_device = "";
	const char *batch_how = "";
	int batch_cache = 0;
	const char *db_path = NULL, *suite, *cands, *python = NULL;
	unsigned char batch[16];
	size_t *todo = NULL, *alone, n_todo = 0, i;
	int rc, jobs, n_devs, retry, exit_code = KJ_EXIT_OK;
	size_t judge_errors = 0;        /* judge errors of earlier runs, not retried */
	int eval_lock = -1;
	long long run_id = 0;
	json_t *settings = NULL;
	/* A shard (--shard I/K), its plan and where it publishes. */
	int shard_i, shard_k, slurm, have_plan = 0;
	const char *publish_dir = NULL;
	char batch_hex[33];
	struct kj_eval_plan plan;
	unsigned char *in_shard = NULL;

	kj_cli_args_init(&args);
	if ((rc = kj_cli_start(cmd, argc, argv, &args)) >= 0)
		return rc;
	kj_judge_opts_init(&s.judge);
	kj_bench_opts_init(&s.bench);
	s.device = NULL;
	s.python = NULL;
	s.no_benchmark = 0;
	memset(&prog, 0, sizeof(prog));
	if ((rc = read_options(cmd, args.opt, &s, &o)) != 0) {
		kj_cli_args_release(&args);
		return rc;
	}
	db_path = o.db_path;
	jobs = o.jobs;
	retry = o.retry;
	python = o.python;
	prog.quiet = o.quiet;
	n_devs = o.n_devs;
	slurm = o.slurm;
	publish_dir = o.publish_dir;
	shard_i = o.shard_i;
	shard_k = o.shard_k;
	kj_eval_plan_init(&plan);
	suite = args.operands[0];
	cands = args.operands[1];
	kj_eval_set_init(&set);
	rc = kj_cli_config(cmd, &cfg, python);
	if (rc) {
		kj_cli_args_release(&args);
		return rc;
	}
	s.python = cfg.python;
	if (!args.opt[OPT_BUDGET].count && cfg.time_budget_s > 0)
		s.bench.budget_s = cfg.time_budget_s;
	if (s.bench.max_repeats < s.bench.repeats)
		s.bench.max_repeats = s.bench.repeats;
	if (args.opt[OPT_GPUS].count && s.device && strcmp(s.device, "cpu") == 0) {
		kj_cli_args_release(&args);
		return kj_cli_error(cmd, "--gpus with --device cpu");
	}
	if (!*o.devs[0])
		snprintf(o.devs[0], 16, "%s", kj_eval_default_device());
	if (!s.device)
		s.device = strncmp(o.devs[0], "cuda", 4) == 0 ? "cuda" : "cpu";

	/* The suite and the candidates. */
	rc = kj_eval_discover_suite(suite, &set, &err);
	if (rc == KJ_OK)
		rc = kj_eval_discover_candidates(cands, &set, &err);
	if (rc != KJ_OK) {
		kj_cli_error(cmd, "%s", err.msg);
		exit_code = kj_cli_exit_for(cmd, rc);
		goto out;
	}
	if (!(set.kind->flags & KJ_EVAL_KIND_APIS) && args.opt[OPT_API].count) {
		kj_cli_error(cmd, "--api is for a suite of specs (its translation directions)");
		exit_code = KJ_EXIT_USAGE;
		goto out;
	}
	if ((set.kind->flags & KJ_EVAL_KIND_APIS) &&
	    scope_specs(cmd, &set, args.opt[OPT_API].text, !s.no_benchmark,
			/* A plan for a cluster: its nodes say what they run. */
			args.opt[OPT_SLURM].count ? NULL : &cfg, prog.quiet, &exit_code) != 0)
		goto out;
	/* The kind's own benchmark defaults (a spec suite's whole programs: a
	 * few runs each, not a kernel's fifty calls). */
	if (set.kind->bench_warmup && !args.opt[OPT_WARMUP].count)
		s.bench.warmup = set.kind->bench_warmup;
	if (set.kind->bench_repeats && !args.opt[OPT_REPEATS].count)
		s.bench.repeats = set.kind->bench_repeats;
	for (i = 0; i < json_array_size(set.problems); i++) {
		json_t *p = json_array_get(set.problems, i);

		if (json_is_true(json_object_get(p, "not_run")))
			continue; /* said by scope_specs */
		fprintf(stderr, "kjudge eval: skipped %s: %s\n",
			kj_cli_shown(json_string_value(json_object_get(p, "where"))),
			kj_cli_shown(json_string_value(json_object_get(p, "why"))));
	}
	if (set.n_cands == 0) {
		exit_code = no_candidates(cmd, suite, cands, &set);
		goto out;
	}
	settings = kj_eval_settings_json(&s);
	if (!settings || !(settings_text = kj_json_text(settings, JSON_COMPACT | JSON_SORT_KEYS,
							 &err))) {
		kj_cli_error(cmd, "out of memory");
		exit_code = KJ_EXIT_FAIL;
		goto out;
	}

	/* A shard of a plan: the plan's settings, device and batch, or
	 * nothing at all. */
	if (args.opt[OPT_PLAN].count) {
		rc = kj_eval_plan_load(args.opt[OPT_PLAN].text, &plan, &err);
		if (rc != KJ_OK) {
			kj_cli_error(cmd, "%s", err.msg);
			exit_code = kj_cli_exit_for(cmd, rc);
			goto out;
		}
		have_plan = 1;
		if (plan.shards != shard_k || strcmp(plan.settings, settings_text) != 0 ||
		    strcmp(plan.device, s.device) != 0) {
			kj_cli_error(cmd, "'%s': a plan of %d shards on %s with settings %s; this "
				     "command: %d shards on %s with %s", args.opt[OPT_PLAN].text,
				     plan.shards, plan.device, plan.settings, shard_k, s.device,
				     settings_text);
			exit_code = KJ_EXIT_USAGE;
			goto out;
		}
	}

	/* The store. */
	rc = kj_store_open(db_path, KJ_STORE_CREATE, 5000, &store, &err);
	if (rc != KJ_OK) {
		kj_cli_error(cmd, "%s", err.msg);
		exit_code = kj_cli_exit_for(cmd, rc);
		goto out;
	}
	/* One eval per store at a time (a shard waits a while for it). */
	if ((eval_lock = kj_eval_lock_store(db_path, shard_k ? 60 : 0, &err)) < 0) {
		kj_cli_error(cmd, "%s", err.msg);
		exit_code = KJ_EXIT_USAGE;
		goto out;
	}
	/* A shard started again goes on from what it published last (another
	 * node's run of it, its local store lost with that node). */
	if (publish_dir) {
		char pub[PATH_MAX];

		char label[PATH_MAX + 32];

		kj_eval_shard_clean(publish_dir, shard_i);
		snprintf(pub, sizeof(pub), "%s/shard-%d.db", publish_dir, shard_i);
		snprintf(label, sizeof(label), "resumed from %s", pub);
		if (access(pub, F_OK) == 0 &&
		    kj__cmd_merge_one(cmd, store, pub, label, prog.quiet ? NULL : stderr, &err) < 0) {
			exit_code = err.code == KJ_EIO ? KJ_EXIT_FAIL : kj_cli_exit_for(cmd, err.code);
			goto out;
		}
	}
	if ((rc = batch_bytes(cmd, store, have_plan ? plan.batch : NULL, batch)) ||
	    (rc = record_run(cmd, &cfg, store, argc, argv, suite, cands, settings_text,
			     args.opt[OPT_GPUS].count ? args.opt[OPT_GPUS].text : NULL,
			     shard_k ? o.shard_text : NULL, have_plan ? plan.id : NULL, &set,
			     &run_id))) {
		exit_code = rc;
		goto out;
	}
	batch_hex_of(batch, batch_hex);

	/* What is left to judge. */
	keys = calloc(set.n_cands ? set.n_cands : 1, sizeof(*keys));
	todo = calloc(set.n_cands ? set.n_cands : 1, sizeof(*todo));
	if (!keys || !todo) {
		kj_cli_error(cmd, "out of memory");
		exit_code = KJ_EXIT_FAIL;
		goto out;
	}
	for (i = 0; i < set.n_cands; i++)
		if (kj_eval_attempt_key(&set.tasks[set.cands[i].task], &set.cands[i], s.device,
					settings_text, keys[i], &err) != KJ_OK) {
			kj_cli_error(cmd, "%s", err.msg);
			exit_code = KJ_EXIT_FAIL;
			goto out;
		}
	if (shard_k) {
		in_shard = calloc(set.n_cands ? set.n_cands : 1, 1);
		if (!in_shard) {
			kj_cli_error(cmd, "out of memory");
			exit_code = KJ_EXIT_FAIL;
			goto out;
		}
		if ((rc = kj_eval_shard_select(&set, (const char (*)[65])keys,
					       have_plan ? &plan : NULL, shard_i, shard_k, in_shard,
					       &err)) != KJ_OK) {
			kj_cli_error(cmd, "%s", err.msg);
			exit_code = rc == KJ_ENOMEM ? KJ_EXIT_FAIL : KJ_EXIT_USAGE;
			goto out;
		}
	}
	prog.total = 0;
	for (i = 0; i < set.n_cands; i++) {
		int st;

		if (in_shard && !in_shard[i])
			continue;
		prog.total++;
		st = attempt_state(store, keys[i], &prog, &err);
		if (st < 0) {
			kj_cli_error(cmd, "%s", err.msg);
			exit_code = KJ_EXIT_USAGE;
			goto out;
		}
		if (st == 2 && !retry) {
			prog.errors++;
			judge_errors++;
		}
		if (st == 1 || (st == 2 && !retry)) {
			prog.done++;
			prog.skipped++;
			continue;
		}
		todo[n_todo++] = i;
	}
	if (slurm) {
		struct kj_cmd_eval_ctx x;

		memset(&x, 0, sizeof(x));
		x.cmd = cmd;
		x.s = &s;
		x.set = &set;
		x.keys = (const char (*)[65])keys;
		x.todo = todo;
		x.n_todo = n_todo;
		x.settings_text = settings_text;
		x.batch_hex = batch_hex;
		x.db_path = db_path;
		x.suite = suite;
		x.cands = cands;
		x.store = store;
		x.jobs = jobs;
		x.quiet = prog.quiet;
		x.judge_errors_before = judge_errors;
		x.retry = retry;
		exit_code = eval_slurm(&x, args.opt, &cfg, argc, argv);
		if (exit_code == KJ_EXIT_OK && finish_run(store, run_id) != 0)
			exit_code = KJ_EXIT_FAIL;
		goto out;
	}
	if (!prog.quiet)
		fprintf(stderr, "kjudge eval: %s%s%s%zu tasks, %zu attempts (%zu already in %s), "
			"%d at once on %d device%s\n", shard_k ? "shard " : "",
			shard_k ? o.shard_text : "", shard_k ? ": " : "", set.n_tasks, prog.total,
			prog.skipped, kj_cli_shown(db_path), jobs, n_devs, n_devs == 1 ? "" : "s");

	/* The batch's own directory: staged tasks and the devices' locks. */
	snprintf(work, sizeof(work), "%s/kjudge-eval-XXXXXX",
		 cfg.tmp_dir);
	if (!mkdtemp(work)) {
		/* A full disk is named as everywhere ("no space left on"). */
		kj_error_write(&err, errno, work, "cannot make the batch's directory");
		kj_cli_error(cmd, "%s", err.msg);
		exit_code = KJ_EXIT_FAIL;
		goto out;
	}
	/* The batch's goldens on huge pages where the shared cache is in
	 * memory anyway (before any thread or child). */
	batch_cache = kj_eval_batch_cache(cfg.cache_dir, work, batch_dir, sizeof(batch_dir),
					  &batch_how);
	if (batch_cache)
		cfg.cache_dir = batch_dir;
	if (!prog.quiet)
		fprintf(stderr, "kjudge eval: golden outputs in %s\n", kj_cli_shown(batch_how));
	/* Each worker's memory, for every worker that runs at once (before
	 * any child: they inherit the judge's lowered OOM score). */
	{
		int on_cpu = strcmp(s.device, "cpu") == 0;
		int programs = (set.kind->flags & KJ_EVAL_KIND_PROGRAMS) != 0;
		char why[96];

		snprintf(why, sizeof(why), "-j %d%s", jobs,
			 programs ? ", a program an attempt"
			 : on_cpu ? " on the CPU, one attempt's two at a time" : ", two an attempt");
		kj_cli_mem_budget(cmd, &cfg, kj_eval_workers_at_once(jobs, on_cpu, programs),
				  why);
		if (!prog.quiet)
			fprintf(stderr, "kjudge eval: memory: %lld MiB a worker%s, %d at once, %lld "
				"MiB kept for the judge, of %lld MiB available (%s)\n",
				cfg.mem.limit >> 20, cfg.mem.user_limit ? " (KJ_LIMIT_MEM_MB)" : "",
				cfg.mem.workers, cfg.mem.headroom >> 20, cfg.mem.available >> 20,
				cfg.mem.source);
	}
	memset(&b, 0, sizeof(b));
	b.exit_code = exit_code;
	b.cmd = cmd;
	b.cfg = &cfg;
	b.s = &s;
	b.slot.store_path = db_path;
	b.slot.run_id = run_id;
	b.slot.work_dir = work;
	b.slot.batch = batch;
	b.slot.settings_text = settings_text;
	b.set = &set;
	b.keys = (const char (*)[65])keys;
	b.todo = todo;
	b.n_todo = n_todo;
	b.prog = &prog;
	b.store = store;
	b.publish_dir = publish_dir;
	b.shard_i = shard_i;
	pool.jobs = jobs;
	pool.devices = (const char (*)[16])o.devs;
	pool.n_devices = n_devs;
	pool.stop = &stop_signal;
	prog.tty = isatty(2);
	prog.t0 = kj__now_s();
	parent_signals();
	/* Attempts share a device where there are more at once than devices. */
	b.slot.shared = jobs > n_devs;
	/* (Without the list, such an attempt is "not judged" and stays
	 * running for the next run.) */
	alone = b.slot.shared ? calloc(n_todo ? n_todo : 1, sizeof(*alone)) : NULL;
	b.alone = alone;
	rc = kj_eval_pool_run(&pool, &ops, &b, &err);
	if (rc == KJ_OK && b.n_alone && !stop_signal && !*b.no_device) {
		/* Each again with the device to itself: one attempt at a time. */
		b.todo = alone;
		b.n_todo = b.n_alone;
		b.next = 0;
		b.alone = NULL;
		b.slot.shared = 0;
		pool.jobs = 1;
		if (!prog.quiet)
			kj__progress_say(&prog, "kjudge eval: %zu attempts again, each alone on its "
					 "device\n", b.n_todo);
		rc = kj_eval_pool_run(&pool, &ops, &b, &err);
	}
	free(alone);
	b.alone = NULL;
	exit_code = batch_end(&b, rc, &err, judge_errors);
	no_device = b.no_device;
	/* What the shard holds, for the merge; its status only when it ended
	 * by itself and everything is published (else --wait submits it
	 * again, and it goes on from its store: a node without the device
	 * is the machine's loss, like a node that failed). */
	if (publish_dir) {
		if (publish(cmd, store, publish_dir, shard_i) < 0)
			exit_code = stop_signal ? exit_code : KJ_EXIT_FAIL;
		else if (!stop_signal && !*no_device)
			shard_status(cmd, &cfg, publish_dir, shard_i, shard_k, have_plan ? plan.id : NULL,
				     exit_code, prog.total, prog.done);
	}
	if (batch_cache)
		kj_eval_batch_cache_end(batch_dir);
	kj__rm_rf(work);
out:
	if (publish_dir && exit_code == KJ_EXIT_USAGE && !*no_device)
		/* Bad input: final, nothing to submit again. */
		shard_status(cmd, &cfg, publish_dir, shard_i, shard_k, have_plan ? plan.id : NULL,
			     exit_code, prog.total, prog.done);
	kj_store_close(store);
	if (eval_lock >= 0)
		close(eval_lock);
	kj_eval_set_release(&set);
	json_decref(settings);
	free(settings_text);
	free(keys);
	free(todo);
	free(in_shard);
	kj_eval_plan_release(&plan);
	kj_cli_args_release(&args);
	return exit_code;
}
