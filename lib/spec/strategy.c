/*
 * strategy.c - the verification strategies of a spec: read strictly, then
 * evaluated on what the program left (its exit, its stdout, its files).
 *
 * Regexes are PCRE2's, compiled in the mode closest to Python's re on str
 * (ParBench's): UTF-8 with Unicode properties for \d, \w, \s and case
 * folding (PCRE2_UTF | PCRE2_UCP), a stdout that is not valid UTF-8 matched
 * rather than refused (PCRE2_MATCH_INVALID_UTF), "\n" alone as the newline,
 * and `multiline` as re.MULTILINE.  The differences that remain are in
 * docs/spec.md (\Z, {,n}, a few escapes).
 *
 * Every failure to read a strategy is kept as its error and is ERROR when
 * evaluated: a verifier that skipped what it could not read would pass a
 * spec on the strategies it understood.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "kjudge/spec.h"
#include "spec/spec_internal.h"
#include "base/hash.h"

/* What a file strategy reads at most (the written-bytes limit is lower by
 * default). */
#define FILE_MAX (1ull << 30)

static const struct {
	const char *name;
	enum kj_spec_strategy_type type;
} types[] = {
	{ "exit_code", KJ_STRAT_EXIT_CODE },
	{ "stdout_pattern", KJ_STRAT_STDOUT_PATTERN },
	{ "stdout_exclude_pattern", KJ_STRAT_STDOUT_EXCLUDE },
	{ "numeric_comparison", KJ_STRAT_NUMERIC },
	{ "file_hash", KJ_STRAT_FILE_HASH },
	{ "file_diff", KJ_STRAT_FILE_DIFF },
};

void kj_spec_strategy_release(struct kj_spec_strategy *st)
{
	free(st->error);
	free(st->pattern);
	pcre2_code_free(st->re);
	free(st->path.rel);
	free(st->path.abs);
	free(st->reference.rel);
	free(st->reference.abs);
	memset(st, 0, sizeof(*st));
}

/* Mark st malformed.  Returns KJ_OK, or KJ_ENOMEM. */
static int malformed(struct kj_spec_strategy *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int malformed(struct kj_spec_strategy *st, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	free(st->error);
	st->error = strdup(buf);
	st->type = KJ_STRAT_UNKNOWN;
	return st->error ? KJ_OK : KJ_ENOMEM;
}

static int compile(struct kj_spec_strategy *st, const char *key)
{
	pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
	PCRE2_UCHAR msg[256];
	PCRE2_SIZE off = 0;
	int code = 0;
	char buf[400];

	if (!cc)
		return KJ_ENOMEM;
	pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
	st->re = pcre2_compile((PCRE2_SPTR)st->pattern, PCRE2_ZERO_TERMINATED,
			       PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF |
				       (st->multiline ? PCRE2_MULTILINE : 0),
			       &code, &off, cc);
	pcre2_compile_context_free(cc);
	if (st->re)
		return KJ_OK;
	if (code == PCRE2_ERROR_NOMEMORY)
		return KJ_ENOMEM;
	pcre2_get_error_message(code, msg, sizeof(msg));
	snprintf(buf, sizeof(buf), "%s is not a valid regex: %s at offset %zu", key,
		 (const char *)msg, (size_t)off);
	return malformed(st, "%s", buf);
}

/* A number that is not a bool: JSON integers and reals. */
static int number(const json_t *v, double *out)
{
	if (!json_is_number(v))
		return -1;
	*out = json_number_value(v);
	return 0;
}

/* A path the program writes, under the working directory: checked by its
 * text, because it exists only after the run (where its links are
 * checked, strategy_eval). */
static int lexical_inside(const char *p)
{
	int depth = 0;

	if (p[0] == '/')
		return -1;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (--depth < 0)
				return -1;
		} else if (n && !(n == 1 && p[0] == '.')) {
			depth++;
		}
		p += n;
		while (*p == '/')
			p++;
	}
	return depth > 0 ? 0 : -1;
}

int kj_spec_strategy_parse(struct kj_spec_strategy *st, const json_t *j, const char *field,
			   const char *source_work, const char *tree, struct kj_error *err)
{
	const json_t *t, *v;
	const char *name;
	size_t i;
	int rc;

	memset(st, 0, sizeof(*st));
	snprintf(st->type_name, sizeof(st->type_name), "?");
	if (!json_is_object(j))
		return malformed(st, "%s is not an object", field);
	t = json_object_get(j, "type");
	if (!t)
		return malformed(st, "%s has no type", field);
	if (!json_is_string(t))
		return malformed(st, "%s: type must be a string", field);
	name = json_string_value(t);
	snprintf(st->type_name, sizeof(st->type_name), "%s", name);
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(types[i].name, name))
			st->type = types[i].type;
	if (st->type == KJ_STRAT_UNKNOWN)
		return malformed(st, "unknown strategy type '%s'", st->type_name);

	v = json_object_get(j, "multiline");
	if (v && !json_is_boolean(v) && !json_is_null(v))
		return malformed(st, "%s", "multiline must be true or false");
	st->multiline = json_is_true(v);

	switch (st->type) {
	case KJ_STRAT_EXIT_CODE: {
		double d;

		v = json_object_get(j, "expected");
		if (!v)
			return malformed(st, "%s", "exit_code needs expected (an integer)");
		if (json_is_boolean(v))
			return malformed(st, "%s", "expected must be an integer, not a bool");
		if (number(v, &d) < 0 || d != floor(d) || fabs(d) > 1e15)
			return malformed(st, "%s", "expected must be an integer");
		st->expected_code = (long long)d;
		return KJ_OK;
	}
	case KJ_STRAT_STDOUT_PATTERN:
	case KJ_STRAT_STDOUT_EXCLUDE:
	case KJ_STRAT_NUMERIC: {
		const char *key = st->type == KJ_STRAT_NUMERIC ? "extract_regex" : "pattern";

		v = json_object_get(j, key);
		if (!v)
			return malformed(st, "%s is missing", key);
		if (!json_is_string(v) || !json_string_length(v))
			return malformed(st, "%s must be a non-empty string", key);
		if (!(st->pattern = strdup(json_string_value(v))))
			return KJ_ENOMEM;
		if ((rc = compile(st, key)) != KJ_OK || st->error)
			return rc;
		if (st->type != KJ_STRAT_NUMERIC)
			return KJ_OK;
		v = json_object_get(j, "expected");
		if (!v)
			return malformed(st, "%s", "numeric_comparison needs expected (a number)");
		if (json_is_boolean(v) || number(v, &st->expected) < 0)
			return malformed(st, "%s", "expected must be a number, not a bool or a string");
		if (!isfinite(st->expected))
			return malformed(st, "%s", "expected must be finite");
		v = json_object_get(j, "tolerance");
		if (v && !json_is_null(v)) {
			if (json_is_boolean(v) || number(v, &st->tolerance) < 0)
				return malformed(st, "%s", "tolerance must be a number, not a bool "
						 "or a string");
			if (!isfinite(st->tolerance) || st->tolerance < 0)
				return malformed(st, "%s", "tolerance must be a finite number >= 0");
		}
		v = json_object_get(j, "tolerance_type");
		if (v && !json_is_null(v)) {
			if (!json_is_string(v) || (strcmp(json_string_value(v), "absolute") &&
						   strcmp(json_string_value(v), "relative")))
				return malformed(st, "%s", "tolerance_type must be 'absolute' or "
						 "'relative'");
			st->relative = !strcmp(json_string_value(v), "relative");
		}
		return KJ_OK;
	}
	case KJ_STRAT_FILE_HASH:
	case KJ_STRAT_FILE_DIFF: {
		char f[160];

		v = json_object_get(j, "path");
		if (!v || !json_is_string(v) || !json_string_length(v))
			return malformed(st, "%s", "path must be a non-empty string");
		snprintf(f, sizeof(f), "%s.path", field);
		if (lexical_inside(json_string_value(v)) < 0)
			return kj_error_set(err, KJ_EINVAL, "%s: '%s' leaves the working directory",
					    f, json_string_value(v));
		if (!(st->path.rel = strdup(json_string_value(v))))
			return KJ_ENOMEM;
		if (st->type == KJ_STRAT_FILE_HASH) {
			const char *h;

			v = json_object_get(j, "expected_sha256");
			if (!v || !json_is_string(v) || json_string_length(v) != 64 ||
			    strspn(json_string_value(v), "0123456789abcdefABCDEF") != 64)
				return malformed(st, "%s", "expected_sha256 must be 64 hex digits");
			for (h = json_string_value(v), i = 0; i < 64; i++)
				st->sha256[i] = (char)(h[i] >= 'A' && h[i] <= 'F' ? h[i] - 'A' + 'a' : h[i]);
			return KJ_OK;
		}
		v = json_object_get(j, "reference_file");
		if (!v || !json_is_string(v) || !json_string_length(v))
			return malformed(st, "%s", "reference_file must be a non-empty string");
		{
			char abs[PATH_MAX];

			snprintf(f, sizeof(f), "%s.reference_file", field);
			if ((rc = kj_spec_resolve(tree, source_work, json_string_value(v), 1, f, abs,
						  err)) != KJ_OK)
				return rc;
			if (!(st->reference.rel = strdup(json_string_value(v))) ||
			    !(st->reference.abs = strdup(abs)))
				return KJ_ENOMEM;
		}
		return KJ_OK;
	}
	case KJ_STRAT_UNKNOWN:
		break;
	}
	return KJ_OK;
}

/* --- evaluation ------------------------------------------------------------------------ */

/* Search the pattern in stdout.  1 found (with the match's ovector in
 * *md), 0 not, -1 a matching error (msg filled), -2 out of memory. */
static int search(const struct kj_spec_strategy *st, const struct kj_spec_outcome *o,
		  pcre2_match_data **md, char *msg, size_t size)
{
	int rc;

	*md = pcre2_match_data_create_from_pattern(st->re, NULL);
	if (!*md)
		return -2;
	rc = pcre2_match(st->re, (PCRE2_SPTR)o->out, o->out_len, 0, 0, *md, NULL);
	if (rc >= 0)
		return 1;
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	if (rc == PCRE2_ERROR_NOMEMORY)
		return -2;
	{
		PCRE2_UCHAR m[200];

		pcre2_get_error_message(rc, m, sizeof(m));
		snprintf(msg, size, "matching failed: %s", (const char *)m);
	}
	return -1;
}

/* Python's float() of a matched text: surrounding blanks, '_' between
 * digits, no hexadecimal.  0, or -1 when it is not a number. */
static int parse_float(const char *p, size_t n, double *out)
{
	char buf[128], *end;
	size_t i, k = 0;

	while (n && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v'))
		p++, n--;
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\n' || p[n - 1] == '\r' ||
		     p[n - 1] == '\f' || p[n - 1] == '\v'))
		n--;
	if (!n || n >= sizeof(buf))
		return -1;
	for (i = 0; i < n; i++) {
		if (p[i] == 'x' || p[i] == 'X' || p[i] == '\0')
			return -1;
		if (p[i] == '_') {
			if (!i || i + 1 == n || p[i - 1] < '0' || p[i - 1] > '9' || p[i + 1] < '0' ||
			    p[i + 1] > '9')
				return -1;
			continue;
		}
		buf[k++] = p[i];
	}
	buf[k] = '\0';
	errno = 0;
	*out = strtod(buf, &end);
	if (end == buf || *end)
		return -1;
	return 0;
}

/* The output st->path names, opened without following a link, inside
 * o->work_dir.  A descriptor, or -1 with detail filled, or -2 out of
 * memory. */
static int open_output(const struct kj_spec_strategy *st, const struct kj_spec_outcome *o,
		       char *detail, size_t size)
{
	char abs[PATH_MAX];
	struct kj_error e;
	int rc, fd;

	if (!o->work_dir) {
		snprintf(detail, size, "no working directory to read '%s' from", st->path.rel);
		return -1;
	}
	rc = kj_spec_resolve(o->work_dir, NULL, st->path.rel, 1, "path", abs, &e);
	if (rc == KJ_ENOMEM)
		return -2;
	if (rc == KJ_ENOENT) {
		snprintf(detail, size, "'%s' was not written", st->path.rel);
		return -1;
	}
	if (rc != KJ_OK) {
		/* Only the program could have put a link there: the copy holds
		 * none that leaves the tree. */
		snprintf(detail, size, "'%s' leads out of the working directory through a "
			 "symbolic link: not read", st->path.rel);
		return -1;
	}
	fd = kj_spec_open_nofollow(abs, O_RDONLY);
	if (fd < 0)
		snprintf(detail, size, "'%s' cannot be opened: %s", st->path.rel, strerror(errno));
	return fd;
}

static void eval_file(const struct kj_spec_strategy *st, const struct kj_spec_outcome *o,
		      const char **status, char *detail, size_t size)
{
	size_t len = 0, rlen = 0, i;
	char *data, *ref;
	int fd = open_output(st, o, detail, size);

	*status = "FAIL";
	if (fd < 0) {
		if (fd == -2)
			*status = NULL;
		return;
	}
	errno = 0;
	data = kj__spec_read_fd(fd, FILE_MAX, &len);
	close(fd);
	if (!data && errno == ENOMEM) {
		*status = NULL;
		return;
	}
	if (!data) {
		snprintf(detail, size, "'%s' is not a regular file of at most 1 GiB", st->path.rel);
		return;
	}
	if (st->type == KJ_STRAT_FILE_HASH) {
		char hex[KJ_SHA256_HEX];

		if (kj__sha256_hex(data, len, hex) < 0)
			*status = NULL; /* libcrypto out of memory */
		else if (!strcmp(hex, st->sha256)) {
			*status = "PASS";
			snprintf(detail, size, "sha256 of '%s' matches", st->path.rel);
		} else {
			snprintf(detail, size, "sha256 of '%s' is %s, expected %s", st->path.rel, hex,
				 st->sha256);
		}
		free(data);
		return;
	}
	/* The reference is read by the judge from the source tree: it never
	 * was in the sandbox. */
	fd = kj_spec_open_nofollow(st->reference.abs, O_RDONLY);
	errno = 0;
	ref = fd >= 0 ? kj__spec_read_fd(fd, FILE_MAX, &rlen) : NULL;
	if (fd >= 0)
		close(fd);
	if (!ref && errno == ENOMEM) {
		*status = NULL;
		free(data);
		return;
	}
	if (!ref) {
		*status = "ERROR";
		snprintf(detail, size, "the reference '%s' cannot be read", st->reference.rel);
		free(data);
		return;
	}
	for (i = 0; i < len && i < rlen && data[i] == ref[i]; i++)
		;
	if (len == rlen && i == len) {
		*status = "PASS";
		snprintf(detail, size, "'%s' is byte for byte '%s'", st->path.rel, st->reference.rel);
	} else {
		snprintf(detail, size, "'%s' differs from '%s' at byte %zu (sizes %zu and %zu)",
			 st->path.rel, st->reference.rel, i, len, rlen);
	}
	free(data);
	free(ref);
}

static void eval_numeric(const struct kj_spec_strategy *st, const struct kj_spec_outcome *o,
			 const char **status, char *detail, size_t size)
{
	pcre2_match_data *md = NULL;
	PCRE2_SIZE *ov;
	uint32_t groups = 0;
	int g, found = search(st, o, &md, detail, size);
	double got, diff, limit;
	const char *kind = st->relative ? "relative" : "absolute";

	*status = "FAIL";
	if (found < 0) {
		*status = found == -2 ? NULL : "ERROR";
		goto done;
	}
	if (!found) {
		snprintf(detail, size, "'%s' not found in stdout", st->pattern);
		goto done;
	}
	pcre2_pattern_info(st->re, PCRE2_INFO_CAPTURECOUNT, &groups);
	g = groups > 0 ? 1 : 0;
	ov = pcre2_get_ovector_pointer(md);
	if (ov[2 * g] == PCRE2_UNSET) {
		snprintf(detail, size, "group 1 of '%s' took no part in the match", st->pattern);
		goto done;
	}
	if (parse_float(o->out + ov[2 * g], ov[2 * g + 1] - ov[2 * g], &got) < 0) {
		snprintf(detail, size, "'%.*s' is not a number", (int)(ov[2 * g + 1] - ov[2 * g] > 80 ? 80 :
			 ov[2 * g + 1] - ov[2 * g]), o->out + ov[2 * g]);
		goto done;
	}
	if (!isfinite(got)) {
		snprintf(detail, size, "got %g, not a finite number", got);
		goto done;
	}
	diff = fabs(got - st->expected);
	/* Relative: |a - e| <= tol * |e| (so an expected 0 demands exactly 0). */
	limit = st->relative ? st->tolerance * fabs(st->expected) : st->tolerance;
	if (diff <= limit) {
		*status = "PASS";
		snprintf(detail, size, "got %.15g, expected %.15g within %.15g (%s)", got,
			 st->expected, st->tolerance, kind);
	} else if (st->relative) {
		snprintf(detail, size, "got %.15g, expected %.15g: |difference| %.10g is more than "
			 "%.15g * |expected| = %.10g (relative)", got, st->expected, diff,
			 st->tolerance, limit);
	} else {
		snprintf(detail, size, "got %.15g, expected %.15g: |difference| %.10g is more than "
			 "%.15g (absolute)", got, st->expected, diff, st->tolerance);
	}
done:
	pcre2_match_data_free(md);
}

static void eval(const struct kj_spec_strategy *st, const struct kj_spec_outcome *o,
		 const char **status, char *detail, size_t size)
{
	pcre2_match_data *md = NULL;
	int found;

	*status = "ERROR";
	detail[0] = '\0';
	if (st->error) {
		snprintf(detail, size, "%s", st->error);
		return;
	}
	switch (st->type) {
	case KJ_STRAT_EXIT_CODE:
		if (!o->exited) {
			*status = "FAIL";
			snprintf(detail, size, "the program did not exit by itself, expected exit "
				 "code %lld", st->expected_code);
		} else if (o->exit_code == st->expected_code) {
			*status = "PASS";
			snprintf(detail, size, "exit code %d as expected", o->exit_code);
		} else {
			*status = "FAIL";
			snprintf(detail, size, "exit code %d, expected %lld", o->exit_code,
				 st->expected_code);
		}
		return;
	case KJ_STRAT_STDOUT_PATTERN:
	case KJ_STRAT_STDOUT_EXCLUDE:
		found = search(st, o, &md, detail, size);
		if (found == -2)
			*status = NULL;
		if (found >= 0) {
			int want = st->type == KJ_STRAT_STDOUT_PATTERN;

			*status = found == want ? "PASS" : "FAIL";
			if (found) {
				PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
				size_t n = ov[1] - ov[0];

				snprintf(detail, size, "'%s' found in stdout: '%.*s'", st->pattern,
					 (int)(n > 80 ? 80 : n), o->out + ov[0]);
			} else {
				snprintf(detail, size, "'%s' not found in stdout", st->pattern);
			}
		}
		pcre2_match_data_free(md);
		return;
	case KJ_STRAT_NUMERIC:
		eval_numeric(st, o, status, detail, size);
		return;
	case KJ_STRAT_FILE_HASH:
	case KJ_STRAT_FILE_DIFF:
		eval_file(st, o, status, detail, size);
		return;
	case KJ_STRAT_UNKNOWN:
		break;
	}
	snprintf(detail, size, "unknown strategy");
}

int kj_spec_strategy_eval(const struct kj_spec_strategy *st, const struct kj_spec_outcome *o,
			  const char **status, char *detail, size_t size)
{
	/* The helpers say "the judge could not" with a NULL status: that is
	 * never a verdict on the program. */
	eval(st, o, status, detail, size);
	if (*status)
		return KJ_OK;
	*status = "ERROR";
	snprintf(detail, size, "out of memory");
	return KJ_ENOMEM;
}
