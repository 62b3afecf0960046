/*
 * kjudge/jschema.h - JSON read strictly, and JSON Schema (draft-07) checked.
 *
 * Two parts, both for files an outsider writes (suite specs, manifests,
 * pair contracts), so both fail closed:
 *
 *   kj_jsonx_*    a strict JSON reader (lib/spec/jsonx.c).  It builds
 *                 jansson values but parses the text itself, so that every
 *                 rejection names the file, line and column where the bad
 *                 token starts: duplicate keys, NaN and Infinity, integers
 *                 beyond int64, reals beyond binary64 or that underflow to
 *                 zero, invalid UTF-8, unpaired surrogates, trailing
 *                 garbage, and (on request) a top level that is not an
 *                 object.  JSONL (one value a line) goes through the same
 *                 parser, each bad line named by its number.
 *   kj_jschema_*  a draft-07 validator (lib/spec/jschema.c): a schema is
 *                 compiled once (every keyword checked, regexes compiled,
 *                 $refs resolved) and then checks any number of instances,
 *                 collecting all errors in a stable order.
 *
 * docs/jschema.md says what is supported and which choices were made
 * (format is an annotation, unknown keywords are errors, the regex dialect).
 *
 * Ownership, for the whole header: a json_t ** out-parameter receives a new
 * reference the caller releases with json_decref (NULL on error); a
 * json_t * parameter is borrowed.  A compiled schema holds its own
 * reference to the document it was compiled from; kj_jschema_free releases
 * it all.  Errors fill a caller-owned struct kj_error (which may be NULL).
 */
#ifndef KJUDGE_JSCHEMA_H
#define KJUDGE_JSCHEMA_H

#include <stddef.h>

#include <jansson.h>

#include "kjudge/error.h"

/* --- strict JSON ---------------------------------------------------------- */

/* Flags of kj_jsonx_load*. */
enum kj_jsonx_flag {
	/* The top-level value must be an object ("expected an object"). */
	KJ_JSONX_OBJECT = 1u << 0,
	/* Strings may hold U+0000 (escaped as \u0000).  Off by default: a name
	 * or a path read later through json_string_value would be cut short
	 * silently at the NUL. */
	KJ_JSONX_ALLOW_NUL = 1u << 1,
};

/* Deepest nesting of arrays and objects accepted (deeper: an error, never a
 * stack overflow). */
#define KJ_JSONX_MAX_DEPTH 512

/*
 * Parse len bytes of buf as one JSON text.  `name` is what messages call
 * the source (a file's path; "<buffer>" when NULL).  On success *out is a
 * new reference and KJ_OK is returned.  On error *out is NULL and the code
 * is KJ_EJSON (the text is not acceptable JSON) or KJ_ENOMEM; err->msg reads
 * "NAME:LINE:COL: MESSAGE", line and column 1-based, the column counted in
 * code points, pointing at the first character of the offending token (for
 * a duplicate key: the second occurrence of the key).
 */
int kj_jsonx_loadb(const char *buf, size_t len, const char *name, unsigned flags,
		   json_t **out, struct kj_error *err);

/*
 * The same for the file at path (read whole; files over KJ_JSONX_MAX_FILE
 * bytes are refused with KJ_ELIMIT).  A file that cannot be read gives the
 * errno's code (KJ_ENOENT, KJ_EACCES, KJ_EIO) and "'PATH': reason".
 */
int kj_jsonx_load_file(const char *path, unsigned flags, json_t **out, struct kj_error *err);

#define KJ_JSONX_MAX_FILE (64u << 20)

/*
 * JSONL: one JSON value per line (LF; a CR before the LF is allowed and
 * dropped).  Lines that are empty or hold only spaces and tabs are skipped,
 * as ParBench's manifest reader skips them, and do not count as records;
 * every other line must be one whole JSON text (with KJ_JSONX_OBJECT: an
 * object).  For each record, fn is called with its 1-based line number and
 * either the value (borrowed: fn takes its own reference to keep it) and
 * bad == NULL, or value == NULL and bad filled ("NAME:LINE:COL: ...", the
 * line's own number), so that one bad line does not hide the next.  A
 * nonzero return from fn stops the reading and is returned.  Otherwise
 * the result is KJ_OK when every line parsed, KJ_EJSON when some did not
 * (err then holds the first bad line's message), or an error of reading
 * the file (before any call of fn).  A file that does not end in a newline
 * is accepted.
 */
typedef int (*kj_jsonl_fn)(void *ctx, size_t line, json_t *value, const struct kj_error *bad);
int kj_jsonl_loadb(const char *buf, size_t len, const char *name, unsigned flags,
		   kj_jsonl_fn fn, void *ctx, struct kj_error *err);
int kj_jsonl_load_file(const char *path, unsigned flags, kj_jsonl_fn fn, void *ctx,
		       struct kj_error *err);

/* --- JSON Schema draft-07 ------------------------------------------------- */

struct kj_jschema;

/*
 * Compile a draft-07 schema (an object or a boolean).  `name` is used in
 * messages ("<schema>" when NULL).  On success *out is a new validator that
 * kj_jschema_free releases; it keeps its own reference to doc.  On error
 * *out is NULL and the code is KJ_ESCHEMA with a message naming the
 * keyword's place in the schema as a JSON pointer, e.g.
 *   "spec_schema.json: #/properties/run/minItems: expected a non-negative
 *    integer" or "...: #/propertees: unknown keyword 'propertees'"
 * (remote $refs: "...: #/properties/x/$ref: remote reference
 * 'http://...' is not supported"), or KJ_ENOMEM.  Thread-safe: a compiled
 * schema may check instances from several threads at once.
 */
int kj_jschema_compile(const json_t *doc, const char *name, struct kj_jschema **out,
		       struct kj_error *err);
void kj_jschema_free(struct kj_jschema *s);

/* One failed check. */
struct kj_jschema_error {
	char *path;     /* the instance's place: "(root)", "a.b[2].c", "a['x y']" */
	char *message;  /* e.g. "'x' is not one of ['p', 'q']" */
};

/* All the failed checks of one instance, sorted by path (keys in order,
 * indexes numerically), then in the schema's order. */
struct kj_jschema_result {
	struct kj_jschema_error *errors;
	size_t n;
	int truncated;  /* more errors than the cap were found; n == cap */
};

/* Default cap on the errors collected for one instance. */
#define KJ_JSCHEMA_MAX_ERRORS 100

/*
 * Check instance against s, collecting at most max_errors errors (0: the
 * default cap).  Returns KJ_OK with res->n == 0 when the instance is valid,
 * KJ_OK with res->n > 0 when it is not (a failed check is data, not a
 * judge error), KJ_ENOMEM when memory ran out (res is then empty).  res is
 * caller-owned; kj_jschema_result_release frees what it holds and leaves it
 * empty (safe on an empty or zeroed one).
 */
int kj_jschema_validate(const struct kj_jschema *s, const json_t *instance, size_t max_errors,
			struct kj_jschema_result *res, struct kj_error *err);
void kj_jschema_result_release(struct kj_jschema_result *res);

/* Whether instance is valid, without collecting messages (the fast path;
 * returns 1, 0, or KJ_ENOMEM). */
int kj_jschema_is_valid(const struct kj_jschema *s, const json_t *instance);

#endif /* KJUDGE_JSCHEMA_H */
