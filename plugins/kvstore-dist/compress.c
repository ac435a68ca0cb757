/* TEMPORARY local stand-in (not committed): replaced by the gc branch. */
#include "dist.h"
size_t dist_2bit_words(size_t n) {
    return (n + 15) / 16;
}
void dist_2bit_quantize(const float *g, float *r, uint32_t *c, size_t n, float t) {
    for (size_t w = 0; w < dist_2bit_words(n); w++)
        c[w] = 0;
    for (size_t i = 0; i < n; i++) {
        r[i] += g[i];
        uint32_t code = 0;
        if (r[i] >= t) {
            code = 3;
            r[i] -= t;
        } else if (r[i] <= -t) {
            code = 2;
            r[i] += t;
        }
        c[i / 16] |= code << (2 * (i % 16));
    }
}
void dist_2bit_dequantize_add(const uint32_t *c, float *o, size_t n, float t) {
    for (size_t i = 0; i < n; i++) {
        uint32_t code = (c[i / 16] >> (2 * (i % 16))) & 3u;
        o[i] += code == 3 ? t : code == 2 ? -t : 0.0f;
    }
}
