/*
 * Fuzz target for the NDArray list parser (kernel/ndarray_io.c,
 * mxk_ndarray_load_buffer).
 *
 * Property checked on every input: the parser returns MXK_OK, MXK_ERR_FORMAT or
 * MXK_ERR_UNSUPPORTED (never crashes, never another code, never leaves outputs set
 * on failure), and when it succeeds, saving what it loaded and loading that again
 * gives the same bytes when saved once more (load/save is a fixed point).
 *
 * Two builds:
 * - libFuzzer (clang, -fsanitize=fuzzer, option MXK_FUZZ): LLVMFuzzerTestOneInput.
 * - standalone (MXK_FUZZ_STANDALONE, always built, a ctest): main() builds seed
 *   files (V2 in every dtype with and without names, empty arrays, V1, legacy, V3),
 *   then runs every seed, every truncation of it, every single-byte mutation of it
 *   (several replacement values per byte) and 10000 fixed-seed random
 *   multi-byte mutations. Arguments: files or directories of extra inputs to run;
 *   `--write-seeds DIR` writes the seeds there (a libFuzzer seed corpus).
 *
 * The kernel sources are compiled in with the test-local device registry
 * (tests/kit/fake_device.c): loaded arrays live on its malloc-based CPU.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "error.h"
#include "mxk.h"
#include "nd_bytes.h"
#include "ndarray_io.h"
#include "shape.h"
#include "storage.h"
#include "fuzz_target.h"

/** Starts the engine once (NaiveEngine unless MXK_ENGINE_TYPE says otherwise). */
static void fuzz_init(void) {
    static bool started;
    if (started)
        return;
    if (getenv("MXK_ENGINE_TYPE") == NULL)
        setenv("MXK_ENGINE_TYPE", "NaiveEngine", 0);
    if (mxki_engine_start() != MXK_OK) {
        fprintf(stderr, "fuzz: cannot start the engine: %s\n", mxki_last_error_message());
        abort();
    }
    started = true;
}

/** Reports a broken property and aborts (libFuzzer saves the input). */
static void fuzz_fail(const char *what) {
    fprintf(stderr, "fuzz_ndarray_load: %s (last error: %s)\n", what, mxki_last_error_message());
    abort();
}

/** Runs one input; returns the parser's status. */
static mxk_status run_one(const uint8_t *data, size_t size) {
    fuzz_init();
    uint32_t num = 123;
    mxk_ndarray **arrays = (mxk_ndarray **)&num;
    char **names = (char **)&num;
    mxk_status st = mxk_ndarray_load_buffer(data, size, NULL, &num, &arrays, &names);
    if (st != MXK_OK) {
        if (st != MXK_ERR_FORMAT && st != MXK_ERR_UNSUPPORTED)
            fuzz_fail("unexpected status");
        if (num != 0 || arrays != NULL || names != NULL)
            fuzz_fail("outputs set on failure");
        if (st == MXK_ERR_FORMAT &&
            strncmp(mxki_last_error_message(), "Invalid NDArray file format: ", 29) != 0)
            fuzz_fail("format error without the standard prefix");
        return st;
    }
    /* Fixed point: save(load(x)) == save(load(save(load(x)))). */
    uint8_t *b1 = NULL, *b2 = NULL;
    size_t n1 = 0, n2 = 0;
    if (mxki_ndarray_save_buffer(num, arrays, (const char *const *)names, &b1, &n1) != MXK_OK)
        fuzz_fail("cannot save what was loaded");
    uint32_t num2 = 0;
    mxk_ndarray **arrays2 = NULL;
    char **names2 = NULL;
    if (mxk_ndarray_load_buffer(b1, n1, NULL, &num2, &arrays2, &names2) != MXK_OK)
        fuzz_fail("cannot load what was saved");
    if (num2 != num || (names2 == NULL) != (names == NULL))
        fuzz_fail("reloaded list differs");
    if (mxki_ndarray_save_buffer(num2, arrays2, (const char *const *)names2, &b2, &n2) != MXK_OK)
        fuzz_fail("cannot save what was reloaded");
    if (n1 != n2 || memcmp(b1, b2, n1) != 0)
        fuzz_fail("save/load is not a fixed point");
    free(b1);
    free(b2);
    mxk_ndarray_list_free(num2, arrays2, names2);
    mxk_ndarray_list_free(num, arrays, names);
    return st;
}

MXK_FUZZ_TARGET(run_one)

#ifdef MXK_FUZZ_STANDALONE

#include "fuzz_driver.h"

/** Saves arrays into a new seed. */
static void add_saved(fuzz_seed *s, int *n, const char *label, uint32_t num,
                      mxk_ndarray *const *arrays, const char *const *names) {
    uint8_t *b = NULL;
    size_t len = 0;
    if (mxki_ndarray_save_buffer(num, arrays, names, &b, &len) != MXK_OK)
        fuzz_fail("seed: save failed");
    s[(*n)++] = (fuzz_seed){b, len, label};
}

/** Adds the bytes built in b as a seed. */
static void add_built(fuzz_seed *s, int *n, const char *label, const nd_bytes *b) {
    s[(*n)++] = (fuzz_seed){b->p, b->len, label};
}

/** Builds the seeds (at most 16); returns how many. */
static int build_seeds(fuzz_seed *s) {
    int n = 0;
    mxk_ndarray *arrs[8];
    const char *names[8] = {"arg:w", "arg:b", "aux:m", "x", "", "y", "z", "e"};
    for (int32_t dt = 0; dt < 7; dt++) {
        int64_t dims[3] = {2, dt + 1, 1};
        mxk_shape sh = mxki_shape_make(dt % 3 + 1, dims);
        if (mxk_ndarray_create(&sh, dt, (mxk_context){MXK_DEV_CPU, 0}, &arrs[dt]) != MXK_OK)
            fuzz_fail("seed: create failed");
        uint64_t nb = mxki_shape_size(&sh) * mxk_dtype_size(dt);
        uint8_t buf[64];
        for (uint64_t i = 0; i < nb; i++)
            buf[i] = (uint8_t)(i * 37 + (uint64_t)dt);
        if (mxk_ndarray_copy_from_host(arrs[dt], buf, nb) != MXK_OK)
            fuzz_fail("seed: copy failed");
    }
    if (mxki_ndarray_create_empty(MXK_FLOAT32, (mxk_context){MXK_DEV_CPU, 0}, &arrs[7]) != MXK_OK)
        fuzz_fail("seed: create_empty failed");
    add_saved(s, &n, "v2-named", 8, arrs, names);
    add_saved(s, &n, "v2-unnamed", 8, arrs, NULL);
    add_saved(s, &n, "v2-one", 1, arrs, names);
    add_saved(s, &n, "v2-none", 0, NULL, NULL);
    for (int i = 0; i < 8; i++)
        mxk_ndarray_free(arrs[i]);

    nd_bytes built[3] = {{0}};
    nd_bytes *b = &built[0];
    nb_header(b, 2);
    nb_u32(b, 0xF993FAC8u); /* V1 */
    nb_i32(b, 2);
    nb_i64(b, 1);
    nb_i64(b, 2);
    nb_i32(b, 2);
    nb_i32(b, 0);
    nb_i32(b, MXK_FLOAT32);
    nb_f32(b, 1.0f);
    nb_f32(b, 2.0f);
    nb_u32(b, 0xF993FAC8u);
    nb_i32(b, 0);
    nb_u64(b, 2);
    nb_name(b, "v1a");
    nb_name(b, "v1b");
    add_built(s, &n, "v1", b);

    b = &built[1];
    nb_header(b, 2);
    nb_u32(b, 1); /* legacy */
    nb_u32(b, 3);
    nb_i32(b, 1);
    nb_i32(b, 0);
    nb_i32(b, MXK_INT32);
    nb_i32(b, -1);
    nb_i32(b, 0);
    nb_i32(b, 1);
    nb_u32(b, 0);
    nb_u64(b, 0);
    add_built(s, &n, "legacy", b);

    b = &built[2];
    nb_header(b, 2);
    nb_u32(b, 0xF993FACAu); /* V3 */
    nb_i32(b, 0);
    nb_i32(b, 1);
    nb_i64(b, 2);
    nb_i32(b, 1);
    nb_i32(b, 0);
    nb_i32(b, MXK_INT8);
    nb_raw(b, "\x01\x02", 2);
    nb_u32(b, 0xF993FACAu);
    nb_i32(b, 0);
    nb_i32(b, -1);
    nb_u64(b, 0);
    add_built(s, &n, "v3", b);
    return n;
}

/** Counts of statuses seen. */
static unsigned long n_ok, n_format, n_unsupported;

/** Runs one input (the driver passes an exact-size heap copy) and counts it. */
static void drive(const uint8_t *p, size_t n) {
    mxk_status st = run_one(p, n);
    if (st == MXK_OK)
        n_ok++;
    else if (st == MXK_ERR_FORMAT)
        n_format++;
    else
        n_unsupported++;
}

/** Single-byte replacements: boundary values, then the byte's complement. */
static uint8_t replace_byte(size_t at, int r, uint8_t orig) {
    static const uint8_t repl[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0x20, 0x09};
    (void)at;
    return (size_t)r < sizeof repl ? repl[r] : (uint8_t)~orig;
}

/** Random mutation: 1-4 edits among byte, 32-bit word, cut and junk extension. */
static size_t mutate_random(uint8_t *m, size_t len, size_t cap, uint64_t *rng) {
    int edits = 1 + (int)(*rng % 4);
    for (int e = 0; e < edits; e++) {
        uint64_t x = fuzz_next_rand(rng);
        switch (x % 4) {
        case 0: /* random byte */
            if (len)
                m[(x >> 8) % len] = (uint8_t)(x >> 40);
            break;
        case 1: /* random 32-bit word, little-endian */
            if (len >= 4) {
                size_t at = (size_t)((x >> 8) % (len - 3));
                uint32_t w = (uint32_t)(x >> 32);
                memcpy(m + at, &w, 4);
            }
            break;
        case 2: /* cut */
            len = len ? (size_t)((x >> 8) % len) : 0;
            break;
        default: /* extend with junk */
            if (len + 4 <= cap) {
                memcpy(m + len, &x, 4);
                len += 4;
            }
            break;
        }
    }
    return len;
}

/** The NDArray list target for the shared driver. */
static const fuzz_target target = {
    .run = drive,
    .seed_ext = ".params",
    .per_byte = 8,
    .replace = replace_byte,
    .random_runs = 10000,
    .slack = 16,
    .mutate = mutate_random,
    .rng_init = 0x2545F4914F6CDD1DULL,
};

int main(int argc, char **argv) {
    fuzz_init();
    fuzz_seed seeds[16];
    int n = build_seeds(seeds);
    int rc = fuzz_main(&target, argc, argv, seeds, n);
    printf("%lu inputs: %lu loaded, %lu format errors, %lu unsupported\n", fuzz_n_inputs, n_ok,
           n_format, n_unsupported);
    mxki_engine_wait_all();
    mxki_engine_stop();
    mxki_storage_shutdown();
    return rc;
}

#endif /* MXK_FUZZ_STANDALONE */
