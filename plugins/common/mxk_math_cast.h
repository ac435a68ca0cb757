/*
 * Math shared by the CPU and GPU backends: the element conversions of Cast and
 * of stores into integer dtypes, as MXK_HD functions.
 *
 * Semantics: MXNet src/operator/tensor/elemwise_unary_op.h (CastCompute: a
 * static_cast, whose out-of-range results C leaves undefined). mxk pins what
 * MXNet does on x86-64: a float converted to a 32- or 64-bit integer truncates
 * toward zero, a NaN or out-of-range value giving that type's minimum (what
 * cvttsd2si returns), and narrower targets wrap modulo 2^bits.
 */
#ifndef MXK_MATH_CAST_H
#define MXK_MATH_CAST_H

#include <math.h>
#include <stdint.h>

#include "mxk_hd.h"

/**
 * A float truncated toward zero as the x86-64 conversion to a `bits`-bit (32 or
 * 64) integer does: NaN or out of range gives the type's minimum.
 */
MXK_HD int64_t mxk_cast_float_to_int(double v, int bits) {
    double lim = bits == 64 ? 9223372036854775808.0 : 2147483648.0;
    if (!(v > -lim - 1.0 && v < lim)) /* NaN too */
        return bits == 64 ? INT64_MIN : INT32_MIN;
    return (int64_t)trunc(v);
}

/** v truncated toward zero and saturated to [lo, hi]; NaN gives 0 (stores of computed values). */
MXK_HD double mxk_cast_saturate(double v, double lo, double hi) {
    if (isnan(v))
        return 0.0;
    v = trunc(v);
    return v < lo ? lo : (v > hi ? hi : v);
}

#endif /* MXK_MATH_CAST_H */
