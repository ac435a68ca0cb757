/*
 * Fuzz target for optimizer-state files (prefix-%04d.states, read by
 * mxkt_module_load_states of train/module.c: mxk's NDArray list of "NAME:mom" /
 * "NAME:mean" / "NAME:var" states and "__counts__"; upstream
 * python/mxnet/module/module.py load_optimizer_states).
 *
 * Input: byte 0 picks the module (bit 0: SGD with momentum or Adam), the rest is
 * the .states file, written to a temporary directory and loaded into a bound and
 * initialised module (data (2,3), FullyConnected 2, SoftmaxOutput).
 *
 * Property checked on every input: loading returns MXK_OK or an error with a
 * message and never crashes; a failed load leaves the optimizer states as they
 * were (the module's saved .states is byte-identical to the one saved before);
 * after a success the module's own states are loaded back.
 *
 * Builds as the other targets: libFuzzer (trainer, kernel and cpu-blas
 * instrumented, fuzz_kernel.h) and the standalone ctest driver (seeds: the
 * .states files the two modules save).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_PLUGINS                                                                               \
    { "libmxk-cpu-blas.so", NULL }
#include "fuzz_kernel.h"

#include "fuzz_tmp.h"
#include "mxk_train.h"
#include "fuzz_target.h"

/** Reports a failed set-up step or broken property with the trainer's last error. */
static void fail(const char *what) {
    fprintf(stderr, "fuzz_states: %s (trainer: %s)\n", what, mxkt_last_error());
    abort();
}

/** The two modules (SGD with momentum, Adam) and their saved .states files. */
static mxkt_module *modules[2];
static uint8_t *base_states[2];
static size_t base_len[2];

/** Reads the .states file of `prefix` epoch 0 into a malloc'd buffer. */
static uint8_t *read_states(const char *prefix, size_t *n) {
    char path[600];
    snprintf(path, sizeof path, "%s-0000.states", prefix);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        fail("cannot open a saved .states file");
    uint8_t *buf = malloc(1 << 16);
    *n = fread(buf, 1, 1 << 16, f);
    fclose(f);
    remove(path);
    return buf;
}

/** Saves module k's checkpoint under DIR/NAME (epoch 0) and returns its .states bytes. */
static uint8_t *save_states(int k, const char *name, size_t *n) {
    char prefix[512], files[3][600];
    fuzz_tmp_path(name, prefix);
    if (mxkt_module_save_checkpoint(modules[k], prefix, 0, 1, NULL) != MXK_OK)
        fail("save_checkpoint failed");
    snprintf(files[0], sizeof files[0], "%s-symbol.json", prefix);
    snprintf(files[1], sizeof files[1], "%s-0000.params", prefix);
    for (int i = 0; i < 2; i++)
        remove(files[i]);
    return read_states(prefix, n);
}

/** Builds, binds and initialises module k (0: SGD momentum 0.9, 1: Adam). */
static void make_module(int k) {
    mxk_symbol *x = NULL, *fc = NULL, *out = NULL;
    const char *key = "num_hidden", *val = "2";
    if (mxk_symbol_variable("data", &x) != MXK_OK ||
        mxk_symbol_create("FullyConnected", "fc", 1, &key, &val, 1, NULL, &x, &fc) != MXK_OK ||
        mxk_symbol_create("SoftmaxOutput", "softmax", 0, NULL, NULL, 1, NULL, &fc, &out) != MXK_OK)
        fuzz_kernel_fail("fuzz_states", "cannot build the network");
    mxk_context ctx = {MXK_DEV_CPU, 0};
    mxk_shape ds = {.ndim = 2, .dims = {2, 3}}, ls = {.ndim = 1, .dims = {2}};
    mxkt_initializer init;
    mxkt_optimizer opt;
    if (k == 0)
        mxkt_optimizer_sgd(&opt, 0.1, 0.9, 1e-4);
    else
        mxkt_optimizer_adam(&opt, 0.001, 0);
    if (mxkt_module_create(out, "data", "softmax_label", &ctx, 1, &modules[k]) != MXK_OK ||
        mxkt_module_bind(modules[k], &ds, &ls, 1) != MXK_OK ||
        mxkt_initializer_parse("uniform(0.5)", 3, &init) != MXK_OK ||
        mxkt_module_init_params(modules[k], &init, 0, NULL, NULL, 0, 0) != MXK_OK ||
        mxkt_module_init_optimizer(modules[k], "local", &opt, 0) != MXK_OK)
        fail("cannot set up the module");
    mxk_symbol_free(x);
    mxk_symbol_free(fc);
    mxk_symbol_free(out);
    base_states[k] = save_states(k, "base", &base_len[k]);
}

/** Loads the n bytes at p as module k's .states; returns the status. */
static mxk_status load(int k, const uint8_t *p, size_t n) {
    char prefix[512];
    fuzz_tmp_write("in-0000.states", p, n, prefix);
    prefix[strlen(prefix) - strlen("-0000.states")] = '\0';
    return mxkt_module_load_states(modules[k], prefix, 0);
}

/** Runs one input; returns the load's status. */
static mxk_status run_one(const uint8_t *data, size_t size) {
    fuzz_kernel_start();
    if (modules[0] == NULL) {
        make_module(0);
        make_module(1);
    }
    if (size < 1)
        return MXK_ERR_FORMAT;
    int k = data[0] & 1;
    mxk_status st = load(k, data + 1, size - 1);
    if (st == MXK_OK) {
        if (load(k, base_states[k], base_len[k]) != MXK_OK)
            fail("cannot load the module's own states back");
        return st;
    }
    if (mxkt_last_error()[0] == '\0')
        fail("load_states failed without a message");
    size_t n = 0;
    uint8_t *now = save_states(k, "after", &n);
    if (n != base_len[k] || memcmp(now, base_states[k], n) != 0)
        fail("a failed load_states changed the optimizer states");
    free(now);
    return st;
}

MXK_FUZZ_TARGET(run_one)

#ifdef MXK_FUZZ_STANDALONE

#include "fuzz_driver.h"

/** Loads that succeeded. */
static unsigned long n_ok;

/** Runs one input (the driver passes an exact-size heap copy) and counts it. */
static void drive(const uint8_t *p, size_t n) {
    n_ok += run_one(p, n) == MXK_OK;
}

/** Single-byte replacements: edge values (lengths, dtypes, name bytes). */
static uint8_t replace_byte(size_t at, int r, uint8_t orig) {
    static const uint8_t vals[] = {0x00, 0x01, 0x03, 0x80, 0xff};
    return at == 0 ? (uint8_t)(orig ^ 1) : vals[r];
}

/** Random mutation: 1-4 random bytes after the module byte, then cut 0-3 bytes. */
static size_t mutate_random(uint8_t *m, size_t len, size_t cap, uint64_t *rng) {
    (void)cap;
    int k = 1 + (int)(fuzz_next_rand(rng) % 4);
    for (int j = 0; j < k && len > 1; j++) {
        uint64_t x = fuzz_next_rand(rng);
        m[1 + x % (len - 1)] = (uint8_t)(x >> 32);
    }
    return len - (size_t)((*rng >> 40) % 4);
}

/** The .states target for the shared driver. */
static const fuzz_target target = {
    .run = drive,
    .seed_ext = ".states",
    .per_byte = 1,
    .replace = replace_byte,
    .random_runs = 200,
    .slack = 0,
    .mutate = mutate_random,
    .rng_init = 0x1f83d9abfb41bd6bull,
    .rng_per_seed = 1,
};

int main(int argc, char **argv) {
    fuzz_seed seeds[2];
    static const char *const labels[2] = {"sgd", "adam"};
    run_one((const uint8_t *)"", 0);
    for (int k = 0; k < 2; k++) {
        uint8_t *p = malloc(base_len[k] + 1);
        p[0] = (uint8_t)k;
        memcpy(p + 1, base_states[k], base_len[k]);
        if (run_one(p, base_len[k] + 1) != MXK_OK)
            fail("a module's own states do not load");
        seeds[k] = (fuzz_seed){p, base_len[k] + 1, labels[k]};
    }
    int rc = fuzz_main(&target, argc, argv, seeds, 2);
    printf("fuzz_states: %lu inputs, %lu loaded, the rest refused with the states unchanged\n",
           fuzz_n_inputs, n_ok);
    for (int k = 0; k < 2; k++) {
        mxkt_module_free(modules[k]);
        free(base_states[k]);
    }
    mxk_shutdown();
    return rc;
}

#endif /* MXK_FUZZ_STANDALONE */
