/*
 * jsonx.c - JSON read strictly (kjudge/jschema.h), for files an outsider
 * writes.
 *
 * The text is parsed here, not by jansson's loader, for three reasons.
 * jansson reports the place where its lexer stopped (the end of a token,
 * sometimes the next one), while a user wants the start of the bad token;
 * its number parser silently turns 1e-400 into 0.0 (underflow is not
 * checked, only overflow), and there is no hook to see a real's digits
 * after the fact; and its messages ("invalid token near 'NaN'") do not
 * say what is wrong.  The values built are ordinary jansson values, so the
 * rest of kjudge reads them with jansson's API.
 *
 * What is rejected, each at the first character of the offending token:
 * anything that is not RFC 8259 JSON (comments, trailing commas, single
 * quotes, NaN, Infinity, leading zeros, a byte order mark), duplicate keys
 * in one object, integers outside int64, reals whose magnitude exceeds
 * 1.7976931348623157e308 (the shortest decimal of DBL_MAX, the bound
 * ParBench's loader uses, so that values that would round down to DBL_MAX
 * are refused too), reals that are not zero but round to zero (subnormals
 * are accepted, as ParBench accepts them), invalid UTF-8 (overlong forms,
 * surrogates, beyond U+10FFFF), unpaired \u surrogates, raw control
 * characters in strings, U+0000 unless asked for, nesting deeper than
 * KJ_JSONX_MAX_DEPTH, and anything after the value but white space.
 *
 * Reals go through strtod, which reads '.' as the decimal point only in
 * the C locale: kjudge never calls setlocale.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kjudge/jschema.h"
#include "base/fs.h"
#include "base/vec.h"
#include "base/internal.h"

struct parser {
	const unsigned char *p, *end;
	const char *name;
	size_t line, col;  /* of *p, 1-based; col counts code points */
	unsigned flags;
	int depth;
	struct kj_error *err;
	int code;          /* KJ_OK until the first error */
	/* The string being decoded (grown as needed, reused). */
	char *buf;
	size_t cap;
};

static int fail_at(struct parser *P, size_t line, size_t col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail_at(struct parser *P, size_t line, size_t col, const char *fmt, ...)
{
	char what[KJ_ERROR_MSG_MAX];
	va_list ap;

	if (P->code)
		return P->code;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	P->code = KJ_EJSON;
	kj_error_set(P->err, KJ_EJSON, "%s:%zu:%zu: %s", P->name, line, col, what);
	return P->code;
}

static int fail_oom(struct parser *P)
{
	if (!P->code) {
		P->code = KJ_ENOMEM;
		kj_error_set(P->err, KJ_ENOMEM, "%s: out of memory", P->name);
	}
	return P->code;
}

/* One byte on; a line feed starts a line, a continuation byte of UTF-8
 * does not start a character. */
static void step(struct parser *P)
{
	unsigned char c = *P->p++;

	if (c == '\n') {
		P->line++;
		P->col = 1;
	} else if ((c & 0xc0) != 0x80) {
		P->col++;
	}
}

static void skip_ws(struct parser *P)
{
	while (P->p < P->end && (*P->p == ' ' || *P->p == '\t' || *P->p == '\n' || *P->p == '\r'))
		step(P);
}

/*
 * The length of the valid UTF-8 sequence at p (1 to 4), or 0: overlong
 * forms, UTF-16 surrogates (U+D800..U+DFFF) and code points past U+10FFFF
 * are invalid, as RFC 3629 says.
 */
static int utf8_seq(const unsigned char *p, const unsigned char *end)
{
	unsigned char c = p[0];
	int n, i;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (end - p < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* Describe the character at P->p for a message: 'x', U+00E9, or byte 0xFF. */
static void describe(const struct parser *P, char *out, size_t size)
{
	unsigned char c = *P->p;
	int n = utf8_seq(P->p, P->end);

	if (c >= 0x21 && c < 0x7f)
		snprintf(out, size, "'%c'", c);
	else if (n == 0)
		snprintf(out, size, "byte 0x%02X (not UTF-8)", c);
	else if (n == 1)
		snprintf(out, size, "U+%04X", c);
	else
		snprintf(out, size, "'%.*s'", n, (const char *)P->p);
}

static int need_buf(struct parser *P, size_t len)
{
	return KJ__GROW(P->buf, P->cap, len) == KJ_OK ? 0 : fail_oom(P);
}

static int hex4(const unsigned char *p, const unsigned char *end, uint32_t *out)
{
	uint32_t v = 0;
	int i;

	if (end - p < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		unsigned char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static size_t put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * The string at P->p (its opening quote) decoded into P->buf; *len gets
 * its length in bytes (it may hold NULs only with KJ_JSONX_ALLOW_NUL).
 */
static int parse_string(struct parser *P, size_t *len)
{
	size_t n = 0;

	step(P); /* the opening quote */
	for (;;) {
		size_t line = P->line, col = P->col;
		unsigned char c;
		int k;

		if (P->p >= P->end)
			return fail_at(P, line, col, "unterminated string");
		c = *P->p;
		if (need_buf(P, n + 8))
			return P->code;
		if (c == '"') {
			step(P);
			break;
		}
		if (c < 0x20)
			return fail_at(P, line, col, "control character U+%04X in a string "
				       "(write it as an escape)", c);
		if (c != '\\') {
			k = utf8_seq(P->p, P->end);
			if (!k)
				return fail_at(P, line, col, "invalid UTF-8 (byte 0x%02X) in a string", c);
			memcpy(P->buf + n, P->p, (size_t)k);
			n += (size_t)k;
			while (k--)
				step(P);
			continue;
		}
		step(P);
		if (P->p >= P->end)
			return fail_at(P, line, col, "unterminated string");
		c = *P->p;
		switch (c) {
		case '"': case '\\': case '/':
			P->buf[n++] = (char)c;
			break;
		case 'b': P->buf[n++] = '\b'; break;
		case 'f': P->buf[n++] = '\f'; break;
		case 'n': P->buf[n++] = '\n'; break;
		case 'r': P->buf[n++] = '\r'; break;
		case 't': P->buf[n++] = '\t'; break;
		case 'u': {
			uint32_t cp, lo;

			if (hex4(P->p + 1, P->end, &cp))
				return fail_at(P, line, col, "\\u must be followed by four hex digits");
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return fail_at(P, line, col, "unpaired surrogate \\u%04X in a string", cp);
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (P->end - P->p < 11 || P->p[5] != '\\' || P->p[6] != 'u' ||
				    hex4(P->p + 7, P->end, &lo) || lo < 0xdc00 || lo > 0xdfff)
					return fail_at(P, line, col, "unpaired surrogate \\u%04X in a string",
						       cp);
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				for (k = 0; k < 6; k++)
					step(P);
			}
			if (cp == 0 && !(P->flags & KJ_JSONX_ALLOW_NUL))
				return fail_at(P, line, col, "\\u0000 (NUL) is not allowed in a string");
			n += put_utf8(P->buf + n, cp);
			for (k = 0; k < 4; k++)
				step(P);
			break;
		}
		default: {
			char what[32];

			describe(P, what, sizeof(what));
			return fail_at(P, line, col, "invalid escape '\\' followed by %s", what);
		}
		}
		step(P);
	}
	*len = n;
	return 0;
}

/*
 * Whether the decimal digits d[0..nd) times 10^exp (d without leading
 * zeros, nd > 0; `more`: nonzero digits were dropped after them) exceed 17976931348623157 * 10^292, the shortest decimal
 * form of DBL_MAX.
 */
static int beyond_dbl_max(const char *d, size_t nd, int more, long exp)
{
	static const char max[] = "17976931348623157";
	const size_t nm = sizeof(max) - 1;
	long mag = (long)nd + exp, max_mag = (long)nm + 292;
	size_t i;

	if (mag != max_mag)
		return mag > max_mag;
	for (i = 0; i < nd || i < nm; i++) {
		char a = i < nd ? d[i] : '0', b = i < nm ? max[i] : '0';
		if (a != b)
			return a > b;
	}
	return more;
}

/* The exponent written after e/E, clamped so that it cannot overflow. */
static long read_exp(const unsigned char *p, const unsigned char *end)
{
	int neg = 0;
	long e = 0;

	if (p < end && (*p == '+' || *p == '-'))
		neg = *p++ == '-';
	for (; p < end && *p >= '0' && *p <= '9'; p++)
		if (e < 100000000)
			e = e * 10 + (*p - '0');
	return neg ? -e : e;
}

static json_t *parse_number(struct parser *P)
{
	const unsigned char *s = P->p, *q = P->p, *mant_end, *exp_at = NULL;
	size_t line = P->line, col = P->col, len;
	int real = 0;
	char tok[64], *t = tok, digits[32];
	size_t nd = 0;
	int nz_seen = 0, more = 0;
	long exp10 = 0;
	json_t *v;

	if (q < P->end && *q == '-')
		q++;
	if (q >= P->end || *q < '0' || *q > '9') {
		if (P->end - q >= 8 && !memcmp(q, "Infinity", 8))
			fail_at(P, line, col, "-Infinity is not JSON (numbers must be finite)");
		else
			fail_at(P, line, col, "'-' must be followed by a digit");
		return NULL;
	}
	if (*q == '0') {
		q++;
		if (q < P->end && *q >= '0' && *q <= '9') {
			fail_at(P, line, col, "a number must not start with 0 followed by a digit");
			return NULL;
		}
	} else {
		while (q < P->end && *q >= '0' && *q <= '9')
			q++;
	}
	if (q < P->end && *q == '.') {
		real = 1;
		q++;
		if (q >= P->end || *q < '0' || *q > '9') {
			fail_at(P, line, col, "a digit must follow the decimal point");
			return NULL;
		}
		while (q < P->end && *q >= '0' && *q <= '9')
			q++;
	}
	mant_end = q;
	if (q < P->end && (*q == 'e' || *q == 'E')) {
		real = 1;
		exp_at = ++q;
		if (q < P->end && (*q == '+' || *q == '-'))
			q++;
		if (q >= P->end || *q < '0' || *q > '9') {
			fail_at(P, line, col, "a digit must follow the exponent's 'e'");
			return NULL;
		}
		while (q < P->end && *q >= '0' && *q <= '9')
			q++;
	}
	len = (size_t)(q - s);
	if (len >= sizeof(tok)) {
		t = malloc(len + 1);
		if (!t) {
			fail_oom(P);
			return NULL;
		}
	}
	memcpy(t, s, len);
	t[len] = 0;

	if (!real) {
		/* An integer: int64 or an error (jansson's json_int_t is long long). */
		long long iv;

		errno = 0;
		iv = strtoll(t, NULL, 10);
		if (errno == ERANGE) {
			fail_at(P, line, col, "integer %.40s%s is out of range (beyond 64 bits)", t,
				len > 40 ? "..." : "");
			v = NULL;
		} else {
			v = json_integer(iv);
			if (!v)
				fail_oom(P);
		}
	} else {
		double d = strtod(t, NULL);
		const unsigned char *m;

		/* The mantissa's significant digits (up to 20, enough to compare
		 * with DBL_MAX's 17) and the power of ten of the last one kept. */
		for (m = s; m < mant_end; m++) {
			if (*m == '.') {
				continue;
			}
			if (*m < '0' || *m > '9')
				continue;
			if (*m != '0')
				nz_seen = 1;
			if (!nz_seen)
				continue;
			if (nd < 20)
				digits[nd++] = (char)*m;
			else if (*m != '0')
				more = 1;
		}
		if (nz_seen) {
			/* value = 0.DIGITS * 10^mag: mag from the integer digits. */
			const unsigned char *dot = memchr(s, '.', (size_t)(mant_end - s));
			const unsigned char *int_end = dot ? dot : mant_end;
			const unsigned char *first = s;
			long mag;

			while (first < mant_end && (*first < '1' || *first > '9'))
				first++;
			mag = first < int_end ? (long)(int_end - first) : -(long)(first - int_end - 1);
			if (exp_at)
				mag += read_exp(exp_at, q);
			exp10 = mag - (long)nd;
		}
		if (!isfinite(d) || (nz_seen && beyond_dbl_max(digits, nd, more, exp10))) {
			fail_at(P, line, col, "number %.40s%s is beyond the range of binary64", t,
				len > 40 ? "..." : "");
			v = NULL;
		} else if (d == 0 && nz_seen) {
			fail_at(P, line, col, "number %.40s%s underflows binary64 to zero", t,
				len > 40 ? "..." : "");
			v = NULL;
		} else {
			v = json_real(d);
			if (!v)
				fail_oom(P);
		}
	}
	if (t != tok)
		free(t);
	if (v)
		while (P->p < q)
			step(P);
	return v;
}

static json_t *parse_value(struct parser *P);

/* After a member of an array or an object: a ',' and another member (1),
 * the closing bracket (0), or an error (-1). */
static int after_member(struct parser *P, char close, const char *container)
{
	skip_ws(P);
	if (P->p < P->end && *P->p == ',') {
		step(P);
		skip_ws(P);
		if (P->p < P->end && *P->p == close) {
			fail_at(P, P->line, P->col, "trailing comma before '%c'", close);
			return -1;
		}
		return 1;
	}
	if (P->p < P->end && *P->p == close) {
		step(P);
		return 0;
	}
	if (P->p >= P->end) {
		fail_at(P, P->line, P->col, "unexpected end of input in %s ('%c' missing)", container,
			close);
	} else {
		char what[32];

		describe(P, what, sizeof(what));
		fail_at(P, P->line, P->col, "expected ',' or '%c' in %s, found %s", close, container,
			what);
	}
	return -1;
}

static json_t *parse_array(struct parser *P)
{
	json_t *a = json_array();

	if (!a) {
		fail_oom(P);
		return NULL;
	}
	step(P);
	skip_ws(P);
	if (P->p < P->end && *P->p == ']') {
		step(P);
		return a;
	}
	for (;;) {
		json_t *v = parse_value(P);

		if (!v)
			break;
		if (json_array_append_new(a, v)) {
			fail_oom(P);
			break;
		}
		switch (after_member(P, ']', "an array")) {
		case 1: continue;
		case 0: return a;
		default: break;
		}
		break;
	}
	json_decref(a);
	return NULL;
}

/* A message's rendering of a key: at most 60 bytes, quoted. */
/* A key as a message shows it: quoted, cut after 60 bytes, a control
 * byte (a line feed, a NUL, ...) written as its JSON escape, so that the
 * message stays on one line whatever the key holds. */
static void key_text(char *out, size_t size, const char *k, size_t n)
{
	size_t i, o = 0, shown = n > 60 ? 60 : n;

	if (size < 16) {
		if (size)
			out[0] = 0;
		return;
	}
	out[o++] = '\'';
	for (i = 0; i < shown && o + 8 < size; i++) {
		unsigned char c = (unsigned char)k[i];

		if (c == '\n')
			o += (size_t)snprintf(out + o, size - o, "\\n");
		else if (c == '\t')
			o += (size_t)snprintf(out + o, size - o, "\\t");
		else if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(out + o, size - o, "\\u%04x", c);
		else
			out[o++] = (char)c;
	}
	snprintf(out + o, size - o, "'%s", i < n ? "..." : "");
}

static json_t *parse_object(struct parser *P)
{
	json_t *o = json_object();

	if (!o) {
		fail_oom(P);
		return NULL;
	}
	step(P);
	skip_ws(P);
	if (P->p < P->end && *P->p == '}') {
		step(P);
		return o;
	}
	for (;;) {
		size_t line = P->line, col = P->col, klen;
		char *key;
		json_t *v;

		if (P->p >= P->end || *P->p != '"') {
			if (P->p >= P->end) {
				fail_at(P, line, col, "unexpected end of input in an object ('}' missing)");
			} else {
				char what[32];

				describe(P, what, sizeof(what));
				fail_at(P, line, col, "expected a string key in double quotes, found %s",
					what);
			}
			break;
		}
		if (parse_string(P, &klen))
			break;
		if (json_object_getn(o, P->buf, klen)) {
			char k[400];

			key_text(k, sizeof(k), P->buf, klen);
			fail_at(P, line, col, "duplicate key %s in an object", k);
			break;
		}
		key = malloc(klen + 1);
		if (!key) {
			fail_oom(P);
			break;
		}
		memcpy(key, P->buf, klen);
		key[klen] = 0;
		skip_ws(P);
		if (P->p >= P->end || *P->p != ':') {
			fail_at(P, P->line, P->col, "expected ':' after an object's key");
			free(key);
			break;
		}
		step(P);
		v = parse_value(P);
		if (!v) {
			free(key);
			break;
		}
		if (json_object_setn_new_nocheck(o, key, klen, v)) {
			free(key);
			fail_oom(P);
			break;
		}
		free(key);
		switch (after_member(P, '}', "an object")) {
		case 1: continue;
		case 0: return o;
		default: break;
		}
		break;
	}
	json_decref(o);
	return NULL;
}

static int literal(struct parser *P, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(P->end - P->p) < n || memcmp(P->p, word, n))
		return 0;
	while (n--)
		step(P);
	return 1;
}

static json_t *parse_value(struct parser *P)
{
	json_t *v;
	char what[32];

	skip_ws(P);
	if (P->p >= P->end) {
		fail_at(P, P->line, P->col, "unexpected end of input (a value was expected)");
		return NULL;
	}
	switch (*P->p) {
	case '{':
	case '[':
		if (P->depth >= KJ_JSONX_MAX_DEPTH) {
			fail_at(P, P->line, P->col, "nesting deeper than %d arrays and objects",
				KJ_JSONX_MAX_DEPTH);
			return NULL;
		}
		P->depth++;
		v = *P->p == '{' ? parse_object(P) : parse_array(P);
		P->depth--;
		return v;
	case '"': {
		size_t len;

		if (parse_string(P, &len))
			return NULL;
		v = json_stringn_nocheck(P->buf, len);
		if (!v)
			fail_oom(P);
		return v;
	}
	case '-': case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9':
		return parse_number(P);
	default:
		break;
	}
	if (literal(P, "true"))
		v = json_true();
	else if (literal(P, "false"))
		v = json_false();
	else if (literal(P, "null"))
		v = json_null();
	else if ((size_t)(P->end - P->p) >= 3 && !memcmp(P->p, "NaN", 3)) {
		fail_at(P, P->line, P->col, "NaN is not JSON (numbers must be finite)");
		return NULL;
	} else if ((size_t)(P->end - P->p) >= 8 && !memcmp(P->p, "Infinity", 8)) {
		fail_at(P, P->line, P->col, "Infinity is not JSON (numbers must be finite)");
		return NULL;
	} else {
		describe(P, what, sizeof(what));
		fail_at(P, P->line, P->col, "unexpected %s (a value was expected)", what);
		return NULL;
	}
	if (!v)
		fail_oom(P);
	return v;
}

static const char *kind_of(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: case JSON_REAL: return "a number";
	case JSON_TRUE: case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	default: return "an object";
	}
}

/* One JSON text from buf; line0 is the number of buf's first line. */
static int load_text(const char *buf, size_t len, const char *name, size_t line0, unsigned flags,
		     json_t **out, struct kj_error *err)
{
	struct parser P = {
		.p = (const unsigned char *)buf, .end = (const unsigned char *)buf + len,
		.name = name ? name : "<buffer>", .line = line0, .col = 1, .flags = flags,
		.err = err,
	};
	json_t *v;

	*out = NULL;
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
		return fail_at(&P, 1, 1, "a byte order mark (U+FEFF) starts the text; "
			       "JSON text must not have one");
	skip_ws(&P);
	if (P.p >= P.end) {
		free(P.buf);
		return fail_at(&P, P.line, P.col, "no JSON value (the text is empty)");
	}
	{
		size_t line = P.line, col = P.col;

		v = parse_value(&P);
		free(P.buf);
		if (!v)
			return P.code;
		skip_ws(&P);
		if (P.p < P.end) {
			char what[32];

			describe(&P, what, sizeof(what));
			json_decref(v);
			return fail_at(&P, P.line, P.col, "unexpected %s after the JSON value", what);
		}
		if ((flags & KJ_JSONX_OBJECT) && !json_is_object(v)) {
			fail_at(&P, line, col, "expected an object at the top level, found %s",
				kind_of(v));
			json_decref(v);
			return P.code;
		}
	}
	*out = v;
	return KJ_OK;
}

int kj_jsonx_loadb(const char *buf, size_t len, const char *name, unsigned flags,
		   json_t **out, struct kj_error *err)
{
	return load_text(buf, len, name, 1, flags, out, err);
}

int kj_jsonx_load_file(const char *path, unsigned flags, json_t **out, struct kj_error *err)
{
	size_t len;
	char *buf = kj__read_file(path, KJ_JSONX_MAX_FILE, &len, err);
	int rc;

	*out = NULL;
	if (!buf)
		return err ? err->code : KJ_EIO;
	rc = load_text(buf, len, path, 1, flags, out, err);
	free(buf);
	return rc;
}

int kj_jsonl_loadb(const char *buf, size_t len, const char *name, unsigned flags,
		   kj_jsonl_fn fn, void *ctx, struct kj_error *err)
{
	const char *p = buf, *end = buf + len;
	size_t line = 1;
	int first_bad = KJ_OK;

	if (!name)
		name = "<buffer>";
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end, *q;
		size_t n;

		n = (size_t)(e - p);
		if (n && p[n - 1] == '\r')
			n--;
		for (q = p; q < p + n && (*q == ' ' || *q == '\t'); q++)
			;
		if (q < p + n) {
			struct kj_error bad;
			json_t *v;
			int rc = load_text(p, n, name, line, flags, &v, &bad);

			if (rc == KJ_ENOMEM) {
				if (err)
					*err = bad;
				return rc;
			}
			if (rc) {
				if (!first_bad && err)
					*err = bad;
				first_bad = KJ_EJSON;
				rc = fn(ctx, line, NULL, &bad);
			} else {
				rc = fn(ctx, line, v, NULL);
				json_decref(v);
			}
			if (rc)
				return rc;
		}
		if (!nl)
			break;
		p = nl + 1;
		line++;
	}
	return first_bad;
}

int kj_jsonl_load_file(const char *path, unsigned flags, kj_jsonl_fn fn, void *ctx,
		       struct kj_error *err)
{
	size_t len;
	char *buf = kj__read_file(path, KJ_JSONX_MAX_FILE, &len, err);
	int rc;

	if (!buf)
		return err ? err->code : KJ_EIO;
	rc = kj_jsonl_loadb(buf, len, path, flags, fn, ctx, err);
	free(buf);
	return rc;
}
