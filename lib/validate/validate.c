/*
 * validate.c - kjudge validate's library side: validators, one analysis
 * from source to verdict, and the JSON record.
 *
 * One analysis (kj_validate_source):
 *
 *   1. parse the source with tree-sitter (Python, or CUDA C++ for .cu and
 *      friends) into a flat tree (validate_tree.c);
 *   2. analyse it (validate_py.c, validate_cuda.c), which records kernels,
 *      the kernels forward's path launches, and findings, each tagged with
 *      the check it belongs to;
 *   3. decide every check and the regression type: the first failing check
 *      in the order of enum kj_vcheck names it, as in the original script;
 *   4. hand the result, which lives in its own arena, to the caller.
 *
 * Limits, so that hostile input costs bounded time and memory: files up to
 * KJ_VALIDATE_MAX_FILE, nesting up to KJ__VMAX_DEPTH levels, a parse
 * timeout, work memory up to WORK_LIMIT and at most MAX_FINDINGS findings
 * (the rest are counted, not kept).  A Python file that does not parse is
 * type 1, as a SyntaxError is in the original; CUDA sources are analysed
 * as far as the parser recovers, since real extension code often uses
 * macros the grammar does not know.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "validate/validate_internal.h"

const TSLanguage *tree_sitter_python(void);
const TSLanguage *tree_sitter_cuda(void);

#define WORK_LIMIT ((size_t)1 << 30)
#define OUT_LIMIT ((size_t)64 << 20)
#define MAX_FINDINGS 5000
#define CALL_TEXT_MAX 120

/* --- validators ----------------------------------------------------------- */

int kj_validator_new(struct kj_validator **out, const struct kj_vrules *rules,
		     struct kj_error *err)
{
	struct kj_validator *v;
	int rc;

	*out = NULL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return kj_error_set(err, KJ_ENOMEM, "out of memory for a validator");
	v->rules = rules;
	v->parser = ts_parser_new();
	if (!v->parser) {
		free(v);
		return kj_error_set(err, KJ_ENOMEM, "out of memory for a parser");
	}
	rc = kj__vgrammar_init(&v->python, tree_sitter_python(), 1, err);
	if (!rc)
		rc = kj__vgrammar_init(&v->cuda, tree_sitter_cuda(), 0, err);
	if (rc) {
		kj_validator_free(v);
		return rc;
	}
	*out = v;
	return KJ_OK;
}

void kj_validator_free(struct kj_validator *v)
{
	if (!v)
		return;
	kj__vgrammar_release(&v->python);
	kj__vgrammar_release(&v->cuda);
	if (v->parser)
		ts_parser_delete(v->parser);
	free(v);
}

/* --- results ---------------------------------------------------------------- */

void kj_vresult_init(struct kj_vresult *res)
{
	memset(res, 0, sizeof(*res));
	res->suggestion = "";
}

void kj_vresult_release(struct kj_vresult *res)
{
	struct kj__arena *a = res->mem_;

	if (a) {
		kj__arena_release(a);
		free(a);
	}
	kj_vresult_init(res);
}

const char *kj_vcheck_name(enum kj_vcheck check, enum kj_vkind kind)
{
	switch (check) {
	case KJ_VCHECK_KERNEL_EXISTS:
		return kind == KJ_VKIND_CUDA ? "cuda_kernel_exists" : "triton_kernel_exists";
	case KJ_VCHECK_CALLED:
		return "kernel_called_from_forward";
	case KJ_VCHECK_MODULE_WIDE:
		return "no_forbidden_module_wide_ops";
	case KJ_VCHECK_HOST_LIBRARY:
		return "no_forbidden_host_library_calls";
	case KJ_VCHECK_PLACEHOLDER:
		return "kernel_not_placeholder";
	case KJ_VCHECK_DYNAMIC:
		return "no_dynamic_attr_evasion";
	case KJ_VCHECK_HOST_MATH:
		return "no_host_math_fallback";
	case KJ_VCHECK_HOST_SYNC:
		return "no_host_sync_risk";
	case KJ_VCHECK_TORCH_OPS:
		return "no_forbidden_torch_ops";
	default:
		return "?";
	}
}

static enum kj_vtype check_type(enum kj_vcheck c)
{
	switch (c) {
	case KJ_VCHECK_KERNEL_EXISTS:
		return KJ_VTYPE_NO_KERNEL;
	case KJ_VCHECK_CALLED:
		return KJ_VTYPE_NOT_LAUNCHED;
	case KJ_VCHECK_PLACEHOLDER:
		return KJ_VTYPE_PLACEHOLDER;
	default:
		return KJ_VTYPE_TORCH_COMPUTE;
	}
}

/* --- recording (the kj__ side) ------------------------------------------------ */

void kj__vabort(struct kj__vctx *cx, int code)
{
	cx->code = code;
	longjmp(cx->jmp, 1);
}

/* A copy with whitespace runs folded to one space, cut at `max` bytes on a
 * character boundary. */
static const char *fold(struct kj__vctx *cx, const char *s, size_t len, size_t max)
{
	char *out = kj__arena_alloc(&cx->out, (len < max ? len : max) + 4);
	size_t i, n = 0;
	int space = 0;

	for (i = 0; i < len && n < max; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\\') {
			space = n > 0;
			continue;
		}
		if (space && n < max) {
			out[n++] = ' ';
			space = 0;
		}
		if (n < max)
			out[n++] = (char)ch;
	}
	if (i < len) { /* cut: back off to a character boundary, mark it */
		while (n > 0 && ((unsigned char)out[n - 1] & 0xc0) == 0x80)
			n--;
		if (n > 0 && ((unsigned char)out[n - 1] & 0xc0) == 0xc0)
			n--;
		out[n++] = '.';
		out[n++] = '.';
		out[n++] = '.';
	}
	out[n] = '\0';
	return out;
}

void kj__vfind(struct kj__vctx *cx, enum kj_vcheck check, int line, int warning,
	       const char *severity, const char *call, size_t len,
	       const char *resolved, const char *reason_fmt, ...)
{
	struct kj_vviolation *v;
	char reason[512];
	va_list ap;

	if (cx->found.n >= MAX_FINDINGS)
		return;
	va_start(ap, reason_fmt);
	vsnprintf(reason, sizeof(reason), reason_fmt, ap);
	va_end(ap);
	v = KJ__PUSH(&cx->out, cx->found);
	v->check = check;
	v->line = line;
	v->warning = warning;
	v->severity = severity;
	v->call = fold(cx, call, len, CALL_TEXT_MAX);
	v->resolved = resolved ? fold(cx, resolved, strlen(resolved), 256) : NULL;
	v->reason = kj__arena_strndup(&cx->out, reason, strlen(reason));
}

void kj__vkernel(struct kj__vctx *cx, const char *name, size_t len, int line,
		 int cuda, int computes, int launched, int placeholder)
{
	struct kj_vkernel *k = KJ__PUSH(&cx->out, cx->kernels);

	k->name = fold(cx, name, len, CALL_TEXT_MAX);
	k->line = line;
	k->cuda = cuda;
	k->computes = computes;
	k->launched = launched;
	k->placeholder = placeholder;
}

void kj__vcalled(struct kj__vctx *cx, const char *name, size_t len)
{
	void **seen = kj__vmap_put(&cx->work, &cx->called_set, name, len);

	if (*seen)
		return;
	*seen = (void *)1;
	*KJ__PUSH(&cx->out, cx->called) = fold(cx, name, len, CALL_TEXT_MAX);
}

/* --- the verdict ------------------------------------------------------------ */

static int cmp_violation(const void *a, const void *b)
{
	const struct kj_vviolation *x = a, *y = b;
	int c;

	if (x->check != y->check)
		return x->check < y->check ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	c = strcmp(x->call, y->call);
	return c ? c : strcmp(x->reason, y->reason);
}

static void sort_findings(struct kj__vctx *cx)
{
	size_t i, n = 0;

	if (cx->found.n > 1)
		qsort(cx->found.v, cx->found.n, sizeof(cx->found.v[0]), cmp_violation);
	for (i = 0; i < cx->found.n; i++) /* drop duplicates */
		if (n == 0 || cmp_violation(&cx->found.v[n - 1], &cx->found.v[i]) ||
		    cx->found.v[n - 1].warning != cx->found.v[i].warning)
			cx->found.v[n++] = cx->found.v[i];
	cx->found.n = n;
}

static const char *default_error(const struct kj__vctx *cx, enum kj_vcheck c)
{
	int cuda = cx->kind == KJ_VKIND_CUDA;

	switch (c) {
	case KJ_VCHECK_KERNEL_EXISTS:
		return cuda ? "no __global__ kernel in the CUDA sources"
			    : "no @triton.jit kernel that uses triton.language";
	case KJ_VCHECK_CALLED:
		return cuda ? "forward calls no extension function that launches a __global__ kernel"
			    : "forward launches no kernel";
	case KJ_VCHECK_PLACEHOLDER:
		return "every kernel forward launches only loads, stores or fills";
	default:
		return NULL;
	}
}

static void suggest(struct kj__vctx *cx, struct kj_vresult *res)
{
	char buf[2048];
	size_t n = 0, i;
	int shown = 0;
	const char *err = res->check_error[res->regression_type == KJ_VTYPE_NO_KERNEL
						   ? KJ_VCHECK_KERNEL_EXISTS
						   : KJ_VCHECK_CALLED];
	int cuda = res->kind == KJ_VKIND_CUDA;

#define PUT(...)                                                                    \
	do {                                                                        \
		int k_ = snprintf(buf + n, sizeof(buf) - n, __VA_ARGS__);           \
		if (k_ > 0)                                                         \
			n = (size_t)k_ < sizeof(buf) - n ? n + (size_t)k_ : sizeof(buf) - 1; \
	} while (0)

	switch (res->regression_type) {
	case KJ_VTYPE_VALID:
		res->suggestion = "";
		return;
	case KJ_VTYPE_NO_KERNEL:
		PUT("Type 1, no kernel: %s. ", err ? err : "");
		PUT(cuda ? "Write the computation as a __global__ kernel in the extension's CUDA "
			   "sources and launch it from the bound function."
			 : "Write the computation as a @triton.jit kernel that uses triton.language "
			   "(tl.load, tl.store, tl.* math) and launch it from ModelNew.forward.");
		break;
	case KJ_VTYPE_NOT_LAUNCHED:
		PUT("Type 2, kernel not called: %s. ", err ? err : "");
		PUT(cuda ? "Call the extension function that launches the kernel from "
			   "ModelNew.forward, in code that runs."
			 : "Launch the kernel (kernel[grid](...)) from ModelNew.forward or from a "
			   "function it calls, in code that runs.");
		break;
	case KJ_VTYPE_PLACEHOLDER:
		PUT("Type 4, placeholder kernel: every kernel forward launches only loads, stores "
		    "or fills (");
		for (i = 0; i < res->n_kernels; i++)
			if (res->kernels[i].placeholder)
				PUT("%s%s", shown++ ? ", " : "", res->kernels[i].name);
		PUT("). The kernel must compute the result.");
		break;
	default:
		PUT("Type 3, computation outside the kernel: ");
		for (i = 0; i < res->n_violations && shown < 5; i++) {
			const struct kj_vviolation *v = &res->violations[i];

			if (v->warning || check_type(v->check) != KJ_VTYPE_TORCH_COMPUTE)
				continue;
			PUT("%sline %d %s (%s)", shown++ ? "; " : "", v->line, v->call, v->reason);
		}
		PUT(". Move this computation into the kernel%s.",
		    cuda ? " (no cuBLAS, cuDNN or ATen compute in host code)" : "");
		break;
	}
#undef PUT
	res->suggestion = kj__arena_strndup(&cx->out, buf, n);
}

static void decide(struct kj__vctx *cx, struct kj_vresult *res)
{
	const struct kj_vrules *R = cx->rules;
	size_t i;
	int computes = 0, launched = 0, placeholders = 0;
	int c;

	sort_findings(cx);
	res->kind = cx->kind;
	res->kernels = cx->kernels.v;
	res->n_kernels = cx->kernels.n;
	res->called = cx->called.v;
	res->n_called = cx->called.n;
	res->violations = cx->found.v;
	res->n_violations = cx->found.n;
	for (i = 0; i < cx->kernels.n; i++) {
		computes |= cx->kernels.v[i].computes;
		launched += cx->kernels.v[i].launched;
		placeholders += cx->kernels.v[i].placeholder;
	}
	for (c = 0; c < KJ_VCHECK_COUNT_; c++)
		res->check_error[c] = cx->check_error[c];
	if (cx->parse_error_line) {
		for (c = 0; c < KJ_VCHECK_COUNT_; c++) {
			res->failed[c] = 1;
			if (c != KJ_VCHECK_KERNEL_EXISTS)
				res->check_error[c] = "not examined: the file does not parse";
		}
		res->check_error[KJ_VCHECK_KERNEL_EXISTS] = kj__arena_printf(
			&cx->out, "the file does not parse (syntax error at line %d)",
			cx->parse_error_line);
	} else {
		res->failed[KJ_VCHECK_KERNEL_EXISTS] = !computes;
		res->failed[KJ_VCHECK_CALLED] = !launched;
		res->failed[KJ_VCHECK_PLACEHOLDER] =
			R->ph_enabled && launched && placeholders == launched;
		for (i = 0; i < cx->found.n; i++)
			if (!cx->found.v[i].warning)
				res->failed[cx->found.v[i].check] = 1;
	}
	if (res->failed[KJ_VCHECK_PLACEHOLDER] && !res->check_error[KJ_VCHECK_PLACEHOLDER]) {
		char names[512];
		size_t n = 0;

		names[0] = '\0';
		for (i = 0; i < cx->kernels.n && n < sizeof(names); i++)
			if (cx->kernels.v[i].placeholder)
				n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s",
						      n ? ", " : "", cx->kernels.v[i].name);
		res->check_error[KJ_VCHECK_PLACEHOLDER] = kj__arena_printf(
			&cx->out, "every kernel forward launches only loads, stores or fills: %s",
			names);
	}
	res->regression_type = KJ_VTYPE_VALID;
	for (c = 0; c < KJ_VCHECK_COUNT_; c++) {
		if (!res->failed[c])
			continue;
		if (!res->check_error[c])
			res->check_error[c] = default_error(cx, (enum kj_vcheck)c);
		if (!res->check_error[c]) { /* a check decided by its findings */
			const struct kj_vviolation *first = NULL;
			size_t n = 0;

			for (i = 0; i < cx->found.n; i++)
				if (cx->found.v[i].check == (enum kj_vcheck)c && !cx->found.v[i].warning) {
					first = first ? first : &cx->found.v[i];
					n++;
				}
			if (first)
				res->check_error[c] = kj__arena_printf(
					&cx->out, "%zu finding%s, the first at line %d: %s", n,
					n == 1 ? "" : "s", first->line, first->call);
		}
		if (res->regression_type == KJ_VTYPE_VALID)
			res->regression_type = check_type((enum kj_vcheck)c);
	}
	suggest(cx, res);
}

/* --- one analysis ------------------------------------------------------------ */

static int analyse(struct kj__vctx *cx, const char *src, size_t len, enum kj_vlang lang)
{
	struct kj__vtree tree;
	int rc;

	if (lang == KJ_VLANG_CUDA) {
		kj__vcuda_file(cx, src, len);
		return KJ_OK;
	}
	cx->kind = KJ_VKIND_TRITON;
	rc = kj__vparse(cx, cx->v->parser, &cx->v->python, src, len, &tree);
	if (rc)
		return rc;
	if (tree.first_error != KJ__VNONE)
		cx->parse_error_line = (int)tree.n[tree.first_error].row + 1;
	else
		kj__vpy_analyze(cx, &tree);
	return KJ_OK;
}

int kj_validate_source(struct kj_validator *v, const char *name, const char *src,
		       size_t len, enum kj_vlang lang, const char *dir,
		       struct kj_vresult *res, struct kj_error *err)
{
	struct kj__vctx *cx;
	struct kj__arena *out;
	int rc;

	kj_vresult_release(res);
	if (len > KJ_VALIDATE_MAX_FILE)
		return kj_error_set(err, KJ_ELIMIT, "'%s': larger than %u bytes", name,
				    KJ_VALIDATE_MAX_FILE);
	cx = calloc(1, sizeof(*cx));
	out = malloc(sizeof(*out));
	if (!cx || !out) {
		free(cx);
		free(out);
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	kj__arena_init(&cx->work, WORK_LIMIT, &cx->jmp);
	kj__arena_init(&cx->out, OUT_LIMIT, &cx->jmp);
	cx->v = v;
	cx->rules = v->rules;
	cx->name = name;
	cx->dir = dir;
	cx->err = err;
	if (setjmp(cx->jmp)) {
		rc = cx->code ? cx->code : KJ_ENOMEM;
		if (rc == KJ_ENOMEM)
			kj_error_set(err, rc, "'%s': out of memory for the analysis", name);
		goto fail;
	}
	rc = analyse(cx, src, len, lang);
	if (rc)
		goto fail;
	decide(cx, res);
	kj__arena_release(&cx->work);
	cx->out.fail = NULL;
	*out = cx->out;
	res->mem_ = out;
	free(cx);
	return KJ_OK;
fail:
	kj__arena_release(&cx->work);
	kj__arena_release(&cx->out);
	free(cx);
	free(out);
	kj_vresult_init(res);
	return rc;
}

static int is_cuda_name(const char *path)
{
	static const char *const exts[] = { ".cu", ".cuh", ".cpp", ".cc", ".cxx", ".h", ".hpp" };
	size_t n = strlen(path), i;

	for (i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		size_t e = strlen(exts[i]);

		if (n > e && !strcmp(path + n - e, exts[i]))
			return 1;
	}
	return 0;
}

int kj_validate_file(struct kj_validator *v, const char *path,
		     struct kj_vresult *res, struct kj_error *err)
{
	struct kj_error e;
	char *buf, *dir, *slash;
	size_t n = 0;
	int fd, rc;

	kj_vresult_release(res);
	/* A file the user or a task names: an open that cannot block, a
	 * regular file only, read up to the analysis' limit. */
	fd = kj__open_regular(path, 0, err);
	if (fd < 0)
		return fd;
	buf = kj__read_fd(fd, path, KJ_VALIDATE_MAX_FILE, &n, &e);
	close(fd);
	if (!buf) {
		if (err)
			*err = e;
		return e.code;
	}
	dir = strdup(path);
	if (!dir) {
		free(buf);
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	rc = kj_validate_source(v, path, buf, n, is_cuda_name(path) ? KJ_VLANG_CUDA
								    : KJ_VLANG_PYTHON,
				slash ? (*dir ? dir : "/") : ".", res, err);
	free(dir);
	free(buf);
	return rc;
}

/* --- JSON --------------------------------------------------------------- */

/* A JSON string of s, invalid UTF-8 replaced by '?' (candidate text may be
 * anything; jansson refuses invalid UTF-8). */
static json_t *jstr(const char *s)
{
	json_t *j;
	char *copy;
	size_t i, n;

	if (!s)
		return json_null();
	j = json_string(s);
	if (j)
		return j;
	n = strlen(s);
	copy = malloc(n + 1);
	if (!copy)
		return NULL;
	for (i = 0; i < n; i++)
		copy[i] = (unsigned char)s[i] < 0x80 ? s[i] : '?';
	copy[n] = '\0';
	j = json_string(copy);
	free(copy);
	return j;
}

static int put(json_t *o, const char *key, json_t *v)
{
	return !v || json_object_set_new(o, key, v) ? -1 : 0;
}

static json_t *violations_json(const struct kj_vresult *res, enum kj_vcheck c)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < res->n_violations; i++) {
		const struct kj_vviolation *v = &res->violations[i];
		json_t *o;

		if (v->check != c)
			continue;
		o = json_object();
		if (!o || put(o, "line", json_integer(v->line)) ||
		    put(o, "call", jstr(v->call)) || put(o, "reason", jstr(v->reason)) ||
		    (v->resolved && put(o, "resolved", jstr(v->resolved))) ||
		    (v->severity && put(o, "severity", jstr(v->severity))) ||
		    (v->warning && put(o, "warning", json_true())) ||
		    json_array_append_new(a, o)) {
			json_decref(o);
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *check_json(const struct kj_vresult *res, enum kj_vcheck c)
{
	json_t *o = json_object(), *a;
	size_t i;

	if (!o || put(o, "passed", json_boolean(!res->failed[c])))
		goto fail;
	switch (c) {
	case KJ_VCHECK_KERNEL_EXISTS:
		a = json_array();
		for (i = 0; a && i < res->n_kernels; i++) {
			const struct kj_vkernel *k = &res->kernels[i];
			json_t *ko = json_object();

			if (!ko || put(ko, "name", jstr(k->name)) ||
			    put(ko, "line", json_integer(k->line)) ||
			    put(ko, "kind", json_string(k->cuda ? "cuda" : "triton")) ||
			    (!k->cuda && put(ko, "has_tl_usage", json_boolean(k->computes))) ||
			    put(ko, "launched", json_boolean(k->launched)) ||
			    json_array_append_new(a, ko)) {
				json_decref(ko);
				json_decref(a);
				a = NULL;
			}
		}
		if (put(o, "kernels", a))
			goto fail;
		break;
	case KJ_VCHECK_CALLED:
		a = json_array();
		for (i = 0; a && i < res->n_called; i++)
			if (json_array_append_new(a, jstr(res->called[i]))) {
				json_decref(a);
				a = NULL;
			}
		if (put(o, "called", a))
			goto fail;
		break;
	case KJ_VCHECK_PLACEHOLDER:
		a = json_array();
		for (i = 0; a && i < res->n_kernels; i++)
			if (res->kernels[i].placeholder &&
			    json_array_append_new(a, jstr(res->kernels[i].name))) {
				json_decref(a);
				a = NULL;
			}
		if (put(o, "placeholders", a))
			goto fail;
		break;
	default:
		if (put(o, "violations", violations_json(res, c)))
			goto fail;
		break;
	}
	if (put(o, "error", res->failed[c] && res->check_error[c] ? jstr(res->check_error[c])
								  : json_null()))
		goto fail;
	return o;
fail:
	json_decref(o);
	return NULL;
}

json_t *kj_vresult_json(const struct kj_vresult *res, const char *filepath)
{
	json_t *o = json_object(), *checks = json_object();
	int c;

	if (!o || !checks)
		goto fail;
	if (put(o, "valid", json_boolean(res->regression_type == KJ_VTYPE_VALID)) ||
	    put(o, "filepath", jstr(filepath)) ||
	    put(o, "kind", json_string(res->kind == KJ_VKIND_CUDA ? "cuda" : "triton")) ||
	    put(o, "regression_type", res->regression_type == KJ_VTYPE_VALID
					      ? json_null()
					      : json_integer(res->regression_type)))
		goto fail;
	for (c = 0; c < KJ_VCHECK_COUNT_; c++) {
		if (c == KJ_VCHECK_HOST_LIBRARY && res->kind != KJ_VKIND_CUDA)
			continue;
		if (put(checks, kj_vcheck_name((enum kj_vcheck)c, res->kind),
			check_json(res, (enum kj_vcheck)c)))
			goto fail;
	}
	if (json_object_set_new(o, "checks", checks)) {
		checks = NULL;
		goto fail;
	}
	checks = NULL;
	if (put(o, "suggestion", jstr(res->suggestion)))
		goto fail;
	return o;
fail:
	json_decref(checks);
	json_decref(o);
	return NULL;
}

json_t *kj_vresult_error_json(const char *filepath, const char *message)
{
	json_t *o = json_object();

	if (!o || put(o, "valid", json_false()) || put(o, "filepath", jstr(filepath)) ||
	    put(o, "regression_type", json_null()) || put(o, "error", jstr(message))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

