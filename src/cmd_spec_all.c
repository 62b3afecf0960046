/*
 * cmd_spec_all.c - `kjudge spec verify --all`: the baselines of a suite.
 *
 * Every spec the manifest names is loaded and its pristine reference
 * verified (no candidate) with the options of `spec verify`; the result is
 * one entry per spec, in the manifest's order: a table for people, one
 * JSON document for scripts (docs/spec.md, "verify --all").  A reference
 * that fails its own oracle is a suite that cannot judge translations into
 * that spec; `kjudge eval` checks the same thing itself before it judges
 * one (a task_error), so this record is for the suite's author and CI.
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

/* Whether api is one of the comma list (NULL: every API). */
static int api_wanted(const char *list, const char *api)
{
	size_t n = strlen(api);
	const char *p = list;

	if (!list)
		return 1;
	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == n && strncmp(p, api, n) == 0)
			return 1;
		p = end ? end + 1 : NULL;
	}
	return 0;
}

/* The failing strategies' types, as an array (new reference or NULL). */
static json_t *failing_of(const json_t *rec)
{
	json_t *a = json_array(), *v;
	size_t i;

	json_array_foreach(json_object_get(rec, "strategies"), i, v) {
		const char *st = json_string_value(json_object_get(v, "status"));

		if (a && st && strcmp(st, "PASS") &&
		    json_array_append(a, json_object_get(v, "type")) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

int kj__cmd_spec_verify_all(const struct kj_cli_command *cmd, const char *root, const char *apis,
			    const struct kj_spec_verify_opts *o, int json)
{
	const char *top = root ? root : ".";
	json_t *doc = NULL, *list = NULL;
	struct kj_error err;
	char **files = NULL;
	size_t n = 0, i, passed = 0, failed = 0, chosen = 0;
	int rc, judge_failed = 0, exit_code;

	if (kj_spec_suite_list(top, &files, &n, &err) != KJ_OK)
		return kj__cmd_spec_refuse(cmd, NULL, json, err.msg);
	list = json_array();
	if (!list || !(doc = json_pack("{s:s, s:s, s:O}", "root", top, "config",
				       o->config ? o->config : "correctness", "specs", list))) {
		json_decref(list);
		kj_spec_suite_free(files, n);
		return kj_cli_error(cmd, "out of memory");
	}
	json_decref(list);
	if (!json)
		printf("%-34s %-7s %-11s %-7s %-9s %8s  %s\n", "SPEC", "API", "STATUS", "BUILD", "RUN",
		       "SECONDS", "DETAIL");
	for (i = 0; i < n && !kj_proc_interrupted(); i++) {
		const char *rel = files[i] + strlen(top) + 1;
		struct kj_spec s;
		enum kj_spec_status st = KJ_SPEC_ERROR;
		json_t *rec = NULL, *e;
		char detail[512] = "";
		const char *status;

		rc = kj_spec_load(&s, files[i], root, &err);
		if (rc == KJ_OK && !api_wanted(apis, s.parallel_api)) {
			kj_spec_release(&s);
			continue;
		}
		chosen++;
		if (rc == KJ_OK)
			rc = kj_spec_verify(&s, o, &st, &rec, &err);
		if (rc == KJ_EINTR)
			break;
		if (rc != KJ_OK && rc != KJ_EINVAL && rc != KJ_ENOENT)
			judge_failed = 1;
		status = rc == KJ_OK ? kj_spec_status_name(st) : "ERROR";
		if (rc == KJ_OK)
			e = json_pack("{s:s, s:s?, s:s?, s:s, s:O?, s:O?, s:o?, s:O}", "spec", rel,
				      "unique_id", s.unique_id, "parallel_api", s.parallel_api,
				      "status", status, "build", json_object_get(rec, "build"),
				      "run", json_object_get(rec, "run"), "failing",
				      failing_of(rec), "record", rec);
		else
			e = json_pack("{s:s, s:s?, s:s?, s:s, s:s}", "spec", rel, "unique_id",
				      s.unique_id, "parallel_api", s.parallel_api, "status", status,
				      "error", err.msg);
		if (!e || json_array_append_new(json_object_get(doc, "specs"), e) != 0) {
			json_decref(rec);
			kj_spec_release(&s);
			json_decref(doc);
			kj_spec_suite_free(files, n);
			return kj_cli_error(cmd, "out of memory");
		}
		if (rc == KJ_OK && st == KJ_SPEC_PASS)
			passed++;
		else
			failed++;
		if (!json) {
			const json_t *b = json_object_get(rec, "build"), *r = json_object_get(rec, "run");

			if (rc == KJ_OK)
				kj_spec_record_why(rec, detail, sizeof(detail));
			else
				snprintf(detail, sizeof(detail), "%s", err.msg);
			printf("%-34s %-7s %-11s %-7s %-9s %8.3f  %s\n",
			       kj_cli_shown(s.unique_id ? s.unique_id : rel),
			       kj_cli_shown(s.parallel_api ? s.parallel_api : "?"),
			       status, !b ? "-" : json_is_true(json_object_get(b, "cached")) ? "cached"
			       : kj_cli_shown(json_string_value(json_object_get(b, "status"))),
			       r ? kj_cli_shown(json_string_value(json_object_get(r, "status"))) : "-",
			       json_number_value(json_object_get(r, "duration_s")),
			       kj_cli_shown(detail));
			fflush(stdout);
		}
		json_decref(rec);
		kj_spec_release(&s);
	}
	kj_spec_suite_free(files, n);
	if (kj_proc_interrupted() || i < n) {
		json_decref(doc);
		return kj_cli_interrupted(cmd);
	}
	if (json_object_set_new(doc, "passed", json_integer((json_int_t)passed)) ||
	    json_object_set_new(doc, "failed", json_integer((json_int_t)failed)) ||
	    json_object_set_new(doc, "all_pass", json_boolean(failed == 0 && chosen > 0))) {
		json_decref(doc);
		return kj_cli_error(cmd, "out of memory");
	}
	if (json) {
		if (kj_json_print(stdout, doc, JSON_INDENT(2), &err) != KJ_OK) {
			json_decref(doc);
			return kj_cli_error(cmd, "%s", err.msg);
		}
		printf("\n");
	} else {
		printf("%zu of %zu references pass their own oracle%s\n", passed, chosen,
		       failed ? "; those that do not cannot judge translations into them" : "");
	}
	json_decref(doc);
	if (fflush(stdout) != 0)
		return kj_cli_error(cmd, "cannot write to standard output");
	if (chosen == 0)
		return kj_cli_error(cmd, "no spec of the manifest is of the APIs '%s'", apis);
	exit_code = failed ? KJ_EXIT_FAIL : KJ_EXIT_OK;
	return judge_failed ? KJ_EXIT_USAGE : exit_code;
}
