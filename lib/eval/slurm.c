/*
 * slurm.c - what kjudge eval --slurm writes for Slurm and reads back from
 * it (kjudge/eval.h): the shards' batch script and squeue's lines.  No
 * Slurm here: the commands are run by the CLI (src/cmd_eval_slurm.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/eval.h"
#include "base/internal.h"
#include "base/vec.h"

/* s as one single-quoted shell word. */
static void sh_word(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}

static int word_ok(const char *s)
{
	return s && *s && !strchr(s, '\n') && !strchr(s, '\r');
}

int kj_eval_slurm_path_ok(const char *path, struct kj_error *err)
{
	if (!word_ok(path))
		return kj_error_set(err, KJ_EINVAL, "'%s': a path with a newline (or none) cannot "
				    "be written into a batch script", path ? path : "");
	/* sbatch reads a backslash in an #SBATCH line as an escape, and Slurm
	 * a backslash in an output file's name as "replace no pattern": %a
	 * would stay %a, every shard's log one file. */
	if (strchr(path, '\\'))
		return kj_error_set(err, KJ_EINVAL, "'%s': a path with a backslash cannot be "
				    "an #SBATCH --output (Slurm would replace none of its %%a); "
				    "choose another --db or --slurm-dir", path);
	return KJ_OK;
}

/*
 * dir, then the filename pattern `pattern`, as one value of an #SBATCH line
 * (kj_eval_slurm_path_ok said dir can be one): single-quoted, since sbatch
 * groups quoted text there (a blank stays inside); a quote of dir escaped
 * with a backslash, and each of its '%' doubled (Slurm's filename patterns
 * read %% as one %, and %j, %a, %u as the job, the task, the user).
 */
static void sbatch_path(FILE *f, const char *dir, const char *pattern)
{
	fputc('\'', f);
	for (; *dir; dir++) {
		if (*dir == '%')
			fputs("%%", f);
		else if (*dir == '\'')
			fputs("\\'", f);
		else
			fputc(*dir, f);
	}
	fputs(pattern, f);
	fputc('\'', f);
}

char *kj_eval_slurm_script(const struct kj_eval_slurm_job *j, struct kj_error *err)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int i;

	/* A name with a newline would end an #SBATCH line, or a line of the
	 * script, early. */
	if (!word_ok(j->kjudge) || !word_ok(j->suite) || !word_ok(j->cands) ||
	    !word_ok(j->plan_path) || !word_ok(j->shards_dir) || !word_ok(j->logs_dir) ||
	    !word_ok(j->plan_id) || j->shards < 1)
		return kj_error_set(err, KJ_EINVAL, "a path with a newline, or no shards: "
				    "cannot be written into a batch script"), NULL;
	if (kj_eval_slurm_path_ok(j->logs_dir, err) != KJ_OK)
		return NULL;
	for (i = 0; i < j->n_eval_args; i++)
		if (!word_ok(j->eval_args[i]))
			return kj_error_set(err, KJ_EINVAL, "an argument with a newline cannot "
					    "be written into a batch script"), NULL;
	f = open_memstream(&text, &len);
	if (!f)
		return kj_error_set(err, KJ_ENOMEM, "out of memory"), NULL;
	fprintf(f, "#!/bin/sh\n"
		   "# The shards of kjudge plan %s, one array task each (written by kjudge\n"
		   "# eval --slurm; docs/slurm.md).  Each judges its attempts into a store\n"
		   "# on the node's own disk (SQLite's WAL needs one) and publishes it\n"
		   "# atomically into the shared directory as it goes and when done.\n"
		   "#SBATCH --job-name=kjudge-%.8s\n"
		   "#SBATCH --output=", j->plan_id, j->plan_id);
	sbatch_path(f, j->logs_dir, "/shard-%a.out");
	fprintf(f, "\n"
		   "#SBATCH --open-mode=append\n"
		   "#SBATCH --requeue\n"
		   "set -u\n"
		   "i=\"${SLURM_ARRAY_TASK_ID:?kjudge: not a Slurm array task}\"\n"
		   "echo \"kjudge shard $i/%d: job ${SLURM_JOB_ID:-?} on $(hostname), restart "
		   "${SLURM_RESTART_COUNT:-0}, $(date -u +%%Y-%%m-%%dT%%H:%%M:%%SZ)\"\n"
		   "local=\"${KJ_SHARD_DIR:-${TMPDIR:-/tmp}}/kjudge-shard-%s\"\n"
		   "mkdir -p \"$local\" || exit 1\n"
		   "exec ", j->shards, j->plan_id);
	sh_word(f, j->kjudge);
	fputs(" eval ", f);
	sh_word(f, j->suite);
	fputc(' ', f);
	sh_word(f, j->cands);
	fprintf(f, " --db \"$local/shard-$i.db\" --shard \"$i/%d\" --plan ", j->shards);
	sh_word(f, j->plan_path);
	fputs(" --publish ", f);
	sh_word(f, j->shards_dir);
	for (i = 0; i < j->n_eval_args; i++) {
		fputc(i % 4 == 0 ? '\\' : ' ', f);
		if (i % 4 == 0)
			fputs("\n\t", f);
		sh_word(f, j->eval_args[i]);
	}
	fputc('\n', f);
	if (fclose(f) != 0 || !text) {
		free(text);
		return kj_error_set(err, KJ_ENOMEM, "out of memory"), NULL;
	}
	return text;
}

static int push(struct kj_eval_slurm_task **out, size_t *n, size_t *cap, long long job, int task,
		const char *state)
{
	if (KJ__GROW(*out, *cap, *n + 1) != KJ_OK)
		return -2;
	(*out)[*n].job = job;
	(*out)[*n].task = task;
	snprintf((*out)[*n].state, sizeof((*out)[*n].state), "%s", state);
	(*n)++;
	return 0;
}

/* "2-3,5,7-9%4" (an array's pending range, a limit after '%') into tasks:
 * 0, -1 when malformed, -2 out of memory. */
static int add_range(const char *s, const char *end, long long job, const char *state,
		     struct kj_eval_slurm_task **out, size_t *n, size_t *cap)
{
	while (s < end) {
		char *e;
		long a, b, t;

		errno = 0;
		a = strtol(s, &e, 10);
		if (e == s || errno || a < 0)
			return -1;
		b = a;
		if (*e == '-') {
			s = e + 1;
			b = strtol(s, &e, 10);
			if (e == s || errno || b < a)
				return -1;
		}
		if (b - a > 1000000)
			return -1;
		for (t = a; t <= b; t++)
			if (push(out, n, cap, job, (int)t, state))
				return -2;
		if (e < end && *e == '%')
			return 0;
		if (e < end && *e != ',')
			return -1;
		s = e < end ? e + 1 : end;
	}
	return 0;
}

int kj_eval_slurm_parse_queue(const char *text, struct kj_eval_slurm_task **out, size_t *n,
			      struct kj_error *err)
{
	size_t cap = 0;
	int line = 0;

	*out = NULL;
	*n = 0;
	while (text && *text) {
		const char *eol = strchr(text, '\n'), *p = text, *end;
		char id[128], state[32];
		long long job;
		char *e;
		int rc = 0;

		line++;
		if (!eol)
			eol = text + strlen(text);
		while (p < eol && (*p == ' ' || *p == '\t'))
			p++;
		if (p == eol) {
			text = *eol ? eol + 1 : eol;
			continue;
		}
		if (sscanf(p, "%127s %31s", id, state) != 2)
			goto bad;
		errno = 0;
		job = strtoll(id, &e, 10);
		if (e == id || errno || job <= 0)
			goto bad;
		end = id + strlen(id);
		if (*e == '\0') {
			rc = push(out, n, &cap, job, -1, state);
		} else if (*e == '_' && e[1] == '[' && end[-1] == ']') {
			rc = add_range(e + 2, end - 1, job, state, out, n, &cap);
		} else if (*e == '_') {
			rc = add_range(e + 1, end, job, state, out, n, &cap);
		} else {
			goto bad;
		}
		if (rc == -2) {
			free(*out);
			*out = NULL;
			*n = 0;
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
		}
		if (rc)
			goto bad;
		text = *eol ? eol + 1 : eol;
		continue;
bad:
		free(*out);
		*out = NULL;
		*n = 0;
		return kj_error_set(err, KJ_EINVAL, "squeue's line %d is not 'JOBID[_TASK] "
				    "STATE': %.*s", line, (int)(eol - text > 200 ? 200 : eol - text),
				    text);
	}
	return KJ_OK;
}
