/*
 * Fuzz target for MNISTIter end to end (plugins/io-recordio/mnist_iter.c, upstream
 * src/io/iter_mnist.cc): fuzzed IDX image and label files, written to a temporary
 * directory, read by the iterator through two epochs (fuzz_iter.h).
 *
 * Input: byte 0 controls the attributes (bits 0-1: batch_size 1..4; bit 2: flat;
 * bit 3: shuffle; bit 4: round_batch; bits 5-6: num_parts 1..4 with part_index
 * the last part; bit 7: prefetch_buffer 1), bytes 1-2 the image file's length L
 * (big-endian), then L image bytes and the label file (the rest).
 *
 * Property checked on every input: besides fuzz_iter.h's (clean errors, batches
 * of the described shapes, the same count in both epochs), when the label file is
 * a plain IDX file that the iterator accepted, an epoch delivers exactly the
 * examples of the partition: all of them with round_batch, else the whole batches
 * among them (upstream drops the tail).
 *
 * Builds as the other targets: libFuzzer (kernel and io-recordio instrumented,
 * fuzz_kernel.h) and the standalone ctest driver (seeds: plain and gzip'd image
 * and label files of 7 examples, with and without partitions).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_PLUGINS                                                                               \
    { "libmxk-cpu-blas.so", "libmxk-io-recordio.so", NULL }
#include "fuzz_kernel.h"

#include "fuzz_iter.h"
#include "fuzz_target.h"

/** Big-endian uint32 at p. */
static uint32_t be32_get(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/**
 * Examples an epoch must deliver for a label file `lbl` of n bytes, or -1 when it
 * is not a plain IDX label file (then nothing is checked).
 */
static int64_t expected(const uint8_t *lbl, size_t n, uint32_t parts, uint32_t batch,
                        int round_batch) {
    if (n < 8 || be32_get(lbl) != 0x801)
        return -1;
    uint64_t count = be32_get(lbl + 4);
    double step = (double)count / (double)parts;
    uint64_t begin = (uint64_t)(step * (double)(parts - 1));
    uint64_t part = begin > count ? 0 : count - begin;
    return round_batch ? (int64_t)part : (int64_t)(part / batch * batch);
}

/** Runs one input; returns the examples of the first epoch (-1: refused cleanly). */
static int64_t run_one(const uint8_t *data, size_t size) {
    fuzz_kernel_start();
    if (size < 3)
        return -1;
    uint8_t c = data[0];
    size_t img_len = (size_t)data[1] << 8 | data[2];
    if (img_len > size - 3)
        return -1;
    char img[512], lbl[512], bs[8], parts[8], part[8];
    fuzz_tmp_write("img", data + 3, img_len, img);
    fuzz_tmp_write("lbl", data + 3 + img_len, size - 3 - img_len, lbl);
    uint32_t batch = 1 + (c & 3), np = 1 + ((c >> 5) & 3);
    snprintf(bs, sizeof bs, "%u", batch);
    snprintf(parts, sizeof parts, "%u", np);
    snprintf(part, sizeof part, "%u", np - 1);
    const char *keys[] = {"image",           "label",       "batch_size", "flat",
                          "shuffle",         "round_batch", "num_parts",  "part_index",
                          "prefetch_buffer", "silent"};
    const char *vals[] = {img,
                          lbl,
                          bs,
                          c & 4 ? "True" : "False",
                          c & 8 ? "True" : "False",
                          c & 16 ? "True" : "False",
                          parts,
                          part,
                          c & 128 ? "1" : "4",
                          "True"};
    int64_t got = fuzz_iter_run("MNISTIter", 10, keys, vals, 1);
    int64_t want = expected(data + 3 + img_len, size - 3 - img_len, np, batch, (c & 16) != 0);
    if (got >= 0 && want >= 0 && got != want)
        fuzz_kernel_fail("MNISTIter", "an epoch delivered the wrong number of examples");
    return got;
}

MXK_FUZZ_TARGET(run_one)

#ifdef MXK_FUZZ_STANDALONE

#include <zlib.h>

#include "fuzz_driver.h"

/** Big-endian uint32 into p. */
static void be32_put(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/** gzip's the n bytes at p into out (room for n + 64); returns the gzip'd length. */
static size_t gzip(const uint8_t *p, size_t n, uint8_t *out) {
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    deflateInit2(&zs, 9, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
    zs.next_in = (uint8_t *)p;
    zs.avail_in = (uInt)n;
    zs.next_out = out;
    zs.avail_out = (uInt)(n + 64);
    deflate(&zs, Z_FINISH);
    size_t len = zs.total_out;
    deflateEnd(&zs);
    return len;
}

/** A seed of 7 examples of 3x2 pixels with control byte c, gzip'd when gz. */
static fuzz_seed make_seed(uint8_t c, int gz, const char *label) {
    enum { N = 7, R = 3, C = 2 };
    uint8_t img[16 + N * R * C], lbl[8 + N], zimg[sizeof img + 64], zlbl[sizeof lbl + 64];
    be32_put(img, 0x803);
    be32_put(img + 4, N);
    be32_put(img + 8, R);
    be32_put(img + 12, C);
    for (size_t i = 16; i < sizeof img; i++)
        img[i] = (uint8_t)(i * 37);
    be32_put(lbl, 0x801);
    be32_put(lbl + 4, N);
    for (size_t i = 8; i < sizeof lbl; i++)
        lbl[i] = (uint8_t)(i % 10);
    const uint8_t *pi = img, *pl = lbl;
    size_t ni = sizeof img, nl = sizeof lbl;
    if (gz) {
        ni = gzip(img, sizeof img, zimg);
        nl = gzip(lbl, sizeof lbl, zlbl);
        pi = zimg;
        pl = zlbl;
    }
    uint8_t *p = malloc(3 + ni + nl);
    p[0] = c;
    p[1] = (uint8_t)(ni >> 8);
    p[2] = (uint8_t)ni;
    memcpy(p + 3, pi, ni);
    memcpy(p + 3 + ni, pl, nl);
    if (run_one(p, 3 + ni + nl) < 1)
        fuzz_kernel_fail(label, "a valid seed delivered nothing");
    return (fuzz_seed){p, 3 + ni + nl, label};
}

/** Inputs that ran a clean epoch. */
static unsigned long n_ok;

/** Runs one input (the driver passes an exact-size heap copy) and counts it. */
static void drive(const uint8_t *p, size_t n) {
    n_ok += run_one(p, n) >= 0;
}

/** Single-byte replacements: the control byte flips a bit, file bytes take edge values. */
static uint8_t replace_byte(size_t at, int r, uint8_t orig) {
    static const uint8_t vals[] = {0x00, 0x01, 0x08, 0x7f, 0xff};
    return at == 0 ? (uint8_t)(orig ^ (1u << (r + 2))) : vals[r];
}

/** Random mutation: 1-4 random bytes after the length, then cut 0-2 bytes. */
static size_t mutate_random(uint8_t *m, size_t len, size_t cap, uint64_t *rng) {
    (void)cap;
    int k = 1 + (int)(fuzz_next_rand(rng) % 4);
    for (int j = 0; j < k && len > 3; j++) {
        uint64_t x = fuzz_next_rand(rng);
        m[3 + x % (len - 3)] = (uint8_t)(x >> 32);
    }
    return len - (size_t)((*rng >> 40) % 3);
}

/** The MNISTIter target for the shared driver. */
static const fuzz_target target = {
    .run = drive,
    .seed_ext = ".mnist",
    .per_byte = 5,
    .replace = replace_byte,
    .random_runs = 300,
    .slack = 0,
    .mutate = mutate_random,
    .rng_init = 0xa54ff53a5f1d36f1ull,
    .rng_per_seed = 1,
};

int main(int argc, char **argv) {
    fuzz_kernel_start();
    fuzz_seed seeds[3] = {make_seed(0x01, 0, "plain"), make_seed(0x5e, 0, "parts"),
                          make_seed(0x12, 1, "gzip")};
    int rc = fuzz_main(&target, argc, argv, seeds, 3);
    printf("fuzz_mnist_iter: %lu inputs, %lu read through, the rest refused cleanly\n",
           fuzz_n_inputs, n_ok);
    mxk_shutdown();
    return rc;
}

#endif /* MXK_FUZZ_STANDALONE */
