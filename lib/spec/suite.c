/*
 * suite.c - the specs a suite's manifest names (kjudge/spec.h,
 * kj_spec_suite_list): the reader shared by `kjudge spec verify --all` and
 * by `kjudge eval` over a suite.  Only what those two need is read here
 * (each line's spec_file); the manifest's own checks are validate's.
 */
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kjudge/jschema.h"
#include "kjudge/spec.h"
#include "base/vec.h"
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
	if (KJ__GROW(r->files, r->cap, r->n + 1) != KJ_OK) {
		r->rc = kj_error_set(r->err, KJ_ENOMEM, "out of memory");
		return 1;
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

/* A bounded one-line writer: what does not fit is cut, never overrun. */
struct line {
	char *buf;
	size_t size, used;
};

static void put(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->used + 1 >= l->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->used, l->size - l->used, fmt, ap);
	va_end(ap);
	l->used += n < 0 ? 0 : (size_t)n < l->size - l->used ? (size_t)n : l->size - l->used - 1;
}

/* The last lines (at most TAIL_LINES, each cut at TAIL_COLS bytes) of a
 * program's output as they appear in a one-line message: each quoted, a
 * control byte shown as '?', so that the message stays one line. */
#define TAIL_LINES 3
#define TAIL_COLS 160

static void put_tail(struct line *l, const char *label, const char *text)
{
	const char *end, *starts[TAIL_LINES];
	size_t n = 0, k;

	if (!text)
		return;
	end = text + strlen(text);
	while (end > text && n < TAIL_LINES) {
		const char *e = end, *b;

		while (e > text && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' '))
			e--;
		if (e == text)
			break;
		b = e;
		while (b > text && b[-1] != '\n')
			b--;
		starts[n++] = b;
		end = b;
	}
	if (!n)
		return;
	put(l, "; %s:", label);
	for (k = n; k-- > 0;) {
		const char *c = starts[k];
		size_t cols = 0;

		put(l, " \"");
		for (; *c && *c != '\n' && cols < TAIL_COLS; c++, cols++)
			put(l, "%c", (unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c);
		put(l, "%s\"", *c && *c != '\n' ? "..." : "");
	}
}

void kj_spec_record_why(const json_t *rec, char *out, size_t size)
{
	const json_t *v, *b = json_object_get(rec, "build"), *r = json_object_get(rec, "run");
	const json_t *strats = json_object_get(rec, "strategies"), *first = NULL;
	const char *status = json_string_value(json_object_get(rec, "status"));
	struct line l = { out, size, 0 };
	size_t i;

	if (!size)
		return;
	*out = '\0';
	if ((v = json_object_get(b, "reason")) && json_is_string(v)) {
		const json_t *cmds = json_object_get(b, "commands");
		const json_t *last = json_array_get(cmds, json_array_size(cmds) - 1);
		const char *err_tail = json_string_value(json_object_get(last, "stderr_tail"));

		put(&l, "build: %s", json_string_value(v));
		put_tail(&l, "its output", err_tail && *err_tail ? err_tail
				: json_string_value(json_object_get(last, "stdout_tail")));
		return;
	}
	/* The run's reason where the run gave the verdict; else the first
	 * strategy, in the declared order, that did not pass (the one that
	 * gave the verdict), then the program's last lines, then the others
	 * that did not pass. */
	if ((v = json_object_get(r, "reason")) && json_is_string(v) && status &&
	    (!strcmp(status, "RUN_FAIL") || !strcmp(status, "TIMEOUT"))) {
		put(&l, "run: %s", json_string_value(v));
	} else {
		json_array_foreach(strats, i, v) {
			const char *st = json_string_value(json_object_get(v, "status"));

			if (st && (!strcmp(st, "FAIL") || !strcmp(st, "ERROR"))) {
				first = v;
				break;
			}
		}
		if (!first)
			json_array_foreach(strats, i, v) {
				const char *st = json_string_value(json_object_get(v, "status"));

				if (st && strcmp(st, "PASS")) {
					first = v;
					break;
				}
			}
		if (first)
			put(&l, "%s %s: %.300s", json_string_value(json_object_get(first, "type")),
			    json_string_value(json_object_get(first, "status")),
			    json_string_value(json_object_get(first, "detail")));
	}
	if (!l.used)
		return;
	put_tail(&l, "the program's last lines", json_string_value(json_object_get(r, "stdout_tail")));
	put_tail(&l, "on stderr", json_string_value(json_object_get(r, "stderr_tail")));
	json_array_foreach(strats, i, v) {
		const char *st = json_string_value(json_object_get(v, "status"));

		if (v == first || !st || !strcmp(st, "PASS"))
			continue;
		put(&l, "; %s %s: %.300s", json_string_value(json_object_get(v, "type")), st,
		    json_string_value(json_object_get(v, "detail")));
	}
}
