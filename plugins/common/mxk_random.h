/*
 * Sample mappings shared by the CPU and GPU backends, on top of the Philox-4x32-10
 * value mappings of abi/mxk_philox.h: the exponential from a uniform draw, the
 * integer of _random_randint from 64 random bits, Dropout's mask and the outcome
 * of _sample_multinomial from a uniform draw. cpu-blas (op_random.c, op_dropout.c,
 * op_math_sample.c) and the cuda plugin (cu_kern_random.cu, cu_kern_sample.cu)
 * compute them through these functions, so one seed gives the same numbers on
 * both. Semantics: MXNet src/operator/random/sample_op.h (ExponentialSampler,
 * RandIntSampler), src/operator/nn/dropout-inl.h (the mask (u < 1 - p) / (1 - p))
 * and src/operator/random/sample_multinomial_op.h (SampleMultinomialKernel).
 */
#ifndef MXK_RANDOM_H
#define MXK_RANDOM_H

#include <math.h>
#include <stdint.h>

#include "mxk_hd.h"

#if defined(__CUDACC__) && !defined(MXK_PHILOX_QUALIFIER)
#define MXK_PHILOX_QUALIFIER static inline __host__ __device__
#endif
#include "mxk_philox.h"

/** The exponential sample of rate lam from a uniform u in [0, 1): -log(1 - u) / lam. */
MXK_HD float mxk_random_exponential(float u, float lam) {
    return (float)(-log1p(-(double)u) / lam);
}

/** The integer in [low, low + range) of 64 random bits: low + bits mod range (low when 0). */
MXK_HD int64_t mxk_random_randint(uint64_t bits, int64_t low, uint64_t range) {
    return (int64_t)((uint64_t)low + (range ? bits % range : 0));
}

/** Dropout's mask value of a uniform u: scale (1 / keep) when u < keep, else 0. */
MXK_HD float mxk_random_dropout_mask(float u, float keep, float scale) {
    return (u < keep ? 1.0f : 0.0f) * scale;
}

/**
 * The outcome of _sample_multinomial for a uniform u in [0, 1) and the k
 * probabilities d: the first c whose cumulative probability (summed in double,
 * compared in float) reaches u, or k - 1 when rounding leaves u above the total.
 */
MXK_HD uint64_t mxk_random_multinomial(const float *d, uint64_t k, float u) {
    double acc = 0.0;
    for (uint64_t c = 0; c < k; c++) {
        acc += d[c];
        if (!((float)acc < u))
            return c;
    }
    return k - 1;
}

#endif /* MXK_RANDOM_H */
