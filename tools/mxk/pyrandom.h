/*
 * Python's `random` module as far as `mxk im2rec --list` needs it: the Mersenne
 * Twister MT19937 seeded from an integer as random.seed(n) does (CPython's
 * Modules/_randommodule.c: init_by_array over the 32-bit words of |n|) and
 * random.shuffle (Lib/random.py: Fisher-Yates from the end with _randbelow, which
 * draws getrandbits(k) for k = n.bit_length() and rejects values >= n), so that
 * upstream tools/im2rec.py's random.seed(100); random.shuffle(list) order is
 * reproduced exactly. One generator per thread; no global state.
 */
#ifndef MXK_CLI_PYRANDOM_H
#define MXK_CLI_PYRANDOM_H

#include <stddef.h>
#include <stdint.h>

/** MT19937 state (CPython's RandomObject). */
typedef struct py_random {
    uint32_t mt[624];
    int mti;
} py_random;

/** random.seed(seed) for a non-negative integer seed below 2^64. */
void py_random_seed(py_random *r, uint64_t seed);

/** random.getrandbits(32): the next 32-bit output. */
uint32_t py_random_u32(py_random *r);

/**
 * random.shuffle(x) of the n items of `size` bytes each at `base` (n < 2^32),
 * using `tmp` (size bytes) for swaps.
 */
void py_random_shuffle(py_random *r, void *base, size_t n, size_t size, void *tmp);

#endif
