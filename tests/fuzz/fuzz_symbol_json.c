/*
 * Fuzz target for the symbol JSON loader (kernel/graph/symbol_json.c,
 * mxk_symbol_from_json).
 *
 * Property checked on every input: loading returns MXK_OK, MXK_ERR_FORMAT,
 * MXK_ERR_NOT_FOUND (unknown operator or attribute) or MXK_ERR_UNSUPPORTED
 * (subgraphs) and never crashes; a failure leaves no symbol and a message starting
 * "symbol JSON: "; a success gives a symbol whose name lists can be taken and whose
 * saved JSON loads again and saves to the same text (save/load is a fixed point).
 *
 * Operators come from plugins: the cpu-blas plugin through the build tree's config
 * dir (FUZZ_CONFDIR) and the graph-test plugin (FUZZ_GRAPH_PLUGIN, BatchNorm,
 * TestConv, TestPool), loaded once.
 *
 * Two builds:
 * - libFuzzer (clang, -fsanitize=fuzzer, option MXK_FUZZ): LLVMFuzzerTestOneInput,
 *   with the kernel's sources compiled in and instrumented.
 * - standalone (MXK_FUZZ_STANDALONE, always built, a ctest): main() builds seed
 *   documents (the MNIST MLP, a group with multi-output and aux-state operators and
 *   odd strings, and a legacy MXNet 0.8 document),
 *   then runs every seed, every truncation of it, single-byte replacements with
 *   JSON-significant bytes, and fixed-seed random multi-byte mutations.
 *   Arguments: files or directories of extra inputs; `--write-seeds DIR` writes the
 *   seeds there (a libFuzzer seed corpus).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk.h"

/** Reports a broken property and aborts (libFuzzer saves the input). */
static void fuzz_fail(const char *what) {
    fprintf(stderr, "fuzz_symbol_json: %s (last error: %s)\n", what, mxk_get_last_error());
    abort();
}

/** Initialises the library and loads the operator plugins once. */
static void fuzz_init(void) {
    static int started;
    if (started)
        return;
    started = 1;
    if (getenv("MXK_ENGINE_TYPE") == NULL)
        setenv("MXK_ENGINE_TYPE", "NaiveEngine", 0);
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = FUZZ_CONFDIR};
    if (mxk_init(&o) != MXK_OK)
        fuzz_fail("mxk_init failed");
    if (mxk_load_plugin(FUZZ_GRAPH_PLUGIN, NULL) != MXK_OK)
        fuzz_fail("cannot load the graph-test plugin");
    if (mxk_op_count() == 0)
        fuzz_fail("no operators registered (is cpu-blas in the config dir?)");
}

/** Takes every name list of a loaded symbol (they must not fail). */
static void check_lists(const mxk_symbol *s) {
    for (int kind = 0; kind < 3; kind++) {
        uint32_t n = 0;
        char **l = NULL;
        if (mxk_symbol_list_names(s, (mxk_symbol_names)kind, &n, &l) != MXK_OK)
            fuzz_fail("list_names failed on a loaded symbol");
        mxk_string_list_free(l);
    }
    uint32_t n = 0;
    char **kv = NULL;
    if (mxk_symbol_list_attrs(s, &n, &kv) != MXK_OK)
        fuzz_fail("list_attrs failed on a loaded symbol");
    mxk_string_list_free(kv);
}

/** Runs one input (a C string); returns the loader's status. */
static mxk_status run_one(const char *text) {
    fuzz_init();
    mxk_symbol *s = (mxk_symbol *)&s;
    mxk_status st = mxk_symbol_from_json(text, &s);
    if (st != MXK_OK) {
        if (st != MXK_ERR_FORMAT && st != MXK_ERR_NOT_FOUND && st != MXK_ERR_UNSUPPORTED)
            fuzz_fail("unexpected status");
        if (s != NULL)
            fuzz_fail("symbol set on failure");
        if (strncmp(mxk_get_last_error(), "symbol JSON: ", 13) != 0)
            fuzz_fail("error without the 'symbol JSON: ' prefix");
        return st;
    }
    check_lists(s);
    char *j1 = NULL, *j2 = NULL;
    mxk_symbol *back = NULL;
    if (mxk_symbol_to_json(s, &j1) != MXK_OK)
        fuzz_fail("cannot save what was loaded");
    if (mxk_symbol_from_json(j1, &back) != MXK_OK)
        fuzz_fail("cannot load what was saved");
    if (mxk_symbol_to_json(back, &j2) != MXK_OK)
        fuzz_fail("cannot save what was reloaded");
    if (strcmp(j1, j2) != 0)
        fuzz_fail("save/load is not a fixed point");
    free(j1);
    free(j2);
    mxk_symbol_free(back);
    mxk_symbol_free(s);
    return st;
}

/** libFuzzer entry point: the input as a NUL-terminated string (cut at a NUL byte). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    run_one(text);
    free(text);
    return 0;
}

#ifdef MXK_FUZZ_STANDALONE

#include "fuzz_driver.h"

/** Most seeds. */
#define MAX_SEEDS 8

/** Composes op on one input with up to two attributes; aborts on failure. */
static mxk_symbol *op1(const char *op, const char *name, mxk_symbol *in, const char *k1,
                       const char *v1, const char *k2, const char *v2) {
    const char *keys[2] = {k1, k2}, *vals[2] = {v1, v2};
    uint32_t na = k1 == NULL ? 0 : k2 == NULL ? 1 : 2;
    mxk_symbol *out = NULL;
    if (mxk_symbol_create(op, name, na, keys, vals, 1, NULL, &in, &out) != MXK_OK)
        fuzz_fail("seed: compose failed");
    return out;
}

/** Adds a document (malloc'd, taken over) as a seed. */
static void add_text(fuzz_seed *seeds, int *n, const char *label, char *text) {
    seeds[(*n)++] = (fuzz_seed){(uint8_t *)text, strlen(text), label};
}

/** Adds the JSON of `s` as a seed and frees s. */
static void add_symbol(fuzz_seed *seeds, int *n, const char *label, mxk_symbol *s) {
    char *j = NULL;
    if (mxk_symbol_to_json(s, &j) != MXK_OK)
        fuzz_fail("seed: to_json failed");
    add_text(seeds, n, label, j);
    mxk_symbol_free(s);
}

/** Builds the seed documents (at most MAX_SEEDS); returns how many. */
static int build_seeds(fuzz_seed *seeds) {
    int n = 0;
    mxk_symbol *data = NULL;
    if (mxk_symbol_variable("data", &data) != MXK_OK)
        fuzz_fail("seed: variable failed");
    mxk_symbol *fc1 = op1("FullyConnected", "fc1", data, "num_hidden", "128", NULL, NULL);
    mxk_symbol *a1 = op1("Activation", "relu1", fc1, "act_type", "relu", NULL, NULL);
    mxk_symbol *fc2 = op1("FullyConnected", "fc2", a1, "num_hidden", "10", "no_bias", "True");
    add_symbol(seeds, &n, "mlp", op1("SoftmaxOutput", "softmax", fc2, NULL, NULL, NULL, NULL));

    mxk_symbol *img = NULL;
    mxk_symbol_variable("img \"q\" \\ \t", &img);
    mxk_symbol_set_attr(img, "shape", "(1,3,8,8)");
    mxk_symbol *bn = op1("BatchNorm", "bn", img, "output_mean_var", "True", NULL, NULL);
    mxk_symbol *conv = op1("TestConv", NULL, img, "kernel", "(3,3)", "num_filter", "4");
    mxk_symbol *pool = op1("TestPool", "pool", conv, "kernel", "(2,2)", "pool_type", "avg");
    mxk_symbol *parts[] = {pool, bn, a1};
    mxk_symbol *g = NULL;
    if (mxk_symbol_group(3, parts, &g) != MXK_OK)
        fuzz_fail("seed: group failed");
    add_symbol(seeds, &n, "group", g);
    mxk_symbol *rest[] = {data, fc1, a1, fc2, img, bn, conv, pool};
    for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++)
        mxk_symbol_free(rest[i]);

    const char *legacy =
        "{\"nodes\": [{\"op\": \"null\", \"param\": {}, \"name\": \"data\", \"inputs\": [], "
        "\"backward_source_id\": -1, \"attr\": {\"ctx_group\": \"stage1\", \"lr_mult\": "
        "\"0.2\"}}, {\"op\": \"null\", \"param\": {}, \"name\": \"fc1_weight\", \"inputs\": [], "
        "\"backward_source_id\": -1, \"attr\": {\"weight_lr_mult\": \"1.2\"}}, {\"op\": "
        "\"null\", \"param\": {}, \"name\": \"fc1_bias\", \"inputs\": [], "
        "\"backward_source_id\": -1}, {\"op\": \"FullyConnected\", \"param\": {\"no_bias\": "
        "\"False\", \"num_hidden\": \"8\"}, \"name\": \"fc1\", \"inputs\": [[0, 0], [1, 0], [2, "
        "0]], \"backward_source_id\": -1, \"attr\": {\"weight_lr_mult\": \"1.2\"}}, {\"op\": "
        "\"BatchNorm\", \"param\": {\"eps\": \"0.001\", \"fix_gamma\": \"True\"}, \"name\": "
        "\"batchnorm0\", \"inputs\": [[3, 0]], \"backward_source_id\": -1, \"attr\": "
        "{\"ctx_group\": \"stage2\"}}], \"arg_nodes\": [0, 1, 2], \"heads\": [[4, 0]]}";
    add_text(seeds, &n, "legacy", strdup(legacy));
    return n;
}

/** Counts of statuses seen. */
static unsigned long n_ok, n_format, n_not_found, n_unsupported;

/** Runs `len` bytes of p as a string (on an exact-size heap copy, so ASan sees over-reads). */
static void drive(const uint8_t *p, size_t len) {
    char *copy = malloc(len + 1);
    memcpy(copy, p, len);
    copy[len] = '\0';
    mxk_status st = run_one(copy);
    free(copy);
    if (st == MXK_OK)
        n_ok++;
    else if (st == MXK_ERR_FORMAT)
        n_format++;
    else if (st == MXK_ERR_NOT_FOUND)
        n_not_found++;
    else
        n_unsupported++;
}

/** Single-byte replacements: two JSON-significant bytes, chosen per position. */
static uint8_t replace_byte(size_t at, int r, uint8_t orig) {
    static const char repl[] = {'0', '9', '"', ',', ']', '}', '-', 'x'};
    (void)orig;
    return (uint8_t)repl[(at * 3 + (size_t)r * 5) % sizeof repl];
}

/** Random mutation: 1-3 edits among overwriting with a token, deleting a span, inserting a token.
 */
static size_t mutate_random(uint8_t *m, size_t len, size_t cap, uint64_t *rng) {
    static const char *const tokens[] = {"[",  "]",  "{",    "}",     ",",         "\"",
                                         "0",  "-1", "99",   "null",  "[0, 0]",    "\"op\"",
                                         "[]", "{}", "1e99", "\"x\"", "4294967296"};
    int edits = 1 + (int)(fuzz_next_rand(rng) % 3);
    for (int e = 0; e < edits && len > 0; e++) {
        uint64_t x = fuzz_next_rand(rng);
        size_t at = (size_t)((x >> 8) % len);
        const char *tok = tokens[(x >> 40) % (sizeof tokens / sizeof tokens[0])];
        size_t tl = strlen(tok);
        switch (x % 3) {
        case 0: /* overwrite with a token */
            if (at + tl <= len)
                memcpy(m + at, tok, tl);
            break;
        case 1: /* delete a span */
        {
            size_t span = 1 + (size_t)((x >> 20) % 8);
            if (at + span <= len) {
                memmove(m + at, m + at + span, len - at - span);
                len -= span;
            }
            break;
        }
        default: /* insert a token */
            if (len + tl < cap) {
                memmove(m + at + tl, m + at, len - at);
                memcpy(m + at, tok, tl);
                len += tl;
            }
            break;
        }
    }
    return len;
}

/** The symbol JSON target for the shared driver. */
static const fuzz_target target = {
    .run = drive,
    .seed_ext = ".json",
    .per_byte = 2,
    .replace = replace_byte,
    .random_runs = 20000,
    .slack = 64,
    .mutate = mutate_random,
    .rng_init = 0x2545F4914F6CDD1DULL,
};

int main(int argc, char **argv) {
    fuzz_init();
    fuzz_seed seeds[MAX_SEEDS];
    int n = build_seeds(seeds);
    int rc = fuzz_main(&target, argc, argv, seeds, n);
    printf("%lu inputs: %lu loaded, %lu format errors, %lu not found, %lu unsupported\n",
           fuzz_n_inputs, n_ok, n_format, n_not_found, n_unsupported);
    mxk_shutdown();
    return rc;
}

#endif /* MXK_FUZZ_STANDALONE */
