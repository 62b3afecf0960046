/*
 * request.c - a POST /v1/evaluations body into requests (kjudge/serve.h):
 * every field checked for its type and bound, an unknown field refused
 * (a slip would otherwise be silently ignored), the first bad one named
 * by its path in the body.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kjudge/serve.h"
#include "base/json.h"
#include "base/banned.h"

/* jansson's, through base/json.c's guards (a failed allocation is a NULL). */
static char *dumps(const json_t *v, size_t flags)
{
	int oom;

	return kj__json_dumps(v, flags, &oom);
}

static json_t *loadb(const char *b, size_t n, size_t flags, json_error_t *je)
{
	int oom;

	return kj__json_loadb(b, n, flags, je, &oom);
}

/* The most bytes of a source (a task's or a candidate's). */
#define SOURCE_MAX (16u << 20)

static int bad(struct kj_error *err, const char *where, const char *field, const char *why)
{
	return kj_error_set(err, KJ_EINVAL, "%s%s%s: %s", where, *where ? "." : "", field, why);
}

/* Whether o holds only keys of allowed (NULL-terminated); the first
 * other is named. */
static int only(const json_t *o, const char *const *allowed, const char *where,
		struct kj_error *err)
{
	const char *k;
	json_t *v;
	size_t i;

	json_object_foreach((json_t *)(uintptr_t)o, k, v) {
		for (i = 0; allowed[i] && strcmp(allowed[i], k) != 0; i++)
			;
		if (!allowed[i])
			return bad(err, where, k, "unknown field");
	}
	return KJ_OK;
}

/* A string field: *out a copy (NULL when absent and not required). */
static int text(const json_t *o, const char *key, int required, size_t max, const char *where,
		char **out, size_t *len, struct kj_error *err)
{
	json_t *v = json_object_get(o, key);
	size_t n;

	*out = NULL;
	if (!v)
		return required ? bad(err, where, key, "missing") : KJ_OK;
	if (!json_is_string(v))
		return bad(err, where, key, "not a string");
	n = json_string_length(v);
	if (n == 0)
		return bad(err, where, key, "empty");
	if (n > max)
		return bad(err, where, key, "too long");
	if (memchr(json_string_value(v), '\0', n))
		return bad(err, where, key, "holds a NUL byte");
	*out = strndup(json_string_value(v), n);
	if (!*out)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	if (len)
		*len = n;
	return KJ_OK;
}

/* A name (client id, model, attempt): printable ASCII, no '/' at the
 * start, within KJ_SERVE_NAME_MAX. */
static int name_ok(const char *s, const char *where, const char *key, struct kj_error *err)
{
	const unsigned char *p;

	for (p = (const unsigned char *)s; p && *p; p++)
		if (*p < 0x21 || *p > 0x7e)
			return bad(err, where, key, "not printable ASCII without spaces");
	return KJ_OK;
}

/* An id is a path segment of the API (/v1/evaluations/ID): letters,
 * digits and . _ : - only, so it reads back as it was given. */
static int id_ok(const char *s, const char *where, struct kj_error *err)
{
	const char *p;

	for (p = s; p && *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("._:-", *p)))
			return bad(err, where, "id", "not letters, digits and . _ : - only");
	return KJ_OK;
}

static int options(const json_t *v, const char *where, char **out, struct kj_error *err)
{
	static const char *const known[] = { "timeout_s", "warmup", "repeats", NULL };
	const char *k;
	json_t *x;
	int rc;

	*out = NULL;
	if (!v)
		return KJ_OK;
	if (!json_is_object(v))
		return bad(err, where, "options", "not an object");
	{
		char w[160];

		snprintf(w, sizeof(w), "%s%soptions", where, *where ? "." : "");
		if ((rc = only(v, known, w, err)) != KJ_OK)
			return rc;
		json_object_foreach((json_t *)(uintptr_t)v, k, x) {
			double d = json_number_value(x);

			if (!json_is_number(x))
				return bad(err, w, k, "not a number");
			if (strcmp(k, "timeout_s") == 0 ? !(d >= 0.001 && d <= 86400)
			    : strcmp(k, "warmup") == 0 ? !(json_is_integer(x) && d >= 0 && d <= 100000)
			    : !(json_is_integer(x) && d >= 1 && d <= 1000000))
				return bad(err, w, k, strcmp(k, "timeout_s") == 0
					   ? "out of range (0.001 to 86400 seconds)"
					   : "not a whole number in range");
		}
	}
	*out = dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
	return *out ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
}

static int task(const json_t *t, const char *where, struct kj_serve_req *r, struct kj_error *err)
{
	static const char *const known[] = { "source", "cases", "name", NULL };
	char w[160];
	json_t *cases;
	int rc;

	snprintf(w, sizeof(w), "%s%stask", where, *where ? "." : "");
	if (!t)
		return bad(err, where, "task", "missing");
	if (!json_is_object(t))
		return bad(err, where, "task", "not an object");
	if ((rc = only(t, known, w, err)) != KJ_OK)
		return rc;
	if (json_object_get(t, "name")) {
		if (json_object_get(t, "source") || json_object_get(t, "cases"))
			return bad(err, w, "name", "given with a source: one or the other");
		rc = text(t, "name", 1, KJ_SERVE_NAME_MAX, w, &r->task_name, NULL, err);
		return rc ? rc : name_ok(r->task_name, w, "name", err);
	}
	rc = text(t, "source", 1, SOURCE_MAX, w, &r->task_source, &r->task_source_len, err);
	if (rc != KJ_OK)
		return rc;
	cases = json_object_get(t, "cases");
	if (cases) {
		if (!json_is_object(cases))
			return bad(err, w, "cases", "not an object (a cases sidecar's format)");
		r->task_cases = dumps(cases, JSON_COMPACT | JSON_SORT_KEYS);
		if (!r->task_cases)
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	return KJ_OK;
}

static int one(const json_t *o, const char *where, struct kj_serve_req *r, struct kj_error *err)
{
	static const char *const known[] = { "task", "candidate", "mode", "model", "attempt",
					     "id", "deadline_s", "options", NULL };
	static const char *const cand_known[] = { "source", NULL };
	json_t *cand, *v;
	char w[160];
	int rc;

	if (!json_is_object(o))
		return kj_error_set(err, KJ_EINVAL, "%s: not an object", *where ? where : "body");
	if ((rc = only(o, known, where, err)) != KJ_OK ||
	    (rc = task(json_object_get(o, "task"), where, r, err)) != KJ_OK)
		return rc;
	cand = json_object_get(o, "candidate");
	snprintf(w, sizeof(w), "%s%scandidate", where, *where ? "." : "");
	if (!cand)
		return bad(err, where, "candidate", "missing");
	if (!json_is_object(cand))
		return bad(err, where, "candidate", "not an object");
	if ((rc = only(cand, cand_known, w, err)) != KJ_OK ||
	    (rc = text(cand, "source", 1, SOURCE_MAX, w, &r->source, &r->source_len, err)) != KJ_OK)
		return rc;
	v = json_object_get(o, "mode");
	snprintf(r->mode, sizeof(r->mode), "full");
	if (v) {
		const char *m = json_string_value(v);

		if (!m || (strcmp(m, "full") && strcmp(m, "verify") && strcmp(m, "benchmark")))
			return bad(err, where, "mode", "not one of full, verify, benchmark");
		snprintf(r->mode, sizeof(r->mode), "%s", m);
	}
	if ((rc = text(o, "model", 0, KJ_SERVE_NAME_MAX, where, &r->model, NULL, err)) != KJ_OK ||
	    (rc = name_ok(r->model, where, "model", err)) != KJ_OK ||
	    (rc = text(o, "id", 0, KJ_SERVE_NAME_MAX, where, &r->id, NULL, err)) != KJ_OK ||
	    (rc = id_ok(r->id, where, err)) != KJ_OK)
		return rc;
	if (!r->model && !(r->model = strdup("default")))
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	v = json_object_get(o, "attempt");
	if (json_is_integer(v)) {
		char buf[32];

		if (json_integer_value(v) < 0)
			return bad(err, where, "attempt", "negative");
		snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
		if (!(r->attempt = strdup(buf)))
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
	} else if (v && !json_is_string(v)) {
		return bad(err, where, "attempt", "not a string or a whole number");
	} else if ((rc = text(o, "attempt", 0, KJ_SERVE_NAME_MAX, where, &r->attempt, NULL,
			      err)) != KJ_OK || (rc = name_ok(r->attempt, where, "attempt", err))) {
		return rc;
	}
	v = json_object_get(o, "deadline_s");
	if (v) {
		double d = json_number_value(v);

		if (!json_is_number(v) || !isfinite(d) || d <= 0 || d > 7 * 86400)
			return bad(err, where, "deadline_s", "not a number of seconds from 0 to "
				   "604800");
		r->deadline_s = d;
	}
	return options(json_object_get(o, "options"), where, &r->options, err);
}

void kj_serve_reqs_free(struct kj_serve_req *r, size_t n)
{
	size_t i;

	for (i = 0; r && i < n; i++) {
		free(r[i].id);
		free(r[i].task_name);
		free(r[i].task_source);
		free(r[i].task_cases);
		free(r[i].source);
		free(r[i].model);
		free(r[i].attempt);
		free(r[i].options);
	}
	free(r);
}

int kj_serve_parse(const char *body, size_t len, struct kj_serve_req **out, size_t *n,
		   int *many, struct kj_error *err)
{
	json_error_t je;
	json_t *root = loadb(body, len, JSON_REJECT_DUPLICATES, &je), *list;
	struct kj_serve_req *r = NULL;
	size_t k = 0, i;
	int rc = KJ_OK;

	*out = NULL;
	*n = 0;
	if (many)
		*many = 0;
	if (!root)
		return kj_error_set(err, KJ_EINVAL, "body: not JSON (%s, line %d)", je.text,
				    je.line);
	if (!json_is_object(root)) {
		json_decref(root);
		return kj_error_set(err, KJ_EINVAL, "body: not a JSON object");
	}
	list = json_object_get(root, "evaluations");
	if (list) {
		if (json_object_size(root) != 1)
			rc = kj_error_set(err, KJ_EINVAL, "body: evaluations given with other fields");
		else if (!json_is_array(list) || json_array_size(list) == 0)
			rc = kj_error_set(err, KJ_EINVAL, "evaluations: not a non-empty array");
		else if (json_array_size(list) > KJ_SERVE_BATCH_MAX)
			rc = kj_error_set(err, KJ_EINVAL, "evaluations: more than %d",
					  KJ_SERVE_BATCH_MAX);
		k = rc == KJ_OK ? json_array_size(list) : 0;
	} else {
		k = 1;
	}
	if (rc == KJ_OK && !(r = calloc(k, sizeof(*r))))
		rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
	for (i = 0; rc == KJ_OK && i < k; i++) {
		char where[48] = "";

		if (list)
			snprintf(where, sizeof(where), "evaluations[%zu]", i);
		rc = one(list ? json_array_get(list, i) : root, where, &r[i], err);
	}
	json_decref(root);
	if (rc != KJ_OK) {
		kj_serve_reqs_free(r, k);
		return rc;
	}
	*out = r;
	*n = k;
	if (many)
		*many = list != NULL;
	return KJ_OK;
}

void kj_serve_settings(const struct kj_eval_settings *base, const char *mode,
		       const char *options, struct kj_eval_settings *out)
{
	json_t *o = options ? loadb(options, strlen(options), 0, NULL) : NULL, *v;

	*out = *base;
	/* verify: correctness and the layers, as eval's --verify-only;
	 * benchmark and full both time a candidate only after it passed. */
	if (mode && strcmp(mode, "verify") == 0)
		out->no_benchmark = 1;
	if ((v = json_object_get(o, "timeout_s")))
		out->judge.timeout_s = json_number_value(v);
	if ((v = json_object_get(o, "warmup")))
		out->bench.warmup = (int)json_integer_value(v);
	if ((v = json_object_get(o, "repeats"))) {
		out->bench.repeats = (int)json_integer_value(v);
		if (out->bench.max_repeats < out->bench.repeats)
			out->bench.max_repeats = out->bench.repeats;
	}
	json_decref(o);
}
