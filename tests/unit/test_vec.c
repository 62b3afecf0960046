/*
 * test_vec.c - growable arrays (lib/base/vec.c): an array grows to what is
 * asked and keeps its items; a count whose size would wrap size_t or pass
 * PTRDIFF_MAX is refused before anything is allocated; and an allocation
 * that really fails (the machine cannot map PTRDIFF_MAX bytes) leaves the
 * array, its items and its capacity as they were.
 *
 * The sanitizers' allocators abort on such a request unless told to return
 * NULL as libc does: main.c's __asan_default_options and
 * __tsan_default_options tell them so.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "base/vec.h"

struct item {
	long a;
	char b[24];
};

KJ_TEST(vec_grow_keeps_items_and_doubles)
{
	struct item *v = NULL;
	size_t n, cap = 0, grows = 0, last = 0;

	for (n = 0; n < 1000; n++) {
		KJ_CHECK_INT(KJ__GROW(v, cap, n + 1), KJ_OK);
		KJ_CHECK(cap >= n + 1);
		if (cap != last) {
			grows++;
			last = cap;
		}
		v[n].a = (long)n;
		snprintf(v[n].b, sizeof(v[n].b), "item %zu", n);
	}
	/* 16, 32, ..., 1024: one reallocation per doubling, not per item. */
	KJ_CHECK_INT(cap, 1024);
	KJ_CHECK_INT(grows, 7);
	for (n = 0; n < 1000; n++) {
		char want[24];

		snprintf(want, sizeof(want), "item %zu", n);
		KJ_CHECK_INT(v[n].a, (long)n);
		KJ_CHECK_STR(v[n].b, want);
	}
	/* Enough room already: nothing moves. */
	{
		struct item *before = v;

		KJ_CHECK_INT(KJ__GROW(v, cap, 10), KJ_OK);
		KJ_CHECK(v == before);
		KJ_CHECK_INT(cap, 1024);
	}
	/* A jump past twice the capacity gets what was asked. */
	KJ_CHECK_INT(KJ__GROW(v, cap, 5000), KJ_OK);
	KJ_CHECK_INT(cap, 5000);
	KJ_CHECK_INT(v[999].a, 999);
	free(v);
}

KJ_TEST(vec_resize_exact)
{
	int *v = NULL;
	size_t i;

	for (i = 0; i < 100; i++) {
		KJ_CHECK_INT(KJ__RESIZE(v, i + 1), KJ_OK);
		v[i] = (int)i * 3;
	}
	for (i = 0; i < 100; i++)
		KJ_CHECK_INT(v[i], (int)i * 3);
	/* Zero items is a valid (one-byte) allocation, not realloc(p, 0). */
	KJ_CHECK_INT(KJ__RESIZE(v, 0), KJ_OK);
	KJ_CHECK(v != NULL);
	free(v);
}

/* Fill v (n items of 8 bytes) with a pattern and check it is intact. */
static void fill(uint64_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = 0x1234567800000000u + i;
}

static void still_there(const uint64_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		KJ_CHECK(v[i] == 0x1234567800000000u + i);
}

KJ_TEST(vec_overflow_refused_array_intact)
{
	uint64_t *v = NULL, *before;
	size_t cap = 0, fake;
	const size_t elem = sizeof(*v);

	KJ_CHECK_INT(KJ__GROW(v, cap, 40), KJ_OK);
	fill(v, 40);
	before = v;

	/* need * elem wraps size_t: refused, not a small allocation. */
	errno = 0;
	KJ_CHECK_INT(KJ__GROW(v, cap, SIZE_MAX / elem + 1), KJ_ENOMEM);
	KJ_CHECK_INT(errno, ENOMEM);
	KJ_CHECK(v == before);
	KJ_CHECK_INT(cap, 40);
	KJ_CHECK_INT(KJ__GROW(v, cap, SIZE_MAX), KJ_ENOMEM);
	KJ_CHECK_INT(KJ__RESIZE(v, SIZE_MAX / elem + 1), KJ_ENOMEM);
	KJ_CHECK_INT(KJ__RESIZE(v, SIZE_MAX / 2), KJ_ENOMEM);
	/* Past PTRDIFF_MAX bytes without wrapping: refused too. */
	KJ_CHECK_INT(KJ__GROW(v, cap, (size_t)PTRDIFF_MAX / elem + 1), KJ_ENOMEM);
	/* A capacity whose double would wrap: refused, not doubled to a
	 * small number (the array is the real 40 items; only the capacity
	 * says more). */
	fake = SIZE_MAX / 2 + 1;
	KJ_CHECK_INT(KJ__GROW(v, fake, fake + 1), KJ_ENOMEM);
	KJ_CHECK(fake == SIZE_MAX / 2 + 1);
	KJ_CHECK(v == before);
	KJ_CHECK_INT(cap, 40);
	still_there(v, 40);
	/* ... and the array still grows afterwards. */
	KJ_CHECK_INT(KJ__GROW(v, cap, 41), KJ_OK);
	KJ_CHECK_INT(cap, 80);
	still_there(v, 40);
	free(v);
}

KJ_TEST(vec_failed_allocation_keeps_array)
{
	uint64_t *v = NULL, *before;
	size_t cap = 0, fake;
	const size_t elem = sizeof(*v);

	KJ_CHECK_INT(KJ__GROW(v, cap, 100), KJ_OK);
	fill(v, 100);
	before = v;
	/* Within every check, so realloc is called, and it fails: no
	 * machine maps PTRDIFF_MAX bytes. */
	errno = 0;
	KJ_CHECK_INT(KJ__GROW(v, cap, (size_t)PTRDIFF_MAX / elem), KJ_ENOMEM);
	KJ_CHECK_INT(errno, ENOMEM);
	KJ_CHECK(v == before);
	KJ_CHECK_INT(cap, 100);
	still_there(v, 100);
	/* A capacity past half the limit grows to the limit (not to a
	 * wrapped double), and that allocation fails the same way. */
	fake = (size_t)PTRDIFF_MAX / elem / 2 + 1;
	KJ_CHECK_INT(KJ__GROW(v, fake, fake + 1), KJ_ENOMEM);
	KJ_CHECK(fake == (size_t)PTRDIFF_MAX / elem / 2 + 1);
	KJ_CHECK_INT(KJ__RESIZE(v, (size_t)PTRDIFF_MAX / elem), KJ_ENOMEM);
	KJ_CHECK(v == before);
	still_there(v, 100);
	free(v);
}
