/*
 * fuzz_validate.c - libFuzzer target for kj_validate_source(): the
 * tree-sitter runtime and grammars, the flat tree, and both analyses.
 *
 *   make fuzz [FUZZ_SECONDS=N]
 *
 * The first byte picks the language ('c' or any odd byte: CUDA C++, else
 * Python); the rest is the source.  Seeds are the files of tests/validate/
 * with that byte in front (the Makefile makes them).  Beyond "no crash, no
 * read past the buffer, no undefined behaviour, no leak" (AddressSanitizer,
 * UBSan and LeakSanitizer are on), the target checks what validate.h
 * promises:
 *   - a judged source gets a regression type of 0 to 4, which is 0 exactly
 *     when no check failed and otherwise the type of the first failing
 *     check; every finding has a line inside the source (or the line of
 *     the loader call), a call, a reason and a known check; kernels have
 *     names and lines; the JSON record can be built and printed;
 *   - the verdict is a function of the input: judging the same bytes again
 *     gives the same JSON, byte for byte;
 *   - a source that is not judged fails with KJ_ELIMIT or KJ_ENOMEM and a
 *     one-line, non-empty message, and leaves the result empty.
 * A broken promise aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/error.h"
#include "kjudge/validate.h"
#include "fuzz.h"

static struct kj_vrules *rules;
static struct kj_validator *validator;

static const int check_type[KJ_VCHECK_COUNT_] = {
	[KJ_VCHECK_KERNEL_EXISTS] = 1, [KJ_VCHECK_CALLED] = 2,
	[KJ_VCHECK_MODULE_WIDE] = 3,   [KJ_VCHECK_HOST_LIBRARY] = 3,
	[KJ_VCHECK_PLACEHOLDER] = 4,   [KJ_VCHECK_DYNAMIC] = 3,
	[KJ_VCHECK_HOST_MATH] = 3,     [KJ_VCHECK_HOST_SYNC] = 3,
	[KJ_VCHECK_TORCH_OPS] = 3,
};

static char *record(const struct kj_vresult *r)
{
	json_t *j = kj_vresult_json(r, "fuzz");
	char *s;

	CHECK(j != NULL);
	s = json_dumps(j, JSON_COMPACT);
	CHECK(s != NULL);
	json_decref(j);
	return s;
}

static void check_result(const struct kj_vresult *r, size_t lines)
{
	int c, first = 0;
	size_t i;

	for (c = 0; c < KJ_VCHECK_COUNT_; c++)
		if (r->failed[c] && !first)
			first = check_type[c];
	CHECK((int)r->regression_type == first);
	CHECK(r->suggestion != NULL && (*r->suggestion == '\0') == (first == 0));
	for (i = 0; i < r->n_violations; i++) {
		const struct kj_vviolation *v = &r->violations[i];

		CHECK(v->check >= 0 && v->check < KJ_VCHECK_COUNT_);
		CHECK(v->line >= 1 && (size_t)v->line <= lines);
		CHECK(v->call && v->reason && *v->reason);
		CHECK(strlen(v->call) <= 123);
		CHECK(!v->warning || v->check == KJ_VCHECK_HOST_SYNC);
		if (!v->warning)
			CHECK(r->failed[v->check]);
	}
	for (i = 0; i < r->n_kernels; i++)
		CHECK(r->kernels[i].name && r->kernels[i].line >= 1 &&
		      (size_t)r->kernels[i].line <= lines);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kj_vresult res, again;
	struct kj_error err;
	enum kj_vlang lang;
	const char *src;
	size_t len, lines = 1, i;
	char *a, *b;
	int rc;

	if (!validator) {
		CHECK(kj_vrules_new(&rules, NULL, &err) == KJ_OK);
		CHECK(kj_validator_new(&validator, rules, &err) == KJ_OK);
	}
	if (size == 0)
		return 0;
	lang = (data[0] & 1) ? KJ_VLANG_CUDA : KJ_VLANG_PYTHON;
	src = (const char *)data + 1;
	len = size - 1;
	for (i = 0; i < len; i++)
		lines += src[i] == '\n';

	kj_vresult_init(&res);
	kj_vresult_init(&again);
	memset(&err, 0x5a, sizeof(err)); /* the library must fill it on error */
	rc = kj_validate_source(validator, "fuzz", src, len, lang, NULL, &res, &err);
	if (rc != KJ_OK) {
		size_t n = strnlen(err.msg, sizeof(err.msg));

		CHECK(rc == KJ_ELIMIT || rc == KJ_ENOMEM);
		CHECK(err.code == rc && n > 0 && n < sizeof(err.msg));
		CHECK(memchr(err.msg, '\n', n) == NULL);
		CHECK(res.n_violations == 0 && res.n_kernels == 0 && res.mem_ == NULL);
		return 0;
	}
	check_result(&res, lines);
	CHECK(kj_validate_source(validator, "fuzz", src, len, lang, NULL, &again, &err) ==
	      KJ_OK);
	a = record(&res);
	b = record(&again);
	CHECK(strcmp(a, b) == 0);
	free(a);
	free(b);
	kj_vresult_release(&res);
	kj_vresult_release(&again);
	return 0;
}
