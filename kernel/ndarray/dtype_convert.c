/*
 * Host-side dtype conversion (see dtype_convert.h for the semantics).
 *
 * Layout of the conversion: elements are processed in blocks of CONV_BLOCK; a block
 * of the source is widened into either int64 (integer sources: exact) or double
 * (float sources: exact), then narrowed into the destination type. Each loop runs
 * with a fixed type pair, so the compiler can vectorise it.
 * Source: upstream mshadow/base.h (type switch, static_cast), mshadow/half.h.
 */
#include "dtype_convert.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "mxk_abi_base.h"
#include "shape.h"

/** Elements converted per block (bounded stack buffers). */
#define CONV_BLOCK 256

uint16_t mxki_float_to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t exp = (x >> 23) & 0xffu;
    uint32_t mant = x & 0x7fffffu;
    if (exp == 0xffu) /* inf or NaN (NaN kept quiet, payload truncated) */
        return (uint16_t)(sign | (mant ? 0x7e00u | (mant >> 13) : 0x7c00u));
    int32_t e = (int32_t)exp - 127 + 15; /* biased half exponent */
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u); /* overflow: inf */
    if (e <= 0) {
        /* Half subnormal (or zero): m = round(M * 2^-s), M the 24-bit significand. */
        uint32_t s = (uint32_t)(14 - e);
        if (s > 24 || exp == 0)
            return sign; /* below half the smallest subnormal; float subnormals too */
        uint32_t m24 = mant | 0x800000u;
        uint32_t m = m24 >> s;
        uint32_t rem = m24 & ((1u << s) - 1u);
        uint32_t halfway = 1u << (s - 1);
        if (rem > halfway || (rem == halfway && (m & 1u)))
            m++; /* may carry into the smallest normal: still the right encoding */
        return (uint16_t)(sign | m);
    }
    uint32_t h = ((uint32_t)e << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++; /* a carry into the exponent is correct, up to inf */
    return (uint16_t)(sign | h);
}

float mxki_half_to_float(uint16_t h) {
    uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
    uint32_t exp = ((uint32_t)h >> 10) & 0x1fu;
    uint32_t mant = (uint32_t)h & 0x3ffu;
    uint32_t x;
    if (exp == 0) {
        float v = (float)mant * 0x1p-24f; /* zero or subnormal: exact */
        return sign ? -v : v;
    }
    if (exp == 31)
        x = sign | 0x7f800000u | (mant << 13);
    else
        x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

/** double -> float, round to nearest even, +-inf beyond the float range (defined in C). */
static inline float d2f(double d) {
    if (d >= 0x1.ffffffp127)
        return INFINITY;
    if (d <= -0x1.ffffffp127)
        return -INFINITY;
    return (float)d; /* in range, or NaN */
}

/** double -> integer in [lo, hi]: truncation toward zero, NaN -> 0, saturation. */
static inline int64_t d2i(double d, double lo, double hi, int64_t ilo, int64_t ihi) {
    if (isnan(d))
        return 0;
    if (d <= lo)
        return ilo;
    if (d >= hi)
        return ihi;
    return (int64_t)d;
}

/* Saturation bounds: `hi` values are the first doubles at or beyond the maximum. */
#define D2I8(d) ((int8_t)d2i((d), -128.0, 127.0, INT8_MIN, INT8_MAX))
#define D2U8(d) ((uint8_t)d2i((d), 0.0, 255.0, 0, UINT8_MAX))
#define D2I32(d) ((int32_t)d2i((d), -2147483648.0, 2147483647.0, INT32_MIN, INT32_MAX))
#define D2I64(d) (d2i((d), -0x1p63, 0x1p63, INT64_MIN, INT64_MAX))

/** True for float32/float64/float16. */
static inline bool is_float_dtype(int32_t dt) {
    return dt == MXK_FLOAT32 || dt == MXK_FLOAT64 || dt == MXK_FLOAT16;
}

/** Widens n float elements of src (dtype dt) starting at element i0 into d. */
static void widen_float(const void *src, int32_t dt, uint64_t i0, size_t n, double *d) {
    switch (dt) {
    case MXK_FLOAT32: {
        const float *s = (const float *)src + i0;
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
        break;
    }
    case MXK_FLOAT64:
        memcpy(d, (const double *)src + i0, n * sizeof(double));
        break;
    default: { /* MXK_FLOAT16 */
        const uint16_t *s = (const uint16_t *)src + i0;
        for (size_t i = 0; i < n; i++)
            d[i] = mxki_half_to_float(s[i]);
        break;
    }
    }
}

/** Widens n integer elements of src (dtype dt) starting at element i0 into v. */
static void widen_int(const void *src, int32_t dt, uint64_t i0, size_t n, int64_t *v) {
    switch (dt) {
    case MXK_UINT8: {
        const uint8_t *s = (const uint8_t *)src + i0;
        for (size_t i = 0; i < n; i++)
            v[i] = s[i];
        break;
    }
    case MXK_INT8: {
        const int8_t *s = (const int8_t *)src + i0;
        for (size_t i = 0; i < n; i++)
            v[i] = s[i];
        break;
    }
    case MXK_INT32: {
        const int32_t *s = (const int32_t *)src + i0;
        for (size_t i = 0; i < n; i++)
            v[i] = s[i];
        break;
    }
    default: /* MXK_INT64 */
        memcpy(v, (const int64_t *)src + i0, n * sizeof(int64_t));
        break;
    }
}

/** Narrows n doubles into dst (dtype dt) starting at element i0. */
static void narrow_float(void *dst, int32_t dt, uint64_t i0, size_t n, const double *d) {
    switch (dt) {
    case MXK_FLOAT32: {
        float *o = (float *)dst + i0;
        for (size_t i = 0; i < n; i++)
            o[i] = d2f(d[i]);
        break;
    }
    case MXK_FLOAT64:
        memcpy((double *)dst + i0, d, n * sizeof(double));
        break;
    case MXK_FLOAT16: {
        uint16_t *o = (uint16_t *)dst + i0;
        for (size_t i = 0; i < n; i++)
            o[i] = mxki_float_to_half(d2f(d[i]));
        break;
    }
    case MXK_UINT8: {
        uint8_t *o = (uint8_t *)dst + i0;
        for (size_t i = 0; i < n; i++)
            o[i] = D2U8(d[i]);
        break;
    }
    case MXK_INT8: {
        int8_t *o = (int8_t *)dst + i0;
        for (size_t i = 0; i < n; i++)
            o[i] = D2I8(d[i]);
        break;
    }
    case MXK_INT32: {
        int32_t *o = (int32_t *)dst + i0;
        for (size_t i = 0; i < n; i++)
            o[i] = D2I32(d[i]);
        break;
    }
    default: { /* MXK_INT64 */
        int64_t *o = (int64_t *)dst + i0;
        for (size_t i = 0; i < n; i++)
            o[i] = D2I64(d[i]);
        break;
    }
    }
}

/** Narrows n int64 values into dst (dtype dt) starting at element i0 (wrapping). */
static void narrow_int(void *dst, int32_t dt, uint64_t i0, size_t n, const int64_t *v) {
    switch (dt) {
    case MXK_FLOAT32: {
        float *o = (float *)dst + i0;
        for (size_t i = 0; i < n; i++)
            o[i] = (float)v[i];
        break;
    }
    case MXK_FLOAT64: {
        double *o = (double *)dst + i0;
        for (size_t i = 0; i < n; i++)
            o[i] = (double)v[i];
        break;
    }
    case MXK_FLOAT16: {
        uint16_t *o = (uint16_t *)dst + i0;
        for (size_t i = 0; i < n; i++)
            o[i] = mxki_float_to_half((float)v[i]);
        break;
    }
    case MXK_UINT8: {
        uint8_t *o = (uint8_t *)dst + i0;
        for (size_t i = 0; i < n; i++)
            o[i] = (uint8_t)(uint64_t)v[i];
        break;
    }
    case MXK_INT8: {
        int8_t *o = (int8_t *)dst + i0;
        for (size_t i = 0; i < n; i++)
            o[i] = (int8_t)(uint8_t)(uint64_t)v[i];
        break;
    }
    case MXK_INT32: {
        int32_t *o = (int32_t *)dst + i0;
        for (size_t i = 0; i < n; i++)
            o[i] = (int32_t)(uint32_t)(uint64_t)v[i];
        break;
    }
    default: /* MXK_INT64 */
        memcpy((int64_t *)dst + i0, v, n * sizeof(int64_t));
        break;
    }
}

bool mxki_dtype_convert(void *dst, int32_t dst_dtype, const void *src, int32_t src_dtype,
                        uint64_t count) {
    size_t dsize = mxk_dtype_size(dst_dtype), ssize = mxk_dtype_size(src_dtype);
    if (dsize == 0 || ssize == 0)
        return false;
    if (count == 0)
        return true;
    if (dst_dtype == src_dtype) {
        memmove(dst, src, (size_t)(count * ssize));
        return true;
    }
    double dbuf[CONV_BLOCK];
    int64_t ibuf[CONV_BLOCK];
    bool src_float = is_float_dtype(src_dtype);
    for (uint64_t i0 = 0; i0 < count; i0 += CONV_BLOCK) {
        size_t n = (size_t)(count - i0 < CONV_BLOCK ? count - i0 : CONV_BLOCK);
        if (src_float) {
            widen_float(src, src_dtype, i0, n, dbuf);
            narrow_float(dst, dst_dtype, i0, n, dbuf);
        } else {
            widen_int(src, src_dtype, i0, n, ibuf);
            narrow_int(dst, dst_dtype, i0, n, ibuf);
        }
    }
    return true;
}

bool mxki_dtype_fill_host(void *dst, int32_t dtype, uint64_t count, double value) {
    size_t esize = mxk_dtype_size(dtype);
    if (esize == 0)
        return false;
    if (count == 0)
        return true;
    unsigned char elem[8];
    narrow_float(elem, dtype, 0, 1, &value);
    unsigned char *o = dst;
    if (esize == 1) {
        memset(o, elem[0], (size_t)count);
        return true;
    }
    /* Write one element, then double the filled prefix. */
    memcpy(o, elem, esize);
    uint64_t total = count * esize, done = esize;
    while (done < total) {
        uint64_t n = done < total - done ? done : total - done;
        memcpy(o + done, o, (size_t)n);
        done += n;
    }
    return true;
}
