/*
 * jschema_check.c - checking instances against a compiled draft-07 schema
 * (kjudge/jschema.h), with messages in the words of Python's jsonschema.
 *
 * ParBench's validator prints jsonschema's messages, so a suite author
 * knows them: "'x' is not one of ['p', 'q']", "'name' is a required
 * property".  They quote values as Python's repr does (strings in single
 * quotes, True, False, None, 1.0), and so do these, through repr() below
 * (cut at REPR_MAX bytes with "...", where jsonschema would print a whole
 * document).
 *
 * A check walks the schema graph and the instance together.  It either
 * collects messages, or only probes (anyOf, oneOf, not, contains and if
 * ask whether a subschema holds, and a probe stops at the first failure);
 * the keywords whose failure jsonschema reports through the subschema's
 * own errors (allOf, $ref, properties, items, then, else, dependencies as
 * schemas) pass the collecting down.  The instance path of the value being
 * checked is a stack of segments; it is rendered into text only when an
 * error is recorded.  When the cap is reached the walk stops.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kjudge/jschema.h"
#include "spec/jschema_internal.h"
#include "base/vec.h"
#include "base/internal.h"

/* Longest repr of a value in a message, before "...". */
#define REPR_MAX 200
/* Most schemas a oneOf message names as all valid. */
#define ONE_OF_SHOWN 8
/* Deepest nesting of schema checks (a loop of $refs that never descends
 * into the instance ends here). */
#define MAX_NEST 1024

/* --- growing strings ------------------------------------------------------ */

struct sb {
	char *p;
	size_t n, cap;
	size_t limit;  /* stop appending past this many bytes (0: none) */
	int cut, oom;
};

static void sb_add(struct sb *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->limit && b->n + n > b->limit) {
		if (b->n < b->limit)
			n = b->limit - b->n;
		else
			n = 0;
		b->cut = 1;
	}
	if (KJ__GROW(b->p, b->cap, b->n + n + 1) != KJ_OK) {
		b->oom = 1;
		return;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void sb_str(struct sb *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

static void sb_fmt(struct sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_fmt(struct sb *b, const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		sb_add(b, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* --- Python's repr ------------------------------------------------------------- */

static void repr_string(struct sb *b, const char *s, size_t n)
{
	char q = '\'';
	size_t i;

	if (memchr(s, '\'', n) && !memchr(s, '"', n))
		q = '"';
	sb_add(b, &q, 1);
	for (i = 0; i < n && !b->cut; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\\' || c == (unsigned char)q) {
			char e[2] = { '\\', (char)c };
			sb_add(b, e, 2);
		} else if (c == '\n') {
			sb_str(b, "\\n");
		} else if (c == '\r') {
			sb_str(b, "\\r");
		} else if (c == '\t') {
			sb_str(b, "\\t");
		} else if (c < 0x20 || c == 0x7f) {
			sb_fmt(b, "\\x%02x", c);
		} else {
			sb_add(b, s + i, 1);
		}
	}
	sb_add(b, &q, 1);
}

/* A double as Python's repr writes it: the shortest digits that read back
 * the same, fixed notation for exponents -4 to 15, else d.ddde+XX. */
static void repr_real(struct sb *b, double d)
{
	char buf[40], digits[24];
	int p, e, nd = 0, neg;
	const char *c;

	if (d == 0) {
		sb_str(b, signbit(d) ? "-0.0" : "0.0");
		return;
	}
	for (p = 1; p <= 17; p++) {
		snprintf(buf, sizeof(buf), "%.*e", p - 1, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	neg = buf[0] == '-';
	for (c = buf + neg; *c && *c != 'e'; c++)
		if (*c >= '0' && *c <= '9')
			digits[nd++] = *c;
	digits[nd] = 0;
	e = (int)strtol(c + 1, NULL, 10);
	if (neg)
		sb_str(b, "-");
	if (e >= -4 && e < 16) {
		if (e >= 0) {
			int i;

			for (i = 0; i <= e; i++)
				sb_add(b, i < nd ? digits + i : "0", 1);
			sb_str(b, ".");
			if (nd > e + 1)
				sb_add(b, digits + e + 1, (size_t)(nd - e - 1));
			else
				sb_str(b, "0");
		} else {
			sb_str(b, "0.");
			for (p = 0; p < -e - 1; p++)
				sb_str(b, "0");
			sb_add(b, digits, (size_t)nd);
		}
		return;
	}
	sb_add(b, digits, 1);
	if (nd > 1) {
		sb_str(b, ".");
		sb_add(b, digits + 1, (size_t)(nd - 1));
	}
	sb_fmt(b, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
}

static void repr(struct sb *b, const json_t *v)
{
	size_t i;
	const char *k;
	json_t *x;
	int first = 1;

	if (b->cut)
		return;
	switch (json_typeof(v)) {
	case JSON_NULL: sb_str(b, "None"); break;
	case JSON_TRUE: sb_str(b, "True"); break;
	case JSON_FALSE: sb_str(b, "False"); break;
	case JSON_INTEGER: sb_fmt(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); break;
	case JSON_REAL: repr_real(b, json_real_value(v)); break;
	case JSON_STRING: repr_string(b, json_string_value(v), json_string_length(v)); break;
	case JSON_ARRAY:
		sb_str(b, "[");
		json_array_foreach(v, i, x) {
			if (i)
				sb_str(b, ", ");
			repr(b, x);
			if (b->cut)
				return;
		}
		sb_str(b, "]");
		break;
	case JSON_OBJECT: {
		void *it;

		sb_str(b, "{");
		for (it = json_object_iter((json_t *)(uintptr_t)v); it;
		     it = json_object_iter_next((json_t *)(uintptr_t)v, it)) {
			k = json_object_iter_key(it);
			if (!first)
				sb_str(b, ", ");
			first = 0;
			repr_string(b, k, json_object_iter_key_len(it));
			sb_str(b, ": ");
			repr(b, json_object_iter_value(it));
			if (b->cut)
				return;
		}
		sb_str(b, "}");
		break;
	}
	}
}

/* The repr of v in a message: at most REPR_MAX bytes, then "...". */
static void repr_cut(struct sb *b, const json_t *v)
{
	struct sb t = { .limit = REPR_MAX };

	repr(&t, v);
	if (t.oom) {
		b->oom = 1;
	} else {
		sb_add(b, t.p ? t.p : "", t.n);
		if (t.cut)
			sb_str(b, "...");
	}
	free(t.p);
}

/* --- equality -------------------------------------------------------------------- */

int kj__json_equal(const json_t *a, const json_t *b)
{
	size_t i;

	if (json_is_number(a) && json_is_number(b)) {
		if (json_is_integer(a) && json_is_integer(b))
			return json_integer_value(a) == json_integer_value(b);
		return json_number_value(a) == json_number_value(b);
	}
	if (json_typeof(a) != json_typeof(b))
		return 0;
	switch (json_typeof(a)) {
	case JSON_STRING:
		return json_string_length(a) == json_string_length(b) &&
		       !memcmp(json_string_value(a), json_string_value(b), json_string_length(a));
	case JSON_ARRAY:
		if (json_array_size(a) != json_array_size(b))
			return 0;
		for (i = 0; i < json_array_size(a); i++)
			if (!kj__json_equal(json_array_get(a, i), json_array_get(b, i)))
				return 0;
		return 1;
	case JSON_OBJECT: {
		void *it;

		if (json_object_size(a) != json_object_size(b))
			return 0;
		for (it = json_object_iter((json_t *)(uintptr_t)a); it;
		     it = json_object_iter_next((json_t *)(uintptr_t)a, it)) {
			const json_t *y = json_object_getn(b, json_object_iter_key(it),
							   json_object_iter_key_len(it));

			if (!y || !kj__json_equal(json_object_iter_value(it), y))
				return 0;
		}
		return 1;
	}
	default:
		return 1;
	}
}

/* --- the walk ------------------------------------------------------------------------- */

struct seg {
	const char *key;  /* NULL: an index */
	size_t len;       /* the key's length, or the index */
};

struct rec {
	struct seg *segs;
	size_t nsegs, seq;
	char *path, *msg;
};

struct ev {
	int collect;
	struct seg *path;
	size_t depth, pcap;
	struct rec *recs;
	size_t n, cap, max;
	int truncated, stop, oom, nest;
	pcre2_match_data *md;
};

static int push(struct ev *E, const char *key, size_t len)
{
	if (KJ__GROW(E->path, E->pcap, E->depth + 1) != KJ_OK) {
		E->oom = E->stop = 1;
		return -1;
	}
	E->path[E->depth].key = key;
	E->path[E->depth].len = len;
	E->depth++;
	return 0;
}

/* A key printed bare in a path unless it could be misread there. */
static int plain_key(const char *k, size_t n)
{
	size_t i;

	if (!n)
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)k[i];

		if (c < 0x21 || c == 0x7f || c == '.' || c == '[' || c == ']' || c == '\'' || c == '"')
			return 0;
	}
	return 1;
}

static void render_path(struct sb *b, const struct seg *s, size_t n)
{
	size_t i;

	if (!n) {
		sb_str(b, "(root)");
		return;
	}
	for (i = 0; i < n; i++) {
		if (!s[i].key) {
			sb_fmt(b, "[%zu]", s[i].len);
		} else if (plain_key(s[i].key, s[i].len)) {
			if (i)
				sb_str(b, ".");
			sb_add(b, s[i].key, s[i].len);
		} else {
			sb_str(b, "[");
			repr_string(b, s[i].key, s[i].len);
			sb_str(b, "]");
		}
	}
}

/* Record the message in m (taken) at the current path. */
static void record(struct ev *E, struct sb *m)
{
	struct rec *r;
	struct sb path = { 0 };

	if (m->oom) {
		free(m->p);
		E->oom = E->stop = 1;
		return;
	}
	if (E->n == E->max) {
		free(m->p);
		E->truncated = E->stop = 1;
		return;
	}
	if (KJ__GROW(E->recs, E->cap, E->n + 1) != KJ_OK) {
		free(m->p);
		E->oom = E->stop = 1;
		return;
	}
	r = &E->recs[E->n];
	memset(r, 0, sizeof(*r));
	render_path(&path, E->path, E->depth);
	r->segs = malloc((E->depth ? E->depth : 1) * sizeof(*r->segs));
	if (path.oom || !r->segs) {
		free(path.p);
		free(r->segs);
		free(m->p);
		E->oom = E->stop = 1;
		return;
	}
	if (E->depth)
		memcpy(r->segs, E->path, E->depth * sizeof(*r->segs));
	r->nsegs = E->depth;
	r->seq = E->n;
	r->path = path.p;
	r->msg = m->p;
	E->n++;
}

static int check(struct ev *E, const struct kj__jsnode *n, const json_t *x);

/* Whether x is valid under n, with no messages. */
static int probe(struct ev *E, const struct kj__jsnode *n, const json_t *x)
{
	int saved = E->collect, stop = E->stop, r;

	E->collect = 0;
	E->stop = 0;
	r = check(E, n, x);
	E->collect = saved;
	E->stop = stop || E->oom;
	return r;
}

static int child(struct ev *E, const struct kj__jsnode *n, const json_t *x, const char *key,
		 size_t len)
{
	int r;

	if (push(E, key, len))
		return 0;
	r = check(E, n, x);
	E->depth--;
	return r;
}

static int type_ok(unsigned types, const json_t *x)
{
	switch (json_typeof(x)) {
	case JSON_NULL: return !!(types & KJ__JT_NULL);
	case JSON_TRUE: case JSON_FALSE: return !!(types & KJ__JT_BOOLEAN);
	case JSON_OBJECT: return !!(types & KJ__JT_OBJECT);
	case JSON_ARRAY: return !!(types & KJ__JT_ARRAY);
	case JSON_STRING: return !!(types & KJ__JT_STRING);
	default:
		return (types & KJ__JT_NUMBER) || ((types & KJ__JT_INTEGER) && kj__json_integral(x));
	}
}

/* -1, 0, 1 as a < b, a == b, a > b (both numbers; integers exactly). */
static int num_cmp(const json_t *a, const json_t *b)
{
	if (json_is_integer(a) && json_is_integer(b)) {
		json_int_t x = json_integer_value(a), y = json_integer_value(b);
		return (x > y) - (x < y);
	} else {
		double x = json_number_value(a), y = json_number_value(b);
		return (x > y) - (x < y);
	}
}

static size_t code_points(const char *s, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}

static int regex_search(struct ev *E, const struct kj__jsregex *rx, const char *s, size_t n)
{
	int rc;

	if (!E->md) {
		E->md = pcre2_match_data_create(1, NULL);
		if (!E->md) {
			E->oom = E->stop = 1;
			return 0;
		}
	}
	rc = pcre2_match(rx->re, (PCRE2_SPTR)s, n, 0, 0, E->md, NULL);
	/* A match limit hit (catastrophic backtracking) counts as no match:
	 * the check fails closed. */
	return rc >= 0;
}

/* Start a message with repr(x) and the text that follows. */
static void say(struct ev *E, const json_t *x, const char *rest)
{
	struct sb m = { 0 };

	repr_cut(&m, x);
	sb_str(&m, rest);
	record(E, &m);
}

/* repr(x) + mid + repr(y). */
static void say2(struct ev *E, const json_t *x, const char *mid, const json_t *y)
{
	struct sb m = { 0 };

	repr_cut(&m, x);
	sb_str(&m, mid);
	repr_cut(&m, y);
	record(E, &m);
}

static int prop_known(const struct kj__jsnode *n, const char *k, size_t len)
{
	size_t i;

	for (i = 0; i < n->nprops; i++)
		if (n->props[i].len == len && !memcmp(n->props[i].name, k, len))
			return 1;
	return 0;
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The instance's keys that neither properties nor patternProperties name. */
static size_t extras(struct ev *E, const struct kj__jsnode *n, const json_t *x, const char **out)
{
	size_t k = 0, i;
	void *it;

	for (it = json_object_iter((json_t *)(uintptr_t)x); it;
	     it = json_object_iter_next((json_t *)(uintptr_t)x, it)) {
		const char *key = json_object_iter_key(it);
		size_t len = json_object_iter_key_len(it);
		int hit = prop_known(n, key, len);

		for (i = 0; !hit && i < n->npats; i++)
			hit = regex_search(E, &n->pats[i].rx, key, len);
		if (!hit)
			out[k++] = key;
	}
	return k;
}

static int op_additional_properties(struct ev *E, const struct kj__jsnode *n, const json_t *x)
{
	size_t ne, i, np = json_object_size(x);
	const char **ex;
	int ok = 1;

	if (!np)
		return 1;
	ex = malloc(np * sizeof(*ex));
	if (!ex) {
		E->oom = E->stop = 1;
		return 0;
	}
	ne = extras(E, n, x, ex);
	if (n->addl_props->boolean == 0 && ne) {
		ok = 0;
		if (E->collect) {
			struct sb m = { 0 };

			if (n->npats) {
				const char **pats = malloc(n->npats * sizeof(*pats));

				if (!pats) {
					free(ex);
					E->oom = E->stop = 1;
					return 0;
				}
				qsort(ex, ne, sizeof(*ex), cmp_cstr);
				for (i = 0; i < ne; i++) {
					if (i)
						sb_str(&m, ", ");
					repr_string(&m, ex[i], strlen(ex[i]));
				}
				sb_str(&m, ne == 1 ? " does not match any of the regexes: "
					   : " do not match any of the regexes: ");
				for (i = 0; i < n->npats; i++)
					pats[i] = n->pats[i].rx.src;
				qsort(pats, n->npats, sizeof(*pats), cmp_cstr);
				for (i = 0; i < n->npats; i++) {
					if (i)
						sb_str(&m, ", ");
					repr_string(&m, pats[i], strlen(pats[i]));
				}
				free(pats);
			} else {
				sb_str(&m, "Additional properties are not allowed (");
				for (i = 0; i < ne; i++) {
					if (i)
						sb_str(&m, ", ");
					repr_string(&m, ex[i], strlen(ex[i]));
				}
				sb_str(&m, ne == 1 ? " was unexpected)" : " were unexpected)");
			}
			record(E, &m);
		}
	} else if (n->addl_props->boolean != 1) {
		for (i = 0; i < ne && !E->stop; i++)
			if (!child(E, n->addl_props, json_object_get(x, ex[i]), ex[i], strlen(ex[i])))
				ok = 0;
	}
	free(ex);
	return ok;
}

static int op_object(struct ev *E, const struct kj__jsnode *n, enum kj__jsop op, const json_t *x)
{
	size_t i, j;
	int ok = 1;
	void *it;

	switch (op) {
	case KJ__OP_REQUIRED:
		for (i = 0; i < json_array_size(n->required); i++) {
			const json_t *r = json_array_get(n->required, i);

			if (!json_object_getn(x, json_string_value(r), json_string_length(r))) {
				ok = 0;
				if (!E->collect)
					return 0;
				say(E, r, " is a required property");
			}
		}
		return ok;
	case KJ__OP_PROPERTIES:
		for (i = 0; i < n->nprops && !E->stop; i++) {
			const json_t *v = json_object_getn(x, n->props[i].name, n->props[i].len);

			if (v && !child(E, n->props[i].s, v, n->props[i].name, n->props[i].len)) {
				ok = 0;
				if (!E->collect)
					return 0;
			}
		}
		return ok;
	case KJ__OP_PATTERN_PROPERTIES:
		for (i = 0; i < n->npats && !E->stop; i++)
			for (it = json_object_iter((json_t *)(uintptr_t)x); it && !E->stop;
			     it = json_object_iter_next((json_t *)(uintptr_t)x, it)) {
				const char *k = json_object_iter_key(it);
				size_t len = json_object_iter_key_len(it);

				if (regex_search(E, &n->pats[i].rx, k, len) &&
				    !child(E, n->pats[i].s, json_object_iter_value(it), k, len)) {
					ok = 0;
					if (!E->collect)
						return 0;
				}
			}
		return ok;
	case KJ__OP_ADDITIONAL_PROPERTIES:
		return op_additional_properties(E, n, x);
	case KJ__OP_PROPERTY_NAMES:
		for (it = json_object_iter((json_t *)(uintptr_t)x); it && !E->stop;
		     it = json_object_iter_next((json_t *)(uintptr_t)x, it)) {
			json_t *name = json_stringn_nocheck(json_object_iter_key(it),
							    json_object_iter_key_len(it));

			if (!name) {
				E->oom = E->stop = 1;
				return 0;
			}
			if (!check(E, n->prop_names, name))
				ok = 0;
			json_decref(name);
			if (!ok && !E->collect)
				return 0;
		}
		return ok;
	case KJ__OP_MIN_PROPERTIES:
		if ((long long)json_object_size(x) >= n->min_props)
			return 1;
		if (E->collect)
			say(E, x, " does not have enough properties");
		return 0;
	case KJ__OP_MAX_PROPERTIES:
		if ((long long)json_object_size(x) <= n->max_props)
			return 1;
		if (E->collect)
			say(E, x, " has too many properties");
		return 0;
	case KJ__OP_DEPENDENCIES:
		for (i = 0; i < n->ndeps && !E->stop; i++) {
			const struct kj__jsdep *d = &n->deps[i];

			if (!json_object_getn(x, d->name, d->len))
				continue;
			if (d->s) {
				if (!check(E, d->s, x)) {
					ok = 0;
					if (!E->collect)
						return 0;
				}
				continue;
			}
			for (j = 0; j < json_array_size(d->req); j++) {
				const json_t *r = json_array_get(d->req, j);

				if (json_object_getn(x, json_string_value(r), json_string_length(r)))
					continue;
				ok = 0;
				if (!E->collect)
					return 0;
				{
					struct sb m = { 0 };

					repr_cut(&m, r);
					sb_str(&m, " is a dependency of ");
					repr_string(&m, d->name, d->len);
					record(E, &m);
				}
			}
		}
		return ok;
	default:
		return 1;
	}
}

static int op_array(struct ev *E, const struct kj__jsnode *n, enum kj__jsop op, const json_t *x)
{
	size_t i, j, len = json_array_size(x);
	int ok = 1;

	switch (op) {
	case KJ__OP_ITEMS:
		if (n->items) {
			for (i = 0; i < len && !E->stop; i++)
				if (!child(E, n->items, json_array_get(x, i), NULL, i)) {
					ok = 0;
					if (!E->collect)
						return 0;
				}
		} else {
			for (i = 0; i < len && i < n->items_list.n && !E->stop; i++)
				if (!child(E, n->items_list.v[i], json_array_get(x, i), NULL, i)) {
					ok = 0;
					if (!E->collect)
						return 0;
				}
		}
		return ok;
	case KJ__OP_ADDITIONAL_ITEMS:
		/* Only beside "items" as an array, as draft-07 says. */
		if (n->items || !n->items_list.v || len <= n->items_list.n)
			return 1;
		if (n->addl_items->boolean == 0) {
			if (E->collect) {
				struct sb m = { 0 };

				sb_str(&m, "Additional items are not allowed (");
				for (i = n->items_list.n; i < len; i++) {
					if (i > n->items_list.n)
						sb_str(&m, ", ");
					repr_cut(&m, json_array_get(x, i));
				}
				sb_str(&m, len - n->items_list.n == 1 ? " was unexpected)"
				       : " were unexpected)");
				record(E, &m);
			}
			return 0;
		}
		for (i = n->items_list.n; i < len && !E->stop; i++)
			if (!child(E, n->addl_items, json_array_get(x, i), NULL, i)) {
				ok = 0;
				if (!E->collect)
					return 0;
			}
		return ok;
	case KJ__OP_CONTAINS:
		for (i = 0; i < len; i++) {
			if (probe(E, n->contains, json_array_get(x, i)))
				return 1;
			if (E->oom)
				return 0;
		}
		if (E->collect)
			say(E, x, " does not contain items matching the given schema");
		return 0;
	case KJ__OP_MIN_ITEMS:
		if ((long long)len >= n->min_items)
			return 1;
		if (E->collect)
			say(E, x, " is too short");
		return 0;
	case KJ__OP_MAX_ITEMS:
		if ((long long)len <= n->max_items)
			return 1;
		if (E->collect)
			say(E, x, " is too long");
		return 0;
	case KJ__OP_UNIQUE_ITEMS:
		for (i = 0; i < len; i++)
			for (j = i + 1; j < len; j++)
				if (kj__json_equal(json_array_get(x, i), json_array_get(x, j))) {
					if (E->collect)
						say(E, x, " has non-unique elements");
					return 0;
				}
		return 1;
	default:
		return 1;
	}
}

static int op_number(struct ev *E, const struct kj__jsnode *n, enum kj__jsop op, const json_t *x)
{
	const json_t *bound;
	const char *msg;
	int c, bad;

	switch (op) {
	case KJ__OP_MINIMUM:
		bound = n->minimum;
		c = num_cmp(x, bound);
		bad = c < 0;
		msg = " is less than the minimum of ";
		break;
	case KJ__OP_MAXIMUM:
		bound = n->maximum;
		c = num_cmp(x, bound);
		bad = c > 0;
		msg = " is greater than the maximum of ";
		break;
	case KJ__OP_EXCLUSIVE_MINIMUM:
		bound = n->xminimum;
		c = num_cmp(x, bound);
		bad = c <= 0;
		msg = " is less than or equal to the minimum of ";
		break;
	case KJ__OP_EXCLUSIVE_MAXIMUM:
		bound = n->xmaximum;
		c = num_cmp(x, bound);
		bad = c >= 0;
		msg = " is greater than or equal to the maximum of ";
		break;
	case KJ__OP_MULTIPLE_OF:
		bound = n->multiple_of;
		msg = " is not a multiple of ";
		if (json_is_integer(x) && json_is_integer(bound)) {
			bad = json_integer_value(x) % json_integer_value(bound) != 0;
		} else if (json_is_integer(bound)) {
			bad = fmod(json_number_value(x), (double)json_integer_value(bound)) != 0;
		} else {
			double q = json_number_value(x) / json_real_value(bound);

			bad = !isfinite(q) || floor(q) != q;
		}
		break;
	default:
		return 1;
	}
	if (!bad)
		return 1;
	if (E->collect)
		say2(E, x, msg, bound);
	return 0;
}

/* The schemas of a list that x is valid under; *first gets the first. */
static size_t count_valid(struct ev *E, const struct kj__jslist *l, const json_t *x, int *which,
			  size_t stop_at)
{
	size_t i, k = 0;

	for (i = 0; i < l->n && k < stop_at; i++) {
		if (probe(E, l->v[i], x))
			which[k++] = (int)i;
		if (E->oom)
			return 0;
	}
	return k;
}

static int op_logic(struct ev *E, const struct kj__jsnode *n, enum kj__jsop op, const json_t *x)
{
	size_t i, k;
	int ok = 1, which[ONE_OF_SHOWN];

	switch (op) {
	case KJ__OP_REF:
		return check(E, n->ref, x);
	case KJ__OP_ALL_OF:
		for (i = 0; i < n->all_of.n && !E->stop; i++)
			if (!check(E, n->all_of.v[i], x)) {
				ok = 0;
				if (!E->collect)
					return 0;
			}
		return ok;
	case KJ__OP_ANY_OF:
		if (count_valid(E, &n->any_of, x, which, 1))
			return 1;
		if (E->collect)
			say(E, x, " is not valid under any of the given schemas");
		return 0;
	case KJ__OP_ONE_OF:
		k = count_valid(E, &n->one_of, x, which, E->collect ? ONE_OF_SHOWN : 2);
		if (k == 1)
			return 1;
		if (E->collect) {
			if (!k) {
				say(E, x, " is not valid under any of the given schemas");
			} else {
				struct sb m = { 0 };

				/* jsonschema lists the other valid schemas, then the
				 * first one. */
				repr_cut(&m, x);
				sb_str(&m, " is valid under each of ");
				for (i = 1; i <= k; i++) {
					if (i > 1)
						sb_str(&m, ", ");
					repr_cut(&m, n->one_of.v[which[i % k]]->js);
				}
				record(E, &m);
			}
		}
		return 0;
	case KJ__OP_NOT:
		if (!probe(E, n->not_, x))
			return !E->oom;
		if (E->collect)
			say2(E, x, " should not be valid under ", n->not_->js);
		return 0;
	case KJ__OP_IF:
		if (probe(E, n->if_, x))
			return n->then_ ? check(E, n->then_, x) : 1;
		if (E->oom)
			return 0;
		return n->else_ ? check(E, n->else_, x) : 1;
	default:
		return 1;
	}
}

static int op_one(struct ev *E, const struct kj__jsnode *n, enum kj__jsop op, const json_t *x)
{
	size_t i;

	switch (op) {
	case KJ__OP_TYPE:
		if (type_ok(n->types, x))
			return 1;
		if (E->collect) {
			struct sb m = { 0 };

			repr_cut(&m, x);
			sb_str(&m, " is not of type ");
			if (json_is_string(n->type_js)) {
				repr(&m, n->type_js);
			} else {
				for (i = 0; i < json_array_size(n->type_js); i++) {
					if (i)
						sb_str(&m, ", ");
					repr(&m, json_array_get(n->type_js, i));
				}
			}
			record(E, &m);
		}
		return 0;
	case KJ__OP_ENUM:
		for (i = 0; i < json_array_size(n->enum_js); i++)
			if (kj__json_equal(x, json_array_get(n->enum_js, i)))
				return 1;
		if (E->collect)
			say2(E, x, " is not one of ", n->enum_js);
		return 0;
	case KJ__OP_CONST:
		if (kj__json_equal(x, n->const_js))
			return 1;
		if (E->collect) {
			struct sb m = { 0 };

			repr_cut(&m, n->const_js);
			sb_str(&m, " was expected");
			record(E, &m);
		}
		return 0;
	case KJ__OP_MIN_LENGTH:
	case KJ__OP_MAX_LENGTH:
		if (!json_is_string(x))
			return 1;
		{
			long long len = (long long)code_points(json_string_value(x),
							       json_string_length(x));

			if (op == KJ__OP_MIN_LENGTH ? len >= n->min_len : len <= n->max_len)
				return 1;
		}
		if (E->collect)
			say(E, x, op == KJ__OP_MIN_LENGTH ? " is too short" : " is too long");
		return 0;
	case KJ__OP_PATTERN:
		if (!json_is_string(x) ||
		    regex_search(E, &n->pattern, json_string_value(x), json_string_length(x)))
			return 1;
		if (E->oom)
			return 0;
		if (E->collect) {
			struct sb m = { 0 };

			repr_cut(&m, x);
			sb_str(&m, " does not match ");
			repr_string(&m, n->pattern.src, strlen(n->pattern.src));
			record(E, &m);
		}
		return 0;
	default:
		break;
	}
	switch (op) {
	case KJ__OP_REQUIRED: case KJ__OP_PROPERTIES: case KJ__OP_PATTERN_PROPERTIES:
	case KJ__OP_ADDITIONAL_PROPERTIES: case KJ__OP_PROPERTY_NAMES: case KJ__OP_MIN_PROPERTIES:
	case KJ__OP_MAX_PROPERTIES: case KJ__OP_DEPENDENCIES:
		return json_is_object(x) ? op_object(E, n, op, x) : 1;
	case KJ__OP_ITEMS: case KJ__OP_ADDITIONAL_ITEMS: case KJ__OP_CONTAINS:
	case KJ__OP_MIN_ITEMS: case KJ__OP_MAX_ITEMS: case KJ__OP_UNIQUE_ITEMS:
		return json_is_array(x) ? op_array(E, n, op, x) : 1;
	case KJ__OP_MINIMUM: case KJ__OP_MAXIMUM: case KJ__OP_EXCLUSIVE_MINIMUM:
	case KJ__OP_EXCLUSIVE_MAXIMUM: case KJ__OP_MULTIPLE_OF:
		return json_is_number(x) ? op_number(E, n, op, x) : 1;
	default:
		return op_logic(E, n, op, x);
	}
}

static int check(struct ev *E, const struct kj__jsnode *n, const json_t *x)
{
	size_t i;
	int ok = 1;

	if (E->stop)
		return 0;
	if (n->boolean == 1)
		return 1;
	if (n->boolean == 0) {
		if (E->collect) {
			struct sb m = { 0 };

			sb_str(&m, "False schema does not allow ");
			repr_cut(&m, x);
			record(E, &m);
		}
		return 0;
	}
	if (++E->nest > MAX_NEST) {
		E->nest--;
		if (E->collect) {
			struct sb m = { 0 };

			sb_fmt(&m, "the schema nests deeper than %d checks here (a loop of $refs?)",
			       MAX_NEST);
			record(E, &m);
		}
		E->stop = 1;
		return 0;
	}
	for (i = 0; i < n->nops; i++) {
		if (!op_one(E, n, (enum kj__jsop)n->ops[i], x)) {
			ok = 0;
			if (!E->collect || E->stop)
				break;
		}
	}
	E->nest--;
	return ok && !E->oom;
}

/* --- results --------------------------------------------------------------------- */

static int rec_cmp(const void *pa, const void *pb)
{
	const struct rec *a = pa, *b = pb;
	size_t i;

	for (i = 0; i < a->nsegs && i < b->nsegs; i++) {
		const struct seg *x = &a->segs[i], *y = &b->segs[i];
		int c;

		if (!x->key != !y->key)
			return x->key ? 1 : -1; /* indexes before keys */
		if (!x->key) {
			if (x->len != y->len)
				return x->len < y->len ? -1 : 1;
			continue;
		}
		c = memcmp(x->key, y->key, x->len < y->len ? x->len : y->len);
		if (c)
			return c;
		if (x->len != y->len)
			return x->len < y->len ? -1 : 1;
	}
	if (a->nsegs != b->nsegs)
		return a->nsegs < b->nsegs ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

void kj_jschema_result_release(struct kj_jschema_result *res)
{
	size_t i;

	if (!res)
		return;
	for (i = 0; i < res->n; i++) {
		free(res->errors[i].path);
		free(res->errors[i].message);
	}
	free(res->errors);
	memset(res, 0, sizeof(*res));
}

static void ev_release(struct ev *E)
{
	size_t i;

	for (i = 0; i < E->n; i++) {
		free(E->recs[i].segs);
		free(E->recs[i].path);
		free(E->recs[i].msg);
	}
	free(E->recs);
	free(E->path);
	pcre2_match_data_free(E->md);
}

int kj_jschema_validate(const struct kj_jschema *s, const json_t *instance, size_t max_errors,
			struct kj_jschema_result *res, struct kj_error *err)
{
	struct ev E = { .collect = 1, .max = max_errors ? max_errors : KJ_JSCHEMA_MAX_ERRORS };
	size_t i;

	memset(res, 0, sizeof(*res));
	check(&E, s->root, instance);
	if (E.oom) {
		ev_release(&E);
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	if (E.n) {
		res->errors = calloc(E.n, sizeof(*res->errors));
		if (!res->errors) {
			ev_release(&E);
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
		}
		qsort(E.recs, E.n, sizeof(*E.recs), rec_cmp);
		for (i = 0; i < E.n; i++) {
			res->errors[i].path = E.recs[i].path;
			res->errors[i].message = E.recs[i].msg;
			E.recs[i].path = E.recs[i].msg = NULL;
		}
		res->n = E.n;
	}
	res->truncated = E.truncated;
	ev_release(&E);
	return KJ_OK;
}

int kj_jschema_is_valid(const struct kj_jschema *s, const json_t *instance)
{
	struct ev E = { .collect = 0, .max = 1 };
	int r = check(&E, s->root, instance);

	ev_release(&E);
	if (E.oom)
		return KJ_ENOMEM;
	return r;
}
