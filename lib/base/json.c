/*
 * json.c - parsing JSON so that a failed allocation is always an error (see
 * json.h).
 *
 * jansson's lexer saves each byte of a token into a buffer it grows without
 * checking the growth (lex_save in load.c, 2.14): when an allocation fails
 * there it drops the byte and parses on, so a parse can return a value that
 * is not the text's (a nonce, a checksum, a number cut short).  Several of
 * its other allocation failures return NULL with no error code, which reads
 * as bad input.  So every allocation jansson makes goes through a counting
 * allocator once the first parse here starts, and a parse during which one
 * failed is out of memory, whatever jansson returned.
 */
#include <pthread.h>
#include <stdlib.h>

#include <jansson.h>

#include "base/json.h"
#include "base/internal.h"

/* Allocations of this thread's jansson calls that failed, ever. */
static _Thread_local unsigned long failures;
static pthread_once_t installed = PTHREAD_ONCE_INIT;

static void *counting_malloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		failures++;
	return p;
}

/* Values made before this with jansson's own allocator are malloc's too,
 * so they are freed the same way. */
static void install(void)
{
	json_set_alloc_funcs(counting_malloc, free);
}

static json_t *checked(json_t *v, unsigned long before, int *oom)
{
	*oom = failures != before;
	if (*oom) {
		json_decref(v);
		return NULL;
	}
	return v;
}

json_t *kj__json_loadb(const char *buf, size_t len, size_t flags, json_error_t *je, int *oom)
{
	unsigned long before;

	pthread_once(&installed, install);
	before = failures;
	return checked(json_loadb(buf, len, flags, je), before, oom);
}

json_t *kj__json_load_file(const char *path, size_t flags, json_error_t *je, int *oom)
{
	unsigned long before;

	pthread_once(&installed, install);
	before = failures;
	return checked(json_load_file(path, flags, je), before, oom);
}
