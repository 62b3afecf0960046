/*
 * jschema.c - compiling a JSON Schema draft-07 document (kjudge/jschema.h).
 *
 * Theory of operation.  Compiling is three passes over one document:
 *
 *   1. Every "$ref" string of the document is collected with the JSON
 *      pointer it names (its fragment, percent-decoded).  Only so can a
 *      key that is no keyword be told apart from a mistake: draft-07 lets a
 *      schema hold other keys, and a $ref may point into them ("#/tilda~0
 *      field" in the official suite), so such a key is accepted, and left
 *      uncompiled until a $ref reaches it, exactly when some $ref's pointer
 *      runs through it.  Every other unknown key is an error naming its
 *      place: a misspelt "requird" must not silently check nothing.
 *   2. The schema is compiled from the root down, each keyword's value
 *      checked against what the draft-07 meta-schema allows and turned
 *      into the node's fields (kj__jsnode); regexes are compiled here, once.
 *      Each node's base URI follows the "$id"s above it, and every "$id"
 *      registers its resource (an absolute URI, or a plain-name fragment)
 *      so that a $ref can name it.
 *   3. Every $ref is resolved against its node's base URI: to a resource of
 *      the document and a JSON pointer inside it (~0, ~1 and %XX decoded)
 *      or a plain-name anchor.  A target that was not compiled in pass 2
 *      (inside an unknown key) is compiled now.  A reference to anything
 *      outside the document is an error: nothing is fetched.
 *
 * Nodes are found again by the json_t they came from (a small hash table),
 * so that a $ref to a place compiled already shares its node, and cycles
 * of $refs are a graph, not an endless compile.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kjudge/jschema.h"
#include "spec/jschema_internal.h"
#include "base/json.h"
#include "base/vec.h"
#include "base/internal.h"

/* The base URI of a document without an "$id" of its own.  It is
 * hierarchical, so that relative "$id"s and "$ref"s resolve against it. */
#define DEFAULT_BASE "kjudge:///schema.json"

struct resource {
	char *uri;                /* absolute, no fragment; or with a plain-name fragment */
	struct kj__jsnode *node;
};

struct refptr {
	char *ptr;                /* a decoded JSON pointer, "" for the whole */
};

struct cc {
	const char *name;
	struct kj_error *err;
	int code;
	struct kj_jschema *s;
	/* json_t -> node */
	const json_t **keys;
	struct kj__jsnode **vals;
	size_t hcap, hn;
	struct resource *res;
	size_t nres, capres;
	struct refptr *refs;      /* pass 1 */
	size_t nrefs, caprefs;
	struct kj__jsnode **pending;
	size_t npending, cappending;
};

static int fail(struct cc *C, const char *ptr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct cc *C, const char *ptr, const char *fmt, ...)
{
	char what[KJ_ERROR_MSG_MAX];
	va_list ap;

	if (C->code)
		return C->code;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	C->code = KJ_ESCHEMA;
	kj_error_set(C->err, KJ_ESCHEMA, "%s: #%s: %s", C->name, ptr, what);
	return C->code;
}

static int oom(struct cc *C)
{
	if (!C->code) {
		C->code = KJ_ENOMEM;
		kj_error_set(C->err, KJ_ENOMEM, "%s: out of memory", C->name);
	}
	return C->code;
}

/* Grow *v (of elem-sized items, *cap of them) to hold n + 1. */
static int grow(struct cc *C, void *v, size_t *cap, size_t n, size_t elem)
{
	return kj__grow(v, cap, n + 1, elem) == KJ_OK ? 0 : oom(C);
}

static char *dup_n(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

static char *dup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *dup_printf(const char *fmt, ...)
{
	va_list ap;
	char *out;

	va_start(ap, fmt);
	if (vasprintf(&out, fmt, ap) < 0)
		out = NULL;
	va_end(ap);
	return out;
}

/* --- the json_t -> node table ------------------------------------------- */

static size_t hslot(const void *p, size_t cap)
{
	return (size_t)kj__mix64((uint64_t)(uintptr_t)p) & (cap - 1);
}

static struct kj__jsnode *lookup(const struct cc *C, const json_t *js)
{
	size_t i;

	if (!C->hcap)
		return NULL;
	for (i = hslot(js, C->hcap); C->keys[i]; i = (i + 1) & (C->hcap - 1))
		if (C->keys[i] == js)
			return C->vals[i];
	return NULL;
}

static int remember(struct cc *C, const json_t *js, struct kj__jsnode *n)
{
	size_t i;

	if ((C->hn + 1) * 2 > C->hcap) {
		size_t ncap = C->hcap ? C->hcap * 2 : 64, j;
		const json_t **nk = calloc(ncap, sizeof(*nk));
		struct kj__jsnode **nv = calloc(ncap, sizeof(*nv));

		if (!nk || !nv) {
			free(nk);
			free(nv);
			return oom(C);
		}
		for (j = 0; j < C->hcap; j++) {
			if (!C->keys[j])
				continue;
			for (i = hslot(C->keys[j], ncap); nk[i]; i = (i + 1) & (ncap - 1))
				;
			nk[i] = C->keys[j];
			nv[i] = C->vals[j];
		}
		free(C->keys);
		free(C->vals);
		C->keys = nk;
		C->vals = nv;
		C->hcap = ncap;
	}
	for (i = hslot(js, C->hcap); C->keys[i]; i = (i + 1) & (C->hcap - 1))
		;
	C->keys[i] = js;
	C->vals[i] = n;
	C->hn++;
	return 0;
}

/* --- URIs (RFC 3986, section 5.2) ---------------------------------------- */

struct uri {
	const char *scheme, *auth, *path, *query, *frag;
	size_t ls, la, lp, lq, lf;
	int has_scheme, has_auth, has_query, has_frag;
};

static void uri_split(const char *s, struct uri *u)
{
	const char *p = s, *q;

	memset(u, 0, sizeof(*u));
	for (q = p; *q && *q != ':' && *q != '/' && *q != '?' && *q != '#'; q++)
		;
	if (*q == ':' && q > p) {
		u->has_scheme = 1;
		u->scheme = p;
		u->ls = (size_t)(q - p);
		p = q + 1;
	}
	if (p[0] == '/' && p[1] == '/') {
		u->has_auth = 1;
		u->auth = p + 2;
		for (q = p + 2; *q && *q != '/' && *q != '?' && *q != '#'; q++)
			;
		u->la = (size_t)(q - u->auth);
		p = q;
	}
	u->path = p;
	for (q = p; *q && *q != '?' && *q != '#'; q++)
		;
	u->lp = (size_t)(q - p);
	p = q;
	if (*p == '?') {
		u->has_query = 1;
		u->query = p + 1;
		for (q = p + 1; *q && *q != '#'; q++)
			;
		u->lq = (size_t)(q - u->query);
		p = q;
	}
	if (*p == '#') {
		u->has_frag = 1;
		u->frag = p + 1;
		u->lf = strlen(p + 1);
	}
}

/* RFC 3986 5.2.4, in place on a NUL-terminated path: the output never
 * runs ahead of the input, and the input is only changed ahead of it. */
static void remove_dots(char *path)
{
	char *in = path, *out = path;

	while (*in) {
		if (!strncmp(in, "../", 3)) {
			in += 3;
		} else if (!strncmp(in, "./", 2)) {
			in += 2;
		} else if (!strncmp(in, "/./", 3)) {
			in += 2;
		} else if (!strcmp(in, "/.")) {
			in[1] = 0;
		} else if (!strncmp(in, "/../", 4) || !strcmp(in, "/..")) {
			if (in[3])
				in += 3;
			else
				in += 2, *in = '/';
			while (out > path && *--out != '/')
				;
		} else if (!strcmp(in, ".") || !strcmp(in, "..")) {
			*in = 0;
		} else {
			do
				*out++ = *in++;
			while (*in && *in != '/');
		}
	}
	*out = 0;
}

/* ref resolved against base (absolute), as a new string; NULL when out of
 * memory. */
static char *uri_resolve(const char *base, const char *ref)
{
	struct uri b, r;
	char *path = NULL, *out;
	const char *scheme, *auth, *query;
	size_t ls, la, lq;
	int has_auth, has_query;

	uri_split(base, &b);
	uri_split(ref, &r);
	if (r.has_scheme) {
		scheme = r.scheme, ls = r.ls;
		has_auth = r.has_auth, auth = r.auth, la = r.la;
		path = dup_n(r.path, r.lp);
		has_query = r.has_query, query = r.query, lq = r.lq;
	} else {
		scheme = b.scheme, ls = b.ls;
		if (r.has_auth) {
			has_auth = 1, auth = r.auth, la = r.la;
			path = dup_n(r.path, r.lp);
			has_query = r.has_query, query = r.query, lq = r.lq;
		} else {
			has_auth = b.has_auth, auth = b.auth, la = b.la;
			if (r.lp == 0) {
				path = dup_n(b.path, b.lp);
				if (r.has_query)
					has_query = 1, query = r.query, lq = r.lq;
				else
					has_query = b.has_query, query = b.query, lq = b.lq;
			} else {
				has_query = r.has_query, query = r.query, lq = r.lq;
				if (r.path[0] == '/') {
					path = dup_n(r.path, r.lp);
				} else if (b.has_auth && b.lp == 0) {
					path = dup_printf("/%.*s", (int)r.lp, r.path);
				} else {
					const char *slash = NULL, *p;

					for (p = b.path; p < b.path + b.lp; p++)
						if (*p == '/')
							slash = p;
					path = dup_printf("%.*s%.*s", slash ? (int)(slash - b.path + 1) : 0,
							  b.path, (int)r.lp, r.path);
				}
			}
		}
	}
	if (!path)
		return NULL;
	remove_dots(path);
	out = dup_printf("%.*s:%s%.*s%s%s%.*s%s%.*s", (int)ls, scheme ? scheme : "",
			 has_auth ? "//" : "", has_auth ? (int)la : 0, has_auth ? auth : "", path,
			 has_query ? "?" : "", has_query ? (int)lq : 0, has_query ? query : "",
			 r.has_frag ? "#" : "", r.has_frag ? (int)r.lf : 0, r.has_frag ? r.frag : "");
	free(path);
	return out;
}

/* %XX decoded, in place (a bad escape is kept as it is). */
static void percent_decode(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '%' && isxdigit((unsigned char)s[1]) && isxdigit((unsigned char)s[2])) {
			char h[3] = { s[1], s[2], 0 };

			*o++ = (char)strtol(h, NULL, 16);
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

/* --- pass 1: the pointers $refs name ------------------------------------ */

static int collect_refs(struct cc *C, const json_t *v, int depth)
{
	const char *k;
	json_t *x;
	size_t i;

	if (depth > KJ_JSONX_MAX_DEPTH)
		return fail(C, "", "the schema nests deeper than %d levels", KJ_JSONX_MAX_DEPTH);
	if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			if (collect_refs(C, x, depth + 1))
				return C->code;
		return 0;
	}
	if (!json_is_object(v))
		return 0;
	json_object_foreach((json_t *)(uintptr_t)v, k, x) {
		if (!strcmp(k, "$ref") && json_is_string(x)) {
			const char *h = strchr(json_string_value(x), '#');
			char *p;

			if (h && h[1] == '/') {
				p = strdup(h + 1);
				if (!p)
					return oom(C);
				percent_decode(p);
				if (grow(C, &C->refs, &C->caprefs, C->nrefs, sizeof(*C->refs))) {
					free(p);
					return C->code;
				}
				C->refs[C->nrefs++].ptr = p;
			}
		}
		if (collect_refs(C, x, depth + 1))
			return C->code;
	}
	return 0;
}

/* Whether some $ref's pointer is ptr or runs through it. */
static int ref_passes(const struct cc *C, const char *ptr)
{
	size_t i, n = strlen(ptr);

	for (i = 0; i < C->nrefs; i++) {
		const char *r = C->refs[i].ptr;

		if (!strncmp(r, ptr, n) && (r[n] == 0 || r[n] == '/'))
			return 1;
	}
	return 0;
}

/* --- pass 2: nodes -------------------------------------------------------- */

/* ptr + "/" + key with ~ and / escaped, as a new string. */
static char *ptr_child(const char *ptr, const char *key)
{
	size_t n = strlen(ptr), extra = 0;
	const char *k;
	char *out, *o;

	for (k = key; *k; k++)
		extra += *k == '~' || *k == '/';
	out = malloc(n + strlen(key) + extra + 2);
	if (!out)
		return NULL;
	memcpy(out, ptr, n);
	o = out + n;
	*o++ = '/';
	for (k = key; *k; k++) {
		if (*k == '~')
			*o++ = '~', *o++ = '0';
		else if (*k == '/')
			*o++ = '~', *o++ = '1';
		else
			*o++ = *k;
	}
	*o = 0;
	return out;
}

static char *ptr_index(const char *ptr, size_t i)
{
	return dup_printf("%s/%zu", ptr, i);
}

static struct kj__jsnode *compile(struct cc *C, const json_t *js, const char *base, const char *ptr);
static struct kj__jsnode *find_resource(const struct cc *C, const char *uri);

/* The subschema under key of parent, at ptr/key. */
static struct kj__jsnode *sub(struct cc *C, const json_t *js, const char *base, const char *ptr,
			      const char *key)
{
	char *p = ptr_child(ptr, key);
	struct kj__jsnode *n;

	if (!p) {
		oom(C);
		return NULL;
	}
	n = compile(C, js, base, p);
	free(p);
	return n;
}

static int sub_list(struct cc *C, const json_t *arr, const char *base, const char *ptr,
		    const char *key, int nonempty, struct kj__jslist *out)
{
	char *kp = ptr_child(ptr, key);
	size_t i;
	json_t *x;

	if (!kp)
		return oom(C);
	if (!json_is_array(arr) || (nonempty && !json_array_size(arr))) {
		fail(C, kp, "expected %s array of schemas", nonempty ? "a non-empty" : "an");
		free(kp);
		return C->code;
	}
	out->n = json_array_size(arr);
	out->v = calloc(out->n ? out->n : 1, sizeof(*out->v));
	if (!out->v) {
		free(kp);
		return oom(C);
	}
	json_array_foreach(arr, i, x) {
		char *ip = ptr_index(kp, i);

		if (!ip) {
			free(kp);
			return oom(C);
		}
		out->v[i] = compile(C, x, base, ip);
		free(ip);
		if (!out->v[i])
			break;
	}
	free(kp);
	return C->code;
}

/* A non-negative integer (1.0 counts, as the meta-schema's "integer"). */
static int nonneg(struct cc *C, const json_t *v, const char *ptr, const char *key, long long *out)
{
	char *kp;

	if (kj__json_integral(v)) {
		double d = json_is_integer(v) ? (double)json_integer_value(v) : json_real_value(v);

		if (d >= 0 && d < 9.2e18) {
			*out = json_is_integer(v) ? json_integer_value(v) : (long long)d;
			return 0;
		}
	}
	kp = ptr_child(ptr, key);
	if (!kp)
		return oom(C);
	fail(C, kp, "expected a non-negative integer");
	free(kp);
	return C->code;
}

static int type_bit(const char *t)
{
	static const struct { const char *name; int bit; } types[] = {
		{ "null", KJ__JT_NULL }, { "boolean", KJ__JT_BOOLEAN }, { "object", KJ__JT_OBJECT },
		{ "array", KJ__JT_ARRAY }, { "number", KJ__JT_NUMBER }, { "string", KJ__JT_STRING },
		{ "integer", KJ__JT_INTEGER },
	};
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(t, types[i].name))
			return types[i].bit;
	return 0;
}

/* The regex dialect (docs/jschema.md): UTF mode, $ only at the very end as
 * in ECMA-262, \d and \w ASCII as in ECMA-262, \uXXXX as ECMA-262 writes it. */
static int compile_regex(struct cc *C, const char *src, size_t len, const char *kp,
			 struct kj__jsregex *rx)
{
	int ec;
	PCRE2_SIZE off;

	rx->src = src;
	rx->re = pcre2_compile((PCRE2_SPTR)src, len,
			       PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_ALT_BSUX, &ec, &off, NULL);
	if (!rx->re) {
		PCRE2_UCHAR msg[256];

		if (ec == PCRE2_ERROR_NOMEMORY)
			return oom(C);
		pcre2_get_error_message(ec, msg, sizeof(msg));
		return fail(C, kp, "invalid regular expression '%s': %s at offset %zu", src,
			    (const char *)msg, (size_t)off);
	}
	return 0;
}

static const char *const formats[] = {
	"date-time", "date", "time", "email", "idn-email", "hostname", "idn-hostname",
	"ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uri-template",
	"json-pointer", "relative-json-pointer", "regex",
};

static int known_format(const char *f)
{
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(f, formats[i]))
			return 1;
	return 0;
}

static int add_op(struct kj__jsnode *n, enum kj__jsop op)
{
	n->ops[n->nops++] = (unsigned char)op;
	return 0;
}

static int register_resource(struct cc *C, const char *uri, struct kj__jsnode *n)
{
	size_t i;
	char *u;

	for (i = 0; i < C->nres; i++)
		if (!strcmp(C->res[i].uri, uri))
			return fail(C, n->ptr, "$id '%s' names another schema of the document too", uri);
	u = strdup(uri);
	if (!u)
		return oom(C);
	if (grow(C, &C->res, &C->capres, C->nres, sizeof(*C->res))) {
		free(u);
		return C->code;
	}
	C->res[C->nres].uri = u;
	C->res[C->nres].node = n;
	C->nres++;
	return 0;
}

/* A keyword's value must be a string; *out gets it. */
static int want_string(struct cc *C, const json_t *v, const char *kp, const char **out)
{
	if (!json_is_string(v))
		return fail(C, kp, "expected a string");
	if (out)
		*out = json_string_value(v);
	return 0;
}

static int want_number(struct cc *C, const json_t *v, const char *kp)
{
	if (!json_is_number(v))
		return fail(C, kp, "expected a number");
	return 0;
}

/* An array of unique strings (required, a dependency's names). */
static int want_names(struct cc *C, const json_t *v, const char *kp)
{
	size_t i, j;

	if (!json_is_array(v))
		return fail(C, kp, "expected an array of strings");
	for (i = 0; i < json_array_size(v); i++) {
		const json_t *x = json_array_get(v, i);

		if (!json_is_string(x))
			return fail(C, kp, "expected an array of strings (item %zu is not one)", i);
		for (j = 0; j < i; j++)
			if (json_equal(x, json_array_get(v, j)))
				return fail(C, kp, "'%s' is listed twice", json_string_value(x));
	}
	return 0;
}

/* Keywords whose value is one subschema, a count, or a non-empty list of
 * subschemas: where the node keeps it and its operation (none for then
 * and else, which "if" applies). */
#define NO_OP KJ__OP_COUNT_
static const struct { const char *name; size_t off; enum kj__jsop op; } one_schema[] = {
	{ "additionalProperties", offsetof(struct kj__jsnode, addl_props), KJ__OP_ADDITIONAL_PROPERTIES },
	{ "propertyNames", offsetof(struct kj__jsnode, prop_names), KJ__OP_PROPERTY_NAMES },
	{ "additionalItems", offsetof(struct kj__jsnode, addl_items), KJ__OP_ADDITIONAL_ITEMS },
	{ "contains", offsetof(struct kj__jsnode, contains), KJ__OP_CONTAINS },
	{ "not", offsetof(struct kj__jsnode, not_), KJ__OP_NOT },
	{ "if", offsetof(struct kj__jsnode, if_), KJ__OP_IF },
	{ "then", offsetof(struct kj__jsnode, then_), NO_OP },
	{ "else", offsetof(struct kj__jsnode, else_), NO_OP },
}, counts[] = {
	{ "minProperties", offsetof(struct kj__jsnode, min_props), KJ__OP_MIN_PROPERTIES },
	{ "maxProperties", offsetof(struct kj__jsnode, max_props), KJ__OP_MAX_PROPERTIES },
	{ "minItems", offsetof(struct kj__jsnode, min_items), KJ__OP_MIN_ITEMS },
	{ "maxItems", offsetof(struct kj__jsnode, max_items), KJ__OP_MAX_ITEMS },
	{ "minLength", offsetof(struct kj__jsnode, min_len), KJ__OP_MIN_LENGTH },
	{ "maxLength", offsetof(struct kj__jsnode, max_len), KJ__OP_MAX_LENGTH },
}, lists[] = {
	{ "allOf", offsetof(struct kj__jsnode, all_of), KJ__OP_ALL_OF },
	{ "anyOf", offsetof(struct kj__jsnode, any_of), KJ__OP_ANY_OF },
	{ "oneOf", offsetof(struct kj__jsnode, one_of), KJ__OP_ONE_OF },
};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* One keyword of object schema n; kp is its pointer.  Returns 0 or an
 * error; an unknown keyword is one. */
static int keyword(struct cc *C, struct kj__jsnode *n, const char *k, const json_t *v,
		   const char *kp)
{
	const char *base = n->base, *ptr = n->ptr;
	const char *key;
	json_t *x;
	size_t i;

	if (!strcmp(k, "$ref"))
		return 0; /* handled by compile() */
	for (i = 0; i < COUNT(one_schema); i++) {
		if (strcmp(k, one_schema[i].name))
			continue;
		*(struct kj__jsnode **)(void *)((char *)n + one_schema[i].off) = compile(C, v, base, kp);
		if (C->code)
			return C->code;
		return one_schema[i].op == NO_OP ? 0 : add_op(n, one_schema[i].op);
	}
	for (i = 0; i < COUNT(counts); i++) {
		if (strcmp(k, counts[i].name))
			continue;
		if (nonneg(C, v, ptr, k, (long long *)(void *)((char *)n + counts[i].off)))
			return C->code;
		return add_op(n, counts[i].op);
	}
	for (i = 0; i < COUNT(lists); i++) {
		if (strcmp(k, lists[i].name))
			continue;
		if (sub_list(C, v, base, ptr, k, 1, (struct kj__jslist *)(void *)((char *)n + lists[i].off)))
			return C->code;
		return add_op(n, lists[i].op);
	}
	if (!strcmp(k, "$id") || !strcmp(k, "$comment") || !strcmp(k, "title") ||
	    !strcmp(k, "description") || !strcmp(k, "contentMediaType") ||
	    !strcmp(k, "contentEncoding"))
		return want_string(C, v, kp, NULL);
	if (!strcmp(k, "$schema")) {
		const char *s = "";

		if (want_string(C, v, kp, &s))
			return C->code;
		if (strcmp(s, "http://json-schema.org/draft-07/schema#") &&
		    strcmp(s, "http://json-schema.org/draft-07/schema"))
			return fail(C, kp, "unsupported $schema '%s' (only draft-07, "
				    "http://json-schema.org/draft-07/schema#)", s);
		return 0;
	}
	if (!strcmp(k, "default"))
		return 0;
	if (!strcmp(k, "examples"))
		return json_is_array(v) ? 0 : fail(C, kp, "expected an array");
	if (!strcmp(k, "readOnly") || !strcmp(k, "writeOnly"))
		return json_is_boolean(v) ? 0 : fail(C, kp, "expected a boolean");
	if (!strcmp(k, "format")) {
		const char *f = "";

		if (want_string(C, v, kp, &f))
			return C->code;
		if (!known_format(f))
			return fail(C, kp, "unknown format '%s'", f);
		return 0;
	}
	if (!strcmp(k, "definitions")) {
		if (!json_is_object(v))
			return fail(C, kp, "expected an object of schemas");
		json_object_foreach((json_t *)(uintptr_t)v, key, x)
			if (!sub(C, x, base, kp, key))
				return C->code;
		return 0;
	}
	if (!strcmp(k, "type")) {
		n->type_js = v;
		if (json_is_string(v)) {
			n->types = (unsigned)type_bit(json_string_value(v));
			if (!n->types)
				return fail(C, kp, "unknown type '%s'", json_string_value(v));
		} else if (json_is_array(v) && json_array_size(v)) {
			json_array_foreach(v, i, x) {
				int bit = json_is_string(x) ? type_bit(json_string_value(x)) : 0;

				if (!bit)
					return fail(C, kp, "item %zu is not a type's name", i);
				if (n->types & (unsigned)bit)
					return fail(C, kp, "type '%s' is listed twice",
						    json_string_value(x));
				n->types |= (unsigned)bit;
			}
		} else {
			return fail(C, kp, "expected a type's name or a non-empty array of them");
		}
		return add_op(n, KJ__OP_TYPE);
	}
	if (!strcmp(k, "enum")) {
		if (!json_is_array(v))
			return fail(C, kp, "expected an array");
		n->enum_js = v;
		return add_op(n, KJ__OP_ENUM);
	}
	if (!strcmp(k, "const")) {
		n->const_js = v;
		return add_op(n, KJ__OP_CONST);
	}
	if (!strcmp(k, "required")) {
		if (want_names(C, v, kp))
			return C->code;
		n->required = v;
		return add_op(n, KJ__OP_REQUIRED);
	}
	if (!strcmp(k, "properties") || !strcmp(k, "patternProperties")) {
		int pat = k[0] == 'p' && k[1] == 'a';

		if (!json_is_object(v))
			return fail(C, kp, "expected an object of schemas");
		if (pat) {
			n->pats = calloc(json_object_size(v) + 1, sizeof(*n->pats));
			if (!n->pats)
				return oom(C);
		} else {
			n->props = calloc(json_object_size(v) + 1, sizeof(*n->props));
			if (!n->props)
				return oom(C);
		}
		json_object_foreach((json_t *)(uintptr_t)v, key, x) {
			struct kj__jsnode *s = sub(C, x, base, kp, key);

			if (!s)
				return C->code;
			if (pat) {
				char *pp = ptr_child(kp, key);

				if (!pp)
					return oom(C);
				n->pats[n->npats].s = s;
				compile_regex(C, key, strlen(key), pp, &n->pats[n->npats].rx);
				free(pp);
				if (C->code)
					return C->code;
				n->npats++;
			} else {
				n->props[n->nprops].name = key;
				n->props[n->nprops].len = strlen(key);
				n->props[n->nprops].s = s;
				n->nprops++;
			}
		}
		return add_op(n, pat ? KJ__OP_PATTERN_PROPERTIES : KJ__OP_PROPERTIES);
	}
	if (!strcmp(k, "dependencies")) {
		if (!json_is_object(v))
			return fail(C, kp, "expected an object");
		n->deps = calloc(json_object_size(v) + 1, sizeof(*n->deps));
		if (!n->deps)
			return oom(C);
		json_object_foreach((json_t *)(uintptr_t)v, key, x) {
			struct kj__jsdep *d = &n->deps[n->ndeps];

			d->name = key;
			d->len = strlen(key);
			if (json_is_array(x)) {
				char *pp = ptr_child(kp, key);

				if (!pp)
					return oom(C);
				want_names(C, x, pp);
				free(pp);
				if (C->code)
					return C->code;
				d->req = x;
			} else {
				d->s = sub(C, x, base, kp, key);
				if (!d->s)
					return C->code;
			}
			n->ndeps++;
		}
		return add_op(n, KJ__OP_DEPENDENCIES);
	}
	if (!strcmp(k, "items")) {
		if (json_is_array(v)) {
			if (sub_list(C, v, base, ptr, k, 0, &n->items_list))
				return C->code;
		} else {
			n->items = compile(C, v, base, kp);
			if (!n->items)
				return C->code;
		}
		return add_op(n, KJ__OP_ITEMS);
	}
	if (!strcmp(k, "uniqueItems")) {
		if (!json_is_boolean(v))
			return fail(C, kp, "expected a boolean");
		n->unique = json_is_true(v);
		return n->unique ? add_op(n, KJ__OP_UNIQUE_ITEMS) : 0;
	}
	if (!strcmp(k, "pattern")) {
		if (want_string(C, v, kp, NULL))
			return C->code;
		if (compile_regex(C, json_string_value(v), json_string_length(v), kp, &n->pattern))
			return C->code;
		return add_op(n, KJ__OP_PATTERN);
	}
	if (!strcmp(k, "minimum") || !strcmp(k, "maximum") || !strcmp(k, "exclusiveMinimum") ||
	    !strcmp(k, "exclusiveMaximum")) {
		if (want_number(C, v, kp))
			return C->code;
		if (!strcmp(k, "minimum")) {
			n->minimum = v;
			return add_op(n, KJ__OP_MINIMUM);
		}
		if (!strcmp(k, "maximum")) {
			n->maximum = v;
			return add_op(n, KJ__OP_MAXIMUM);
		}
		if (!strcmp(k, "exclusiveMinimum")) {
			n->xminimum = v;
			return add_op(n, KJ__OP_EXCLUSIVE_MINIMUM);
		}
		n->xmaximum = v;
		return add_op(n, KJ__OP_EXCLUSIVE_MAXIMUM);
	}
	if (!strcmp(k, "multipleOf")) {
		if (want_number(C, v, kp))
			return C->code;
		if (json_number_value(v) <= 0)
			return fail(C, kp, "expected a number greater than 0");
		n->multiple_of = v;
		return add_op(n, KJ__OP_MULTIPLE_OF);
	}
	/* Not a draft-07 keyword: accepted only as a place a $ref points into
	 * (pass 1). */
	if (ref_passes(C, kp))
		return 0;
	return fail(C, kp, "unknown keyword '%s' (not draft-07; kjudge rejects unknown keywords)",
		    k);
}

static struct kj__jsnode *compile(struct cc *C, const json_t *js, const char *base, const char *ptr)
{
	struct kj__jsnode *n;
	const json_t *id, *ref;
	const char *k;
	json_t *v;

	if (C->code)
		return NULL;
	n = lookup(C, js);
	if (n)
		return n;
	if (!json_is_object(js) && !json_is_boolean(js)) {
		fail(C, ptr, "a schema must be an object or a boolean");
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		oom(C);
		return NULL;
	}
	n->next = C->s->nodes;
	C->s->nodes = n;
	n->js = js;
	n->min_props = n->max_props = n->min_items = n->max_items = n->min_len = n->max_len = -1;
	n->ptr = strdup(ptr);
	if (!n->ptr || remember(C, js, n)) {
		oom(C);
		return NULL;
	}
	if (json_is_boolean(js)) {
		n->boolean = json_is_true(js);
		return n;
	}
	n->boolean = -1;
	ref = json_object_get(js, "$ref");
	id = json_object_get(js, "$id");
	/* Beside a $ref, draft-07 ignores every other keyword, $id too. */
	if (id && json_is_string(id) && !ref) {
		char *uri = uri_resolve(base, json_string_value(id)), *h;

		if (!uri) {
			oom(C);
			return NULL;
		}
		n->base = uri;
		h = strchr(uri, '#');
		if (h && h[1] == '/') {
			fail(C, ptr, "$id '%s' must not hold a JSON pointer", json_string_value(id));
			return NULL;
		}
		if (h && h[1]) {
			/* A plain-name fragment names this schema (an anchor); the
			 * URI before it is the base, and a resource of its own only
			 * when it differs from the enclosing one. */
			if (register_resource(C, uri, n))
				return NULL;
			*h = 0;
			if (strcmp(uri, base) && !find_resource(C, uri))
				register_resource(C, uri, n);
		} else {
			if (h)
				*h = 0;
			register_resource(C, uri, n);
		}
	} else {
		n->base = strdup(base);
	}
	if (!n->base) {
		oom(C);
		return NULL;
	}
	if (C->code)
		return NULL;
	if (ref) {
		char *kp = ptr_child(ptr, "$ref");

		if (!kp) {
			oom(C);
			return NULL;
		}
		if (want_string(C, ref, kp, &n->ref_text)) {
			free(kp);
			return NULL;
		}
		free(kp);
		n->ops[n->nops++] = KJ__OP_REF;
		if (grow(C, &C->pending, &C->cappending, C->npending, sizeof(*C->pending)))
			return NULL;
		C->pending[C->npending++] = n;
	}
	json_object_foreach((json_t *)(uintptr_t)js, k, v) {
		char *kp = ptr_child(ptr, k);
		size_t before = n->nops;

		if (!kp) {
			oom(C);
			return NULL;
		}
		keyword(C, n, k, v, kp);
		free(kp);
		if (C->code)
			return NULL;
		/* Siblings of a $ref are checked but do not assert anything. */
		if (ref)
			n->nops = before;
	}
	return n;
}

/* --- pass 3: $refs ----------------------------------------------------------- */

static struct kj__jsnode *find_resource(const struct cc *C, const char *uri)
{
	size_t i;

	for (i = 0; i < C->nres; i++)
		if (!strcmp(C->res[i].uri, uri))
			return C->res[i].node;
	return NULL;
}

/* The value at JSON pointer p (decoded, "" or "/...") inside v, or NULL. */
static const json_t *walk_pointer(const json_t *v, const char *p)
{
	char seg[1024];

	while (*p == '/' && v) {
		size_t n = 0;

		for (p++; *p && *p != '/'; p++) {
			if (n + 1 >= sizeof(seg))
				return NULL;
			if (p[0] == '~' && p[1] == '0')
				seg[n++] = '~', p++;
			else if (p[0] == '~' && p[1] == '1')
				seg[n++] = '/', p++;
			else
				seg[n++] = *p;
		}
		seg[n] = 0;
		if (json_is_object(v)) {
			v = json_object_getn(v, seg, n);
		} else if (json_is_array(v)) {
			char *end;
			unsigned long i;

			if (!n || (n > 1 && seg[0] == '0') || seg[0] < '0' || seg[0] > '9')
				return NULL;
			errno = 0;
			i = strtoul(seg, &end, 10);
			if (*end || errno)
				return NULL;
			v = json_array_get(v, i);
		} else {
			return NULL;
		}
	}
	return *p ? NULL : v;
}

static int resolve_one(struct cc *C, struct kj__jsnode *n)
{
	char *uri = uri_resolve(n->base, n->ref_text), *h, *kp;
	struct kj__jsnode *res, *target = NULL;

	if (!uri)
		return oom(C);
	kp = ptr_child(n->ptr, "$ref");
	if (!kp) {
		free(uri);
		return oom(C);
	}
	h = strchr(uri, '#');
	if (h)
		*h++ = 0;
	res = find_resource(C, uri);
	if (!res) {
		fail(C, kp, "remote reference '%s' is not supported (only references "
		     "within the schema's own document)", n->ref_text);
	} else if (!h || !*h) {
		target = res;
	} else if (*h == '/' || *h == '%') {
		const json_t *t;

		percent_decode(h);
		t = walk_pointer(res->js, h);
		if (!t) {
			fail(C, kp, "$ref '%s': nothing in the schema at that pointer", n->ref_text);
		} else {
			char *at = dup_printf("%s%s", res->ptr, h);

			if (!at) {
				free(uri);
				free(kp);
				return oom(C);
			}
			target = compile(C, t, res->base ? res->base : DEFAULT_BASE, at);
			free(at);
		}
	} else {
		h[-1] = '#';
		target = find_resource(C, uri);
		if (!target)
			fail(C, kp, "$ref '%s': no $id of the schema names '%s'", n->ref_text, uri);
	}
	n->ref = target;
	free(uri);
	free(kp);
	return C->code;
}

/* --- the public side ---------------------------------------------------------- */

static void free_regex(struct kj__jsregex *rx)
{
	pcre2_code_free(rx->re);
}

void kj_jschema_free(struct kj_jschema *s)
{
	struct kj__jsnode *n, *next;
	size_t i;

	if (!s)
		return;
	for (n = s->nodes; n; n = next) {
		next = n->next;
		free(n->props);
		for (i = 0; i < n->npats; i++)
			free_regex(&n->pats[i].rx);
		free(n->pats);
		free(n->deps);
		free(n->items_list.v);
		free(n->all_of.v);
		free(n->any_of.v);
		free(n->one_of.v);
		free_regex(&n->pattern);
		free(n->ptr);
		free(n->base);
		free(n);
	}
	json_decref(s->doc);
	free(s);
}

int kj_jschema_compile(const json_t *doc, const char *name, struct kj_jschema **out,
		       struct kj_error *err)
{
	struct cc C = { .name = name ? name : "<schema>", .err = err };
	size_t i, done = 0;

	*out = NULL;
	C.s = calloc(1, sizeof(*C.s));
	if (!C.s)
		return oom(&C);
	C.s->doc = kj__jref(doc);
	if (!collect_refs(&C, doc, 0)) {
		struct kj__jsnode *root = compile(&C, doc, DEFAULT_BASE, "");

		/* The document is a resource under its own base and under the
		 * default one (when its $id moved it). */
		if (root && root->base && !find_resource(&C, root->base))
			register_resource(&C, root->base, root);
		if (root && !C.code && !find_resource(&C, DEFAULT_BASE))
			register_resource(&C, DEFAULT_BASE, root);
		C.s->root = root;
		while (!C.code && done < C.npending)
			resolve_one(&C, C.pending[done++]);
	}
	for (i = 0; i < C.nres; i++)
		free(C.res[i].uri);
	free(C.res);
	for (i = 0; i < C.nrefs; i++)
		free(C.refs[i].ptr);
	free(C.refs);
	free(C.pending);
	free(C.keys);
	free(C.vals);
	if (C.code) {
		kj_jschema_free(C.s);
		return C.code;
	}
	*out = C.s;
	return KJ_OK;
}
