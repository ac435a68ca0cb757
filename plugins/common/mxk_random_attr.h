/*
 * Attributes and shapes of the random operators shared by the CPU (cpu-blas
 * op_dropout.c, op_math_sample.c) and GPU (cuda cu_ops_dropout.c, cu_ops_sample.c)
 * kernels (host code): Dropout's parameters, their parser and the shape of its
 * shared draw, the (N, K, M) sizes of a _sample_multinomial call, and _shuffle's
 * call checks and rows, so both backends read the attributes, split the data and
 * refuse a call alike.
 *
 * Semantics: MXNet src/operator/nn/dropout-inl.h (DropoutParam: p, mode, axes;
 * the draw of variational dropout has the data shape with `axes` set to 1),
 * src/operator/random/sample_multinomial_op.h (N distributions of K outcomes along
 * the last axis, M samples each) and src/operator/random/shuffle_op.cc (the rows
 * along the first axis are permuted; no AddTo).
 */
#ifndef MXK_RANDOM_ATTR_H
#define MXK_RANDOM_ATTR_H

#include <stdint.h>
#include <string.h>

#include "mxk_sdk.h"

/** Dropout's attributes. */
typedef struct mxk_dropout_param {
    double p;       /**< drop probability in [0, 1] */
    int32_t always; /**< mode == always */
    mxk_shape axes; /**< shared axes (ndim 0: none) */
} mxk_dropout_param;

/**
 * Parses Dropout's p (in [0, 1]), mode and axes into *p. Errors: the
 * mxk_sdk_attr_* readers', MXK_ERR_INVALID_ARGUMENT for p outside [0, 1].
 */
static inline mxk_status mxk_dropout_parse(const mxk_attrs *attrs, mxk_dropout_param *p,
                                           mxk_error_sink *err) {
    memset(p, 0, sizeof *p);
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "p", &p->p, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "mode", "training|always", &p->always, err));
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "axes", &p->axes, err));
    if (!(p->p >= 0.0 && p->p <= 1.0))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'p': must be in [0, 1], got %g", p->p);
    return MXK_OK;
}

/** Dropout's draw shape: data shape `d` with the shared axes set to 1. */
static inline mxk_shape mxk_dropout_draw_shape(const mxk_dropout_param *p, const mxk_shape *d) {
    mxk_shape s = *d;
    for (int32_t i = 0; i < p->axes.ndim; i++) {
        int64_t a = p->axes.dims[i] < 0 ? p->axes.dims[i] + d->ndim : p->axes.dims[i];
        if (a >= 0 && a < d->ndim)
            s.dims[a] = 1;
    }
    return s;
}

/**
 * The (n distributions, k outcomes, m samples each) of a _sample_multinomial call
 * from its data and index output shapes. MXK_ERR_SHAPE "argument 'data': no
 * outcomes (last dim 0)" for data without outcomes.
 */
static inline mxk_status mxk_multinomial_sizes(const mxk_shape *data, const mxk_shape *out,
                                               uint64_t *n, uint64_t *k, uint64_t *m,
                                               mxk_error_sink *err) {
    *k = data->ndim > 0 ? (uint64_t)data->dims[data->ndim - 1] : 0;
    if (*k == 0)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "argument 'data': no outcomes (last dim 0)");
    *n = mxk_sdk_shape_count(data) / *k;
    *m = *n ? mxk_sdk_shape_count(out) / *n : 0;
    return MXK_OK;
}

/**
 * Checks a _shuffle call with a request other than NULL: MXK_ERR_UNSUPPORTED
 * "Shuffle does not support AddTo" for ADD (as MXNet), MXK_ERR_TYPE for an output
 * whose dtype is not the data's.
 */
static inline mxk_status mxk_shuffle_check(mxk_op_req req, const mxk_tensor *x, const mxk_tensor *y,
                                           mxk_error_sink *err) {
    if (req == MXK_REQ_ADD)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED, "Shuffle does not support AddTo");
    if (x->dtype != y->dtype)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "output: expected %s, got %s",
                             mxk_sdk_dtype_name(x->dtype), mxk_sdk_dtype_name(y->dtype));
    return MXK_OK;
}

/** The rows _shuffle permutes: the first axis of `s` (1 for a scalar). */
static inline uint64_t mxk_shuffle_rows(const mxk_shape *s) {
    return s->ndim ? (uint64_t)s->dims[0] : 1;
}

#endif /* MXK_RANDOM_ATTR_H */
