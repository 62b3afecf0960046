/*
 * test_dtype.c - dtype names, widths, and the narrow float conversions.
 */
#include <math.h>
#include <stdint.h>

#include "kjudge/dtype.h"
#include "kjudge/error.h"
#include "unit.h"

KJ_TEST(dtype_names_and_aliases)
{
	KJ_CHECK(kj_dtype_from_name("float16") == KJ_DTYPE_FLOAT16);
	KJ_CHECK(kj_dtype_from_name("torch.bfloat16") == KJ_DTYPE_BFLOAT16);
	KJ_CHECK(kj_dtype_from_name("half") == KJ_DTYPE_FLOAT16);
	KJ_CHECK(kj_dtype_from_name("fp8_e4m3") == KJ_DTYPE_FLOAT8_E4M3FN);
	KJ_CHECK(kj_dtype_from_name("float8_e5m2") == KJ_DTYPE_FLOAT8_E5M2);
	KJ_CHECK(kj_dtype_from_name("long") == KJ_DTYPE_INT64);
	KJ_CHECK(kj_dtype_from_name("float128") == KJ_DTYPE_INVALID);
	KJ_CHECK(kj_dtype_from_name("") == KJ_DTYPE_INVALID);
	KJ_CHECK(kj_dtype_from_name(NULL) == KJ_DTYPE_INVALID);
	KJ_CHECK_STR(kj_dtype_name(KJ_DTYPE_FLOAT8_E4M3FN), "float8_e4m3fn");
	KJ_CHECK_STR(kj_dtype_name((enum kj_dtype)999), "invalid");
	KJ_CHECK_INT(kj_dtype_size(KJ_DTYPE_BFLOAT16), 2);
	KJ_CHECK_INT(kj_dtype_size(KJ_DTYPE_INT64), 8);
	KJ_CHECK(kj_dtype_storage(KJ_DTYPE_BFLOAT16) == KJ_DTYPE_UINT16);
	KJ_CHECK(kj_dtype_storage(KJ_DTYPE_FLOAT8_E5M2) == KJ_DTYPE_UINT8);
	KJ_CHECK(kj_dtype_storage(KJ_DTYPE_FLOAT32) == KJ_DTYPE_FLOAT32);
}

KJ_TEST(dtype_float16_known_values)
{
	KJ_CHECK(kj_f16_to_f32(0x3c00) == 1.0f);
	KJ_CHECK(kj_f16_to_f32(0xc000) == -2.0f);
	KJ_CHECK(kj_f16_to_f32(0x7bff) == 65504.0f);
	KJ_CHECK(kj_f16_to_f32(0x0001) == 0x1p-24f);     /* smallest subnormal */
	KJ_CHECK(kj_f16_to_f32(0x03ff) == 1023 * 0x1p-24f);
	KJ_CHECK(kj_f16_to_f32(0x0400) == 0x1p-14f);     /* smallest normal */
	KJ_CHECK(isinf(kj_f16_to_f32(0x7c00)) && kj_f16_to_f32(0x7c00) > 0);
	KJ_CHECK(isinf(kj_f16_to_f32(0xfc00)) && kj_f16_to_f32(0xfc00) < 0);
	KJ_CHECK(isnan(kj_f16_to_f32(0x7e00)));
	KJ_CHECK(signbit(kj_f16_to_f32(0x8000)));
	/* rounding: halfway cases go to even */
	KJ_CHECK_INT(kj_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
	KJ_CHECK_INT(kj_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);
	KJ_CHECK_INT(kj_f32_to_f16(65519.0f), 0x7bff);
	KJ_CHECK_INT(kj_f32_to_f16(65520.0f), 0x7c00);
	KJ_CHECK_INT(kj_f32_to_f16(-1e9f), 0xfc00);
	KJ_CHECK_INT(kj_f32_to_f16(0x1p-25f), 0x0000);   /* ties to even: 0 */
	KJ_CHECK_INT(kj_f32_to_f16(0x1.8p-25f), 0x0001);
}

KJ_TEST(dtype_float16_round_trip_all_values)
{
	uint32_t h;

	for (h = 0; h < 0x10000; h++) {
		float f = kj_f16_to_f32((uint16_t)h);

		if (isnan(f))
			continue;
		KJ_CHECK_INT(kj_f32_to_f16(f), h);
	}
}

KJ_TEST(dtype_bfloat16)
{
	uint32_t b;

	KJ_CHECK(kj_bf16_to_f32(0x3f80) == 1.0f);
	KJ_CHECK_INT(kj_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);          /* tie: even */
	KJ_CHECK_INT(kj_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);      /* tie: even */
	KJ_CHECK_INT(kj_f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
	KJ_CHECK(isnan(kj_bf16_to_f32(kj_f32_to_bf16(NAN))));
	for (b = 0; b < 0x10000; b++) {
		float f = kj_bf16_to_f32((uint16_t)b);

		if (!isnan(f))
			KJ_CHECK_INT(kj_f32_to_bf16(f), b);
	}
}

KJ_TEST(dtype_float8_e4m3fn)
{
	uint32_t v;

	KJ_CHECK(kj_e4m3fn_to_f32(0x38) == 1.0f);
	KJ_CHECK(kj_e4m3fn_to_f32(0x7e) == 448.0f);      /* largest */
	KJ_CHECK(kj_e4m3fn_to_f32(0x01) == 0x1p-9f);     /* smallest subnormal */
	KJ_CHECK(isnan(kj_e4m3fn_to_f32(0x7f)));
	KJ_CHECK(isnan(kj_e4m3fn_to_f32(0xff)));
	KJ_CHECK_INT(kj_f32_to_e4m3fn(460.0f), 0x7e);    /* rounds to 448 */
	KJ_CHECK_INT(kj_f32_to_e4m3fn(480.0f), 0x7f);    /* no Inf: NaN */
	KJ_CHECK_INT(kj_f32_to_e4m3fn(-1e6f), 0xff);
	KJ_CHECK_INT(kj_f32_to_e4m3fn(1.0625f), 0x38);   /* tie: even */
	for (v = 0; v < 256; v++) {
		float f = kj_e4m3fn_to_f32((uint8_t)v);

		if (!isnan(f))
			KJ_CHECK_INT(kj_f32_to_e4m3fn(f), v);
	}
}

KJ_TEST(dtype_float8_e5m2)
{
	uint32_t v;

	KJ_CHECK(kj_e5m2_to_f32(0x3c) == 1.0f);
	KJ_CHECK(kj_e5m2_to_f32(0x7b) == 57344.0f);
	KJ_CHECK(isinf(kj_e5m2_to_f32(0x7c)));
	KJ_CHECK(isnan(kj_e5m2_to_f32(0x7d)));
	KJ_CHECK_INT(kj_f32_to_e5m2(61439.0f), 0x7b);
	KJ_CHECK_INT(kj_f32_to_e5m2(61440.0f), 0x7c);
	for (v = 0; v < 256; v++) {
		float f = kj_e5m2_to_f32((uint8_t)v);

		if (!isnan(f))
			KJ_CHECK_INT(kj_f32_to_e5m2(f), v);
	}
}

KJ_TEST(error_table)
{
	struct kj_error e;

	KJ_CHECK_STR(kj_err_name(KJ_ENOENT), "KJ_ENOENT");
	KJ_CHECK_STR(kj_strerror(KJ_OK), "success");
	KJ_CHECK_STR(kj_strerror(12345), "unknown error");
	KJ_CHECK(kj_error_set(&e, KJ_EIO, "'%s': %d", "f", 3) == KJ_EIO);
	KJ_CHECK_STR(e.msg, "'f': 3");
	KJ_CHECK(kj_error_set(NULL, KJ_EIO, "x") == KJ_EIO);
	kj_error_clear(&e);
	KJ_CHECK(e.code == KJ_OK && e.msg[0] == '\0');
}
