/*
 * Math shared by the CPU and GPU backends: the element functions of the binary
 * math operators (same-shape, scalar and broadcast forms) and their derivatives,
 * plus smooth_l1, as MXK_HD functions of float32 values.
 *
 * Semantics: MXNet src/operator/mshadow_op.h (plus, minus, mul, div, power,
 * power_grad, power_rgrad, maximum, minimum, ge/lt/le/gt used as their gradients,
 * hypot, hypot_grad_left/right, eq, ne, gt, ge, lt, le, smooth_l1_loss,
 * smooth_l1_gradient) and src/operator/tensor/elemwise_binary_scalar_op.h (the
 * r-forms swap the operands). Comparisons give 1 or 0 and have zero gradients
 * (MXNet's MakeZeroGradNodes).
 */
#ifndef MXK_MATH_BINARY_H
#define MXK_MATH_BINARY_H

#include <math.h>
#include <stdint.h>

#include "mxk_hd.h"

/** The binary functions f(a, b). */
enum mxk_bin_code {
    MXK_BIN_ADD,
    MXK_BIN_SUB,
    MXK_BIN_MUL,
    MXK_BIN_DIV,
    MXK_BIN_POW,
    MXK_BIN_MAX,
    MXK_BIN_MIN,
    MXK_BIN_HYPOT,
    MXK_BIN_EQ,
    MXK_BIN_NE,
    MXK_BIN_GT,
    MXK_BIN_GE,
    MXK_BIN_LT,
    MXK_BIN_LE
};

/** Function code of smooth_l1 (a scalar operator only; after the mxk_bin_code values). */
#define MXK_BIN_SMOOTH_L1 100

/** 1 for the comparisons (zero gradient, backward reads nothing). */
MXK_HD int mxk_bin_is_compare(int32_t code) {
    return code >= MXK_BIN_EQ && code <= MXK_BIN_LE;
}

/** f(a, b) in float32 as MXNet's mshadow_op computes it. */
MXK_HD float mxk_bin_f(int32_t code, float a, float b) {
    switch (code) {
    case MXK_BIN_ADD:
        return a + b;
    case MXK_BIN_SUB:
        return a - b;
    case MXK_BIN_MUL:
        return a * b;
    case MXK_BIN_DIV:
        return a / b;
    case MXK_BIN_POW:
        return powf(a, b);
    case MXK_BIN_MAX: /* NaN in either propagates (upstream: a if a is NaN, else a > b ? a : b) */
        return isnan(a) || a > b ? a : b;
    case MXK_BIN_MIN:
        return isnan(a) || a < b ? a : b;
    case MXK_BIN_HYPOT:
        return hypotf(a, b);
    case MXK_BIN_EQ:
        return a == b ? 1.0f : 0.0f;
    case MXK_BIN_NE:
        return a != b ? 1.0f : 0.0f;
    case MXK_BIN_GT:
        return a > b ? 1.0f : 0.0f;
    case MXK_BIN_GE:
        return a >= b ? 1.0f : 0.0f;
    case MXK_BIN_LT:
        return a < b ? 1.0f : 0.0f;
    default:
        return a <= b ? 1.0f : 0.0f;
    }
}

/**
 * df/da (which 0) or df/db (which 1) at (a, b). maximum: lhs where a >= b, rhs
 * where a < b; minimum: lhs where a <= b, rhs where a > b (upstream's
 * _backward_maximum / _backward_minimum); comparisons 0.
 */
MXK_HD float mxk_bin_df(int32_t code, int which, float a, float b) {
    switch (code) {
    case MXK_BIN_ADD:
        return 1.0f;
    case MXK_BIN_SUB:
        return which ? -1.0f : 1.0f;
    case MXK_BIN_MUL:
        return which ? a : b;
    case MXK_BIN_DIV:
        return which ? -a / (b * b) : 1.0f / b;
    case MXK_BIN_POW:
        return which ? powf(a, b) * logf(a) : powf(a, b - 1.0f) * b;
    case MXK_BIN_MAX:
        return (a >= b) != which ? 1.0f : 0.0f;
    case MXK_BIN_MIN:
        return (a <= b) != which ? 1.0f : 0.0f;
    case MXK_BIN_HYPOT:
        return (which ? b : a) / hypotf(a, b);
    default:
        return 0.0f;
    }
}

/** smooth_l1 of x with sigma s: 0.5 (s x)^2 for |x| <= 1/s^2, else |x| - 0.5/s^2. */
MXK_HD float mxk_smooth_l1(float x, float s) {
    float bsq = s * s, ibsq = 1.0f / bsq;
    if (x > ibsq)
        return x - 0.5f * ibsq;
    if (x < -ibsq)
        return -x - 0.5f * ibsq;
    return 0.5f * x * x * bsq;
}

/** Its derivative (smooth_l1_gradient). */
MXK_HD float mxk_smooth_l1_grad(float x, float s) {
    float bsq = s * s, ibsq = 1.0f / bsq;
    return x > ibsq ? 1.0f : (x < -ibsq ? -1.0f : bsq * x);
}

/** y = f(x, s) of a scalar operator (code, swap: y = f(s, x)), smooth_l1 included. */
MXK_HD float mxk_scalar_f(int32_t code, int32_t swap, float x, float s) {
    if (code == MXK_BIN_SMOOTH_L1)
        return mxk_smooth_l1(x, s);
    return swap ? mxk_bin_f(code, s, x) : mxk_bin_f(code, x, s);
}

/** dy/dx of a scalar operator at x (y: the output, read by _rpower_scalar: y log s). */
MXK_HD float mxk_scalar_df(int32_t code, int32_t swap, float x, float y, float s) {
    if (code == MXK_BIN_SMOOTH_L1)
        return mxk_smooth_l1_grad(x, s);
    if (code == MXK_BIN_POW && swap)
        return y * logf(s);
    return swap ? mxk_bin_df(code, 1, s, x) : mxk_bin_df(code, 0, x, s);
}

#endif /* MXK_MATH_BINARY_H */
