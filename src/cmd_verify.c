/*
 * cmd_verify.c - `kjudge verify`: verify.py of triton-op-verifier, in C.
 *
 * Same flags, defaults, file layout, verify_result.json and exit codes
 * (Policy A: 0 iff every case passed, 1 otherwise, "验证超时" on a timeout);
 * 2 when nothing could be judged (bad flags, no task file, no Python).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/proc.h"
#include "kjudge/torch.h"
#include "cli.h"
#include "interrupt.h"
#include "base/banned.h"

enum {
	OPT_OUTPUT = KJ_OPT_TORCH_END_,
	OPT_INPUT_SETS,
};

const struct kj_cli_option kj_verify_options[] = {
	KJ_TORCH_OPTION_ROWS("seconds each case may take on each side (default 900)",
			     "use seed N for every case, one input set (0 reproduces verify.py)"),
	{ "output", OPT_OUTPUT, "FILE", "result file (default DIR/verify_result.json)" },
	{ "input_sets", OPT_INPUT_SETS, "N", "input sets per case with secret seeds (default 2)" },
	{ NULL, 0, NULL, NULL },
};

static void print_summary(const json_t *res, const char *out_path)
{
	size_t i;
	const json_t *failures = json_object_get(res, "failures");

	printf("%s: %lld/%lld cases passed (device %s, %s seeds); written to %s\n",
	       json_string_value(json_object_get(res, "op_name")),
	       json_integer_value(json_object_get(res, "passed_cases")),
	       json_integer_value(json_object_get(res, "total_cases")),
	       json_string_value(json_object_get(json_object_get(res, "kjudge"), "device")),
	       json_string_value(json_object_get(json_object_get(res, "kjudge"), "seeds")),
	       out_path);
	for (i = 0; i < json_array_size(failures); i++) {
		const json_t *f = json_array_get(failures, i);
		const char *msg = json_string_value(json_object_get(f, "error_msg"));
		int len = 0;

		while (msg && msg[len] && msg[len] != '\n' && len < 300)
			len++;
		printf("  case %lld: %s: %.*s\n",
		       json_integer_value(json_object_get(f, "case_idx")),
		       json_string_value(json_object_get(f, "error_type")), len,
		       msg ? msg : "");
	}
}

int kj_cmd_verify(const struct kj_cli_command *cmd, int argc, char **argv)
{
	struct kj_torch_opts o;
	struct kj_cli_parser p;
	struct kj_error err;
	const char *output = NULL;
	char out_path[4200];
	json_t *res = NULL;
	int c, rc, sets;

	kj_torch_opts_init(&o);
	kj_cli_parser_init(&p, cmd, argc, argv);
	while ((c = kj_cli_next(&p)) != KJ_CLI_END) {
		switch (c) {
		case KJ_CLI_HELP:
			kj_cli_print_help(stdout, cmd);
			return KJ_EXIT_OK;
		case OPT_OUTPUT:
			output = p.arg;
			break;
		case OPT_INPUT_SETS:
			sets = kj_cli_parse_uint(cmd, "input_sets", p.arg, 100);
			if (sets < 1)
				return sets < 0 ? KJ_EXIT_USAGE
						: kj_cli_error(cmd, "--input_sets must be at least 1");
			o.input_sets = sets;
			break;
		default:
			rc = kj_cli_torch_option(cmd, c, p.arg, &o);
			if (rc <= 0)
				return KJ_EXIT_USAGE;
		}
	}
	if (kj_cli_torch_check(cmd, argc, argv, &o))
		return KJ_EXIT_USAGE;
	if (output)
		snprintf(out_path, sizeof(out_path), "%s", output);
	else if (snprintf(out_path, sizeof(out_path), "%s/verify_result.json",
			  o.verify_dir) >= (int)sizeof(out_path))
		return kj_cli_error(cmd, "--verify_dir too long");

	if (kj_cli_guard(cmd))
		return KJ_EXIT_USAGE;
	rc = kj_torch_verify(&o, &res, &err);
	/* A run a signal interrupted judged nothing: no verdict is written. */
	if (kj_proc_interrupted()) {
		json_decref(res);
		return kj_cli_interrupted(cmd);
	}
	if (rc != KJ_OK)
		return kj_cli_error(cmd, "%s", err.msg);
	if (kj_cli_write_json(cmd, out_path, res)) {
		json_decref(res);
		return KJ_EXIT_USAGE;
	}
	print_summary(res, out_path);
	if (json_is_true(json_object_get(json_object_get(res, "kjudge"), "timed_out")))
		fprintf(stderr, "验证超时（%g秒）\n", o.timeout_s);
	/* Failures of the machine (a sandbox or worker that could not be
	 * restarted) are not the candidate's: the run is a judge error. */
	if (json_integer_value(json_object_get(json_object_get(res, "kjudge"),
					       "infrastructure_errors")) > 0) {
		json_decref(res);
		return kj_cli_error(cmd, "the machine failed during the run (see the "
				    "SandboxError or SpawnError failures in %s); "
				    "the verdict is not the candidate's", out_path);
	}
	rc = json_integer_value(json_object_get(res, "passed_cases")) ==
			     json_integer_value(json_object_get(res, "total_cases")) &&
		     json_integer_value(json_object_get(res, "total_cases")) > 0
		     ? KJ_EXIT_OK : KJ_EXIT_FAIL;
	json_decref(res);
	if (fflush(stdout) != 0)
		return kj_cli_error(cmd, "cannot write to standard output");
	return rc;
}
