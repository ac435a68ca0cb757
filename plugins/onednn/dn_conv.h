/*
 * onednn plugin: Convolution and Deconvolution, declarations shared by
 * dn_conv_param.c (attributes, geometry, supports) and dn_conv.c (primitives,
 * forward, backward, registration).
 *
 * Semantics are the operators' (cpu-blas op_convolution.c; upstream MXNet
 * src/operator/nn/convolution-inl.h, deconvolution-inl.h); the mapping onto
 * oneDNN follows MXNet 1.9.1's src/operator/nn/mkldnn/mkldnn_convolution.cc and
 * mkldnn_deconvolution.cc.
 */
#ifndef MXK_ONEDNN_DN_CONV_H
#define MXK_ONEDNN_DN_CONV_H

#include "onednn.h"

/** Most spatial axes (3-D: NCDHW). */
#define DN_CV_MAX_ND 3

/**
 * A kernel's parameters, parsed from either operator's attributes (MXNet's
 * names; per-axis arrays hold `nd` values, in the order of the `kernel`
 * tuple). Owned by the host (parse_param / free_param); read only.
 */
typedef struct dn_cv_param {
    int32_t deconv; /**< 1: Deconvolution */
    int32_t nd;     /**< spatial axes: 1, 2 or 3 */
    int64_t kernel[DN_CV_MAX_ND];
    int64_t stride[DN_CV_MAX_ND];
    int64_t dilate[DN_CV_MAX_ND]; /**< MXNet's dilation (1: dense) */
    int64_t pad[DN_CV_MAX_ND];
    int64_t adj[DN_CV_MAX_ND];    /**< Deconvolution output adjustment */
    int64_t target[DN_CV_MAX_ND]; /**< Deconvolution target_shape */
    int32_t has_target;           /**< target_shape was given (non-empty, not all zero) */
    int64_t num_filter;
    int64_t num_group;
    int32_t no_bias;
    int32_t supported; /**< 0: `supports` declines whatever the shapes */
} dn_cv_param;

/**
 * oneDNN's view of one bound configuration: the logical dims of src (N, C,
 * x...), dst (N, F, o...) and weights ((G, F/G, C/G, k...) with groups, else
 * (F, C, k...); "o" is the output channels of either operator), and the
 * strides, dilations (MXNet's minus 1) and paddings (left = right = MXNet's pad,
 * or the pad derived from target_shape) of the descriptor.
 */
typedef struct dn_cv_geom {
    int src_nd, wei_nd;
    dnnl_dims_t src, dst, wei;
    dnnl_dims_t strides, dilates, pad;
} dn_cv_geom;

/** parse_param of Convolution (dn_conv_param.c). Errors: mxk_sdk_attr_*'s, out of memory. */
mxk_status dn_cv_parse_conv(const mxk_attrs *attrs, void **out, mxk_error_sink *err);

/** parse_param of Deconvolution (dn_conv_param.c). */
mxk_status dn_cv_parse_deconv(const mxk_attrs *attrs, void **out, mxk_error_sink *err);

/** free_param of both. */
void dn_cv_param_free(void *param);

/**
 * The geometry of `p` on data of shape `data` (dn_conv_param.c); 1 when the
 * configuration maps onto oneDNN (data of nd + 2 non-zero dims, groups dividing
 * both channel counts, a positive output size, Deconvolution's adj below the
 * stride and target_shape reachable, as cpu-blas's shape inference demands), 0
 * otherwise (g is then unspecified).
 */
int dn_cv_geom_of(const dn_cv_param *p, const mxk_shape *data, dn_cv_geom *g);

/** `supports` of both (dn_conv_param.c). */
int32_t dn_cv_supports(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                       uint32_t num_in);

#endif /* MXK_ONEDNN_DN_CONV_H */
