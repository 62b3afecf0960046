/*
 * test_text.c - text shown to a person (lib/base/text.c, kj__text_shown
 * and kj__buf_add_shown): every control a terminal obeys is an escape,
 * everything else is as it was, and a form cut to its buffer is cut on an
 * escape's or a character's boundary.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "base/text.h"

/* The form of s (len bytes) through the buffer, with flags. */
static char *shown(const char *s, size_t len, unsigned flags)
{
	struct kj__buf b;

	kj__buf_init(&b, 1u << 20);
	KJ_CHECK(kj__buf_add_shown(&b, s, len, flags) == 0);
	return kj__buf_take(&b);
}

/* No byte a terminal obeys: C0 (but what flags keep), DEL, C1 as UTF-8,
 * and nothing that is not UTF-8. */
static int terminal_safe(const char *s, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p; p++) {
		if ((*p < 0x20 && !((flags & KJ__SHOWN_LINES) && (*p == '\n' || *p == '\t'))) ||
		    *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
			return 0;
	}
	return 1;
}

KJ_TEST(text_shown_escapes_what_a_terminal_obeys)
{
	static const struct {
		const char *in, *out;
		size_t len;
		unsigned flags;
	} cases[] = {
#define CASE(in, out, flags) { in, out, sizeof(in) - 1, flags }
		CASE("model-a", "model-a", 0),
		/* ESC sequences, BEL, CR, LF, TAB, DEL. */
		CASE("\x1b[2J\x1b]0;pwned\x07" "x", "\\x1b[2J\\x1b]0;pwned\\x07x", 0),
		CASE("a\rb\nc\td\x7f", "a\\rb\\nc\\td\\u007f", 0),
		CASE("a\rb\nc\td", "a\\rb\nc\td", KJ__SHOWN_LINES),
		/* C1 as UTF-8 (U+009B, CSI), a C1 byte alone (not UTF-8), an
		 * overlong form, a cut character. */
		CASE("x\xc2\x9b" "31mred", "x\\u009b31mred", 0),
		CASE("x\x9b" "31m", "x\\x9b31m", 0),
		CASE("\xc0\xaf", "\\xc0\\xaf", 0),
		CASE("ab\xe2\x82", "ab\\xe2\\x82", 0),
		/* What is not a control stays: non-ASCII letters, U+00A0 and
		 * beyond, a backslash. */
		CASE("caf\xc3\xa9 \xe9\xaa\x8c\xe8\xaf\x81 \xc2\xa0\\",
		     "caf\xc3\xa9 \xe9\xaa\x8c\xe8\xaf\x81 \xc2\xa0\\", 0),
		/* A NUL in the middle of counted bytes. */
		CASE("a\0b", "a\\x00b", 0),
#undef CASE
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = shown(cases[i].in, cases[i].len, cases[i].flags);

		KJ_CHECK_STR(got, cases[i].out);
		KJ_CHECK(terminal_safe(got, cases[i].flags));
		free(got);
	}
	/* Every byte value, alone and after a lead byte: never a raw control. */
	for (i = 0; i < 256; i++) {
		char in[3] = { (char)i, 'x', 0 }, in2[3] = { (char)0xc2, (char)i, 0 };
		char *a = shown(in, 2, 0), *b = shown(in2, 2, 0);

		KJ_CHECK(terminal_safe(a, 0) && terminal_safe(b, 0));
		free(a);
		free(b);
	}
}

KJ_TEST(text_shown_into_a_buffer_is_cut_on_a_boundary)
{
	char buf[16];
	size_t size;

	KJ_CHECK_STR(kj__text_shown("m\x1b[31m", 0, buf, sizeof(buf)), "m\\x1b[31m");
	KJ_CHECK_STR(kj__text_shown(NULL, 0, buf, sizeof(buf)), "");
	/* Exactly full, and one byte more. */
	KJ_CHECK_STR(kj__text_shown("0123456789abcde", 0, buf, sizeof(buf)), "0123456789abcde");
	KJ_CHECK_STR(kj__text_shown("0123456789abcdef", 0, buf, sizeof(buf)), "0123456789ab...");
	/* An escape is never cut in two, nor a character. */
	for (size = 1; size <= sizeof(buf); size++) {
		char out[16];
		const char *p;

		kj__text_shown("ab\x1b\x1b\xc3\xa9\xc3\xa9\x1b\x1b\x1b\x1b", 0, out, size);
		KJ_CHECK(strlen(out) < size);
		KJ_CHECK(terminal_safe(out, 0));
		for (p = strchr(out, '\\'); p; p = strchr(p + 1, '\\'))
			KJ_CHECK(strncmp(p, "\\x1b", 4) == 0);
		KJ_CHECK(out[0] == '\0' || strncmp("ab\\x1b\\x1b\xc3\xa9\xc3\xa9", out,
						  strcspn(out, ".")) == 0);
	}
}
