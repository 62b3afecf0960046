/*
 * cmd_verify.c - `kjudge verify`: verify.py of triton-op-verifier, in C.
 *
 * Same flags, defaults, file layout, verify_result.json and exit codes
 * (Policy A: 0 iff every case passed, 1 otherwise, "验证超时" on a timeout);
 * 2 when nothing could be judged, or what failed was the task's or the
 * judge's, not the candidate's (bad flags, no task file, no Python with
 * torch, a reference that fails, a full disk).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/pipeline.h"
#include "kjudge/torch.h"
#include "cli.h"
#include "interrupt.h"
#include "base/banned.h"

enum {
	OPT_OUTPUT = KJ_OPT_TORCH_END_,
	OPT_INPUT_SETS,
	OPT_DISABLE_KERNELS,
	OPT_STRICT,
	OPT_COUNT_
};

const struct kj_cli_option kj_verify_options[] = {
	KJ_TORCH_OPTION_ROWS("seconds each case may take on each side",
			     "use seed N for every case, one input set; 0 reproduces verify.py"),
	[OPT_OUTPUT] = { .name = "output", .type = KJ_CLI_STRING, .metavar = "FILE",
			 .def = "DIR/verify_result.json, or the record benchmark's gate "
				 "reads for --triton_impl_name",
			 .help = "result file" },
	[OPT_INPUT_SETS] = { .name = "input_sets", .type = KJ_CLI_INT, .metavar = "N",
			     .min = 1, .max = 100, .def = "2",
			     .help = "input sets per case with secret seeds" },
	[OPT_DISABLE_KERNELS] = { .name = "disable-kernels", .type = KJ_CLI_FLAG,
				  .help = "run the candidate with its Triton launches made no-ops "
					  "(the kernel layer of eval; the record passes no gate)" },
	[OPT_STRICT] = { .name = "strict", .type = KJ_CLI_FLAG,
			 .help = "a pass must also pass eval's anti-cheat layers (the static "
				 "check, the kernels disabled, the profiler on CUDA): exit 1 "
				 "when one fails" },
	[OPT_COUNT_] = { .name = NULL },
};

/* Release both; returns exit_code. */
static int done(struct kj_cli_torch *run, struct kj_cli_strict *sc, int exit_code)
{
	kj_cli_strict_release(sc);
	return kj_cli_torch_close(run, exit_code);
}

int kj_cmd_verify(const struct kj_cli_command *cmd, int argc, char **argv)
{
	struct kj_cli_args args;
	struct kj_cli_torch run;
	struct kj_cli_strict sc;
	const char *output = NULL;
	char out_path[4200], why[600];
	json_t *rec = NULL;
	int rc, exit_code, strict = 0;

	kj_cli_args_init(&args);
	if ((rc = kj_cli_start(cmd, argc, argv, &args)) >= 0)
		return rc;
	rc = kj_cli_torch_setup(cmd, &args, &run);
	if (rc == 0) {
		if (args.opt[OPT_OUTPUT].count)
			output = args.opt[OPT_OUTPUT].text;
		if (args.opt[OPT_INPUT_SETS].count)
			run.judge.input_sets = (int)args.opt[OPT_INPUT_SETS].integer;
		run.spec.kernels_disabled = args.opt[OPT_DISABLE_KERNELS].count > 0;
		strict = args.opt[OPT_STRICT].count > 0;
		/* The profiler's names of the kernels forward ran (CUDA only). */
		run.spec.profile_kernels = strict;
		if (strict && run.spec.kernels_disabled)
			rc = kj_cli_error(cmd, "--strict and --disable-kernels: --strict runs the "
					  "kernels-disabled layer itself; give one of them");
	}
	/* The values point into argv, not into args. */
	kj_cli_args_release(&args);
	if (rc)
		return rc;
	/* The record's name is made from the implementation's: a name that
	 * is no file stem is refused before any path is made of it. */
	if (run.spec.impl_name && kj_torch_name_problem(run.spec.impl_name))
		return kj_cli_error(cmd, "--triton_impl_name '%s' %s",
				    kj_cli_shown(run.spec.impl_name),
				    kj_torch_name_problem(run.spec.impl_name));
	if (output) {
		snprintf(out_path, sizeof(out_path), "%s", output);
	} else {
		/* The record benchmark's gate reads for the same candidate:
		 * verifying one candidate never replaces another's. */
		char name[512];

		if (kj_gate_record_name(run.spec.impl_name, name, sizeof(name)) < 0 ||
		    snprintf(out_path, sizeof(out_path), "%s/%s", run.spec.verify_dir, name) >=
			    (int)sizeof(out_path))
			return kj_cli_error(cmd, "--verify_dir or --triton_impl_name too long");
	}
	/* An output that cannot be written is found now, not after the run. */
	if (kj_cli_check_output(cmd, out_path, NULL))
		return KJ_EXIT_USAGE;
	kj_cli_strict_init(&sc, strict);
	rc = kj_cli_torch_open(cmd, &run);
	if (rc)
		return rc;
	rc = kj_verify(&run.task, &run.attempt, &run.judge, NULL, &run.result, &run.err);
	if (rc == KJ_EINTR)
		return kj_cli_torch_close(&run, kj_cli_interrupted(cmd));
	if (rc != KJ_OK)
		kj_cli_error(cmd, "%s", run.err.msg);
	/* The anti-cheat (src/strict.c): the static check on every run, the
	 * other layers with --strict once every case passed. */
	exit_code = kj_cli_strict_static(cmd, &run, &sc);
	if (!exit_code && rc == KJ_OK && kj_verify_exit(&run.result, NULL, 0) == KJ_EXIT_OK)
		exit_code = kj_cli_strict_layers(cmd, &run, &sc);
	if (!exit_code)
		exit_code = kj_cli_strict_finish(cmd, &run, &sc);
	if (exit_code)
		return done(&run, &sc, exit_code);
	/* Even a run that stopped is written: what it judged, the rest
	 * NotJudged, and a status that no gate accepts. */
	rec = kj_verify_json(&run.task, &run.attempt, &run.result, &run.err);
	if (!rec) {
		kj_cli_error(cmd, "%s", run.err.msg);
		return done(&run, &sc, KJ_EXIT_USAGE);
	}
	if (kj_cli_write_json(cmd, out_path, rec)) {
		json_decref(rec);
		return done(&run, &sc, KJ_EXIT_USAGE);
	}
	json_decref(rec);
	kj_cli_print_cases(stdout, &run, out_path);
	if (run.result.timed_out)
		fprintf(stderr, "验证超时（%g秒）\n", run.judge.timeout_s);
	exit_code = kj_verify_exit(&run.result, why, sizeof(why));
	if (rc != KJ_OK)
		exit_code = KJ_EXIT_USAGE;
	else if (exit_code == KJ_EXIT_USAGE)
		kj_cli_error(cmd, "%s (see %s)", why, out_path);
	else if (exit_code == KJ_EXIT_OK && kj_cli_strict_failed(&sc))
		exit_code = KJ_EXIT_FAIL;
	if (fflush(stdout) != 0) {
		kj_cli_error(cmd, "cannot write to standard output");
		exit_code = KJ_EXIT_USAGE;
	}
	return done(&run, &sc, exit_code);
}
