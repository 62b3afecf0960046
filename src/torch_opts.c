/*
 * torch_opts.c - the options `kjudge verify` and `kjudge benchmark` share
 * (their rows are KJ_TORCH_OPTION_ROWS in cli.h, so that both accept the
 * same values), the environment both read, and the JSON file writer both
 * use.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "base/banned.h"

const char *const kj_cli_devices[] = { "cpu", "cuda", "cuda:N", NULL };

const struct kj_cli_env kj_cli_torch_env[] = {
	{ "KJ_PYTHON", "the workers' interpreter, with torch (and Triton for Triton "
		       "candidates), when --python is not given; else python3" },
	{ "KJ_STATE_DIR", "where the secret seed key lives (default "
			  "$XDG_STATE_HOME/kjudge, else ~/.local/state/kjudge)" },
	{ "KJ_CACHE_DIR", "the golden cache (default /dev/shm/kjudge-cache-UID; off "
			  "disables it)" },
	{ "KJ_CACHE_MAX_MB", "the golden cache's cap (default a quarter of its file "
			     "system)" },
	{ "KJ_SCRATCH_DIR", "where a run's scratch directory is made (default "
			    "/dev/shm, else $TMPDIR, else /tmp)" },
	{ "KJ_SCRATCH", "shared keeps the scratch directory a plain directory" },
	{ "KJ_SANDBOX", "off runs candidate workers without the sandbox" },
	{ "KJ_LIMIT_MEM_MB", "a candidate worker's memory (default half of RAM)" },
	{ "KJ_LIMIT_CPU_S", "its CPU time in seconds (default 14400)" },
	{ "KJ_LIMIT_PROCS", "its processes and threads (default 1024)" },
	{ "KJ_LIMIT_FILE_MB", "the largest file it may write (default a quarter of RAM)" },
	{ "TRITON_INTERPRET", "passed to the workers; the worker sets it to 1 on the "
			      "CPU unless it is given" },
	{ NULL, NULL },
};

void kj_cli_torch_opts(const struct kj_cli_args *a, struct kj_torch_opts *o)
{
	const struct kj_cli_value *v = a->opt;

	if (v[KJ_OPT_OP_NAME].count)
		o->op_name = v[KJ_OPT_OP_NAME].text;
	if (v[KJ_OPT_VERIFY_DIR].count)
		o->verify_dir = v[KJ_OPT_VERIFY_DIR].text;
	if (v[KJ_OPT_IMPL].count)
		o->impl_name = v[KJ_OPT_IMPL].text;
	if (v[KJ_OPT_DEVICE].count)
		o->device = v[KJ_OPT_DEVICE].text;
	if (v[KJ_OPT_TIMEOUT].count)
		o->timeout_s = v[KJ_OPT_TIMEOUT].number;
	if (v[KJ_OPT_SEED].count) {
		o->seed = (uint64_t)v[KJ_OPT_SEED].integer;
		o->seed_fixed = 1;
	}
	if (v[KJ_OPT_PYTHON].count)
		o->python = v[KJ_OPT_PYTHON].text;
}

int kj_cli_write_json(const struct kj_cli_command *cmd, const char *path,
		      const json_t *j)
{
	char *text = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
	struct kj_error err;
	size_t len;
	char *t2;
	int rc;

	if (!text) {
		kj_cli_error(cmd, "out of memory");
		return -1;
	}
	len = strlen(text);
	t2 = realloc(text, len + 2);
	if (!t2) {
		free(text);
		kj_cli_error(cmd, "out of memory");
		return -1;
	}
	text = t2;
	text[len] = '\n';
	text[len + 1] = '\0';
	rc = kj_write_file_atomic(path, text, len + 1, &err);
	free(text);
	if (rc != KJ_OK) {
		kj_cli_error(cmd, "%s", err.msg);
		return -1;
	}
	return 0;
}
