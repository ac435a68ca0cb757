/*
 * Helpers shared by the executor tests: library set-up (cpu-blas from the build
 * tree's config dir), symbols through the public API, host arrays, comparisons.
 * Everything is static: each test program includes this header once.
 */
#ifndef MXK_EXEC_TEST_UTIL_H
#define MXK_EXEC_TEST_UTIL_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk.h"
#include "testing.h"
#include "testing_attrs.h"

#ifndef BUILD_CONFDIR
#error "BUILD_CONFDIR must name the build tree's config dir"
#endif

/** The CPU device. */
static const mxk_context et_cpu = {MXK_DEV_CPU, 0};

/** Initialises mxk with the build tree's config dir (cpu-blas). 0 on success. */
static inline int et_init(void) {
    mxk_init_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.config_dir = BUILD_CONFDIR;
    if (mxk_init(&o) != MXK_OK) {
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
        return -1;
    }
    if (mxk_op_count() == 0 || mxk_op_plugin("FullyConnected") == NULL) {
        fprintf(stderr, "cpu-blas is not loaded from %s\n", BUILD_CONFDIR);
        return -1;
    }
    return 0;
}

/** A variable symbol (NULL on error, printed). */
static inline mxk_symbol *et_var(const char *name) {
    mxk_symbol *s = NULL;
    if (mxk_symbol_variable(name, &s) != MXK_OK)
        fprintf(stderr, "variable %s: %s\n", name, mxk_get_last_error());
    return s;
}

/**
 * Applies operator `op` named `name` (NULL: automatic) with attributes "k=v;k=v"
 * (NULL: none) to `n` positional inputs; missing arguments become variables
 * "<name>_<arg>". The inputs are not freed. NULL on error (printed).
 */
static inline mxk_symbol *et_op(const char *op, const char *name, const char *attrs, int n, ...) {
    char buf[512];
    const char *keys[16], *vals[16];
    int na = mxk_t_parse_attrs(attrs, buf, sizeof buf, keys, vals, 16);
    if (na < 0) {
        fprintf(stderr, "et_op %s: malformed attributes '%s'\n", op, attrs);
        return NULL;
    }
    mxk_symbol *in[16];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n && i < 16; i++)
        in[i] = va_arg(ap, mxk_symbol *);
    va_end(ap);
    mxk_symbol *out = NULL;
    if (mxk_symbol_create(op, name, (uint32_t)na, keys, vals, (uint32_t)n, NULL, in, &out) !=
        MXK_OK)
        fprintf(stderr, "create %s: %s\n", op, mxk_get_last_error());
    return out;
}

/** A shape from dims (ndim 1..4). */
static inline mxk_shape et_shape(int ndim, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
    mxk_shape s;
    memset(&s, 0, sizeof s);
    s.ndim = ndim;
    s.dims[0] = d0;
    s.dims[1] = d1;
    s.dims[2] = d2;
    s.dims[3] = d3;
    return s;
}

/** A float32 array of `shape` with values `v` (NULL: undefined contents). */
static inline mxk_ndarray *et_array(mxk_shape shape, const float *v) {
    mxk_ndarray *a = NULL;
    if (mxk_ndarray_create(&shape, MXK_FLOAT32, et_cpu, &a) != MXK_OK) {
        fprintf(stderr, "create array: %s\n", mxk_get_last_error());
        return NULL;
    }
    if (v != NULL)
        mxk_ndarray_copy_from_host(a, v, mxk_ndarray_size(a) * sizeof(float));
    return a;
}

/** A float32 array of `shape` filled with `value`. */
static inline mxk_ndarray *et_full(mxk_shape shape, float value) {
    mxk_ndarray *a = NULL;
    if (mxk_ndarray_full(&shape, MXK_FLOAT32, et_cpu, value, &a) != MXK_OK)
        fprintf(stderr, "full: %s\n", mxk_get_last_error());
    return a;
}

/** Copies a float32 array to `out` (waits); prints errors. */
static inline void et_host(mxk_ndarray *a, float *out) {
    if (a == NULL) {
        fprintf(stderr, "et_host: NULL array\n");
        return;
    }
    if (mxk_ndarray_copy_to_host(a, out, mxk_ndarray_size(a) * sizeof(float)) != MXK_OK)
        fprintf(stderr, "copy_to_host: %s\n", mxk_get_last_error());
}

/** Checks `a` (n float32 elements) against `expect` within tol (relative + absolute). */
#define ET_CHECK_ARRAY(a, expect, n, tol)                                                          \
    do {                                                                                           \
        float got_[256] = {0};                                                                     \
        CHECK((a) != NULL && mxk_ndarray_size(a) == (uint64_t)(n));                                \
        if ((a) != NULL && mxk_ndarray_size(a) == (uint64_t)(n)) {                                 \
            et_host((a), got_);                                                                    \
            for (int i_ = 0; i_ < (int)(n); i_++)                                                  \
                CHECK_NEAR(got_[i_], (expect)[i_], (tol));                                         \
        }                                                                                          \
    } while (0)

/** Frees symbols (NULL entries allowed). */
static inline void et_free_syms(int n, ...) {
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        mxk_symbol_free(va_arg(ap, mxk_symbol *));
    va_end(ap);
}

/** Storage statistics of the CPU. */
static inline mxk_storage_stats et_stats(void) {
    mxk_storage_stats st;
    memset(&st, 0, sizeof st);
    mxk_storage_get_stats(et_cpu, &st);
    return st;
}

#endif /* MXK_EXEC_TEST_UTIL_H */
