/*
 * fuzz_jschema.c - libFuzzer target for the strict JSON reader and the
 * JSON Schema validator (lib/spec/jsonx.c, jschema.c, jschema_check.c).
 *
 *   make fuzz [FUZZ_SECONDS=N]
 *
 * The input is a schema's text, a NUL byte, and an instance's text (no
 * NUL: the whole input is a schema, checked against itself).  Both are read
 * strictly; a schema that reads is compiled, and an instance that reads is
 * checked against it.  The whole input is also read as JSONL.  Beyond "no
 * crash, no read past the buffer, no undefined behaviour, no leak", the
 * target checks what jschema.h promises:
 *   - a rejected text has KJ_EJSON with a message "NAME:LINE:COL: ..." and
 *     no value; a schema that does not compile has KJ_ESCHEMA and a
 *     message that names a place "#...";
 *   - the fast check and the collecting one agree: no errors exactly when
 *     the instance is valid, at most the cap of them, each with a path and
 *     a message;
 *   - the JSONL reader calls back once per non-blank line, with a value or
 *     a message, never both.
 * A broken promise aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kjudge/jschema.h"
#include "fuzz.h"

static int read_text(const char *p, size_t n, unsigned flags, json_t **out)
{
	struct kj_error err = { 0 };
	int rc = kj_jsonx_loadb(p, n, "in", flags, out, &err);

	if (rc == KJ_OK) {
		CHECK(*out != NULL);
	} else {
		CHECK(*out == NULL);
		CHECK(rc == KJ_EJSON || rc == KJ_ENOMEM);
		CHECK(rc != KJ_EJSON || !strncmp(err.msg, "in:", 3));
		CHECK(!strchr(err.msg, '\n'));
	}
	return rc;
}

static int on_line(void *ctx, size_t line, json_t *value, const struct kj_error *bad)
{
	size_t *last = ctx;

	CHECK(line > *last);
	*last = line;
	CHECK(!value != !bad);
	CHECK(!bad || bad->code == KJ_EJSON);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	const char *nul = memchr(text, 0, size);
	size_t ns = nul ? (size_t)(nul - text) : size, last = 0;
	json_t *schema = NULL, *inst = NULL;
	struct kj_jschema *s = NULL;
	struct kj_error err = { 0 };
	int rc;

	rc = kj_jsonl_loadb(text, size, "in", KJ_JSONX_ALLOW_NUL, on_line, &last, &err);
	CHECK(rc == KJ_OK || rc == KJ_EJSON || rc == KJ_ENOMEM);
	if (read_text(text, ns, KJ_JSONX_ALLOW_NUL, &schema))
		return 0;
	if (nul)
		read_text(nul + 1, size - ns - 1, KJ_JSONX_ALLOW_NUL, &inst);
	else
		inst = json_incref(schema);
	rc = kj_jschema_compile(schema, "s", &s, &err);
	if (rc == KJ_OK) {
		CHECK(s != NULL);
		if (inst) {
			struct kj_jschema_result res;
			int fast = kj_jschema_is_valid(s, inst);
			size_t i;

			rc = kj_jschema_validate(s, inst, 8, &res, &err);
			CHECK(rc == KJ_OK || rc == KJ_ENOMEM);
			if (rc == KJ_OK && fast != KJ_ENOMEM) {
				CHECK((res.n == 0) == (fast == 1));
				CHECK(res.n <= 8);
				CHECK(!res.truncated || res.n == 8);
				for (i = 0; i < res.n; i++)
					CHECK(res.errors[i].path[0] && res.errors[i].message[0]);
			}
			kj_jschema_result_release(&res);
		}
		kj_jschema_free(s);
	} else {
		CHECK(s == NULL);
		CHECK(rc == KJ_ESCHEMA || rc == KJ_ENOMEM);
		CHECK(rc != KJ_ESCHEMA || strstr(err.msg, ": #") != NULL);
	}
	json_decref(schema);
	json_decref(inst);
	return 0;
}
