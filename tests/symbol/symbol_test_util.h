/*
 * Helpers of the symbol tests: library set-up (cpu-blas from the build tree's
 * config dir, the graph-test plugin by path), name-list checks, lookup of an
 * internal node by name, and the networks the tests compose (the MNIST MLP of
 * MXNet.jl's and MXNet's examples).
 */
#ifndef MXK_SYMBOL_TEST_UTIL_H
#define MXK_SYMBOL_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk.h"
#include "testing.h"

/**
 * Initialises the library with the build tree's config dir (cpu-blas) and loads
 * the graph-test plugin. Returns 0, or 1 after printing why.
 */
static inline int st_setup(void) {
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = BUILD_CONFDIR};
    if (mxk_init(&o) != MXK_OK) {
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
        return 1;
    }
    if (mxk_load_plugin(GRAPH_TEST_PLUGIN, NULL) != MXK_OK) {
        fprintf(stderr, "loading %s: %s\n", GRAPH_TEST_PLUGIN, mxk_get_last_error());
        return 1;
    }
    return 0;
}

/**
 * Checks that the `kind` names of `sym` are exactly the NULL-terminated `want`;
 * prints both lists on a mismatch. Returns 1 when equal.
 */
static inline int st_names_equal(const mxk_symbol *sym, mxk_symbol_names kind,
                                 const char *const *want, const char *file, int line) {
    uint32_t n = 0;
    char **got = NULL;
    if (mxk_symbol_list_names(sym, kind, &n, &got) != MXK_OK) {
        fprintf(stderr, "%s:%d: list_names: %s\n", file, line, mxk_get_last_error());
        return 0;
    }
    uint32_t nw = 0;
    while (want[nw] != NULL)
        nw++;
    int ok = n == nw && got[n] == NULL;
    for (uint32_t i = 0; ok && i < n; i++)
        ok = strcmp(got[i], want[i]) == 0;
    if (!ok) {
        fprintf(stderr, "%s:%d: names (kind %d) differ\n  got: ", file, line, (int)kind);
        for (uint32_t i = 0; i < n; i++)
            fprintf(stderr, "%s ", got[i]);
        fprintf(stderr, "\n  want:");
        for (uint32_t i = 0; i < nw; i++)
            fprintf(stderr, " %s", want[i]);
        fprintf(stderr, "\n");
    }
    mxk_string_list_free(got);
    return ok;
}

/** CHECK that the names of kind `kind` are the given strings. */
#define CHECK_NAMES(sym, kind, ...)                                                                \
    do {                                                                                           \
        const char *const want_[] = {__VA_ARGS__, NULL};                                           \
        CHECK(st_names_equal((sym), (kind), want_, __FILE__, __LINE__));                           \
    } while (0)

/**
 * The internal output of `sym` named `name` ("fc1_output", or a variable's name)
 * as a new symbol, or NULL.
 */
static inline mxk_symbol *st_internal(const mxk_symbol *sym, const char *name) {
    mxk_symbol *all = NULL, *one = NULL;
    if (mxk_symbol_get_internals(sym, &all) != MXK_OK)
        return NULL;
    uint32_t n = 0;
    char **names = NULL;
    if (mxk_symbol_list_names(all, MXK_SYMBOL_OUTPUTS, &n, &names) == MXK_OK) {
        for (uint32_t i = 0; i < n && one == NULL; i++)
            if (strcmp(names[i], name) == 0)
                mxk_symbol_get_output(all, i, &one);
        mxk_string_list_free(names);
    }
    mxk_symbol_free(all);
    return one;
}

/** Attribute `key` of the internal output `name` of sym, copied into buf ("" when absent). */
static inline const char *st_internal_attr(const mxk_symbol *sym, const char *name, const char *key,
                                           char *buf, size_t size) {
    mxk_symbol *s = st_internal(sym, name);
    const char *v = s ? mxk_symbol_get_attr(s, key) : NULL;
    snprintf(buf, size, "%s", v ? v : "");
    mxk_symbol_free(s);
    return buf;
}

/** Composes op with one positional input and up to 2 attributes (NULL key: fewer). */
static inline mxk_symbol *st_op(const char *op, const char *name, mxk_symbol *in, const char *k1,
                                const char *v1, const char *k2, const char *v2) {
    const char *keys[2] = {k1, k2}, *vals[2] = {v1, v2};
    uint32_t na = k1 == NULL ? 0 : k2 == NULL ? 1 : 2;
    mxk_symbol *out = NULL;
    mxk_status st = mxk_symbol_create(op, name, na, keys, vals, in ? 1 : 0, NULL, &in, &out);
    if (st != MXK_OK)
        fprintf(stderr, "create %s: %s\n", op, mxk_get_last_error());
    return out;
}

/**
 * The MNIST MLP of MXNet's examples: data -> FC(fc1, 128) -> relu1 -> FC(fc2, 64)
 * -> relu2 -> FC(fc3, 10) -> SoftmaxOutput(softmax). `h1`, `h2` are the hidden
 * sizes ("128", "64").
 */
static inline mxk_symbol *st_mlp(const char *h1, const char *h2) {
    mxk_symbol *data = NULL;
    if (mxk_symbol_variable("data", &data) != MXK_OK)
        return NULL;
    mxk_symbol *fc1 = st_op("FullyConnected", "fc1", data, "num_hidden", h1, NULL, NULL);
    mxk_symbol *a1 = st_op("Activation", "relu1", fc1, "act_type", "relu", NULL, NULL);
    mxk_symbol *fc2 = st_op("FullyConnected", "fc2", a1, "num_hidden", h2, NULL, NULL);
    mxk_symbol *a2 = st_op("Activation", "relu2", fc2, "act_type", "relu", NULL, NULL);
    mxk_symbol *fc3 = st_op("FullyConnected", "fc3", a2, "num_hidden", "10", NULL, NULL);
    mxk_symbol *sm = st_op("SoftmaxOutput", "softmax", fc3, NULL, NULL, NULL, NULL);
    mxk_symbol *parts[] = {data, fc1, a1, fc2, a2, fc3};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        mxk_symbol_free(parts[i]);
    return sm;
}

/** JSON of a symbol (malloc'd; NULL after printing the error). */
static inline char *st_json(const mxk_symbol *s) {
    char *j = NULL;
    if (mxk_symbol_to_json(s, &j) != MXK_OK)
        fprintf(stderr, "to_json: %s\n", mxk_get_last_error());
    return j;
}

/** CHECK that status `st` is `code` and the last error equals `msg` exactly. */
#define CHECK_ERROR(st, code, msg)                                                                 \
    do {                                                                                           \
        CHECK_EQ_INT((st), (code));                                                                \
        if (strcmp(mxk_get_last_error(), (msg)) != 0) {                                            \
            fprintf(stderr, "%s:%d: error message differs\n  got:  %s\n  want: %s\n", __FILE__,    \
                    __LINE__, mxk_get_last_error(), (msg));                                        \
            mxk_t_failed_checks++;                                                                 \
        }                                                                                          \
    } while (0)

#endif /* MXK_SYMBOL_TEST_UTIL_H */
