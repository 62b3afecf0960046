/*
 * test_jschema.c - the strict JSON reader (lib/spec/jsonx.c) and the
 * draft-07 validator's compile errors and messages (lib/spec/jschema.c,
 * jschema_check.c), from tables: a case is one row.
 *
 * The official test suite (test_jschema_suite.c) says which instances are
 * valid; these tables pin what kjudge says, to the column and the word.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kjudge/jschema.h"
#include "unit.h"

/* --- the reader ---------------------------------------------------------- */

static const struct {
	const char *text;
	unsigned flags;
	const char *msg;  /* NULL: accepted */
} load_cases[] = {
	{ "{\"a\": 1}", KJ_JSONX_OBJECT, NULL },
	{ "{\"a\": 1,\n \"a\": 2}", 0, "f.json:2:2: duplicate key 'a' in an object" },
	{ "{\"x\": {\"b\": [1, {\"c\": 0, \"c\": 0}]}}", 0,
	  "f.json:1:26: duplicate key 'c' in an object" },
	{ "{\"a\\nb\\u0001\": 1, \"a\\nb\\u0001\": 2}", 0,
	  "f.json:1:19: duplicate key 'a\\nb\\u0001' in an object" },
	{ "{\"a\": NaN}", 0, "f.json:1:7: NaN is not JSON (numbers must be finite)" },
	{ "{\"a\":\n  -Infinity}", 0, "f.json:2:3: -Infinity is not JSON (numbers must be finite)" },
	{ "[Infinity]", 0, "f.json:1:2: Infinity is not JSON (numbers must be finite)" },
	{ "{\"a\": 99999999999999999999}", 0,
	  "f.json:1:7: integer 99999999999999999999 is out of range (beyond 64 bits)" },
	{ "[-9223372036854775809]", 0,
	  "f.json:1:2: integer -9223372036854775809 is out of range (beyond 64 bits)" },
	{ "[9223372036854775807, -9223372036854775808]", 0, NULL },
	{ "{\"t\": 1e400}", 0, "f.json:1:7: number 1e400 is beyond the range of binary64" },
	{ "[1.7976931348623158e308]", 0,
	  "f.json:1:2: number 1.7976931348623158e308 is beyond the range of binary64" },
	{ "[1.7976931348623157e308, -1.7976931348623157e308]", 0, NULL },
	{ "[0.000000000000000000000000000000001e-400]", 0,
	  "f.json:1:2: number 0.000000000000000000000000000000001e-400 underflows binary64 to zero" },
	{ "[1e-400]", 0, "f.json:1:2: number 1e-400 underflows binary64 to zero" },
	{ "[4.9e-324, 0e-999, 0.0, -0.0]", 0, NULL }, /* a subnormal, and zeros, are fine */
	{ "{\"a\": 1} x", 0, "f.json:1:10: unexpected 'x' after the JSON value" },
	{ "{\"a\": 1}{}", 0, "f.json:1:9: unexpected '{' after the JSON value" },
	{ "{\"a\": \"\xff\"}", 0, "f.json:1:8: invalid UTF-8 (byte 0xFF) in a string" },
	{ "{\"caf\xc3\xa9\": \"\xc0\xaf\"}", 0, "f.json:1:11: invalid UTF-8 (byte 0xC0) in a string" },
	{ "[\"\xed\xa0\x80\"]", 0, "f.json:1:3: invalid UTF-8 (byte 0xED) in a string" },
	{ "[\"\\ud800\"]", 0, "f.json:1:3: unpaired surrogate \\uD800 in a string" },
	{ "[\"\\udc00\\ud800\"]", 0, "f.json:1:3: unpaired surrogate \\uDC00 in a string" },
	{ "[\"\\ud83d\\ude00\"]", 0, NULL },
	{ "[\"a\\u0000b\"]", 0, "f.json:1:4: \\u0000 (NUL) is not allowed in a string" },
	{ "[\"a\\u0000b\"]", KJ_JSONX_ALLOW_NUL, NULL },
	{ "[\"tab\there\"]", 0,
	  "f.json:1:6: control character U+0009 in a string (write it as an escape)" },
	{ "[\"\\x41\"]", 0, "f.json:1:3: invalid escape '\\' followed by 'x'" },
	{ "[1, 2", 0, "f.json:1:6: unexpected end of input in an array (']' missing)" },
	{ "[1, 2,]", 0, "f.json:1:7: trailing comma before ']'" },
	{ "{\"a\": 1,}", 0, "f.json:1:9: trailing comma before '}'" },
	{ "{\"a\" 1}", 0, "f.json:1:6: expected ':' after an object's key" },
	{ "{'a': 1}", 0, "f.json:1:2: expected a string key in double quotes, found '''" },
	{ "{\"a\": 1 \"b\": 2}", 0, "f.json:1:9: expected ',' or '}' in an object, found '\"'" },
	{ "[01]", 0, "f.json:1:2: a number must not start with 0 followed by a digit" },
	{ "[1.]", 0, "f.json:1:2: a digit must follow the decimal point" },
	{ "[.5]", 0, "f.json:1:2: unexpected '.' (a value was expected)" },
	{ "[1e]", 0, "f.json:1:2: a digit must follow the exponent's 'e'" },
	{ "[tru]", 0, "f.json:1:2: unexpected 't' (a value was expected)" },
	{ "// c\n{}", 0, "f.json:1:1: unexpected '/' (a value was expected)" },
	{ "\xef\xbb\xbf{}", 0, "f.json:1:1: a byte order mark (U+FEFF) starts the text; "
	  "JSON text must not have one" },
	{ "", 0, "f.json:1:1: no JSON value (the text is empty)" },
	{ " \n\t ", 0, "f.json:2:3: no JSON value (the text is empty)" },
	{ "[1]", KJ_JSONX_OBJECT, "f.json:1:1: expected an object at the top level, found an array" },
	{ "\n  \"s\"", KJ_JSONX_OBJECT,
	  "f.json:2:3: expected an object at the top level, found a string" },
	{ "{\"\xc3\xa9\xc3\xa9\": x}", 0, "f.json:1:8: unexpected 'x' (a value was expected)" },
};

KJ_TEST(jsonx_rejections_name_line_and_column)
{
	size_t i;

	for (i = 0; i < sizeof(load_cases) / sizeof(load_cases[0]); i++) {
		struct kj_error err = { 0 };
		json_t *v = NULL;
		int rc = kj_jsonx_loadb(load_cases[i].text, strlen(load_cases[i].text), "f.json",
					load_cases[i].flags, &v, &err);

		if (!load_cases[i].msg) {
			if (rc != KJ_OK)
				kj_test_fail(__FILE__, __LINE__, "case %zu: rejected: %s", i, err.msg);
			KJ_CHECK(v != NULL);
		} else {
			if (rc != KJ_EJSON || v)
				kj_test_fail(__FILE__, __LINE__, "case %zu: accepted", i);
			if (strcmp(err.msg, load_cases[i].msg))
				kj_test_fail(__FILE__, __LINE__, "case %zu: \"%s\" != \"%s\"", i,
					     err.msg, load_cases[i].msg);
		}
		json_decref(v);
	}
}

KJ_TEST(jsonx_values_are_the_texts)
{
	struct kj_error err;
	json_t *v;
	const char *t = "{\"i\": -12, \"r\": 2.5e-3, \"s\": \"\\u00e9\\ud83d\\ude00\\n\", "
			"\"a\": [true, false, null], \"o\": {}}";

	KJ_CHECK_OK(kj_jsonx_loadb(t, strlen(t), NULL, KJ_JSONX_OBJECT, &v, &err), &err);
	KJ_CHECK_INT(json_integer_value(json_object_get(v, "i")), -12);
	KJ_CHECK(json_real_value(json_object_get(v, "r")) == 2.5e-3);
	KJ_CHECK_STR(json_string_value(json_object_get(v, "s")), "\xc3\xa9\xf0\x9f\x98\x80\n");
	KJ_CHECK_INT(json_array_size(json_object_get(v, "a")), 3);
	KJ_CHECK(json_is_object(json_object_get(v, "o")));
	json_decref(v);
}

KJ_TEST(jsonx_depth_is_bounded)
{
	size_t n = KJ_JSONX_MAX_DEPTH + 1, i;
	char *t = malloc(2 * n + 1);
	struct kj_error err;
	json_t *v;

	KJ_CHECK(t != NULL);
	for (i = 0; i < n; i++) {
		t[i] = '[';
		t[2 * n - 1 - i] = ']';
	}
	t[2 * n] = 0;
	KJ_CHECK_INT(kj_jsonx_loadb(t, 2 * n, "deep", 0, &v, &err), KJ_EJSON);
	KJ_CHECK_STR(err.msg, "deep:1:513: nesting deeper than 512 arrays and objects");
	KJ_CHECK_OK(kj_jsonx_loadb(t + 1, 2 * n - 2, "deep", 0, &v, &err), &err);
	json_decref(v);
	free(t);
}

KJ_TEST(jsonx_file_errors)
{
	struct kj_error err;
	json_t *v;
	FILE *f;

	KJ_CHECK_INT(kj_jsonx_load_file(kj_test_path("none.json"), 0, &v, &err), KJ_ENOENT);
	KJ_CHECK(v == NULL);
	f = fopen(kj_test_path("bad.json"), "w");
	KJ_CHECK(f != NULL);
	fputs("{\n  \"spec_version\": \"1.0.0\",\n  \"spec_version\": \"2\"\n}\n", f);
	fclose(f);
	KJ_CHECK_INT(kj_jsonx_load_file(kj_test_path("bad.json"), KJ_JSONX_OBJECT, &v, &err),
		     KJ_EJSON);
	KJ_CHECK(strstr(err.msg, "bad.json:3:3: duplicate key 'spec_version' in an object") != NULL);
}

/* --- JSONL ------------------------------------------------------------------ */

struct lines {
	char seen[512];
};

static int on_line(void *ctx, size_t line, json_t *value, const struct kj_error *bad)
{
	struct lines *L = ctx;
	size_t n = strlen(L->seen);

	if (value)
		snprintf(L->seen + n, sizeof(L->seen) - n, "%zu:ok ", line);
	else
		snprintf(L->seen + n, sizeof(L->seen) - n, "%zu:[%s] ", line, bad->msg);
	return 0;
}

KJ_TEST(jsonl_names_each_bad_line)
{
	const char *t = "{\"a\": 1}\n\n   \t\n{\"a\": 1, \"a\": 2}\r\n[1]\n{\"b\": 2}\n{\"c\"";
	struct lines L = { "" };
	struct kj_error err;

	KJ_CHECK_INT(kj_jsonl_loadb(t, strlen(t), "m.jsonl", KJ_JSONX_OBJECT, on_line, &L, &err),
		     KJ_EJSON);
	KJ_CHECK_STR(L.seen, "1:ok 4:[m.jsonl:4:10: duplicate key 'a' in an object] "
		     "5:[m.jsonl:5:1: expected an object at the top level, found an array] 6:ok "
		     "7:[m.jsonl:7:5: expected ':' after an object's key] ");
	KJ_CHECK_STR(err.msg, "m.jsonl:4:10: duplicate key 'a' in an object");
	L.seen[0] = 0;
	KJ_CHECK_OK(kj_jsonl_loadb("{}\n{}\n", 6, "m.jsonl", KJ_JSONX_OBJECT, on_line, &L, &err),
		    &err);
	KJ_CHECK_STR(L.seen, "1:ok 2:ok ");
}

/* --- compile errors ---------------------------------------------------------- */

static const struct {
	const char *schema;
	const char *msg;  /* NULL: compiles */
} compile_cases[] = {
	{ "{\"type\": \"object\", \"propertees\": {}}",
	  "s.json: #/propertees: unknown keyword 'propertees' (not draft-07; kjudge rejects "
	  "unknown keywords)" },
	{ "{\"properties\": {\"a\": {\"requird\": [\"x\"]}}}",
	  "s.json: #/properties/a/requird: unknown keyword 'requird' (not draft-07; kjudge "
	  "rejects unknown keywords)" },
	/* Names under properties and definitions are not keywords. */
	{ "{\"properties\": {\"$ref\": {\"type\": \"string\"}, \"type\": true}, "
	  "\"definitions\": {\"minItems\": {}}}", NULL },
	/* An unknown key a $ref points into holds schemas, not keywords. */
	{ "{\"x~y\": {\"a/b\": {\"type\": \"integer\"}}, \"$ref\": \"#/x~0y/a~1b\"}", NULL },
	{ "{\"$ref\": \"http://example.com/other.json#/definitions/a\"}",
	  "s.json: #/$ref: remote reference 'http://example.com/other.json#/definitions/a' is "
	  "not supported (only references within the schema's own document)" },
	{ "{\"$ref\": \"other.json\"}",
	  "s.json: #/$ref: remote reference 'other.json' is not supported (only references "
	  "within the schema's own document)" },
	{ "{\"$ref\": \"#/definitions/missing\"}",
	  "s.json: #/$ref: $ref '#/definitions/missing': nothing in the schema at that pointer" },
	{ "{\"$id\": \"http://x.test/root.json\", \"definitions\": {\"a\": {\"$id\": \"a.json\", "
	  "\"type\": \"integer\"}}, \"$ref\": \"a.json\"}", NULL },
	{ "{\"pattern\": \"(\"}",
	  "s.json: #/pattern: invalid regular expression '(': missing closing parenthesis at "
	  "offset 1" },
	{ "{\"patternProperties\": {\"[\": {}}}",
	  "s.json: #/patternProperties/[: invalid regular expression '[': missing terminating ] "
	  "for character class at offset 1" },
	{ "{\"minItems\": -1}", "s.json: #/minItems: expected a non-negative integer" },
	{ "{\"minItems\": 1.0, \"maxLength\": 2}", NULL },
	{ "{\"type\": \"float\"}", "s.json: #/type: unknown type 'float'" },
	{ "{\"type\": [\"string\", \"string\"]}", "s.json: #/type: type 'string' is listed twice" },
	{ "{\"required\": \"a\"}", "s.json: #/required: expected an array of strings" },
	{ "{\"multipleOf\": 0}", "s.json: #/multipleOf: expected a number greater than 0" },
	{ "{\"exclusiveMinimum\": true}", "s.json: #/exclusiveMinimum: expected a number" },
	{ "{\"allOf\": []}", "s.json: #/allOf: expected a non-empty array of schemas" },
	{ "{\"items\": [{}, 3]}", "s.json: #/items/1: a schema must be an object or a boolean" },
	{ "{\"format\": \"date-time\", \"title\": \"t\", \"$comment\": \"c\", \"default\": 1, "
	  "\"examples\": [1]}", NULL },
	{ "{\"format\": \"datetime\"}", "s.json: #/format: unknown format 'datetime'" },
	{ "{\"$schema\": \"http://json-schema.org/draft-04/schema#\"}",
	  "s.json: #/$schema: unsupported $schema 'http://json-schema.org/draft-04/schema#' "
	  "(only draft-07, http://json-schema.org/draft-07/schema#)" },
	{ "3", "s.json: #: a schema must be an object or a boolean" },
	{ "false", NULL },
};

KJ_TEST(jschema_compile_errors_name_the_keyword)
{
	size_t i;

	for (i = 0; i < sizeof(compile_cases) / sizeof(compile_cases[0]); i++) {
		struct kj_error err = { 0 };
		struct kj_jschema *s = NULL;
		json_t *doc;
		int rc;

		KJ_CHECK_OK(kj_jsonx_loadb(compile_cases[i].schema, strlen(compile_cases[i].schema),
					   NULL, 0, &doc, &err), &err);
		rc = kj_jschema_compile(doc, "s.json", &s, &err);
		if (!compile_cases[i].msg) {
			if (rc)
				kj_test_fail(__FILE__, __LINE__, "case %zu: %s", i, err.msg);
		} else {
			if (rc != KJ_ESCHEMA)
				kj_test_fail(__FILE__, __LINE__, "case %zu: compiled", i);
			if (strcmp(err.msg, compile_cases[i].msg))
				kj_test_fail(__FILE__, __LINE__, "case %zu: \"%s\" != \"%s\"", i,
					     err.msg, compile_cases[i].msg);
		}
		kj_jschema_free(s);
		json_decref(doc);
	}
}

/* --- messages ------------------------------------------------------------------- */

#define A50 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static const struct {
	const char *schema, *instance;
	const char *errors;  /* "path: message" lines, each ending in \n */
} message_cases[] = {
	{ "{\"enum\": [\"p\", \"q\"]}", "\"x\"", "(root): 'x' is not one of ['p', 'q']\n" },
	{ "{\"properties\": {\"a\": {\"properties\": {\"b\": {\"items\": {\"properties\": "
	  "{\"c\": {\"enum\": [\"p\", \"q\"]}}}}}}}}",
	  "{\"a\": {\"b\": [{}, {}, {\"c\": \"x\"}]}}",
	  "a.b[2].c: 'x' is not one of ['p', 'q']\n" },
	{ "{\"type\": \"string\"}", "1", "(root): 1 is not of type 'string'\n" },
	{ "{\"type\": [\"string\", \"null\"]}", "{\"k\": [1.5, true]}",
	  "(root): {'k': [1.5, True]} is not of type 'string', 'null'\n" },
	{ "{\"type\": \"integer\"}", "1.0", "" },
	{ "{\"type\": \"integer\"}", "1.5", "(root): 1.5 is not of type 'integer'\n" },
	{ "{\"const\": \"1.0.0\"}", "\"2\"", "(root): '1.0.0' was expected\n" },
	{ "{\"const\": 1}", "1.0", "" },
	{ "{\"enum\": [1]}", "true", "(root): True is not one of [1]\n" },
	{ "{\"required\": [\"a\", \"b\", \"c\"]}", "{\"b\": null}",
	  "(root): 'a' is a required property\n(root): 'c' is a required property\n" },
	{ "{\"properties\": {\"a\": {}}, \"additionalProperties\": false}",
	  "{\"a\": 1, \"z\": 2, \"y\": 3}",
	  "(root): Additional properties are not allowed ('z', 'y' were unexpected)\n" },
	{ "{\"additionalProperties\": false}", "{\"z\": 2}",
	  "(root): Additional properties are not allowed ('z' was unexpected)\n" },
	{ "{\"patternProperties\": {\"^x_\": {}, \"^a\": {}}, \"additionalProperties\": false}",
	  "{\"x_1\": 0, \"q\": 0, \"b\": 0}",
	  "(root): 'b', 'q' do not match any of the regexes: '^a', '^x_'\n" },
	{ "{\"additionalProperties\": {\"type\": \"string\"}}", "{\"CC\": 1, \"it's\": 2}",
	  "CC: 1 is not of type 'string'\n[\"it's\"]: 2 is not of type 'string'\n" },
	{ "{\"minItems\": 1}", "[]", "(root): [] is too short\n" },
	{ "{\"maxItems\": 1}", "[1, 2]", "(root): [1, 2] is too long\n" },
	{ "{\"minLength\": 2}", "\"\xc3\xa9\"", "(root): '\xc3\xa9' is too short\n" },
	{ "{\"maxLength\": 2}", "\"\xc3\xa9\xc3\xa9\"", "" },
	{ "{\"minProperties\": 1}", "{}", "(root): {} does not have enough properties\n" },
	{ "{\"maxProperties\": 0}", "{\"a\": 1}", "(root): {'a': 1} has too many properties\n" },
	{ "{\"pattern\": \"^[a-z0-9_]+$\"}", "\"Bad-Id\"",
	  "(root): 'Bad-Id' does not match '^[a-z0-9_]+$'\n" },
	/* $ is the very end, as in ECMA-262 (Python's re would accept this). */
	{ "{\"pattern\": \"^abc$\"}", "\"abc\\n\"", "(root): 'abc\\n' does not match '^abc$'\n" },
	{ "{\"minimum\": 0}", "-1", "(root): -1 is less than the minimum of 0\n" },
	{ "{\"maximum\": 2.5}", "3", "(root): 3 is greater than the maximum of 2.5\n" },
	{ "{\"exclusiveMinimum\": 0}", "0",
	  "(root): 0 is less than or equal to the minimum of 0\n" },
	{ "{\"exclusiveMaximum\": 1e20}", "1e20",
	  "(root): 1e+20 is greater than or equal to the maximum of 1e+20\n" },
	{ "{\"multipleOf\": 3}", "7", "(root): 7 is not a multiple of 3\n" },
	{ "{\"multipleOf\": 0.01}", "0.075", "(root): 0.075 is not a multiple of 0.01\n" },
	{ "{\"uniqueItems\": true}", "[1, 1.0]", "(root): [1, 1.0] has non-unique elements\n" },
	{ "{\"contains\": {\"const\": 5}}", "[1]",
	  "(root): [1] does not contain items matching the given schema\n" },
	{ "{\"items\": [{}], \"additionalItems\": false}", "[1, \"b\", null]",
	  "(root): Additional items are not allowed ('b', None were unexpected)\n" },
	{ "{\"dependencies\": {\"a\": [\"b\"]}}", "{\"a\": 1}",
	  "(root): 'b' is a dependency of 'a'\n" },
	{ "{\"propertyNames\": {\"pattern\": \"^[a-z]+$\"}}", "{\"ok\": 1, \"NO\": 2}",
	  "(root): 'NO' does not match '^[a-z]+$'\n" },
	{ "{\"anyOf\": [{\"type\": \"string\"}, {\"type\": \"null\"}]}", "0",
	  "(root): 0 is not valid under any of the given schemas\n" },
	{ "{\"oneOf\": [{\"type\": \"integer\"}, {\"minimum\": 0}]}", "1",
	  "(root): 1 is valid under each of {'minimum': 0}, {'type': 'integer'}\n" },
	{ "{\"not\": {\"type\": \"integer\"}}", "1",
	  "(root): 1 should not be valid under {'type': 'integer'}\n" },
	{ "{\"properties\": {\"a\": false}}", "{\"a\": 0}", "a: False schema does not allow 0\n" },
	{ "{\"if\": {\"properties\": {\"type\": {\"const\": \"file_hash\"}}, \"required\": [\"type\"]}, "
	  "\"then\": {\"required\": [\"path\"]}, \"else\": {\"required\": [\"other\"]}}",
	  "[{\"type\": \"file_hash\"}]", "" },
	{ "{\"items\": {\"if\": {\"properties\": {\"type\": {\"const\": \"file_hash\"}}, "
	  "\"required\": [\"type\"]}, \"then\": {\"required\": [\"path\"]}, "
	  "\"else\": {\"required\": [\"other\"]}}}",
	  "[{\"type\": \"file_hash\"}, {\"type\": \"x\"}]",
	  "[0]: 'path' is a required property\n[1]: 'other' is a required property\n" },
	/* Sorted by path (indexes by number), then in the schema's order. */
	{ "{\"properties\": {\"z\": {\"type\": \"string\"}, \"a\": {\"items\": {\"type\": \"integer\"}}},"
	  " \"required\": [\"q\"]}",
	  "{\"z\": 1, \"a\": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, \"ten\", 11, \"x\"]}",
	  "(root): 'q' is a required property\na[10]: 'ten' is not of type 'integer'\n"
	  "a[12]: 'x' is not of type 'integer'\nz: 1 is not of type 'string'\n" },
	{ "{\"definitions\": {\"n\": {\"type\": \"object\", \"properties\": {\"kids\": {\"type\": "
	  "\"array\", \"items\": {\"$ref\": \"#/definitions/n\"}}}}}, \"$ref\": \"#/definitions/n\"}",
	  "{\"kids\": [{\"kids\": []}, {\"kids\": [3]}]}",
	  "kids[1].kids[0]: 3 is not of type 'object'\n" },
	{ "{\"properties\": {\"a b\": {\"type\": \"null\"}, \"c.d\": {\"type\": \"null\"}}}",
	  "{\"a b\": 0, \"c.d\": 0}",
	  "['a b']: 0 is not of type 'null'\n['c.d']: 0 is not of type 'null'\n" },
	/* A repr is cut at 200 bytes. */
	{ "{\"type\": \"string\"}", "[\"" A50 A50 A50 A50 A50 "\"]",
	  "(root): ['" A50 A50 A50 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "... is not of type 'string'\n" },
};

static char *render(const struct kj_jschema_result *res)
{
	size_t i, n = 1;
	char *out;

	for (i = 0; i < res->n; i++)
		n += strlen(res->errors[i].path) + strlen(res->errors[i].message) + 3;
	out = malloc(n);
	KJ_CHECK(out != NULL);
	out[0] = 0;
	for (i = 0; i < res->n; i++) {
		size_t len = strlen(out);

		snprintf(out + len, n - len, "%s: %s\n", res->errors[i].path, res->errors[i].message);
	}
	return out;
}

KJ_TEST(jschema_messages_in_jsonschema_words)
{
	size_t i;

	for (i = 0; i < sizeof(message_cases) / sizeof(message_cases[0]); i++) {
		struct kj_error err;
		struct kj_jschema *s;
		struct kj_jschema_result res;
		json_t *schema, *inst;
		char *got;

		KJ_CHECK_OK(kj_jsonx_loadb(message_cases[i].schema, strlen(message_cases[i].schema),
					   "schema", 0, &schema, &err), &err);
		KJ_CHECK_OK(kj_jsonx_loadb(message_cases[i].instance,
					   strlen(message_cases[i].instance), "instance", 0, &inst,
					   &err), &err);
		KJ_CHECK_OK(kj_jschema_compile(schema, "schema", &s, &err), &err);
		KJ_CHECK_OK(kj_jschema_validate(s, inst, 0, &res, &err), &err);
		got = render(&res);
		if (strcmp(got, message_cases[i].errors))
			kj_test_fail(__FILE__, __LINE__, "case %zu:\n%s!=\n%s", i, got,
				     message_cases[i].errors);
		KJ_CHECK_INT(kj_jschema_is_valid(s, inst), res.n == 0);
		free(got);
		kj_jschema_result_release(&res);
		kj_jschema_free(s);
		json_decref(schema);
		json_decref(inst);
	}
}

KJ_TEST(jschema_errors_are_capped)
{
	struct kj_error err;
	struct kj_jschema *s;
	struct kj_jschema_result res;
	json_t *schema = json_pack("{s:{s:s}}", "items", "type", "string");
	json_t *inst = json_array();
	int i;

	for (i = 0; i < 10; i++)
		json_array_append_new(inst, json_integer(i));
	KJ_CHECK_OK(kj_jschema_compile(schema, NULL, &s, &err), &err);
	KJ_CHECK_OK(kj_jschema_validate(s, inst, 3, &res, &err), &err);
	KJ_CHECK_INT(res.n, 3);
	KJ_CHECK(res.truncated);
	KJ_CHECK_STR(res.errors[2].path, "[2]");
	kj_jschema_result_release(&res);
	KJ_CHECK_OK(kj_jschema_validate(s, inst, 10, &res, &err), &err);
	KJ_CHECK_INT(res.n, 10);
	KJ_CHECK(!res.truncated);
	kj_jschema_result_release(&res);
	kj_jschema_free(s);
	json_decref(schema);
	json_decref(inst);
}

/* A $ref loop that never descends into the instance ends with an error,
 * not a stack overflow. */
KJ_TEST(jschema_ref_loop_ends)
{
	struct kj_error err;
	struct kj_jschema *s;
	struct kj_jschema_result res;
	json_t *schema = json_pack("{s:[{s:s}]}", "allOf", "$ref", "#");

	KJ_CHECK_OK(kj_jschema_compile(schema, NULL, &s, &err), &err);
	KJ_CHECK_OK(kj_jschema_validate(s, json_null(), 0, &res, &err), &err);
	KJ_CHECK_INT(res.n, 1);
	KJ_CHECK_STR(res.errors[0].message,
		     "the schema nests deeper than 1024 checks here (a loop of $refs?)");
	KJ_CHECK_INT(kj_jschema_is_valid(s, json_null()), 0);
	kj_jschema_result_release(&res);
	kj_jschema_free(s);
	json_decref(schema);
}
