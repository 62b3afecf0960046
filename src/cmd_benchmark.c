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
#include "kjudge/proc.h"
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
};

const struct kj_cli_option kj_benchmark_options[] = {
	KJ_TORCH_OPTION_ROWS("seconds each request to a worker may take (default 900)",
			     "fixed seed for the timed inputs instead of a secret one"),
	{ "warmup", OPT_WARMUP, "N", "untimed calls before timing (default 5)" },
	{ "repeats", OPT_REPEATS, "N", "timed calls per case (default 50)" },
	{ "output", OPT_OUTPUT, "FILE", "perf JSON path (default: printed on stdout)" },
	{ "skip_framework", OPT_SKIP_FRAMEWORK, NULL, "do not time the reference; use --framework_latency_ms" },
	{ "framework_latency_ms", OPT_FRAMEWORK_MS, "MS", "reference latency with --skip_framework (default 0.0)" },
	{ "verify_not_required", OPT_NOT_REQUIRED, NULL, "skip the L1 verify gate" },
	{ NULL, 0, NULL, NULL },
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
	struct kj_cli_parser p;
	struct kj_error err;
	const char *output = NULL;
	int c, rc, not_required = 0;
	json_t *res = NULL;
	char *end;

	kj_torch_opts_init(&o);
	kj_bench_opts_init(&b);
	kj_cli_parser_init(&p, cmd, argc, argv);
	while ((c = kj_cli_next(&p)) != KJ_CLI_END) {
		switch (c) {
		case KJ_CLI_HELP:
			kj_cli_print_help(stdout, cmd);
			return KJ_EXIT_OK;
		case OPT_WARMUP:
			if ((b.warmup = kj_cli_parse_uint(cmd, "warmup", p.arg, 1000000)) < 0)
				return KJ_EXIT_USAGE;
			break;
		case OPT_REPEATS:
			if ((b.repeats = kj_cli_parse_uint(cmd, "repeats", p.arg, 1000000)) < 1)
				return b.repeats < 0 ? KJ_EXIT_USAGE
						     : kj_cli_error(cmd, "--repeats must be at least 1");
			break;
		case OPT_OUTPUT:
			output = p.arg;
			break;
		case OPT_SKIP_FRAMEWORK:
			b.skip_framework = 1;
			break;
		case OPT_FRAMEWORK_MS:
			b.framework_latency_ms = strtod(p.arg, &end);
			if (end == p.arg || *end)
				return kj_cli_error(cmd, "option '--framework_latency_ms' "
						    "wants a number, not '%s'", p.arg);
			break;
		case OPT_NOT_REQUIRED:
			not_required = 1;
			break;
		default:
			rc = kj_cli_torch_option(cmd, c, p.arg, &o);
			if (rc <= 0)
				return KJ_EXIT_USAGE;
		}
	}
	if (kj_cli_torch_check(cmd, argc, argv, &o))
		return KJ_EXIT_USAGE;
	if (!not_required && (rc = gate(cmd, o.verify_dir, o.impl_name)) != 0)
		return rc;

	if (kj_cli_guard(cmd))
		return KJ_EXIT_USAGE;
	rc = kj_torch_benchmark(&o, &b, &res, &err);
	/* A run a signal interrupted measured nothing: no report is written. */
	if (kj_proc_interrupted()) {
		json_decref(res);
		return kj_cli_interrupted(cmd);
	}
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
