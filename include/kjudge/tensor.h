/*
 * kjudge/tensor.h - n-dimensional tensors and the .npy file format.
 *
 * A struct kj_tensor describes a block of elements: dtype, shape, order (C or
 * Fortran), byte order, and where the bytes are.  The bytes are either
 * memory-mapped from a .npy file (read-only), or owned heap memory, or
 * borrowed from the caller.  Readers never copy the data: a 1 GiB golden
 * output is mapped, not read.
 *
 * Alignment: numpy writes its data at a multiple of 64 bytes from the start
 * of the file, so a mapped file's data is 64-byte aligned; a file written by
 * another tool may put it anywhere.  Read elements with memcpy() (or
 * kj_tensor_get()), not by casting `data` to a wider pointer.
 *
 * Lifecycle (fixed meaning, as in the rest of kjudge):
 *   kj_tensor_init(&t)      a valid empty tensor, nothing to release
 *   kj_npy_load(&t, ...)    fills an initialised tensor; on error t stays
 *                           empty and needs no release
 *   kj_tensor_release(&t)   unmaps or frees what t owns, leaves t empty
 *
 * .npy support: format versions 1.0, 2.0 and 3.0 (3.0 = UTF-8 header);
 * 'fortran_order' True or False; little- and big-endian ('<', '>', '|', '=');
 * the dtypes of dtype.h.  The header parser is a strict, bounded parser of the
 * Python dict literal numpy writes (it is fuzzed: tests/fuzz/).
 */
#ifndef KJUDGE_TENSOR_H
#define KJUDGE_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "kjudge/dtype.h"
#include "kjudge/error.h"

/* Most dimensions a tensor may have (numpy's own limit is 64). */
#define KJ_MAX_DIMS 64

enum kj_tensor_mem {
	KJ_TENSOR_MEM_NONE = 0,  /* empty, data == NULL */
	KJ_TENSOR_MEM_MMAP,      /* mapping of a file; unmapped on release */
	KJ_TENSOR_MEM_HEAP,      /* malloc'ed; freed on release */
	KJ_TENSOR_MEM_BORROWED   /* the caller's memory; never freed here */
};

struct kj_tensor {
	enum kj_dtype dtype;  /* logical dtype (see dtype.h) */
	int ndim;             /* 0 for a scalar */
	int64_t shape[KJ_MAX_DIMS];
	int fortran_order;    /* 1: column-major storage */
	int big_endian;       /* 1: elements are stored big-endian */
	size_t nelem;         /* product of shape (1 for a scalar) */
	size_t nbytes;        /* nelem * element size */
	const void *data;     /* first element; NULL when nelem == 0 */

	/* Ownership of the bytes; private to the library (tensor.c, npy.c). */
	enum kj_tensor_mem mem;
	void *map_base;   /* start of the mapping (MMAP) or allocation (HEAP) */
	size_t map_len;   /* length of the mapping */
};

/* Parsed .npy header.  Plain data: nothing to release. */
struct kj_npy_header {
	int major, minor;       /* format version */
	size_t data_offset;     /* byte offset of the first element */
	enum kj_dtype dtype;    /* storage dtype (never bfloat16/float8) */
	int big_endian;
	int fortran_order;
	int ndim;
	int64_t shape[KJ_MAX_DIMS];
	size_t nelem, nbytes;   /* derived from shape and dtype, overflow-checked */
};

void kj_tensor_init(struct kj_tensor *t);
void kj_tensor_release(struct kj_tensor *t);

/*
 * Parse the header at the start of `buf` (`len` bytes, which may be more or
 * less than the header).  Never reads past buf[len-1].  Returns KJ_OK, or
 * KJ_ENPY_MAGIC / KJ_ENPY_VERSION / KJ_ENPY_TRUNCATED / KJ_ENPY_HEADER /
 * KJ_EDTYPE / KJ_ESHAPE / KJ_EOVERFLOW with err filled; *hdr is then
 * zeroed.  A `len` shorter than the header is KJ_ENPY_TRUNCATED, so a caller
 * may parse the first bytes of a file and read more only if needed.  On
 * success data_offset + nbytes, the file size the header implies, is at
 * most INT64_MAX.
 */
int kj_npy_parse_header(const void *buf, size_t len, struct kj_npy_header *hdr,
			struct kj_error *err);

/*
 * Map the .npy file at `path` into `t` (read-only, MAP_PRIVATE).  The file
 * must hold exactly the bytes the header promises (extra or missing bytes are
 * KJ_ENPY_SIZE).  On success the caller owns t and must kj_tensor_release()
 * it; the file descriptor is already closed.  On error t is left empty.
 * Whatever t held before is overwritten, not released.  Other errors:
 * KJ_ENOENT, KJ_EACCES, KJ_EIO, KJ_ENOMEM (from the system), KJ_EINVAL (a
 * directory or other non-regular file), and those of kj_npy_parse_header().
 */
int kj_npy_load(struct kj_tensor *t, const char *path, struct kj_error *err);

/*
 * The same for a descriptor the caller keeps (a sealed memfd a worker sent,
 * say); `name` is what messages call it.  The descriptor is not closed; the
 * mapping stays valid after the caller closes it.
 */
int kj_npy_load_fd(struct kj_tensor *t, int fd, const char *name, struct kj_error *err);

/*
 * Write `t` to `path` as .npy (version 1.0, or 2.0 when the header needs
 * it), in t's order and byte order.  bfloat16 is written as uint16 ('<u2' or
 * '>u2') and the float8 types as '|u1' (see dtype.h).  Written to a
 * temporary file in the same directory, fsync'ed and renamed, so a reader
 * never sees half a file; on error the temporary file is removed and `path`
 * is untouched.  The file gets mode 0666 less the umask, as np.save() would
 * give it.  The header is laid out as numpy's (same key order, spacing and
 * padding), so the file is byte for byte what np.save() writes for the same
 * array and 'fortran_order'.  Does not take ownership of t.  Errors:
 * KJ_EINVAL when t's counts disagree with its shape or it has no data, and
 * the system's (KJ_ENOENT, KJ_EACCES, KJ_EIO).
 */
int kj_npy_save(const char *path, const struct kj_tensor *t, struct kj_error *err);

/*
 * Make `t` a tensor over caller memory: it borrows `data` (which must hold
 * nelem * size bytes and outlive t), C order, native byte order.  Change
 * t->fortran_order or t->big_endian afterwards to describe other layouts.
 * t is overwritten (it must not own anything); on error it is left empty.
 * Returns KJ_EDTYPE for an invalid dtype, KJ_EINVAL/KJ_EOVERFLOW for a bad
 * shape, KJ_EINVAL for NULL data with elements to hold.
 */
int kj_tensor_borrow(struct kj_tensor *t, enum kj_dtype dtype, int ndim,
		     const int64_t *shape, const void *data, struct kj_error *err);

/*
 * Make `t` own a fresh, zero-filled buffer for the given dtype and shape
 * (C order, native byte order).  *out_data receives a writable pointer to
 * it (NULL when the tensor has no elements).  Release frees it.  t is
 * overwritten as by kj_tensor_borrow(); errors are those of
 * kj_tensor_borrow() and KJ_ENOMEM.
 */
int kj_tensor_alloc(struct kj_tensor *t, enum kj_dtype dtype, int ndim,
		    const int64_t *shape, void **out_data, struct kj_error *err);

/*
 * Change the logical dtype of t to `logical`, whose storage form must be
 * t's current dtype (uint16 -> bfloat16, uint8 -> float8_*), or the same
 * dtype.  Returns KJ_EDTYPE with err filled otherwise; t is unchanged then.
 */
int kj_tensor_reinterpret(struct kj_tensor *t, enum kj_dtype logical,
			  struct kj_error *err);

/* Format t's shape as "[2, 3]" ("[]" for a scalar) into buf (always
 * NUL-terminated when size > 0; a shape that does not fit is cut after a
 * whole dimension, as "[2, 3, ...]").  Returns buf. */
char *kj_shape_format(const struct kj_tensor *t, char *buf, size_t size);

/* Multi-index of flat element `flat` (in t's storage order: the last index
 * varies fastest in C order, the first in Fortran order), written to
 * idx[0..ndim-1]. */
void kj_tensor_unravel(const struct kj_tensor *t, size_t flat, int64_t *idx);

/* Element `flat` (storage order) as a double: exact for every dtype but
 * int64/uint64 beyond 2^53.  Handles byte order.  flat < t->nelem.  For
 * tests and reports, not for hot loops. */
double kj_tensor_get(const struct kj_tensor *t, size_t flat);

#endif /* KJUDGE_TENSOR_H */
