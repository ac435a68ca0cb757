/*
 * Philox-4x32-10, the counter-based random generator behind mxk's random streams
 * (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3", SC'11; the same
 * constants as Random123, cuRAND and PyTorch). Header-only so that host code and
 * device kernels (CUDA: define MXK_PHILOX_QUALIFIER as __host__ __device__)
 * compute identical numbers: block i of a stream is philox(key, counter + i),
 * independent of which thread computes it. The value mappings below (uniform
 * floats, normal floats, 64-bit integers) are the host's draws
 * (host->random_uniform / random_normal of mxk_abi_host.h) element by element, so a device kernel
 * that computes element i from block i / 4 (i / 2 for 64-bit integers) of a reservation
 * (host->random_reserve) yields the host's numbers. The arithmetic is binary64 rounded after every
 * operation (never fused into an FMA: __dmul_rn / __dadd_rn on the device).
 */
#ifndef MXK_PHILOX_H
#define MXK_PHILOX_H

#include <math.h>
#include <stdint.h>

#ifndef MXK_PHILOX_QUALIFIER
#define MXK_PHILOX_QUALIFIER static inline
#endif

/** Four 32-bit outputs (or a 128-bit counter, words low to high). */
typedef struct mxk_philox_block {
    uint32_t v[4];
} mxk_philox_block;

/**
 * Computes Philox-4x32 with 10 rounds of `counter` (words low to high) under the
 * 64-bit `key` (low word first). Pure function; thread-safe.
 */
MXK_PHILOX_QUALIFIER mxk_philox_block mxk_philox4x32_10(mxk_philox_block counter, uint64_t key) {
    uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
    mxk_philox_block c = counter;
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c.v[0];
        uint64_t p1 = (uint64_t)0xCD9E8D57u * c.v[2];
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        mxk_philox_block n;
        n.v[0] = hi1 ^ c.v[1] ^ k0;
        n.v[1] = lo1;
        n.v[2] = hi0 ^ c.v[3] ^ k1;
        n.v[3] = lo0;
        c = n;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    return c;
}

/** The counter (lo, hi) + i as a Philox block (128-bit addition). */
MXK_PHILOX_QUALIFIER mxk_philox_block mxk_philox_counter(uint64_t lo, uint64_t hi, uint64_t i) {
    uint64_t nlo = lo + i;
    uint64_t nhi = hi + (nlo < lo ? 1u : 0u);
    mxk_philox_block b;
    b.v[0] = (uint32_t)nlo;
    b.v[1] = (uint32_t)(nlo >> 32);
    b.v[2] = (uint32_t)nhi;
    b.v[3] = (uint32_t)(nhi >> 32);
    return b;
}

/** Maps 32 random bits to a float in [0, 1) (24 bits of mantissa). */
MXK_PHILOX_QUALIFIER float mxk_philox_to_unit_float(uint32_t x) {
    return (float)(x >> 8) * (1.0f / 16777216.0f);
}

/** a * b in binary64, rounded once (never contracted into an FMA). */
MXK_PHILOX_QUALIFIER double mxk_philox_mul_rn(double a, double b) {
#ifdef __CUDA_ARCH__
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}

/** a + b in binary64, rounded once (never contracted into an FMA). */
MXK_PHILOX_QUALIFIER double mxk_philox_add_rn(double a, double b) {
#ifdef __CUDA_ARCH__
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}

/**
 * The uniform float in [lo, hi) of the 32 random bits x: (float)(lo + (hi - lo) *
 * to_unit_float(x)) in binary64, a value rounding to hi or above replaced by the
 * largest float below hi; lo when !(hi > lo).
 */
MXK_PHILOX_QUALIFIER float mxk_philox_uniform(uint32_t x, float lo, float hi) {
    if (!(hi > lo))
        return lo;
    double width = (double)hi - (double)lo;
    float v = (float)mxk_philox_add_rn(
        (double)lo, mxk_philox_mul_rn(width, (double)mxk_philox_to_unit_float(x)));
    return v >= hi ? nextafterf(hi, -INFINITY) : v;
}

/**
 * Outputs 2h and 2h + 1 (h = 0, 1) of block x as normal(mean, std) floats, by
 * Box-Muller on the word pair (x_2h, x_2h+1): u_k = (x_k + 0.5) 2^-32,
 * r = sqrt(-2 log u_2h), t = 2 pi u_2h+1, out = mean + std {r cos t, r sin t}.
 */
MXK_PHILOX_QUALIFIER void mxk_philox_normal2(mxk_philox_block x, uint32_t h, float mean, float std,
                                             float out[2]) {
    const double two_pi = 6.283185307179586476925286766559;
    const double inv_2_32 = 1.0 / 4294967296.0;
    double u0 = ((double)x.v[2 * h] + 0.5) * inv_2_32;
    double u1 = ((double)x.v[2 * h + 1] + 0.5) * inv_2_32;
    double r = sqrt(-2.0 * log(u0)), t = two_pi * u1;
    out[0] = (float)mxk_philox_add_rn((double)mean, mxk_philox_mul_rn((double)std, r * cos(t)));
    out[1] = (float)mxk_philox_add_rn((double)mean, mxk_philox_mul_rn((double)std, r * sin(t)));
}

/** 64 random bits from half h (0: words 0 and 1, 1: words 2 and 3) of block x, low word first. */
MXK_PHILOX_QUALIFIER uint64_t mxk_philox_bits64(mxk_philox_block x, uint32_t h) {
    return (uint64_t)x.v[2 * h] | (uint64_t)x.v[2 * h + 1] << 32;
}

#endif /* MXK_PHILOX_H */
