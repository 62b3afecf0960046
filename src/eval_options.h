/*
 * eval_options.h - `kjudge eval`'s options (eval_options.c): their table,
 * read into the settings and the command's own choices, and the cluster
 * run's context made from them.  Shared by cmd_eval.c and nothing else.
 */
#ifndef KJ_EVAL_OPTIONS_H
#define KJ_EVAL_OPTIONS_H

#include "kjudge/eval.h"
#include "cli.h"
#include "cmd_eval.h"

enum {
	OPT_DB,
	OPT_JOBS,
	OPT_GPUS,
	OPT_DEVICE,
	OPT_RETRY,
	KJ_STUDY_OPTION_ENUMS,
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
	OPT_NO_AUDIT,
	OPT_AUDIT_CANARIES,
	OPT_COUNT_
};

/* The options of eval as the command reads them. */
struct eval_opts {
	const char *db_path, *python, *publish_dir;
	int jobs, retry, quiet, slurm;
	int no_audit;                    /* --no-audit */
	unsigned audit_only;             /* --audit-canaries: bit c, canary c; 0: all */
	char devs[64][16];               /* --gpus, else the device */
	int n_devs;
	int shard_i, shard_k;            /* --shard I/K; k 0: none */
	char shard_text[32];
};

/* The options into o and the settings s: 0, or the exit status after
 * saying what is wrong. */
int kj__eval_read_options(const struct kj_cli_command *cmd, const struct kj_cli_value *v,
			  struct kj_eval_settings *s, struct eval_opts *o);

/* `eval --slurm`: the study as the command found it, completed with the
 * cluster's options and the run's context.  Returns the exit status. */
int kj__eval_slurm(const struct kj_cli_command *cmd, const struct kj_eval_settings *s,
		   const struct kj_eval_set *set, const struct kj_eval_study *st,
		   const struct eval_opts *o, const struct kj_cli_value *v,
		   const struct kj_config *cfg, int argc, char **argv,
		   const struct kj_eval_study_opts *so);

#endif /* KJ_EVAL_OPTIONS_H */
