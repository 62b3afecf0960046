/*
 * cmd_spec_check.c - `kjudge spec validate`, `kjudge spec pairs` and
 * `kjudge spec argc`: a suite checked without building or running anything
 * (kjudge/spec_check.h, docs/spec.md).  cmd_spec.c parses the command line
 * with the spec command's one option table and hands these subcommands
 * here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/fileio.h"
#include "kjudge/spec_check.h"
#include "cli.h"
#include "cmd_spec.h"
#include "base/banned.h"

/* r as JSON on stdout (r released either way): 0, or the exit status. */
static int print_json(const struct kj_cli_command *cmd, json_t *r)
{
	struct kj_error err;
	int rc = kj_json_print(stdout, r, JSON_INDENT(2), &err);

	json_decref(r);
	if (rc != KJ_OK)
		return kj_cli_error(cmd, "%s", err.msg);
	printf("\n");
	return 0;
}

static void print_issues(const char *who, const char *kind, const json_t *arr)
{
	size_t i;
	const json_t *e;

	json_array_foreach(arr, i, e)
		printf("%s: %s: %s: %s\n", kj_cli_shown(who), kind,
		       kj_cli_shown(json_string_value(json_object_get(e, "path"))),
		       kj_cli_shown(json_string_value(json_object_get(e, "message"))));
}

/* The spec files: --spec's value, then every operand after the subcommand. */
static const char **spec_files(const struct kj_cli_args *a, int opt_spec, size_t *n)
{
	const char **v = calloc((size_t)a->n_operands + 1, sizeof(*v));
	int i;

	*n = 0;
	if (!v)
		return NULL;
	if (a->opt[opt_spec].count)
		v[(*n)++] = a->opt[opt_spec].text;
	for (i = 1; i < a->n_operands; i++)
		v[(*n)++] = a->operands[i];
	return v;
}

static int finish(const struct kj_cli_command *cmd, int rc)
{
	if (fflush(stdout) != 0)
		return kj_cli_error(cmd, "cannot write to standard output");
	return rc;
}

static int validate(const struct kj_cli_command *cmd, const struct kj_cli_args *a,
		    const struct kj_cmd_spec_opts *k)
{
	struct kj_spec_validate_opts o;
	struct kj_error err;
	json_t *r = NULL, *e;
	size_t n_err, i, n_warn = 0, n = 0;
	const char **files = spec_files(a, k->spec, &n);
	int modes, rc;

	if (!files)
		return kj_cli_error(cmd, "out of memory");
	modes = (n > 0) + (a->opt[k->all].count > 0) + (a->opt[k->manifest].count > 0);
	if (modes != 1) {
		free(files);
		return kj_cli_error(cmd, "spec validate wants one of --spec F..., --all or "
				    "--manifest F");
	}
	memset(&o, 0, sizeof(o));
	o.root = a->opt[k->root].text;
	o.specs = files;
	o.n_specs = n;
	o.manifest = a->opt[k->manifest].text;
	o.all = a->opt[k->all].count > 0;
	rc = kj_spec_validate(&o, &r, &n_err, &err);
	free(files);
	if (rc != KJ_OK)
		return kj_cli_error(cmd, "%s", err.msg);
	json_array_foreach(json_object_get(r, "specs"), i, e)
		n_warn += json_array_size(json_object_get(e, "warnings"));
	n_warn += json_array_size(json_object_get(json_object_get(r, "manifest"), "warnings"));
	if (a->opt[k->json].count) {
		if ((rc = print_json(cmd, r)) != 0)
			return rc;
		r = NULL;
	} else {
		const json_t *m = json_object_get(r, "manifest");

		json_array_foreach(json_object_get(r, "specs"), i, e) {
			const char *f = json_string_value(json_object_get(e, "spec"));

			print_issues(f, "error", json_object_get(e, "errors"));
			print_issues(f, "warning", json_object_get(e, "warnings"));
			if (!json_array_size(json_object_get(e, "errors")))
				printf("%s: valid\n", kj_cli_shown(f));
		}
		print_issues("manifest", "error", json_object_get(m, "errors"));
		print_issues("manifest", "warning", json_object_get(m, "warnings"));
		printf("%zu spec%s, %zu error%s, %zu warning%s\n",
		       json_array_size(json_object_get(r, "specs")),
		       json_array_size(json_object_get(r, "specs")) == 1 ? "" : "s", n_err,
		       n_err == 1 ? "" : "s", n_warn, n_warn == 1 ? "" : "s");
	}
	json_decref(r);
	return finish(cmd, n_err ? KJ_EXIT_FAIL : KJ_EXIT_OK);
}

static int pairs(const struct kj_cli_command *cmd, const struct kj_cli_args *a,
		 const struct kj_cmd_spec_opts *k)
{
	struct kj_error err;
	json_t *r = NULL, *e;
	size_t i, unresolved = 0;
	int rc;

	if (kj_spec_pairs(a->opt[k->root].text, a->opt[k->contracts].text, &r, &err) != KJ_OK)
		return kj_cli_error(cmd, "%s", err.msg);
	json_array_foreach(json_object_get(r, "ignored"), i, e) {
		const char *f = json_string_value(json_object_get(e, "spec_file"));

		fprintf(stderr, "kjudge spec: manifest line %lld: %s%s%s (ignored)\n",
			(long long)json_integer_value(json_object_get(e, "line")),
			f ? kj_cli_shown(f) : "", f ? ": " : "",
			kj_cli_shown(json_string_value(json_object_get(e, "reason"))));
	}
	json_array_foreach(json_object_get(r, "pairs"), i, e) {
		const char *c = json_string_value(json_object_get(e, "contract"));

		if (c && strcmp(c, "resolved"))
			unresolved++;
	}
	if (a->opt[k->json].count) {
		if ((rc = print_json(cmd, r)) != 0)
			return rc;
		r = NULL;
	} else {
		json_array_foreach(json_object_get(r, "pairs"), i, e) {
			const char *c = json_string_value(json_object_get(e, "contract"));
			const json_t *p, *pr = json_object_get(e, "problems");
			size_t j;

			printf("%s -> %s",
			       kj_cli_shown(json_string_value(json_object_get(e, "source_spec"))),
			       kj_cli_shown(json_string_value(json_object_get(e, "target_spec"))));
			if (c)
				printf(" [%s]", !strcmp(c, "none") ? "no contract" : kj_cli_shown(c));
			printf("\n");
			json_array_foreach(pr, j, p)
				printf("  %s\n",
				       kj_cli_shown(json_string_value(json_object_get(p, "message"))));
		}
		json_array_foreach(json_object_get(r, "unmatched_contracts"), i, e)
			printf("contract %s -> %s: no such pair in the manifest\n",
			       kj_cli_shown(json_string_value(json_object_get(e, "source_spec"))),
			       kj_cli_shown(json_string_value(json_object_get(e, "target_spec"))));
		printf("%zu pair%s\n", json_array_size(json_object_get(r, "pairs")),
		       json_array_size(json_object_get(r, "pairs")) == 1 ? "" : "s");
	}
	json_decref(r);
	return finish(cmd, unresolved ? KJ_EXIT_FAIL : KJ_EXIT_OK);
}

static int argc_cmd(const struct kj_cli_command *cmd, const struct kj_cli_args *a,
		    const struct kj_cmd_spec_opts *k)
{
	struct kj_error err;
	json_t *r = NULL, *e;
	size_t i, n = 0, bad = 0;
	const char **files = spec_files(a, k->spec, &n);
	int rc;

	if (!files)
		return kj_cli_error(cmd, "out of memory");
	if ((n > 0) + (a->opt[k->all].count > 0) != 1) {
		free(files);
		return kj_cli_error(cmd, "spec argc wants one of --spec F... or --all");
	}
	rc = kj_spec_argc(a->opt[k->root].text, files, n, a->opt[k->all].count > 0, &r, &bad, &err);
	free(files);
	if (rc != KJ_OK)
		return kj_cli_error(cmd, "%s", err.msg);
	if (a->opt[k->json].count) {
		if ((rc = print_json(cmd, r)) != 0)
			return rc;
		r = NULL;
	} else {
		const char *key;
		const json_t *v;

		json_array_foreach(json_object_get(r, "specs"), i, e)
			printf("%s %s: %s\n",
			       kj_cli_shown(json_string_value(json_object_get(e, "outcome"))),
			       kj_cli_shown(json_string_value(json_object_get(e, "spec"))),
			       kj_cli_shown(json_string_value(json_object_get(e, "detail"))));
		json_object_foreach(json_object_get(r, "counts"), key, v)
			printf("%s=%lld\n", kj_cli_shown(key), (long long)json_integer_value(v));
	}
	json_decref(r);
	return finish(cmd, bad ? KJ_EXIT_FAIL : KJ_EXIT_OK);
}

int kj_cmd_spec_check(const struct kj_cli_command *cmd, const struct kj_cli_args *a,
		       const struct kj_cmd_spec_opts *k)
{
	const char *sub = a->operands[0];

	/* A repeated option keeps only its last value (docs/cli.md): refused
	 * here, since a spec dropped from the list would pass unchecked. */
	if (a->opt[k->spec].count > 1)
		return kj_cli_error(cmd, "--spec given %d times: name the further spec files "
				    "after the first (--spec A.json B.json)", a->opt[k->spec].count);

	if (!strcmp(sub, "validate"))
		return validate(cmd, a, k);
	if (!strcmp(sub, "pairs")) {
		if (a->n_operands != 1 || a->opt[k->spec].count || a->opt[k->all].count ||
		    a->opt[k->manifest].count)
			return kj_cli_error(cmd, "spec pairs takes no SPEC (it reads the root's "
					    "manifest.jsonl)");
		return pairs(cmd, a, k);
	}
	return argc_cmd(cmd, a, k);
}
