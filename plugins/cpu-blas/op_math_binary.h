/*
 * cpu-blas plugin: the element functions of the binary math operators, shared by
 * the same-shape (op_elemwise.c), scalar (op_elemwise_scalar.c) and broadcast
 * (op_broadcast.c) forms.
 *
 * Semantics: MXNet src/operator/mshadow_op.h (plus, minus, mul, div, power,
 * power_grad, power_rgrad, maximum, minimum, ge/lt/le/gt used as their gradients,
 * hypot, hypot_grad_left/right, eq, ne, gt, ge, lt, le). Comparisons give 1 or 0
 * in the input's dtype and have zero gradients (MXNet's MakeZeroGradNodes).
 */
#ifndef MXK_CB_OP_MATH_BINARY_H
#define MXK_CB_OP_MATH_BINARY_H

#include <math.h>
#include <stdint.h>

/** The binary functions f(a, b). */
enum cbm_code {
    CBM_ADD,
    CBM_SUB,
    CBM_MUL,
    CBM_DIV,
    CBM_POW,
    CBM_MAX,
    CBM_MIN,
    CBM_HYPOT,
    CBM_EQ,
    CBM_NE,
    CBM_GT,
    CBM_GE,
    CBM_LT,
    CBM_LE
};

/** 1 for the comparisons (zero gradient, backward reads nothing). */
static inline int cbm_is_compare(int32_t code) {
    return code >= CBM_EQ;
}

/** f(a, b) in float32 as MXNet's mshadow_op computes it. */
static inline float cbm_f(int32_t code, float a, float b) {
    switch (code) {
    case CBM_ADD:
        return a + b;
    case CBM_SUB:
        return a - b;
    case CBM_MUL:
        return a * b;
    case CBM_DIV:
        return a / b;
    case CBM_POW:
        return powf(a, b);
    case CBM_MAX: /* NaN in either propagates (upstream: a if a is NaN, else a > b ? a : b) */
        return isnan(a) || a > b ? a : b;
    case CBM_MIN:
        return isnan(a) || a < b ? a : b;
    case CBM_HYPOT:
        return hypotf(a, b);
    case CBM_EQ:
        return a == b ? 1.0f : 0.0f;
    case CBM_NE:
        return a != b ? 1.0f : 0.0f;
    case CBM_GT:
        return a > b ? 1.0f : 0.0f;
    case CBM_GE:
        return a >= b ? 1.0f : 0.0f;
    case CBM_LT:
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
static inline float cbm_df(int32_t code, int which, float a, float b) {
    switch (code) {
    case CBM_ADD:
        return 1.0f;
    case CBM_SUB:
        return which ? -1.0f : 1.0f;
    case CBM_MUL:
        return which ? a : b;
    case CBM_DIV:
        return which ? -a / (b * b) : 1.0f / b;
    case CBM_POW:
        return which ? powf(a, b) * logf(a) : powf(a, b - 1.0f) * b;
    case CBM_MAX:
        return (a >= b) != which ? 1.0f : 0.0f;
    case CBM_MIN:
        return (a <= b) != which ? 1.0f : 0.0f;
    case CBM_HYPOT:
        return (which ? b : a) / hypotf(a, b);
    default:
        return 0.0f;
    }
}

#endif /* MXK_CB_OP_MATH_BINARY_H */
