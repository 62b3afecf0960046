/*
 * internal.h - declarations shared between library files (kj__ prefix).
 *
 * Include it after every system header: it ends by including banned.h.
 */
#ifndef KJ_INTERNAL_H
#define KJ_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "kjudge/dtype.h"
#include "kjudge/tensor.h"

/* Number of online CPUs, at least 1. */
int kj__online_cpus(void);

/* Element `i` of `base` (dtype dt, byte-swapped if `swap`) as a double.
 * Exact for every dtype but 64-bit integers beyond 2^53. */
double kj__load_f64(const void *base, size_t i, enum kj_dtype dt, int swap);

/* Round a double to dtype `dt` and back, as a torch cast to `dt` would:
 * round to nearest even for the float types, truncation toward zero for the
 * integer types (values outside their range saturate), nonzero -> 1 for bool. */
double kj__round_to_dtype(double v, enum kj_dtype dt);

/* 1 when this machine stores multi-byte values little-endian. */
static inline int kj__host_little_endian(void)
{
	const uint16_t one = 1;
	return *(const unsigned char *)&one == 1;
}

#include "banned.h"

#endif /* KJ_INTERNAL_H */
