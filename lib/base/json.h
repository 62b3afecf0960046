/*
 * json.h - small helpers over jansson (kj__ internals): parsing that fails
 * closed (json.c), and references to const values.
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

/*
 * json_loadb and json_load_file, except that a parse during which any of
 * jansson's allocations failed returns NULL with *oom = 1 (jansson may drop
 * bytes of a token it cannot save and return a wrong value, or fail without
 * saying why).  Otherwise *oom = 0 and the result is jansson's: a new
 * reference, or NULL with je filled (je may be NULL).  Thread-safe; the
 * first call makes every later jansson allocation go through malloc with a
 * per-thread count of failures.
 */
json_t *kj__json_loadb(const char *buf, size_t len, size_t flags, json_error_t *je, int *oom);
json_t *kj__json_load_file(const char *path, size_t flags, json_error_t *je, int *oom);

#endif /* KJ_BASE_JSON_H */
