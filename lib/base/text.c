/*
 * text.c - UTF-8 cleaning and cutting of untrusted text, and the bounded
 * buffer (see text.h).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "base/vec.h"
#include "base/internal.h"

/* U+FFFD REPLACEMENT CHARACTER in UTF-8. */
static const char replacement[] = "\xef\xbf\xbd";

/*
 * Length of the valid UTF-8 sequence at p (at most `left` bytes), or 0 when
 * the bytes there do not start one.  NUL is not valid here: a C string
 * cannot carry it and jansson would cut at it.
 */
static size_t seq_len(const unsigned char *p, size_t left)
{
	unsigned c = p[0];
	size_t n, i;
	uint32_t cp;

	if (c == 0)
		return 0;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if (left < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	/* Overlong forms, surrogates and code points past U+10FFFF. */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

int kj__utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		size_t n = seq_len(p + i, len - i);

		if (!n)
			return 0;
		i += n;
	}
	return 1;
}

size_t kj__utf8_prefix(const char *s, size_t len, size_t max)
{
	size_t n = len < max ? len : max;

	/* Back off continuation bytes: the cut must not split a character. */
	while (n > 0 && n < len && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

size_t kj__first_line(const char *s, size_t max)
{
	const char *nl = s ? strchr(s, '\n') : NULL;
	size_t len = s ? (nl ? (size_t)(nl - s) : strlen(s)) : 0;

	return kj__utf8_prefix(s, len, max);
}

/* s[0..len) cleaned into a new string (no length limit). */
static char *clean_all(const char *s, size_t len, size_t *out_len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0, cap;
	char *out;

	/* Each invalid byte grows to three. */
	if (len > (SIZE_MAX - 1) / 3)
		return NULL;
	cap = len + 1;
	for (i = 0; i < len;) {
		size_t n = seq_len(p + i, len - i);

		if (!n) {
			cap += 2;
			n = 1;
		}
		i += n;
	}
	out = malloc(cap);
	if (!out)
		return NULL;
	for (i = 0; i < len;) {
		size_t n = seq_len(p + i, len - i);

		if (n) {
			memcpy(out + o, p + i, n);
			o += n;
			i += n;
		} else {
			memcpy(out + o, replacement, 3);
			o += 3;
			i++;
		}
	}
	out[o] = '\0';
	*out_len = o;
	return out;
}

char *kj__text_brief(const char *s, size_t max, char *buf, size_t size)
{
	size_t len = s ? strlen(s) : 0, clen = 0, n;
	char *c = clean_all(len ? s : "", len, &clen);

	if (!c) {
		snprintf(buf, size, "?");
		return buf;
	}
	n = kj__utf8_prefix(c, clen, max);
	snprintf(buf, size, "%.*s%s", (int)n, c, n < clen ? "..." : "");
	free(c);
	return buf;
}

char *kj__text_clean(const char *s, size_t len, size_t max)
{
	size_t clen = 0, head, tail_start;
	char *c = clean_all(len ? s : "", len, &clen), *out;
	int n;

	if (!c || clen <= max)
		return c;
	head = kj__utf8_prefix(c, clen, max / 2);
	/* The tail starts on a character boundary: skip continuation bytes. */
	tail_start = clen - max / 2;
	while (tail_start < clen && ((unsigned char)c[tail_start] & 0xc0) == 0x80)
		tail_start++;
	n = asprintf(&out, "%.*s\n... [truncated %zu bytes] ...\n%s", (int)head, c,
		     clen - head - (clen - tail_start), c + tail_start);
	free(c);
	return n < 0 ? NULL : out;
}

char *kj__text_cleans(const char *s, size_t max)
{
	return kj__text_clean(s, s ? strlen(s) : 0, max);
}

/* --- text shown to a person --------------------------------------------------------- */

/*
 * The form of the character at p (left bytes): *rep gets its escape and the
 * escape's length is returned, or 0 when it is shown as it is; *used gets
 * the bytes it took (a whole valid character, else one byte).
 */
static size_t shown_char(const unsigned char *p, size_t left, unsigned flags, char rep[8],
			 size_t *used)
{
	size_t n = seq_len(p, left);

	*used = n ? n : 1;
	if (!n) {
		/* Not UTF-8 (NUL included: a C string stops before it). */
		return (size_t)snprintf(rep, 8, "\\x%02x", p[0]);
	}
	if (p[0] < 0x20) {
		if ((p[0] == '\n' || p[0] == '\t') && (flags & KJ__SHOWN_LINES))
			return 0;
		if (p[0] == '\n')
			return (size_t)snprintf(rep, 8, "\\n");
		if (p[0] == '\r')
			return (size_t)snprintf(rep, 8, "\\r");
		if (p[0] == '\t')
			return (size_t)snprintf(rep, 8, "\\t");
		return (size_t)snprintf(rep, 8, "\\x%02x", p[0]);
	}
	if (p[0] == 0x7f)
		return (size_t)snprintf(rep, 8, "\\u007f");
	/* U+0080 to U+009F: 0xc2 0x80 to 0xc2 0x9f. */
	if (n == 2 && p[0] == 0xc2 && p[1] <= 0x9f)
		return (size_t)snprintf(rep, 8, "\\u%04x", p[1]);
	return 0;
}

int kj__buf_add_shown(struct kj__buf *b, const char *s, size_t len, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0;

	while (i < len) {
		char rep[8];
		size_t used, r = shown_char(p + i, len - i, flags, rep, &used);

		if (r) {
			if (kj__buf_add(b, p + run, i - run) < 0 || kj__buf_add(b, rep, r) < 0)
				return -1;
			run = i + used;
		}
		i += used;
	}
	return kj__buf_add(b, p + run, len - run);
}

char *kj__text_shown(const char *s, unsigned flags, char *buf, size_t size)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t len = strlen((const char *)p), i, o = 0, whole = 0;
	char rep[8];

	if (!size)
		return buf;
	/* The whole form's length first: cut only what does not fit. */
	for (i = 0; i < len;) {
		size_t used, r = shown_char(p + i, len - i, flags, rep, &used);

		whole += r ? r : used;
		i += used;
	}
	for (i = 0; i < len;) {
		size_t used, r = shown_char(p + i, len - i, flags, rep, &used);
		size_t w = r ? r : used;

		/* Cut: room kept for "..." and the NUL. */
		if (whole + 1 > size && o + w + 4 > size) {
			snprintf(buf + o, size - o, "%s", size - o > 3 ? "..." : "");
			return buf;
		}
		memcpy(buf + o, r ? rep : (const char *)p + i, w);
		o += w;
		i += used;
	}
	buf[o] = '\0';
	return buf;
}

/* --- the bounded buffer ----------------------------------------------------------- */

void kj__buf_init(struct kj__buf *b, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
}

int kj__buf_add(struct kj__buf *b, const void *p, size_t n)
{
	size_t take = b->max - b->len < n ? b->max - b->len : n;

	if (b->len + take + 1 > b->cap) {
		/* Doubled, but never past the bound: the buffer holds at most
		 * max bytes and its NUL. */
		if (b->cap > b->max / 2) {
			if (KJ__RESIZE(b->data, b->max + 1) != KJ_OK)
				return -1;
			b->cap = b->max + 1;
		} else if (KJ__GROW(b->data, b->cap, b->len + take + 1) != KJ_OK) {
			return -1;
		}
	}
	if (take)
		memcpy(b->data + b->len, p, take);
	b->len += take;
	b->data[b->len] = '\0';
	b->dropped += n - take;
	return 0;
}

int kj__buf_vaddf(struct kj__buf *b, const char *fmt, va_list ap)
{
	char small[512], *big = NULL;
	va_list ap2;
	int n, rc;

	va_copy(ap2, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return -1;
	if ((size_t)n < sizeof(small))
		return kj__buf_add(b, small, (size_t)n);
	if (vasprintf(&big, fmt, ap) < 0)
		return -1;
	rc = kj__buf_add(b, big, (size_t)n);
	free(big);
	return rc;
}

int kj__buf_addf(struct kj__buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = kj__buf_vaddf(b, fmt, ap);
	va_end(ap);
	return rc;
}

char *kj__buf_take(struct kj__buf *b)
{
	char *s = b->data;

	if (!s)
		s = strdup("");
	kj__buf_init(b, b->max);
	return s;
}

void kj__buf_release(struct kj__buf *b)
{
	free(b->data);
	kj__buf_init(b, b->max);
}
