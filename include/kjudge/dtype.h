/*
 * kjudge/dtype.h - element types of the tensors kjudge reads and compares.
 *
 * A dtype has a storage form (what the bytes in a .npy file are, e.g. '<u2')
 * and a logical form (what the bytes mean, e.g. bfloat16).  numpy has no
 * bfloat16 or float8 types, so kjudge stores those as the unsigned integer of
 * the same width: plain numpy still loads every file kjudge writes, and the
 * logical dtype travels beside the file (a command-line flag, later the
 * worker protocol).  kj_dtype_storage() gives the storage form of a logical
 * dtype; kj_tensor_reinterpret() (tensor.h) turns the one into the other.
 */
#ifndef KJUDGE_DTYPE_H
#define KJUDGE_DTYPE_H

#include <stddef.h>
#include <stdint.h>

/* X(ENUM, canonical name, byte width, npy type code or NULL) */
#define KJ_DTYPE_MAP(X)                                  \
	X(BOOL, "bool", 1, "b1")                         \
	X(INT8, "int8", 1, "i1")                         \
	X(INT16, "int16", 2, "i2")                       \
	X(INT32, "int32", 4, "i4")                       \
	X(INT64, "int64", 8, "i8")                       \
	X(UINT8, "uint8", 1, "u1")                       \
	X(UINT16, "uint16", 2, "u2")                     \
	X(UINT32, "uint32", 4, "u4")                     \
	X(UINT64, "uint64", 8, "u8")                     \
	X(FLOAT16, "float16", 2, "f2")                   \
	X(FLOAT32, "float32", 4, "f4")                   \
	X(FLOAT64, "float64", 8, "f8")                   \
	X(BFLOAT16, "bfloat16", 2, NULL)                 \
	X(FLOAT8_E4M3FN, "float8_e4m3fn", 1, NULL)       \
	X(FLOAT8_E5M2, "float8_e5m2", 1, NULL)

enum kj_dtype {
	KJ_DTYPE_INVALID = 0,
#define KJ__DT_ENUM(e, name, width, code) KJ_DTYPE_##e,
	KJ_DTYPE_MAP(KJ__DT_ENUM)
#undef KJ__DT_ENUM
	KJ_DTYPE_COUNT_
};

/* Canonical name ("float32"), or "invalid". Static storage. */
const char *kj_dtype_name(enum kj_dtype dt);

/* Bytes per element; 0 for KJ_DTYPE_INVALID. */
size_t kj_dtype_size(enum kj_dtype dt);

/* True for float16/32/64, bfloat16 and the float8 types. */
int kj_dtype_is_float(enum kj_dtype dt);

/* True for int8 ... int64 and uint8 ... uint64 (not bool). */
int kj_dtype_is_integer(enum kj_dtype dt);

/* True for int8 ... int64. */
int kj_dtype_is_signed_integer(enum kj_dtype dt);

/*
 * Parse a dtype name.  Accepts the canonical names, "torch."-prefixed names
 * (as torch prints them), and the usual aliases: half, float, double, bf16,
 * fp16, fp32, fp64, float8_e4m3, fp8_e4m3, fp8_e5m2, long, int, short, byte.
 * Returns KJ_DTYPE_INVALID for anything else.
 */
enum kj_dtype kj_dtype_from_name(const char *name);

/* The dtype numpy sees in the file: uint16 for bfloat16, uint8 for the
 * float8 types, the dtype itself otherwise. */
enum kj_dtype kj_dtype_storage(enum kj_dtype dt);

/*
 * The comparator's threshold t for a golden dtype, from the table of
 * triton-op-verifier: float16 2^-10, bfloat16 2^-7, float32 2^-13,
 * float8_e4m3fn 2^-3, float8_e5m2 2^-2, anything else 2^-13.  hifloat32 has
 * no storage dtype of its own (its data is float32), so it is looked up by
 * name: kj_threshold_for_name("hifloat32") is 2^-11.
 */
double kj_threshold_for_dtype(enum kj_dtype dt);

/* Threshold by dtype name, hifloat32 included; the fallback 2^-13 for names
 * that are not in the table.  Sets *known (if not NULL) to whether the name
 * was in the table or named a known dtype. */
double kj_threshold_for_name(const char *name, int *known);

/* Scalar conversions used by the comparator and by tests.  The float8 and
 * half conversions are exact (every value of the narrow type is a float);
 * the narrowing ones round to nearest even, as torch's casts do, and
 * float8_e4m3fn saturates to NaN on overflow as its definition requires. */
float kj_f16_to_f32(uint16_t h);
uint16_t kj_f32_to_f16(float f);
float kj_bf16_to_f32(uint16_t b);
uint16_t kj_f32_to_bf16(float f);
float kj_e4m3fn_to_f32(uint8_t v);
uint8_t kj_f32_to_e4m3fn(float f);
float kj_e5m2_to_f32(uint8_t v);
uint8_t kj_f32_to_e5m2(float f);

#endif /* KJUDGE_DTYPE_H */
