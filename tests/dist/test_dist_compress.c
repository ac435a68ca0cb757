/*
 * Unit test of the kvstore-dist plugin's 2-bit gradient compression
 * (plugins/kvstore-dist/compress.c, compiled into this program; no MPI run).
 *
 * The reference is upstream's rule (src/kvstore/gradient_compression-inl.h
 * quantize_2bit) written out in double precision: residual += grad; a residual >=
 * threshold sends +threshold and loses it, <= -threshold sends -threshold and gains
 * it, else sends 0. Each value the plugin stores as float32 is rounded to float32
 * here too, so the residuals must match bit for bit (the double sum of two floats
 * rounded to float is the float sum). The bit layout is upstream's: 16 codes per
 * 32-bit word, byte (i % 16) / 4, bits 0xc0 >> 2 * (i % 4), 11 = +, 10 = -.
 */
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "testing.h"

/** A deterministic uniform value in [-1, 1) (64-bit LCG). */
static double uniform(uint64_t *state) {
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/**
 * The reference push of n elements: updates res (float32 storage) and writes what is
 * sent (0 or +-threshold) into sent.
 */
static void ref_quantize(const float *grad, float *res, double *sent, size_t n, float thr) {
    for (size_t i = 0; i < n; i++) {
        double r = (double)(float)((double)res[i] + (double)grad[i]);
        sent[i] = 0;
        if (r >= (double)thr) {
            sent[i] = thr;
            r = (double)(float)(r - (double)thr);
        } else if (r <= -(double)thr) {
            sent[i] = -(double)thr;
            r = (double)(float)(r + (double)thr);
        }
        res[i] = (float)r;
    }
}

/**
 * Three pushes of random gradients (scale 1.6 x threshold, so that every code occurs)
 * for n elements and threshold thr: the residual matches the reference bit for bit
 * after every push, the dequantised codes equal what the reference sends, the
 * padding codes of the last word are 0 and no word past dist_2bit_words(n) is written.
 */
static void check_pushes(size_t n, float thr, uint64_t seed) {
    size_t words = dist_2bit_words(n);
    float *grad = malloc((n + 1) * sizeof *grad), *res = calloc(n + 1, sizeof *res);
    float *rref = calloc(n + 1, sizeof *rref), *out = malloc((n + 1) * sizeof *out);
    double *sent = malloc((n + 1) * sizeof *sent);
    uint32_t *codes = malloc((words + 1) * sizeof *codes);
    if (!grad || !res || !rref || !out || !sent || !codes) {
        CHECK(!"out of memory");
        goto done;
    }
    int bad_res = 0, bad_out = 0, sends = 0;
    for (int push = 0; push < 3; push++) {
        for (size_t i = 0; i < n; i++) {
            grad[i] = (float)(1.6 * thr * uniform(&seed));
            out[i] = (float)i; /* dequantize_add adds to what is there */
        }
        codes[words] = 0xdeadbeefu; /* a guard word */
        dist_2bit_quantize(grad, res, codes, n, thr);
        ref_quantize(grad, rref, sent, n, thr);
        CHECK_EQ_INT(codes[words], 0xdeadbeefu);
        dist_2bit_dequantize_add(codes, out, n, thr);
        for (size_t i = 0; i < n; i++) {
            bad_res += memcmp(&res[i], &rref[i], sizeof(float)) != 0;
            bad_out += (double)out[i] != (double)(float)((double)i + sent[i]);
            sends += sent[i] != 0;
        }
        /* the codes past n in the last word are 0 (upstream zeroes the block) */
        const unsigned char *bytes = (const unsigned char *)codes;
        for (size_t i = n; i < words * 16; i++)
            CHECK_EQ_INT(bytes[i / 4] & (0xc0 >> 2 * (i % 4)), 0);
    }
    CHECK_EQ_INT(bad_res, 0);
    CHECK_EQ_INT(bad_out, 0);
    if (n >= 16) /* the data exercise the nonzero codes */
        CHECK(sends > 0 && sends < 3 * (int)n);
done:
    free(grad);
    free(res);
    free(rref);
    free(out);
    free(sent);
    free(codes);
}

/** Sizes around the 16-element word, and thresholds 0.5, 0.1, 2 and 3e-3. */
static void test_random_against_reference(void) {
    const size_t sizes[] = {0, 1, 3, 15, 16, 17, 31, 33, 1000, 1003};
    const float thresholds[] = {0.5f, 0.1f, 2.0f, 3e-3f};
    uint64_t seed = 42;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t t = 0; t < sizeof thresholds / sizeof thresholds[0]; t++)
            check_pushes(sizes[s], thresholds[t], seed++);
}

/** dist_2bit_words: 16 codes per word. */
static void test_words(void) {
    CHECK_EQ_INT(dist_2bit_words(0), 0);
    CHECK_EQ_INT(dist_2bit_words(1), 1);
    CHECK_EQ_INT(dist_2bit_words(16), 1);
    CHECK_EQ_INT(dist_2bit_words(17), 2);
    CHECK_EQ_INT(dist_2bit_words(1000003), 62501);
}

/**
 * Upstream's bit layout on known values (threshold 0.5): the first byte holds
 * elements 0-3 from the high bits down (+ 11, - 10, 0 00, + 11 = 0xe3); element 16
 * opens the second word; exactly +-threshold is sent (>=, <=) and leaves 0.
 */
static void test_layout(void) {
    float grad[17] = {0.7f, -0.5f, 0.2f, 0.5f};
    grad[4] = -0.49f;
    grad[7] = -1.0f; /* byte 1, bits 0x03 side: 10 -> 0x02 */
    grad[16] = 0.6f;
    float res[17] = {0};
    uint32_t codes[2];
    dist_2bit_quantize(grad, res, codes, 17, 0.5f);
    const unsigned char *b = (const unsigned char *)codes;
    CHECK_EQ_INT(b[0], 0xe3);
    CHECK_EQ_INT(b[1], 0x02);
    CHECK_EQ_INT(b[2], 0);
    CHECK_EQ_INT(b[3], 0);
    CHECK_EQ_INT(b[4], 0xc0);
    CHECK_EQ_INT(b[5] | b[6] | b[7], 0);
    CHECK(res[0] == 0.7f - 0.5f);
    CHECK(res[1] == 0.0f && res[3] == 0.0f);
    CHECK(res[2] == 0.2f && res[4] == -0.49f);
    CHECK(res[7] == -0.5f);
    float out[17] = {0};
    dist_2bit_dequantize_add(codes, out, 17, 0.5f);
    CHECK(out[0] == 0.5f && out[1] == -0.5f && out[2] == 0.0f && out[3] == 0.5f);
    CHECK(out[4] == 0.0f && out[7] == -0.5f && out[16] == 0.5f);
}

int main(void) {
    MXK_RUN(test_words);
    MXK_RUN(test_layout);
    MXK_RUN(test_random_against_reference);
    return MXK_TEST_EXIT();
}
