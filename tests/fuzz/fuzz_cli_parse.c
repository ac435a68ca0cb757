/*
 * Fuzz target for the option parsers of the `mxk` command line
 * (tools/mxk/parse.c: numbers, --shape, --ctx, --metrics, --lr-step-epochs) and
 * the --initializer spec (train/initializer.c mxkt_initializer_parse, upstream
 * python/mxnet/initializer.py).
 *
 * Input: byte 0 picks the parser (modulo 7), the rest is the option value (cut
 * at a NUL byte).
 *
 * Property checked on every input: no parser crashes; an accepted value
 * satisfies the parser's contract (numbers within range and printed back to the
 * same value, shapes with 1..MXK_MAX_NDIM positive dims and a non-empty name,
 * 1..MXKT_MAX_CTX contexts with ids in range, 1..CLI_MAX_METRICS metrics,
 * step epochs in [1, CLI_MAX_EPOCHS]); a refused one has a message.
 *
 * Builds as the other targets: libFuzzer (parse.c compiled in, instrumented) and
 * the standalone ctest driver (seeds: one valid value per parser).
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "fuzz_target.h"

/** Reports a broken property and aborts. */
static void fail(const char *value, const char *what) {
    fprintf(stderr, "fuzz_cli_parse: %s for '%s'\n", what, value);
    abort();
}

/** Runs the parser `which` on s; returns 1 when it accepted the value. */
static int run_parser(int which, const char *s) {
    char msg[512] = "";
    switch (which) {
    case 0: {
        uint64_t v = 0, back = 0;
        char buf[32];
        if (!cli_parse_uint(s, 1000000, &v))
            return 0;
        snprintf(buf, sizeof buf, "%" PRIu64, v);
        if (v > 1000000 || !cli_parse_uint(buf, 1000000, &back) || back != v)
            fail(s, "uint out of range or not read back");
        return 1;
    }
    case 1: {
        double v = 0;
        if (!cli_parse_real(s, &v))
            return 0;
        if (!isfinite(v))
            fail(s, "real not finite");
        return 1;
    }
    case 2: {
        size_t nl = 0;
        mxk_shape sh;
        if (!cli_parse_shape_option(s, &nl, &sh))
            return 0;
        if (nl == 0 || s[nl] != '=' || sh.ndim < 1 || sh.ndim > MXK_MAX_NDIM)
            fail(s, "bad shape result");
        for (int32_t d = 0; d < sh.ndim; d++)
            if (sh.dims[d] < 1)
                fail(s, "shape dim below 1");
        return 1;
    }
    case 3: {
        mxk_context ctx[MXKT_MAX_CTX];
        uint32_t n = 0;
        if (!cli_parse_ctx(s, ctx, &n))
            return 0;
        if (n < 1 || n > MXKT_MAX_CTX)
            fail(s, "bad context count");
        for (uint32_t i = 0; i < n; i++)
            if ((ctx[i].dev_type != MXK_DEV_CPU && ctx[i].dev_type != MXK_DEV_GPU) ||
                ctx[i].dev_id < 0 || ctx[i].dev_id > CLI_MAX_DEV_ID)
                fail(s, "bad context");
        return 1;
    }
    case 4: {
        mxkt_metric ms[CLI_MAX_METRICS];
        uint32_t n = 0;
        if (!cli_parse_metrics(s, ms, &n, msg, sizeof msg)) {
            if (msg[0] == '\0')
                fail(s, "metrics refused without a message");
            return 0;
        }
        if (n < 1 || n > CLI_MAX_METRICS)
            fail(s, "bad metric count");
        return 1;
    }
    case 5: {
        int64_t e[MXKT_MAX_STEPS];
        int32_t n = 0;
        if (!cli_parse_step_epochs(s, e, &n, msg, sizeof msg)) {
            if (msg[0] == '\0')
                fail(s, "steps refused without a message");
            return 0;
        }
        if (n < 0 || n > MXKT_MAX_STEPS)
            fail(s, "bad step count");
        for (int32_t i = 0; i < n; i++)
            if (e[i] < 1 || e[i] > CLI_MAX_EPOCHS)
                fail(s, "step epoch out of range");
        return 1;
    }
    default: {
        mxkt_initializer init;
        mxk_status st = mxkt_initializer_parse(s, 7, &init);
        if (st != MXK_OK && (st != MXK_ERR_INVALID_ARGUMENT || mxkt_last_error()[0] == '\0'))
            fail(s, "initializer refused without INVALID_ARGUMENT and a message");
        return st == MXK_OK;
    }
    }
}

/** Runs one input; returns 1 when the value was accepted. */
static int run_one(const uint8_t *data, size_t size) {
    if (size == 0)
        return 0;
    char *s = malloc(size);
    memcpy(s, data + 1, size - 1);
    s[size - 1] = '\0';
    int ok = run_parser(data[0] % 7, s);
    free(s);
    return ok;
}

MXK_FUZZ_TARGET(run_one)

#ifdef MXK_FUZZ_STANDALONE

#include "fuzz_driver.h"

/** One valid value per parser, in parser order. */
static const char *const seed_values[] = {"100",
                                          "1e-05",
                                          "data=(32,1,28,28)",
                                          "cpu:0,cpu(1)",
                                          "acc,ce,top_k_accuracy_5",
                                          "6,9",
                                          "xavier(gaussian, in, 2)"};
/** Seed labels (file names). */
static const char *const seed_labels[] = {"uint",    "real",  "shape",      "ctx",
                                          "metrics", "steps", "initializer"};
#define N_SEEDS 7

/** Values accepted. */
static unsigned long n_ok;

/** Runs one input (the driver passes an exact-size heap copy) and counts it. */
static void drive(const uint8_t *p, size_t n) {
    n_ok += (unsigned long)run_one(p, n);
}

/** Single-byte replacements: digits, separators and sign characters. */
static uint8_t replace_byte(size_t at, int r, uint8_t orig) {
    static const char repl[] = {'0', '9', ',', '-', '(', ')', ':', 'e', ' ', '_'};
    if (at == 0)
        return (uint8_t)(orig + 7);
    return (uint8_t)repl[(at * 3 + (size_t)r) % sizeof repl];
}

/** Tokens of the format for the driver's random mutations (fuzz_mutate_tokens). */
static const char *const tokens[] = {"99999999999999999999",
                                     "2147483648",
                                     "1000001",
                                     ",",
                                     "=",
                                     "(",
                                     ")",
                                     "-",
                                     "0",
                                     "cpu:",
                                     "gpu(",
                                     "top_k_accuracy_",
                                     "nan",
                                     "1e999",
                                     ", ",
                                     "uniform(",
                                     NULL};

/** The parser target for the shared driver. */
static const fuzz_target target = {
    .run = drive,
    .seed_ext = ".opt",
    .per_byte = 10,
    .replace = replace_byte,
    .random_runs = 3000,
    .slack = 64,
    .tokens = tokens,
    .keep = 1,
    .rng_init = 0x3c6ef372fe94f82bull,
    .rng_per_seed = 1,
};

int main(int argc, char **argv) {
    fuzz_seed seeds[N_SEEDS];
    for (int k = 0; k < N_SEEDS; k++) {
        size_t n = strlen(seed_values[k]);
        uint8_t *p = malloc(n + 1);
        p[0] = (uint8_t)k;
        memcpy(p + 1, seed_values[k], n);
        if (!run_one(p, n + 1))
            fail(seed_values[k], "a valid seed was refused");
        seeds[k] = (fuzz_seed){p, n + 1, seed_labels[k]};
    }
    int rc = fuzz_main(&target, argc, argv, seeds, N_SEEDS);
    printf("fuzz_cli_parse: %lu inputs, %lu accepted, the rest refused with a message\n",
           fuzz_n_inputs, n_ok);
    return rc;
}

#endif /* MXK_FUZZ_STANDALONE */
