/*
 * eval_options.c - `kjudge eval`'s options (eval_options.h): the table that
 * --help, the man page and the parser read, the settings they make, and
 * the context of a cluster run (--slurm) made from them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/audit.h"
#include "eval_options.h"
#include "base/banned.h"

/* What the reference is (kj_eval_settings.ref_compiled). */
static const char *const eval_baselines[] = { "eager", "compile", NULL };

/* The study's settings given on the command line (cli.h), eval's and
 * serve's: v points at OPT_TIMEOUT's value, the five after it follow. */
void kj_cli_study_settings(const struct kj_cli_value *v, struct kj_eval_settings *s)
{
	if (v[0].count)
		s->judge.timeout_s = v[0].number;
	if (v[1].count)
		s->judge.input_sets = (int)v[1].integer;
	if (v[2].count)
		s->bench.warmup = (int)v[2].integer;
	if (v[3].count)
		s->bench.repeats = (int)v[3].integer;
	if (v[4].count)
		s->bench.max_repeats = (int)v[4].integer;
	if (v[5].count)
		s->bench.budget_s = v[5].number;
}

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
	KJ_STUDY_OPTION_ROWS,
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
	[OPT_NO_AUDIT] = { .name = "no-audit", .type = KJ_CLI_FLAG,
			   .help = "do not audit the tasks (docs/AUDIT.md): no canary is judged "
				   "and the report cannot tell weak tasks (also $KJ_AUDIT=off)" },
	[OPT_AUDIT_CANARIES] = { .name = "audit-canaries", .type = KJ_CLI_CHOICES,
				 .metavar = "LIST", .choices = kj_audit_canary_names,
				 .def = "all",
				 .help = "the audit judges only these canaries (as kjudge audit "
					 "--canaries)" },
	[OPT_COUNT_] = { .name = NULL },
};

int kj__eval_read_options(const struct kj_cli_command *cmd, const struct kj_cli_value *v,
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
	kj_cli_study_settings(v + OPT_TIMEOUT, s);
	s->no_benchmark = v[OPT_VERIFY_ONLY].count > 0;
	s->ref_compiled = v[OPT_BASELINE].count && v[OPT_BASELINE].choice == 1;
	if (v[OPT_PYTHON].count)
		o->python = v[OPT_PYTHON].text;
	o->quiet = v[OPT_QUIET].count > 0;
	o->no_audit = v[OPT_NO_AUDIT].count > 0;
	o->audit_only = v[OPT_AUDIT_CANARIES].count ? v[OPT_AUDIT_CANARIES].mask : 0;
	if (v[OPT_GPUS].count &&
	    kj_eval_parse_gpus(v[OPT_GPUS].text, o->devs, 64, &o->n_devs, &err) != KJ_OK)
		return kj_cli_error(cmd, "%s", err.msg);
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

int kj__eval_slurm(const struct kj_cli_command *cmd, const struct kj_eval_settings *s,
		      const struct kj_eval_set *set, const struct kj_eval_study *st,
		      const struct eval_opts *o, const struct kj_cli_value *v,
		      const struct kj_config *cfg, int argc, char **argv,
		      const struct kj_eval_study_opts *so)
{
	struct kj_cmd_eval_ctx x = {
		.cmd = cmd, .s = s, .set = set, .keys = (const char (*)[65])st->keys,
		.todo = st->todo, .n_todo = st->n_todo, .settings_text = so->settings_text,
		.batch_hex = st->batch_hex, .db_path = o->db_path, .suite = so->suite,
		.cands = so->cands,
		.store = st->store, .jobs = o->jobs, .quiet = o->quiet,
		.judge_errors_before = st->counts.judge_errors, .retry = o->retry,
		.python = cfg->python, .poll_s = cfg->slurm_poll_s, .slurm_cmd_s = cfg->slurm_cmd_s,
		.environ = cfg->environ, .path_env = kj_config_env(cfg, "PATH"),
		.partition = v[OPT_PARTITION].text, .time_limit = v[OPT_TIME].text,
		.slurm_dir = v[OPT_SLURM_DIR].text,
		.gpus_per_task = v[OPT_GPUS_PER_TASK].count ? (int)v[OPT_GPUS_PER_TASK].integer : -1,
		.shards = v[OPT_SHARDS].count ? (int)v[OPT_SHARDS].integer : 0,
		.wait = v[OPT_WAIT].count > 0,
		.max_resubmits = v[OPT_MAX_RESUBMITS].count ? (int)v[OPT_MAX_RESUBMITS].integer : 3,
		.apis = v[OPT_API].text, .no_audit = o->no_audit,
		.audit_only = o->audit_only,
	};
	const char **extra = calloc((size_t)argc + 1, sizeof(*extra));
	int a, opts_done = 0, rc;

	if (!extra) {
		kj_cli_error(cmd, "out of memory");
		return KJ_EXIT_FAIL;
	}
	/* Every --sbatch-arg, in order (the parser keeps the last). */
	for (a = 1; a < argc && !opts_done; a++) {
		const char *val;

		if (strcmp(argv[a], "--") == 0)
			opts_done = 1;
		else if (kj_cli_long_is(argv[a], "sbatch-arg", &val) && val)
			extra[x.n_sbatch_args++] = val;
		else if (kj_cli_long_is(argv[a], "sbatch-arg", &val) && a + 1 < argc)
			extra[x.n_sbatch_args++] = argv[++a];
	}
	x.sbatch_args = extra;
	rc = kj__cmd_eval_slurm(&x);
	free(extra);
	return rc;
}

