/*
 * argc.c - `kjudge spec argc`: each spec's correctness arguments against
 * the literal `argc OP N` checks of its prompt_payload sources, with the
 * semantics of ParBench's scripts/spec_tools/check_spec_argc.py.
 *
 * The program is run with argc = len(arguments) + 1.  A check is read as
 * the idiomatic error guard it nearly always is: `argc == N` and `argc !=
 * N` demand exactly N, `argc < N` demands at least N, `argc <= N` more
 * than N; `argc > N` and `argc >= N` guard optional arguments and are not
 * enforced (a false alarm on a healthy spec costs more than a miss).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/jschema.h"
#include "kjudge/spec.h"
#include "kjudge/spec_check.h"
#include "spec/check_internal.h"
#include "base/fs.h"
#include "base/internal.h"

/* Largest source file scanned. */
#define SOURCE_MAX (64u << 20)

static int word_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_';
}

static int space_char(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
}

/* Whether argc satisfies `argc op n` read as an error guard. */
static int satisfied(const char *op, long long n, long long argc)
{
	if (!strcmp(op, "==") || !strcmp(op, "!="))
		return argc == n;
	if (!strcmp(op, "<"))
		return argc >= n;
	if (!strcmp(op, "<="))
		return argc > n;
	return 1;
}

/*
 * Scan text for `argc OP N` (argc a whole word, spaces allowed around the
 * operator; the operators tried longest first).  For each, fn(op, n); the
 * count of checks found is returned, or stops at the first one fn refuses
 * (returns nonzero) and returns -1 with *op_out / *n_out set.
 */
static long scan(const char *text, size_t len, long long argc, char op_out[3], long long *n_out)
{
	static const char *const ops[] = { "==", "!=", "<=", ">=", "<", ">" };
	long found = 0;
	size_t i;

	for (i = 0; i + 4 <= len; i++) {
		size_t j = i + 4, k;
		long long n = 0;
		const char *op = NULL;

		if (memcmp(text + i, "argc", 4) || (i && word_char(text[i - 1])))
			continue;
		while (j < len && space_char(text[j]))
			j++;
		for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
			if (j + strlen(ops[k]) <= len && !memcmp(text + j, ops[k], strlen(ops[k]))) {
				op = ops[k];
				break;
			}
		if (!op)
			continue;
		j += strlen(op);
		while (j < len && space_char(text[j]))
			j++;
		if (j == len || text[j] < '0' || text[j] > '9')
			continue;
		while (j < len && text[j] >= '0' && text[j] <= '9') {
			if (n < 1000000000000LL)
				n = n * 10 + (text[j] - '0');
			j++;
		}
		found++;
		if (!satisfied(op, n, argc)) {
			snprintf(op_out, 3, "%s", op);
			*n_out = n;
			return -1;
		}
	}
	return found;
}

/* One spec's outcome and detail. */
static int classify(const char *tree, const json_t *doc, const char **outcome, char *detail,
		    size_t size)
{
	const json_t *corr = kj__chk_obj(kj__chk_obj(kj__chk_obj(doc, "run"),
						      "input_configurations"), "correctness");
	const json_t *args = json_object_get(corr, "arguments"), *a;
	const json_t *prov = kj__chk_obj(doc, "provenance");
	const json_t *payload = json_object_get(kj__chk_obj(doc, "files"), "prompt_payload");
	char repo[PATH_MAX], src[PATH_MAX];
	size_t i, nargs = json_array_size(args);
	long long argc = (long long)nargs + 1;
	long total = 0;
	struct kj_error e;

	if (!corr || !args) {
		*outcome = "SKIP (no-args)";
		snprintf(detail, size, "no correctness arguments");
		return KJ_OK;
	}
	json_array_foreach(args, i, a)
		if ((json_is_string(a) && json_string_value(a)[0] == '-') ||
		    (json_is_number(a) && json_number_value(a) < 0)) {
			*outcome = "SKIP (flag-parsed)";
			snprintf(detail, size, "argument %zu starts with '-'", i);
			return KJ_OK;
		}
	if (kj_spec_resolve(tree, NULL, kj__chk_str(prov, "repo_root"), 1, "provenance.repo_root",
			    repo, &e) != KJ_OK ||
	    kj_spec_resolve(tree, repo, *kj__chk_str(prov, "source_path") ?
			    kj__chk_str(prov, "source_path") : ".", 1, "provenance.source_path", src,
			    &e) != KJ_OK) {
		*outcome = "SKIP (source-missing)";
		snprintf(detail, size, "%s", e.msg);
		return KJ_OK;
	}
	json_array_foreach(payload, i, a) {
		const char *name = json_string_value(a);
		char abs[PATH_MAX], op[3];
		long long n = 0;
		size_t len;
		char *text;
		long got;

		if (!name)
			continue;
		if (kj_spec_resolve(tree, src, name, 1, "files.prompt_payload", abs, &e) != KJ_OK ||
		    !kj__is_file(abs)) {
			*outcome = "SKIP (source-missing)";
			snprintf(detail, size, "%s/%s", src, name);
			return KJ_OK;
		}
		if (!(text = kj__read_file(abs, SOURCE_MAX, &len, &e)))
			return e.code == KJ_ENOMEM ? KJ_ENOMEM : kj_error_set(&e, e.code, "%s", e.msg);
		got = scan(text, len, argc, op, &n);
		free(text);
		if (got < 0) {
			*outcome = "MISMATCH";
			snprintf(detail, size, "%s checks `argc %s %lld` but spec provides %zu "
				 "arguments (argc=%lld)", name, op, n, nargs, argc);
			return KJ_OK;
		}
		total += got;
	}
	if (!total) {
		*outcome = "SKIP (no-argc)";
		snprintf(detail, size, "no literal argc comparison");
	} else {
		*outcome = "OK";
		snprintf(detail, size, "argc=%lld satisfies %ld check(s)", argc, total);
	}
	return KJ_OK;
}

static int one(const char *tree, const char *shown, const char *path, json_t *list,
	       size_t *bad, struct kj_error *err)
{
	json_t *doc = NULL, *ent;
	const char *outcome = "SPEC-MISSING";
	char detail[PATH_MAX + 256];
	struct kj_error e;
	int rc = kj_jsonx_load_file(path, KJ_JSONX_OBJECT, &doc, &e);

	if (rc == KJ_ENOENT) {
		outcome = "SPEC-MISSING";
		snprintf(detail, sizeof(detail), "%s", e.msg);
		(*bad)++;
	} else if (rc != KJ_OK) {
		return kj_error_set(err, rc, "%s", e.msg);
	} else if ((rc = classify(tree, doc, &outcome, detail, sizeof(detail))) != KJ_OK) {
		json_decref(doc);
		return kj_error_set(err, rc, "%s", rc == KJ_ENOMEM ? "out of memory" : detail);
	} else if (!strcmp(outcome, "MISMATCH")) {
		(*bad)++;
	}
	ent = json_pack("{s:s, s:s?, s:s, s:s}", "spec", shown, "unique_id",
			doc ? json_string_value(json_object_get(kj__chk_obj(doc, "identity"),
								"unique_id")) : NULL,
			"outcome", outcome, "detail", detail);
	json_decref(doc);
	if (!ent || json_array_append_new(list, ent) != 0)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	return KJ_OK;
}

int kj_spec_argc(const char *root, const char *const *files, size_t n, int all, json_t **out,
		 size_t *bad, struct kj_error *err)
{
	char r[PATH_MAX], tree[PATH_MAX], p[PATH_MAX + NAME_MAX + 8], **dir = NULL;
	json_t *rep, *list, *counts, *e;
	size_t i;
	int rc;

	*out = NULL;
	*bad = 0;
	if ((rc = kj__chk_tree(root, r, tree, err)) != KJ_OK)
		return rc;
	if (!(rep = json_pack("{s:[], s:{}}", "specs", "counts")))
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	list = json_object_get(rep, "specs");
	counts = json_object_get(rep, "counts");
	for (i = 0; i < n && rc == KJ_OK; i++)
		rc = one(tree, files[i], files[i], list, bad, err);
	if (rc == KJ_OK && all) {
		if (!(dir = kj__chk_spec_dir(r)))
			rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
		for (i = 0; dir && dir[i] && rc == KJ_OK; i++) {
			snprintf(p, sizeof(p), "%s/%s", r, dir[i]);
			rc = one(tree, dir[i], p, list, bad, err);
		}
		kj__chk_spec_dir_free(dir);
	}
	json_array_foreach(list, i, e) {
		const char *o = json_string_value(json_object_get(e, "outcome"));
		json_int_t c = json_integer_value(json_object_get(counts, o));

		if (rc == KJ_OK && json_object_set_new(counts, o, json_integer(c + 1)) != 0)
			rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	if (rc != KJ_OK) {
		json_decref(rep);
		return rc;
	}
	*out = rep;
	return KJ_OK;
}
