/*
 * Math shared by the CPU and GPU backends: the unary math operators (abs ...
 * softsign, clip, hard_sigmoid) as MXK_HD functions of float32 values: the
 * forward function, what its gradient reads and the gradient itself.
 *
 * Semantics: MXNet src/operator/mshadow_op.h and
 * src/operator/tensor/elemwise_unary_op_basic.cc, elemwise_unary_op_trig.cc,
 * elemwise_unary_op_logexp.cc, elemwise_unary_op_pow.cc, elemwise_unary_op.h
 * (hard_sigmoid) and matrix_op-inl.h (clip: x > a_max gives a_max, else
 * x < a_min gives a_min). round rounds half away from zero. Gradients (dy times):
 *   abs sign(x); cos -sin x; sin cos x; log 1/x; rsqrt -x^-1.5/2; square 2x;
 *   reciprocal -1/x^2; log1p 1/(1+x); expm1 e^x; log2 1/(x ln 2); log10
 *   1/(x ln 10); erf 2/sqrt(pi) e^(-x^2); softsign 1/(1+|x|)^2;
 *   clip 1 inside [a_min, a_max], else 0; hard_sigmoid alpha where
 *   0 < alpha x + beta < 1, else 0                         (read x)
 *   exp y; sqrt 1/(2y); tanh 1-y^2; sigmoid y(1-y); relu y > 0   (read y)
 *   negative -1                                           (reads dy only)
 *   ceil, floor, round, sign: zero gradient               (reads nothing)
 */
#ifndef MXK_MATH_UNARY_H
#define MXK_MATH_UNARY_H

#include <math.h>
#include <stdint.h>

#include "mxk_hd.h"

/** The unary functions, in cpu-blas's registration order. */
enum mxk_un_code {
    MXK_UN_ABS,
    MXK_UN_CEIL,
    MXK_UN_COS,
    MXK_UN_EXP,
    MXK_UN_FLOOR,
    MXK_UN_LOG,
    MXK_UN_ROUND,
    MXK_UN_RSQRT,
    MXK_UN_SIGN,
    MXK_UN_SIN,
    MXK_UN_SQRT,
    MXK_UN_SQUARE,
    MXK_UN_TANH,
    MXK_UN_SIGMOID,
    MXK_UN_RELU,
    MXK_UN_NEGATIVE,
    MXK_UN_RECIPROCAL,
    MXK_UN_LOG1P,
    MXK_UN_EXPM1,
    MXK_UN_LOG2,
    MXK_UN_LOG10,
    MXK_UN_ERF,
    MXK_UN_SOFTSIGN,
    MXK_UN_CLIP,        /**< p0 a_min, p1 a_max */
    MXK_UN_HARD_SIGMOID /**< p0 alpha, p1 beta */
};

/** Which tensor the gradient reads besides dy. */
enum mxk_un_dep { MXK_UN_DEP_NONE, MXK_UN_DEP_IN, MXK_UN_DEP_OUT, MXK_UN_DEP_DY };

/** What the gradient of `code` reads (enum mxk_un_dep). */
MXK_HD int32_t mxk_un_dep(int32_t code) {
    switch (code) {
    case MXK_UN_CEIL:
    case MXK_UN_FLOOR:
    case MXK_UN_ROUND:
    case MXK_UN_SIGN:
        return MXK_UN_DEP_NONE;
    case MXK_UN_EXP:
    case MXK_UN_SQRT:
    case MXK_UN_TANH:
    case MXK_UN_SIGMOID:
    case MXK_UN_RELU:
        return MXK_UN_DEP_OUT;
    case MXK_UN_NEGATIVE:
        return MXK_UN_DEP_DY;
    default:
        return MXK_UN_DEP_IN;
    }
}

/** sign(x) as -1, 0 or 1. */
MXK_HD float mxk_un_sign(float x) {
    return (float)((x > 0.0f) - (x < 0.0f));
}

/** f(x); p0, p1 are clip's a_min, a_max or hard_sigmoid's alpha, beta (ignored otherwise). */
MXK_HD float mxk_un_f(int32_t code, float x, float p0, float p1) {
    switch (code) {
    case MXK_UN_ABS:
        return fabsf(x);
    case MXK_UN_CEIL:
        return ceilf(x);
    case MXK_UN_COS:
        return cosf(x);
    case MXK_UN_EXP:
        return expf(x);
    case MXK_UN_FLOOR:
        return floorf(x);
    case MXK_UN_LOG:
        return logf(x);
    case MXK_UN_ROUND:
        return roundf(x);
    case MXK_UN_RSQRT:
        return 1.0f / sqrtf(x);
    case MXK_UN_SIGN:
        return mxk_un_sign(x);
    case MXK_UN_SIN:
        return sinf(x);
    case MXK_UN_SQRT:
        return sqrtf(x);
    case MXK_UN_SQUARE:
        return x * x;
    case MXK_UN_TANH:
        return tanhf(x);
    case MXK_UN_SIGMOID:
        return 1.0f / (1.0f + expf(-x));
    case MXK_UN_RELU:
        return x > 0.0f ? x : 0.0f;
    case MXK_UN_NEGATIVE:
        return -x;
    case MXK_UN_RECIPROCAL:
        return 1.0f / x;
    case MXK_UN_LOG1P:
        return log1pf(x);
    case MXK_UN_EXPM1:
        return expm1f(x);
    case MXK_UN_LOG2:
        return log2f(x);
    case MXK_UN_LOG10:
        return log10f(x);
    case MXK_UN_ERF:
        return erff(x);
    case MXK_UN_SOFTSIGN:
        return x / (1.0f + fabsf(x));
    case MXK_UN_CLIP: /* upstream's order of tests: a_min > a_max gives a_max */
        return x > p1 ? p1 : (x < p0 ? p0 : x);
    default: { /* hard_sigmoid */
        float r = p0 * x + p1;
        r = 1.0f < r ? 1.0f : r;
        return 0.0f > r ? 0.0f : r;
    }
    }
}

/**
 * The gradient dy f'(.) from dy = a and b = x or y as mxk_un_dep says (b is dy
 * again for negative); the constants are upstream's. Zero-gradient codes give 0.
 */
MXK_HD float mxk_un_grad(int32_t code, float a, float b, float p0, float p1) {
    switch (code) {
    case MXK_UN_ABS:
        return a * mxk_un_sign(b);
    case MXK_UN_COS:
        return -a * sinf(b);
    case MXK_UN_EXP:
        return a * b;
    case MXK_UN_LOG:
        return a / b;
    case MXK_UN_RSQRT:
        return -0.5f * a / (b * sqrtf(b));
    case MXK_UN_SIN:
        return a * cosf(b);
    case MXK_UN_SQRT:
        return 0.5f * a / b;
    case MXK_UN_SQUARE:
        return 2.0f * a * b;
    case MXK_UN_TANH:
        return a * (1.0f - b * b);
    case MXK_UN_SIGMOID:
        return a * b * (1.0f - b);
    case MXK_UN_RELU:
        return b > 0.0f ? a : 0.0f;
    case MXK_UN_NEGATIVE:
        return -a;
    case MXK_UN_RECIPROCAL:
        return a * (-1.0f / (b * b));
    case MXK_UN_LOG1P:
        return a * (1.0f / (1.0f + b));
    case MXK_UN_EXPM1:
        return a * expf(b);
    case MXK_UN_LOG2:
        return a * (1.442695041f / b);
    case MXK_UN_LOG10:
        return a * (0.4342944819f / b);
    case MXK_UN_ERF: /* 2 / sqrt(pi) */
        return a * (1.128379167f * expf(-(b * b)));
    case MXK_UN_SOFTSIGN:
        return a * (1.0f / ((1.0f + fabsf(b)) * (1.0f + fabsf(b))));
    case MXK_UN_CLIP:
        return a * (b > p1 || b < p0 ? 0.0f : 1.0f);
    case MXK_UN_HARD_SIGMOID: {
        float r = p0 * b + p1;
        return a * (r > 0.0f && r < 1.0f ? p0 : 0.0f);
    }
    default: /* ceil, floor, round, sign */
        return 0.0f;
    }
}

#endif /* MXK_MATH_UNARY_H */
