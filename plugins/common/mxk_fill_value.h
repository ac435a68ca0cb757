/*
 * The element a device backend's fill writes (abi/mxk_abi_device.h, `fill`): a
 * double converted to a dtype's bit pattern, shared by the CPU (cpu-blas) and GPU
 * (cuda) backends so that zeros/ones/full give the same bits on both. Float types
 * convert (float16 rounded to nearest even); integer types truncate toward zero
 * and saturate to their range, NaN giving 0 (MXNet's mshadow casts are undefined
 * out of range; mxk pins them).
 */
#ifndef MXK_FILL_VALUE_H
#define MXK_FILL_VALUE_H

#include <stdint.h>
#include <string.h>

#include "mxk_sdk.h"

/** Truncates toward zero and saturates to [lo, hi]; NaN gives 0. */
static inline int64_t mxk_fill_saturate(double v, double lo, double hi) {
    if (v != v)
        return 0;
    if (v <= lo)
        return (int64_t)lo;
    if (v >= hi)
        return (int64_t)hi;
    return (int64_t)v;
}

/**
 * Writes `value` converted to `dtype` into *bits (the low mxk_sdk_dtype_size(dtype)
 * bytes in memory order, the rest zero) and returns the element size in bytes;
 * 0 for an unknown dtype.
 */
static inline uint32_t mxk_fill_pattern(int32_t dtype, double value, uint64_t *bits) {
    uint32_t size = (uint32_t)mxk_sdk_dtype_size(dtype);
    uint64_t b = 0;
    switch (dtype) {
    case MXK_FLOAT32: {
        float f = (float)value;
        memcpy(&b, &f, sizeof f);
        break;
    }
    case MXK_FLOAT64:
        memcpy(&b, &value, sizeof value);
        break;
    case MXK_FLOAT16: {
        uint16_t h = mxk_sdk_f32_to_f16((float)value);
        memcpy(&b, &h, sizeof h);
        break;
    }
    case MXK_UINT8: {
        uint8_t u = (uint8_t)mxk_fill_saturate(value, 0.0, 255.0);
        memcpy(&b, &u, sizeof u);
        break;
    }
    case MXK_INT8: {
        int8_t i = (int8_t)mxk_fill_saturate(value, -128.0, 127.0);
        memcpy(&b, &i, sizeof i);
        break;
    }
    case MXK_INT32: {
        int32_t i = (int32_t)mxk_fill_saturate(value, -2147483648.0, 2147483647.0);
        memcpy(&b, &i, sizeof i);
        break;
    }
    case MXK_INT64: {
        /* 2^63 is not representable: values at or above it saturate to INT64_MAX */
        int64_t i = value >= 9223372036854775808.0
                        ? INT64_MAX
                        : mxk_fill_saturate(value, -9223372036854775808.0, 0x1p63);
        memcpy(&b, &i, sizeof i);
        break;
    }
    default:
        return 0;
    }
    *bits = b;
    return size;
}

#endif /* MXK_FILL_VALUE_H */
