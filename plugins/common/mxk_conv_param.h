/*
 * Convolution and Deconvolution attributes as the accelerated backends read
 * them (kernels for the operators cpu-blas defines, parse_param of ABI 1.2):
 * the parameters, their parser and the per-axis output-size rule, shared so
 * that every such backend agrees with cpu-blas's shape inference (cpu-blas
 * op_convolution.c, cv_out_size and dc_pad_adj) in one place.
 *
 * Semantics: MXNet src/operator/nn/convolution-inl.h (ConvolutionParam) and
 * deconvolution-inl.h (DeconvolutionParam, InferPad). With dk = dilate (k - 1) + 1:
 *   Convolution    o = floor((x + 2 pad - dk) / stride) + 1
 *   Deconvolution  o = stride (x - 1) + dk - 2 pad + adj, with pad and adj from
 *                  target_shape when it is given (total = stride (x - 1) + dk -
 *                  target: pad = ceil(total / 2), adj = total % 2)
 * Unlike cpu-blas's parser, which refuses what the operator rejects, this one
 * marks what a backend cannot run as unsupported (`supported` = 0), so that its
 * `supports` declines and the next backend runs (or reports the operator's
 * error): a kernel of another rank than 1..3, tuple lengths other than the
 * kernel's, values below their minimum or above INT32_MAX, a layout other than
 * unset/None and the channel-first one of the kernel's rank, 3-D deconvolution
 * with dilation. cudnn_off is read into its own field, for the backend it concerns.
 */
#ifndef MXK_CONV_PARAM_H
#define MXK_CONV_PARAM_H

#include <stdint.h>
#include <string.h>

#include "mxk_sdk.h"

/** Most spatial axes (3-D: NCDHW). */
#define MXK_CONV_MAX_ND 3

/** cudnn_tune values (MXNet's conv::ConvolutionOpCudnnTune); UNSET: None or absent. */
enum mxk_conv_tune {
    MXK_CONV_TUNE_UNSET = -1,
    MXK_CONV_TUNE_OFF = 0,
    MXK_CONV_TUNE_LIMITED = 1,
    MXK_CONV_TUNE_FASTEST = 2
};

/**
 * Either operator's parameters (MXNet's names; per-axis arrays hold `nd` values
 * in the order of the `kernel` tuple).
 */
typedef struct mxk_conv_param {
    int32_t deconv; /**< 1: Deconvolution */
    int32_t nd;     /**< spatial axes: 1, 2 or 3 */
    int64_t kernel[MXK_CONV_MAX_ND];
    int64_t stride[MXK_CONV_MAX_ND];
    int64_t dilate[MXK_CONV_MAX_ND]; /**< MXNet's dilation (1: dense) */
    int64_t pad[MXK_CONV_MAX_ND];
    int64_t adj[MXK_CONV_MAX_ND];    /**< Deconvolution output adjustment */
    int64_t target[MXK_CONV_MAX_ND]; /**< Deconvolution target_shape */
    int32_t has_target;              /**< target_shape has a non-zero value */
    int64_t num_filter;
    int64_t num_group;
    int64_t workspace_mb; /**< the `workspace` attribute (MB) */
    int32_t no_bias;
    int32_t tune;      /**< enum mxk_conv_tune */
    int32_t cudnn_off; /**< cudnn_off=True: do not use cuDNN */
    int32_t supported; /**< 0: the backend's `supports` declines whatever the shapes */
} mxk_conv_param;

/**
 * Reads the tuple attribute `key` into v[0..nd): `dflt` everywhere when it is
 * empty; clears *ok when its length is neither 0 nor nd or a value is below
 * `min` or above INT32_MAX. Errors: mxk_sdk_attr_shape's.
 */
static inline mxk_status mxk_conv_tuple(const mxk_attrs *attrs, const char *key, int nd,
                                        int64_t dflt, int64_t min, int64_t *v, int32_t *ok,
                                        mxk_error_sink *err) {
    mxk_shape s;
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, key, &s, err));
    if (s.ndim != 0 && s.ndim != nd)
        *ok = 0;
    for (int i = 0; i < nd; i++) {
        v[i] = s.ndim == nd ? s.dims[i] : dflt;
        if (v[i] < min || v[i] > INT32_MAX)
            *ok = 0;
    }
    return MXK_OK;
}

/** cudnn_tune's value (MXK_CONV_TUNE_UNSET for None or absent). */
static inline int32_t mxk_conv_tune_of(const mxk_attrs *attrs) {
    const char *t = mxk_sdk_attr_raw(attrs, "cudnn_tune");
    if (t == NULL || strcmp(t, "None") == 0)
        return MXK_CONV_TUNE_UNSET;
    if (strcmp(t, "off") == 0)
        return MXK_CONV_TUNE_OFF;
    return strcmp(t, "fastest") == 0 ? MXK_CONV_TUNE_FASTEST : MXK_CONV_TUNE_LIMITED;
}

/**
 * Parses either operator's attributes (MXNet 1.9.1 ConvolutionParam /
 * DeconvolutionParam, defaults filled by the operator's schema) into *p; what
 * a backend cannot run is parsed as unsupported (see the file comment).
 * Errors: mxk_sdk_attr_*'s.
 */
static inline mxk_status mxk_conv_parse(const mxk_attrs *attrs, int deconv, mxk_conv_param *p,
                                        mxk_error_sink *err) {
    static const char *const layouts[MXK_CONV_MAX_ND] = {"NCW", "NCHW", "NCDHW"};
    memset(p, 0, sizeof *p);
    p->deconv = deconv;
    mxk_shape k;
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "kernel", &k, err));
    p->nd = k.ndim >= 1 && k.ndim <= MXK_CONV_MAX_ND ? k.ndim : 1;
    p->supported = k.ndim == p->nd;
    MXK_SDK_CHECK(mxk_conv_tuple(attrs, "kernel", p->nd, 1, 1, p->kernel, &p->supported, err));
    MXK_SDK_CHECK(mxk_conv_tuple(attrs, "stride", p->nd, 1, 1, p->stride, &p->supported, err));
    MXK_SDK_CHECK(mxk_conv_tuple(attrs, "dilate", p->nd, 1, 1, p->dilate, &p->supported, err));
    MXK_SDK_CHECK(mxk_conv_tuple(attrs, "pad", p->nd, 0, 0, p->pad, &p->supported, err));
    if (deconv) {
        MXK_SDK_CHECK(mxk_conv_tuple(attrs, "adj", p->nd, 0, 0, p->adj, &p->supported, err));
        MXK_SDK_CHECK(
            mxk_conv_tuple(attrs, "target_shape", p->nd, 0, 0, p->target, &p->supported, err));
        for (int i = 0; i < p->nd; i++) {
            p->has_target |= p->target[i] > 0;
            if (p->nd == 3 && p->dilate[i] != 1) /* the operator refuses it */
                p->supported = 0;
        }
    }
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "num_filter", &p->num_filter, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "num_group", &p->num_group, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "workspace", &p->workspace_mb, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "no_bias", &p->no_bias, err));
    if (mxk_sdk_attr_is_set(attrs, "cudnn_off"))
        MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "cudnn_off", &p->cudnn_off, err));
    p->tune = mxk_conv_tune_of(attrs);
    const char *layout = mxk_sdk_attr_raw(attrs, "layout");
    if (layout != NULL && strcmp(layout, "None") != 0 && strcmp(layout, layouts[p->nd - 1]) != 0)
        p->supported = 0;
    if (p->num_filter < 1 || p->num_filter > INT32_MAX || p->num_group < 1 ||
        p->num_group > INT32_MAX || p->workspace_mb < 0)
        p->supported = 0;
    return MXK_OK;
}

/**
 * Output size along axis i for input size 1 <= x <= INT32_MAX, and the pad to
 * take on both sides (the attribute's, or Deconvolution's from target_shape);
 * 0 when the operator rejects the size (kernel beyond the padded input, adj not
 * below the stride, an unreachable target_shape, a non-positive output) or the
 * size or pad exceeds INT32_MAX. Attributes below 2^31 keep every step far from
 * overflow.
 */
static inline int mxk_conv_axis(const mxk_conv_param *p, int i, int64_t x, int64_t *out,
                                int64_t *pad) {
    const int64_t s = p->stride[i], dk = p->dilate[i] * (p->kernel[i] - 1) + 1;
    *pad = p->pad[i];
    if (!p->deconv) {
        if (x + 2 * p->pad[i] < dk)
            return 0;
        *out = (x + 2 * p->pad[i] - dk) / s + 1;
        return *out <= INT32_MAX;
    }
    int64_t adj = p->adj[i];
    if (p->has_target) {
        int64_t total = s * (x - 1) + dk - p->target[i];
        if (p->target[i] <= 0 || total < 0)
            return 0;
        adj = total % 2;
        *pad = (total + 1) / 2;
    }
    *out = s * (x - 1) + dk - 2 * *pad + adj;
    return (adj == 0 || adj < s) && *out > 0 && *out <= INT32_MAX && *pad <= INT32_MAX;
}

/**
 * 1 when the inputs of a kernel call match the operator's: `num_in` is 2 without
 * bias, else 3; the weight is (F, C/G, k...) for Convolution and (C, F/G, k...)
 * for Deconvolution, with C = in_shapes[0].dims[1]; the bias is (F). An unknown
 * (ndim 0) weight or bias shape is taken as inferred.
 */
static inline int mxk_conv_inputs_ok(const mxk_conv_param *p, const mxk_shape *in_shapes,
                                     uint32_t num_in) {
    if (num_in != (p->no_bias ? 2u : 3u) || in_shapes[0].ndim < 2)
        return 0;
    const int64_t C = in_shapes[0].dims[1], F = p->num_filter, G = p->num_group;
    int64_t w[2 + MXK_CONV_MAX_ND] = {p->deconv ? C : F, p->deconv ? F / G : C / G};
    for (int i = 0; i < p->nd; i++)
        w[2 + i] = p->kernel[i];
    mxk_shape ws = mxk_sdk_shape_from(w, p->nd + 2);
    if (in_shapes[1].ndim != 0 && !mxk_sdk_shape_equal(&in_shapes[1], &ws))
        return 0;
    mxk_shape bs = mxk_sdk_shape1(F);
    return p->no_bias || in_shapes[2].ndim == 0 || mxk_sdk_shape_equal(&in_shapes[2], &bs);
}

#endif /* MXK_CONV_PARAM_H */
