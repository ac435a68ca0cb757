/*
 * mxk SDK: IEEE 754 binary16 (float16, dtype 2) conversions in portable C.
 *
 * Header-only, no dependencies. Bit-exact with hardware conversion (F16C,
 * CUDA __float2half_rn): round to nearest, ties to even; overflow to infinity;
 * subnormals kept; NaN stays NaN (quiet, sign kept).
 */
#ifndef MXK_SDK_HALF_H
#define MXK_SDK_HALF_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Converts a float to binary16 bits (round to nearest even). */
static inline uint16_t mxk_sdk_f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* inf or NaN */
        return (uint16_t)(sign | 0x7c00u |
                          (absx > 0x7f800000u ? 0x200u | ((absx >> 13) & 0x3ffu) : 0u));
    if (absx >= 0x477ff000u) /* >= 65520: rounds to infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (absx < 0x38800000u) {   /* below 2^-14: subnormal half or zero */
        if (absx < 0x33000000u) /* below 2^-25: rounds to zero (ties to even at 2^-25) */
            return (uint16_t)sign;
        uint32_t exp = absx >> 23;
        uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - exp; /* 14..24: bits dropped beyond the 10-bit field */
        uint32_t half = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1u);
        uint32_t mid = 1u << (shift - 1u);
        if (rem > mid || (rem == mid && (half & 1u)))
            half++;
        return (uint16_t)(sign | half);
    }
    /* normal: rebias the exponent (127 -> 15) and round 13 dropped mantissa bits */
    uint32_t h = ((absx - 0x38000000u) >> 13);
    uint32_t rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++; /* may carry into the exponent, which is correct (up to 0x7c00 = inf) */
    return (uint16_t)(sign | h);
}

/** Converts binary16 bits to a float (exact). */
static inline float mxk_sdk_f16_to_f32(uint16_t h) {
    uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
    uint32_t exp = ((uint32_t)h >> 10) & 0x1fu;
    uint32_t mant = (uint32_t)h & 0x3ffu;
    uint32_t x;
    if (exp == 0x1fu) {
        x = sign | 0x7f800000u | (mant << 13);
    } else if (exp != 0) {
        x = sign | ((exp + 112u) << 23) | (mant << 13);
    } else if (mant == 0) {
        x = sign;
    } else { /* subnormal: normalise */
        uint32_t e = 113u;
        while ((mant & 0x400u) == 0) {
            mant <<= 1;
            e--;
        }
        x = sign | (e << 23) | ((mant & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

#ifdef __cplusplus
}
#endif

#endif /* MXK_SDK_HALF_H */
