/*
 * fuzz_npy_header.c - libFuzzer target for kj_npy_parse_header().
 *
 *   make fuzz [FUZZ_SECONDS=N]
 *
 * The input is the start of a .npy file.  Beyond "no crash, no read past
 * the buffer, no undefined behaviour" (AddressSanitizer and UBSan are on),
 * the target checks what the parser promises in tensor.h:
 *   - on success, the header is self-consistent: a known version, a storage
 *     dtype, at most KJ_MAX_DIMS non-negative dimensions whose product is
 *     nelem, nbytes = nelem * itemsize, and the data offset inside the
 *     input and past the fixed prefix;
 *   - the parser reads nothing after the header: parsing exactly the
 *     header's bytes gives the same result, one byte fewer is truncation;
 *   - on failure, the error is a KJ_E* code of the documented set, with a
 *     one-line, NUL-terminated, non-empty message, and *hdr is zeroed.
 * A broken promise aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/dtype.h"
#include "kjudge/error.h"
#include "kjudge/tensor.h"
#include "fuzz.h"

/* Largest header the parser accepts (npy.c's NPY_HEADER_MAX) plus the
 * longest prefix. */
#define MAX_DATA_OFFSET (12 + (1u << 20))

static int documented(int rc)
{
	return rc == KJ_ENPY_MAGIC || rc == KJ_ENPY_VERSION ||
	       rc == KJ_ENPY_TRUNCATED || rc == KJ_ENPY_HEADER ||
	       rc == KJ_EDTYPE || rc == KJ_ESHAPE || rc == KJ_EOVERFLOW;
}

static void check_failure(int rc, const struct kj_error *err,
			  const struct kj_npy_header *h)
{
	static const struct kj_npy_header zero;
	size_t n;

	CHECK(documented(rc));
	CHECK(err->code == rc);
	n = strnlen(err->msg, sizeof(err->msg));
	CHECK(n > 0 && n < sizeof(err->msg));
	CHECK(memchr(err->msg, '\n', n) == NULL);
	CHECK(memcmp(h, &zero, sizeof(zero)) == 0);
}

static void check_success(const struct kj_npy_header *h, size_t size)
{
	size_t w = kj_dtype_size(h->dtype), nelem = 1;
	int i, zero = 0;

	CHECK(h->major >= 1 && h->major <= 3 && h->minor == 0);
	CHECK(w > 0 && kj_dtype_storage(h->dtype) == h->dtype);
	CHECK(h->big_endian == 0 || h->big_endian == 1);
	CHECK(w > 1 || h->big_endian == 0);
	CHECK(h->fortran_order == 0 || h->fortran_order == 1);
	CHECK(h->ndim >= 0 && h->ndim <= KJ_MAX_DIMS);
	for (i = 0; i < h->ndim; i++) {
		CHECK(h->shape[i] >= 0);
		if (h->shape[i] == 0)
			zero = 1;
		else
			CHECK(!__builtin_mul_overflow(
				nelem, (size_t)h->shape[i], &nelem));
	}
	if (zero)
		nelem = 0;
	CHECK(h->nelem == nelem);
	CHECK(h->nelem <= SIZE_MAX / w && h->nbytes == h->nelem * w);
	CHECK(h->nbytes <= (size_t)INT64_MAX - h->data_offset);
	/* Prefix (10 or 12 bytes), then at least the "{...}\n" of a dict
	 * with three keys. */
	CHECK(h->data_offset >= (h->major == 1 ? 10u : 12u) + 40);
	CHECK(h->data_offset <= size && h->data_offset <= MAX_DATA_OFFSET);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kj_npy_header h, again;
	struct kj_error err;
	int rc;

	memset(&err, 0x5a, sizeof(err)); /* the parser must fill it */
	rc = kj_npy_parse_header(data, size, &h, &err);
	if (rc != KJ_OK) {
		check_failure(rc, &err, &h);
		return 0;
	}
	check_success(&h, size);

	/* Only the header's bytes matter. */
	rc = kj_npy_parse_header(data, h.data_offset, &again, &err);
	CHECK(rc == KJ_OK && memcmp(&h, &again, sizeof(h)) == 0);
	rc = kj_npy_parse_header(data, h.data_offset - 1, &again, &err);
	CHECK(rc == KJ_ENPY_TRUNCATED);
	check_failure(rc, &err, &again);
	return 0;
}
