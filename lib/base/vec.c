/*
 * vec.c - growable arrays (see vec.h).
 *
 * The array pointer is read and written through memcpy: the caller's
 * pointer has its own type (struct entry *, char **...), and going through
 * a void ** lvalue instead would access it as an object of another type.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "base/internal.h"

/* The smallest capacity a growing array gets, so that an array filled one
 * item at a time does not reallocate for each of its first few. */
#define GROW_MIN 16

static int no_memory(void)
{
	errno = ENOMEM;
	return KJ_ENOMEM;
}

/* The most items of elem bytes one array may hold (0 for elem 0). */
static size_t max_items(size_t elem)
{
	return elem ? (size_t)PTRDIFF_MAX / elem : 0;
}

int kj__resize(void *arrp, size_t n, size_t elem)
{
	void *old, *p;

	if (n > max_items(elem))
		return no_memory();
	memcpy(&old, arrp, sizeof(old));
	p = realloc(old, n ? n * elem : 1);
	if (!p)
		return no_memory();
	memcpy(arrp, &p, sizeof(p));
	return KJ_OK;
}

int kj__grow(void *arrp, size_t *cap, size_t need, size_t elem)
{
	size_t limit = max_items(elem), ncap;
	int rc;

	if (need <= *cap)
		return KJ_OK;
	if (need > limit)
		return no_memory();
	/* *cap < need <= limit here, so twice *cap is computed only when it
	 * cannot pass limit (nor wrap). */
	ncap = *cap > limit / 2 ? limit : 2 * *cap;
	if (ncap < need)
		ncap = need;
	if (ncap < GROW_MIN)
		ncap = GROW_MIN < limit ? GROW_MIN : limit;
	rc = kj__resize(arrp, ncap, elem);
	if (rc == KJ_OK)
		*cap = ncap;
	return rc;
}
