/*
 * value.c - output trees: parsed from a worker's reply, compared leaf by
 * leaf (see kjudge/value.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kjudge/report.h"
#include "kjudge/tensor.h"
#include "kjudge/value.h"
#include "base/text.h"
#include "base/internal.h"

static const char *const kind_names[] = {
	"tensor", "int", "float", "bool", "str", "none", "list", "tuple", "dict", "other",
};

void kj_value_free(struct kj_value *v)
{
	size_t i, n;

	if (!v)
		return;
	n = v->kind == KJ_VAL_DICT ? 2 * v->n : v->n;
	for (i = 0; v->items && i < n; i++)
		kj_value_free(v->items[i]);
	free(v->items);
	free(v->text);
	free(v);
}

/* --- parsing ------------------------------------------------------------------ */

struct parse {
	size_t nodes;
	struct kj_error *err;
};

static int bad(struct parse *p, const char *what)
{
	return kj_error_set(p->err, KJ_EPROTOCOL, "malformed output description: %s", what);
}

static int parse_node(struct parse *p, const json_t *j, int depth, struct kj_value **out);

static int parse_items(struct parse *p, const json_t *items, struct kj_value *v,
		       int depth, int pairs)
{
	size_t i, n = json_array_size(items), k;

	if (!json_is_array(items))
		return bad(p, "items is not a list");
	v->n = n;
	if (!n)
		return KJ_OK;
	if (n > KJ_VALUE_MAX_NODES)
		return bad(p, "too many items");
	v->items = calloc(pairs ? 2 * n : n, sizeof(*v->items));
	if (!v->items)
		return kj_error_set(p->err, KJ_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		const json_t *e = json_array_get(items, i);
		int rc;

		if (!pairs) {
			rc = parse_node(p, e, depth + 1, &v->items[i]);
			if (rc != KJ_OK)
				return rc;
			continue;
		}
		if (!json_is_array(e) || json_array_size(e) != 2)
			return bad(p, "a dict item is not a [key, value] pair");
		for (k = 0; k < 2; k++) {
			rc = parse_node(p, json_array_get(e, k), depth + 1, &v->items[2 * i + k]);
			if (rc != KJ_OK)
				return rc;
		}
	}
	return KJ_OK;
}

static int parse_node(struct parse *p, const json_t *j, int depth, struct kj_value **out)
{
	const char *kind = json_string_value(json_object_get(j, "kind"));
	const json_t *val = json_object_get(j, "value");
	struct kj_value *v;
	size_t k;
	int rc = KJ_OK;

	*out = NULL;
	if (depth > KJ_VALUE_MAX_DEPTH)
		return bad(p, "nested too deeply");
	if (++p->nodes > KJ_VALUE_MAX_NODES)
		return bad(p, "too many values");
	if (!json_is_object(j) || !kind)
		return bad(p, "a value without a kind");
	for (k = 0; k < sizeof(kind_names) / sizeof(kind_names[0]); k++)
		if (!strcmp(kind, kind_names[k]))
			break;
	if (k == sizeof(kind_names) / sizeof(kind_names[0]))
		return bad(p, "an unknown kind");
	v = calloc(1, sizeof(*v));
	if (!v)
		return kj_error_set(p->err, KJ_ENOMEM, "out of memory");
	v->kind = (enum kj_value_kind)k;
	v->fd = -1;
	v->kept = -1;
	switch (v->kind) {
	case KJ_VAL_TENSOR: {
		const char *file = json_string_value(json_object_get(j, "file"));
		const json_t *fdj = json_object_get(j, "fd");
		const char *dt = json_string_value(json_object_get(j, "dtype"));
		const json_t *shape = json_object_get(j, "shape");
		char sealed[48];
		size_t d;

		const json_t *keptj = json_object_get(j, "kept");
		const char *mem = json_string_value(json_object_get(j, "device"));

		if (json_object_get(j, "device") &&
		    (!fdj || !mem || (strcmp(mem, "cuda") && strcmp(mem, "host")))) {
			rc = bad(p, "a device tensor without a descriptor or a known memory");
			break;
		}
		if (keptj && !fdj && !file) {
			if (!json_is_integer(keptj) || json_integer_value(keptj) < 0 ||
			    json_integer_value(keptj) > INT32_MAX) {
				rc = bad(p, "a kept tensor with a bad number");
				break;
			}
			v->kept = (int)json_integer_value(keptj);
			snprintf(sealed, sizeof(sealed), "kept output #%d", v->kept);
			file = sealed;
		} else if (fdj && !file && !keptj) {
			if (!json_is_integer(fdj) || json_integer_value(fdj) < 0 ||
			    json_integer_value(fdj) >= KJ_VALUE_MAX_NODES) {
				rc = bad(p, "a tensor with a bad descriptor index");
				break;
			}
			v->fd = (int)json_integer_value(fdj);
			v->dev = !mem ? KJ_DEV_NONE : !strcmp(mem, "cuda") ? KJ_DEV_CUDA : KJ_DEV_HOST;
			snprintf(sealed, sizeof(sealed), "%s output #%d",
				 mem ? "device" : "sealed", v->fd);
			file = sealed;
		} else if (keptj || fdj || !file || !*file || strchr(file, '/') ||
			   !strcmp(file, ".") || !strcmp(file, "..") || strlen(file) > 200 ||
			   !kj__utf8_valid(file, strlen(file))) {
			rc = bad(p, "a tensor without a plain file name or a descriptor");
			break;
		}
		if (!dt || strlen(dt) >= sizeof(v->dtype) || !json_is_array(shape) ||
		    json_array_size(shape) > KJ_MAX_DIMS) {
			rc = bad(p, "a tensor without a dtype or shape");
			break;
		}
		snprintf(v->dtype, sizeof(v->dtype), "%s", dt);
		v->ndim = (int)json_array_size(shape);
		for (d = 0; d < json_array_size(shape); d++) {
			const json_t *s = json_array_get(shape, d);

			if (!json_is_integer(s) || json_integer_value(s) < 0) {
				rc = bad(p, "a tensor with a bad shape");
				break;
			}
			v->shape[d] = json_integer_value(s);
		}
		if (rc == KJ_OK && !(v->text = strdup(file)))
			rc = kj_error_set(p->err, KJ_ENOMEM, "out of memory");
		break;
	}
	case KJ_VAL_INT: {
		const char *s = json_string_value(val);
		size_t i;

		if (!s || !*s || strlen(s) > 100000) {
			rc = bad(p, "an int without its decimal text");
			break;
		}
		for (i = s[0] == '-'; s[i]; i++)
			if (s[i] < '0' || s[i] > '9')
				break;
		if (s[i] || (s[0] == '-' && !s[1])) {
			rc = bad(p, "an int that is not decimal");
			break;
		}
		if (!(v->text = strdup(s)))
			rc = kj_error_set(p->err, KJ_ENOMEM, "out of memory");
		break;
	}
	case KJ_VAL_FLOAT: {
		const char *s = json_string_value(val);
		char *end;

		if (!s || !*s || strlen(s) > 64) {
			rc = bad(p, "a float without its text");
			break;
		}
		errno = 0;
		v->num = strtod(s, &end);
		if (*end) {
			rc = bad(p, "a float that does not parse");
			break;
		}
		if (!(v->text = strdup(s)))
			rc = kj_error_set(p->err, KJ_ENOMEM, "out of memory");
		break;
	}
	case KJ_VAL_BOOL:
		if (!json_is_boolean(val))
			rc = bad(p, "a bool without its value");
		v->boolean = json_is_true(val);
		break;
	case KJ_VAL_STR:
	case KJ_VAL_OTHER: {
		const char *s = json_string_value(v->kind == KJ_VAL_STR ? val
						  : json_object_get(j, "type"));

		if (!s) {
			rc = bad(p, v->kind == KJ_VAL_STR ? "a str without its value"
							 : "an object without its type");
			break;
		}
		if (!(v->text = kj__text_cleans(s, 1u << 20)))
			rc = kj_error_set(p->err, KJ_ENOMEM, "out of memory");
		break;
	}
	case KJ_VAL_NONE:
		break;
	case KJ_VAL_LIST:
	case KJ_VAL_TUPLE:
		rc = parse_items(p, json_object_get(j, "items"), v, depth, 0);
		break;
	case KJ_VAL_DICT:
		rc = parse_items(p, json_object_get(j, "items"), v, depth, 1);
		break;
	}
	if (rc != KJ_OK) {
		kj_value_free(v);
		return rc;
	}
	*out = v;
	return KJ_OK;
}

int kj_value_parse(const json_t *j, struct kj_value **out, struct kj_error *err)
{
	struct parse p = { 0, err };

	return parse_node(&p, j, 0, out);
}

/* --- the wire form back ------------------------------------------------------------ */

json_t *kj_value_json(const struct kj_value *v)
{
	json_t *o = json_object(), *items = NULL, *shape;
	size_t i;
	int bad_ = !o;

	if (bad_)
		return NULL;
	bad_ |= json_object_set_new(o, "kind", json_string(kind_names[v->kind]));
	switch (v->kind) {
	case KJ_VAL_TENSOR:
		shape = json_array();
		for (i = 0; shape && i < (size_t)v->ndim; i++)
			bad_ |= json_array_append_new(shape, json_integer(v->shape[i]));
		if (v->kept >= 0)
			bad_ |= json_object_set_new(o, "kept", json_integer(v->kept));
		else
			bad_ |= v->fd >= 0 ? json_object_set_new(o, "fd", json_integer(v->fd))
					   : json_object_set_new(o, "file", json_string(v->text));
		if (v->dev != KJ_DEV_NONE)
			bad_ |= json_object_set_new(o, "device", json_string(v->dev == KJ_DEV_CUDA
									      ? "cuda" : "host"));
		bad_ |= json_object_set_new(o, "dtype", json_string(v->dtype));
		bad_ |= json_object_set_new(o, "shape", shape);
		break;
	case KJ_VAL_INT:
	case KJ_VAL_FLOAT:
	case KJ_VAL_STR:
		bad_ |= json_object_set_new(o, "value", json_string(v->text));
		break;
	case KJ_VAL_OTHER:
		bad_ |= json_object_set_new(o, "type", json_string(v->text));
		break;
	case KJ_VAL_BOOL:
		bad_ |= json_object_set_new(o, "value", json_boolean(v->boolean));
		break;
	case KJ_VAL_NONE:
		break;
	case KJ_VAL_LIST:
	case KJ_VAL_TUPLE:
	case KJ_VAL_DICT:
		items = json_array();
		bad_ |= !items;
		for (i = 0; items && i < v->n; i++) {
			json_t *e;

			if (v->kind == KJ_VAL_DICT) {
				e = json_array();
				bad_ |= !e || json_array_append_new(e, kj_value_json(v->items[2 * i])) ||
					json_array_append_new(e, kj_value_json(v->items[2 * i + 1]));
			} else {
				e = kj_value_json(v->items[i]);
			}
			bad_ |= json_array_append_new(items, e);
		}
		bad_ |= json_object_set_new(o, "items", items);
		break;
	}
	if (bad_) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int add_bytes(void *ctx, const struct kj_value *leaf)
{
	double *sum = ctx, n = (double)kj_dtype_size(kj_dtype_from_name(leaf->dtype));
	int d;

	for (d = 0; d < leaf->ndim; d++)
		n *= (double)leaf->shape[d];
	*sum += n;
	return 0;
}

double kj_value_tensor_bytes(const struct kj_value *v)
{
	double sum = 0;

	if (v)
		kj_value_each_file(v, add_bytes, &sum);
	return sum;
}

int kj_value_each_file(const struct kj_value *v,
		       int (*fn)(void *ctx, const struct kj_value *leaf), void *ctx)
{
	size_t i, n;
	int rc;

	if (v->kind == KJ_VAL_TENSOR)
		return fn(ctx, v);
	n = v->kind == KJ_VAL_DICT ? 2 * v->n : v->n;
	for (i = 0; v->items && i < n; i++)
		if ((rc = kj_value_each_file(v->items[i], fn, ctx)) != 0)
			return rc;
	return 0;
}

/* --- descriptions --------------------------------------------------------------- */

void kj_value_describe(const struct kj_value *v, char *buf, size_t size)
{
	switch (v->kind) {
	case KJ_VAL_TENSOR: {
		char shape[200];
		size_t o = 0;
		int d;

		shape[0] = '\0';
		for (d = 0; d < v->ndim && o < sizeof(shape) - 24; d++)
			o += (size_t)snprintf(shape + o, sizeof(shape) - o, "%s%lld",
					      d ? ", " : "", (long long)v->shape[d]);
		snprintf(buf, size, "a %s tensor of shape [%s]", v->dtype, shape);
		break;
	}
	case KJ_VAL_INT:
		snprintf(buf, size, "the int %.40s%s", v->text, strlen(v->text) > 40 ? "..." : "");
		break;
	case KJ_VAL_FLOAT:
		snprintf(buf, size, "the float %.17g", v->num);
		break;
	case KJ_VAL_BOOL:
		snprintf(buf, size, "the bool %s", v->boolean ? "True" : "False");
		break;
	case KJ_VAL_STR:
		snprintf(buf, size, "a str of %zu bytes", strlen(v->text));
		break;
	case KJ_VAL_NONE:
		snprintf(buf, size, "None");
		break;
	case KJ_VAL_LIST:
	case KJ_VAL_TUPLE:
		snprintf(buf, size, "a %s of %zu item%s", kind_names[v->kind], v->n,
			 v->n == 1 ? "" : "s");
		break;
	case KJ_VAL_DICT:
		snprintf(buf, size, "a dict of %zu key%s", v->n, v->n == 1 ? "" : "s");
		break;
	case KJ_VAL_OTHER: {
		size_t n = kj__utf8_prefix(v->text, strlen(v->text), 100);

		snprintf(buf, size, "a %.*s (not a tensor)", (int)n, v->text);
		break;
	}
	}
}

int kj_value_unsupported(const struct kj_value *v, char *why, size_t size)
{
	size_t i, n;

	if (v->kind == KJ_VAL_OTHER) {
		kj_value_describe(v, why, size);
		return 1;
	}
	if (v->kind == KJ_VAL_TENSOR && kj_dtype_from_name(v->dtype) == KJ_DTYPE_INVALID) {
		snprintf(why, size, "a %s tensor (complex and other such dtypes are not "
			 "supported)", v->dtype);
		return 1;
	}
	n = v->kind == KJ_VAL_DICT ? 2 * v->n : v->n;
	for (i = 0; v->items && i < n; i++)
		if (kj_value_unsupported(v->items[i], why, size))
			return 1;
	return 0;
}

/* --- comparison ------------------------------------------------------------------- */

struct cmp {
	const char *ref_dir;
	const int *fds;
	size_t n_fds;
	const struct kj_cmp_options *copt;
	struct kj_case *c;
	int index;
	struct kj_error *err;
};

/* A failure of the candidate at `path` (e.g. "output 2[0]"). */
static int mismatch(struct cmp *m, enum kj_etype t, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int mismatch(struct cmp *m, enum kj_etype t, const char *path, const char *fmt, ...)
{
	char detail[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	m->c->output = m->index;
	if (kj_case_fail(m->c, t, "%s: %s", path, detail) != KJ_OK)
		return kj_error_set(m->err, KJ_ENOMEM, "out of memory");
	return KJ_OK;
}

/* The seals an output's memory file must hold: nobody can write it, grow it
 * or shrink it any more, nor take the seals off. */
#define SEALED (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

/* Load a candidate's tensor from the descriptor its leaf names: a memfd
 * sealed (SEALED) so that what is mapped can neither change nor be cut
 * short.  Returns KJ_OK, or a code with why filled. */
static int load_cand(const int *fds, size_t n_fds, const struct kj_value *v,
		     struct kj_tensor *t, char *why, size_t size)
{
	struct kj_error e;
	struct stat st;
	int fd, seals, rc;

	if (v->fd < 0) {
		snprintf(why, size, "'%.200s' is a file name: a candidate's outputs come as "
			 "sealed memory files passed with its reply, never as paths", v->text);
		return KJ_EPROTOCOL;
	}
	if ((size_t)v->fd >= n_fds) {
		snprintf(why, size, "%.60s: the reply came with %zu descriptor%s", v->text,
			 n_fds, n_fds == 1 ? "" : "s");
		return KJ_EPROTOCOL;
	}
	fd = fds[v->fd];
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, size, "%.60s is not a regular file", v->text);
		return KJ_EPROTOCOL;
	}
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || (seals & SEALED) != SEALED) {
		snprintf(why, size, "%.60s is not a memory file sealed against writes, growth "
			 "and shrinking (seals %#x)", v->text, seals < 0 ? 0 : (unsigned)seals);
		return KJ_EPROTOCOL;
	}
	rc = kj_npy_load_fd(t, fd, v->text, &e);
	if (rc != KJ_OK) {
		snprintf(why, size, "%.60s: %.300s", v->text, e.msg);
		return rc == KJ_ENOMEM ? KJ_ENOMEM : KJ_EPROTOCOL;
	}
	return KJ_OK;
}

/* The logical dtype of a tensor leaf over the storage dtype of its file. */
static int as_logical(struct kj_tensor *t, const struct kj_value *v, char *why, size_t size)
{
	enum kj_dtype dt = kj_dtype_from_name(v->dtype);
	struct kj_error e;
	int d;

	if (dt == KJ_DTYPE_INVALID) {
		snprintf(why, size, "unsupported dtype '%.30s'", v->dtype);
		return KJ_EDTYPE;
	}
	if (kj_tensor_reinterpret(t, dt, &e) != KJ_OK) {
		snprintf(why, size, "the file's data is not %s: %.300s", v->dtype, e.msg);
		return KJ_EPROTOCOL;
	}
	if (t->ndim != v->ndim) {
		snprintf(why, size, "the file's shape is not the one its reply gave");
		return KJ_EPROTOCOL;
	}
	for (d = 0; d < t->ndim; d++)
		if (t->shape[d] != v->shape[d]) {
			snprintf(why, size, "the file's shape is not the one its reply gave");
			return KJ_EPROTOCOL;
		}
	return KJ_OK;
}

/*
 * A complex actual where the reference returned a real tensor: the cast to
 * the golden's dtype would drop the imaginary part, so it fails whatever its
 * values (a complex tensor has no kj_dtype; the worker names it as "other",
 * "complex64 tensor", or a forged reply as a tensor of dtype "complex64").
 * 1 when `what` (the actual's dtype or type name) is complex and c holds the
 * failure, 0 when it is not complex; *rc the code.
 */
static int complex_into_real(struct cmp *m, const struct kj_value *r, const char *what,
			     const char *path, int *rc)
{
	char rd[240];

	if (r->kind != KJ_VAL_TENSOR || strncmp(what, "complex", 7) != 0)
		return 0;
	kj_value_describe(r, rd, sizeof(rd));
	*rc = mismatch(m, KJ_ET_OUTPUT_TYPE, path, "the candidate returned a %.40s%s where the "
		       "reference returned %s: casting a complex to a real dtype drops the "
		       "imaginary part", what, strstr(what, " tensor") ? "" : " tensor", rd);
	return 1;
}

static int cmp_tensor(struct cmp *m, const struct kj_value *r, const struct kj_value *a,
		      const char *path, int *same)
{
	struct kj_tensor g, t;
	struct kj_cmp_result res;
	struct kj_error e;
	char gpath[4352], why[400];
	int rc;

	/* Outputs held on a device are compared there (devcmp.c); one that
	 * reaches this comparison is never a pass. */
	if (r->kept >= 0 || a->kept >= 0 || a->dev != KJ_DEV_NONE || r->dev != KJ_DEV_NONE)
		return kj_error_set(m->err, KJ_EINVAL, "internal: %s is held on a device, "
				    "not in a file", path);
	kj_tensor_init(&g);
	kj_tensor_init(&t);
	if (snprintf(gpath, sizeof(gpath), "%s/%s", m->ref_dir, r->text) >= (int)sizeof(gpath))
		return kj_error_set(m->err, KJ_EINVAL, "golden path too long");
	rc = kj_npy_load(&g, gpath, &e);
	if (rc == KJ_OK && as_logical(&g, r, why, sizeof(why)) != KJ_OK) {
		kj_tensor_release(&g);
		return kj_error_set(m->err, KJ_EIO, "golden output '%s': %s", gpath, why);
	}
	if (rc != KJ_OK)
		return kj_error_set(m->err, rc == KJ_ENOMEM ? KJ_ENOMEM : KJ_EIO,
				    "golden output: %s", e.msg);
	if (complex_into_real(m, r, a->dtype, path, &rc)) {
		kj_tensor_release(&g);
		return rc;
	}
	rc = load_cand(m->fds, m->n_fds, a, &t, why, sizeof(why));
	if (rc == KJ_OK)
		rc = as_logical(&t, a, why, sizeof(why));
	if (rc != KJ_OK) {
		kj_tensor_release(&g);
		kj_tensor_release(&t);
		if (rc == KJ_ENOMEM || rc == KJ_EIO)
			return kj_error_set(m->err, rc, "candidate output: %s", why);
		return mismatch(m, rc == KJ_EDTYPE ? KJ_ET_OUTPUT_TYPE : KJ_ET_PROTOCOL, path,
				"%s", why);
	}
	rc = kj_compare(&g, &t, m->copt, &res, &e);
	kj_tensor_release(&g);
	kj_tensor_release(&t);
	if (rc != KJ_OK)
		return kj_error_set(m->err, rc, "comparing %s: %s", path, e.msg);
	if (res.pass) {
		*same = 1;
		return KJ_OK;
	}
	rc = mismatch(m, KJ_ET_ACCURACY, path, "%s", res.message);
	if (rc != KJ_OK)
		return rc;
	json_decref(m->c->metrics);
	m->c->metrics = kj_cmp_result_json(&res);
	if (!m->c->metrics)
		return kj_error_set(m->err, KJ_ENOMEM, "out of memory");
	return KJ_OK;
}

/* Two Python numbers, at least one of them a float: the float64 rule. */
static int floats_match(double g, double a)
{
	const double t = 1.0 / 8192.0;

	if (isnan(g) || isnan(a))
		return isnan(g) && isnan(a);
	if (isinf(g) || isinf(a))
		return g == a;
	return fabs(a - g) / fmax(fabs(g), t) < t;
}

static int number(const struct kj_value *v)
{
	return v->kind == KJ_VAL_INT || v->kind == KJ_VAL_FLOAT;
}

static int is_seq(const struct kj_value *v)
{
	return v->kind == KJ_VAL_LIST || v->kind == KJ_VAL_TUPLE;
}

/* Keys of a dict match when they are the same scalar. */
static int key_equal(const struct kj_value *x, const struct kj_value *y)
{
	if (x->kind != y->kind)
		return 0;
	switch (x->kind) {
	case KJ_VAL_INT:
	case KJ_VAL_STR:
		return !strcmp(x->text, y->text);
	case KJ_VAL_FLOAT:
		return x->num == y->num || (isnan(x->num) && isnan(y->num));
	case KJ_VAL_BOOL:
		return x->boolean == y->boolean;
	case KJ_VAL_NONE:
		return 1;
	default:
		return 0;
	}
}

static void key_text(const struct kj_value *k, char *buf, size_t size)
{
	if (k->kind == KJ_VAL_STR)
		snprintf(buf, size, "'%.60s'", k->text);
	else if (k->kind == KJ_VAL_INT)
		snprintf(buf, size, "%.40s", k->text);
	else
		kj_value_describe(k, buf, size);
}

static int cmp_node(struct cmp *m, const struct kj_value *r, const struct kj_value *a,
		    const char *path, int *same)
{
	char rd[240], ad[240], sub[512];
	size_t i, j;
	int rc;

	*same = 0;
	if (r->kind == KJ_VAL_TENSOR && a->kind == KJ_VAL_TENSOR)
		return cmp_tensor(m, r, a, path, same);
	if (a->kind == KJ_VAL_OTHER && complex_into_real(m, r, a->text, path, &rc))
		return rc;
	if (number(r) && number(a)) {
		if (r->kind == KJ_VAL_INT && a->kind == KJ_VAL_INT) {
			if (!strcmp(r->text, a->text))
				return *same = 1, KJ_OK;
		} else if (floats_match(r->kind == KJ_VAL_INT ? strtod(r->text, NULL) : r->num,
					a->kind == KJ_VAL_INT ? strtod(a->text, NULL) : a->num)) {
			return *same = 1, KJ_OK;
		}
		kj_value_describe(r, rd, sizeof(rd));
		kj_value_describe(a, ad, sizeof(ad));
		return mismatch(m, KJ_ET_ACCURACY, path, "the reference returned %s, the "
				"candidate %s", rd, ad);
	}
	if (!(is_seq(r) && is_seq(a)) && r->kind != a->kind) {
		kj_value_describe(r, rd, sizeof(rd));
		kj_value_describe(a, ad, sizeof(ad));
		return mismatch(m, KJ_ET_OUTPUT_TYPE, path, "the reference returned %s, the "
				"candidate %s", rd, ad);
	}
	switch (r->kind) {
	case KJ_VAL_BOOL:
		if (r->boolean == a->boolean)
			return *same = 1, KJ_OK;
		return mismatch(m, KJ_ET_ACCURACY, path, "the reference returned %s, the "
				"candidate %s", r->boolean ? "True" : "False",
				a->boolean ? "True" : "False");
	case KJ_VAL_STR:
		if (!strcmp(r->text, a->text))
			return *same = 1, KJ_OK;
		return mismatch(m, KJ_ET_ACCURACY, path, "the strings differ: reference "
				"'%.80s', candidate '%.80s'", r->text, a->text);
	case KJ_VAL_NONE:
		return *same = 1, KJ_OK;
	case KJ_VAL_LIST:
	case KJ_VAL_TUPLE:
		if (r->n != a->n) {
			kj_value_describe(r, rd, sizeof(rd));
			kj_value_describe(a, ad, sizeof(ad));
			return mismatch(m, KJ_ET_OUTPUT_TYPE, path, "the reference returned %s, "
					"the candidate %s", rd, ad);
		}
		for (i = 0; i < r->n; i++) {
			snprintf(sub, sizeof(sub), "%.400s[%zu]", path, i);
			rc = cmp_node(m, r->items[i], a->items[i], sub, same);
			if (rc != KJ_OK || !*same)
				return rc;
		}
		return *same = 1, KJ_OK;
	case KJ_VAL_DICT:
		if (r->n != a->n) {
			kj_value_describe(r, rd, sizeof(rd));
			kj_value_describe(a, ad, sizeof(ad));
			return mismatch(m, KJ_ET_OUTPUT_TYPE, path, "the reference returned %s, "
					"the candidate %s", rd, ad);
		}
		for (i = 0; i < r->n; i++) {
			const struct kj_value *rk = r->items[2 * i];

			key_text(rk, rd, sizeof(rd));
			for (j = 0; j < a->n; j++)
				if (key_equal(rk, a->items[2 * j]))
					break;
			if (j == a->n)
				return mismatch(m, KJ_ET_OUTPUT_TYPE, path, "the candidate's "
						"dict has no key %s", rd);
			snprintf(sub, sizeof(sub), "%.300s[%.200s]", path, rd);
			rc = cmp_node(m, r->items[2 * i + 1], a->items[2 * j + 1], sub, same);
			if (rc != KJ_OK || !*same)
				return rc;
		}
		return *same = 1, KJ_OK;
	default:
		/* "other" on the reference side: the caller checks
		 * kj_value_unsupported first; never a pass here. */
		kj_value_describe(r, rd, sizeof(rd));
		return mismatch(m, KJ_ET_OUTPUT_TYPE, path, "the reference returned %s, which "
				"cannot be compared", rd);
	}
}

int kj_value_compare(const struct kj_value *ref, const char *ref_dir,
		     const struct kj_value *cand, const int *cand_fds, size_t n_fds,
		     const struct kj_cmp_options *copt, int index,
		     struct kj_case *c, int *same, struct kj_error *err)
{
	struct cmp m = { ref_dir, cand_fds, n_fds, copt, c, index, err };
	char path[32];

	*same = 0;
	snprintf(path, sizeof(path), "output %d", index);
	return cmp_node(&m, ref, cand, path, same);
}

static void held(const struct kj_value *v, int depth, struct kj_value_held *h)
{
	size_t i, n;

	if (v->kind == KJ_VAL_TENSOR) {
		h->tensors++;
		h->kept += v->kept >= 0;
		h->dev += v->dev != KJ_DEV_NONE;
		h->nested += depth > 1 && (v->kept >= 0 || v->dev != KJ_DEV_NONE);
		return;
	}
	n = v->kind == KJ_VAL_DICT ? 2 * v->n : v->n;
	for (i = 0; v->items && i < n; i++)
		held(v->items[i], depth + 1, h);
}

void kj_value_held(const struct kj_value *v, struct kj_value_held *h)
{
	memset(h, 0, sizeof(*h));
	if (v)
		held(v, 0, h);
}
