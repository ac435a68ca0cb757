/*
 * Host dtype conversion (kernel/dtype_convert.c): IEEE half conversion checked
 * exhaustively (every half round-trips; every midpoint between neighbouring halves
 * rounds to the even one, and the floats next to it round to the nearer one),
 * float -> integer truncation / saturation, integer wrapping, and host fill.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dtype_convert.h"
#include "mxk_abi_base.h"
#include "testing.h"

/** Float from bits. */
static float fbits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/** Every float16 value converts to float32 and back unchanged (NaNs stay NaN). */
static void test_half_roundtrip_exhaustive(void) {
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = mxki_half_to_float((uint16_t)h);
        uint16_t back = mxki_float_to_half(f);
        bool is_nan = ((h >> 10) & 0x1f) == 0x1f && (h & 0x3ff) != 0;
        if (is_nan) {
            if (!isnan(f) || ((back >> 10) & 0x1f) != 0x1f || (back & 0x3ff) == 0 ||
                (back & 0x8000) != (h & 0x8000))
                bad++;
        } else if (back != h) {
            bad++;
        }
    }
    CHECK_EQ_INT(bad, 0);
}

/** float32 -> float16 rounds to nearest even at every midpoint; overflow, underflow. */
static void test_half_rounding_exhaustive(void) {
    /* For each pair of neighbouring finite positive halves (lo, hi): the midpoint rounds
     * to the one with an even mantissa; the floats just below/above round to lo/hi. */
    int bad = 0;
    for (uint32_t lo = 0; lo < 0x7bff; lo++) {
        uint32_t hi = lo + 1;
        double a = mxki_half_to_float((uint16_t)lo), b = mxki_half_to_float((uint16_t)hi);
        float mid = (float)((a + b) / 2); /* exact: halves have 11-bit significands */
        uint16_t even = (lo & 1) ? (uint16_t)hi : (uint16_t)lo;
        if (mxki_float_to_half(mid) != even)
            bad++;
        if (mxki_float_to_half(nextafterf(mid, 0.0f)) != lo)
            bad++;
        if (mxki_float_to_half(nextafterf(mid, INFINITY)) != hi)
            bad++;
        if (mxki_float_to_half(-mid) != (uint16_t)(even | 0x8000))
            bad++;
    }
    CHECK_EQ_INT(bad, 0);
    /* Around the largest finite half and infinity. */
    CHECK_EQ_INT(mxki_float_to_half(65504.0f), 0x7bff);
    CHECK_EQ_INT(mxki_float_to_half(65519.99f), 0x7bff);
    CHECK_EQ_INT(mxki_float_to_half(65520.0f), 0x7c00); /* tie: rounds to even = inf */
    CHECK_EQ_INT(mxki_float_to_half(1e10f), 0x7c00);
    CHECK_EQ_INT(mxki_float_to_half(-INFINITY), 0xfc00);
    CHECK_EQ_INT(mxki_float_to_half(FLT_MAX), 0x7c00);
    /* Below the smallest subnormal. */
    CHECK_EQ_INT(mxki_float_to_half(0x1p-25f), 0x0000); /* tie with 0: even */
    CHECK_EQ_INT(mxki_float_to_half(nextafterf(0x1p-25f, 1.0f)), 0x0001);
    CHECK_EQ_INT(mxki_float_to_half(0x1p-26f), 0x0000);
    CHECK_EQ_INT(mxki_float_to_half(fbits(1)), 0x0000); /* float subnormal */
    CHECK_EQ_INT(mxki_float_to_half(-0.0f), 0x8000);
    CHECK_EQ_INT(mxki_float_to_half(0.1f), 0x2e66);
    CHECK_EQ_INT(mxki_float_to_half(1.0f), 0x3c00);
    CHECK(isnan(mxki_half_to_float(mxki_float_to_half(NAN))));
    CHECK(mxki_half_to_float(0x0001) == 0x1p-24f);
    CHECK(mxki_half_to_float(0x3555) == 0.333251953125f);
}

/** Float -> integer truncates toward zero, NaN gives 0, out of range saturates. */
static void test_float_to_int(void) {
    double d[9] = {-2.7, -0.5, 0.5, 2.7, 1e300, -1e300, NAN, 127.9, -128.9};
    int8_t i8[9];
    uint8_t u8[9];
    int32_t i32[9];
    int64_t i64[9];
    CHECK(mxki_dtype_convert(i8, MXK_INT8, d, MXK_FLOAT64, 9));
    CHECK(mxki_dtype_convert(u8, MXK_UINT8, d, MXK_FLOAT64, 9));
    CHECK(mxki_dtype_convert(i32, MXK_INT32, d, MXK_FLOAT64, 9));
    CHECK(mxki_dtype_convert(i64, MXK_INT64, d, MXK_FLOAT64, 9));
    const int8_t w8[9] = {-2, 0, 0, 2, 127, -128, 0, 127, -128};
    const uint8_t wu[9] = {0, 0, 0, 2, 255, 0, 0, 127, 0};
    const int32_t w32[9] = {-2, 0, 0, 2, INT32_MAX, INT32_MIN, 0, 127, -128};
    const int64_t w64[9] = {-2, 0, 0, 2, INT64_MAX, INT64_MIN, 0, 127, -128};
    for (int i = 0; i < 9; i++) {
        CHECK_EQ_INT(i8[i], w8[i]);
        CHECK_EQ_INT(u8[i], wu[i]);
        CHECK_EQ_INT(i32[i], w32[i]);
        CHECK_EQ_INT(i64[i], w64[i]);
    }
    /* Exactly representable extremes. */
    double e[2] = {9223372036854774784.0, -9223372036854775808.0};
    CHECK(mxki_dtype_convert(i64, MXK_INT64, e, MXK_FLOAT64, 2));
    CHECK_EQ_INT(i64[0], 9223372036854774784LL);
    CHECK_EQ_INT(i64[1], INT64_MIN);
    /* float16 source. */
    uint16_t h[3] = {0xc100 /* -2.5 */, 0x7c00 /* inf */, 0x3c00};
    CHECK(mxki_dtype_convert(i32, MXK_INT32, h, MXK_FLOAT16, 3));
    CHECK_EQ_INT(i32[0], -2);
    CHECK_EQ_INT(i32[1], INT32_MAX);
    CHECK_EQ_INT(i32[2], 1);
}

/** Integer narrowing wraps; int -> float rounding; float64 -> float32 range. */
static void test_int_conversions(void) {
    int64_t v[5] = {300, -1, -129, INT64_MAX, 2049};
    uint8_t u8[5];
    int8_t i8[5];
    int32_t i32[5];
    float f[5];
    uint16_t h[5];
    double d[5];
    CHECK(mxki_dtype_convert(u8, MXK_UINT8, v, MXK_INT64, 5));
    CHECK(mxki_dtype_convert(i8, MXK_INT8, v, MXK_INT64, 5));
    CHECK(mxki_dtype_convert(i32, MXK_INT32, v, MXK_INT64, 5));
    CHECK(mxki_dtype_convert(f, MXK_FLOAT32, v, MXK_INT64, 5));
    CHECK(mxki_dtype_convert(h, MXK_FLOAT16, v, MXK_INT64, 5));
    CHECK(mxki_dtype_convert(d, MXK_FLOAT64, v, MXK_INT64, 5));
    CHECK_EQ_INT(u8[0], 44);
    CHECK_EQ_INT(u8[1], 255);
    CHECK_EQ_INT(i8[2], 127);
    CHECK_EQ_INT(i32[3], -1);
    CHECK(f[3] == 0x1p63f);
    CHECK_EQ_INT(h[4], mxki_float_to_half(2048.0f)); /* 2049 -> 2048 (tie to even) */
    CHECK(d[4] == 2049.0);
    uint8_t small[3] = {0, 200, 255};
    int8_t s8[3];
    CHECK(mxki_dtype_convert(s8, MXK_INT8, small, MXK_UINT8, 3));
    CHECK_EQ_INT(s8[1], -56);
    /* float64 -> float32 beyond range is inf; rounding at the edge keeps FLT_MAX. */
    double big[3] = {1e39, -1e39, (double)FLT_MAX + 0x1p102};
    float fb[3];
    CHECK(mxki_dtype_convert(fb, MXK_FLOAT32, big, MXK_FLOAT64, 3));
    CHECK(isinf(fb[0]) && fb[0] > 0);
    CHECK(isinf(fb[1]) && fb[1] < 0);
    CHECK(fb[2] == FLT_MAX);
    /* Unknown codes. */
    CHECK(!mxki_dtype_convert(fb, 7, big, MXK_FLOAT64, 1));
    CHECK(!mxki_dtype_convert(fb, MXK_FLOAT32, big, -1, 1));
    /* Large counts cross the block boundary. */
    enum { N = 1000 };
    static int32_t src[N];
    static double dst[N];
    for (int i = 0; i < N; i++)
        src[i] = i * 3 - 500;
    CHECK(mxki_dtype_convert(dst, MXK_FLOAT64, src, MXK_INT32, N));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += dst[i] != (double)(i * 3 - 500);
    CHECK_EQ_INT(bad, 0);
}

/** Host fill in several dtypes with value conversion. */
static void test_fill_host(void) {
    float f[7];
    CHECK(mxki_dtype_fill_host(f, MXK_FLOAT32, 7, 1.5));
    for (int i = 0; i < 7; i++)
        CHECK(f[i] == 1.5f);
    int64_t l[5];
    CHECK(mxki_dtype_fill_host(l, MXK_INT64, 5, -3.9));
    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(l[i], -3);
    uint8_t u[33];
    CHECK(mxki_dtype_fill_host(u, MXK_UINT8, 33, 300));
    for (int i = 0; i < 33; i++)
        CHECK_EQ_INT(u[i], 255);
    uint16_t h[3];
    CHECK(mxki_dtype_fill_host(h, MXK_FLOAT16, 3, -1.0));
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(h[i], 0xbc00);
    CHECK(!mxki_dtype_fill_host(h, 42, 3, 0));
    CHECK(mxki_dtype_fill_host(NULL, MXK_INT32, 0, 1));
}

int main(void) {
    MXK_RUN(test_half_roundtrip_exhaustive);
    MXK_RUN(test_half_rounding_exhaustive);
    MXK_RUN(test_float_to_int);
    MXK_RUN(test_int_conversions);
    MXK_RUN(test_fill_host);
    return MXK_TEST_EXIT();
}
