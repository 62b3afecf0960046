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
 *
 * Its encoder does the same: when an allocation fails while it dumps a
 * key (2.14), the key's bytes are dropped and it goes on, returning a text
 * that is not the value's ("{\"version\":1,\":[..." for "outputs"), which
 * a record or a request would carry.  So a dump is counted the same way,
 * and one during which an allocation failed is out of memory too.  The
 * rest of kjudge calls these, never jansson's own (base/banned.h).
 *
 * A byte the lexer drops is worse than a wrong value: a string token whose
 * closing quote was the dropped byte is then decoded past its end, a heap
 * overflow, and an unget after a dropped byte fails an assertion that
 * aborts (load.c, 2.14; both reached by failing one allocation of a parse,
 * tests/unit/test_json.c).  So jansson's lexer never sees a failed
 * allocation: each parse sets aside a reserve first (none: out of memory,
 * before jansson runs), a failed allocation during the parse is counted
 * and served from it, and the text is fed in small pieces, the first after
 * a failure refused, so that jansson stops within one piece of it and the
 * reserve covers what it allocates until then.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kjudge/fileio.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/text.h"
#include "base/internal.h"

/* Allocations of this thread's jansson calls that failed, ever. */
static _Thread_local unsigned long failures;
static pthread_once_t installed = PTHREAD_ONCE_INIT;

/* The allocator under the count: malloc, or what a test puts there. */
static void *(*_Atomic base_malloc)(size_t) = malloc;

/* This thread's parse's reserve (above): a bump allocator whose blocks
 * free() leaves alone; none outside a parse. */
static _Thread_local char *reserve;
static _Thread_local size_t reserve_cap, reserve_used;

/* The text a parse feeds jansson in pieces of this many bytes. */
#define PIECE 256
/* What a parse sets aside: what jansson allocates while it finishes the
 * piece it is in (a token's buffer doubled, its decoded copy and value,
 * the values of one piece), for a text of len bytes. */
#define RESERVE_BASE ((size_t)64 << 10)
#define RESERVE(len) (4 * (len) + RESERVE_BASE)

static void *counting_malloc(size_t n)
{
	void *p = base_malloc(n);
	size_t at = (reserve_used + 15) & ~(size_t)15;

	if (p)
		return p;
	failures++;
	if (!reserve || n > reserve_cap || at > reserve_cap - n)
		return NULL;
	reserve_used = at + n;
	return reserve + at;
}

static void counting_free(void *p)
{
	if (reserve && (char *)p >= reserve && (char *)p < reserve + reserve_cap)
		return;
	free(p);
}

/* Values made before this with jansson's own allocator are malloc's too,
 * so they are freed the same way. */
static void install(void)
{
	json_set_alloc_funcs(counting_malloc, counting_free);
}

/* The text, a piece at a time, none once an allocation failed. */
struct feed {
	const char *buf;
	size_t len, at;
	unsigned long before;
};

static size_t feed_piece(void *out, size_t cap, void *arg)
{
	struct feed *f = arg;
	size_t n = f->len - f->at;

	if (failures != f->before)
		return (size_t)-1;
	if (n > cap)
		n = cap;
	if (n > PIECE)
		n = PIECE;
	memcpy(out, f->buf + f->at, n);
	f->at += n;
	return n;
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
	struct feed f = { buf, len, 0, 0 };
	json_t *v;

	pthread_once(&installed, install);
	if (len > (SIZE_MAX - RESERVE_BASE) / 4 || !(reserve = base_malloc(RESERVE(len)))) {
		if (je) {
			memset(je, 0, sizeof(*je));
			je->line = je->column = -1;
			snprintf(je->text, sizeof(je->text) - 1, "out of memory");
			je->text[sizeof(je->text) - 1] = (char)json_error_out_of_memory;
		}
		*oom = 1;
		return NULL;
	}
	reserve_cap = RESERVE(len);
	reserve_used = 0;
	f.before = failures;
	v = checked((json_load_callback)(feed_piece, &f, flags, je), f.before, oom);
	free(reserve);
	reserve = NULL;
	reserve_cap = reserve_used = 0;
	return v;
}

json_t *kj__json_load_file(const char *path, size_t flags, json_error_t *je, int *oom)
{
	struct kj_error e;
	size_t len = 0;
	char *buf = kj__read_file(path, KJ__JSON_MAX_FILE, &len, &e);
	json_t *v;

	if (!buf) {
		*oom = e.code == KJ_ENOMEM;
		if (je) {
			memset(je, 0, sizeof(*je));
			je->line = je->column = -1;
			snprintf(je->source, sizeof(je->source), "%s", path);
			snprintf(je->text, sizeof(je->text) - 1, "%.*s",
				 (int)sizeof(je->text) - 2, e.msg);
			/* Where jansson keeps the code (json_error_code). */
			je->text[sizeof(je->text) - 1] = (char)json_error_cannot_open_file;
		}
		errno = e.code == KJ_ENOENT ? ENOENT : EIO;
		return NULL;
	}
	v = kj__json_loadb(buf, len, flags, je, oom);
	free(buf);
	return v;
}

void kj__json_set_malloc(void *(*fn)(size_t))
{
	pthread_once(&installed, install);
	base_malloc = fn ? fn : malloc;
}

char *kj__json_dumps(const json_t *v, size_t flags, int *oom)
{
	unsigned long before;
	char *text;

	pthread_once(&installed, install);
	before = failures;
	text = (json_dumps)(v, flags);
	*oom = failures != before;
	if (*oom) {
		free(text);
		return NULL;
	}
	return text;
}

char *kj_json_text(const json_t *v, size_t flags, struct kj_error *err)
{
	int oom;
	char *text = kj__json_dumps(v, flags, &oom);

	if (!text)
		kj_error_set(err, oom ? KJ_ENOMEM : KJ_EINVAL, oom ? "out of memory"
			     : "the value cannot be written as JSON");
	return text;
}

int kj_json_print(FILE *f, const json_t *v, size_t flags, struct kj_error *err)
{
	char *text = kj_json_text(v, flags, err);
	struct kj__buf b;
	int bad;

	if (!text)
		return err ? err->code : KJ_ENOMEM;
	/* A stream is what a terminal shows: jansson escapes C0 itself, DEL
	 * and the C1 controls become \u escapes (the same value). */
	kj__buf_init(&b, (size_t)-1 / 2);
	bad = kj__buf_add_shown(&b, text, strlen(text), KJ__SHOWN_LINES);
	free(text);
	if (bad) {
		kj__buf_release(&b);
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	bad = b.len && fwrite(b.data, 1, b.len, f) != b.len;
	kj__buf_release(&b);
	if (bad)
		return kj_error_set(err, KJ_EIO, "cannot write the JSON out");
	return KJ_OK;
}
