/*
 * Attribute parsing shared by the vision operators' CPU (cpu-blas
 * op_vision_multibox.c) and GPU (cuda cu_ops_vision_multibox.c) kernels: the
 * real tuples of the SSD operators ("(0.1, 0.2)", "[1]", "0.5", "()"), which
 * MXNet reads as mxnet::Tuple<float> (src/operator/contrib/multibox_prior-inl.h
 * MultiBoxPriorParam sizes, ratios, steps, offsets; multibox_target-inl.h
 * variances, multibox_detection-inl.h variances).
 */
#ifndef MXK_VISION_ATTR_H
#define MXK_VISION_ATTR_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_sdk.h"

/** Most values of a real-tuple attribute. */
#define MXK_VIS_MAX_TUPLE 64

/**
 * Parses real-tuple attribute `key` ("(0.1, 0.2)", "[1]", "0.5", "()") into at most
 * `cap` floats; *n is the count. MXK_ERR_INVALID_ARGUMENT naming the attribute for
 * anything else or more than `cap` values.
 */
static inline mxk_status mxk_vis_attr_tuple(const mxk_attrs *attrs, const char *key, float *out,
                                            int32_t cap, int32_t *n, mxk_error_sink *err) {
    const char *raw, *p;
    MXK_SDK_CHECK(mxk_sdk_attr_string(attrs, key, &raw, err));
    p = raw;
    while (*p == ' ')
        p++;
    char close = *p == '(' ? ')' : (*p == '[' ? ']' : 0);
    if (close)
        p++;
    *n = 0;
    for (;;) {
        while (*p == ' ')
            p++;
        if (close && *p == close && p[1 + strspn(p + 1, " ")] == 0)
            return MXK_OK;
        if (!close && *p == 0 && *n > 0)
            return MXK_OK;
        char *end;
        double v = strtod(p, &end);
        if (end == p || *n >= cap || !isfinite(v))
            break;
        out[(*n)++] = (float)v;
        p = end;
        while (*p == ' ')
            p++;
        if (*p == ',')
            p++;
        else if (*p != close)
            break;
    }
    return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                         "attribute '%s': expected a tuple of at most %d finite reals, got '%s'",
                         key, (int)cap, raw);
}

/** Reads `variances` into var: exactly 4 values ("Variance size must be 4"). */
static inline mxk_status mxk_vis_attr_variances(const mxk_attrs *attrs, float var[4],
                                                mxk_error_sink *err) {
    float v[MXK_VIS_MAX_TUPLE];
    int32_t n;
    MXK_SDK_CHECK(mxk_vis_attr_tuple(attrs, "variances", v, MXK_VIS_MAX_TUPLE, &n, err));
    if (n != 4)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'variances': Variance size must be 4, got %d", (int)n);
    memcpy(var, v, 4 * sizeof *var);
    return MXK_OK;
}

#endif /* MXK_VISION_ATTR_H */
