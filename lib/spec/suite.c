/*
 * suite.c - the specs a suite's manifest names (kjudge/spec.h,
 * kj_spec_suite_list): the reader shared by `kjudge spec verify --all` and
 * by `kjudge eval` over a suite.  Only what those two need is read here
 * (each line's spec_file); the manifest's own checks are validate's.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kjudge/jschema.h"
#include "kjudge/spec.h"
#include "base/banned.h"

struct reader {
	const char *root;
	char **files;
	size_t n, cap;
	int rc;
	struct kj_error *err;
};

static int on_line(void *ctx, size_t line, json_t *v, const struct kj_error *bad)
{
	struct reader *r = ctx;
	const char *f;
	char path[PATH_MAX];

	if (bad) {
		r->rc = kj_error_set(r->err, KJ_EINVAL, "%s", bad->msg);
		return 1;
	}
	f = json_string_value(json_object_get(v, "spec_file"));
	if (!f || !*f || f[0] == '/') {
		r->rc = kj_error_set(r->err, KJ_EINVAL, "%s/manifest.jsonl:%zu: spec_file %s",
				     r->root, line, f ? "must be a path relative to the root"
						      : "is missing or not a string");
		return 1;
	}
	if (snprintf(path, sizeof(path), "%s/%s", r->root, f) >= (int)sizeof(path)) {
		r->rc = kj_error_set(r->err, KJ_EINVAL, "%s/manifest.jsonl:%zu: spec_file too long",
				     r->root, line);
		return 1;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 16;
		char **nf = realloc(r->files, cap * sizeof(*nf));

		if (!nf) {
			r->rc = kj_error_set(r->err, KJ_ENOMEM, "out of memory");
			return 1;
		}
		r->files = nf;
		r->cap = cap;
	}
	if (!(r->files[r->n] = strdup(path))) {
		r->rc = kj_error_set(r->err, KJ_ENOMEM, "out of memory");
		return 1;
	}
	r->n++;
	return 0;
}

int kj_spec_suite_list(const char *root, char ***files, size_t *n, struct kj_error *err)
{
	struct reader r = { root ? root : ".", NULL, 0, 0, KJ_OK, err };
	char path[PATH_MAX];
	int rc;

	*files = NULL;
	*n = 0;
	if (snprintf(path, sizeof(path), "%s/manifest.jsonl", r.root) >= (int)sizeof(path))
		return kj_error_set(err, KJ_EINVAL, "'%s': path too long", r.root);
	rc = kj_jsonl_load_file(path, KJ_JSONX_OBJECT, on_line, &r, err);
	if (rc == KJ_OK && r.rc == KJ_OK && r.n == 0)
		rc = kj_error_set(err, KJ_EINVAL, "'%s': the manifest names no spec", path);
	if (rc == 1 || r.rc != KJ_OK)
		rc = r.rc;
	if (rc != KJ_OK) {
		kj_spec_suite_free(r.files, r.n);
		return rc;
	}
	*files = r.files;
	*n = r.n;
	return KJ_OK;
}

void kj_spec_suite_free(char **files, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(files[i]);
	free(files);
}

void kj_spec_record_why(const json_t *rec, char *out, size_t size)
{
	const json_t *v, *b = json_object_get(rec, "build"), *r = json_object_get(rec, "run");
	size_t i, used = 0;

	*out = '\0';
	if ((v = json_object_get(b, "reason")) && json_is_string(v)) {
		snprintf(out, size, "build: %s", json_string_value(v));
		return;
	}
	if ((v = json_object_get(r, "reason")) && json_is_string(v)) {
		snprintf(out, size, "run: %s", json_string_value(v));
		return;
	}
	json_array_foreach(json_object_get(rec, "strategies"), i, v) {
		const char *st = json_string_value(json_object_get(v, "status"));
		int n;

		if (!st || !strcmp(st, "PASS") || used + 1 >= size)
			continue;
		n = snprintf(out + used, size - used, "%s%s %s: %.300s", used ? "; " : "",
			     json_string_value(json_object_get(v, "type")), st,
			     json_string_value(json_object_get(v, "detail")));
		used += n > 0 ? (size_t)n : 0;
	}
}
