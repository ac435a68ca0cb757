/*
 * mxk SDK: attribute and option access with the attribute's name in every message.
 *
 * Header-only, depends on abi/ and mxk_sdk_host.h (the host table must be set).
 * Operator attributes reach parse_param validated against the schema with
 * defaults filled in (abi/mxk_abi_op.h), so these getters mostly fail for an
 * attribute the schema marks optional without default, or for values that are
 * well-typed but out of range. Plugin options (mxk_plugin_init_args.options) are
 * not validated by the kernel: read them with mxk_sdk_option_int and friends.
 *
 * Every returned string points into the kernel-owned attrs object and is valid as
 * long as it is (parse_param: during the call; copy what you keep).
 */
#ifndef MXK_SDK_ATTR_H
#define MXK_SDK_ATTR_H

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_sdk_host.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The raw string of attribute `key`, or NULL when absent (or before mxk_sdk_set_host). */
static inline const char *mxk_sdk_attr_raw(const mxk_attrs *attrs, const char *key) {
    const mxk_host_api *host = mxk_sdk_host();
    if (host == NULL || attrs == NULL)
        return NULL;
    return host->attr_get(attrs, key);
}

/** 1 when attribute `key` is present (given, or filled from a default). */
static inline int mxk_sdk_attr_is_set(const mxk_attrs *attrs, const char *key) {
    return mxk_sdk_attr_raw(attrs, key) != NULL;
}

/*
 * Rewrites a failed typed get into "attribute '<key>': <problem> (value '<raw>')";
 * a NULL key keeps the host's message ("attribute getter: the attribute name is NULL").
 */
static inline mxk_status mxk_sdk_attr_fail_(const mxk_attrs *attrs, const char *key, mxk_status st,
                                            const char *expected, mxk_error_sink *err) {
    if (key == NULL)
        return st;
    const char *raw = mxk_sdk_attr_raw(attrs, key);
    if (raw == NULL)
        return mxk_sdk_error(err, st, "attribute '%s': required but not given", key);
    return mxk_sdk_error(err, st, "attribute '%s': expected %s, got '%s'", key, expected, raw);
}

/**
 * Integer attribute `key` into *value. Errors (message names the attribute):
 * MXK_ERR_NOT_FOUND when absent, MXK_ERR_INVALID_ARGUMENT when not an integer.
 */
static inline mxk_status mxk_sdk_attr_int(const mxk_attrs *attrs, const char *key, int64_t *value,
                                          mxk_error_sink *err) {
    mxk_status st = mxk_sdk_host()->attr_get_int(attrs, key, value, err);
    return st == MXK_OK ? MXK_OK : mxk_sdk_attr_fail_(attrs, key, st, "an integer", err);
}

/**
 * Integer attribute `key` in [lo, hi] into *value. Errors as mxk_sdk_attr_int,
 * plus MXK_ERR_INVALID_ARGUMENT "attribute 'num_hidden': must be in [1, ...], got 0".
 */
static inline mxk_status mxk_sdk_attr_int_range(const mxk_attrs *attrs, const char *key, int64_t lo,
                                                int64_t hi, int64_t *value, mxk_error_sink *err) {
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, key, value, err));
    if (*value < lo || *value > hi)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute '%s': must be in [%lld, %lld], got %lld", key,
                             (long long)lo, (long long)hi, (long long)*value);
    return MXK_OK;
}

/** Real attribute `key` into *value; errors as mxk_sdk_attr_int ("a real number"). */
static inline mxk_status mxk_sdk_attr_float(const mxk_attrs *attrs, const char *key, double *value,
                                            mxk_error_sink *err) {
    mxk_status st = mxk_sdk_host()->attr_get_float(attrs, key, value, err);
    return st == MXK_OK ? MXK_OK : mxk_sdk_attr_fail_(attrs, key, st, "a real number", err);
}

/**
 * Real attribute `key` that must be finite (a scale, a slope, a norm constant:
 * MXNet's dmlc parameters parse "nan" and "inf" and then compute with them).
 * Errors as mxk_sdk_attr_float, plus MXK_ERR_INVALID_ARGUMENT
 * "attribute 'alpha': must be finite, got 'nan'" (the raw value quoted). Thread-safe.
 */
static inline mxk_status mxk_sdk_attr_float_finite(const mxk_attrs *attrs, const char *key,
                                                   double *value, mxk_error_sink *err) {
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, key, value, err));
    if (!isfinite(*value))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute '%s': must be finite, got '%s'", key,
                             mxk_sdk_attr_raw(attrs, key));
    return MXK_OK;
}

/** Boolean attribute `key` into *value (0 or 1); errors as mxk_sdk_attr_int ("a boolean"). */
static inline mxk_status mxk_sdk_attr_bool(const mxk_attrs *attrs, const char *key, int32_t *value,
                                           mxk_error_sink *err) {
    mxk_status st = mxk_sdk_host()->attr_get_bool(attrs, key, value, err);
    return st == MXK_OK ? MXK_OK : mxk_sdk_attr_fail_(attrs, key, st, "a boolean", err);
}

/**
 * Tuple attribute `key` ("(a,b)", "[a]", "a", "()") into *value (ndim = tuple
 * length, 0 for "()"; values may be negative); errors as mxk_sdk_attr_int.
 */
static inline mxk_status mxk_sdk_attr_shape(const mxk_attrs *attrs, const char *key,
                                            mxk_shape *value, mxk_error_sink *err) {
    mxk_status st = mxk_sdk_host()->attr_get_shape(attrs, key, value, err);
    return st == MXK_OK ? MXK_OK : mxk_sdk_attr_fail_(attrs, key, st, "a tuple of integers", err);
}

/**
 * String attribute `key` into *value (points into attrs). MXK_ERR_NOT_FOUND when
 * absent, with the attribute named.
 */
static inline mxk_status mxk_sdk_attr_string(const mxk_attrs *attrs, const char *key,
                                             const char **value, mxk_error_sink *err) {
    *value = mxk_sdk_attr_raw(attrs, key);
    if (*value == NULL)
        return mxk_sdk_error(err, MXK_ERR_NOT_FOUND, "attribute '%s': required but not given", key);
    return MXK_OK;
}

/**
 * Enumerated attribute `key`: finds its value among the '|'-separated words of
 * `values` (e.g. "relu|sigmoid|tanh") and stores the word's 0-based position in
 * *index. Errors: MXK_ERR_NOT_FOUND when absent; MXK_ERR_INVALID_ARGUMENT
 * "attribute 'act_type': expected one of relu|sigmoid|tanh, got 'foo'".
 */
static inline mxk_status mxk_sdk_attr_enum(const mxk_attrs *attrs, const char *key,
                                           const char *values, int32_t *index,
                                           mxk_error_sink *err) {
    const char *v;
    MXK_SDK_CHECK(mxk_sdk_attr_string(attrs, key, &v, err));
    size_t vlen = strlen(v);
    int32_t i = 0;
    for (const char *p = values;; i++) {
        const char *bar = strchr(p, '|');
        size_t wlen = bar ? (size_t)(bar - p) : strlen(p);
        if (wlen == vlen && strncmp(p, v, vlen) == 0) {
            *index = i;
            return MXK_OK;
        }
        if (bar == NULL)
            break;
        p = bar + 1;
    }
    return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                         "attribute '%s': expected one of %s, got '%s'", key, values, v);
}

/**
 * Parses a whole string as a decimal integer (leading/trailing blanks allowed).
 * Returns 1 and writes *value on success, 0 for anything else (empty, junk, range).
 */
static inline int mxk_sdk_parse_int64(const char *s, int64_t *value) {
    char *end;
    if (s == NULL)
        return 0;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || errno != 0)
        return 0;
    while (*end == ' ' || *end == '\t')
        end++;
    if (*end != '\0')
        return 0;
    *value = (int64_t)v;
    return 1;
}

/**
 * Integer plugin option `key` from the (unvalidated) options of the plugin's conf
 * file: `dflt` when `options` is NULL or the key is absent; otherwise it must be an
 * integer in [lo, hi], else MXK_ERR_INVALID_ARGUMENT
 * "option 'num_threads': expected an integer in [0, 4096], got 'abc'".
 */
static inline mxk_status mxk_sdk_option_int(const mxk_attrs *options, const char *key, int64_t dflt,
                                            int64_t lo, int64_t hi, int64_t *value,
                                            mxk_error_sink *err) {
    const char *raw = mxk_sdk_attr_raw(options, key);
    if (raw == NULL) {
        *value = dflt;
        return MXK_OK;
    }
    int64_t v;
    if (!mxk_sdk_parse_int64(raw, &v) || v < lo || v > hi)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "option '%s': expected an integer in [%lld, %lld], got '%s'", key,
                             (long long)lo, (long long)hi, raw);
    *value = v;
    return MXK_OK;
}

#ifdef __cplusplus
}
#endif

#endif /* MXK_SDK_ATTR_H */
