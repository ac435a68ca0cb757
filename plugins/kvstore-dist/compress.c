/*
 * 2-bit gradient compression of float32 values (declared in dist.h).
 *
 * Upstream: src/kvstore/gradient_compression-inl.h (quantize_2bit,
 * dequantize_2bit) and src/kvstore/gradient_compression.cc (Quantize,
 * Dequantize, GetCompressionFactor = 16). The quantisation rule and the bit
 * layout are upstream's: element i of a block of 16 lives in byte (i % 16) / 4
 * of the block's 32-bit word (in memory order) at bits 0xc0 >> 2 * (i % 4);
 * 11 stands for +threshold, 10 for -threshold, 00 for 0. Since the codes are
 * written byte by byte the words are the same bytes on every host, as upstream's.
 */
#include <stdint.h>
#include <string.h>

#include "dist.h"

/* The 2-bit masks of the 4 elements of a byte (upstream posbits and negbits). */
static const uint8_t pos_bits[4] = {0xc0, 0x30, 0x0c, 0x03};
static const uint8_t neg_bits[4] = {0x80, 0x20, 0x08, 0x02};

size_t dist_2bit_words(size_t n) {
    return n / 16 + (n % 16 != 0);
}

void dist_2bit_quantize(const float *grad, float *residual, uint32_t *codes, size_t n,
                        float threshold) {
    unsigned char *bytes = (unsigned char *)codes;
    const float neg = -threshold;
    memset(codes, 0, dist_2bit_words(n) * sizeof *codes);
    for (size_t i = 0; i < n; i++) {
        float r = residual[i] + grad[i];
        if (r >= threshold) {
            bytes[i / 4] |= pos_bits[i % 4];
            r -= threshold;
        } else if (r <= neg) {
            bytes[i / 4] |= neg_bits[i % 4];
            r -= neg;
        }
        residual[i] = r;
    }
}

void dist_2bit_dequantize_add(const uint32_t *codes, float *out, size_t n, float threshold) {
    const unsigned char *bytes = (const unsigned char *)codes;
    for (size_t i = 0; i < n; i++) {
        unsigned masked = bytes[i / 4] & pos_bits[i % 4];
        if (masked == pos_bits[i % 4])
            out[i] += threshold;
        else if (masked == neg_bits[i % 4])
            out[i] += -threshold;
    }
}
