/*
 * test_json.c - JSON that fails closed (lib/base/json.c): every allocation
 * jansson makes fails in turn, and each dump or parse either gives the
 * value's own text (or value) or says out of memory; never a text that is
 * another value's.  jansson 2.14 alone drops the bytes of a key whose
 * allocation failed and returns the rest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kjudge/fileio.h"
#include "unit.h"
#include "base/json.h"

static long calls, fail_at;

static void *fail_nth(size_t n)
{
	if (++calls == fail_at)
		return NULL;
	return malloc(n);
}

/* A record shaped like the golden cache's meta.json. */
static json_t *record(void)
{
	json_t *files = json_object();
	char k[32];
	int i;

	for (i = 0; i < 3; i++) {
		snprintf(k, sizeof(k), "out%d.npy", i);
		json_object_set_new(files, k, json_pack("{s:I, s:s}", "size", (json_int_t)4096,
							"sum", "0123456789abcdef"));
	}
	return json_pack("{s:i, s:[{s:s, s:s, s:[i, i]}, {s:s, s:f}], s:n, s:o}", "version", 1,
			 "outputs", "type", "tensor", "file", "out0.npy", "shape", 3, 4, "type",
			 "float", "value", 1.5, "input_desc", "files", files);
}

KJ_TEST(json_dump_is_the_value_or_out_of_memory)
{
	json_t *rec = record();
	char *ref, *text;
	int oom, failed = 0;

	KJ_CHECK(rec != NULL);
	ref = kj__json_dumps(rec, JSON_COMPACT, &oom);
	KJ_CHECK(ref != NULL && !oom);
	kj__json_set_malloc(fail_nth);
	for (fail_at = 1;; fail_at++) {
		calls = 0;
		text = kj__json_dumps(rec, JSON_COMPACT, &oom);
		if (calls < fail_at) {
			/* Past the last allocation: the plain text. */
			KJ_CHECK(text != NULL && !oom);
			KJ_CHECK_STR(text, ref);
			free(text);
			break;
		}
		if (text) {
			KJ_CHECK(!oom);
			KJ_CHECK_STR(text, ref);
			free(text);
		} else {
			KJ_CHECK(oom);
			failed++;
		}
	}
	KJ_CHECK(failed == fail_at - 1);
	kj__json_set_malloc(NULL);
	free(ref);
	json_decref(rec);
}

KJ_TEST(json_text_and_print_say_out_of_memory)
{
	json_t *rec = record();
	struct kj_error err;
	char *text;
	FILE *f = tmpfile();

	KJ_CHECK(rec != NULL && f != NULL);
	kj__json_set_malloc(fail_nth);
	calls = 0;
	fail_at = 4;  /* while a key is dumped */
	text = kj_json_text(rec, JSON_COMPACT, &err);
	KJ_CHECK(text == NULL);
	KJ_CHECK(err.code == KJ_ENOMEM);
	calls = 0;
	KJ_CHECK(kj_json_print(f, rec, JSON_COMPACT, &err) == KJ_ENOMEM);
	KJ_CHECK(ftell(f) == 0);  /* nothing of it written */
	kj__json_set_malloc(NULL);
	KJ_CHECK(kj_json_print(f, rec, JSON_COMPACT, &err) == KJ_OK);
	KJ_CHECK(ftell(f) > 0);
	fclose(f);
	json_decref(rec);
}

KJ_TEST(json_parse_is_the_value_or_out_of_memory)
{
	static const char text[] = "{\"nonce\":123456789012,\"ok\":true,\"outputs\":"
				   "[{\"type\":\"tensor\",\"dtype\":\"float32\",\"shape\":[3,4]}],"
				   "\"message\":\"a longer string, so that the lexer grows its buffer\"}";
	json_t *ref, *v;
	int oom;

	ref = kj__json_loadb(text, sizeof(text) - 1, 0, NULL, &oom);
	KJ_CHECK(ref != NULL && !oom);
	kj__json_set_malloc(fail_nth);
	for (fail_at = 1;; fail_at++) {
		calls = 0;
		v = kj__json_loadb(text, sizeof(text) - 1, 0, NULL, &oom);
		if (calls < fail_at) {
			KJ_CHECK(v != NULL && json_equal(v, ref));
			json_decref(v);
			break;
		}
		KJ_CHECK(v == NULL ? oom : !oom && json_equal(v, ref));
		json_decref(v);
	}
	kj__json_set_malloc(NULL);
	json_decref(ref);
}

/* Every allocation from fail_at on fails (no memory comes back). */
static void *fail_from(size_t n)
{
	if (++calls >= fail_at)
		return NULL;
	return malloc(n);
}

/*
 * jansson 2.14's lexer drops a byte whose buffer could not grow: a string
 * whose closing quote was that byte is decoded past its end (a heap
 * overflow), and an unget after it fails an assertion that aborts.  Every
 * allocation of a parse fails in turn, once and from there on, over
 * strings of every length across the lexer's buffer sizes (16 to 512), with
 * escapes and a long number: each parse is the value or out of memory, and
 * the process lives (under AddressSanitizer in CI, without a bad access).
 */
KJ_TEST(json_parse_survives_every_failed_allocation)
{
	char text[2048], s[600];
	int len, esc, mode, bad = 0;

	for (len = 1; len < 530 && !bad; len += len < 40 ? 1 : 7) {
		memset(s, 'a', (size_t)len);
		s[len] = '\0';
		for (esc = 0; esc < 2; esc++) {
			json_t *ref;
			int oom;

			snprintf(text, sizeof(text), "{\"nonce\": 1, \"k%s\": \"%s%s\", \"n\": "
				 "123456789012345678, \"l\": [1, 2.5, -3e2, true, null]}", s, s,
				 esc ? "\\u00e9\\n" : "");
			ref = kj__json_loadb(text, strlen(text), 0, NULL, &oom);
			KJ_CHECK(ref != NULL && !oom);
			for (mode = 0; mode < 2; mode++) {
				kj__json_set_malloc(mode ? fail_from : fail_nth);
				for (fail_at = 1;; fail_at++) {
					json_t *v;

					calls = 0;
					v = kj__json_loadb(text, strlen(text), 0, NULL, &oom);
					if (calls < fail_at) {
						bad |= !(v != NULL && json_equal(v, ref));
						json_decref(v);
						break;
					}
					bad |= !(v == NULL ? oom : !oom && json_equal(v, ref));
					json_decref(v);
				}
				kj__json_set_malloc(NULL);
			}
			json_decref(ref);
		}
	}
	KJ_CHECK(!bad);
}
