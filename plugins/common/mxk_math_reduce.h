/*
 * Math shared by the CPU and GPU backends: the axis reductions sum, mean,
 * nansum, max, min, prod and norm (ord 1 or 2) as MXK_HD functions: the
 * accumulator's start, one step, the result and the gradient factor of an
 * element. Accumulation is in double.
 *
 * Semantics: MXNet src/operator/tensor/broadcast_reduce_op.h and
 * src/operator/mshadow_op.h (sum, maximum, minimum, product, nansum, nrm2,
 * abs_sum, eq, rdiv): max, min dx = dy where x equals the result (every tie);
 * prod dx = dy y / x (inf or NaN at x = 0, as upstream); nansum skips NaN and
 * dx = dy where x is not NaN; norm ord 2 dx = dy x / y (NaN where y = 0, as
 * upstream), ord 1 dx = dy sign(x); mean dx = dy / n (the caller scales).
 */
#ifndef MXK_MATH_REDUCE_H
#define MXK_MATH_REDUCE_H

#include <math.h>
#include <stdint.h>

#include "mxk_hd.h"

/** The reductions; the ones from MXK_RED_NANSUM on read data and output in backward. */
enum mxk_red_kind {
    MXK_RED_SUM,
    MXK_RED_MEAN,
    MXK_RED_NANSUM,
    MXK_RED_MAX,
    MXK_RED_MIN,
    MXK_RED_PROD,
    MXK_RED_NORM
};

/** The accumulator before the first element. */
MXK_HD double mxk_red_init(int32_t kind) {
    return kind == MXK_RED_MAX
               ? -INFINITY
               : (kind == MXK_RED_MIN ? INFINITY : (kind == MXK_RED_PROD ? 1.0 : 0.0));
}

/** The accumulator after element x (ord: norm's order). */
MXK_HD double mxk_red_step(int32_t kind, int32_t ord, double acc, float x) {
    switch (kind) {
    case MXK_RED_MAX:
        return fmax(acc, (double)x);
    case MXK_RED_MIN:
        return fmin(acc, (double)x);
    case MXK_RED_PROD:
        return acc * (double)x;
    case MXK_RED_NANSUM:
        return acc + (isnan(x) ? 0.0 : (double)x);
    case MXK_RED_NORM:
        return ord == 1 ? acc + fabs((double)x) : acc + (double)x * x;
    default:
        return acc + (double)x;
    }
}

/** Two partial accumulators combined (for parallel reductions). */
MXK_HD double mxk_red_combine(int32_t kind, double a, double b) {
    switch (kind) {
    case MXK_RED_MAX:
        return fmax(a, b);
    case MXK_RED_MIN:
        return fmin(a, b);
    case MXK_RED_PROD:
        return a * b;
    default:
        return a + b;
    }
}

/** The result from the accumulator of n elements (mean divides, norm 2 takes the root). */
MXK_HD double mxk_red_finish(int32_t kind, int32_t ord, double acc, uint64_t n) {
    if (kind == MXK_RED_MEAN)
        return acc / (double)n;
    if (kind == MXK_RED_NORM && ord != 1)
        return sqrt(acc);
    return acc;
}

/** The gradient factor of element x of a reduction with result y. */
MXK_HD float mxk_red_dfactor(int32_t kind, int32_t ord, float x, float y) {
    switch (kind) {
    case MXK_RED_MAX:
    case MXK_RED_MIN:
        return x == y ? 1.0f : 0.0f;
    case MXK_RED_PROD:
        return y / x;
    case MXK_RED_NANSUM:
        return isnan(x) ? 0.0f : 1.0f;
    case MXK_RED_NORM:
        if (ord == 1)
            return (float)((x > 0.0f) - (x < 0.0f));
        return x / y;
    default:
        return 1.0f;
    }
}

#endif /* MXK_MATH_REDUCE_H */
