/*
 * Fuzz target for the IDX parser of the io-recordio plugin and MNISTIter's
 * partition (plugins/io-recordio/idx.c: idx_read*, idx_part_slice; the format of
 * MXNet's src/io/iter_mnist.cc).
 *
 * Input: one control byte, then the file bytes. Control bit 0 picks the kind
 * (0: labels, ndim 1; 1: images, ndim 3); bit 1 reads through a temporary file
 * with zlib's gzread (so gzip'd inputs and corrupt gzip streams are covered too),
 * else from memory; bits 2-7 pick a partition (num_parts 1..4, part_index),
 * sliced by idx_part_slice, the function MNISTIter uses.
 *
 * Property checked on every input: idx_read returns 0 or -1, never crashes; on
 * -1 the message is non-empty and the output holds no data; on 0 the kept slice
 * lies within the declared count, the data pointer is set, and in memory mode
 * the header plus the slice fits in the input.
 *
 * Two builds, as the other fuzz targets:
 * - libFuzzer (clang, -fsanitize=fuzzer, option MXK_FUZZ): LLVMFuzzerTestOneInput.
 * - standalone (MXK_FUZZ_STANDALONE, always built, a ctest): main() builds seeds
 *   (valid image and label files, plain and gzip'd, and headers at the parser's
 *   limits), runs each seed, every
 *   truncation, every single-byte mutation (several values per byte) and 5000
 *   fixed-seed random multi-byte mutations through the shared driver
 *   (fuzz_driver.h); arguments are files or directories of extra inputs, and
 *   `--write-seeds DIR` writes the seeds there (a libFuzzer seed corpus).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz_tmp.h"
#include "idx.h"
#include "fuzz_target.h"

/** Memory reader state. */
typedef struct mem_ctx {
    const uint8_t *p;
    size_t n, pos;
} mem_ctx;

/** idx_reader.read over a buffer. */
static int64_t mem_read(void *ctx, void *buf, size_t n) {
    mem_ctx *m = ctx;
    size_t k = m->n - m->pos < n ? m->n - m->pos : n;
    memcpy(buf, m->p + m->pos, k);
    m->pos += k;
    return (int64_t)k;
}

/** Reports a broken property and aborts (libFuzzer saves the input). */
static void fuzz_fail(const char *what, const char *msg) {
    fprintf(stderr, "fuzz_idx: %s (message: %s)\n", what, msg);
    abort();
}

/** Runs one input; returns idx_read's result. */
static int run_one(const uint8_t *data, size_t size) {
    if (size == 0)
        return -1;
    uint8_t ctl = data[0];
    data++;
    size--;
    uint32_t ndim = (ctl & 1) ? 3 : 1;
    idx_part ps = {1 + ((ctl >> 2) & 3), 0};
    ps.index = ((uint64_t)ctl >> 4) % ps.parts;
    idx_data out;
    char msg[1024] = "";
    int rc;
    if (ctl & 2) {
        char path[512];
        fuzz_tmp_write("idx", data, size, path);
        rc = idx_read_file(path, ndim, "fuzz", idx_part_slice, &ps, &out, msg, sizeof msg);
    } else {
        mem_ctx m = {data, size, 0};
        idx_reader r = {.ctx = &m, .read = mem_read, .errmsg = NULL, .limit = size ? size : 1};
        idx_data hdr;
        rc = idx_read_header(&r, ndim, "fuzz", &hdr, msg, sizeof msg);
        if (rc == 0) {
            uint64_t b, e;
            idx_part_slice(&ps, hdr.dims[0], &b, &e);
            m.pos = 0;
            rc = idx_read(&r, ndim, "fuzz", b, e, &out, msg, sizeof msg);
            if (rc == 0 && 4 + 4 * ndim + e * out.item_size > size)
                fuzz_fail("slice read past the input", msg);
        } else {
            out = hdr;
        }
    }
    if (rc != 0 && rc != -1)
        fuzz_fail("unexpected return value", msg);
    if (rc != 0) {
        if (msg[0] == '\0')
            fuzz_fail("error without a message", msg);
        if (out.data != NULL)
            fuzz_fail("data set on failure", msg);
        return rc;
    }
    if (out.data == NULL || out.ndim != ndim || out.begin > out.end || out.end > out.dims[0])
        fuzz_fail("inconsistent result", msg);
    volatile uint8_t sink = 0;
    for (uint64_t i = 0; i < (out.end - out.begin) * out.item_size; i += 97)
        sink ^= out.data[i];
    (void)sink;
    idx_free(&out);
    return rc;
}

MXK_FUZZ_TARGET(run_one)

#ifdef MXK_FUZZ_STANDALONE

#include "fuzz_driver.h"

/** Big-endian uint32. */
static void be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/** Builds a seed (control byte + file bytes) of an image (ndim 3) or label file, optionally
 *  gzip'd; its label is left for the caller. */
static fuzz_seed make_seed(uint32_t ndim, int gz, uint8_t parts_bits) {
    uint32_t n = 7, rows = 3, cols = 2;
    size_t hdr = 4 + 4 * ndim, item = ndim == 3 ? rows * cols : 1;
    size_t len = hdr + n * item;
    uint8_t *f = calloc(1, len);
    if (f == NULL)
        abort();
    be32(f, 0x800 | ndim);
    be32(f + 4, n);
    if (ndim == 3) {
        be32(f + 8, rows);
        be32(f + 12, cols);
    }
    for (size_t i = hdr; i < len; i++)
        f[i] = (uint8_t)(i * 31);
    fuzz_seed s = {NULL, 0, NULL};
    if (gz) {
        uLongf cap = compressBound((uLong)len) + 32;
        uint8_t *z = malloc(cap + 1);
        /* gzip wrapper via deflateInit2 (windowBits 31) */
        z_stream zs = {0};
        deflateInit2(&zs, 9, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
        zs.next_in = f;
        zs.avail_in = (uInt)len;
        zs.next_out = z + 1;
        zs.avail_out = (uInt)cap;
        deflate(&zs, Z_FINISH);
        s.n = 1 + zs.total_out;
        deflateEnd(&zs);
        s.p = z;
    } else {
        s.p = malloc(len + 1);
        memcpy(s.p + 1, f, len);
        s.n = len + 1;
    }
    s.p[0] = (uint8_t)((ndim == 3 ? 1 : 0) | (gz ? 2 : 0) | (parts_bits << 2));
    free(f);
    return s;
}

/** Inputs the parser accepted. */
static unsigned long n_ok;

/** Runs one input (the driver passes an exact-size heap copy) and counts it. */
static void drive(const uint8_t *p, size_t n) {
    n_ok += run_one(p, n) == 0;
}

/** Single-byte replacements: the control byte is flipped by each value, file bytes set to it. */
static uint8_t replace_byte(size_t at, int r, uint8_t orig) {
    static const uint8_t vals[] = {0x00, 0x01, 0x03, 0x08, 0x7f, 0x80, 0xff};
    return at == 0 ? (uint8_t)(orig ^ vals[r]) : vals[r];
}

/** Random mutation: 1-4 random file bytes (never the control byte), then cut 0-2 bytes. */
static size_t mutate_random(uint8_t *m, size_t len, size_t cap, uint64_t *rng) {
    (void)cap;
    int k = 1 + (int)(*rng % 4);
    for (int j = 0; j < k; j++) {
        uint64_t x = fuzz_next_rand(rng);
        m[1 + x % (len - 1)] = (uint8_t)(x >> 32);
    }
    return len - (size_t)((*rng >> 40) % 3);
}

/** How many valid seeds main builds, and how many edge seeds (see edge_seed). */
#define N_SEEDS 4
#define N_EDGE 5

/**
 * An edge seed: the plain image seed of 7 examples with header word `word` (1:
 * count, 2: rows, 3: cols) set to v and control byte c, which the parser refuses
 * (counts and sizes past IDX_MAX_COUNT / IDX_MAX_ITEM, a 0 dimension, more examples
 * than the file holds). They give libFuzzer the refusals that mutating a few
 * bytes seldom reaches.
 */
static fuzz_seed edge_seed(int word, uint32_t v, uint8_t c, const char *label) {
    fuzz_seed s = make_seed(3, 0, 0);
    be32(s.p + 1 + 4 * (size_t)word, v);
    s.p[0] = c;
    s.label = label;
    if (run_one(s.p, s.n) == 0)
        fuzz_fail("an edge seed was accepted", label);
    return s;
}

/** The IDX target for the shared driver (each seed with its own random stream). */
static const fuzz_target target = {
    .run = drive,
    .seed_ext = ".idx",
    .per_byte = 7,
    .replace = replace_byte,
    .random_runs = 5000 / N_SEEDS + 1,
    .slack = 0,
    .mutate = mutate_random,
    .rng_init = 0x9e3779b97f4a7c15ull,
    .rng_per_seed = 1,
};

int main(int argc, char **argv) {
    fuzz_seed seeds[N_SEEDS + N_EDGE];
    static const char *const labels[N_SEEDS] = {"labels", "images", "labels-gz", "images-gz"};
    int ns = 0;
    for (int gz = 0; gz < 2; gz++)
        for (uint32_t nd = 1; nd <= 3; nd += 2, ns++) {
            seeds[ns] = make_seed(nd, gz, (uint8_t)(gz ? 0x6 : 0x9));
            seeds[ns].label = labels[ns];
            if (run_one(seeds[ns].p, seeds[ns].n) != 0)
                fuzz_fail("a valid seed failed", "");
        }
    seeds[ns++] = edge_seed(1, IDX_MAX_COUNT + 1, 0x01, "count-limit");
    seeds[ns++] = edge_seed(2, 1u << 24, 0x01, "item-limit");
    seeds[ns++] = edge_seed(3, 0, 0x03, "zero-dim");
    seeds[ns++] = edge_seed(1, 8, 0x0d, "count-past-end");
    seeds[ns++] = edge_seed(1, 1u << 20, 0x3f, "count-past-end-gz");
    int rc = fuzz_main(&target, argc, argv, seeds, ns);
    printf("fuzz_idx: %lu inputs, %lu parsed, the rest rejected cleanly\n", fuzz_n_inputs, n_ok);
    return rc;
}
#endif /* MXK_FUZZ_STANDALONE */
