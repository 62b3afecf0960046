/*
 * torch_run.c - what `kjudge verify` and `kjudge benchmark` do around the
 * library's pipeline: the context from flags and the environment, the
 * attempt, the task, the summary on stdout, the exit on an interrupt, and
 * the release of everything whatever happened (struct kj_cli_torch).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kjudge/fileio.h"
#include "kjudge/pipeline.h"
#include "kjudge/proc.h"
#include "kjudge/torch.h"
#include "cli.h"
#include "interrupt.h"
#include "base/banned.h"

int kj_cli_torch_setup(const struct kj_cli_command *cmd, const struct kj_cli_args *a,
		       struct kj_cli_torch *run)
{
	const char *python = NULL;

	memset(run, 0, sizeof(*run));
	kj_torch_spec_init(&run->spec);
	kj_judge_opts_init(&run->judge);
	kj_result_init(&run->result);
	kj_cli_torch_opts(a, &run->spec, &run->judge, &python);
	return kj_cli_config(cmd, &run->cfg, python);
}

/* Why a step before the run failed, and the exit status: the command's
 * own for the judge's failure (out of memory, a full disk), else that of
 * bad input. */
static int prepare_failed(const struct kj_cli_command *cmd, struct kj_cli_torch *run)
{
	kj_cli_error(cmd, "%s", run->err.msg);
	return kj_cli_torch_close(run, kj_cli_exit_for(cmd, run->err.code));
}

/* The attempt, its keys and the task of run, opened: KJ_OK, or a code
 * with run->err filled (what is open stays for kj_cli_torch_close). */
static int open_task(struct kj_cli_torch *run)
{
	int rc = kj_attempt_open(&run->attempt, &run->cfg, &run->err);

	if (rc != KJ_OK)
		return rc;
	run->attempt_open = 1;
	/* The key signs the verify record even when the seeds are fixed. */
	rc = kj_seed_key(run->cfg.state_dir, run->attempt.key, &run->err);
	if (rc != KJ_OK)
		return rc;
	run->attempt.have_key = 1;
	/* Fresh seeds for this run: a seed printed in a failure record is
	 * worthless to the next one (--seed replays it). */
	rc = kj_seed_run_key(run->attempt.key, NULL, run->attempt.run_key, &run->err);
	if (rc != KJ_OK)
		return rc;
	rc = kj_torch_open(&run->cfg, &run->attempt, &run->spec, &run->task, &run->err);
	if (rc != KJ_OK)
		return rc;
	run->task_open = 1;
	return KJ_OK;
}

int kj_cli_torch_prepare(const struct kj_cli_command *cmd, struct kj_cli_torch *run)
{
	/* Two workers at once: the reference's and the candidate's. */
	kj_cli_mem_budget(cmd, &run->cfg, 2, "the reference's and the candidate's");
	/* From here on, a signal takes every worker with it and the run
	 * unwinds (kj_cli_interrupted). */
	if (kj_cli_guard(cmd))
		return KJ_EXIT_USAGE;
	if (open_task(run) != KJ_OK)
		return prepare_failed(cmd, run);
	return 0;
}

int kj_cli_torch_disabled(const struct kj_cli_command *cmd, struct kj_cli_torch *run,
			  struct kj_layer *out)
{
	struct kj_cli_torch d;
	int rc;

	/* Nothing more is asked of run's workers: they go now, so that their
	 * memory (on a GPU, the reference's kept outputs) is the new ones' to
	 * use.  What they said stays in run->task for the record. */
	if (run->task.ref.ops && run->task.ref.ops->kill)
		run->task.ref.ops->kill(&run->task.ref);
	if (run->task.cand.ops && run->task.cand.ops->kill)
		run->task.cand.ops->kill(&run->task.cand);

	/* The same task on the device the run found, one input set (enough
	 * to show that outputs depend on the kernels), the launches no-ops. */
	memset(&d, 0, sizeof(d));
	d.cfg = run->cfg;
	d.spec = run->spec;
	d.spec.device = run->task.device;
	d.spec.kernels_disabled = 1;
	d.spec.profile_kernels = 0;
	d.judge = run->judge;
	d.judge.input_sets = 1;
	kj_result_init(&d.result);
	rc = open_task(&d);
	if (rc == KJ_OK)
		rc = kj_task_start(&d.task, &d.attempt, &d.judge, &d.err);
	if (rc == KJ_OK)
		rc = kj_verify(&d.task, &d.attempt, &d.judge, NULL, &d.result, &d.err);
	if (rc == KJ_EINTR)
		return kj_cli_torch_close(&d, kj_cli_interrupted(cmd));
	if (rc == KJ_ENOMEM) {
		kj_cli_error(cmd, "%s", d.err.msg);
		return kj_cli_torch_close(&d, kj_cli_exit_for(cmd, rc));
	}
	kj_disabled_layer_result(rc == KJ_OK, d.err.msg, &d.result, out);
	return kj_cli_torch_close(&d, 0);
}

int kj_cli_torch_start(const struct kj_cli_command *cmd, struct kj_cli_torch *run)
{
	int rc = kj_task_start(&run->task, &run->attempt, &run->judge, &run->err);

	if (rc == KJ_EINTR)
		return kj_cli_interrupted(cmd);
	if (rc != KJ_OK) {
		kj_cli_error(cmd, "%s", run->err.msg);
		return KJ_EXIT_USAGE;
	}
	return 0;
}

int kj_cli_torch_open(const struct kj_cli_command *cmd, struct kj_cli_torch *run)
{
	int rc = kj_cli_torch_prepare(cmd, run);

	if (rc)
		return rc;
	rc = kj_cli_torch_start(cmd, run);
	return rc ? kj_cli_torch_close(run, rc) : 0;
}

int kj_cli_torch_close(struct kj_cli_torch *run, int exit_code)
{
	kj_result_release(&run->result);
	if (run->task_open)
		kj_task_close(&run->task);
	if (run->attempt_open)
		kj_attempt_close(&run->attempt);
	run->task_open = run->attempt_open = 0;
	return exit_code;
}

int kj_cli_check_output(const struct kj_cli_command *cmd, const char *path, const char *keep)
{
	char dir[PATH_MAX], probe[PATH_MAX + 32];
	const char *slash = strrchr(path, '/');
	struct kj_error err;
	struct stat st;
	int fd;

	/* A directory, a device, a store or its log: never replaced. */
	if (kj_output_check(path, keep, &err) != KJ_OK)
		return kj_cli_error(cmd, "%s", err.msg);
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return kj_cli_error(cmd, "'%s': cannot write the output there: '%s' is not a "
				    "directory", path, dir);
	/* The atomic writer makes a temporary file beside it: try exactly that. */
	snprintf(probe, sizeof(probe), "%s/.kjudge-probe-%d", dir, (int)getpid());
	fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return kj_cli_error(cmd, "'%s': cannot write the output there: %s", path,
				    strerror(errno));
	close(fd);
	unlink(probe);
	return 0;
}

void kj_cli_print_cases(FILE *out, const struct kj_cli_torch *run, const char *written_to)
{
	const struct kj_result *r = &run->result;
	int passed, i;

	kj_result_counts(r, &passed, NULL, NULL, NULL);
	fprintf(out, "%s: %d/%d cases passed (device %s, %s seeds); written to %s\n",
		kj_cli_shown(run->task.name), passed, r->n_cases, kj_cli_shown(run->task.device),
		r->seed_fixed ? "fixed" : "secret", kj_cli_shown(written_to));
	for (i = 0; i < r->n_cases; i++) {
		const struct kj_case *c = &r->cases[i];
		const char *msg = c->message ? c->message : kj_etype_text(c->type);
		char line[304];
		int len = 0;

		if (kj_case_status(c) == KJ_STATUS_PASS)
			continue;
		/* The first line: the worker puts the exception there, and the
		 * candidate its text (shown, never raw). */
		while (msg[len] && msg[len] != '\n' && len < 300)
			len++;
		snprintf(line, sizeof(line), "%.*s", len, msg);
		fprintf(out, "  case %d: %s: %s\n", i + 1, kj_etype_name(c->type),
			kj_cli_shown(line));
	}
}
