/*
 * Attribute parsers shared by the CPU (cpu-blas) and GPU (cuda) kernels of the
 * indexing operators (host C only): MXNet's optional integers (dmlc::optional<int>,
 * dmlc-core include/dmlc/optional.h: "None" = absent), e.g. slice_axis `end` and
 * topk `axis`, and tuples of them in mxnet::Tuple's text form (include/mxnet/tuple.h:
 * "(a,b)", "[a,b]", a bare "a", trailing comma), e.g. slice `begin`/`end`/`step`
 * "(0,None,-1)", and Pad's pad_width (more integers than an mxk_shape holds).
 * The operators declare these attributes MXK_ATTR_STRING. Also the position
 * dtype attribute of topk and argsort and the check that the dtype of a position
 * output holds a row's positions, with MXNet's message
 * (src/operator/tensor/ordering_op-inl.h: TopKParam, ArgSortParam).
 */
#ifndef MXK_INDEX_ATTR_H
#define MXK_INDEX_ATTR_H

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_sdk.h"

/** Parses one optional integer at *s (blanks skipped); advances *s. 1 on success. */
static inline int mxk_idx_parse_item(const char **s, int64_t *v, uint8_t *has) {
    const char *p = *s;
    while (isspace((unsigned char)*p))
        p++;
    if (strncmp(p, "None", 4) == 0) {
        *has = 0;
        *v = 0;
        *s = p + 4;
        return 1;
    }
    char *end;
    errno = 0;
    long long x = strtoll(p, &end, 10);
    if (end == p || errno != 0)
        return 0;
    *has = 1;
    *v = (int64_t)x;
    *s = end;
    return 1;
}

/**
 * Reads the optional integer attribute `key`: absent or "None" gives *has = 0;
 * otherwise *has = 1 and *value. Error: MXK_ERR_INVALID_ARGUMENT "attribute 'end':
 * expected an integer or None, got 'x'". Thread-safe.
 */
static inline mxk_status mxk_idx_attr_opt_int(const mxk_attrs *attrs, const char *key, int32_t *has,
                                              int64_t *value, mxk_error_sink *err) {
    const char *raw = mxk_sdk_attr_raw(attrs, key), *p = raw;
    uint8_t h = 0;
    *has = 0;
    *value = 0;
    if (raw == NULL)
        return MXK_OK;
    if (mxk_idx_parse_item(&p, value, &h)) {
        while (isspace((unsigned char)*p))
            p++;
        if (*p == '\0') {
            *has = h;
            return MXK_OK;
        }
    }
    return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                         "attribute '%s': expected an integer or None, got '%s'", key, raw);
}

/**
 * Reads the tuple attribute `key` of optional integers ("(1,None,-2)", "[0]", "()",
 * "3") into values[0..*n) with has[i] = 0 for "None" entries; absent gives *n = 0.
 * At most MXK_MAX_NDIM entries. Errors (MXK_ERR_INVALID_ARGUMENT): "attribute
 * 'begin': expected a tuple of integers or None, got 'x'"; "attribute 'begin': more
 * than 8 entries (Slicing axis exceeds data dimensions)". Thread-safe.
 */
static inline mxk_status mxk_idx_attr_opt_tuple(const mxk_attrs *attrs, const char *key, int32_t *n,
                                                int64_t *values, uint8_t *has,
                                                mxk_error_sink *err) {
    const char *raw = mxk_sdk_attr_raw(attrs, key), *p = raw;
    *n = 0;
    if (raw == NULL)
        return MXK_OK;
    while (isspace((unsigned char)*p))
        p++;
    char close = *p == '(' ? ')' : *p == '[' ? ']' : '\0';
    if (close != '\0')
        p++;
    for (;;) {
        while (isspace((unsigned char)*p))
            p++;
        if (close != '\0' && *p == close) {
            p++;
            break;
        }
        if (close == '\0' && *p == '\0' && *n > 0)
            break;
        if (*n >= MXK_MAX_NDIM)
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "attribute '%s': more than %d entries (Slicing axis exceeds data "
                                 "dimensions)",
                                 key, MXK_MAX_NDIM);
        if (!mxk_idx_parse_item(&p, &values[*n], &has[*n]))
            goto bad;
        (*n)++;
        while (isspace((unsigned char)*p))
            p++;
        if (*p == ',')
            p++;
        else if (*p != close)
            goto bad;
    }
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '\0')
        return MXK_OK;
bad:
    return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                         "attribute '%s': expected a tuple of integers or None, got '%s'", key,
                         raw);
}

/**
 * Parses `raw`, the attribute `key`, a tuple of at most `max` integers >= 0
 * ("(0,0,1,1)", "[0, 0, 1, 1]", bare "1, 2"), into values[0..*n): Pad's pad_width.
 * Errors (MXK_ERR_INVALID_ARGUMENT): "attribute 'pad_width': expected at most 10
 * integers >= 0, got 'x'"; "... expected a tuple of integers, got 'x'".
 */
static inline mxk_status mxk_idx_attr_widths(const char *key, const char *raw, int32_t max,
                                             int32_t *n, int64_t *values, mxk_error_sink *err) {
    const char *s = raw;
    char close = 0;
    while (*s == ' ')
        s++;
    if (*s == '(' || *s == '[')
        close = *s++ == '(' ? ')' : ']';
    for (*n = 0;;) {
        while (*s == ' ')
            s++;
        if (*s == close || (*s == '\0' && !close))
            break;
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s || v < 0 || *n == max)
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "attribute '%s': expected at most %d integers >= 0, got '%s'", key,
                                 (int)max, raw);
        values[(*n)++] = v;
        for (s = end; *s == ' '; s++) {
        }
        if (*s == ',')
            s++;
    }
    if (close && (*s != close || s[1] != '\0'))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute '%s': expected a tuple of integers, got '%s'", key, raw);
    return MXK_OK;
}

/** Position dtypes of topk and argsort (their `dtype` attribute), in MXNet's enum order. */
#define MXK_IDX_DTYPES "uint8|int32|int64|float16|float32|float64"

/** Reads the `dtype` attribute (MXK_IDX_DTYPES) of topk or argsort as a dtype code. */
static inline mxk_status mxk_idx_attr_dtype(const mxk_attrs *attrs, int32_t *dtype,
                                            mxk_error_sink *err) {
    static const int32_t codes[] = {MXK_UINT8,   MXK_INT32,   MXK_INT64,
                                    MXK_FLOAT16, MXK_FLOAT32, MXK_FLOAT64};
    int32_t i = 0;
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "dtype", MXK_IDX_DTYPES, &i, err));
    *dtype = codes[i];
    return MXK_OK;
}

/** Largest position an index dtype holds exactly (MaxIntegerValue, mxnet/common/utils.h). */
static inline double mxk_idx_dtype_max(int32_t dtype) {
    switch (dtype) {
    case MXK_UINT8:
        return 255.0;
    case MXK_INT32:
        return 2147483647.0;
    case MXK_FLOAT16:
        return 2048.0;
    case MXK_FLOAT32:
        return 16777216.0;
    default: /* int64, float64 */
        return 9007199254740992.0;
    }
}

/**
 * Refuses an index output of `dtype` that cannot hold n positions.
 * MXK_ERR_INVALID_ARGUMENT with MXNet's message.
 */
static inline mxk_status mxk_idx_check_positions(int32_t dtype, uint64_t n, mxk_error_sink *err) {
    if ((double)n > mxk_idx_dtype_max(dtype))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "'IDType' does not have a sufficient precision to represent the "
                             "indices of the input array. The total element_num is %llu, but "
                             "the selected index_t (%s) can only represent %.0f elements",
                             (unsigned long long)n, mxk_sdk_dtype_name(dtype),
                             mxk_idx_dtype_max(dtype));
    return MXK_OK;
}

#endif /* MXK_INDEX_ATTR_H */
