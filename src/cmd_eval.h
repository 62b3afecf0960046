/*
 * cmd_eval.h - what `kjudge eval` (cmd_eval.c) shares with its cluster
 * runner (cmd_eval_slurm.c) and `kjudge merge` (cmd_merge.c).
 */
#ifndef KJ_CMD_EVAL_H
#define KJ_CMD_EVAL_H

#include "kjudge/eval.h"
#include "kjudge/store.h"
#include "cli.h"

/* What eval found before it would judge: borrowed, valid for the call. */
struct kj_cmd_eval_ctx {
	const struct kj_cli_command *cmd;
	const struct kj_eval_settings *s;
	const struct kj_eval_set *set;
	const char (*keys)[65];          /* per candidate */
	const size_t *todo;              /* the attempts the store does not hold */
	size_t n_todo;
	const char *settings_text;
	const char *batch_hex;           /* the store's batch, 32 hex digits */
	const char *db_path, *suite, *cands; /* as given */
	struct kj_store *store;          /* the target, open for writing */
	int jobs;
	const char *python;              /* the workers' Python, as resolved */
	double poll_s;                   /* --wait's period ($KJ_SLURM_POLL_S) */
	double slurm_cmd_s;              /* a Slurm command's deadline ($KJ_SLURM_CMD_S) */
	char *const *environ;            /* the judge's environment, for Slurm's commands */
	const char *path_env;            /* its PATH, where they are looked for */
	int quiet;
	/* The cluster's options (--slurm). */
	const char *partition, *time_limit, *slurm_dir; /* NULL: not given */
	int gpus_per_task;               /* -1: not given */
	int shards;                      /* 0: not given */
	int wait, max_resubmits, retry;
	const char **sbatch_args;        /* every --sbatch-arg, in order */
	int n_sbatch_args;
	size_t judge_errors_before;      /* judge errors of earlier runs, not retried */
	const char *apis;                /* --api (a suite of specs), NULL: not given */
	int no_audit;                    /* --no-audit: the shards audit nothing */
	unsigned audit_only;             /* --audit-canaries, as a mask; 0: all */
};

/* `kjudge eval --slurm`: plan, submit, and with --wait follow, resubmit and
 * merge.  Returns the exit status. */
int kj__cmd_eval_slurm(const struct kj_cmd_eval_ctx *x);

/* Merge the store at src into s and say so on out (NULL: quietly), as
 * "LABEL: N attempts new, ...": merge's lines on stdout, eval's on stderr
 * with its other messages.  0, or -1 after printing why (err filled). */
int kj__cmd_merge_one(const struct kj_cli_command *cmd, struct kj_store *s, const char *src,
		      const char *label, FILE *out, struct kj_error *err);

#endif /* KJ_CMD_EVAL_H */
