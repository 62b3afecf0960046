/*
 * cmd_benchmark.c - `kjudge benchmark`: benchmark.py of triton-op-verifier.
 *
 * The L1 verify gate first (exit 2 when verify has not fully passed, with the
 * verify JSON's path, passed/total and the first five failures on stderr),
 * then the timing of every case into the perf JSON.  Exit 0 when the
 * benchmark ran (per-case pass/fail is in the JSON), 1 when it could not run,
 * 2 when the gate refused or the flags are wrong.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/torch.h"
#include "cli.h"
#include "base/banned.h"

enum {
	OPT_WARMUP = KJ_OPT_TORCH_END_,
	OPT_REPEATS,
	OPT_OUTPUT,
	OPT_SKIP_FRAMEWORK,
	OPT_FRAMEWORK_MS,
	OPT_NOT_REQUIRED,
	OPT_COUNT_
};

const struct kj_cli_option kj_benchmark_options[] = {
	KJ_TORCH_OPTION_ROWS("seconds each request to a worker may take",
			     "fixed seed for the timed inputs instead of a secret one"),
	[OPT_WARMUP] = { .name = "warmup", .type = KJ_CLI_INT, .metavar = "N", .min = 0,
			 .max = 1000000, .def = "5", .help = "untimed calls before timing" },
	[OPT_REPEATS] = { .name = "repeats", .type = KJ_CLI_INT, .metavar = "N", .min = 1,
			  .max = 1000000, .def = "50", .help = "timed calls per case" },
	[OPT_OUTPUT] = { .name = "output", .type = KJ_CLI_STRING, .metavar = "FILE",
			 .def = "printed on stdout", .help = "perf JSON path" },
	[OPT_SKIP_FRAMEWORK] = { .name = "skip_framework", .type = KJ_CLI_FLAG,
				 .help = "do not time the reference; use "
					 "--framework_latency_ms" },
	/* Up to a day: a latency beyond that is a typo, and a latency that
	 * is not a finite number would make speedups that are not either. */
	[OPT_FRAMEWORK_MS] = { .name = "framework_latency_ms", .type = KJ_CLI_NUMBER,
			       .metavar = "MS", .unit = "milliseconds", .min = 0,
			       .max = 86400000, .def = "0.0",
			       .help = "reference latency with --skip_framework" },
	[OPT_NOT_REQUIRED] = { .name = "verify_not_required", .type = KJ_CLI_FLAG,
			       .help = "skip the L1 verify gate" },
	[OPT_COUNT_] = { .name = NULL },
};

/* verify_result.json for the default, verify_result_<x>.json for triton_<x>
 * or any other name (the gate's naming table). */
static void gate_name(const char *impl, char *buf, size_t size)
{
	if (!strcmp(impl, "triton_ascend_impl"))
		snprintf(buf, size, "verify_result.json");
	else if (!strncmp(impl, "triton_", 7))
		snprintf(buf, size, "verify_result_%s.json", impl + 7);
	else
		snprintf(buf, size, "verify_result_%s.json", impl);
}

static int gate(const struct kj_cli_command *cmd, const char *dir, const char *impl)
{
	char name[512], path[4700];
	json_error_t jerr;
	json_t *v, *f;
	long long total, passed;
	size_t i;

	gate_name(impl, name, sizeof(name));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	v = json_load_file(path, 0, &jerr);
	if (!v) {
		if (errno == ENOENT || strstr(jerr.text, "unable to open"))
			kj_cli_error(cmd, "L1 verify gate: '%s' does not exist: "
				     "run kjudge verify first", path);
		else
			kj_cli_error(cmd, "L1 verify gate: '%s' cannot be read: %s",
				     path, jerr.text);
		return KJ_EXIT_USAGE;
	}
	total = json_integer_value(json_object_get(v, "total_cases"));
	passed = json_integer_value(json_object_get(v, "passed_cases"));
	if (total > 0 && passed == total) {
		json_decref(v);
		return 0;
	}
	fprintf(stderr, "kjudge benchmark: L1 verify gate refused: %s\n"
			"  passed/total: %lld/%lld\n", path, passed, total);
	if (total == 0)
		fprintf(stderr, "  verify did not run any case\n");
	f = json_object_get(v, "failures");
	for (i = 0; i < json_array_size(f) && i < 5; i++) {
		const json_t *x = json_array_get(f, i);
		const char *msg = json_string_value(json_object_get(x, "error_msg"));
		int len = 0;

		while (msg && msg[len] && msg[len] != '\n' && len < 300)
			len++;
		fprintf(stderr, "  case %lld: %s: %.*s\n",
			json_integer_value(json_object_get(x, "case_idx")),
			json_string_value(json_object_get(x, "error_type")) ?
				json_string_value(json_object_get(x, "error_type")) : "?",
			len, msg ? msg : "");
	}
	json_decref(v);
	return KJ_EXIT_USAGE;
}

int kj_cmd_benchmark(const struct kj_cli_command *cmd, int argc, char **argv)
{
	struct kj_torch_opts o;
	struct kj_bench_opts b;
	struct kj_cli_args a;
	struct kj_error err;
	const char *output = NULL;
	int rc, not_required;
	json_t *res = NULL;

	kj_torch_opts_init(&o);
	kj_bench_opts_init(&b);
	kj_cli_args_init(&a);
	if ((rc = kj_cli_start(cmd, argc, argv, &a)) >= 0)
		return rc;
	kj_cli_torch_opts(&a, &o);
	if (a.opt[OPT_WARMUP].count)
		b.warmup = (int)a.opt[OPT_WARMUP].integer;
	if (a.opt[OPT_REPEATS].count)
		b.repeats = (int)a.opt[OPT_REPEATS].integer;
	if (a.opt[OPT_OUTPUT].count)
		output = a.opt[OPT_OUTPUT].text;
	b.skip_framework = a.opt[OPT_SKIP_FRAMEWORK].count > 0;
	if (a.opt[OPT_FRAMEWORK_MS].count)
		b.framework_latency_ms = a.opt[OPT_FRAMEWORK_MS].number;
	not_required = a.opt[OPT_NOT_REQUIRED].count > 0;
	/* The values point into argv, not into a. */
	kj_cli_args_release(&a);
	if (!not_required && (rc = gate(cmd, o.verify_dir, o.impl_name)) != 0)
		return rc;

	rc = kj_torch_benchmark(&o, &b, &res, &err);
	if (rc != KJ_OK) {
		kj_cli_error(cmd, "%s", err.msg);
		return KJ_EXIT_FAIL;
	}
	if (output) {
		if (kj_cli_write_json(cmd, output, res)) {
			json_decref(res);
			return KJ_EXIT_FAIL;
		}
		printf("perf report written to %s\n", output);
	} else {
		json_dumpf(res, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
		putchar('\n');
	}
	/* A sandbox or worker the machine could not restart: the figures are
	 * incomplete through no fault of the candidate's. */
	rc = json_integer_value(json_object_get(json_object_get(res, "kjudge"),
						"infrastructure_errors")) > 0;
	json_decref(res);
	if (rc)
		return kj_cli_error(cmd, "the machine failed during the run (see the "
				    "SandboxError or SpawnError cases)"), KJ_EXIT_FAIL;
	if (fflush(stdout) != 0)
		return kj_cli_error(cmd, "cannot write to standard output"), KJ_EXIT_FAIL;
	return KJ_EXIT_OK;
}
