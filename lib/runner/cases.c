/*
 * cases.c - a task's cases file ({op}_cases.json beside {op}_torch.py): the
 * axes of the task and the cases they make.
 *
 *   {"axes": {"shape": [[128, 256], [4096, 4096]], "dtype": ["float16", "float32"]},
 *    "exclude": [{"dtype": "float16", "shape": [4096, 4096]}]}
 *
 * The cases are the Cartesian product of the axes, in the file's axis order
 * with the last axis varying fastest, minus every case an exclusion matches
 * (every key it names equal to the case's value, by JSON equality).  Each
 * case is an object {axis: value} in axis order; the workers pass it to the
 * task's get_inputs(**case) and get_init_inputs(**case).
 *
 * The file is read once: the bytes that are hashed are the bytes that are
 * parsed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/error.h"
#include "base/fs.h"
#include "base/hash.h"
#include "base/json.h"
#include "runner/runner_internal.h"

/* Whether s can be a Python keyword argument's name. */
static int py_name(const char *s)
{
	size_t i;

	if (!*s || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (i = 0; s[i]; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

/* Whether exclusion ex matches case c (every key ex names equal in c). */
static int excluded(const json_t *exclude, const json_t *c)
{
	size_t i;

	for (i = 0; i < json_array_size(exclude); i++) {
		const json_t *ex = json_array_get(exclude, i);
		const char *k;
		json_t *v;
		int all = 1;

		json_object_foreach((json_t *)(uintptr_t)ex, k, v)
			if (!json_equal(json_object_get(c, k), v)) {
				all = 0;
				break;
			}
		if (all)
			return 1;
	}
	return 0;
}

int kj__cases_load(const char *path, json_t **cases, char sha256[65], struct kj_error *err)
{
	json_t *root = NULL, *axes, *exclude, *out = NULL, *v;
	const char *k;
	char *text;
	size_t len = 0, n_axes, i, total = 1, idx[KJ_CASES_AXES_MAX], size[KJ_CASES_AXES_MAX];
	const char *names[KJ_CASES_AXES_MAX];
	const json_t *vals[KJ_CASES_AXES_MAX];
	json_error_t je;
	int oom = 0, rc;
	struct kj_error e;

	*cases = NULL;
	sha256[0] = '\0';
	text = kj__read_file(path, 16u << 20, &len, &e);
	if (!text)
		return kj_error_set(err, e.code == KJ_ENOMEM ? KJ_ENOMEM : KJ_EINVAL,
				    "the cases file: %s", e.msg);
	if (kj__sha256_hex(text, len, sha256) < 0) {
		free(text);
		return kj_error_set(err, KJ_ENOMEM, "cannot hash '%s' (libcrypto failed)", path);
	}
	root = kj__json_loadb(text, len, JSON_REJECT_DUPLICATES, &je, &oom);
	free(text);
	if (!root) {
		if (oom)
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
		return kj_error_set(err, KJ_EINVAL, "'%s': not JSON (line %d: %s)", path, je.line,
				    je.text);
	}
#define BAD(...) do { rc = kj_error_set(err, KJ_EINVAL, __VA_ARGS__); goto out; } while (0)
	if (!json_is_object(root))
		BAD("'%s': not a JSON object ({\"axes\": {...}, \"exclude\": [...]})", path);
	json_object_foreach(root, k, v)
		if (strcmp(k, "axes") && strcmp(k, "exclude"))
			BAD("'%s': unknown key '%.100s' (a cases file has \"axes\" and "
			    "\"exclude\")", path, k);
	axes = json_object_get(root, "axes");
	exclude = json_object_get(root, "exclude");
	if (!json_is_object(axes) || !json_object_size(axes))
		BAD("'%s': \"axes\" must be an object of axis names to non-empty arrays of "
		    "values", path);
	n_axes = json_object_size(axes);
	if (n_axes > KJ_CASES_AXES_MAX)
		BAD("'%s': %zu axes, more than %d", path, n_axes, KJ_CASES_AXES_MAX);
	i = 0;
	json_object_foreach(axes, k, v) {
		if (!py_name(k))
			BAD("'%s': axis '%.100s' is not a Python keyword name (letters, digits, "
			    "_; not a digit first)", path, k);
		if (!json_is_array(v) || !json_array_size(v))
			BAD("'%s': axis '%s' must be a non-empty array of values", path, k);
		names[i] = k;
		vals[i] = v;
		size[i] = json_array_size(v);
		idx[i] = 0;
		if (total > KJ_CASES_MAX || size[i] > KJ_CASES_MAX)
			total = KJ_CASES_MAX + 1;
		else
			total *= size[i];
		i++;
	}
	if (exclude && !json_is_array(exclude))
		BAD("'%s': \"exclude\" must be a list of objects", path);
	for (i = 0; i < json_array_size(exclude); i++) {
		const json_t *ex = json_array_get(exclude, i);

		if (!json_is_object(ex) || !json_object_size(ex))
			BAD("'%s': exclude[%zu] must be a non-empty object {axis: value}", path, i);
		json_object_foreach((json_t *)(uintptr_t)ex, k, v)
			if (!json_object_get(axes, k))
				BAD("'%s': exclude[%zu] names '%.100s', which is not an axis", path, i,
				    k);
	}
	if (total > KJ_CASES_MAX)
		BAD("'%s': the axes make more than %d cases", path, KJ_CASES_MAX);
	out = json_array();
	if (!out)
		goto oom;
	for (;;) {
		json_t *c = json_object();

		if (!c)
			goto oom;
		for (i = 0; i < n_axes; i++)
			if (json_object_set(c, names[i], json_array_get(vals[i], idx[i]))) {
				json_decref(c);
				goto oom;
			}
		if (excluded(exclude, c))
			json_decref(c);
		else if (json_array_append_new(out, c))
			goto oom;
		/* The next case: the last axis fastest. */
		for (i = n_axes; i-- > 0;) {
			if (++idx[i] < size[i])
				break;
			idx[i] = 0;
		}
		if (i == (size_t)-1)
			break;
	}
	if (!json_array_size(out))
		BAD("'%s': every case of the axes is excluded: no case left", path);
	*cases = out;
	out = NULL;
	rc = KJ_OK;
	goto out;
oom:
	rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
out:
#undef BAD
	json_decref(out);
	json_decref(root);
	return rc;
}
