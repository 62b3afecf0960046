/*
 * vec.h - growable arrays (kj__ internals, lib/base/vec.c).
 *
 * One place where an array's new size is computed, so that every array
 * has the same overflow checks: a count whose size in bytes would wrap
 * size_t, or pass PTRDIFF_MAX (the largest object whose pointers can
 * still be subtracted), is refused as out of memory before realloc is
 * called, and doubling a capacity never wraps.  On failure the array and
 * its capacity are as they were (still owned by the caller, contents
 * intact), the result is KJ_ENOMEM and errno is ENOMEM.
 *
 *   struct entry *v = NULL;
 *   size_t n = 0, cap = 0;
 *
 *   if (KJ__GROW(v, cap, n + 1) != KJ_OK)
 *           goto oom;                 (v still holds its n entries)
 *   v[n++] = e;
 *
 * Include it after the system headers, as internal.h.
 */
#ifndef KJ_BASE_VEC_H
#define KJ_BASE_VEC_H

#include <stddef.h>

#include "kjudge/error.h"

/*
 * Make *arrp (the address of an array pointer of any object type, NULL for
 * none yet; its items elem bytes each, *cap of them allocated) hold at
 * least need items: nothing when *cap is enough already, else the larger
 * of twice *cap, need and 16, within the limit above.  *arrp and *cap are
 * updated only on success.  elem must not be 0.
 */
int kj__grow(void *arrp, size_t *cap, size_t need, size_t elem);

/*
 * Reallocate *arrp to exactly n items of elem bytes (n == 0 keeps one
 * byte, never calls realloc with 0), with the same checks; *arrp changes
 * only on success.  For arrays that keep no capacity of their own.
 */
int kj__resize(void *arrp, size_t n, size_t elem);

/* The typed forms: v an lvalue array pointer, cap its size_t capacity; the
 * item size comes from v's type, so it cannot be given wrong. */
#define KJ__GROW(v, cap, need) kj__grow(&(v), &(cap), (need), sizeof(*(v)))
#define KJ__RESIZE(v, n) kj__resize(&(v), (n), sizeof(*(v)))

#endif /* KJ_BASE_VEC_H */
