/*
 * Host values of the operator test kit: the kit's random numbers (splitmix64,
 * independent of the library's), shapes, and float64 values converted to and from
 * the arrays' dtypes as the arrays store them; the random draw of an input.
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_sdk_half.h"
#include "oc_internal.h"

/* ------------------------------------------------------------------------- */
/* Random numbers (the kit's own: splitmix64, independent of the library's)  */
/* ------------------------------------------------------------------------- */

/** Next 64 random bits. */
uint64_t oc_rng_next(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/** Uniform double in [0, 1). */
double oc_rng_unit(uint64_t *s) {
    return (double)(oc_rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* ------------------------------------------------------------------------- */
/* Shapes, and float64 values <-> the raw elements of any dtype             */
/* ------------------------------------------------------------------------- */

/** Number of elements of a shape. */
uint64_t oc_shape_count(const mxk_shape *s) {
    uint64_t n = 1;
    for (int d = 0; d < s->ndim && d < MXK_MAX_NDIM; d++)
        n *= (uint64_t)(s->dims[d] > 0 ? s->dims[d] : 0);
    return s->ndim > 0 ? n : 0;
}

/** Formats a shape "(a,b)". */
const char *oc_shape_str(const mxk_shape *s, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "(");
    for (int d = 0; d < s->ndim && d < MXK_MAX_NDIM && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", d ? "," : "",
                                 (long long)s->dims[d]);
    if (used < size)
        snprintf(buf + used, size - used, ")");
    return buf;
}

/** 1 for dtypes the kit converts. */
int oc_dtype_ok(int32_t t) {
    return t == MXK_FLOAT32 || t == MXK_FLOAT64 || t == MXK_FLOAT16 || t == MXK_UINT8 ||
           t == MXK_INT32 || t == MXK_INT8 || t == MXK_INT64;
}

/** 1 for floating-point dtypes. */
int oc_dtype_float(int32_t t) {
    return t == MXK_FLOAT32 || t == MXK_FLOAT64 || t == MXK_FLOAT16;
}

/** Value v as the dtype stores it (rounded / truncated), back in double. */
double oc_dtype_round(int32_t t, double v) {
    switch (t) {
    case MXK_FLOAT32:
        return (double)(float)v;
    case MXK_FLOAT16:
        return (double)mxk_sdk_f16_to_f32(mxk_sdk_f32_to_f16((float)v));
    case MXK_FLOAT64:
        return v;
    default:
        return floor(v);
    }
}

/** Converts n doubles into raw elements of dtype t. */
void oc_to_raw(int32_t t, const double *v, uint64_t n, void *raw) {
    for (uint64_t i = 0; i < n; i++) {
        double x = v[i];
        switch (t) {
        case MXK_FLOAT32:
            ((float *)raw)[i] = (float)x;
            break;
        case MXK_FLOAT64:
            ((double *)raw)[i] = x;
            break;
        case MXK_FLOAT16:
            ((uint16_t *)raw)[i] = mxk_sdk_f32_to_f16((float)x);
            break;
        case MXK_UINT8:
            ((uint8_t *)raw)[i] = (uint8_t)(x < 0 ? 0 : x > 255 ? 255 : x);
            break;
        case MXK_INT8:
            ((int8_t *)raw)[i] = (int8_t)(x < -128 ? -128 : x > 127 ? 127 : x);
            break;
        case MXK_INT32:
            ((int32_t *)raw)[i] = (int32_t)(x < -2147483648.0  ? -2147483648.0
                                            : x > 2147483647.0 ? 2147483647.0
                                                               : x);
            break;
        case MXK_INT64:
            ((int64_t *)raw)[i] = (int64_t)(fabs(x) < 9.2e18 ? x : 0);
            break;
        default:
            break;
        }
    }
}

/** Converts n raw elements of dtype t into doubles. */
void oc_from_raw(int32_t t, const void *raw, uint64_t n, double *v) {
    for (uint64_t i = 0; i < n; i++) {
        switch (t) {
        case MXK_FLOAT32:
            v[i] = ((const float *)raw)[i];
            break;
        case MXK_FLOAT64:
            v[i] = ((const double *)raw)[i];
            break;
        case MXK_FLOAT16:
            v[i] = mxk_sdk_f16_to_f32(((const uint16_t *)raw)[i]);
            break;
        case MXK_UINT8:
            v[i] = ((const uint8_t *)raw)[i];
            break;
        case MXK_INT8:
            v[i] = ((const int8_t *)raw)[i];
            break;
        case MXK_INT32:
            v[i] = ((const int32_t *)raw)[i];
            break;
        case MXK_INT64:
            v[i] = (double)((const int64_t *)raw)[i];
            break;
        default:
            v[i] = NAN;
        }
    }
}

/* ------------------------------------------------------------------------- */
/* The random draw of an input                                               */
/* ------------------------------------------------------------------------- */

/** The spec of input i (a zero spec when none given). */
mxk_opcheck_input_spec oc_input_spec(const mxk_opcheck_config *cfg, uint32_t i) {
    mxk_opcheck_input_spec s;
    memset(&s, 0, sizeof s);
    if (cfg->inputs)
        s = cfg->inputs[i];
    if (s.low == 0.0 && s.high == 0.0) {
        s.low = cfg->low;
        s.high = cfg->high;
    }
    return s;
}

/** Draws one value of input spec s for dtype t. */
double oc_draw(uint64_t *rng, const mxk_opcheck_input_spec *s, int32_t t) {
    double v = 0.0;
    for (int tries = 0; tries < 1000; tries++) {
        v = s->low + (s->high - s->low) * oc_rng_unit(rng);
        if (s->integer || !oc_dtype_float(t)) {
            v = floor(v);
            if (v >= s->high && s->high > s->low)
                v = ceil(s->high) - 1.0;
            break;
        }
        v = oc_dtype_round(t, v);
        if (s->kink_margin <= 0.0)
            break;
        double k = 0.5 * round(v * 2.0);
        if (fabs(v - k) >= s->kink_margin)
            break;
    }
    return v;
}
