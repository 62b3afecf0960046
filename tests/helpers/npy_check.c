/*
 * npy_check.c - the C half of the numpy round trips (tests/cli/t0100).
 *
 *   npy_check check FILE DTYPE ORDER ENDIAN VERSION [DIM...]
 *       Load FILE with kj_npy_load(), check that its header says what the
 *       arguments say (storage dtype of DTYPE, ORDER C or F, ENDIAN '<',
 *       '>' or '|', format VERSION such as 1.0, the shape), read it as
 *       DTYPE, and compare every element with value(DTYPE, i), where i is
 *       the element's index in C order whatever the file's order.
 *   npy_check write FILE DTYPE ORDER ENDIAN [DIM...]
 *       Write the tensor whose element at C-order index i is value(DTYPE,
 *       i), stored in ORDER and ENDIAN, with kj_npy_save().
 *   npy_check error FILE
 *       Expect kj_npy_load() to fail; print "KJ_E...: message".
 *
 * value() is the formula of tests/helpers/npy_fixtures.py, which writes
 * and verifies the numpy side; the two must change together.  Every value
 * is exact in its dtype, so the comparisons are exact too.
 *
 * Exit status: 0 as expected, 1 a mismatch (the first ones are printed),
 * 2 a usage or load error.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/dtype.h"
#include "kjudge/error.h"
#include "kjudge/tensor.h"

#define MAX_SHOWN 5

static int host_big_endian(void)
{
	const uint16_t one = 1;

	return *(const unsigned char *)&one == 0;
}

/* The element at C-order index i of the test tensor of dtype dt. */
static double value(enum kj_dtype dt, uint64_t i)
{
	int64_t s = (int64_t)(i % 101) - 50;
	uint64_t u = i % 251;

	switch (dt) {
	case KJ_DTYPE_BOOL:
		return i % 3 == 0;
	case KJ_DTYPE_INT8:
		return (double)s;
	case KJ_DTYPE_INT16:
		return (double)(s * 601);
	case KJ_DTYPE_INT32:
		return (double)(s * 40000001);
	case KJ_DTYPE_INT64:
		return (double)(s * 35184372088833); /* 2^45 + 1 */
	case KJ_DTYPE_UINT8:
		return (double)u;
	case KJ_DTYPE_UINT16:
		return (double)(u * 257);
	case KJ_DTYPE_UINT32:
		return (double)(u * 16777259);
	case KJ_DTYPE_UINT64:
		return (double)(u * 17592186044419); /* 2^44 + 3 */
	case KJ_DTYPE_FLOAT8_E4M3FN:
	case KJ_DTYPE_FLOAT8_E5M2:
		return (double)((int64_t)(i % 15) - 7) * 0.5;
	default: /* float16, float32, float64, bfloat16 */
		return (double)(i % 97) * 0.25 - 7.0;
	}
}

/* Store v as element `flat` of dtype dt at p, in the given byte order. */
static void store(unsigned char *p, size_t flat, enum kj_dtype dt, double v,
		  int big_endian)
{
	size_t w = kj_dtype_size(dt), k;
	unsigned char b[8];
	union {
		int8_t i8; int16_t i16; int32_t i32; int64_t i64;
		uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64;
		float f32; double f64;
	} x;

	switch (dt) {
	case KJ_DTYPE_BOOL:
		x.u8 = v != 0.0;
		break;
	case KJ_DTYPE_INT8:
		x.i8 = (int8_t)v;
		break;
	case KJ_DTYPE_INT16:
		x.i16 = (int16_t)v;
		break;
	case KJ_DTYPE_INT32:
		x.i32 = (int32_t)v;
		break;
	case KJ_DTYPE_INT64:
		x.i64 = (int64_t)v;
		break;
	case KJ_DTYPE_UINT8:
		x.u8 = (uint8_t)v;
		break;
	case KJ_DTYPE_UINT16:
		x.u16 = (uint16_t)v;
		break;
	case KJ_DTYPE_UINT32:
		x.u32 = (uint32_t)v;
		break;
	case KJ_DTYPE_UINT64:
		x.u64 = (uint64_t)v;
		break;
	case KJ_DTYPE_FLOAT16:
		x.u16 = kj_f32_to_f16((float)v);
		break;
	case KJ_DTYPE_FLOAT32:
		x.f32 = (float)v;
		break;
	case KJ_DTYPE_FLOAT64:
		x.f64 = v;
		break;
	case KJ_DTYPE_BFLOAT16:
		x.u16 = kj_f32_to_bf16((float)v);
		break;
	case KJ_DTYPE_FLOAT8_E4M3FN:
		x.u8 = kj_f32_to_e4m3fn((float)v);
		break;
	case KJ_DTYPE_FLOAT8_E5M2:
		x.u8 = kj_f32_to_e5m2((float)v);
		break;
	default:
		fprintf(stderr, "npy_check: cannot store dtype %d\n", (int)dt);
		exit(2);
	}
	memcpy(b, &x, w);
	for (k = 0; k < w; k++)
		p[flat * w + k] = big_endian != host_big_endian() ? b[w - 1 - k]
								  : b[k];
}

/* C-order index of the multi-index idx. */
static uint64_t c_index(const struct kj_tensor *t, const int64_t *idx)
{
	uint64_t c = 0;
	int d;

	for (d = 0; d < t->ndim; d++)
		c = c * (uint64_t)t->shape[d] + (uint64_t)idx[d];
	return c;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: npy_check check FILE DTYPE C|F '<'|'>'|'|' VERSION [DIM...]\n"
		"       npy_check write FILE DTYPE C|F '<'|'>'|'|' [DIM...]\n"
		"       npy_check error FILE\n");
	exit(2);
}

static enum kj_dtype parse_dtype(const char *s)
{
	enum kj_dtype dt = kj_dtype_from_name(s);

	if (dt == KJ_DTYPE_INVALID) {
		fprintf(stderr, "npy_check: unknown dtype '%s'\n", s);
		exit(2);
	}
	return dt;
}

static int parse_order(const char *s)
{
	if (strcmp(s, "C") && strcmp(s, "F"))
		usage();
	return s[0] == 'F';
}

/* '<' little, '>' big; '|' only for one-byte dtypes, which have no byte
 * order (kjudge reads and writes them with big_endian 0 whatever it is
 * told, so any of the three means 0 for them). */
static int parse_endian(const char *s, enum kj_dtype dt)
{
	if (kj_dtype_size(dt) == 1 &&
	    (!strcmp(s, "|") || !strcmp(s, "<") || !strcmp(s, ">")))
		return 0;
	if (!strcmp(s, "<"))
		return 0;
	if (!strcmp(s, ">"))
		return 1;
	fprintf(stderr, "npy_check: bad byte order '%s' for %s\n", s,
		kj_dtype_name(dt));
	exit(2);
}

static int parse_shape(int argc, char **argv, int64_t *shape)
{
	int i;

	if (argc > KJ_MAX_DIMS)
		usage();
	for (i = 0; i < argc; i++) {
		char *end;

		errno = 0;
		shape[i] = strtoll(argv[i], &end, 10);
		if (errno || end == argv[i] || *end || shape[i] < 0) {
			fprintf(stderr, "npy_check: bad dimension '%s'\n",
				argv[i]);
			exit(2);
		}
	}
	return argc;
}

/* The format version in the file's header, via the public parser. */
static int file_version(const char *path, int *major, int *minor)
{
	unsigned char buf[65536];
	struct kj_npy_header h;
	struct kj_error err;
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (kj_npy_parse_header(buf, n, &h, &err) != KJ_OK) {
		fprintf(stderr, "npy_check: %s\n", err.msg);
		return -1;
	}
	*major = h.major;
	*minor = h.minor;
	return 0;
}

static int cmd_check(int argc, char **argv)
{
	const char *path;
	enum kj_dtype dt;
	int64_t shape[KJ_MAX_DIMS], idx[KJ_MAX_DIMS];
	struct kj_tensor t;
	struct kj_error err;
	int fortran, big, ndim, major, minor, d, bad = 0;
	char version[16], want_shape[256], got_shape[256];
	size_t j;

	if (argc < 6)
		usage();
	path = argv[1];
	dt = parse_dtype(argv[2]);
	fortran = parse_order(argv[3]);
	big = parse_endian(argv[4], dt);
	ndim = parse_shape(argc - 6, argv + 6, shape);

	if (file_version(path, &major, &minor) != 0)
		return 2;
	snprintf(version, sizeof(version), "%d.%d", major, minor);
	if (strcmp(version, argv[5])) {
		fprintf(stderr, "%s: format version %s, want %s\n", path,
			version, argv[5]);
		bad = 1;
	}

	kj_tensor_init(&t);
	if (kj_npy_load(&t, path, &err) != KJ_OK) {
		fprintf(stderr, "npy_check: %s: %s\n", kj_err_name(err.code),
			err.msg);
		return 2;
	}
	if (t.dtype != kj_dtype_storage(dt)) {
		fprintf(stderr, "%s: dtype %s, want %s\n", path,
			kj_dtype_name(t.dtype),
			kj_dtype_name(kj_dtype_storage(dt)));
		bad = 1;
	} else if (kj_tensor_reinterpret(&t, dt, &err) != KJ_OK) {
		fprintf(stderr, "%s: %s\n", path, err.msg);
		bad = 1;
	}
	if (t.fortran_order != fortran || t.big_endian != big) {
		fprintf(stderr,
			"%s: fortran_order %d big_endian %d, want %d %d\n",
			path, t.fortran_order, t.big_endian, fortran, big);
		bad = 1;
	}
	kj_shape_format(&t, got_shape, sizeof(got_shape));
	{
		struct kj_tensor w;

		/* Format the expected shape the same way. */
		if (kj_tensor_borrow(&w, KJ_DTYPE_UINT8, ndim, shape, shape,
				     &err) != KJ_OK) {
			fprintf(stderr, "npy_check: %s\n", err.msg);
			return 2;
		}
		kj_shape_format(&w, want_shape, sizeof(want_shape));
	}
	if (strcmp(got_shape, want_shape)) {
		fprintf(stderr, "%s: shape %s, want %s\n", path, got_shape,
			want_shape);
		bad = 1;
	}
	if (bad) {
		kj_tensor_release(&t);
		return 1;
	}

	for (j = 0; j < t.nelem; j++) {
		double got, want;
		uint64_t c;

		kj_tensor_unravel(&t, j, idx);
		c = c_index(&t, idx);
		got = kj_tensor_get(&t, j);
		want = value(dt, c);
		if (got == want)
			continue;
		if (bad < MAX_SHOWN) {
			fprintf(stderr, "%s: element [", path);
			for (d = 0; d < t.ndim; d++)
				fprintf(stderr, "%s%lld", d ? ", " : "",
					(long long)idx[d]);
			fprintf(stderr,
				"] (stored at %zu): got %.17g, want %.17g\n",
				j, got, want);
		}
		bad++;
	}
	if (bad)
		fprintf(stderr, "%s: %d of %zu elements differ\n", path, bad,
			t.nelem);
	kj_tensor_release(&t);
	return bad ? 1 : 0;
}

static int cmd_write(int argc, char **argv)
{
	enum kj_dtype dt;
	int64_t shape[KJ_MAX_DIMS], idx[KJ_MAX_DIMS];
	struct kj_tensor t;
	struct kj_error err;
	int fortran, big, ndim, rc;
	void *data;
	size_t j;

	if (argc < 5)
		usage();
	dt = parse_dtype(argv[2]);
	fortran = parse_order(argv[3]);
	big = parse_endian(argv[4], dt);
	ndim = parse_shape(argc - 5, argv + 5, shape);
	if (kj_tensor_alloc(&t, dt, ndim, shape, &data, &err) != KJ_OK) {
		fprintf(stderr, "npy_check: %s\n", err.msg);
		return 2;
	}
	t.fortran_order = fortran;
	t.big_endian = big;
	for (j = 0; j < t.nelem; j++) {
		kj_tensor_unravel(&t, j, idx);
		store(data, j, dt, value(dt, c_index(&t, idx)), big);
	}
	rc = kj_npy_save(argv[1], &t, &err);
	kj_tensor_release(&t);
	if (rc != KJ_OK) {
		fprintf(stderr, "npy_check: %s\n", err.msg);
		return 2;
	}
	return 0;
}

static int cmd_error(int argc, char **argv)
{
	struct kj_tensor t;
	struct kj_error err;

	if (argc != 2)
		usage();
	kj_tensor_init(&t);
	kj_error_clear(&err);
	if (kj_npy_load(&t, argv[1], &err) == KJ_OK) {
		fprintf(stderr, "%s: loaded, but an error was expected\n",
			argv[1]);
		kj_tensor_release(&t);
		return 1;
	}
	printf("%s: %s\n", kj_err_name(err.code), err.msg);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "check"))
		return cmd_check(argc - 1, argv + 1);
	if (!strcmp(argv[1], "write"))
		return cmd_write(argc - 1, argv + 1);
	if (!strcmp(argv[1], "error"))
		return cmd_error(argc - 1, argv + 1);
	usage();
	return 2;
}
