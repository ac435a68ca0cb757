/*
 * Window arithmetic of Pooling shared by the CPU (cpu-blas op_pooling.c) and GPU
 * (cuda cu_kern_pool.cu) kernels, so that both pick the same windows, divisors
 * and lp terms (mxk_hd.h).
 *
 * Semantics: MXNet src/operator/nn/pool.h (window bounds of pool_max_*_cpu /
 * pool_sum_*_cpu: start = o*s - pad, end = min(start + k, x + pad), avg's divisor
 * the window before clipping to the input when count_include_pad, after it
 * otherwise) and src/operator/nn/pool_utils.h (a_pow_p, a_root_p, lp_grad).
 */
#ifndef MXK_POOL_H
#define MXK_POOL_H

#include <math.h>
#include <stdint.h>

#include "mxk_hd.h"

/** Pool types, in the order of the operator's pool_type enum string. */
enum mxk_pool_type { MXK_POOL_MAX, MXK_POOL_AVG, MXK_POOL_SUM, MXK_POOL_LP };

/**
 * Clips the window of output o along one axis, [o*s - pad, min(o*s - pad + k,
 * x + pad)), to [0, x) into [*lo, *hi) (empty: *hi == *lo); returns its size
 * before clipping to the input.
 */
MXK_HD int64_t mxk_pool_axis(int64_t o, int64_t s, int64_t pad, int64_t k, int64_t x, int64_t *lo,
                             int64_t *hi) {
    int64_t st = o * s - pad, en = st + k < x + pad ? st + k : x + pad;
    *lo = st < 0 ? 0 : st;
    *hi = en < x ? en : x;
    if (*hi < *lo)
        *hi = *lo;
    return en - st;
}

/** v^p of lp pooling, p in 1..3 (no absolute value, as pool_utils.h a_pow_p). */
MXK_HD float mxk_pool_pow(int64_t p, float v) {
    return p == 1 ? v : p == 2 ? v * v : v * v * v;
}

/** The p-th root of lp pooling (pool_utils.h a_root_p). */
MXK_HD float mxk_pool_root(int64_t p, float v) {
    return p == 1 ? v : p == 2 ? sqrtf(v) : cbrtf(v);
}

/** lp's gradient dy * (x/y)^(p-1), 0 where y is 0 for p > 1 (pool_utils.h lp_grad). */
MXK_HD float mxk_pool_lp_grad(int64_t p, float dy, float x, float y) {
    if (p == 1)
        return dy;
    if (y == 0.0f)
        return 0.0f;
    float r = x / y;
    return p == 2 ? dy * r : dy * r * r;
}

#endif /* MXK_POOL_H */
