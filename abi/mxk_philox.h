/*
 * Philox-4x32-10, the counter-based random generator behind mxk's random streams
 * (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3", SC'11; the same
 * constants as Random123, cuRAND and PyTorch). Header-only so that host code and
 * device kernels (CUDA: define MXK_PHILOX_QUALIFIER as __host__ __device__)
 * compute identical numbers: block i of a stream is philox(key, counter + i),
 * independent of which thread computes it.
 */
#ifndef MXK_PHILOX_H
#define MXK_PHILOX_H

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

#endif /* MXK_PHILOX_H */
