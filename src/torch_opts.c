/*
 * torch_opts.c - the options `kjudge verify` and `kjudge benchmark` share
 * (their rows are KJ_TORCH_OPTION_ROWS in cli.h, so that both accept the
 * same values), the environment both read, and the JSON file writer both
 * use.
 */
#include <stdlib.h>
#include <string.h>

#include "kjudge/fileio.h"
#include "cli.h"
#include "base/vec.h"
#include "base/banned.h"

const char *const kj_cli_devices[] = { "cpu", "cuda", "cuda:N", NULL };
/* Index 0 is each command's default: verify and benchmark compare integers
 * exactly, float64 by the seed's rule. */
const char *const kj_cli_int_rules[] = { "exact", "spec", NULL };
const char *const kj_cli_float64_rules[] = { "spec", "float64", NULL };

const struct kj_cli_env kj_cli_torch_env[] = {
	{ "KJ_PYTHON", "the workers' interpreter, with torch (and Triton for Triton "
		       "candidates), when --python is not given; else the interpreter make "
		       "install recorded, or the .venv of the checkout kjudge was built in, "
		       "else python3 (kjudge doctor says which)" },
	{ "KJ_STATE_DIR", "where the secret seed key lives (default "
			  "$XDG_STATE_HOME/kjudge, else ~/.local/state/kjudge)" },
	{ "KJ_CACHE_DIR", "the golden cache (default /dev/shm/kjudge-cache-UID; off "
			  "disables it: a run keeps its goldens in its scratch directory, "
			  "nothing past the run)" },
	{ "KJ_CACHE_MAX_MB", "the golden cache's cap (default a quarter of its file "
			     "system)" },
	{ "KJ_CACHE_SHARED", "a second golden cache, read and never written (a "
			     "cluster's shared one; default none)" },
	{ "KJ_SCRATCH_DIR", "where a run's scratch directory is made (default "
			    "/dev/shm, else $TMPDIR, else /tmp)" },
	{ "KJ_SCRATCH", "shared keeps the scratch directory a plain directory" },
	{ "KJ_SANDBOX", "off runs candidate workers without the sandbox" },
	{ "KJ_LIMIT_MEM_MB", "a worker's memory (default its share of the machine's "
			     "available memory: docs/cli.md, Memory)" },
	{ "KJ_LIMIT_CPU_S", "its CPU time in seconds (default 14400)" },
	{ "KJ_LIMIT_PROCS", "its processes and threads (default 1024)" },
	{ "KJ_LIMIT_FILE_MB", "the largest file it may write (default a quarter of RAM)" },
	{ "KJ_LIMIT_NOFILE", "the files it may have open (default 4096)" },
	{ "KJ_LIMIT_TMP_MB", "its private /tmp and /dev/shm (default 256)" },
	{ "KJ_LIMIT_OUTPUT_KB", "what it may print on each stream per call of a request "
				"(default 256)" },
	{ "KJ_THREADS", "the comparator's threads (default 0: one per CPU, at most 16)" },
	{ "KJ_DEVICE_COMPARE", "auto compares large CUDA outputs on the device (the default), "
			       "off sends every output through host memory, all every "
			       "tensor output (CPU ones too)" },
	{ "KJ_TIME_BUDGET", "benchmark's default --time_budget in seconds (default 10)" },
	{ "TRITON_INTERPRET", "passed to the workers; the worker sets it to 1 on the "
			      "CPU unless it is given" },
	{ NULL, NULL },
};


void kj_cli_torch_opts(const struct kj_cli_args *a, struct kj_torch_spec *s,
		       struct kj_judge_opts *o, const char **python)
{
	const struct kj_cli_value *v = a->opt;

	if (v[KJ_OPT_OP_NAME].count)
		s->op_name = v[KJ_OPT_OP_NAME].text;
	if (v[KJ_OPT_VERIFY_DIR].count)
		s->verify_dir = v[KJ_OPT_VERIFY_DIR].text;
	if (v[KJ_OPT_IMPL].count)
		s->impl_name = v[KJ_OPT_IMPL].text;
	if (v[KJ_OPT_DEVICE].count)
		s->device = v[KJ_OPT_DEVICE].text;
	if (v[KJ_OPT_TIMEOUT].count)
		s->timeout_s = o->timeout_s = v[KJ_OPT_TIMEOUT].number;
	if (v[KJ_OPT_SEED].count) {
		o->seed = (uint64_t)v[KJ_OPT_SEED].integer;
		o->seed_fixed = 1;
	}
	if (v[KJ_OPT_INT_RULE].count)
		o->cmp.int_rule = v[KJ_OPT_INT_RULE].choice ? KJ_CMP_INT_SPEC : KJ_CMP_INT_EXACT;
	if (v[KJ_OPT_FLOAT64_RULE].count)
		o->cmp.float64_rule = v[KJ_OPT_FLOAT64_RULE].choice ? KJ_CMP_FLOAT64_FLOAT64
								  : KJ_CMP_FLOAT64_SPEC;
	*python = v[KJ_OPT_PYTHON].count ? v[KJ_OPT_PYTHON].text : NULL;
}

int kj_cli_write_json(const struct kj_cli_command *cmd, const char *path,
		      const json_t *j)
{
	struct kj_error err;
	char *text = kj_json_text(j, JSON_INDENT(2) | JSON_REAL_PRECISION(12), &err);
	size_t len;
	int rc;

	if (!text) {
		kj_cli_error(cmd, "'%s': the record cannot be written: %s", path, err.msg);
		return -1;
	}
	len = strlen(text);
	if (KJ__RESIZE(text, len + 2) != KJ_OK) {
		free(text);
		kj_cli_error(cmd, "out of memory");
		return -1;
	}
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
