/*
 * cmd_doctor.c - `kjudge doctor [--json] [--group NAME]...`.
 *
 * Output: one line per probe, grouped, with the fix indented under each
 * warning and failure, then a summary line; or with --json the report of
 * kj_doctor_report_json().  Exit 0 when no probe fails (warnings allowed),
 * 1 when one does, 2 for bad flags.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/fileio.h"
#include "kjudge/doctor.h"
#include "kjudge/proc.h"
#include "cli.h"
#include "interrupt.h"
#include "base/banned.h"

enum {
	OPT_JSON,
	OPT_GROUP,
	OPT_PYTHON,
	OPT_TIMEOUT,
	OPT_COUNT_
};

/* Each is mapped through kj_doctor_group_from_name(), so the library's
 * table stays the one that knows the groups. */
static const char *const group_names[] = { "sandbox", "timing", "runtimes", NULL };

const struct kj_cli_option kj_doctor_options[] = {
	[OPT_JSON] = { .name = "json", .type = KJ_CLI_FLAG,
		       .help = "print the report as one JSON document" },
	[OPT_GROUP] = { .name = "group", .type = KJ_CLI_CHOICES, .metavar = "NAME",
			.choices = group_names, .def = "all",
			.help = "only these groups; repeats add up" },
	[OPT_PYTHON] = { .name = "python", .type = KJ_CLI_STRING, .metavar = "PATH",
			 .def = "$KJ_PYTHON, then the .venv of kjudge's checkout, else python3",
			 .help = "the workers' interpreter to check" },
	[OPT_TIMEOUT] = { .name = "timeout", .type = KJ_CLI_INT, .metavar = "S",
			  .unit = "seconds", .min = 1, .max = 3600, .def = "30",
			  .help = "seconds each probe's child process may take" },
	[OPT_COUNT_] = { .name = NULL },
};

const struct kj_cli_env kj_doctor_env[] = {
	{ "KJ_PYTHON", "the interpreter to check when --python is not given" },
	{ "PATH", "where python3, nvidia-smi, nvcc, cc, clang and clinfo are looked for" },
	{ "CUDA_HOME", "where nvcc is looked for when it is not on PATH (default "
		       "/usr/local/cuda)" },
	{ "LD_LIBRARY_PATH", "searched for libOpenCL.so.1 after the system's library "
			     "directories" },
	{ "TMPDIR", "where the private tmpfs probe makes its directory" },
	{ NULL, NULL },
};

static void print_human(const struct kj_doctor_report *r)
{
	enum kj_doctor_group last = 0;
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct kj_doctor_check *c = &r->checks[i];

		if (c->group != last) {
			printf("%s%s\n", last ? "\n" : "", kj_doctor_group_name(c->group));
			last = c->group;
		}
		/* Problems in capitals, so that they stand out in a column
		 * of "ok". */
		printf("  %-4s  %-16s %s\n",
		       c->status == KJ_DOCTOR_OK ? "ok"
		       : c->status == KJ_DOCTOR_WARN ? "WARN" : "FAIL",
		       c->name, c->detail);
		if (c->status != KJ_DOCTOR_OK)
			printf("  %-4s  %-16s fix: %s\n", "", "", c->fix);
	}
	printf("\n%zu ok, %zu warn, %zu fail\n", r->count[KJ_DOCTOR_OK],
	       r->count[KJ_DOCTOR_WARN], r->count[KJ_DOCTOR_FAIL]);
}

int kj_cmd_doctor(const struct kj_cli_command *cmd, int argc, char **argv)
{
	struct kj_doctor_options o = { 0, NULL, 0 };
	struct kj_config cfg;
	struct kj_doctor_report r;
	struct kj_cli_args a;
	struct kj_error err;
	int json, rc, i;

	kj_cli_args_init(&a);
	if ((rc = kj_cli_start(cmd, argc, argv, &a)) >= 0)
		return rc;
	json = a.opt[OPT_JSON].count > 0;
	for (i = 0; group_names[i]; i++)
		if (a.opt[OPT_GROUP].mask & (1u << i))
			o.groups |= (unsigned)kj_doctor_group_from_name(group_names[i]);
	/* The context verify and benchmark would run in. */
	rc = kj_cli_config(cmd, &cfg, a.opt[OPT_PYTHON].text);
	o.cfg = &cfg;
	if (a.opt[OPT_TIMEOUT].count)
		o.timeout_s = (double)a.opt[OPT_TIMEOUT].integer;
	/* The values point into argv, not into a. */
	kj_cli_args_release(&a);
	if (rc)
		return rc;
	/* Probes fork: what stdout holds must not be written twice. */
	fflush(stdout);
	kj_doctor_report_init(&r);
	if (kj_cli_guard(cmd))
		return KJ_EXIT_USAGE;
	rc = kj_doctor_run(&o, &r, &err);
	/* Probes cut short by a signal would report failures that are not
	 * the machine's: no report. */
	if (kj_proc_interrupted()) {
		kj_doctor_report_release(&r);
		return kj_cli_interrupted(cmd);
	}
	if (rc != KJ_OK) {
		kj_doctor_report_release(&r);
		return kj_cli_error(cmd, "%s", err.msg);
	}
	if (json) {
		json_t *doc = kj_doctor_report_json(&r);

		if (!doc || kj_json_print(stdout, doc, JSON_INDENT(2), NULL) != KJ_OK ||
		    putchar('\n') == EOF) {
			json_decref(doc);
			kj_doctor_report_release(&r);
			return kj_cli_error(cmd, "cannot write the report");
		}
		json_decref(doc);
	} else {
		print_human(&r);
	}
	rc = r.count[KJ_DOCTOR_FAIL] ? KJ_EXIT_FAIL : KJ_EXIT_OK;
	kj_doctor_report_release(&r);
	if (fflush(stdout) != 0)
		return kj_cli_error(cmd, "cannot write to standard output");
	return rc;
}
