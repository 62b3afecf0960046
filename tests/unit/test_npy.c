/*
 * test_npy.c - the .npy reader and writer, and the tensor helpers.
 *
 * Header parsing is table-driven: each good header is parsed in all three
 * format versions, each bad one must fail with its own error code and a
 * message that says why.  Parsed buffers are copied into allocations of
 * exactly their length, so that a sanitizer build catches any read past
 * the end.  Loading and saving go through real files in the test's scratch
 * directory; tests/cli/t0100-npy-numpy.sh checks the same code against
 * numpy itself.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "kjudge/dtype.h"
#include "kjudge/error.h"
#include "kjudge/tensor.h"
#include "unit.h"

/* --- helpers -------------------------------------------------------------- */

static int host_big_endian(void)
{
	const uint16_t one = 1;

	return *(const unsigned char *)&one == 0;
}

/*
 * A .npy header around `dict`: magic, version major.0, the length field,
 * the dict, then (if `terminate`) spaces and '\n' up to a multiple of 64
 * bytes, as numpy pads it.  Returns the total length.
 */
static size_t mkhdr(unsigned char *out, size_t size, int major,
		    const char *dict, int terminate)
{
	size_t prefix = major == 1 ? 10 : 12, n = strlen(dict), hlen, total;

	total = prefix + n;
	if (terminate)
		total = (total + 1 + 63) / 64 * 64;
	KJ_CHECK(total <= size);
	hlen = total - prefix;
	memcpy(out, "\x93NUMPY", 6);
	out[6] = (unsigned char)major;
	out[7] = 0;
	out[8] = (unsigned char)(hlen & 0xff);
	out[9] = (unsigned char)(hlen >> 8 & 0xff);
	if (major > 1) {
		out[10] = (unsigned char)(hlen >> 16 & 0xff);
		out[11] = (unsigned char)(hlen >> 24 & 0xff);
	}
	memcpy(out + prefix, dict, n);
	if (terminate) {
		memset(out + prefix + n, ' ', total - prefix - n - 1);
		out[total - 1] = '\n';
	}
	return total;
}

/* Parse a copy of `bytes` held in an allocation of exactly `n` bytes. */
static int parse_exact(const void *bytes, size_t n, struct kj_npy_header *h,
		       struct kj_error *e)
{
	unsigned char *copy = malloc(n ? n : 1);
	int rc;

	KJ_CHECK(copy);
	if (n)
		memcpy(copy, bytes, n);
	kj_error_clear(e);
	rc = kj_npy_parse_header(n ? copy : NULL, n, h, e);
	free(copy);
	return rc;
}

/* A failure must carry its code and a one-line message. */
static void check_error(int rc, const struct kj_error *e, int want,
			const char *substr, const char *what)
{
	if (rc != want)
		kj_test_fail(__FILE__, __LINE__, "%s: got %s (%s), want %s",
			     what, kj_err_name(rc), e->msg, kj_err_name(want));
	KJ_CHECK_INT(e->code, want);
	KJ_CHECK(e->msg[0] != '\0');
	KJ_CHECK(strchr(e->msg, '\n') == NULL);
	if (substr && !strstr(e->msg, substr))
		kj_test_fail(__FILE__, __LINE__, "%s: message \"%s\" lacks \"%s\"",
			     what, e->msg, substr);
}

static void write_bytes(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	KJ_CHECK(f);
	KJ_CHECK(n == 0 || fwrite(p, 1, n, f) == n);
	KJ_CHECK(fclose(f) == 0);
}

static unsigned char *read_bytes(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *p;
	long len;

	KJ_CHECK(f);
	KJ_CHECK(fseek(f, 0, SEEK_END) == 0);
	len = ftell(f);
	KJ_CHECK(len >= 0);
	rewind(f);
	p = malloc((size_t)len + 1);
	KJ_CHECK(p);
	KJ_CHECK(fread(p, 1, (size_t)len, f) == (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return p;
}

/* Number of entries in the scratch directory (temporary files included). */
static int count_files(void)
{
	DIR *d = opendir(kj_test_tmpdir());
	struct dirent *e;
	int n = 0;

	KJ_CHECK(d);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void check_empty(const struct kj_tensor *t)
{
	KJ_CHECK(t->data == NULL);
	KJ_CHECK(t->mem == KJ_TENSOR_MEM_NONE);
	KJ_CHECK(t->map_base == NULL);
	KJ_CHECK_INT(t->nelem, 0);
}

/* --- good headers --------------------------------------------------------- */

struct good {
	const char *dict;
	enum kj_dtype dt;
	int big;          /* -1: the host's byte order */
	int fortran;
	int ndim;
	int64_t shape[4];
	int py2;          /* uses Python 2's "3L": formats 1.0 and 2.0 only */
};

static const struct good goods[] = {
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
	  KJ_DTYPE_FLOAT32, 0, 0, 2, { 2, 3 }, 0 },
	{ "{'descr': '>f8', 'fortran_order': True, 'shape': (4,), }",
	  KJ_DTYPE_FLOAT64, 1, 1, 1, { 4 }, 0 },
	{ "{'descr': '|b1', 'fortran_order': False, 'shape': (), }",
	  KJ_DTYPE_BOOL, 0, 0, 0, { 0 }, 0 },
	{ "{\"descr\": \"<i8\", \"fortran_order\": False, \"shape\": (0,)}",
	  KJ_DTYPE_INT64, 0, 0, 1, { 0 }, 0 },
	{ "{'shape': (3, 0), 'descr': '>u2', 'fortran_order': False}",
	  KJ_DTYPE_UINT16, 1, 0, 2, { 3, 0 }, 0 },
	{ " { 'fortran_order' :\tTrue ,\r\n 'shape':(7,1,2,),'descr':'<f2' , } ",
	  KJ_DTYPE_FLOAT16, 0, 1, 3, { 7, 1, 2 }, 0 },
	{ "{'descr': '?', 'fortran_order': False, 'shape': (1,), }",
	  KJ_DTYPE_BOOL, 0, 0, 1, { 1 }, 0 },
	{ "{'descr': '<?', 'fortran_order': False, 'shape': (1,), }",
	  KJ_DTYPE_BOOL, 0, 0, 1, { 1 }, 0 },
	{ "{'descr': '>i1', 'fortran_order': False, 'shape': (1,), }",
	  KJ_DTYPE_INT8, 0, 0, 1, { 1 }, 0 },
	{ "{'descr': '|u1', 'fortran_order': False, 'shape': (10,), }",
	  KJ_DTYPE_UINT8, 0, 0, 1, { 10 }, 0 },
	{ "{'descr': '=i4', 'fortran_order': False, 'shape': (1,), }",
	  KJ_DTYPE_INT32, -1, 0, 1, { 1 }, 0 },
	{ "{'descr': 'u8', 'fortran_order': False, 'shape': (1,), }",
	  KJ_DTYPE_UINT64, -1, 0, 1, { 1 }, 0 },
	{ "{'descr': '>i2', 'fortran_order': False, 'shape': (1,), }",
	  KJ_DTYPE_INT16, 1, 0, 1, { 1 }, 0 },
	{ "{'descr': '<u4', 'fortran_order': False, 'shape': (1,), }",
	  KJ_DTYPE_UINT32, 0, 0, 1, { 1 }, 0 },
	{ "{'descr': '<i2', 'fortran_order': False, 'shape': (3L, 4L), }",
	  KJ_DTYPE_INT16, 0, 0, 2, { 3, 4 }, 1 },
	/* A zero dimension empties the tensor whatever the others are. */
	{ "{'descr': '|u1', 'fortran_order': False, 'shape': (9223372036854775807, 0), }",
	  KJ_DTYPE_UINT8, 0, 0, 2, { INT64_MAX, 0 }, 0 },
	{ "{'fortran_order': False, \"shape\": (5, 4, 3, 2), 'descr': \"<f8\",}",
	  KJ_DTYPE_FLOAT64, 0, 0, 4, { 5, 4, 3, 2 }, 0 },
};

KJ_TEST(npy_header_good)
{
	unsigned char buf[512];
	struct kj_npy_header h;
	struct kj_error e;
	size_t i, n, nelem, k;
	int major, rc;

	for (i = 0; i < sizeof(goods) / sizeof(goods[0]); i++) {
		const struct good *g = &goods[i];

		for (major = 1; major <= 3; major++) {
			n = mkhdr(buf, sizeof(buf), major, g->dict, 1);
			rc = parse_exact(buf, n, &h, &e);
			if (g->py2 && major == 3) {
				check_error(rc, &e, KJ_ENPY_HEADER, NULL,
					    g->dict);
				continue;
			}
			if (rc != KJ_OK)
				kj_test_fail(__FILE__, __LINE__, "%s (v%d): %s",
					     g->dict, major, e.msg);
			KJ_CHECK_INT(h.major, major);
			KJ_CHECK_INT(h.minor, 0);
			KJ_CHECK_INT(h.data_offset, n);
			KJ_CHECK_INT(h.dtype, g->dt);
			KJ_CHECK_INT(h.big_endian,
				     g->big < 0 ? host_big_endian() : g->big);
			KJ_CHECK_INT(h.fortran_order, g->fortran);
			KJ_CHECK_INT(h.ndim, g->ndim);
			nelem = 1;
			for (k = 0; k < (size_t)g->ndim; k++) {
				KJ_CHECK_INT(h.shape[k], g->shape[k]);
				if (g->shape[k] == 0)
					nelem = 0;
				else
					nelem *= (size_t)g->shape[k];
			}
			KJ_CHECK_INT(h.nelem, nelem);
			KJ_CHECK_INT(h.nbytes, nelem * kj_dtype_size(g->dt));
			/* Bytes after the header are data, not header. */
			memset(buf + n, 0xee, 16);
			KJ_CHECK_OK(parse_exact(buf, n + 16, &h, &e), &e);
			KJ_CHECK_INT(h.data_offset, n);
		}
	}
}

KJ_TEST(npy_header_max_dims)
{
	char dict[512];
	unsigned char buf[1024];
	struct kj_npy_header h;
	struct kj_error e;
	size_t n;
	int i, len;

	/* Exactly KJ_MAX_DIMS dimensions are fine, one more is not. */
	len = snprintf(dict, sizeof(dict),
		       "{'descr': '<f4', 'fortran_order': False, 'shape': (");
	for (i = 0; i < KJ_MAX_DIMS; i++)
		len += snprintf(dict + len, sizeof(dict) - (size_t)len, "1, ");
	snprintf(dict + len, sizeof(dict) - (size_t)len, "), }");
	n = mkhdr(buf, sizeof(buf), 1, dict, 1);
	KJ_CHECK_OK(parse_exact(buf, n, &h, &e), &e);
	KJ_CHECK_INT(h.ndim, KJ_MAX_DIMS);
	KJ_CHECK_INT(h.nelem, 1);
	KJ_CHECK_INT(h.nbytes, 4);

	snprintf(dict + len, sizeof(dict) - (size_t)len, "1, ), }");
	n = mkhdr(buf, sizeof(buf), 1, dict, 1);
	check_error(parse_exact(buf, n, &h, &e), &e, KJ_ESHAPE,
		    "more than 64 dimensions", "65 dims");
	KJ_CHECK_INT(h.ndim, 0); /* zeroed on error */
}

/* --- bad headers ---------------------------------------------------------- */

struct bad {
	const char *dict;
	int major;
	int terminate;
	int code;
	const char *msg; /* a part of the message, or NULL */
};

#define F4 "'descr': '<f4', 'fortran_order': False"

static const struct bad bads[] = {
	/* Structure of the dict. */
	{ "{" F4 ", 'shape': (3,), ", 1, 1, KJ_ENPY_HEADER, "expected" },
	{ "{" F4 ", 'shape': (3,)", 1, 0, KJ_ENPY_HEADER, "newline" },
	{ "{" F4 ", 'shape': (3,)}", 1, 0, KJ_ENPY_HEADER, "newline" },
	{ "{" F4 "}", 1, 1, KJ_ENPY_HEADER, "missing key 'shape'" },
	{ "{'shape': (3,), 'fortran_order': False}", 1, 1, KJ_ENPY_HEADER,
	  "missing key 'descr'" },
	{ "{'shape': (3,), 'descr': '<f4'}", 1, 1, KJ_ENPY_HEADER,
	  "missing key 'fortran_order'" },
	{ "{}", 1, 1, KJ_ENPY_HEADER, "missing key" },
	{ "", 1, 1, KJ_ENPY_HEADER, "expected '{'" },
	{ "{" F4 ", 'shape': (3,), 'descr': '<f4'}", 1, 1, KJ_ENPY_HEADER,
	  "duplicate key 'descr' at byte 66" },
	{ "{" F4 ", 'shape': (3,), 'fortran_order': True}", 1, 1,
	  KJ_ENPY_HEADER, "duplicate key 'fortran_order'" },
	{ "{" F4 ", 'shape': (3,), 'foo': 1}", 1, 1, KJ_ENPY_HEADER,
	  "unknown key 'foo'" },
	{ "{" F4 ", 'Shape': (3,)}", 1, 1, KJ_ENPY_HEADER, "unknown key" },
	{ "{'d\xc3\xa9scr': '<f4', 'fortran_order': False, 'shape': (3,)}", 3, 1,
	  KJ_ENPY_HEADER, "unknown key 'd??scr'" },
	{ "{" F4 ", 'shape': (3,)} x", 1, 1, KJ_ENPY_HEADER, "after the dict" },
	{ "{" F4 ", 'shape': (3,)}}", 1, 1, KJ_ENPY_HEADER, "after the dict" },
	{ "{" F4 ", 'shape': (3,)}\n\n{", 1, 1, KJ_ENPY_HEADER, "after the dict" },
	{ "[1, 2]", 1, 1, KJ_ENPY_HEADER, "expected '{'" },
	{ "{descr: '<f4'}", 1, 1, KJ_ENPY_HEADER, "quoted key" },
	{ "{'descr' '<f4', 'fortran_order': False, 'shape': (3,)}", 1, 1,
	  KJ_ENPY_HEADER, "':'" },
	{ "{'descr': '<f4' 'fortran_order': False, 'shape': (3,)}", 1, 1,
	  KJ_ENPY_HEADER, "',' or '}'" },
	{ "{,}", 1, 1, KJ_ENPY_HEADER, NULL },
	{ "{" F4 ",, 'shape': (3,)}", 1, 1, KJ_ENPY_HEADER, NULL },
	/* Strings. */
	{ "{'de\\x73cr': '<f4', 'fortran_order': False, 'shape': (3,)}", 1, 1,
	  KJ_ENPY_HEADER, "escape" },
	{ "{'descr: '<f4', 'fortran_order': False, 'shape': (3,)}", 1, 1,
	  KJ_ENPY_HEADER, NULL },
	{ "{'descr': '<f4, 'fortran_order': False, 'shape': (3,)}", 1, 1,
	  KJ_ENPY_HEADER, NULL },
	{ "{'descr': '<f4\n', 'fortran_order': False, 'shape': (3,)}", 1, 1,
	  KJ_ENPY_HEADER, "unterminated string" },
	{ "{'descr': \"<f4', 'fortran_order': False, 'shape': (3,)}", 1, 1,
	  KJ_ENPY_HEADER, "unterminated string" },
	/* fortran_order. */
	{ "{'descr': '<f4', 'fortran_order': false, 'shape': (3,)}", 1, 1,
	  KJ_ENPY_HEADER, "True or False" },
	{ "{'descr': '<f4', 'fortran_order': 0, 'shape': (3,)}", 1, 1,
	  KJ_ENPY_HEADER, "True or False" },
	{ "{'descr': '<f4', 'fortran_order': Truex, 'shape': (3,)}", 1, 1,
	  KJ_ENPY_HEADER, "True or False" },
	{ "{'descr': '<f4', 'fortran_order': 'True', 'shape': (3,)}", 1, 1,
	  KJ_ENPY_HEADER, "True or False" },
	/* shape. */
	{ "{" F4 ", 'shape': (-1,)}", 1, 1, KJ_ESHAPE, "negative" },
	{ "{" F4 ", 'shape': (2, -3)}", 1, 1, KJ_ESHAPE, "negative" },
	{ "{" F4 ", 'shape': (99999999999999999999,)}", 1, 1, KJ_EOVERFLOW,
	  "too large" },
	{ "{" F4 ", 'shape': (9223372036854775808,)}", 1, 1, KJ_EOVERFLOW,
	  "too large" },
	{ "{" F4 ", 'shape': (9223372036854775807,)}", 1, 1, KJ_EOVERFLOW,
	  "overflows" },
	/* The file's size, header (128 bytes here) plus data, must fit an
	 * off_t; found by the fuzzer.  The largest size that does is in
	 * npy_header_largest. */
	{ "{'descr': '|u1', 'fortran_order': False, 'shape': (9223372036854775807,)}",
	  1, 1, KJ_EOVERFLOW, "overflows" },
	{ "{'descr': '|u1', 'fortran_order': False, 'shape': (9223372036854775680,)}",
	  1, 1, KJ_EOVERFLOW, "overflows" },
	{ "{'descr': '|u1', 'fortran_order': False, 'shape': (4294967296, 4294967296)}",
	  1, 1, KJ_EOVERFLOW, "overflows" },
	{ "{'descr': '|u1', 'fortran_order': False, 'shape': (4294967296, 0, 4294967296)}",
	  1, 1, KJ_EOVERFLOW, "overflows" },
	{ "{" F4 ", 'shape': (5)}", 1, 1, KJ_ENPY_HEADER, "trailing comma" },
	{ "{" F4 ", 'shape': [2, 3]}", 1, 1, KJ_ENPY_HEADER, "tuple" },
	{ "{" F4 ", 'shape': 3}", 1, 1, KJ_ENPY_HEADER, "tuple" },
	{ "{" F4 ", 'shape': (05,)}", 1, 1, KJ_ENPY_HEADER, "leading zero" },
	{ "{" F4 ", 'shape': (1_0,)}", 1, 1, KJ_ENPY_HEADER, NULL },
	{ "{" F4 ", 'shape': (3L,)}", 3, 1, KJ_ENPY_HEADER, NULL },
	{ "{" F4 ", 'shape': (3l,)}", 1, 1, KJ_ENPY_HEADER, NULL },
	{ "{" F4 ", 'shape': (,)}", 1, 1, KJ_ENPY_HEADER, "dimension" },
	{ "{" F4 ", 'shape': (2 3)}", 1, 1, KJ_ENPY_HEADER, NULL },
	{ "{" F4 ", 'shape': (2,,)}", 1, 1, KJ_ENPY_HEADER, NULL },
	{ "{" F4 ", 'shape': (+2,)}", 1, 1, KJ_ENPY_HEADER, NULL },
	{ "{" F4 ", 'shape': (2.0,)}", 1, 1, KJ_ENPY_HEADER, NULL },
	{ "{" F4 ", 'shape': (0x10,)}", 1, 1, KJ_ENPY_HEADER, NULL },
	{ "{" F4 ", 'shape': (3,}", 1, 1, KJ_ENPY_HEADER, NULL },
	{ "{" F4 ", 'shape': (3,", 1, 1, KJ_ENPY_HEADER, NULL },
	/* descr. */
	{ "{'descr': '<c8', 'fortran_order': False, 'shape': (3,)}", 1, 1,
	  KJ_EDTYPE, "'<c8'" },
	{ "{'descr': '|O', 'fortran_order': False, 'shape': (3,)}", 1, 1,
	  KJ_EDTYPE, "'|O'" },
	{ "{'descr': '<U3', 'fortran_order': False, 'shape': (3,)}", 1, 1,
	  KJ_EDTYPE, "'<U3'" },
	{ "{'descr': '|S5', 'fortran_order': False, 'shape': (3,)}", 1, 1,
	  KJ_EDTYPE, "'|S5'" },
	{ "{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (3,)}", 1, 1,
	  KJ_EDTYPE, "'<M8[ns]'" },
	{ "{'descr': '|V8', 'fortran_order': False, 'shape': (3,)}", 1, 1,
	  KJ_EDTYPE, NULL },
	{ "{'descr': '<f16', 'fortran_order': False, 'shape': (3,)}", 1, 1,
	  KJ_EDTYPE, NULL },
	{ "{'descr': 'float32', 'fortran_order': False, 'shape': (3,)}", 1, 1,
	  KJ_EDTYPE, NULL },
	{ "{'descr': '<f4 ', 'fortran_order': False, 'shape': (3,)}", 1, 1,
	  KJ_EDTYPE, NULL },
	{ "{'descr': '', 'fortran_order': False, 'shape': (3,)}", 1, 1,
	  KJ_EDTYPE, "''" },
	{ "{'descr': '<', 'fortran_order': False, 'shape': (3,)}", 1, 1,
	  KJ_EDTYPE, NULL },
	{ "{'descr': '|f4', 'fortran_order': False, 'shape': (3,)}", 1, 1,
	  KJ_EDTYPE, "byte order" },
	{ "{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (3,)}",
	  1, 1, KJ_EDTYPE, "structured" },
	{ "{'descr': 5, 'fortran_order': False, 'shape': (3,)}", 1, 1,
	  KJ_ENPY_HEADER, "dtype string" },
	{ "{'descr': '<\xc3\xa9', 'fortran_order': False, 'shape': (3,)}", 3, 1,
	  KJ_EDTYPE, "'<?\?'" }, /* "?\?" is not a trigraph */
};

KJ_TEST(npy_header_bad)
{
	unsigned char buf[512];
	struct kj_npy_header h;
	struct kj_error e;
	size_t i, n;

	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		const struct bad *b = &bads[i];

		n = mkhdr(buf, sizeof(buf), b->major, b->dict, b->terminate);
		check_error(parse_exact(buf, n, &h, &e), &e, b->code, b->msg,
			    b->dict);
		KJ_CHECK_INT(h.dtype, KJ_DTYPE_INVALID);
		KJ_CHECK_INT(h.nbytes, 0);
	}
}

/* The largest data a header may promise: the file's size still fits in
 * an off_t. */
KJ_TEST(npy_header_largest)
{
	unsigned char buf[256];
	struct kj_npy_header h;
	struct kj_error e;
	size_t n;

	n = mkhdr(buf, sizeof(buf), 1,
		  "{'descr': '|u1', 'fortran_order': False, "
		  "'shape': (9223372036854775679,)}", 1);
	KJ_CHECK_INT(n, 128);
	KJ_CHECK_OK(parse_exact(buf, n, &h, &e), &e);
	KJ_CHECK_INT(h.nbytes, INT64_MAX - 128);
}

KJ_TEST(npy_header_nul_byte)
{
	static const char dict[] = "{'descr': '<f4', 'fortran_order': False, "
				   "'shape': (3,)}";
	unsigned char buf[256];
	struct kj_npy_header h;
	struct kj_error e;
	size_t n = mkhdr(buf, sizeof(buf), 1, dict, 1), pos;

	/* A NUL anywhere in the dict (where it would end a C string) is an
	 * error, never the end of the parse. */
	for (pos = 10; pos < 10 + sizeof(dict) - 1; pos++) {
		unsigned char save = buf[pos];
		int rc;

		buf[pos] = 0;
		rc = parse_exact(buf, n, &h, &e);
		KJ_CHECK(rc == KJ_ENPY_HEADER || rc == KJ_EDTYPE);
		buf[pos] = save;
	}
	buf[n - 3] = 0; /* in the padding */
	check_error(parse_exact(buf, n, &h, &e), &e, KJ_ENPY_HEADER,
		    "after the dict", "NUL in padding");
}

KJ_TEST(npy_header_prefix)
{
	unsigned char buf[256];
	struct kj_npy_header h;
	struct kj_error e;
	size_t n;

	n = mkhdr(buf, sizeof(buf), 1,
		  "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", 1);

	memcpy(buf, "\x93NUMPZ", 6);
	check_error(parse_exact(buf, n, &h, &e), &e, KJ_ENPY_MAGIC, "magic",
		    "NUMPZ");
	check_error(parse_exact("PK\x03\x04", 4, &h, &e), &e, KJ_ENPY_MAGIC,
		    NULL, "zip");
	check_error(parse_exact("x", 1, &h, &e), &e, KJ_ENPY_MAGIC, NULL, "x");
	check_error(parse_exact("", 0, &h, &e), &e, KJ_ENPY_TRUNCATED, NULL,
		    "empty");
	check_error(parse_exact("\x93NUM", 4, &h, &e), &e, KJ_ENPY_TRUNCATED,
		    NULL, "short magic");
	memcpy(buf, "\x93NUMPY", 6);

	buf[6] = 4;
	check_error(parse_exact(buf, n, &h, &e), &e, KJ_ENPY_VERSION, "4.0",
		    "4.0");
	buf[6] = 0;
	check_error(parse_exact(buf, n, &h, &e), &e, KJ_ENPY_VERSION, "0.0",
		    "0.0");
	buf[6] = 1;
	buf[7] = 1;
	check_error(parse_exact(buf, n, &h, &e), &e, KJ_ENPY_VERSION, "1.1",
		    "1.1");
	buf[7] = 0;

	/* A length field that promises more header than there is. */
	buf[8] = 0xff;
	buf[9] = 0xff;
	check_error(parse_exact(buf, n, &h, &e), &e, KJ_ENPY_TRUNCATED,
		    "65545", "length past the end");
	/* One that is too short cuts the dict before its '\n'. */
	buf[8] = 20;
	buf[9] = 0;
	check_error(parse_exact(buf, n, &h, &e), &e, KJ_ENPY_HEADER, "newline",
		    "length too short");
	/* A header of length zero. */
	buf[8] = 0;
	check_error(parse_exact(buf, n, &h, &e), &e, KJ_ENPY_HEADER, NULL,
		    "length 0");

	/* Format 2.0 with an absurd length is refused before any reading. */
	memcpy(buf, "\x93NUMPY\x02\x00\xff\xff\xff\xff", 12);
	check_error(parse_exact(buf, 12, &h, &e), &e, KJ_ENPY_HEADER, "limit",
		    "4 GiB header");
	memcpy(buf, "\x93NUMPY\x03\x00\x01\x00\x10\x00", 12);
	check_error(parse_exact(buf, 12, &h, &e), &e, KJ_ENPY_HEADER, "limit",
		    "1 MiB + 1 header");
}

/* The largest header accepted: 1 MiB of dict and padding. */
KJ_TEST(npy_header_limit)
{
	static const char dict[] = "{'descr': '<f4', 'fortran_order': False, "
				   "'shape': (3,)}";
	size_t hlen = (size_t)1 << 20, n = 12 + hlen;
	unsigned char *buf = malloc(n);
	struct kj_npy_header h;
	struct kj_error e;

	KJ_CHECK(buf);
	memcpy(buf, "\x93NUMPY\x02\x00\x00\x00\x10\x00", 12);
	memcpy(buf + 12, dict, sizeof(dict) - 1);
	memset(buf + 12 + sizeof(dict) - 1, ' ', hlen - sizeof(dict));
	buf[n - 1] = '\n';
	KJ_CHECK_OK(parse_exact(buf, n, &h, &e), &e);
	KJ_CHECK_INT(h.data_offset, n);
	free(buf);
}

/* Every prefix of a valid header is truncated, never accepted or misread. */
KJ_TEST(npy_header_truncated_every_byte)
{
	static const char *const dicts[] = {
		"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
		"{'descr': '|b1', 'fortran_order': True, 'shape': (), }",
	};
	unsigned char buf[256];
	struct kj_npy_header h;
	struct kj_error e;
	size_t i, n, len;
	int major;

	for (i = 0; i < 2; i++)
		for (major = 1; major <= 3; major++) {
			n = mkhdr(buf, sizeof(buf), major, dicts[i], 1);
			for (len = 0; len < n; len++)
				check_error(parse_exact(buf, len, &h, &e), &e,
					    KJ_ENPY_TRUNCATED, NULL, dicts[i]);
			KJ_CHECK_OK(parse_exact(buf, n, &h, &e), &e);
		}
}

/* --- loading -------------------------------------------------------------- */

/* A little-endian float32 file of shape (2, 3) holding 0..5. */
static size_t f32_file(unsigned char *buf, size_t size, size_t data_bytes)
{
	size_t n = mkhdr(buf, size, 1,
			 "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
			 1), i;

	KJ_CHECK(n + data_bytes <= size);
	for (i = 0; i < data_bytes / 4; i++) {
		float f = (float)i;
		unsigned char *p = buf + n + 4 * i;
		uint32_t u;

		memcpy(&u, &f, 4);
		p[0] = (unsigned char)u;
		p[1] = (unsigned char)(u >> 8);
		p[2] = (unsigned char)(u >> 16);
		p[3] = (unsigned char)(u >> 24);
	}
	return n + data_bytes;
}

KJ_TEST(npy_load_ok)
{
	unsigned char buf[256];
	const char *path = kj_test_path("a.npy");
	struct kj_tensor t;
	struct kj_error e;
	size_t n = f32_file(buf, sizeof(buf), 24), i;

	write_bytes(path, buf, n);
	kj_tensor_init(&t);
	KJ_CHECK_OK(kj_npy_load(&t, path, &e), &e);
	KJ_CHECK_INT(t.dtype, KJ_DTYPE_FLOAT32);
	KJ_CHECK_INT(t.ndim, 2);
	KJ_CHECK_INT(t.shape[0], 2);
	KJ_CHECK_INT(t.shape[1], 3);
	KJ_CHECK_INT(t.nelem, 6);
	KJ_CHECK_INT(t.nbytes, 24);
	KJ_CHECK_INT(t.big_endian, 0);
	KJ_CHECK_INT(t.fortran_order, 0);
	KJ_CHECK(t.mem == KJ_TENSOR_MEM_MMAP);
	KJ_CHECK(t.data == (const unsigned char *)t.map_base + n - 24);
	KJ_CHECK_INT(t.map_len, n);
	for (i = 0; i < 6; i++)
		KJ_CHECK(kj_tensor_get(&t, i) == (double)i);
	kj_tensor_release(&t);
	check_empty(&t);
	kj_tensor_release(&t); /* releasing an empty tensor is a no-op */
}

KJ_TEST(npy_load_size_mismatch)
{
	unsigned char buf[256];
	const char *path = kj_test_path("a.npy");
	struct kj_tensor t;
	struct kj_error e;
	size_t n;

	n = f32_file(buf, sizeof(buf), 20);
	write_bytes(path, buf, n);
	check_error(kj_npy_load(&t, path, &e), &e, KJ_ENPY_SIZE,
		    "header promises 24 bytes of data, file holds 20", "short");
	check_empty(&t);
	KJ_CHECK(strncmp(e.msg, "'", 1) == 0 && strstr(e.msg, "a.npy': "));

	n = f32_file(buf, sizeof(buf), 28);
	write_bytes(path, buf, n);
	check_error(kj_npy_load(&t, path, &e), &e, KJ_ENPY_SIZE,
		    "header promises 24 bytes of data, file holds 28", "long");
	check_empty(&t);
}

/* A file cut at every byte: the header part is truncated, the data part
 * the wrong size. */
KJ_TEST(npy_load_truncated_every_byte)
{
	unsigned char buf[256];
	const char *path = kj_test_path("a.npy");
	struct kj_tensor t;
	struct kj_error e;
	size_t n = f32_file(buf, sizeof(buf), 24), len;

	for (len = 0; len < n; len++) {
		write_bytes(path, buf, len);
		if (len < n - 24)
			check_error(kj_npy_load(&t, path, &e), &e,
				    KJ_ENPY_TRUNCATED, "a.npy'", "header cut");
		else
			check_error(kj_npy_load(&t, path, &e), &e, KJ_ENPY_SIZE,
				    "header promises 24 bytes", "data cut");
		check_empty(&t);
	}
	write_bytes(path, buf, 0);
	check_error(kj_npy_load(&t, path, &e), &e, KJ_ENPY_TRUNCATED, "empty",
		    "empty file");
	write_bytes(path, "\x93NUMPY\x01\x00\xff\xff", 10);
	check_error(kj_npy_load(&t, path, &e), &e, KJ_ENPY_TRUNCATED,
		    "the header needs 65545 bytes, the file holds 10",
		    "length past the end");
}

KJ_TEST(npy_load_not_npy)
{
	const char *path = kj_test_path("a.txt");
	struct kj_tensor t;
	struct kj_error e;

	write_bytes(path, "hello, world\n", 13);
	check_error(kj_npy_load(&t, path, &e), &e, KJ_ENPY_MAGIC, "a.txt'",
		    "text file");
	check_empty(&t);
}

KJ_TEST(npy_load_system_errors)
{
	char path[4096];
	struct kj_tensor t;
	struct kj_error e;
	unsigned char buf[256];
	size_t n;

	snprintf(path, sizeof(path), "%s", kj_test_path("missing.npy"));
	check_error(kj_npy_load(&t, path, &e), &e, KJ_ENOENT,
		    "missing.npy': no such file or directory", "missing");
	check_empty(&t);

	snprintf(path, sizeof(path), "%s", kj_test_path("missing/x.npy"));
	check_error(kj_npy_load(&t, path, &e), &e, KJ_ENOENT, NULL,
		    "missing directory");

	check_error(kj_npy_load(&t, kj_test_tmpdir(), &e), &e, KJ_EINVAL,
		    "is a directory", "directory");
	check_empty(&t);

	/* A FIFO must be refused at once, not waited on for a writer. */
	snprintf(path, sizeof(path), "%s", kj_test_path("fifo"));
	KJ_CHECK(mkfifo(path, 0600) == 0);
	check_error(kj_npy_load(&t, path, &e), &e, KJ_EINVAL,
		    "not a regular file", "fifo");

	check_error(kj_npy_load(&t, "/dev/null", &e), &e, KJ_EINVAL,
		    "not a regular file", "/dev/null");

	/* Root reads anything, so the permission check needs another user. */
	n = f32_file(buf, sizeof(buf), 24);
	snprintf(path, sizeof(path), "%s", kj_test_path("secret.npy"));
	write_bytes(path, buf, n);
	KJ_CHECK(chmod(path, 0) == 0);
	if (geteuid() != 0)
		check_error(kj_npy_load(&t, path, &e), &e, KJ_EACCES,
			    "permission denied", "unreadable");
}

/* A path with a newline is quoted on one line; a very long one keeps its
 * end. */
KJ_TEST(npy_load_message_path)
{
	char path[1200];
	struct kj_tensor t;
	struct kj_error e;
	size_t n;
	int i;

	snprintf(path, sizeof(path), "%s/line\nbreak.npy", kj_test_tmpdir());
	check_error(kj_npy_load(&t, path, &e), &e, KJ_ENOENT,
		    "line?break.npy'", "newline in path");

	/* Five directories of 199 characters: long, but each name is
	 * allowed, so the error is "no such file". */
	n = (size_t)snprintf(path, sizeof(path), "%s", kj_test_tmpdir());
	for (i = 0; i < 5; i++) {
		path[n++] = '/';
		memset(path + n, 'd', 199);
		n += 199;
	}
	snprintf(path + n, sizeof(path) - n, "/end.npy");
	check_error(kj_npy_load(&t, path, &e), &e, KJ_ENOENT, "'...ddd", "long");
	KJ_CHECK(strstr(e.msg, "/end.npy': "));
}

KJ_TEST(npy_load_empty_and_scalar)
{
	unsigned char buf[256];
	const char *path = kj_test_path("a.npy");
	struct kj_tensor t;
	struct kj_error e;
	size_t n;
	double v = -2.5;

	n = mkhdr(buf, sizeof(buf), 1,
		  "{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }", 1);
	write_bytes(path, buf, n);
	KJ_CHECK_OK(kj_npy_load(&t, path, &e), &e);
	KJ_CHECK_INT(t.ndim, 1);
	KJ_CHECK_INT(t.shape[0], 0);
	KJ_CHECK_INT(t.nelem, 0);
	KJ_CHECK_INT(t.nbytes, 0);
	KJ_CHECK(t.data == NULL);
	kj_tensor_release(&t);

	n = mkhdr(buf, sizeof(buf), 2,
		  "{'descr': '>i8', 'fortran_order': True, 'shape': (3, 0), }", 1);
	write_bytes(path, buf, n);
	KJ_CHECK_OK(kj_npy_load(&t, path, &e), &e);
	KJ_CHECK_INT(t.ndim, 2);
	KJ_CHECK_INT(t.shape[0], 3);
	KJ_CHECK_INT(t.shape[1], 0);
	KJ_CHECK_INT(t.nelem, 0);
	KJ_CHECK(t.data == NULL);
	kj_tensor_release(&t);

	/* An empty tensor with stray data is still the wrong size. */
	buf[n] = 1;
	write_bytes(path, buf, n + 1);
	check_error(kj_npy_load(&t, path, &e), &e, KJ_ENPY_SIZE,
		    "promises 0 bytes", "empty with data");

	n = mkhdr(buf, sizeof(buf), 1,
		  "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 1);
	if (host_big_endian()) {
		unsigned char b[8];
		int i;

		memcpy(b, &v, 8);
		for (i = 0; i < 8; i++)
			buf[n + (size_t)i] = b[7 - i];
	} else {
		memcpy(buf + n, &v, 8);
	}
	write_bytes(path, buf, n + 8);
	KJ_CHECK_OK(kj_npy_load(&t, path, &e), &e);
	KJ_CHECK_INT(t.ndim, 0);
	KJ_CHECK_INT(t.nelem, 1);
	KJ_CHECK_INT(t.nbytes, 8);
	KJ_CHECK(kj_tensor_get(&t, 0) == -2.5);
	kj_tensor_release(&t);
}

/* Headers longer than the loader's first read, up to the limit. */
KJ_TEST(npy_load_long_header)
{
	static const char dict[] = "{'descr': '<u2', 'fortran_order': False, "
				   "'shape': (2,), }";
	const char *path = kj_test_path("a.npy");
	size_t hlens[] = { 4084, 4085, 8180, (size_t)1 << 20 }, i;
	struct kj_tensor t;
	struct kj_error e;

	for (i = 0; i < sizeof(hlens) / sizeof(hlens[0]); i++) {
		size_t hlen = hlens[i], n = 12 + hlen + 4;
		unsigned char *buf = malloc(n + 1);

		KJ_CHECK(buf);
		memcpy(buf, "\x93NUMPY\x02\x00", 8);
		buf[8] = (unsigned char)(hlen & 0xff);
		buf[9] = (unsigned char)(hlen >> 8 & 0xff);
		buf[10] = (unsigned char)(hlen >> 16 & 0xff);
		buf[11] = 0;
		memcpy(buf + 12, dict, sizeof(dict) - 1);
		memset(buf + 12 + sizeof(dict) - 1, ' ', hlen - sizeof(dict));
		buf[12 + hlen - 1] = '\n';
		memcpy(buf + 12 + hlen, "\x01\x00\x02\x01", 4);
		write_bytes(path, buf, n);
		KJ_CHECK_OK(kj_npy_load(&t, path, &e), &e);
		KJ_CHECK(kj_tensor_get(&t, 0) == 1.0);
		KJ_CHECK(kj_tensor_get(&t, 1) == 258.0);
		kj_tensor_release(&t);

		/* One byte more of header than the limit allows. */
		if (hlen == (size_t)1 << 20) {
			buf[8] = 1;
			write_bytes(path, buf, n);
			check_error(kj_npy_load(&t, path, &e), &e,
				    KJ_ENPY_HEADER, "limit", "over the limit");
		}
		free(buf);
	}
}

/* --- saving --------------------------------------------------------------- */

static const enum kj_dtype all_dtypes[] = {
	KJ_DTYPE_BOOL,    KJ_DTYPE_INT8,    KJ_DTYPE_INT16,
	KJ_DTYPE_INT32,   KJ_DTYPE_INT64,   KJ_DTYPE_UINT8,
	KJ_DTYPE_UINT16,  KJ_DTYPE_UINT32,  KJ_DTYPE_UINT64,
	KJ_DTYPE_FLOAT16, KJ_DTYPE_FLOAT32, KJ_DTYPE_FLOAT64,
	KJ_DTYPE_BFLOAT16, KJ_DTYPE_FLOAT8_E4M3FN, KJ_DTYPE_FLOAT8_E5M2,
};

struct shape_case {
	int ndim;
	int64_t shape[3];
};

static const struct shape_case shapes[] = {
	{ 0, { 0 } },      { 1, { 5 } },       { 2, { 2, 3 } },
	{ 3, { 2, 3, 4 } }, { 1, { 0 } },      { 2, { 3, 0 } },
	{ 1, { 1 } },      { 2, { 1, 7 } },
};

/* Save and load one tensor; both must agree on every field and byte. */
static void roundtrip(enum kj_dtype dt, const struct shape_case *sc,
		      int fortran, int big)
{
	const char *path = kj_test_path("rt.npy");
	enum kj_dtype storage = kj_dtype_storage(dt);
	unsigned char data[8 * 24], *file;
	struct kj_tensor t, u;
	struct kj_npy_header h;
	struct kj_error e;
	size_t w = kj_dtype_size(dt), i, n;
	int d;

	for (i = 0; i < sizeof(data); i++) {
		if (dt == KJ_DTYPE_BOOL)
			data[i] = (unsigned char)(i % 3 == 0);
		else
			data[i] = (unsigned char)(i * 131 + 7 + dt);
	}
	KJ_CHECK_OK(kj_tensor_borrow(&t, dt, sc->ndim, sc->shape, data, &e),
		    &e);
	t.fortran_order = fortran;
	t.big_endian = big;
	KJ_CHECK_OK(kj_npy_save(path, &t, &e), &e);

	file = read_bytes(path, &n);
	KJ_CHECK_OK(kj_npy_parse_header(file, n, &h, &e), &e);
	KJ_CHECK_INT(h.major, 1);
	KJ_CHECK_INT(h.data_offset % 64, 0);
	KJ_CHECK_INT(n, h.data_offset + t.nbytes);
	KJ_CHECK_INT(h.dtype, storage);
	KJ_CHECK_INT(h.big_endian, w == 1 ? 0 : big);
	KJ_CHECK_INT(h.fortran_order, fortran);
	KJ_CHECK_INT(h.ndim, sc->ndim);
	for (d = 0; d < sc->ndim; d++)
		KJ_CHECK_INT(h.shape[d], sc->shape[d]);
	free(file);

	KJ_CHECK_OK(kj_npy_load(&u, path, &e), &e);
	KJ_CHECK_INT(u.dtype, storage);
	KJ_CHECK_OK(kj_tensor_reinterpret(&u, dt, &e), &e);
	KJ_CHECK_INT(u.dtype, dt);
	KJ_CHECK_INT(u.ndim, t.ndim);
	KJ_CHECK_INT(u.nelem, t.nelem);
	KJ_CHECK_INT(u.nbytes, t.nbytes);
	KJ_CHECK_INT(u.fortran_order, fortran);
	KJ_CHECK_INT(u.big_endian, w == 1 ? 0 : big);
	KJ_CHECK((u.data == NULL) == (t.nelem == 0));
	if (t.nelem) {
		KJ_CHECK(memcmp(u.data, t.data, t.nbytes) == 0);
		for (i = 0; i < t.nelem; i++) {
			double a = kj_tensor_get(&t, i);
			double b = kj_tensor_get(&u, i);

			/* Bitwise, so that NaNs compare equal too. */
			KJ_CHECK(memcmp(&a, &b, sizeof(a)) == 0);
		}
	}
	kj_tensor_release(&u);
	kj_tensor_release(&t);
}

KJ_TEST(npy_save_roundtrip_every_dtype)
{
	size_t i, s;
	int fortran, big;

	for (i = 0; i < sizeof(all_dtypes) / sizeof(all_dtypes[0]); i++)
		for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
			for (fortran = 0; fortran <= 1; fortran++)
				for (big = 0; big <= 1; big++)
					roundtrip(all_dtypes[i], &shapes[s],
						  fortran, big);
	/* Nothing but the target is left in the directory. */
	KJ_CHECK_INT(count_files(), 1);
}

/* The header is exactly numpy's for the same array. */
KJ_TEST(npy_save_header_bytes)
{
	static const struct {
		enum kj_dtype dt;
		int ndim, fortran, big;
		int64_t shape[3];
		const char *dict;
	} cases[] = {
		{ KJ_DTYPE_FLOAT32, 2, 0, 0, { 2, 3 },
		  "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" },
		{ KJ_DTYPE_FLOAT64, 1, 0, 1, { 5 },
		  "{'descr': '>f8', 'fortran_order': False, 'shape': (5,), }" },
		{ KJ_DTYPE_BOOL, 0, 0, 0, { 0 },
		  "{'descr': '|b1', 'fortran_order': False, 'shape': (), }" },
		{ KJ_DTYPE_BFLOAT16, 3, 1, 1, { 2, 3, 40 },
		  "{'descr': '>u2', 'fortran_order': True, 'shape': (2, 3, 40), }" },
		{ KJ_DTYPE_FLOAT8_E5M2, 1, 0, 1, { 0 },
		  "{'descr': '|u1', 'fortran_order': False, 'shape': (0,), }" },
		{ KJ_DTYPE_INT8, 1, 0, 0, { 1 },
		  "{'descr': '|i1', 'fortran_order': False, 'shape': (1,), }" },
	};
	const char *path = kj_test_path("h.npy");
	unsigned char data[8 * 240] = { 0 }, *file;
	struct kj_tensor t;
	struct kj_error e;
	size_t i, n, dlen, want_hlen;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t growth;
		size_t digits = 1;

		KJ_CHECK_OK(kj_tensor_borrow(&t, cases[i].dt, cases[i].ndim,
					     cases[i].shape, data, &e), &e);
		t.fortran_order = cases[i].fortran;
		t.big_endian = cases[i].big;
		KJ_CHECK_OK(kj_npy_save(path, &t, &e), &e);
		file = read_bytes(path, &n);
		dlen = strlen(cases[i].dict);
		KJ_CHECK(n > 10 + dlen);
		KJ_CHECK(memcmp(file, "\x93NUMPY\x01\x00", 8) == 0);
		KJ_CHECK(memcmp(file + 10, cases[i].dict, dlen) == 0);
		/* numpy leaves room to grow the growth axis to 21 digits,
		 * then pads to 64 with spaces and '\n'. */
		if (cases[i].ndim > 0) {
			growth = cases[i].shape[cases[i].fortran ?
						cases[i].ndim - 1 : 0];
			while (growth >= 10) {
				growth /= 10;
				digits++;
			}
			dlen += 21 - digits;
		}
		want_hlen = dlen + 1 + 64 - (10 + dlen + 1) % 64;
		KJ_CHECK_INT(file[8] | file[9] << 8, want_hlen);
		KJ_CHECK_INT(n, 10 + want_hlen + t.nbytes);
		KJ_CHECK(file[10 + want_hlen - 1] == '\n');
		free(file);
		kj_tensor_release(&t);
	}
}

KJ_TEST(npy_save_replaces_and_mode)
{
	const char *path = kj_test_path("a.npy");
	int64_t shape[1] = { 3 };
	uint8_t one[3] = { 1, 2, 3 }, two[3] = { 4, 5, 6 };
	struct kj_tensor t;
	struct kj_error e;
	struct stat st;
	mode_t mask;

	mask = umask(022);
	KJ_CHECK_OK(kj_tensor_borrow(&t, KJ_DTYPE_UINT8, 1, shape, one, &e), &e);
	KJ_CHECK_OK(kj_npy_save(path, &t, &e), &e);
	KJ_CHECK(stat(path, &st) == 0);
	KJ_CHECK_INT(st.st_mode & 0777, 0644);

	KJ_CHECK_OK(kj_tensor_borrow(&t, KJ_DTYPE_UINT8, 1, shape, two, &e), &e);
	KJ_CHECK_OK(kj_npy_save(path, &t, &e), &e);
	KJ_CHECK_OK(kj_npy_load(&t, path, &e), &e);
	KJ_CHECK(kj_tensor_get(&t, 0) == 4.0 && kj_tensor_get(&t, 2) == 6.0);
	kj_tensor_release(&t);
	KJ_CHECK_INT(count_files(), 1);

	umask(077);
	KJ_CHECK_OK(kj_tensor_borrow(&t, KJ_DTYPE_UINT8, 1, shape, one, &e), &e);
	KJ_CHECK_OK(kj_npy_save(kj_test_path("b.npy"), &t, &e), &e);
	KJ_CHECK(stat(kj_test_path("b.npy"), &st) == 0);
	KJ_CHECK_INT(st.st_mode & 0777, 0600);
	umask(mask);
}

KJ_TEST(npy_save_errors)
{
	int64_t shape[2] = { 2, 2 };
	float data[4] = { 1, 2, 3, 4 };
	struct kj_tensor t;
	struct kj_error e;
	char path[4096];

	KJ_CHECK_OK(kj_tensor_borrow(&t, KJ_DTYPE_FLOAT32, 2, shape, data, &e),
		    &e);

	snprintf(path, sizeof(path), "%s", kj_test_path("no/such/dir/a.npy"));
	check_error(kj_npy_save(path, &t, &e), &e, KJ_ENOENT, "a.npy'",
		    "missing directory");

	/* The target is a directory: the rename fails, the temporary file
	 * is removed. */
	KJ_CHECK(mkdir(kj_test_path("d.npy"), 0700) == 0);
	snprintf(path, sizeof(path), "%s", kj_test_path("d.npy"));
	check_error(kj_npy_save(path, &t, &e), &e, KJ_EIO, "rename",
		    "target is a directory");
	KJ_CHECK_INT(count_files(), 1);

	snprintf(path, sizeof(path), "%s", kj_test_path("a.npy"));
	t.nelem = 5;
	check_error(kj_npy_save(path, &t, &e), &e, KJ_EINVAL, "disagrees",
		    "nelem");
	t.nelem = 4;
	t.nbytes = 8;
	check_error(kj_npy_save(path, &t, &e), &e, KJ_EINVAL, "disagrees",
		    "nbytes");
	t.nbytes = 16;
	t.data = NULL;
	check_error(kj_npy_save(path, &t, &e), &e, KJ_EINVAL, "no data",
		    "no data");
	t.data = data;
	t.dtype = KJ_DTYPE_INVALID;
	check_error(kj_npy_save(path, &t, &e), &e, KJ_EDTYPE, NULL, "dtype");
	t.dtype = KJ_DTYPE_FLOAT32;
	t.ndim = KJ_MAX_DIMS + 1;
	check_error(kj_npy_save(path, &t, &e), &e, KJ_EINVAL, NULL, "ndim");
	t.ndim = 2;
	t.shape[1] = -2;
	check_error(kj_npy_save(path, &t, &e), &e, KJ_EINVAL, "negative",
		    "negative");
	KJ_CHECK_INT(count_files(), 1);

	/* Read-only directory; root writes anywhere, so only as a user. */
	if (geteuid() != 0) {
		t.shape[1] = 2;
		KJ_CHECK(mkdir(kj_test_path("ro"), 0500) == 0);
		snprintf(path, sizeof(path), "%s", kj_test_path("ro/a.npy"));
		check_error(kj_npy_save(path, &t, &e), &e, KJ_EACCES,
			    "permission denied", "read-only directory");
	}
}

/* --- the tensor helpers --------------------------------------------------- */

KJ_TEST(tensor_borrow_alloc)
{
	int64_t shape[3] = { 2, 3, 4 }, bad[2] = { 3, -1 };
	int64_t huge[3] = { INT64_MAX / 2, 3, 1 };
	struct kj_tensor t;
	struct kj_error e;
	unsigned char *p;
	void *out = &t;
	size_t i;

	KJ_CHECK_OK(kj_tensor_alloc(&t, KJ_DTYPE_FLOAT64, 3, shape, &out, &e),
		    &e);
	p = out;
	KJ_CHECK(p != NULL && t.data == p);
	KJ_CHECK_INT(t.nelem, 24);
	KJ_CHECK_INT(t.nbytes, 192);
	KJ_CHECK_INT(t.big_endian, host_big_endian());
	KJ_CHECK_INT(t.fortran_order, 0);
	for (i = 0; i < t.nbytes; i++)
		KJ_CHECK(p[i] == 0);
	kj_tensor_release(&t);
	check_empty(&t);

	KJ_CHECK_OK(kj_tensor_alloc(&t, KJ_DTYPE_INT8, 0, NULL, &out, &e), &e);
	KJ_CHECK_INT(t.nelem, 1);
	KJ_CHECK(out != NULL);
	kj_tensor_release(&t);

	shape[1] = 0;
	KJ_CHECK_OK(kj_tensor_alloc(&t, KJ_DTYPE_INT8, 3, shape, &out, &e), &e);
	KJ_CHECK_INT(t.nelem, 0);
	KJ_CHECK(out == NULL && t.data == NULL);
	kj_tensor_release(&t);
	KJ_CHECK_OK(kj_tensor_borrow(&t, KJ_DTYPE_INT8, 3, shape, NULL, &e), &e);
	KJ_CHECK(t.mem == KJ_TENSOR_MEM_BORROWED && t.data == NULL);
	kj_tensor_release(&t);
	shape[1] = 3;

	check_error(kj_tensor_borrow(&t, KJ_DTYPE_INT8, 2, bad, shape, &e), &e,
		    KJ_EINVAL, "negative", "negative");
	check_empty(&t);
	check_error(kj_tensor_borrow(&t, KJ_DTYPE_INT8, -1, shape, shape, &e),
		    &e, KJ_EINVAL, NULL, "ndim -1");
	check_error(kj_tensor_borrow(&t, KJ_DTYPE_INT8, KJ_MAX_DIMS + 1, shape,
				     shape, &e), &e, KJ_EINVAL, NULL, "ndim 65");
	check_error(kj_tensor_borrow(&t, KJ_DTYPE_INVALID, 1, shape, shape, &e),
		    &e, KJ_EDTYPE, NULL, "invalid dtype");
	check_error(kj_tensor_borrow(&t, KJ_DTYPE_COUNT_, 1, shape, shape, &e),
		    &e, KJ_EDTYPE, NULL, "dtype count");
	check_error(kj_tensor_borrow(&t, KJ_DTYPE_INT8, 3, shape, NULL, &e), &e,
		    KJ_EINVAL, "no data", "NULL data");
	check_error(kj_tensor_borrow(&t, KJ_DTYPE_INT8, 3, huge, shape, &e), &e,
		    KJ_EOVERFLOW, NULL, "elements overflow");
	huge[1] = 1;
	check_error(kj_tensor_borrow(&t, KJ_DTYPE_INT64, 3, huge, shape, &e), &e,
		    KJ_EOVERFLOW, NULL, "bytes overflow");
	check_error(kj_tensor_alloc(&t, KJ_DTYPE_INT64, 3, huge, &out, &e), &e,
		    KJ_EOVERFLOW, NULL, "alloc overflow");
	KJ_CHECK(out == NULL);
	check_empty(&t);
}

KJ_TEST(tensor_reinterpret_rules)
{
	static const struct {
		enum kj_dtype from, to;
		int ok;
	} cases[] = {
		{ KJ_DTYPE_UINT16, KJ_DTYPE_BFLOAT16, 1 },
		{ KJ_DTYPE_UINT8, KJ_DTYPE_FLOAT8_E4M3FN, 1 },
		{ KJ_DTYPE_UINT8, KJ_DTYPE_FLOAT8_E5M2, 1 },
		{ KJ_DTYPE_FLOAT32, KJ_DTYPE_FLOAT32, 1 },
		{ KJ_DTYPE_BFLOAT16, KJ_DTYPE_BFLOAT16, 1 },
		{ KJ_DTYPE_INT16, KJ_DTYPE_BFLOAT16, 0 },
		{ KJ_DTYPE_FLOAT16, KJ_DTYPE_BFLOAT16, 0 },
		{ KJ_DTYPE_UINT16, KJ_DTYPE_FLOAT16, 0 },
		{ KJ_DTYPE_BFLOAT16, KJ_DTYPE_UINT16, 0 },
		{ KJ_DTYPE_INT8, KJ_DTYPE_FLOAT8_E4M3FN, 0 },
		{ KJ_DTYPE_BOOL, KJ_DTYPE_FLOAT8_E5M2, 0 },
		{ KJ_DTYPE_FLOAT8_E4M3FN, KJ_DTYPE_FLOAT8_E5M2, 0 },
		{ KJ_DTYPE_UINT8, KJ_DTYPE_BOOL, 0 },
		{ KJ_DTYPE_FLOAT32, KJ_DTYPE_INT32, 0 },
		{ KJ_DTYPE_UINT16, KJ_DTYPE_INVALID, 0 },
	};
	int64_t shape[1] = { 2 };
	uint16_t data[2] = { 0x3fc0, 0xc000 }; /* 1.5 and -2 in bfloat16 */
	struct kj_tensor t;
	struct kj_error e;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		KJ_CHECK_OK(kj_tensor_borrow(&t, cases[i].from, 1, shape, data,
					     &e), &e);
		t.big_endian = 1;
		rc = kj_tensor_reinterpret(&t, cases[i].to, &e);
		if (cases[i].ok) {
			KJ_CHECK_INT(rc, KJ_OK);
			KJ_CHECK_INT(t.dtype, cases[i].to);
		} else {
			check_error(rc, &e, KJ_EDTYPE, NULL, "reinterpret");
			KJ_CHECK_INT(t.dtype, cases[i].from);
		}
		KJ_CHECK_INT(t.big_endian, 1); /* unchanged either way */
	}
	KJ_CHECK_OK(kj_tensor_borrow(&t, KJ_DTYPE_INT16, 1, shape, data, &e), &e);
	check_error(kj_tensor_reinterpret(&t, KJ_DTYPE_BFLOAT16, &e), &e,
		    KJ_EDTYPE, "cannot read int16 data as bfloat16 (bfloat16 is "
		    "stored as uint16)", "message");

	KJ_CHECK_OK(kj_tensor_borrow(&t, KJ_DTYPE_UINT16, 1, shape, data, &e),
		    &e);
	KJ_CHECK_OK(kj_tensor_reinterpret(&t, KJ_DTYPE_BFLOAT16, &e), &e);
	KJ_CHECK(kj_tensor_get(&t, 0) == 1.5);
	KJ_CHECK(kj_tensor_get(&t, 1) == -2.0);
}

/* kj_tensor_get() reads either byte order. */
KJ_TEST(tensor_get_byte_order)
{
	static const struct {
		enum kj_dtype dt;
		unsigned char be[8];
		double want;
	} cases[] = {
		{ KJ_DTYPE_FLOAT32, { 0x3f, 0xc0, 0, 0 }, 1.5 },
		{ KJ_DTYPE_FLOAT64, { 0xc0, 0x1c, 0, 0, 0, 0, 0, 0 }, -7.0 },
		{ KJ_DTYPE_FLOAT16, { 0x3e, 0x00 }, 1.5 },
		{ KJ_DTYPE_BFLOAT16, { 0x3f, 0xc0 }, 1.5 },
		{ KJ_DTYPE_INT16, { 0xff, 0xfe }, -2.0 },
		{ KJ_DTYPE_UINT16, { 0x01, 0x02 }, 258.0 },
		{ KJ_DTYPE_INT32, { 0x80, 0, 0, 0 }, -2147483648.0 },
		{ KJ_DTYPE_UINT32, { 0x01, 0x02, 0x03, 0x04 }, 16909060.0 },
		{ KJ_DTYPE_INT64, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd },
		  -3.0 },
		{ KJ_DTYPE_UINT64, { 0, 0x10, 0, 0, 0, 0, 0, 1 }, 4503599627370497.0 },
		{ KJ_DTYPE_INT8, { 0xff }, -1.0 },
		{ KJ_DTYPE_UINT8, { 0xff }, 255.0 },
		{ KJ_DTYPE_BOOL, { 0x02 }, 1.0 },
		{ KJ_DTYPE_FLOAT8_E4M3FN, { 0x3c }, 1.5 },
		{ KJ_DTYPE_FLOAT8_E5M2, { 0x3e }, 1.5 },
	};
	unsigned char le[8];
	struct kj_tensor t;
	struct kj_error e;
	size_t i, k, w;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		w = kj_dtype_size(cases[i].dt);
		for (k = 0; k < w; k++)
			le[k] = cases[i].be[w - 1 - k];
		KJ_CHECK_OK(kj_tensor_borrow(&t, cases[i].dt, 0, NULL,
					     cases[i].be, &e), &e);
		t.big_endian = 1;
		KJ_CHECK(kj_tensor_get(&t, 0) == cases[i].want);
		KJ_CHECK_OK(kj_tensor_borrow(&t, cases[i].dt, 0, NULL, le, &e),
			    &e);
		t.big_endian = 0;
		KJ_CHECK(kj_tensor_get(&t, 0) == cases[i].want);
	}
}

KJ_TEST(tensor_unravel_orders)
{
	int64_t shape[3] = { 2, 3, 4 }, idx[3];
	struct kj_tensor t;
	struct kj_error e;
	size_t f;

	KJ_CHECK_OK(kj_tensor_borrow(&t, KJ_DTYPE_UINT8, 3, shape, shape, &e),
		    &e);
	for (f = 0; f < 24; f++) {
		kj_tensor_unravel(&t, f, idx);
		KJ_CHECK_INT(idx[0], f / 12);
		KJ_CHECK_INT(idx[1], f / 4 % 3);
		KJ_CHECK_INT(idx[2], f % 4);
	}
	t.fortran_order = 1;
	for (f = 0; f < 24; f++) {
		kj_tensor_unravel(&t, f, idx);
		KJ_CHECK_INT(idx[0], f % 2);
		KJ_CHECK_INT(idx[1], f / 2 % 3);
		KJ_CHECK_INT(idx[2], f / 6);
	}

	/* A scalar has no index to write. */
	idx[0] = 99;
	KJ_CHECK_OK(kj_tensor_borrow(&t, KJ_DTYPE_UINT8, 0, NULL, shape, &e), &e);
	kj_tensor_unravel(&t, 0, idx);
	KJ_CHECK_INT(idx[0], 99);
}

KJ_TEST(tensor_shape_format)
{
	int64_t shape[KJ_MAX_DIMS];
	struct kj_tensor t;
	struct kj_error e;
	char buf[2048] = "";
	int i;

	shape[0] = 1000;
	shape[1] = 2000;
	shape[2] = 3000;
	KJ_CHECK_OK(kj_tensor_borrow(&t, KJ_DTYPE_UINT8, 3, shape, buf, &e), &e);
	KJ_CHECK_STR(kj_shape_format(&t, buf, sizeof(buf)), "[1000, 2000, 3000]");
	KJ_CHECK_STR(kj_shape_format(&t, buf, 19), "[1000, 2000, 3000]");
	KJ_CHECK_STR(kj_shape_format(&t, buf, 18), "[1000, 2000, ...]");
	KJ_CHECK_STR(kj_shape_format(&t, buf, 17), "[1000, ...]");
	KJ_CHECK_STR(kj_shape_format(&t, buf, 12), "[1000, ...]");
	KJ_CHECK_STR(kj_shape_format(&t, buf, 11), "[...]");
	KJ_CHECK_STR(kj_shape_format(&t, buf, 6), "[...]");
	KJ_CHECK_STR(kj_shape_format(&t, buf, 5), "....");
	KJ_CHECK_STR(kj_shape_format(&t, buf, 1), "");
	buf[0] = 'x';
	kj_shape_format(&t, buf, 0);
	KJ_CHECK(buf[0] == 'x');

	KJ_CHECK_OK(kj_tensor_borrow(&t, KJ_DTYPE_UINT8, 0, NULL, buf, &e), &e);
	KJ_CHECK_STR(kj_shape_format(&t, buf, sizeof(buf)), "[]");
	shape[0] = 0;
	KJ_CHECK_OK(kj_tensor_borrow(&t, KJ_DTYPE_UINT8, 1, shape, NULL, &e), &e);
	KJ_CHECK_STR(kj_shape_format(&t, buf, sizeof(buf)), "[0]");

	/* The longest shape there is fits a large enough buffer whole. */
	t.ndim = KJ_MAX_DIMS;
	for (i = 0; i < KJ_MAX_DIMS; i++)
		t.shape[i] = INT64_MAX;
	kj_shape_format(&t, buf, sizeof(buf));
	KJ_CHECK_INT(strlen(buf), 2 + 19 * KJ_MAX_DIMS + 2 * (KJ_MAX_DIMS - 1));
	KJ_CHECK(buf[strlen(buf) - 1] == ']');
	kj_shape_format(&t, buf, 100);
	KJ_CHECK_INT(strlen(buf), 2 + 19 * 4 + 2 * 4 + 3);
	KJ_CHECK(strcmp(buf + strlen(buf) - 4, "...]") == 0);
}
