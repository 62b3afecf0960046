/*
 * cmd_validate.c - `kjudge validate FILE|DIR... [--json] [--rules FILE]`.
 *
 * Each candidate gets one record: with --json one JSON object per line on
 * stdout (JSON Lines: one file gives one line, which is also a plain JSON
 * document), otherwise a short human summary.  A directory operand stands
 * for the .py, .cu and .cuh files under it, in name order; one that holds
 * none is a usage error (exit 2).  A file that cannot be judged gets the
 * record {"valid": false, "error": ...}, as in the original script.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kjudge/fileio.h"
#include "kjudge/validate.h"
#include "cli.h"
#include "base/vec.h"
#include "base/banned.h"

enum {
	OPT_JSON,
	OPT_RULES,
	OPT_PRINT_RULES,
	OPT_COUNT_
};

const struct kj_cli_option kj_validate_options[] = {
	[OPT_JSON] = { .name = "json", .type = KJ_CLI_FLAG,
		       .help = "print one JSON record per file (JSON Lines)" },
	[OPT_RULES] = { .name = "rules", .type = KJ_CLI_STRING, .metavar = "FILE",
			.help = "task rules merged over the defaults (docs/validate.md)" },
	[OPT_PRINT_RULES] = { .name = "print-rules", .type = KJ_CLI_FLAG,
			      .help = "print the effective rules as JSON and exit" },
	[OPT_COUNT_] = { .name = NULL },
};

/* Deepest directory tree a directory operand is walked into. */
#define MAX_DIR_DEPTH 16

struct paths {
	char **v;
	size_t n, cap;
};

static int push_path(struct paths *p, const char *s)
{
	if (KJ__GROW(p->v, p->cap, p->n + 1) != KJ_OK)
		return -1;
	p->v[p->n] = strdup(s);
	if (!p->v[p->n])
		return -1;
	p->n++;
	return 0;
}

static void free_paths(struct paths *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int candidate_name(const char *name)
{
	size_t n = strlen(name);

	return (n > 3 && !strcmp(name + n - 3, ".py")) ||
	       (n > 3 && !strcmp(name + n - 3, ".cu")) ||
	       (n > 4 && !strcmp(name + n - 4, ".cuh"));
}

/* Candidate files under dir, sorted, appended to out.  Hidden entries and
 * __pycache__ are skipped.  Returns 0, or -1 after printing the error. */
static int walk_dir(const struct kj_cli_command *cmd, const char *dir,
		    struct paths *out, int depth)
{
	struct paths here = { 0 };
	struct dirent *e;
	DIR *d;
	size_t i;
	int rc = 0;

	if (depth > MAX_DIR_DEPTH) {
		kj_cli_error(cmd, "'%s': directories nest deeper than %d levels", dir,
			     MAX_DIR_DEPTH);
		return -1;
	}
	d = opendir(dir);
	if (!d) {
		kj_cli_error(cmd, "cannot read directory '%s': %s", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		char path[4096];
		int n;

		if (e->d_name[0] == '.' || !strcmp(e->d_name, "__pycache__"))
			continue;
		n = snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (n < 0 || (size_t)n >= sizeof(path)) {
			kj_cli_error(cmd, "'%s/%s': path too long", dir, e->d_name);
			rc = -1;
			break;
		}
		if (push_path(&here, path)) {
			kj_cli_error(cmd, "out of memory");
			rc = -1;
			break;
		}
	}
	closedir(d);
	if (here.n)
		qsort(here.v, here.n, sizeof(here.v[0]), cmp_str);
	for (i = 0; !rc && i < here.n; i++) {
		struct stat st;

		if (stat(here.v[i], &st) != 0)
			continue; /* gone, or a dangling link */
		if (S_ISDIR(st.st_mode))
			rc = walk_dir(cmd, here.v[i], out, depth + 1);
		else if (S_ISREG(st.st_mode) && candidate_name(here.v[i]) &&
			 push_path(out, here.v[i])) {
			kj_cli_error(cmd, "out of memory");
			rc = -1;
		}
	}
	free_paths(&here);
	return rc;
}

static int print_json(const struct kj_cli_command *cmd, json_t *o)
{
	int rc;

	if (!o)
		return kj_cli_error(cmd, "out of memory for a JSON record");
	rc = kj_json_print(stdout, o, JSON_COMPACT | JSON_ENSURE_ASCII, NULL) != KJ_OK ||
	     putchar('\n') == EOF;
	json_decref(o);
	return rc ? kj_cli_error(cmd, "cannot write to standard output") : 0;
}

static const char *type_words(enum kj_vtype t)
{
	switch (t) {
	case KJ_VTYPE_NO_KERNEL:
		return "no kernel";
	case KJ_VTYPE_NOT_LAUNCHED:
		return "the kernel is not launched from forward";
	case KJ_VTYPE_TORCH_COMPUTE:
		return "computation outside the kernel";
	case KJ_VTYPE_PLACEHOLDER:
		return "placeholder kernel";
	default:
		return "valid";
	}
}

/* The candidate's path and what its source says (names, calls) are the
 * candidate's bytes: shown, never raw. */
static void print_human(const char *path, const struct kj_vresult *r)
{
	size_t i;
	int c;

	if (r->regression_type == KJ_VTYPE_VALID) {
		printf("%s: valid (%s; launched:", kj_cli_shown(path),
		       r->kind == KJ_VKIND_CUDA ? "cuda" : "triton");
		for (i = 0; i < r->n_called; i++)
			printf("%s%s", i ? ", " : " ", kj_cli_shown(r->called[i]));
		printf(")\n");
	} else {
		printf("%s: degraded, type %d: %s\n", kj_cli_shown(path), (int)r->regression_type,
		       type_words(r->regression_type));
		/* the check that decided the type, when it says more than its findings */
		for (c = 0; c < KJ_VCHECK_COUNT_; c++)
			if (r->failed[c]) {
				if (r->check_error[c])
					printf("  %s: %s\n",
					       kj_vcheck_name((enum kj_vcheck)c, r->kind),
					       kj_cli_shown(r->check_error[c]));
				break;
			}
	}
	for (i = 0; i < r->n_violations; i++) {
		const struct kj_vviolation *v = &r->violations[i];

		printf("  %s:%d: %s%s: %s\n", kj_cli_shown(path), v->line,
		       v->warning ? "warning: " : "", kj_cli_shown(v->call), kj_cli_shown(v->reason));
	}
}

int kj_cmd_validate(const struct kj_cli_command *cmd, int argc, char **argv)
{
	struct kj_cli_args a;
	struct kj_vrules *rules = NULL;
	struct kj_validator *v = NULL;
	struct paths files = { 0 };
	struct kj_vresult res;
	struct kj_error err;
	int json, c, rc = KJ_EXIT_USAGE, degraded = 0;
	size_t i;

	kj_cli_args_init(&a);
	if ((rc = kj_cli_start(cmd, argc, argv, &a)) >= 0)
		return rc;
	rc = KJ_EXIT_USAGE;
	json = a.opt[OPT_JSON].count > 0;
	if (kj_vrules_new(&rules, a.opt[OPT_RULES].text, &err) != KJ_OK) {
		kj_cli_args_release(&a);
		return kj_cli_error(cmd, "%s", err.msg);
	}
	if (a.opt[OPT_PRINT_RULES].count) {
		json_t *doc = kj_vrules_json(rules);

		rc = doc && kj_json_print(stdout, doc, JSON_INDENT(2), NULL) == KJ_OK &&
			     putchar('\n') != EOF
			     ? KJ_EXIT_OK
			     : kj_cli_error(cmd, "cannot write the rules");
		json_decref(doc);
		goto out;
	}
	/* Checked here, not by the parser: --print-rules needs no operand. */
	if (a.n_operands == 0) {
		kj_cli_error(cmd, "expected at least one FILE or DIR");
		goto out;
	}
	for (c = 0; c < a.n_operands; c++) {
		const char *path = a.operands[c];
		struct stat st;

		/* A path that does not exist is judged as a file: its record
		 * says it cannot be read (exit 1), as the original's. */
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			size_t before = files.n;

			if (walk_dir(cmd, path, &files, 0))
				goto out;
			/* A folder with nothing to judge is a mistaken path,
			 * not a clean result. */
			if (files.n == before) {
				kj_cli_error(cmd, "'%s': no candidate files (.py, .cu, "
					     ".cuh) under it", path);
				goto out;
			}
		} else if (push_path(&files, path)) {
			kj_cli_error(cmd, "out of memory");
			goto out;
		}
	}
	if (kj_validator_new(&v, rules, &err) != KJ_OK) {
		kj_cli_error(cmd, "%s", err.msg);
		goto out;
	}
	kj_vresult_init(&res);
	for (i = 0; i < files.n; i++) {
		const char *path = files.v[i];

		if (kj_validate_file(v, path, &res, &err) != KJ_OK) {
			degraded = 1;
			if (json) {
				if (print_json(cmd, kj_vresult_error_json(path, err.msg)))
					goto out_res;
			} else {
				fprintf(stderr, "kjudge validate: %s\n", kj_cli_shown(err.msg));
			}
			continue;
		}
		degraded |= res.regression_type != KJ_VTYPE_VALID;
		if (json) {
			if (print_json(cmd, kj_vresult_json(&res, path)))
				goto out_res;
		} else {
			print_human(path, &res);
		}
	}
	rc = degraded ? KJ_EXIT_FAIL : KJ_EXIT_OK;
out_res:
	kj_vresult_release(&res);
out:
	kj_validator_free(v);
	kj_vrules_free(rules);
	free_paths(&files);
	kj_cli_args_release(&a);
	if (fflush(stdout) != 0)
		return kj_cli_error(cmd, "cannot write to standard output");
	return rc;
}
