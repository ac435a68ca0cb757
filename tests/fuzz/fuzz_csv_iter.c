/*
 * Fuzz target for CSVIter's parser and batching (plugins/io-recordio/csv_iter.c,
 * upstream src/io/iter_csv.cc): fuzzed data and label CSV files, written to a
 * temporary directory, read by the iterator through two epochs (fuzz_iter.h).
 *
 * Input: byte 0 controls the attributes (bits 0-1: batch_size 1..4; bit 2:
 * round_batch; bits 3-4: data_shape (1,), (3,), (2,2) or (2); bit 5: a label file,
 * with label_shape (2,) when bit 6 is set, else (1,); bit 7: prefetch_buffer 1);
 * then the data file up to the first NUL byte, and the label file after it.
 *
 * Property checked on every input: fuzz_iter.h's (clean errors with a message,
 * sticky failures, batches of the described shapes, pad below the batch size),
 * and without round_batch (whose next epoch continues after the wrapped rows)
 * the same number of examples in both epochs.
 *
 * Builds as the other targets: libFuzzer (kernel and io-recordio instrumented,
 * fuzz_kernel.h) and the standalone ctest driver (seeds: data with and without
 * labels, spaces, blank lines, exponents and CRLF line ends).
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

/** Runs one input; returns the examples of the first epoch (-1: refused cleanly). */
static int64_t run_one(const uint8_t *data, size_t size) {
    fuzz_kernel_start();
    if (size < 1)
        return -1;
    static const char *const shapes[] = {"(1,)", "(3,)", "(2,2)", "(2)"};
    uint8_t c = data[0];
    const uint8_t *body = data + 1;
    size_t n = size - 1;
    const uint8_t *nul = memchr(body, 0, n);
    size_t data_len = nul ? (size_t)(nul - body) : n;
    char dpath[512], lpath[512], bs[8];
    fuzz_tmp_write("data.csv", body, data_len, dpath);
    uint32_t na = 5;
    snprintf(bs, sizeof bs, "%u", 1 + (c & 3));
    const char *keys[7] = {"data_csv", "data_shape", "batch_size", "round_batch",
                           "prefetch_buffer"};
    const char *vals[7] = {dpath, shapes[(c >> 3) & 3], bs, c & 4 ? "True" : "False",
                           c & 128 ? "1" : "4"};
    if (c & 32) {
        const uint8_t *lbl = nul ? nul + 1 : body + n;
        fuzz_tmp_write("label.csv", lbl, (size_t)(body + n - lbl), lpath);
        keys[na] = "label_csv";
        vals[na++] = lpath;
        keys[na] = "label_shape";
        vals[na++] = c & 64 ? "(2,)" : "(1,)";
    }
    return fuzz_iter_run("CSVIter", na, keys, vals, !(c & 4));
}

MXK_FUZZ_TARGET(run_one)

#ifdef MXK_FUZZ_STANDALONE

#include "fuzz_driver.h"

/** A seed from a control byte and the text of the data and (optional) label files. */
static fuzz_seed make_seed(uint8_t c, const char *data, const char *label, const char *name) {
    size_t nd = strlen(data), nl = label ? strlen(label) : 0;
    size_t n = 1 + nd + (label ? 1 + nl : 0);
    uint8_t *p = malloc(n);
    p[0] = c;
    memcpy(p + 1, data, nd);
    if (label) {
        p[1 + nd] = 0;
        memcpy(p + 2 + nd, label, nl);
    }
    if (run_one(p, n) < 1)
        fuzz_kernel_fail(name, "a valid seed delivered nothing");
    return (fuzz_seed){p, n, name};
}

/** Inputs that ran a clean epoch. */
static unsigned long n_ok;

/** Runs one input (the driver passes an exact-size heap copy) and counts it. */
static void drive(const uint8_t *p, size_t n) {
    n_ok += run_one(p, n) >= 0;
}

/** Single-byte replacements: the control byte flips a bit, text bytes become CSV syntax. */
static uint8_t replace_byte(size_t at, int r, uint8_t orig) {
    static const char repl[] = {',', '\n', '-', 'e', '0', ' ', '.', 'x'};
    if (at == 0)
        return (uint8_t)(orig ^ (1u << (r + 2)));
    return (uint8_t)repl[(at * 3 + (size_t)r * 5) % sizeof repl];
}

/** Tokens of the format for the driver's random mutations (fuzz_mutate_tokens). */
static const char *const tokens[] = {",",    "\n",    "\r\n", "1e39",  "-1e-45", "nan",
                                     "inf",  "  ",    ",,",   "0x10",  "1.5",    "\n\n",
                                     "9999", "\"1\"", "-",    "1e309", NULL};

/** The CSVIter target for the shared driver. */
static const fuzz_target target = {
    .run = drive,
    .seed_ext = ".csv",
    .per_byte = 2,
    .replace = replace_byte,
    .random_runs = 600,
    .slack = 32,
    .tokens = tokens,
    .keep = 1,
    .rng_init = 0x510e527fade682d1ull,
    .rng_per_seed = 1,
};

int main(int argc, char **argv) {
    fuzz_kernel_start();
    fuzz_seed seeds[3] = {
        make_seed(0x09, "1,2,3\n4,5,6\n\n7,8,9\n-1.5e2, 0.25 ,3\n1,1,1\n", NULL, "data"),
        make_seed(0x36, "1,2,3,4\r\n5,6,7,8\r\n9,10,11,12\r\n", "0\n1\n2\n", "labelled"),
        make_seed(0x62, "0.5\n1.5\n2.5\n", "1,2\n3,4\n5,6\n", "wide-label")};
    int rc = fuzz_main(&target, argc, argv, seeds, 3);
    printf("fuzz_csv_iter: %lu inputs, %lu read through, the rest refused cleanly\n", fuzz_n_inputs,
           n_ok);
    mxk_shutdown();
    return rc;
}

#endif /* MXK_FUZZ_STANDALONE */
