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

#include "kjudge/doctor.h"
#include "kjudge/proc.h"
#include "cli.h"
#include "interrupt.h"
#include "base/banned.h"

enum {
	OPT_JSON = 256,
	OPT_GROUP,
	OPT_PYTHON,
	OPT_TIMEOUT,
};

const struct kj_cli_option kj_doctor_options[] = {
	{ "json", OPT_JSON, NULL, "print the report as one JSON document" },
	{ "group", OPT_GROUP, "NAME",
	  "only sandbox, timing or runtimes (repeat it, or give a comma list)" },
	{ "python", OPT_PYTHON, "PATH",
	  "the workers' interpreter to check (default $KJ_PYTHON, then python3)" },
	{ "timeout", OPT_TIMEOUT, "S",
	  "seconds each probe's child process may take (default 30)" },
	{ NULL, 0, NULL, NULL },
};

/* Add the groups of a comma list to *mask.  Returns 0, or prints the error
 * and returns -1. */
static int parse_groups(const struct kj_cli_command *cmd, const char *arg,
			unsigned *mask)
{
	const char *p = arg;

	do {
		size_t n = strcspn(p, ",");
		char name[32];
		enum kj_doctor_group g;

		snprintf(name, sizeof(name), "%.*s", (int)(n < 31 ? n : 31), p);
		g = n < 31 ? kj_doctor_group_from_name(name) : (enum kj_doctor_group)0;
		if (!g) {
			kj_cli_error(cmd, "unknown group '%.*s' (sandbox, timing or "
				     "runtimes)", (int)n, p);
			return -1;
		}
		*mask |= (unsigned)g;
		p += n;
	} while (*p++ == ',');
	return 0;
}

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
	struct kj_doctor_report r;
	struct kj_cli_parser p;
	struct kj_error err;
	int json = 0, c, rc;

	kj_cli_parser_init(&p, cmd, argc, argv);
	while ((c = kj_cli_next(&p)) != KJ_CLI_END) {
		switch (c) {
		case KJ_CLI_HELP:
			kj_cli_print_help(stdout, cmd);
			return KJ_EXIT_OK;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_GROUP:
			if (parse_groups(cmd, p.arg, &o.groups) < 0)
				return KJ_EXIT_USAGE;
			break;
		case OPT_PYTHON:
			o.python = p.arg;
			break;
		case OPT_TIMEOUT:
			c = kj_cli_parse_uint(cmd, "timeout", p.arg, 3600);
			if (c < 0)
				return KJ_EXIT_USAGE;
			if (c == 0)
				return kj_cli_error(cmd, "option '--timeout' wants at "
						    "least 1 second");
			o.timeout_s = c;
			break;
		default:
			return KJ_EXIT_USAGE;
		}
	}
	if (kj_cli_optind() < argc)
		return kj_cli_error(cmd, "takes no operands, got '%s'",
				    argv[kj_cli_optind()]);
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

		if (!doc || json_dumpf(doc, stdout, JSON_INDENT(2)) != 0 ||
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
