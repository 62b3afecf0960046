/*
 * text.h - text from untrusted sources made safe to store, and a bounded
 * buffer (kj__ internals, lib/base/text.c).
 *
 * Everything a worker sends (messages, tracebacks, captured stdout and
 * stderr, names) ends up in JSON records, and jansson refuses strings that
 * are not valid UTF-8: a record that cannot be built must never be mistaken
 * for a verdict.  So every such text passes through kj__text_clean() before
 * it is stored: invalid bytes become U+FFFD, NUL bytes too, and the text is
 * cut on character boundaries, never inside one.
 *
 * Include it after the system headers, as internal.h.
 */
#ifndef KJ_BASE_TEXT_H
#define KJ_BASE_TEXT_H

#include <stdarg.h>
#include <stddef.h>

/*
 * A copy of s[0..len) that is valid UTF-8 and at most about `max` bytes:
 * invalid sequences, surrogates, overlong forms and NUL bytes each become
 * U+FFFD.  When the cleaned text is longer than max, its first and last
 * max/2 bytes (cut on character boundaries) are kept around a line
 * "... [truncated N bytes] ..." (verify.py's form, counted in bytes).  s
 * may be NULL when len is 0.  Returns a new NUL-terminated string the caller
 * frees, or NULL when out of memory.
 */
char *kj__text_clean(const char *s, size_t len, size_t max);

/* The same for a NUL-terminated string; NULL gives "". */
char *kj__text_cleans(const char *s, size_t max);

/* 1 when s[0..len) is valid UTF-8 without NUL bytes, else 0. */
int kj__utf8_valid(const char *s, size_t len);

/* The largest n <= len, n <= max, such that s[0..n) ends on a UTF-8
 * character boundary (s is assumed valid UTF-8). */
size_t kj__utf8_prefix(const char *s, size_t len, size_t max);

/* The first line of s (up to '\n' or the end), at most max bytes, cut on a
 * character boundary: its length in bytes. */
size_t kj__first_line(const char *s, size_t max);

/* s (NULL: "") made valid UTF-8 as kj__text_clean makes it, and cut on a
 * character boundary to at most max bytes, "..." added where it was cut:
 * a name short enough for a one-line message.  Written into buf (cut to
 * size; "?" when out of memory); returns buf. */
char *kj__text_brief(const char *s, size_t max, char *buf, size_t size);

/*
 * Text shown to a person (a terminal, a log, a report), from a study, a
 * generations file, a candidate: every byte that could move the cursor,
 * set colours, retitle the window or speak to the terminal is written as
 * an escape, and nothing else changes.
 *   - C0 controls: \n, \r, \t as such, the others as \xNN (ESC: \x1b);
 *     with KJ__SHOWN_LINES, '\n' and '\t' are kept (a block of lines);
 *   - DEL and the C1 controls (U+0080 to U+009F, which some terminals obey
 *     as ESC [): \u007f, \u0080 ... \u009f;
 *   - a byte that does not start a valid UTF-8 character: \xNN.
 * A backslash is not doubled: the form is for eyes, not to be read back.
 * For JSON text (jansson escapes C0 itself, and writes valid UTF-8) the
 * result is valid JSON of the same value.
 *
 * kj__buf_add_shown appends the form of s[0..len) to b (0, or -1 when out
 * of memory).  kj__text_shown writes the form of the NUL-terminated s
 * (NULL: "") into buf, cut on an escape's or a character's boundary with
 * "..." when it does not fit; it returns buf.
 */
#define KJ__SHOWN_LINES 1u

struct kj__buf;
int kj__buf_add_shown(struct kj__buf *b, const char *s, size_t len, unsigned flags);
char *kj__text_shown(const char *s, unsigned flags, char *buf, size_t size);

/*
 * A growable string with a hard maximum, for anything of untrusted size.
 * data is always NUL-terminated (once anything was added); bytes past max
 * are counted in `dropped`, never stored.  Caller-owned; kj__buf_release
 * frees data.
 */
struct kj__buf {
	char *data;
	size_t len, cap, max;
	size_t dropped;
};

void kj__buf_init(struct kj__buf *b, size_t max);
/* Append n bytes (up to the maximum).  0, or -1 when out of memory (b then
 * holds what it held before). */
int kj__buf_add(struct kj__buf *b, const void *p, size_t n);
int kj__buf_addf(struct kj__buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int kj__buf_vaddf(struct kj__buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* Hand the string over (the caller frees it; "" when nothing was added, or
 * NULL when out of memory); b is empty afterwards. */
char *kj__buf_take(struct kj__buf *b);
void kj__buf_release(struct kj__buf *b);

#endif /* KJ_BASE_TEXT_H */
