/*
 * Element math of the normalisation operators, shared by the CPU (cpu-blas
 * op_norm_moments.c, op_norm_l2.c) and GPU (cuda cu_kern_norm.cu) kernels so both
 * compute the same formulas. Semantics: MXNet src/operator/nn/layer_norm-inl.h,
 * src/operator/instance_norm-inl.h, src/operator/nn/group_norm-inl.h and
 * src/operator/l2_normalization-inl.h.
 *
 * The data of both families is viewed as (outer, K, inner): each (o, i) is a group
 * of K elements of stride inner, normalised together. The view of a data shape,
 * with the shape errors of the operators, is computed here for both backends
 * (host code: mxk_norm_moments_view, mxk_norm_l2_view).
 */
#ifndef MXK_NORM_H
#define MXK_NORM_H

#include <stdint.h>
#include <string.h>

#include "mxk_hd.h"
#include "mxk_sdk.h"

/** The normalisation operators. */
enum mxk_norm_kind { MXK_NORM_LAYER, MXK_NORM_INSTANCE, MXK_NORM_GROUP, MXK_NORM_L2 };

/** L2Normalization's modes, in the order of its enum string "channel|instance|spatial". */
enum mxk_norm_l2_mode { MXK_NORM_L2_CHANNEL, MXK_NORM_L2_INSTANCE, MXK_NORM_L2_SPATIAL };

/** The grouping of a data shape and the shape of its statistics. */
typedef struct mxk_norm_view {
    uint64_t outer, K, inner;
    uint64_t P;     /**< gamma / beta length (LayerNorm, InstanceNorm, GroupNorm) */
    mxk_shape stat; /**< shape of each statistic: mean and std / var, or the norm */
} mxk_norm_view;

/**
 * Index of gamma / beta for element k of a group in outer row o: LayerNorm
 * (`per_k` 1) scales along the normalised axis (k); InstanceNorm and GroupNorm
 * per channel or group, o modulo the P parameters (o = example * P + p).
 */
MXK_HD uint64_t mxk_norm_param_index(int per_k, uint64_t P, uint64_t o, uint64_t k) {
    return per_k ? k : o % P;
}

/**
 * The data gradient of a moments normalisation (LayerNorm, InstanceNorm,
 * GroupNorm) for one element: inv (g - mean(g) - xh mean(g xh)), with
 * inv = 1/sqrt(var + eps), xh = (x - mean) inv and g = dy gamma, the means over
 * the element's group.
 */
MXK_HD double mxk_norm_moments_dx(double inv, double g, double mean_g, double xh, double mean_gxh) {
    return inv * (g - mean_g - xh * mean_gxh);
}

/**
 * The data gradient of L2Normalization for one element: (dy - y sum(dy y)) / norm,
 * the sum over the element's group.
 */
MXK_HD double mxk_norm_l2_dx(double dy, double y, double sum_dyy, double norm) {
    return (dy - y * sum_dyy) / norm;
}

/**
 * The view of a fully known data shape for a moments normalisation (`kind`
 * MXK_NORM_LAYER, _INSTANCE or _GROUP; `axis` LayerNorm's, `groups` GroupNorm's
 * num_groups >= 1):
 *   LayerNorm    outer = dims before axis, K = P = dims[axis], inner = dims after;
 *                statistics: data's shape with the axis set to 1.
 *   InstanceNorm (N, C, rest...): outer = N*C, K = rest, inner 1, P = C; statistics (N, C).
 *   GroupNorm    (N, C, rest...), G = groups: outer = N*G, K = C/G * rest, inner 1,
 *                P = G; statistics (N, G).
 * Errors (MXK_ERR_SHAPE): LayerNorm's axis out of range, fewer than 3 dims
 * (InstanceNorm, GroupNorm), C not divisible by num_groups.
 */
static inline mxk_status mxk_norm_moments_view(int32_t kind, int64_t axis, int64_t groups,
                                               const mxk_shape *d, mxk_norm_view *v,
                                               mxk_error_sink *err) {
    memset(v, 0, sizeof *v);
    if (kind == MXK_NORM_LAYER) {
        int64_t a = axis < 0 ? axis + d->ndim : axis;
        if (a < 0 || a >= d->ndim)
            return mxk_sdk_error(
                err, MXK_ERR_SHAPE,
                "LayerNorm: Channel axis out of range: axis=%lld for %d dimensions",
                (long long)axis, (int)d->ndim);
        v->outer = mxk_sdk_shape_prod(d, 0, (int32_t)a);
        v->K = v->P = (uint64_t)d->dims[a];
        v->inner = mxk_sdk_shape_prod(d, (int32_t)a + 1, d->ndim);
        v->stat = *d;
        v->stat.dims[a] = 1;
        return MXK_OK;
    }
    if (d->ndim < 3)
        return mxk_sdk_error(
            err, MXK_ERR_SHAPE, "%s only supports input tensors of rank >= 3, got %d",
            kind == MXK_NORM_INSTANCE ? "InstanceNorm" : "GroupNorm", (int)d->ndim);
    uint64_t N = (uint64_t)d->dims[0], C = (uint64_t)d->dims[1];
    uint64_t rest = mxk_sdk_shape_prod(d, 2, d->ndim);
    uint64_t G = kind == MXK_NORM_INSTANCE ? C : (uint64_t)groups;
    if (kind == MXK_NORM_GROUP && C % G != 0)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "GroupNorm: # of channels must be divisible by # of groups: %llu "
                             "channels, num_groups=%llu",
                             (unsigned long long)C, (unsigned long long)G);
    v->outer = N * G;
    v->K = (kind == MXK_NORM_INSTANCE ? 1 : C / G) * rest;
    v->inner = 1;
    v->P = G;
    v->stat = mxk_sdk_shape2((int64_t)N, (int64_t)G);
    return MXK_OK;
}

/**
 * The view of a fully known data shape for L2Normalization in `mode` (enum
 * mxk_norm_l2_mode); P is 0 (no parameters):
 *   instance  (N, rest...):     outer N, K = rest, inner 1;   norm (N,)
 *   channel   (N, C, rest...):  outer N, K = C, inner = rest; norm (N, 1, rest...)
 *   spatial   (N, C, rest...):  outer N*C, K = rest, inner 1; norm (N, C)
 * Errors (MXK_ERR_SHAPE): fewer than 3 dims in channel or spatial mode.
 */
static inline mxk_status mxk_norm_l2_view(int32_t mode, const mxk_shape *d, mxk_norm_view *v,
                                          mxk_error_sink *err) {
    memset(v, 0, sizeof *v);
    if (mode == MXK_NORM_L2_INSTANCE) {
        v->outer = (uint64_t)d->dims[0];
        v->K = mxk_sdk_shape_prod(d, 1, d->ndim);
        v->inner = 1;
        v->stat = mxk_sdk_shape1(d->dims[0]);
        return MXK_OK;
    }
    if (d->ndim < 3)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "L2Normalization: At least 3 dimensions required in %s mode, got %d",
                             mode == MXK_NORM_L2_CHANNEL ? "channel" : "spatial", (int)d->ndim);
    uint64_t N = (uint64_t)d->dims[0], C = (uint64_t)d->dims[1];
    uint64_t rest = mxk_sdk_shape_prod(d, 2, d->ndim);
    if (mode == MXK_NORM_L2_CHANNEL) {
        v->outer = N, v->K = C, v->inner = rest;
        v->stat = *d;
        v->stat.dims[1] = 1;
    } else {
        v->outer = N * C, v->K = rest, v->inner = 1;
        v->stat = mxk_sdk_shape2((int64_t)N, (int64_t)C);
    }
    return MXK_OK;
}

#endif /* MXK_NORM_H */
