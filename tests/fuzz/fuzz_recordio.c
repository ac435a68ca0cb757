/*
 * Fuzz target for the RecordIO reader and partitioner of the io-recordio plugin
 * (plugins/io-recordio/recordio.c; the format of dmlc-core src/recordio.cc,
 * partitions of src/io/recordio_split.cc).
 *
 * Input: one control byte, then the .rec file's bytes. Control bits 0-2 pick
 * num_parts (1..8), bits 3-5 the part_index (modulo num_parts), bit 6 unpacks an
 * IRHeader from every record read.
 *
 * Properties checked on every input: every call returns 0/1 or -1, never
 * crashes; -1 comes with a message naming the file; records never exceed the
 * file. When the whole file reads without error, the records are encoded again
 * with rio_write_record; when that encoding equals the input (a file dmlc's
 * writer could have written), each of the num_parts parts is read and together
 * they hold every record exactly once, in order.
 *
 * Two builds, as the other fuzz targets: libFuzzer (MXK_FUZZ) and the standalone
 * ctest driver (MXK_FUZZ_STANDALONE) that runs seeds (valid files with single-
 * and multi-part records), every truncation, every single-byte replacement and
 * fixed-seed random mutations through fuzz_driver.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "fuzz_tmp.h"
#include "recordio.h"

/** Reports a broken property and aborts (libFuzzer saves the input). */
static void fuzz_fail(const char *what, const char *msg) {
    fprintf(stderr, "fuzz_recordio: %s (message: %s)\n", what, msg);
    abort();
}

/** A growing byte buffer, the sink of rio_write_record. */
typedef struct bytes {
    uint8_t *p;
    size_t n, cap;
} bytes;

/** rio_write_fn appending to a bytes buffer. */
static int append(void *ctx, const void *data, size_t n) {
    bytes *b = ctx;
    if (n == 0)
        return 0;
    if (b->n + n > b->cap) {
        b->cap = 2 * (b->n + n) + 64;
        b->p = realloc(b->p, b->cap);
        if (b->p == NULL)
            fuzz_fail("out of memory", "");
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
    return 0;
}

/** Reads records of `r` until the end or an error; appends them (and their lengths) to out. */
static int read_all(rio_reader *r, uint64_t size, int unpack, bytes *out, bytes *lens, char *msg,
                    size_t cap) {
    const uint8_t *d;
    size_t n;
    int rc, count = 0;
    while ((rc = rio_reader_next(r, &d, &n, msg, cap)) == 1) {
        if (n > size)
            fuzz_fail("record longer than the file", msg);
        if (unpack) {
            rio_irheader h;
            const uint8_t *l, *p;
            size_t pn;
            char m2[256] = "";
            if (rio_irheader_get(d, n, &h, &l, &p, &pn, m2, sizeof m2) == 0 &&
                pn + 24 + 4 * (size_t)h.flag != n)
                fuzz_fail("IRHeader sizes do not add up", m2);
        }
        if (out != NULL) {
            append(out, d, n);
            append(lens, &n, sizeof n);
        }
        count++;
    }
    if (rc != 0 && rc != -1)
        fuzz_fail("unexpected return value", msg);
    if (rc == -1 && strstr(msg, "fuzz.rec") == NULL && strcmp(msg, "out of memory") != 0)
        fuzz_fail("error without the file's name", msg);
    return rc == 0 ? count : -1;
}

/** Runs one input; returns 0 when the whole file read cleanly, else -1. */
static int run_one(const uint8_t *data, size_t size) {
    if (size == 0)
        return -1;
    uint32_t parts = 1 + (data[0] & 7), index = ((uint32_t)data[0] >> 3 & 7) % parts;
    int unpack = (data[0] >> 6) & 1;
    char path[512], msg[1024] = "";
    fuzz_tmp_write("fuzz.rec", data + 1, size - 1, path);
    rio_reader *r;
    if (rio_reader_open(path, &r, msg, sizeof msg) != 0)
        fuzz_fail("cannot open the input", msg);
    bytes all = {0}, lens = {0};
    int count = read_all(r, size - 1, unpack, &all, &lens, msg, sizeof msg);
    /* one part, whatever the file holds */
    uint64_t b, e;
    if (rio_part_range(r, parts, index, &b, &e, msg, sizeof msg) != 0)
        fuzz_fail("partition failed", msg);
    if (b > e || e > size - 1)
        fuzz_fail("partition out of the file", msg);
    rio_reader_set_end(r, e);
    read_all(r, size - 1, unpack, NULL, NULL, msg, sizeof msg);
    rio_reader_close(r);
    if (count >= 0) {
        bytes enc = {0};
        const uint8_t *p = all.p;
        for (int i = 0; i < count; i++) {
            size_t n;
            memcpy(&n, lens.p + i * sizeof n, sizeof n);
            if (rio_write_record(append, &enc, p, n, NULL, msg, sizeof msg) != 0)
                fuzz_fail("a record read cannot be written", msg);
            p += n;
        }
        if (enc.n == size - 1 && (enc.n == 0 || memcmp(enc.p, data + 1, enc.n) == 0)) {
            bytes joined = {0}, jl = {0};
            for (uint32_t k = 0; k < parts; k++) {
                if (rio_reader_open(path, &r, msg, sizeof msg) != 0 ||
                    rio_part_range(r, parts, k, &b, &e, msg, sizeof msg) != 0)
                    fuzz_fail("partition of a valid file failed", msg);
                rio_reader_set_end(r, e);
                if (read_all(r, size - 1, 0, &joined, &jl, msg, sizeof msg) < 0)
                    fuzz_fail("a part of a valid file failed", msg);
                rio_reader_close(r);
            }
            if (joined.n != all.n || jl.n != lens.n ||
                (all.n && memcmp(joined.p, all.p, all.n) != 0) ||
                (lens.n && memcmp(jl.p, lens.p, lens.n) != 0))
                fuzz_fail("the parts do not hold every record exactly once", "");
            free(joined.p);
            free(jl.p);
        }
        free(enc.p);
    }
    free(all.p);
    free(lens.p);
    return count >= 0 ? 0 : -1;
}

MXK_FUZZ_TARGET(run_one)

#ifdef MXK_FUZZ_STANDALONE

#include "fuzz_driver.h"

/** A seed: control byte `ctl`, then `n` records written by rio_write_record, some multi-part. */
static fuzz_seed make_seed(uint8_t ctl, int n, const char *label) {
    bytes b = {0};
    append(&b, &ctl, 1);
    uint8_t rec[64];
    for (int i = 0; i < n; i++) {
        size_t len = (size_t)(i * 11) % 37;
        for (size_t k = 0; k < len; k++)
            rec[k] = (uint8_t)(i + k);
        if (len >= 8 && i % 2 == 0) {
            uint32_t m = RIO_MAGIC;
            memcpy(rec + 4, &m, 4);
        }
        char msg[64];
        rio_write_record(append, &b, rec, len, NULL, msg, sizeof msg);
    }
    fuzz_seed s = {b.p, b.n, label};
    if (run_one(s.p, s.n) != 0)
        fuzz_fail("a valid seed failed", label);
    return s;
}

/** Inputs whose whole file read cleanly. */
static unsigned long n_ok;

/** Runs one input and counts it. */
static void drive(const uint8_t *p, size_t n) {
    n_ok += run_one(p, n) == 0;
}

/** Single-byte replacements: the control byte is flipped, file bytes set. */
static uint8_t replace_byte(size_t at, int r, uint8_t orig) {
    static const uint8_t vals[] = {0x00, 0x0a, 0x20, 0x23, 0x40, 0x60, 0xce, 0xff};
    return at == 0 ? (uint8_t)(orig ^ vals[r]) : vals[r];
}

/** The RecordIO target for the shared driver. */
static const fuzz_target target = {
    .run = drive,
    .seed_ext = ".rec",
    .per_byte = 8,
    .replace = replace_byte,
    .random_runs = 2000,
    .slack = 0,
    .mutate = fuzz_mutate_after_control,
    .rng_init = 0x2545f4914f6cdd1dull,
    .rng_per_seed = 1,
};

/**
 * A corrupt file found by libFuzzer: part 3 of 6 starts at a magic word whose
 * length word is another magic word, so dmlc's scan puts its begin past its end.
 */
static fuzz_seed magic_as_length(void) {
    static const uint8_t file[] = {0x1d, 0x47, 0x0a, 0x23, 0x00, 0x3a, 0x03, 0x02, 0x00,
                                   0x00, 0x04, 0x04, 0x00, 0x0a, 0x23, 0xd7, 0xce, 0x0a,
                                   0x23, 0xd7, 0xce, 0x01, 0x00, 0x00, 0x00};
    fuzz_seed s = {malloc(sizeof file), sizeof file, "magic-as-length"};
    memcpy(s.p, file, sizeof file);
    return s;
}

int main(int argc, char **argv) {
    fuzz_seed seeds[4] = {make_seed(0x00, 6, "whole"), make_seed(0x1a, 12, "parts3"),
                          make_seed(0x47, 9, "parts8-irheader"), magic_as_length()};
    int rc = fuzz_main(&target, argc, argv, seeds, 4);
    printf("fuzz_recordio: %lu inputs, %lu read cleanly, the rest rejected cleanly\n",
           fuzz_n_inputs, n_ok);
    return rc;
}
#endif /* MXK_FUZZ_STANDALONE */
