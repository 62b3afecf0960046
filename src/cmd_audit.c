/*
 * cmd_audit.c - `kjudge audit SUITE` and `kjudge audit --op_name OP
 * --verify_dir DIR`: every task of a suite (eval's discovery) or one task
 * of the verify layout put through the library's audit (kjudge/audit.h):
 * one line per task on stdout, the weak ones with their reasons, and with
 * --json the whole audit as one file.
 *
 * Exit: 0 no task weak and every canary judged; 1 a task is weak; 2 bad
 * input, or a task or canary the audit could not judge (nothing proven of
 * it).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/audit.h"
#include "kjudge/eval.h"
#include "kjudge/torch.h"
#include "cli.h"
#include "interrupt.h"
#include "base/fs.h"
#include "base/banned.h"

enum {
	OPT_OP,
	OPT_DIR,
	OPT_DEVICE,
	OPT_JOBS,
	OPT_JSON,
	OPT_CANARIES,
	OPT_TIMEOUT,
	OPT_PYTHON,
	OPT_COUNT_
};

const struct kj_cli_option kj_audit_options[] = {
	[OPT_OP] = { .name = "op_name", .type = KJ_CLI_STRING, .metavar = "OP",
		     .help = "one task of the verify layout: DIR/OP_torch.py (with "
			     "--verify_dir), instead of a SUITE" },
	[OPT_DIR] = { .name = "verify_dir", .type = KJ_CLI_STRING, .metavar = "DIR",
		      .def = ".", .help = "the directory of --op_name's task" },
	[OPT_DEVICE] = { .name = "device", .type = KJ_CLI_CHOICE, .metavar = "DEV",
			 .choices = kj_cli_devices, .def = "cuda when there is one, else cpu",
			 .help = "where the reference and the canaries run" },
	[OPT_JOBS] = { .name = "jobs", .short_name = 'j', .type = KJ_CLI_INT, .metavar = "N",
		       .min = 1, .max = 64, .def = "2",
		       .help = "canaries judged at once (each a verify of its own)" },
	[OPT_JSON] = { .name = "json", .type = KJ_CLI_STRING, .metavar = "FILE",
		       .help = "write the audit as JSON: {\"tasks\": [{\"task\", \"weak\", "
			       "\"canaries\", \"reasons\", ...}]}" },
	[OPT_CANARIES] = { .name = "canaries", .type = KJ_CLI_CHOICES, .metavar = "LIST",
			   .choices = kj_audit_canary_names, .def = "all",
			   .help = "only these canaries (the others are reported as skipped); "
				   "repeats add up" },
	[OPT_TIMEOUT] = { .name = "timeout", .type = KJ_CLI_NUMBER, .metavar = "S",
			  .unit = "seconds", .min = 0.001, .max = KJ_CLI_TIMEOUT_MAX,
			  .def = "900", .help = "seconds each request to a worker may take" },
	[OPT_PYTHON] = { .name = "python", .type = KJ_CLI_STRING, .metavar = "PATH",
			 .def = "$KJ_PYTHON, then python3",
			 .help = "Python interpreter with torch" },
	[OPT_COUNT_] = { .name = NULL },
};

/* One line for the task, its reasons under it. */
static void print_task(const struct kj_audit_result *r)
{
	size_t i;
	int c, skipped = 0;

	for (c = 0; c < KJ_AUDIT_N_; c++)
		skipped += r->canary[c] == KJ_AUDIT_SKIPPED;
	printf("%s: %s", kj_cli_shown(r->task), r->weak ? "weak" : r->errors ? "not proven"
	       : skipped ? "no canary asked for passes" : "strong");
	for (c = 0; c < KJ_AUDIT_N_; c++)
		if (r->canary[c] == KJ_AUDIT_PASS)
			printf(" [%s passes]", kj_audit_canary_name((enum kj_audit_canary)c));
	if (!isnan(r->lowp_ratio[0]) || !isnan(r->lowp_ratio[1])) {
		/* The tolerance headroom: under 1, a float16 or bfloat16
		 * kernel passes. */
		printf("; lowp at");
		if (!isnan(r->lowp_ratio[0]))
			printf(" %.3gx (float16)", r->lowp_ratio[0]);
		if (!isnan(r->lowp_ratio[1]))
			printf(" %.3gx (bfloat16)", r->lowp_ratio[1]);
		printf(" of the thresholds");
	}
	printf(" (device %s%s)\n", kj_cli_shown(r->device), r->cached ? ", cached" : "");
	for (i = 0; i < json_array_size(r->reasons); i++)
		printf("  %s\n", kj_cli_shown(json_string_value(json_array_get(r->reasons, i))));
}

/* Audit one task into tasks (its JSON entry) and the counts. */
static int audit_one(const struct kj_cli_command *cmd, const struct kj_config *cfg,
		     const struct kj_audit_opts *o, const char *name, const char *file,
		     const char *cases, json_t *tasks, int *weak, int *unproven)
{
	struct kj_audit_result r;
	struct kj_error err;
	json_t *e;
	int rc;

	kj_audit_result_init(&r);
	rc = kj_audit_task(cfg, o, name, file, cases, &r, &err);
	if (rc == KJ_EINTR) {
		kj_audit_result_release(&r);
		return kj_cli_interrupted(cmd);
	}
	if (rc != KJ_OK) {
		printf("%s: not audited: %s\n", kj_cli_shown(name), kj_cli_shown(err.msg));
		e = json_pack("{s:s, s:b, s:{}, s:[s]}", "task", name, "weak", 0, "canaries",
			      "reasons", err.msg);
		(*unproven)++;
	} else {
		print_task(&r);
		e = kj_audit_json(&r);
		*weak += r.weak;
		*unproven += !r.weak && r.errors;
	}
	kj_audit_result_release(&r);
	if (!e || json_array_append_new(tasks, e) < 0) {
		kj_cli_error(cmd, "out of memory");
		return kj_cli_judge_exit(cmd);
	}
	return 0;
}

int kj_cmd_audit(const struct kj_cli_command *cmd, int argc, char **argv)
{
	struct kj_cli_args args;
	struct kj_audit_opts o;
	struct kj_config cfg;
	struct kj_error err;
	struct kj_eval_set set;
	const char *op, *dir, *json_path, *python;
	json_t *tasks = json_array(), *doc;
	int rc, weak = 0, unproven = 0;
	size_t i, n_tasks;

	kj_cli_args_init(&args);
	if ((rc = kj_cli_start(cmd, argc, argv, &args)) >= 0) {
		json_decref(tasks);
		return rc;
	}
	memset(&o, 0, sizeof(o));
	op = args.opt[OPT_OP].count ? args.opt[OPT_OP].text : NULL;
	dir = args.opt[OPT_DIR].count ? args.opt[OPT_DIR].text : ".";
	o.device = args.opt[OPT_DEVICE].count ? args.opt[OPT_DEVICE].text : NULL;
	o.jobs = args.opt[OPT_JOBS].count ? (int)args.opt[OPT_JOBS].integer : 2;
	o.timeout_s = args.opt[OPT_TIMEOUT].count ? args.opt[OPT_TIMEOUT].number : 0;
	o.only = args.opt[OPT_CANARIES].count ? args.opt[OPT_CANARIES].mask : 0;
	json_path = args.opt[OPT_JSON].count ? args.opt[OPT_JSON].text : NULL;
	python = args.opt[OPT_PYTHON].count ? args.opt[OPT_PYTHON].text : NULL;
	if (!tasks) {
		kj_cli_args_release(&args);
		kj_cli_error(cmd, "out of memory");
		return kj_cli_judge_exit(cmd);
	}
	rc = 0;
	if (!op && args.n_operands != 1)
		rc = kj_cli_error(cmd, "give a SUITE, or --op_name OP with --verify_dir DIR");
	else if (op && args.n_operands)
		rc = kj_cli_error(cmd, "give a SUITE or --op_name, not both");
	else if (!op && args.opt[OPT_DIR].count)
		rc = kj_cli_error(cmd, "--verify_dir goes with --op_name");
	else if (op && kj_torch_name_problem(op))
		rc = kj_cli_error(cmd, "'%s': not an op name: it %s", op,
				  kj_torch_name_problem(op));
	if (!rc && json_path && kj_cli_check_output(cmd, json_path, NULL))
		rc = -1;
	if (!rc && kj_cli_config(cmd, &cfg, python))
		rc = -1;
	if (rc) {
		kj_cli_args_release(&args);
		json_decref(tasks);
		return KJ_EXIT_USAGE;
	}
	/* Every canary is a verify of two workers. */
	kj_cli_mem_budget(cmd, &cfg, 2 * o.jobs, "two workers for each canary judged at once");
	if (kj_cli_guard(cmd)) {
		kj_cli_args_release(&args);
		json_decref(tasks);
		return KJ_EXIT_USAGE;
	}
	kj_eval_set_init(&set);
	if (op) {
		char file[PATH_MAX + 300], cases[PATH_MAX + 300];

		snprintf(file, sizeof(file), "%s/%s_torch.py", dir, op);
		snprintf(cases, sizeof(cases), "%s/%s_cases.json", dir, op);
		if (!kj__is_file(file))
			rc = kj_cli_error(cmd, "'%s': no task file", file);
		else
			rc = audit_one(cmd, &cfg, &o, op, file, kj__is_file(cases) ? cases : NULL,
				       tasks, &weak, &unproven);
	} else if (kj_eval_discover_suite(args.operands[0], &set, &err) != KJ_OK) {
		kj_cli_error(cmd, "%s", err.msg);
		rc = kj_cli_exit_for(cmd, err.code);
	} else if (!set.n_tasks) {
		rc = kj_cli_error(cmd, "'%s': no task in the suite", args.operands[0]);
	} else {
		for (i = 0; !rc && i < set.n_tasks; i++) {
			const struct kj_eval_task *t = &set.tasks[i];

			if (t->spec_source) {
				rc = kj_cli_error(cmd, "'%s': the audit judges torch tasks, not a "
						  "suite of specs", args.operands[0]);
				break;
			}
			rc = audit_one(cmd, &cfg, &o, t->name, t->path, t->cases_path, tasks,
				       &weak, &unproven);
		}
	}
	kj_eval_set_release(&set);
	kj_cli_args_release(&args);
	if (!rc && json_path) {
		doc = json_pack("{s:O}", "tasks", tasks);
		if (!doc || kj_cli_write_json(cmd, json_path, doc) < 0)
			rc = kj_cli_judge_exit(cmd);
		json_decref(doc);
	}
	n_tasks = json_array_size(tasks);
	json_decref(tasks);
	if (!rc) {
		printf("%zu tasks: %d weak, %d not proven\n", n_tasks, weak, unproven);
		rc = weak ? KJ_EXIT_FAIL : unproven ? KJ_EXIT_USAGE : KJ_EXIT_OK;
	}
	if (fflush(stdout) != 0) {
		kj_cli_error(cmd, "cannot write to standard output");
		rc = KJ_EXIT_USAGE;
	}
	return rc;
}
