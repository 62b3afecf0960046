/*
 * cmd_report.c - `kjudge report DB [--md F] [--html F] [--json F] [--k LIST]
 * [--p LIST] [--kernelbench F [--model NAME] [--level L]]`: the metrics of a
 * results store (kjudge/metrics.h), for the k of pass@k and the p of
 * fast_p asked for, as Markdown, one
 * self-contained HTML page and the JSON they are printed from.
 *
 * The store is opened read-only (an eval may be writing it: WAL lets it
 * read one committed state).  Each file is made whole, then written
 * atomically; with none of the three, the Markdown goes to stdout.  Errors:
 * one line on stderr, exit 2 (bad input: no file written) or 1 (out of
 * memory, a full disk: the file that failed is as it was).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/fileio.h"
#include "kjudge/metrics.h"
#include "kjudge/store.h"
#include "cli.h"
#include "base/vec.h"
#include "base/banned.h"

enum {
	OPT_MD,
	OPT_HTML,
	OPT_JSON,
	OPT_KERNELBENCH,
	OPT_COUNT_,
	/* Not files: what the figures are computed for, and which attempts
	 * --kernelbench holds. */
	OPT_K = OPT_COUNT_,
	OPT_P,
	OPT_MODEL,
	OPT_LEVEL,
	OPT_EXCLUDE_WEAK,
	OPT_ALL_
};

const struct kj_cli_option kj_report_options[] = {
	[OPT_MD] = { .name = "md", .type = KJ_CLI_STRING, .metavar = "FILE",
		     .help = "write the Markdown report (tables per model, failures, "
			     "operators) to FILE" },
	[OPT_HTML] = { .name = "html", .type = KJ_CLI_STRING, .metavar = "FILE",
		       .help = "write the report as one self-contained HTML page (plots as "
			       "inline SVG) to FILE" },
	[OPT_JSON] = { .name = "json", .type = KJ_CLI_STRING, .metavar = "FILE",
		       .help = "write the metrics JSON that both are printed from to FILE" },
	[OPT_K] = { .name = "k", .type = KJ_CLI_STRING, .metavar = "LIST",
		    .help = "the k of pass@k, comma-separated whole numbers (default 1,2,5,10)" },
	[OPT_P] = { .name = "p", .type = KJ_CLI_STRING, .metavar = "LIST",
		    .help = "the p of fast_p, comma-separated speedup thresholds (default "
			    "0,0.5,0.8,1,1.5,2)" },
	[OPT_KERNELBENCH] = { .name = "kernelbench", .type = KJ_CLI_STRING, .metavar = "FILE",
			      .help = "write one model's attempts at one level in KernelBench's "
				      "eval_results.json format to FILE" },
	[OPT_MODEL] = { .name = "model", .type = KJ_CLI_STRING, .metavar = "NAME",
			.def = "the store's only model",
			.help = "with --kernelbench: the model whose attempts it holds" },
	[OPT_LEVEL] = { .name = "level", .type = KJ_CLI_INT, .metavar = "L", .min = 0,
			.max = 99999, .def = "the model's only level",
			.help = "with --kernelbench: the KernelBench level it holds" },
	[OPT_EXCLUDE_WEAK] = { .name = "exclude-weak", .type = KJ_CLI_FLAG,
			       .help = "every figure without the tasks eval's audit found weak "
				       "(docs/AUDIT.md): they are not operators and their "
				       "attempts count nowhere" },
	[OPT_ALL_] = { .name = NULL },
};

/* o[key] when it is a string, else dflt. */
static const char *jstr(const json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : dflt;
}

/* The attempts the metrics left out (a value no judge writes), each named
 * on stderr; past the first LEFT_OUT_SHOWN, how many more the JSON lists. */
#define LEFT_OUT_SHOWN 20

static void print_left_out(const json_t *left)
{
	size_t i, n = json_array_size(left);

	for (i = 0; i < n && i < LEFT_OUT_SHOWN; i++) {
		const json_t *o = json_array_get(left, i);
		const json_t *label = json_object_get(o, "attempt");
		const json_t *ci = json_object_get(o, "case_idx");
		char lab[32], where[48] = "";

		snprintf(lab, sizeof(lab), "%lld", (long long)json_integer_value(label));
		if (json_is_integer(ci))
			snprintf(where, sizeof(where), ", case %lld", (long long)json_integer_value(ci));
		fprintf(stderr, "kjudge report: left out: attempt %s (model '%s', task '%s', "
			"attempt '%s')%s: %s is %s, not %s\n",
			kj_cli_shown(jstr(o, "attempt_key", "(no key)")),
			kj_cli_shown(jstr(o, "model", "")), kj_cli_shown(jstr(o, "task", "")),
			kj_cli_shown(json_is_integer(label) ? lab : jstr(o, "attempt", "")), where,
			jstr(o, "column", ""), kj_cli_shown(jstr(o, "value", "")),
			jstr(o, "must_be", ""));
	}
	if (n > LEFT_OUT_SHOWN)
		fprintf(stderr, "kjudge report: left out: %zu more (the JSON's left_out lists "
			"them)\n", n - LEFT_OUT_SHOWN);
}

/* The weak tasks, named on stderr: counted or left out, and why. */
static void print_weak(const json_t *audit)
{
	const json_t *weak = json_object_get(audit, "weak");
	int excluded = json_is_true(json_object_get(audit, "exclude_weak"));
	size_t i;

	for (i = 0; i < json_array_size(weak); i++) {
		const json_t *w = json_array_get(weak, i);

		fprintf(stderr, "kjudge report: weak task %s (%lld attempts %s): %s\n",
			kj_cli_shown(jstr(w, "task", "")),
			(long long)json_integer_value(json_object_get(w, "attempts")),
			excluded ? "left out" : "counted; --exclude-weak leaves them out",
			kj_cli_shown(json_string_value(json_array_get(json_object_get(w, "reasons"),
								      0))));
	}
}

/* The texts to write, made before any is written. */
struct product {
	const char *path, *what;
	char *text;
};

int kj_cmd_report(const struct kj_cli_command *cmd, int argc, char **argv)
{
	struct kj_cli_args a;
	struct kj_store *s = NULL;
	struct kj_error err;
	struct kj_metrics_opts mo;
	struct product out[OPT_COUNT_];
	json_t *m = NULL;
	const char *db, *kb_model;
	json_t *kb = NULL;
	long long kb_left = 0;
	int rc, i, any = 0, exit_code = KJ_EXIT_USAGE, kb_level;

	kj_cli_args_init(&a);
	if ((rc = kj_cli_start(cmd, argc, argv, &a)) >= 0)
		return rc;
	db = a.operands[0];
	memset(out, 0, sizeof(out));
	out[OPT_MD].path = a.opt[OPT_MD].text;
	out[OPT_MD].what = "markdown report";
	out[OPT_HTML].path = a.opt[OPT_HTML].text;
	out[OPT_HTML].what = "html report";
	out[OPT_JSON].path = a.opt[OPT_JSON].text;
	out[OPT_JSON].what = "metrics json";
	kj_metrics_opts_default(&mo);
	if ((a.opt[OPT_K].text && kj_metrics_parse_k(a.opt[OPT_K].text, &mo, &err) != KJ_OK) ||
	    (a.opt[OPT_P].text && kj_metrics_parse_p(a.opt[OPT_P].text, &mo, &err) != KJ_OK)) {
		kj_cli_args_release(&a);
		kj_cli_error(cmd, "%s", err.msg);
		return KJ_EXIT_USAGE;
	}
	out[OPT_KERNELBENCH].path = a.opt[OPT_KERNELBENCH].text;
	out[OPT_KERNELBENCH].what = "kernelbench eval results";
	mo.exclude_weak = a.opt[OPT_EXCLUDE_WEAK].count > 0;
	kb_model = a.opt[OPT_MODEL].text;
	kb_level = a.opt[OPT_LEVEL].count ? (int)a.opt[OPT_LEVEL].integer : -1;
	kj_cli_args_release(&a);
	if ((kb_model || kb_level >= 0) && !out[OPT_KERNELBENCH].path)
		return kj_cli_error(cmd, "--model and --level go with --kernelbench");
	for (i = 0; i < OPT_COUNT_; i++) {
		if (!out[i].path)
			continue;
		any = 1;
		if (kj_cli_check_output(cmd, out[i].path, db))
			return KJ_EXIT_USAGE;
	}

	if (kj_store_open(db, KJ_STORE_READONLY, 0, &s, &err) != KJ_OK) {
		kj_cli_error(cmd, "%s", err.msg);
		return KJ_EXIT_USAGE;
	}
	rc = kj_metrics_compute_with(s, &mo, &m, &err);
	/* KernelBench's file from the same committed state. */
	if (rc == KJ_OK && out[OPT_KERNELBENCH].path)
		rc = kj_store_kernelbench(s, kb_model, kb_level, &kb, &kb_left, &err);
	kj_store_close(s);
	if (rc != KJ_OK) {
		json_decref(m);
		kj_cli_error(cmd, "'%s': %s", db, err.msg);
		return kj_cli_exit_for(cmd, rc);
	}
	if (kb_left)
		fprintf(stderr, "kjudge report: left out of the KernelBench file: %lld attempts "
			"holding a value no judge writes\n", kb_left);
	/* A warning is the report's too (every rendering shows it), and a
	 * person at the terminal sees it before opening any of them. */
	{
		const json_t *warn = json_object_get(m, "warnings");
		size_t w;

		for (w = 0; w < json_array_size(warn); w++)
			if (json_string_value(json_array_get(warn, w)))
				fprintf(stderr, "kjudge report: warning: %s\n",
					kj_cli_shown(json_string_value(json_array_get(warn, w))));
	}
	print_left_out(json_object_get(m, "left_out"));
	print_weak(json_object_get(json_object_get(m, "suite"), "audit"));
	if (!any) {
		out[OPT_MD].path = "-";
	}
	for (i = 0; i < OPT_COUNT_; i++) {
		if (!out[i].path)
			continue;
		if (i == OPT_MD)
			out[i].text = kj_metrics_markdown(m, &err);
		else if (i == OPT_HTML)
			out[i].text = kj_metrics_html(m, &err);
		else if (i == OPT_KERNELBENCH)
			out[i].text = kj_json_text(kb, JSON_INDENT(4) | JSON_REAL_PRECISION(17), &err);
		else
			out[i].text = kj_json_text(m, JSON_INDENT(2) | JSON_REAL_PRECISION(17), &err);
		if (!out[i].text) {
			kj_cli_error(cmd, "the %s cannot be made: %s", out[i].what, err.msg);
			exit_code = kj_cli_exit_for(cmd, err.code);
			goto done;
		}
	}
	for (i = 0; i < OPT_COUNT_; i++) {
		size_t len;

		if (!out[i].path)
			continue;
		if (!strcmp(out[i].path, "-") && !any) {
			/* The renderer escaped the store's text already; what
			 * reaches the terminal is checked once more, here. */
			if (kj_cli_put_shown(stdout, out[i].text) != 0) {
				kj_cli_error(cmd, "cannot write to standard output");
				goto done;
			}
			continue;
		}
		len = strlen(out[i].text);
		/* The JSON text ends without a newline: give it one. */
		if (i == OPT_JSON || i == OPT_KERNELBENCH) {
			if (KJ__RESIZE(out[i].text, len + 2) != KJ_OK) {
				kj_cli_error(cmd, "the %s cannot be made: out of memory", out[i].what);
				exit_code = kj_cli_judge_exit(cmd);
				goto done;
			}
			out[i].text[len++] = '\n';
			out[i].text[len] = '\0';
		}
		if (kj_write_file_atomic(out[i].path, out[i].text, len, &err) != KJ_OK) {
			/* A full disk is the machine's failure (exit 1); the file
			 * is as it was, those written before it are whole. */
			kj_cli_error(cmd, "%s", err.msg);
			exit_code = kj_cli_exit_for(cmd, err.code);
			goto done;
		}
		printf("%s written to %s\n", out[i].what, kj_cli_shown(out[i].path));
	}
	exit_code = KJ_EXIT_OK;
done:
	for (i = 0; i < OPT_COUNT_; i++)
		free(out[i].text);
	json_decref(m);
	json_decref(kb);
	if (fflush(stdout) != 0)
		return kj_cli_error(cmd, "cannot write to standard output");
	return exit_code;
}
