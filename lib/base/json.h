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

/* kj__json_load_file reads its file as kj__read_file does (base/fs.h: an
 * open that cannot block, a regular file only), at most this many bytes;
 * a file it cannot read is json_error_cannot_open_file with errno ENOENT
 * when it does not exist, else EIO, and je->text saying why. */
#define KJ__JSON_MAX_FILE (256u << 20)

/*
 * json_dumps, except that a dump during which any of jansson's allocations
 * failed returns NULL with *oom = 1 (jansson 2.14 drops the bytes of a key
 * it cannot save and returns a text that is not the value's).  Otherwise
 * *oom = 0 and the result is jansson's: a text the caller frees, or NULL
 * when the value cannot be encoded.  Thread-safe.
 */
char *kj__json_dumps(const json_t *v, size_t flags, int *oom);

/* The allocator under the count that every jansson allocation goes through
 * (NULL: malloc again), so that a test can fail the N-th one; it must not
 * be changed while another thread calls jansson. */
void kj__json_set_malloc(void *(*fn)(size_t));

#endif /* KJ_BASE_JSON_H */
