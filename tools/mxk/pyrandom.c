/*
 * Python's MT19937 seeding and random.shuffle (see pyrandom.h); the constants
 * are those of Matsumoto and Nishimura's reference mt19937ar.c, which CPython's
 * Modules/_randommodule.c follows.
 */
#include "pyrandom.h"

#include <string.h>

/** init_genrand: fills the state from one 32-bit seed. */
static void init_genrand(py_random *r, uint32_t s) {
    r->mt[0] = s;
    for (int i = 1; i < 624; i++)
        r->mt[i] = 1812433253u * (r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) + (uint32_t)i;
    r->mti = 624;
}

/** init_by_array over key[0..len) (len >= 1). */
static void init_by_array(py_random *r, const uint32_t *key, size_t len) {
    init_genrand(r, 19650218u);
    size_t i = 1, j = 0;
    for (size_t k = 624 > len ? 624 : len; k; k--) {
        r->mt[i] =
            (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1664525u)) + key[j] + (uint32_t)j;
        i++;
        j++;
        if (i >= 624) {
            r->mt[0] = r->mt[623];
            i = 1;
        }
        if (j >= len)
            j = 0;
    }
    for (size_t k = 623; k; k--) {
        r->mt[i] = (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1566083941u)) - (uint32_t)i;
        i++;
        if (i >= 624) {
            r->mt[0] = r->mt[623];
            i = 1;
        }
    }
    r->mt[0] = 0x80000000u;
}

/** random.seed (see pyrandom.h). */
void py_random_seed(py_random *r, uint64_t seed) {
    /* CPython splits |seed| into 32-bit words, least significant first (0 -> one word) */
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    init_by_array(r, key, key[1] ? 2 : 1);
}

/** genrand_uint32 (see pyrandom.h). */
uint32_t py_random_u32(py_random *r) {
    static const uint32_t mag01[2] = {0u, 0x9908b0dfu};
    if (r->mti >= 624) {
        int k;
        for (k = 0; k < 624 - 397; k++) {
            uint32_t y = (r->mt[k] & 0x80000000u) | (r->mt[k + 1] & 0x7fffffffu);
            r->mt[k] = r->mt[k + 397] ^ (y >> 1) ^ mag01[y & 1];
        }
        for (; k < 623; k++) {
            uint32_t y = (r->mt[k] & 0x80000000u) | (r->mt[k + 1] & 0x7fffffffu);
            r->mt[k] = r->mt[k + (397 - 624)] ^ (y >> 1) ^ mag01[y & 1];
        }
        uint32_t y = (r->mt[623] & 0x80000000u) | (r->mt[0] & 0x7fffffffu);
        r->mt[623] = r->mt[396] ^ (y >> 1) ^ mag01[y & 1];
        r->mti = 0;
    }
    uint32_t y = r->mt[r->mti++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

/** random._randbelow(n) for 1 <= n < 2^32: getrandbits(n.bit_length()) until below n. */
static uint32_t randbelow(py_random *r, uint64_t n) {
    int k = 0;
    while (k < 64 && (n >> k) != 0)
        k++;
    for (;;) {
        uint32_t v = py_random_u32(r) >> (32 - k); /* getrandbits(k), k <= 32 */
        if (v < n)
            return v;
    }
}

/** random.shuffle (see pyrandom.h). */
void py_random_shuffle(py_random *r, void *base, size_t n, size_t size, void *tmp) {
    unsigned char *b = base;
    for (size_t i = n > 0 ? n - 1 : 0; i >= 1; i--) {
        size_t j = randbelow(r, (uint64_t)i + 1);
        memcpy(tmp, b + i * size, size);
        memcpy(b + i * size, b + j * size, size);
        memcpy(b + j * size, tmp, size);
    }
}
