/*
 * dtype.c - dtype names, widths, thresholds and scalar conversions.
 *
 * The narrow float formats (float16, bfloat16, float8_e4m3fn, float8_e5m2)
 * are decoded exactly and encoded with round-to-nearest-even, matching the
 * casts of torch (c10's Half, BFloat16, Float8_e4m3fn and Float8_e5m2).
 */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "kjudge/dtype.h"
#include "tensor/tensor_internal.h"

struct dt_info {
	const char *name;
	size_t width;
};

static const struct dt_info dt_table[KJ_DTYPE_COUNT_] = {
	[KJ_DTYPE_INVALID] = { "invalid", 0 },
#define KJ__DT_ROW(e, name, width, code) [KJ_DTYPE_##e] = { name, width },
	KJ_DTYPE_MAP(KJ__DT_ROW)
#undef KJ__DT_ROW
};

static int dt_valid(enum kj_dtype dt)
{
	return dt > KJ_DTYPE_INVALID && dt < KJ_DTYPE_COUNT_;
}

const char *kj_dtype_name(enum kj_dtype dt)
{
	return dt_valid(dt) ? dt_table[dt].name : "invalid";
}

size_t kj_dtype_size(enum kj_dtype dt)
{
	return dt_valid(dt) ? dt_table[dt].width : 0;
}

int kj_dtype_is_float(enum kj_dtype dt)
{
	switch (dt) {
	case KJ_DTYPE_FLOAT16:
	case KJ_DTYPE_FLOAT32:
	case KJ_DTYPE_FLOAT64:
	case KJ_DTYPE_BFLOAT16:
	case KJ_DTYPE_FLOAT8_E4M3FN:
	case KJ_DTYPE_FLOAT8_E5M2:
		return 1;
	default:
		return 0;
	}
}

int kj_dtype_is_integer(enum kj_dtype dt)
{
	switch (dt) {
	case KJ_DTYPE_UINT8:
	case KJ_DTYPE_UINT16:
	case KJ_DTYPE_UINT32:
	case KJ_DTYPE_UINT64:
		return 1;
	default:
		return kj_dtype_is_signed_integer(dt);
	}
}

int kj_dtype_is_signed_integer(enum kj_dtype dt)
{
	switch (dt) {
	case KJ_DTYPE_INT8:
	case KJ_DTYPE_INT16:
	case KJ_DTYPE_INT32:
	case KJ_DTYPE_INT64:
		return 1;
	default:
		return 0;
	}
}

static const struct {
	const char *alias;
	enum kj_dtype dt;
} dt_aliases[] = {
	{ "half", KJ_DTYPE_FLOAT16 },     { "fp16", KJ_DTYPE_FLOAT16 },
	{ "float", KJ_DTYPE_FLOAT32 },    { "fp32", KJ_DTYPE_FLOAT32 },
	{ "double", KJ_DTYPE_FLOAT64 },   { "fp64", KJ_DTYPE_FLOAT64 },
	{ "bf16", KJ_DTYPE_BFLOAT16 },
	{ "float8_e4m3", KJ_DTYPE_FLOAT8_E4M3FN },
	{ "fp8_e4m3", KJ_DTYPE_FLOAT8_E4M3FN },
	{ "fp8_e4m3fn", KJ_DTYPE_FLOAT8_E4M3FN },
	{ "fp8_e5m2", KJ_DTYPE_FLOAT8_E5M2 },
	{ "long", KJ_DTYPE_INT64 },       { "int", KJ_DTYPE_INT32 },
	{ "short", KJ_DTYPE_INT16 },      { "byte", KJ_DTYPE_UINT8 },
	{ "char", KJ_DTYPE_INT8 },
};

enum kj_dtype kj_dtype_from_name(const char *name)
{
	size_t i;
	int dt;

	if (!name)
		return KJ_DTYPE_INVALID;
	if (strncmp(name, "torch.", 6) == 0)
		name += 6;
	for (dt = KJ_DTYPE_INVALID + 1; dt < KJ_DTYPE_COUNT_; dt++)
		if (strcasecmp(name, dt_table[dt].name) == 0)
			return (enum kj_dtype)dt;
	for (i = 0; i < sizeof(dt_aliases) / sizeof(dt_aliases[0]); i++)
		if (strcasecmp(name, dt_aliases[i].alias) == 0)
			return dt_aliases[i].dt;
	return KJ_DTYPE_INVALID;
}

enum kj_dtype kj_dtype_storage(enum kj_dtype dt)
{
	switch (dt) {
	case KJ_DTYPE_BFLOAT16:
		return KJ_DTYPE_UINT16;
	case KJ_DTYPE_FLOAT8_E4M3FN:
	case KJ_DTYPE_FLOAT8_E5M2:
		return KJ_DTYPE_UINT8;
	default:
		return dt;
	}
}

/* --- thresholds ------------------------------------------------------------ */

#define KJ_T_FALLBACK 0x1p-13

double kj_threshold_for_dtype(enum kj_dtype dt)
{
	switch (dt) {
	case KJ_DTYPE_FLOAT16:
		return 0x1p-10;
	case KJ_DTYPE_BFLOAT16:
		return 0x1p-7;
	case KJ_DTYPE_FLOAT32:
		return 0x1p-13;
	case KJ_DTYPE_FLOAT8_E4M3FN:
		return 0x1p-3;
	case KJ_DTYPE_FLOAT8_E5M2:
		return 0x1p-2;
	default:
		return KJ_T_FALLBACK;
	}
}

double kj_threshold_for_name(const char *name, int *known)
{
	enum kj_dtype dt;

	if (name && (strcasecmp(name, "hifloat32") == 0 ||
		     strcasecmp(name, "hf32") == 0)) {
		if (known)
			*known = 1;
		return 0x1p-11;
	}
	dt = kj_dtype_from_name(name);
	if (known)
		*known = dt != KJ_DTYPE_INVALID;
	return kj_threshold_for_dtype(dt);
}

/* --- narrow float formats ----------------------------------------------------- */

static float bits_to_f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

static uint32_t f32_to_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

/*
 * A binary float format with `mbits` mantissa bits, exponent bias `bias` and
 * smallest normal exponent 1 - bias.  Encoding rounds |a| to the format's
 * grid with round-to-nearest-even (nearbyint in the default rounding mode;
 * the division by a power of two is exact), then packs exponent and
 * mantissa.  The caller handles sign, NaN and overflow, whose rules differ
 * between formats.
 */
static uint32_t mini_encode_mag(double a, int mbits, int bias)
{
	int emin = 1 - bias, ex;
	double quantum, q;

	if (a == 0.0)
		return 0;
	(void)frexp(a, &ex);
	ex -= 1; /* a = 1.f * 2^ex */
	if (ex < emin)
		ex = emin;
	quantum = ldexp(1.0, ex - mbits);
	q = nearbyint(a / quantum) * quantum;
	if (q == 0.0)
		return 0;
	(void)frexp(q, &ex);
	ex -= 1;
	if (ex < emin) /* subnormal: exponent field 0 */
		return (uint32_t)ldexp(q, mbits - emin);
	return ((uint32_t)(ex + bias) << mbits) |
	       ((uint32_t)ldexp(q, mbits - ex) - (1u << mbits));
}

static double mini_decode_mag(uint32_t e, uint32_t m, int mbits, int bias)
{
	if (e == 0)
		return ldexp((double)m, 1 - bias - mbits);
	return ldexp((double)(m | (1u << mbits)), (int)e - bias - mbits);
}

float kj_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t em = h & 0x7fffu;
	uint32_t o = em << 13;
	float f;

	/* Re-bias the exponent: normals by 112, Inf/NaN to 255, subnormals
	 * through an exact float subtraction. */
	if (em >= 0x7c00u) {
		o |= 0x7f800000u;
		f = bits_to_f32(o);
	} else if (em < 0x0400u) {
		f = bits_to_f32(o + (113u << 23)) - bits_to_f32(113u << 23);
	} else {
		f = bits_to_f32(o + (112u << 23));
	}
	return bits_to_f32(f32_to_bits(f) | sign);
}

uint16_t kj_f32_to_f16(float f)
{
	uint32_t u = f32_to_bits(f);
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
	double a = fabs((double)f);

	if (isnan(f))
		return (uint16_t)(sign | 0x7e00u);
	/* Above the largest half (65504) plus half an ulp (16) rounds to Inf. */
	if (a >= 65520.0)
		return (uint16_t)(sign | 0x7c00u);
	return (uint16_t)(sign | mini_encode_mag(a, 10, 15));
}

float kj_bf16_to_f32(uint16_t b)
{
	return bits_to_f32((uint32_t)b << 16);
}

uint16_t kj_f32_to_bf16(float f)
{
	uint32_t u = f32_to_bits(f);

	if (isnan(f))
		return (uint16_t)((u >> 16) | 0x0040u);
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

float kj_e4m3fn_to_f32(uint8_t v)
{
	uint32_t e = (v >> 3) & 0xfu, m = v & 7u;
	double mag;

	if (e == 15 && m == 7)
		return (v & 0x80u) ? -NAN : NAN;
	mag = mini_decode_mag(e, m, 3, 7);
	return (float)((v & 0x80u) ? -mag : mag);
}

uint8_t kj_f32_to_e4m3fn(float f)
{
	uint8_t sign = (f32_to_bits(f) >> 24) & 0x80u;
	double a = fabs((double)f);

	/* No Inf in this format: NaN, and anything from 480 up (which would
	 * round past the largest value 448), become NaN, as in torch. */
	if (isnan(f) || a >= 480.0)
		return (uint8_t)(sign | 0x7fu);
	return (uint8_t)(sign | mini_encode_mag(a, 3, 7));
}

float kj_e5m2_to_f32(uint8_t v)
{
	uint32_t e = (v >> 2) & 0x1fu, m = v & 3u;
	double mag;

	if (e == 31)
		mag = m ? NAN : INFINITY;
	else
		mag = mini_decode_mag(e, m, 2, 15);
	return (float)((v & 0x80u) ? -mag : mag);
}

uint8_t kj_f32_to_e5m2(float f)
{
	uint8_t sign = (f32_to_bits(f) >> 24) & 0x80u;
	double a = fabs((double)f);

	if (isnan(f))
		return (uint8_t)(sign | 0x7fu);
	/* Largest finite 57344; from 61440 (half an ulp above) it is Inf. */
	if (a >= 61440.0)
		return (uint8_t)(sign | 0x7cu);
	return (uint8_t)(sign | mini_encode_mag(a, 2, 15));
}

/* --- generic element access --------------------------------------------------- */

static void swap_bytes(unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n / 2; i++) {
		unsigned char c = p[i];

		p[i] = p[n - 1 - i];
		p[n - 1 - i] = c;
	}
}

/* The bytes of element i in host order, in the union member of its width. */
union raw {
	int8_t i8; int16_t i16; int32_t i32; int64_t i64;
	uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64;
	float f32; double f64;
};

static void load_raw(const void *base, size_t i, enum kj_dtype dt, int swap,
		     union raw *v)
{
	size_t w = kj_dtype_size(dt);
	unsigned char b[8];

	memcpy(b, (const unsigned char *)base + i * w, w);
	if (swap && w > 1)
		swap_bytes(b, w);
	memcpy(v, b, w);
}

double kj__load_f64(const void *base, size_t i, enum kj_dtype dt, int swap)
{
	union raw v;

	load_raw(base, i, dt, swap, &v);
	switch (dt) {
	case KJ_DTYPE_FLOAT16:
		return kj_f16_to_f32(v.u16);
	case KJ_DTYPE_FLOAT32:
		return v.f32;
	case KJ_DTYPE_FLOAT64:
		return v.f64;
	case KJ_DTYPE_BFLOAT16:
		return kj_bf16_to_f32(v.u16);
	case KJ_DTYPE_FLOAT8_E4M3FN:
		return kj_e4m3fn_to_f32(v.u8);
	case KJ_DTYPE_FLOAT8_E5M2:
		return kj_e5m2_to_f32(v.u8);
	case KJ_DTYPE_INVALID:
	case KJ_DTYPE_COUNT_:
		return NAN;
	default:
		break;
	}
	if (kj_dtype_is_signed_integer(dt))
		return (double)kj__int_from_bits(
			kj__load_int_bits(base, i, dt, swap));
	return (double)kj__load_int_bits(base, i, dt, swap);
}

uint64_t kj__load_int_bits(const void *base, size_t i, enum kj_dtype dt,
			   int swap)
{
	union raw v;

	if (!kj_dtype_is_integer(dt) && dt != KJ_DTYPE_BOOL)
		return 0;
	load_raw(base, i, dt, swap, &v);
	/* Converting a negative value to uint64_t is defined (modulo 2^64),
	 * which is exactly the sign extension wanted. */
	switch (dt) {
	case KJ_DTYPE_BOOL:
		return v.u8 != 0;
	case KJ_DTYPE_INT8:
		return (uint64_t)v.i8;
	case KJ_DTYPE_INT16:
		return (uint64_t)v.i16;
	case KJ_DTYPE_INT32:
		return (uint64_t)v.i32;
	case KJ_DTYPE_INT64:
		return (uint64_t)v.i64;
	case KJ_DTYPE_UINT8:
		return v.u8;
	case KJ_DTYPE_UINT16:
		return v.u16;
	case KJ_DTYPE_UINT32:
		return v.u32;
	default:
		return v.u64;
	}
}

double kj__round_to_dtype(double v, enum kj_dtype dt)
{
	switch (dt) {
	case KJ_DTYPE_BOOL:
		return v != 0.0;
	case KJ_DTYPE_FLOAT16:
		return kj_f16_to_f32(kj_f32_to_f16((float)v));
	case KJ_DTYPE_FLOAT32:
		return (float)v;
	case KJ_DTYPE_BFLOAT16:
		return kj_bf16_to_f32(kj_f32_to_bf16((float)v));
	case KJ_DTYPE_FLOAT8_E4M3FN:
		return kj_e4m3fn_to_f32(kj_f32_to_e4m3fn((float)v));
	case KJ_DTYPE_FLOAT8_E5M2:
		return kj_e5m2_to_f32(kj_f32_to_e5m2((float)v));
	default:
		return v;
	}
}
