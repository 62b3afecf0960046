/*
 * tensor_internal.h - what the tensor layer's files share (kj__ internals of
 * lib/tensor/): reading and rounding elements of any dtype.
 *
 * Include it after the system headers, as base/internal.h (which it
 * includes last).
 */
#ifndef KJ_TENSOR_INTERNAL_H
#define KJ_TENSOR_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kjudge/dtype.h"
#include "kjudge/tensor.h"

/* Element `i` of `base` (dtype dt, byte-swapped if `swap`) as a double.
 * Exact for every dtype but 64-bit integers beyond 2^53. */
double kj__load_f64(const void *base, size_t i, enum kj_dtype dt, int swap);

/* Element `i` of `base` (an integer or bool dtype dt, byte-swapped if
 * `swap`) as the 64 bits of its two's complement: sign-extended for the
 * signed dtypes, zero-extended for the unsigned ones, 0 or 1 for bool.
 * Exact for every integer dtype; 0 for any other dtype. */
uint64_t kj__load_int_bits(const void *base, size_t i, enum kj_dtype dt,
			   int swap);

/* The int64_t whose two's complement is x (without the
 * implementation-defined conversion of an out-of-range value). */
static inline int64_t kj__int_from_bits(uint64_t x)
{
	int64_t v;

	memcpy(&v, &x, sizeof(v));
	return v;
}

/* Round a double to dtype `dt` and back, as a torch cast to `dt` would:
 * round to nearest even for the float types, nonzero -> 1 for bool.  Any
 * other dtype returns v: casts to the integer dtypes are exact only in
 * integer arithmetic, which the comparator's integer path does itself. */
double kj__round_to_dtype(double v, enum kj_dtype dt);

#include "base/internal.h"

/* The comparator's x86-64 baseline kernels only, even where the CPU has
 * AVX2 and F16C (compare.c; for the unit tests' second pass, which checks
 * the kernels a machine without them runs).  Before any comparison. */
void kj__compare_baseline_only(int on);

#endif /* KJ_TENSOR_INTERNAL_H */
