/*
 * cmd_benchmark.c - `kjudge benchmark`: benchmark.py of triton-op-verifier.
 *
 * The L1 verify gate first (exit 2 when it refuses, with why, the record's
 * path, passed/total and its first five failures on stderr), then the timing
 * of every case into the perf JSON.  Exit 0 when the benchmark ran (per-case
 * pass/fail is in the JSON), 1 when it could not run or the judge failed
 * during it (the seed's "the script itself crashed"), 2 when the gate
 * refused or the input is bad.
 *
 * The gate is the candidate's (kj_gate_check): the record must be one this
 * judge signed, of this candidate file and this task file, with secret
 * seeds, on the device the benchmark runs on, and without task or machine
 * errors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/fileio.h"
#include "kjudge/pipeline.h"
#include "kjudge/torch.h"
#include "kjudge/audit.h"
#include "cli.h"
#include "interrupt.h"
#include "base/banned.h"

enum {
	OPT_WARMUP = KJ_OPT_TORCH_END_,
	OPT_REPEATS,
	OPT_OUTPUT,
	OPT_SKIP_FRAMEWORK,
	OPT_FRAMEWORK_MS,
	OPT_NOT_REQUIRED,
	OPT_ALLOW_FIXED,
	OPT_MAX_REPEATS,
	OPT_BUDGET,
	OPT_TARGET_CI,
	OPT_TIMED_SETS,
	OPT_STRICT,
	OPT_BASELINE,
	OPT_NO_SOL,
	OPT_ROUNDS,
	OPT_COUNT_
};

/* What the candidate is timed against (kj_torch_spec.ref_compiled). */
static const char *const baselines[] = { "eager", "compile", NULL };

const struct kj_cli_option kj_benchmark_options[] = {
	KJ_TORCH_OPTION_ROWS("seconds each request to a worker may take",
			     "fixed seed for the timed inputs instead of a secret one"),
	[OPT_WARMUP] = { .name = "warmup", .type = KJ_CLI_INT, .metavar = "N",
			 .min = 0, .max = 1000000, .def = "5",
			 .help = "untimed calls before timing" },
	[OPT_REPEATS] = { .name = "repeats", .type = KJ_CLI_INT, .metavar = "N",
			  .min = 1, .max = 1000000, .def = "50",
			  .help = "timed calls per case and side, at least (more until the "
				  "median is stable: --target_ci)" },
	[OPT_MAX_REPEATS] = { .name = "max_repeats", .type = KJ_CLI_INT, .metavar = "N",
			      .min = 1, .max = 10000000, .def = "100000",
			      .help = "timed calls per case and side, at most" },
	[OPT_BUDGET] = { .name = "time_budget", .type = KJ_CLI_NUMBER, .metavar = "S",
			 .unit = "seconds", .min = 0.001, .max = 86400, .def = "10",
			 .help = "time spent timing one case before it stops with what it has" },
	[OPT_TARGET_CI] = { .name = "target_ci", .type = KJ_CLI_NUMBER, .metavar = "R",
			    .min = 0, .max = 1, .def = "0.01",
			    .help = "stop when the 95 % interval of each median is within R of it" },
	[OPT_TIMED_SETS] = { .name = "timed_sets", .type = KJ_CLI_INT, .metavar = "K",
			     .min = 1, .max = 64, .def = "4",
			     .help = "input sets the timed calls cycle through (each with its "
				     "golden outputs)" },
	[OPT_OUTPUT] = { .name = "output", .type = KJ_CLI_STRING, .metavar = "FILE",
			 .def = "printed on stdout", .help = "perf JSON path" },
	[OPT_SKIP_FRAMEWORK] = { .name = "skip_framework", .type = KJ_CLI_FLAG,
				 .help = "do not time the reference; use --framework_latency_ms" },
	[OPT_FRAMEWORK_MS] = { .name = "framework_latency_ms", .type = KJ_CLI_NUMBER,
			       .metavar = "MS", .unit = "milliseconds", .min = 0,
			       .max = 86400000, .def = "0.0",
			       .help = "reference latency with --skip_framework" },
	[OPT_NOT_REQUIRED] = { .name = "verify_not_required", .type = KJ_CLI_FLAG,
			       .help = "skip the L1 verify gate" },
	[OPT_ALLOW_FIXED] = { .name = "allow_fixed_seeds", .type = KJ_CLI_FLAG,
			      .help = "let the gate accept a verify run made with --seed" },
	[OPT_STRICT] = { .name = "strict", .type = KJ_CLI_FLAG,
			 .help = "benchmark only a candidate that passed verify --strict (its "
				 "record says so) and the static check: exit 1 when it fails" },
	[OPT_BASELINE] = { .name = "baseline", .type = KJ_CLI_CHOICE, .metavar = "B",
			   .choices = baselines, .def = "eager",
			   .help = "the reference as timed: eager, or torch.compile(Model) "
				   "(on the CPU it needs a C++ compiler)" },
	[OPT_NO_SOL] = { .name = "no-sol", .type = KJ_CLI_FLAG,
			 .help = "no speed of light: sol_ms null in every record, and no "
				 "TimingImpossible for beating it" },
	[OPT_ROUNDS] = { .name = "timed_rounds", .type = KJ_CLI_CHOICE, .metavar = "R",
			 .choices = kj_rounds_names, .def = "auto",
			 .help = "queued: a round's calls put on the device back to back, one "
				 "wait after the last; synced: a wait after every call; auto "
				 "(or $KJ_TIMED_ROUNDS): queued on a GPU where both sides' calls "
				 "take 1 ms or more, else synced" },
	[OPT_COUNT_] = { .name = NULL },
};

/* The gate before any worker starts: 0 to go on, else the exit code. */
static int gate(const struct kj_cli_command *cmd, struct kj_cli_torch *run, int allow_fixed,
		int strict, char *path, size_t psize, char *rec_device, size_t dsize)
{
	struct kj_gate_opts g = { allow_fixed, run->spec.device, strict };
	char name[512], why[3000];
	struct kj_error err;
	int rc;

	if (kj_gate_record_name(run->spec.impl_name, name, sizeof(name)) < 0 ||
	    snprintf(path, psize, "%s/%s", run->spec.verify_dir, name) >= (int)psize)
		return kj_cli_error(cmd, "--verify_dir or --triton_impl_name too long");
	rc = kj_gate_check(path, &run->task, run->attempt.key, &g, why, sizeof(why), rec_device,
			   dsize, &err);
	/* Whose record was read, and for which candidate: with two candidates
	 * in one directory, a refusal must not leave that to be guessed. */
	if (rc < 0) {
		kj_cli_error(cmd, "L1 verify gate, candidate '%s' (--triton_impl_name %s): %s%s%s",
			     kj_cli_shown(run->task.cand_file), kj_cli_shown(run->spec.impl_name),
			     err.msg, rc == KJ_ENOENT ? " with --triton_impl_name " : "",
			     rc == KJ_ENOENT ? kj_cli_shown(run->spec.impl_name) : "");
		/* Out of memory is the judge's failure, not the record's. */
		return kj_cli_exit_for(cmd, rc);
	}
	if (rc > 0) {
		/* The seed's lines (path, passed/total, the first failures),
		 * from a record the candidate's directory holds: shown. */
		fprintf(stderr, "kjudge benchmark: L1 verify gate refused candidate '%s' "
			"(--triton_impl_name %s): ", kj_cli_shown(run->task.cand_file),
			kj_cli_shown(run->spec.impl_name));
		kj_cli_put_shown(stderr, why);
		fputc('\n', stderr);
		return KJ_EXIT_USAGE;
	}
	return 0;
}

/* Release both; returns exit_code. */
static int done(struct kj_cli_torch *run, struct kj_cli_strict *sc, int exit_code)
{
	kj_cli_strict_release(sc);
	return kj_cli_torch_close(run, exit_code);
}

int kj_cmd_benchmark(const struct kj_cli_command *cmd, int argc, char **argv)
{
	struct kj_cli_strict sc;
	struct kj_cli_args args;
	struct kj_cli_torch run;
	struct kj_bench_opts b;
	const char *output = NULL;
	char gate_path[4700], rec_device[32];
	int rc, not_required = 0, allow_fixed = 0, strict = 0, no_sol = 0, exit_code = KJ_EXIT_OK;
	json_t *rec, *sol = NULL;
	char sol_why[600];

	kj_bench_opts_init(&b);
	kj_cli_args_init(&args);
	if ((rc = kj_cli_start(cmd, argc, argv, &args)) >= 0)
		return rc;
	rc = kj_cli_torch_setup(cmd, &args, &run);
	if (rc == 0) {
		const struct kj_cli_value *v = args.opt;

		if (v[OPT_WARMUP].count)
			b.warmup = (int)v[OPT_WARMUP].integer;
		if (v[OPT_REPEATS].count)
			b.repeats = (int)v[OPT_REPEATS].integer;
		if (v[OPT_OUTPUT].count)
			output = v[OPT_OUTPUT].text;
		b.skip_framework = v[OPT_SKIP_FRAMEWORK].count > 0;
		if (v[OPT_FRAMEWORK_MS].count)
			b.framework_latency_ms = v[OPT_FRAMEWORK_MS].number;
		not_required = v[OPT_NOT_REQUIRED].count > 0;
		if (v[OPT_MAX_REPEATS].count)
			b.max_repeats = (int)v[OPT_MAX_REPEATS].integer;
		if (v[OPT_BUDGET].count)
			b.budget_s = v[OPT_BUDGET].number;
		else if (run.cfg.time_budget_s > 0)
			b.budget_s = run.cfg.time_budget_s;
		if (v[OPT_TARGET_CI].count)
			b.target_ci = v[OPT_TARGET_CI].number;
		if (v[OPT_TIMED_SETS].count)
			b.timed_sets = (int)v[OPT_TIMED_SETS].integer;
		b.rounds = v[OPT_ROUNDS].count ? v[OPT_ROUNDS].choice : run.cfg.timed_rounds;
		if (b.max_repeats < b.repeats)
			b.max_repeats = b.repeats;
		allow_fixed = v[OPT_ALLOW_FIXED].count > 0;
		strict = v[OPT_STRICT].count > 0;
		no_sol = v[OPT_NO_SOL].count > 0;
		/* The kernels-disabled layer is verify --strict's: its record is
		 * what says it passed. */
		if (strict && not_required)
			rc = kj_cli_error(cmd, "--strict needs the verify gate, whose record of "
					  "verify --strict carries the anti-cheat layers: drop "
					  "--verify_not_required");
		run.spec.ref_compiled = v[OPT_BASELINE].count && v[OPT_BASELINE].choice == 1;
	}
	kj_cli_args_release(&args);
	if (rc)
		return rc;
	if (output && kj_cli_check_output(cmd, output, NULL))
		return KJ_EXIT_USAGE;
	kj_cli_strict_init(&sc, strict);
	rc = kj_cli_torch_prepare(cmd, &run);
	if (rc)
		return rc;
	/* The static check (milliseconds) before anything runs: with --strict
	 * a candidate it fails is not worth timing. */
	if ((rc = kj_cli_strict_static(cmd, &run, &sc)) != 0)
		return done(&run, &sc, rc);
	if (kj_cli_strict_failed(&sc)) {
		kj_cli_strict_say(cmd, &sc);
		return done(&run, &sc, KJ_EXIT_FAIL);
	}
	/* The gate first, as the seed's: its record names what is wrong. */
	rec_device[0] = '\0';
	if (!not_required && (rc = gate(cmd, &run, allow_fixed, strict, gate_path,
					sizeof(gate_path), rec_device, sizeof(rec_device))) != 0)
		return done(&run, &sc, rc);
	if (!run.task.have_candidate) {
		kj_cli_error(cmd, "'%s': no candidate file", run.task.cand_file);
		return done(&run, &sc, KJ_EXIT_USAGE);
	}
	rc = kj_cli_torch_start(cmd, &run);
	if (rc)
		return done(&run, &sc, rc == KJ_EXIT_USAGE ? KJ_EXIT_FAIL : rc);
	/* Without --device the gate could not compare devices before the
	 * workers said which one there is. */
	if (!not_required && rec_device[0] && strcmp(rec_device, run.task.device) != 0) {
		fprintf(stderr, "kjudge benchmark: L1 verify gate refused: '%s' verified the "
			"candidate on %s, not on %s: verify on the device you benchmark on\n",
			kj_cli_shown(gate_path), kj_cli_shown(rec_device),
			kj_cli_shown(run.task.device));
		return done(&run, &sc, KJ_EXIT_USAGE);
	}
	/* The speed of light, counted on the reference's side by a step of the
	 * judge's (kjudge/audit.h): a step that fails leaves every case
	 * without a figure, and the records say why. */
	if (no_sol || run.cfg.sol_off) {
		b.sol_why = no_sol ? "not measured (--no-sol)" : "not measured (KJ_SOL=off)";
	} else {
		struct kj_error e;

		if (kj_audit_sol(&run.cfg, run.task.device, run.judge.timeout_s, run.task.task_file,
				 run.task.cases_file[0] ? run.task.cases_file : NULL, &sol,
				 &e) != KJ_OK) {
			snprintf(sol_why, sizeof(sol_why), "the speed-of-light step failed: %s",
				 e.msg);
			b.sol_why = sol_why;
		}
		b.sol = sol;
	}
	rc = kj_benchmark(&run.task, &run.attempt, &run.judge, &b, NULL, &run.result, &run.err);
	json_decref(sol);
	if (rc == KJ_EINTR)
		return done(&run, &sc, kj_cli_interrupted(cmd));
	if (rc != KJ_OK) {
		kj_cli_error(cmd, "%s", run.err.msg);
		return done(&run, &sc, KJ_EXIT_FAIL);
	}
	if (strict) {
		/* The other layers passed in the verify --strict the gate read:
		 * its signed record says so. */
		sc.extra = json_pack("{s:s, s:s}", "layers_from", "verify --strict",
				     "verify_record", gate_path);
		if (!sc.extra) {
			kj_cli_error(cmd, "out of memory");
			return done(&run, &sc, KJ_EXIT_FAIL);
		}
	}
	if ((rc = kj_cli_strict_finish(cmd, &run, &sc)) != 0)
		return done(&run, &sc, rc);
	rec = kj_perf_json(&run.task, &run.attempt, &run.result, &run.err);
	/* Which reference the framework figures are of. */
	if (rec && json_object_set_new(json_object_get(rec, "kjudge"), "baseline",
				       json_string(run.spec.ref_compiled ? "compile" : "eager"))) {
		json_decref(rec);
		rec = NULL;
		kj_error_set(&run.err, KJ_ENOMEM, "out of memory");
	}
	if (!rec) {
		kj_cli_error(cmd, "%s", run.err.msg);
		return done(&run, &sc, KJ_EXIT_FAIL);
	}
	if (output) {
		if (kj_cli_write_json(cmd, output, rec))
			exit_code = KJ_EXIT_FAIL;
		else
			printf("perf report written to %s\n", kj_cli_shown(output));
	} else {
		/* Made whole before any of it is printed: a dump that fails half
		 * way would leave half a record on stdout. */
		char *text = kj_json_text(rec, JSON_INDENT(2) | JSON_REAL_PRECISION(12), &run.err);

		if (!text) {
			kj_cli_error(cmd, "the perf JSON could not be written (%s)", run.err.msg);
			exit_code = KJ_EXIT_FAIL;
		} else {
			/* A candidate's messages are in it: DEL and C1 as \u
			 * escapes (jansson escapes C0), the same JSON value. */
			if (kj_cli_put_shown(stdout, text) != 0 || putchar('\n') == EOF)
				exit_code = KJ_EXIT_FAIL;
			free(text);
		}
	}
	json_decref(rec);
	/* A machine that failed during the run: the figures are incomplete
	 * through no fault of the candidate's. */
	if (exit_code == KJ_EXIT_OK && kj_verify_exit(&run.result, NULL, 0) == KJ_EXIT_USAGE) {
		char why[600];

		kj_verify_exit(&run.result, why, sizeof(why));
		kj_cli_error(cmd, "%s", why);
		exit_code = KJ_EXIT_FAIL;
	}
	if (fflush(stdout) != 0) {
		kj_cli_error(cmd, "cannot write to standard output");
		exit_code = KJ_EXIT_FAIL;
	}
	return done(&run, &sc, exit_code);
}
