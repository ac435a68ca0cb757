/* Small helpers of mxk_train: shape sizes, name suffixes, a hash, random streams. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_philox.h"
#include "train_internal.h"

/** Number of elements of a shape. */
int64_t mxkt_shape_size(const mxk_shape *s) {
    int64_t n = 1;
    for (int32_t d = 0; d < s->ndim; d++)
        n *= s->dims[d];
    return n;
}

/** FNV-1a over the bytes of s. */
uint64_t mxkt_hash(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

/** Uniform double in [0,1) (24 random bits) number i of stream `stream` under `seed`. */
double mxkt_rand_unit(uint64_t seed, uint64_t stream, uint64_t i) {
    mxk_philox_block b = mxk_philox4x32_10(mxk_philox_counter(i / 4, stream, 0), seed);
    return (double)(b.v[i % 4] >> 8) / 16777216.0;
}

/** Fisher-Yates from a Philox stream (train_internal.h). */
void mxkt_shuffle(int64_t *a, int64_t n, uint64_t seed, uint64_t stream, uint64_t base) {
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)(mxkt_rand_unit(seed, stream, base + (uint64_t)i) * (double)(i + 1));
        int64_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

/** True when `s` ends with `suffix`. */
int mxkt_ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/** Python's repr of a float (shortest round trip, ".0" for integers), as json.dumps writes it. */
void mxkt_py_float(double v, char *buf, size_t size) {
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    if (strpbrk(buf, ".einf") == NULL)
        snprintf(buf + strlen(buf), size - strlen(buf), ".0");
}
