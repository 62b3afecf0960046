/*
 * json.h - small helpers over jansson (kj__ internals).
 *
 * jansson counts references through non-const pointers; a record that
 * keeps a reference to a value it was given as const (a reply it only
 * reads) takes it through kj__jref, which does not cast the const away in
 * a way the compiler would flag: taking a reference does not change the
 * value.
 *
 * Include it after the system headers, as internal.h.
 */
#ifndef KJ_BASE_JSON_H
#define KJ_BASE_JSON_H

#include <jansson.h>

/* A new reference to j (NULL stays NULL). */
static inline json_t *kj__jref(const json_t *j)
{
	union {
		const json_t *c;
		json_t *m;
	} u;

	u.c = j;
	return json_incref(u.m);
}

#endif /* KJ_BASE_JSON_H */
