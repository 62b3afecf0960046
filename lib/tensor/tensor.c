/*
 * tensor.c - struct kj_tensor: construction, release, element access.
 *
 * A tensor is a view of bytes plus the facts needed to read them (dtype,
 * shape, order, byte order).  Who owns the bytes is recorded in t->mem, and
 * kj_tensor_release() is the only place that frees them, whatever made the
 * tensor (kj_npy_load() in npy.c maps files; the functions here borrow or
 * allocate).
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "kjudge/tensor.h"
#include "tensor/tensor_internal.h"

void kj_tensor_init(struct kj_tensor *t)
{
	memset(t, 0, sizeof(*t));
	t->dtype = KJ_DTYPE_INVALID;
	t->data = NULL;
	t->mem = KJ_TENSOR_MEM_NONE;
	t->map_base = NULL;
}

void kj_tensor_release(struct kj_tensor *t)
{
	switch (t->mem) {
	case KJ_TENSOR_MEM_MMAP:
		/* munmap() only fails for arguments we did not get from mmap(),
		 * which would be a bug, not a condition to report. */
		if (t->map_base)
			munmap(t->map_base, t->map_len);
		break;
	case KJ_TENSOR_MEM_HEAP:
		free(t->map_base);
		break;
	case KJ_TENSOR_MEM_NONE:
	case KJ_TENSOR_MEM_BORROWED:
		break;
	}
	kj_tensor_init(t);
}

/*
 * Check a dtype and shape given by a caller, and compute the element and
 * byte counts.  Sizes are kept below INT64_MAX (not only SIZE_MAX) so that
 * they can be compared with file sizes and offsets without another check.
 */
static int shape_size(enum kj_dtype dtype, int ndim, const int64_t *shape,
		      size_t *nelem, size_t *nbytes, struct kj_error *err)
{
	uint64_t n = 1, b;
	int any_zero = 0, i;
	size_t w = kj_dtype_size(dtype);

	if (w == 0)
		return kj_error_set(err, KJ_EDTYPE, "invalid dtype %d",
				    (int)dtype);
	if (ndim < 0 || ndim > KJ_MAX_DIMS)
		return kj_error_set(err, KJ_EINVAL,
				    "%d dimensions (at most %d are supported)",
				    ndim, KJ_MAX_DIMS);
	if (ndim > 0 && !shape)
		return kj_error_set(err, KJ_EINVAL, "shape is NULL");
	/* As numpy does, a zero dimension makes the tensor empty but does
	 * not excuse an overflow in the other dimensions. */
	for (i = 0; i < ndim; i++) {
		if (shape[i] < 0)
			return kj_error_set(err, KJ_EINVAL,
					    "negative dimension %lld",
					    (long long)shape[i]);
		if (shape[i] == 0) {
			any_zero = 1;
			continue;
		}
		if ((uint64_t)shape[i] > (uint64_t)INT64_MAX / n)
			return kj_error_set(err, KJ_EOVERFLOW,
					    "number of elements overflows");
		n *= (uint64_t)shape[i];
	}
	if (n > (uint64_t)INT64_MAX / w)
		return kj_error_set(err, KJ_EOVERFLOW,
				    "size in bytes overflows");
	b = n * w;
	if (b > SIZE_MAX)
		return kj_error_set(err, KJ_EOVERFLOW,
				    "size in bytes does not fit in memory");
	if (any_zero)
		n = b = 0;
	*nelem = (size_t)n;
	*nbytes = (size_t)b;
	return KJ_OK;
}

/* Fill the descriptive fields of t for a C-order, native-endian tensor. */
static void set_layout(struct kj_tensor *t, enum kj_dtype dtype, int ndim,
		       const int64_t *shape, size_t nelem, size_t nbytes)
{
	int i;

	t->dtype = dtype;
	t->ndim = ndim;
	for (i = 0; i < ndim; i++)
		t->shape[i] = shape[i];
	t->fortran_order = 0;
	t->big_endian = !kj__host_little_endian();
	t->nelem = nelem;
	t->nbytes = nbytes;
}

int kj_tensor_borrow(struct kj_tensor *t, enum kj_dtype dtype, int ndim,
		     const int64_t *shape, const void *data,
		     struct kj_error *err)
{
	size_t nelem, nbytes;
	int rc;

	kj_tensor_init(t);
	rc = shape_size(dtype, ndim, shape, &nelem, &nbytes, err);
	if (rc != KJ_OK)
		return rc;
	if (nelem > 0 && !data)
		return kj_error_set(err, KJ_EINVAL,
				    "no data for %zu elements", nelem);
	set_layout(t, dtype, ndim, shape, nelem, nbytes);
	t->data = nelem ? data : NULL;
	t->mem = KJ_TENSOR_MEM_BORROWED;
	return KJ_OK;
}

int kj_tensor_alloc(struct kj_tensor *t, enum kj_dtype dtype, int ndim,
		    const int64_t *shape, void **out_data, struct kj_error *err)
{
	size_t nelem, nbytes;
	void *p = NULL;
	int rc;

	kj_tensor_init(t);
	*out_data = NULL;
	rc = shape_size(dtype, ndim, shape, &nelem, &nbytes, err);
	if (rc != KJ_OK)
		return rc;
	/* calloc() of a large block gets fresh zero pages from the kernel
	 * without touching them, which memset() after malloc() would not. */
	if (nbytes > 0) {
		p = calloc(1, nbytes);
		if (!p)
			return kj_error_set(err, KJ_ENOMEM,
					    "cannot allocate %zu bytes for a tensor",
					    nbytes);
	}
	set_layout(t, dtype, ndim, shape, nelem, nbytes);
	t->data = p;
	t->mem = KJ_TENSOR_MEM_HEAP;
	t->map_base = p;
	t->map_len = nbytes;
	*out_data = p;
	return KJ_OK;
}

int kj_tensor_reinterpret(struct kj_tensor *t, enum kj_dtype logical,
			  struct kj_error *err)
{
	enum kj_dtype storage = kj_dtype_storage(logical);

	if (kj_dtype_size(logical) == 0)
		return kj_error_set(err, KJ_EDTYPE, "invalid dtype %d",
				    (int)logical);
	if (logical == t->dtype)
		return KJ_OK;
	if (storage == logical || storage != t->dtype) {
		/* Name the storage form when there is one: it tells the user
		 * which file dtype would have worked. */
		if (storage != logical)
			return kj_error_set(err, KJ_EDTYPE,
					    "cannot read %s data as %s (%s is stored as %s)",
					    kj_dtype_name(t->dtype),
					    kj_dtype_name(logical),
					    kj_dtype_name(logical),
					    kj_dtype_name(storage));
		return kj_error_set(err, KJ_EDTYPE, "cannot read %s data as %s",
				    kj_dtype_name(t->dtype),
				    kj_dtype_name(logical));
	}
	/* The byte order stays: a big-endian '>u2' file holds big-endian
	 * bfloat16 values.  The width is the same by construction. */
	t->dtype = logical;
	return KJ_OK;
}

char *kj_shape_format(const struct kj_tensor *t, char *buf, size_t size)
{
	/* The longest shape: KJ_MAX_DIMS dimensions of up to 19 digits, each
	 * followed by ", ", and the brackets. */
	char full[KJ_MAX_DIMS * 21 + 8];
	size_t len = 0, keep = 0;
	int i, n;

	if (size == 0)
		return buf;
	full[len++] = '[';
	for (i = 0; i < t->ndim && i < KJ_MAX_DIMS; i++) {
		n = snprintf(full + len, sizeof(full) - len, "%s%lld",
			     i ? ", " : "", (long long)t->shape[i]);
		if (n < 0 || (size_t)n >= sizeof(full) - len)
			break; /* cannot happen: full is large enough */
		len += (size_t)n;
	}
	full[len++] = ']';
	full[len] = '\0';

	if (len < size) {
		memcpy(buf, full, len + 1);
		return buf;
	}
	/* Cut at the last whole dimension that leaves room for "...]", so
	 * that a reader never sees half a number; fall back to a plain cut
	 * when not even "[...]" fits. */
	for (i = 1; i < (int)len; i++)
		if (full[i] == ',' && (size_t)i + 2 + 4 < size)
			keep = (size_t)i + 2;
	if (keep == 0 && size > 5)
		keep = 1;
	if (keep > 0) {
		memcpy(buf, full, keep);
		memcpy(buf + keep, "...]", 5);
		return buf;
	}
	for (i = 0; (size_t)i + 1 < size; i++)
		buf[i] = '.';
	buf[i] = '\0';
	return buf;
}

void kj_tensor_unravel(const struct kj_tensor *t, size_t flat, int64_t *idx)
{
	int i;

	/* Storage order: the last index varies fastest in C order, the
	 * first in Fortran order. */
	for (i = 0; i < t->ndim; i++) {
		int d = t->fortran_order ? i : t->ndim - 1 - i;
		uint64_t dim = (uint64_t)t->shape[d];

		if (dim == 0) {
			idx[d] = 0;
			continue;
		}
		idx[d] = (int64_t)(flat % dim);
		flat /= dim;
	}
}

double kj_tensor_get(const struct kj_tensor *t, size_t flat)
{
	int swap = t->big_endian == kj__host_little_endian() &&
		   kj_dtype_size(t->dtype) > 1;

	assert(flat < t->nelem && t->data);
	return kj__load_f64(t->data, flat, t->dtype, swap);
}
