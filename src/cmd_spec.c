/*
 * cmd_spec.c - `kjudge spec prompt SPEC` and `kjudge spec verify SPEC`:
 * ParBench-style specs (kjudge/spec.h, docs/spec.md).  `spec validate`,
 * `spec pairs` and `spec argc` are in cmd_spec_check.c.
 *
 * One command with the subcommand as its first operand, so that one option
 * table drives the parser, --help and the man page; an option that does
 * not belong to the subcommand given is refused by name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/fileio.h"
#include "kjudge/proc.h"
#include "kjudge/spec.h"
#include "cli.h"
#include "cmd_spec.h"
#include "interrupt.h"
#include "base/banned.h"

enum {
	OPT_ROOT,
	OPT_CONFIG,
	OPT_CANDIDATE,
	OPT_JSON,
	OPT_TIME,
	OPT_WARMUP,
	OPT_REPEATS,
	OPT_BASELINE,
	OPT_BUILD_TIMEOUT,
	OPT_MAX_OUTPUT,
	OPT_MAX_WRITTEN,
	OPT_MAX_COPY,
	OPT_SPEC,
	OPT_ALL,
	OPT_MANIFEST,
	OPT_CONTRACTS,
	OPT_API,
	OPT_COUNT_
};

const struct kj_cli_option kj_spec_options[] = {
	[OPT_ROOT] = { .name = "root", .type = KJ_CLI_STRING, .metavar = "DIR",
		       .def = "the current directory",
		       .help = "the project root (config/paths.json's downloads_root is "
			       "read from it)" },
	[OPT_CONFIG] = { .name = "config", .type = KJ_CLI_STRING, .metavar = "NAME",
			 .def = "correctness",
			 .help = "verify: the input configuration to run" },
	[OPT_CANDIDATE] = { .name = "candidate", .type = KJ_CLI_STRING, .metavar = "DIR",
			    .help = "verify: a translation, whose files named by "
				    "files.translation_targets replace the source's" },
	[OPT_JSON] = { .name = "json", .type = KJ_CLI_FLAG,
		       .help = "print the record (verify) or the report (validate, pairs, "
			       "argc) as JSON on stdout" },
	[OPT_TIME] = { .name = "time", .type = KJ_CLI_FLAG,
		       .help = "verify: after a pass, time the run command (whole program)" },
	[OPT_WARMUP] = { .name = "warmup", .type = KJ_CLI_INT, .metavar = "N", .min = 0,
			 .max = 1000, .def = "1", .help = "verify --time: untimed runs first" },
	[OPT_REPEATS] = { .name = "repeats", .type = KJ_CLI_INT, .metavar = "N", .min = 1,
			  .max = 10000, .def = "5", .help = "verify --time: timed runs" },
	[OPT_BASELINE] = { .name = "baseline", .type = KJ_CLI_FLAG,
			   .help = "verify --time --candidate: time the pristine reference "
				   "too, interleaved, and report the speedup" },
	[OPT_BUILD_TIMEOUT] = { .name = "build-timeout", .type = KJ_CLI_NUMBER, .metavar = "S",
				.unit = "seconds", .min = 0.1, .max = 86400, .def = "600",
				.help = "verify: the limit of each build command" },
	[OPT_MAX_OUTPUT] = { .name = "max-output-mb", .type = KJ_CLI_INT, .metavar = "MB",
			     .min = 1, .max = 4096, .def = "16",
			     .help = "verify: stdout a run may print before it is stopped" },
	[OPT_MAX_WRITTEN] = { .name = "max-written-mb", .type = KJ_CLI_INT, .metavar = "MB",
			      .min = 1, .max = 1 << 20, .def = "256",
			      .help = "verify: bytes a build or a run may write (the largest "
				      "file, and the copy's tmpfs above what it holds)" },
	[OPT_MAX_COPY] = { .name = "max-copy-mb", .type = KJ_CLI_INT, .metavar = "MB",
			   .min = 1, .max = 1 << 20, .def = "256",
			   .help = "verify: the largest repo_root copied whole; a larger one "
				   "is copied as source_dir and working_dir only" },
	[OPT_SPEC] = { .name = "spec", .type = KJ_CLI_STRING, .metavar = "F",
		       .help = "validate, argc: a spec file (more may follow as operands)" },
	[OPT_ALL] = { .name = "all", .type = KJ_CLI_FLAG,
		      .help = "verify: every pristine reference the manifest (ROOT/manifest.jsonl) "
			      "names, instead of one SPEC; validate: the root's manifest.jsonl, "
			      "every spec and the checks across them; argc: every specs/*.json" },
	[OPT_MANIFEST] = { .name = "manifest", .type = KJ_CLI_STRING, .metavar = "F",
			   .help = "validate: a manifest (JSONL), each line against its schema" },
	[OPT_CONTRACTS] = { .name = "contracts", .type = KJ_CLI_STRING, .metavar = "FILE",
			    .help = "pairs: pair contracts (ParBench's format), loaded "
				    "fail-closed; says which pairs they resolve" },
	[OPT_API] = { .name = "api", .type = KJ_CLI_STRING, .metavar = "LIST",
		      .help = "verify --all: only the specs of these parallel APIs "
			      "(a comma list: omp,opencl)" },
	[OPT_COUNT_] = { .name = NULL },
};

const struct kj_cli_env kj_spec_env[] = {
	{ "KJ_CACHE_DIR", "where builds are kept, under spec-builds/ (default "
			  "/dev/shm/kjudge-cache-UID; off keeps none)" },
	{ "KJ_SCRATCH_DIR", "where a run's copy is made (default /dev/shm, else $TMPDIR, "
			    "else /tmp)" },
	{ "KJ_SCRATCH", "shared keeps the scratch a plain directory (no tmpfs: the written "
			"bytes are then bounded per file only)" },
	{ "KJ_SANDBOX", "off runs builds and programs without the sandbox" },
	{ "KJ_LIMIT_MEM_MB", "a build's or a run's memory (default the machine's "
			     "available memory less the judge's headroom)" },
	{ "KJ_LIMIT_CPU_S", "its CPU time in seconds (default 14400)" },
	{ "KJ_LIMIT_PROCS", "its processes and threads (default 1024)" },
	{ "KJ_LIMIT_NOFILE", "the files it may have open (default 4096)" },
	{ "KJ_LIMIT_TMP_MB", "its private /tmp and /dev/shm (default 256)" },
	{ NULL, NULL },
};

static int write_out(void *ctx, const char *bytes, size_t n)
{
	(void)ctx;
	return fwrite(bytes, 1, n, stdout) == n ? 0 : -1;
}

static int prompt(const struct kj_cli_command *cmd, const struct kj_spec *s)
{
	struct kj_error err;

	if (kj_spec_prompt(s, write_out, NULL, &err) != KJ_OK)
		return kj_cli_error(cmd, "%s", err.msg);
	if (fflush(stdout) != 0)
		return kj_cli_error(cmd, "cannot write to standard output");
	return KJ_EXIT_OK;
}

static void print_human(const json_t *r)
{
	const json_t *b = json_object_get(r, "build"), *run = json_object_get(r, "run");
	const json_t *t = json_object_get(r, "timing"), *n = json_object_get(r, "notes"), *v;
	size_t i;

	printf("%s [%s]: %s\n", kj_cli_shown(json_string_value(json_object_get(r, "unique_id"))),
	       kj_cli_shown(json_string_value(json_object_get(r, "config"))),
	       kj_cli_shown(json_string_value(json_object_get(r, "status"))));
	printf("  build: %s%s", kj_cli_shown(json_string_value(json_object_get(b, "status"))),
	       json_is_true(json_object_get(b, "cached")) ? " (cached)" : "");
	if ((v = json_object_get(b, "reason")))
		printf(": %s", kj_cli_shown(json_string_value(v)));
	printf("\n");
	if (json_object_get(b, "reason")) {
		const json_t *cmds = json_object_get(b, "commands");
		const json_t *last = json_array_get(cmds, json_array_size(cmds) - 1);
		const char *tail = json_string_value(json_object_get(last, "stderr_tail"));

		if (tail && *tail) {
			char head[2001];

			/* A compiler's words on a candidate's code: shown,
			 * its lines kept. */
			snprintf(head, sizeof(head), "%s", tail);
			printf("    %s: %s\n    stderr: ",
			       kj_cli_shown(json_string_value(json_object_get(last, "step"))),
			       kj_cli_shown(json_string_value(json_object_get(last, "how"))));
			kj_cli_put_shown(stdout, head);
			printf("\n");
		}
	}
	printf("  run: %s", kj_cli_shown(json_string_value(json_object_get(run, "status"))));
	if ((v = json_object_get(run, "how")))
		printf(", %s, %.3f s", kj_cli_shown(json_string_value(v)),
		       json_number_value(json_object_get(run, "duration_s")));
	if ((v = json_object_get(run, "reason")))
		printf(": %s", kj_cli_shown(json_string_value(v)));
	printf("\n");
	json_array_foreach(json_object_get(r, "strategies"), i, v)
		printf("  %s: %s: %s\n", kj_cli_shown(json_string_value(json_object_get(v, "type"))),
		       kj_cli_shown(json_string_value(json_object_get(v, "status"))),
		       kj_cli_shown(json_string_value(json_object_get(v, "detail"))));
	if (t) {
		const json_t *p = json_object_get(t, "program"), *bl = json_object_get(t, "baseline");

		if ((v = json_object_get(t, "error")))
			printf("  timing: %s\n", kj_cli_shown(json_string_value(v)));
		if (p)
			printf("  time: median %.6f s (min %.6f, max %.6f; %d runs after %d warm-up)\n",
			       json_number_value(json_object_get(p, "median_s")),
			       json_number_value(json_object_get(p, "min_s")),
			       json_number_value(json_object_get(p, "max_s")),
			       (int)json_integer_value(json_object_get(t, "repeats")),
			       (int)json_integer_value(json_object_get(t, "warmup")));
		if (p && (v = json_object_get(t, "floor")))
			printf("  floor: median %.6f s (/bin/true in the same sandbox)\n",
			       json_number_value(json_object_get(v, "median_s")));
		if (bl)
			printf("  baseline: median %.6f s (min %.6f, max %.6f)\n  speedup: %.3fx\n",
			       json_number_value(json_object_get(bl, "median_s")),
			       json_number_value(json_object_get(bl, "min_s")),
			       json_number_value(json_object_get(bl, "max_s")),
			       json_number_value(json_object_get(t, "speedup")));
	}
	if (n && (v = json_object_get(n, "ignored_candidate_files"))) {
		printf("  ignored (not in files.translation_targets):");
		for (i = 0; i < json_array_size(v); i++)
			printf(" %s", kj_cli_shown(json_string_value(json_array_get(v, i))));
		printf("\n");
	}
	if (n && (v = json_object_get(n, "links_not_copied"))) {
		printf("  links not copied (they leave the tree or lead to no file):");
		for (i = 0; i < json_array_size(v); i++)
			printf(" %s", kj_cli_shown(json_string_value(json_array_get(v, i))));
		printf("\n");
	}
}

/*
 * Bad input for spec verify (a spec that does not load, a path that leaves
 * the tree, a missing file, an unknown configuration, bad flags) or the
 * judge's failure: the line on stderr and exit 2 as for every command, and
 * under --json a document on stdout as well, {"spec", "status": "ERROR",
 * "message"}, so that a script reading stdout learns why.
 */
int kj__cmd_spec_refuse(const struct kj_cli_command *cmd, const char *spec, int json,
			const char *msg)
{
	if (json) {
		json_t *d = json_pack("{s:s?, s:s, s:s}", "spec", spec, "status", "ERROR",
				      "message", msg);
		struct kj_error err;

		if (d && kj_json_print(stdout, d, JSON_INDENT(2), &err) == KJ_OK)
			printf("\n");
		json_decref(d);
		fflush(stdout);
	}
	return kj_cli_error(cmd, "%s", msg);
}

static int verify(const struct kj_cli_command *cmd, const struct kj_cli_args *a,
		  const struct kj_spec *s)
{
	struct kj_spec_verify_opts o;
	struct kj_config cfg;
	struct kj_error err;
	enum kj_spec_status st;
	json_t *rec = NULL;
	const char *spec = a->n_operands > 1 ? a->operands[1] : NULL;
	int rc, json = a->opt[OPT_JSON].count > 0;

	memset(&o, 0, sizeof(o));
	if ((rc = kj_cli_config(cmd, &cfg, NULL)) != 0)
		return rc;
	if (a->opt[OPT_BASELINE].count && (!a->opt[OPT_TIME].count || !a->opt[OPT_CANDIDATE].count))
		return kj__cmd_spec_refuse(cmd, spec, json, "--baseline needs --time and --candidate");
	if ((a->opt[OPT_WARMUP].count || a->opt[OPT_REPEATS].count) && !a->opt[OPT_TIME].count)
		return kj__cmd_spec_refuse(cmd, spec, json, "--warmup and --repeats need --time");
	o.cfg = &cfg;
	o.config = a->opt[OPT_CONFIG].text;
	o.candidate = a->opt[OPT_CANDIDATE].text;
	o.build_timeout_s = a->opt[OPT_BUILD_TIMEOUT].count ? a->opt[OPT_BUILD_TIMEOUT].number : 0;
	o.output_bytes = a->opt[OPT_MAX_OUTPUT].count ? a->opt[OPT_MAX_OUTPUT].integer << 20 : 0;
	o.written_bytes = a->opt[OPT_MAX_WRITTEN].count ? a->opt[OPT_MAX_WRITTEN].integer << 20 : 0;
	o.copy_bytes = a->opt[OPT_MAX_COPY].count ? a->opt[OPT_MAX_COPY].integer << 20 : 0;
	if (a->opt[OPT_TIME].count) {
		o.warmup = a->opt[OPT_WARMUP].count ? (int)a->opt[OPT_WARMUP].integer : 1;
		o.repeats = a->opt[OPT_REPEATS].count ? (int)a->opt[OPT_REPEATS].integer : 5;
		o.baseline = a->opt[OPT_BASELINE].count > 0;
	}
	/* One program at a time. */
	kj_cli_mem_budget(cmd, &cfg, 1, "one program at a time");
	if (kj_proc_guard_signals(&err) != KJ_OK)
		return kj__cmd_spec_refuse(cmd, spec, json, err.msg);
	if (a->opt[OPT_ALL].count)
		return kj__cmd_spec_verify_all(cmd, a->opt[OPT_ROOT].text, a->opt[OPT_API].text, &o,
					       a->opt[OPT_JSON].count > 0);
	rc = kj_spec_verify(s, &o, &st, &rec, &err);
	if (rc == KJ_EINTR || kj_proc_interrupted())
		return kj_cli_interrupted(cmd);
	if (rc != KJ_OK)
		return kj__cmd_spec_refuse(cmd, spec, json, err.msg);
	{
		json_t *n = json_object_get(rec, "notes"), *ig = json_object_get(n, "ignored_candidate_files");

		if (ig)
			fprintf(stderr, "kjudge spec: candidate '%s': %zu file%s not in "
				"files.translation_targets ignored\n", kj_cli_shown(o.candidate), json_array_size(ig),
				json_array_size(ig) == 1 ? "" : "s");
	}
	if (a->opt[OPT_JSON].count) {
		if (kj_json_print(stdout, rec, JSON_INDENT(2), &err) != KJ_OK) {
			json_decref(rec);
			return kj_cli_error(cmd, "%s", err.msg);
		}
		printf("\n");
	} else {
		print_human(rec);
	}
	json_decref(rec);
	if (fflush(stdout) != 0)
		return kj_cli_error(cmd, "cannot write to standard output");
	return st == KJ_SPEC_PASS ? KJ_EXIT_OK : KJ_EXIT_FAIL;
}

int kj_cmd_spec(const struct kj_cli_command *cmd, int argc, char **argv)
{
	static const int verify_only[] = { OPT_CONFIG, OPT_CANDIDATE, OPT_JSON, OPT_TIME, OPT_WARMUP,
		OPT_REPEATS, OPT_BASELINE, OPT_BUILD_TIMEOUT, OPT_MAX_OUTPUT, OPT_MAX_WRITTEN,
		OPT_MAX_COPY, OPT_API };
	struct kj_cli_args a;
	struct kj_spec s;
	struct kj_error err;
	const char *sub;
	size_t i;
	int rc;

	kj_cli_args_init(&a);
	if ((rc = kj_cli_start(cmd, argc, argv, &a)) >= 0)
		return rc;
	sub = a.operands[0];
	if (!strcmp(sub, "validate") || !strcmp(sub, "pairs") || !strcmp(sub, "argc")) {
		static const struct kj_cmd_spec_opts k = { OPT_ROOT, OPT_JSON, OPT_SPEC, OPT_ALL,
			OPT_MANIFEST, OPT_CONTRACTS };

		for (i = 0; i < sizeof(verify_only) / sizeof(verify_only[0]); i++)
			if (verify_only[i] != OPT_JSON && a.opt[verify_only[i]].count) {
				rc = kj_cli_error(cmd, "--%s is an option of 'spec verify', not of "
						  "'spec %s'", kj_spec_options[verify_only[i]].name, sub);
				kj_cli_args_release(&a);
				return rc;
			}
		rc = kj_cmd_spec_check(cmd, &a, &k);
		kj_cli_args_release(&a);
		return rc;
	}
	if (strcmp(sub, "prompt") && strcmp(sub, "verify")) {
		kj_cli_args_release(&a);
		return kj_cli_error(cmd, "'%s' is not a spec subcommand (prompt, verify, validate, "
				    "pairs, argc)", sub);
	}
	if (a.opt[OPT_SPEC].count || (a.opt[OPT_ALL].count && strcmp(sub, "verify")) ||
	    a.opt[OPT_MANIFEST].count || a.opt[OPT_CONTRACTS].count) {
		kj_cli_args_release(&a);
		return kj_cli_error(cmd, "--spec, --all, --manifest and --contracts are options of "
				    "'spec validate', 'spec pairs' and 'spec argc' (and --all of "
				    "'spec verify')");
	}
	if (a.opt[OPT_API].count && !a.opt[OPT_ALL].count) {
		kj_cli_args_release(&a);
		return kj_cli_error(cmd, "--api needs --all");
	}
	if (a.opt[OPT_ALL].count && !strcmp(sub, "verify")) {
		/* Every reference of the manifest: no SPEC, no candidate (a
		 * translation belongs to one spec). */
		if (a.n_operands != 1 || a.opt[OPT_CANDIDATE].count || a.opt[OPT_BASELINE].count) {
			kj_cli_args_release(&a);
			return kj_cli_error(cmd, "spec verify --all takes no SPEC, --candidate or "
					    "--baseline");
		}
		kj_spec_init(&s);
		rc = verify(cmd, &a, &s);
		kj_spec_release(&s);
		kj_cli_args_release(&a);
		return rc;
	}
	if (a.n_operands != 2) {
		kj_cli_args_release(&a);
		return kj_cli_error(cmd, "spec %s wants one SPEC file", sub);
	}
	if (!strcmp(sub, "prompt"))
		for (i = 0; i < sizeof(verify_only) / sizeof(verify_only[0]); i++)
			if (a.opt[verify_only[i]].count) {
				rc = kj_cli_error(cmd, "--%s is an option of 'spec verify', not of "
						  "'spec prompt'", kj_spec_options[verify_only[i]].name);
				kj_cli_args_release(&a);
				return rc;
			}
	if (kj_spec_load(&s, a.operands[1], a.opt[OPT_ROOT].text, &err) != KJ_OK) {
		kj_spec_release(&s);
		rc = kj__cmd_spec_refuse(cmd, a.operands[1],
					 !strcmp(sub, "verify") && a.opt[OPT_JSON].count, err.msg);
		kj_cli_args_release(&a);
		return rc;
	}
	rc = !strcmp(sub, "prompt") ? prompt(cmd, &s) : verify(cmd, &a, &s);
	kj_spec_release(&s);
	kj_cli_args_release(&a);
	return rc;
}
