/*
 * unit.h - the unit-test harness.
 *
 * A test is a function declared with KJ_TEST(name); it registers itself at
 * start-up.  tests/unit/main.c runs every test in a child process with a time
 * limit, so a crash or a hang fails that test alone, and prints one closing
 * line "N passed, N failed".  Assertions print the file, line and the
 * failing expression, then end the child with status 1.
 *
 *   KJ_TEST(dtype_names) {
 *       KJ_CHECK(kj_dtype_from_name("half") == KJ_DTYPE_FLOAT16);
 *       KJ_CHECK_STR(kj_dtype_name(KJ_DTYPE_BOOL), "bool");
 *   }
 *
 * KJ_TMPDIR (a fresh directory per test, removed afterwards) is available
 * through kj_test_tmpdir(); KJ_TEST_DATA names tests/data.
 */
#ifndef KJ_UNIT_H
#define KJ_UNIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/error.h"

typedef void (*kj_test_fn)(void);

void kj_test_register(const char *name, kj_test_fn fn);
/* Per-test scratch directory (created before the test runs). */
const char *kj_test_tmpdir(void);
/* Path of `name` inside the scratch directory, in a static buffer that the
 * next call overwrites. */
const char *kj_test_path(const char *name);
/* The absolute path of a program of tests/helpers/, built beside the test
 * runner (static buffer); the test fails when it is not there. */
const char *kj_test_helper(const char *name);
void kj_test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));

#define KJ_TEST(name)                                                     \
	static void kj_test_##name(void);                                 \
	__attribute__((constructor)) static void kj_test_reg_##name(void) \
	{                                                                 \
		kj_test_register(#name, kj_test_##name);                  \
	}                                                                 \
	static void kj_test_##name(void)

#define KJ_CHECK(expr)                                                    \
	do {                                                              \
		if (!(expr))                                              \
			kj_test_fail(__FILE__, __LINE__, "%s", #expr);    \
	} while (0)

#define KJ_CHECK_INT(a, b)                                                \
	do {                                                              \
		long long kj__a = (long long)(a), kj__b = (long long)(b); \
		if (kj__a != kj__b)                                       \
			kj_test_fail(__FILE__, __LINE__,                  \
				     "%s == %s (%lld != %lld)", #a, #b,   \
				     kj__a, kj__b);                       \
	} while (0)

#define KJ_CHECK_STR(a, b)                                                \
	do {                                                              \
		const char *kj__a = (a), *kj__b = (b);                    \
		if (!kj__a || !kj__b || strcmp(kj__a, kj__b) != 0)        \
			kj_test_fail(__FILE__, __LINE__,                  \
				     "%s == %s (\"%s\" != \"%s\")", #a,   \
				     #b, kj__a ? kj__a : "(null)",        \
				     kj__b ? kj__b : "(null)");           \
	} while (0)

/* Expect an int-returning library call to succeed; print its message if not. */
#define KJ_CHECK_OK(call, errp)                                           \
	do {                                                              \
		const struct kj_error *kj__e = (errp);                    \
		int kj__rc = (call);                                      \
		if (kj__rc != 0)                                          \
			kj_test_fail(__FILE__, __LINE__,                  \
				     "%s failed: %d (%s)", #call, kj__rc, \
				     kj__e ? kj__e->msg : "");            \
	} while (0)

/* The first column of a store query's first row as an integer, -1 when
 * it has no row (store_query.c); a query that does not prepare fails the
 * test. */
struct kj_store;
long long kj_test_store_int(struct kj_store *s, const char *sql);

#endif /* KJ_UNIT_H */
