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
 */
#include <errno.h>
#include <pthread.h>
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

static void *counting_malloc(size_t n)
{
	void *p = base_malloc(n);

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
	return checked((json_loadb)(buf, len, flags, je), before, oom);
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
