/*
 * onednn plugin: Convolution and Deconvolution attributes, their oneDNN
 * geometry and the kernels' `supports`.
 *
 * Semantics: cpu-blas op_convolution.c (upstream MXNet
 * src/operator/nn/convolution-inl.h, deconvolution-inl.h). Output sizes, with
 * dk = dilate (k - 1) + 1:
 *   Convolution    o = floor((x + 2 pad - dk) / stride) + 1
 *   Deconvolution  o = stride (x - 1) + dk - 2 pad + adj, with pad and adj from
 *                  target_shape when it is given (total = stride (x - 1) + dk -
 *                  target: pad = ceil(total / 2), adj = total % 2;
 *                  DeconvolutionParam::InferPad)
 * oneDNN takes both with padding_l = padding_r = pad, as MXNet's
 * src/operator/nn/mkldnn/mkldnn_deconvolution.cc does: its descriptor check
 * divides with the floor, so the convolution's dropped rows and the
 * deconvolution's adj rows (adj < stride) both pass it.
 * Declined (the next backend runs them, or reports the operator's error):
 * layouts other than unset/None and the channel-first one of the kernel's rank
 * (NCW, NCHW, NCDHW), tuples whose length differs from the kernel's, non-float32
 * data, empty tensors and every shape the operator itself rejects.
 */
#include "dn_conv.h"
#include "dn_util.h"

#include <string.h>

/**
 * Reads the tuple attribute `key` into v[0..nd): `dflt` everywhere when it is
 * empty; clears *ok when its length is neither 0 nor nd or a value is below
 * `min`. Errors: mxk_sdk_attr_shape's.
 */
static mxk_status cv_tuple(const mxk_attrs *attrs, const char *key, int nd, int64_t dflt,
                           int64_t min, int64_t *v, int32_t *ok, mxk_error_sink *err) {
    mxk_shape s;
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, key, &s, err));
    if (s.ndim != 0 && s.ndim != nd)
        *ok = 0;
    for (int i = 0; i < nd; i++) {
        v[i] = s.ndim == nd ? s.dims[i] : dflt;
        if (v[i] < min)
            *ok = 0;
    }
    return MXK_OK;
}

/**
 * Parses either operator's attributes (MXNet 1.9.1 ConvolutionParam /
 * DeconvolutionParam, defaults filled by the operator's schema); what oneDNN
 * cannot run is parsed as unsupported rather than refused. workspace and
 * cudnn_* are ignored. Errors: mxk_sdk_attr_*'s, dn_param_dup's.
 */
static mxk_status cv_parse(const mxk_attrs *attrs, int deconv, void **out, mxk_error_sink *err) {
    static const char *const layouts[DN_CV_MAX_ND] = {"NCW", "NCHW", "NCDHW"};
    dn_cv_param p;
    memset(&p, 0, sizeof p);
    p.deconv = deconv;
    p.supported = 1;
    mxk_shape k;
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "kernel", &k, err));
    p.nd = k.ndim >= 1 && k.ndim <= DN_CV_MAX_ND ? k.ndim : 1;
    p.supported = k.ndim == p.nd;
    MXK_SDK_CHECK(cv_tuple(attrs, "kernel", p.nd, 1, 1, p.kernel, &p.supported, err));
    MXK_SDK_CHECK(cv_tuple(attrs, "stride", p.nd, 1, 1, p.stride, &p.supported, err));
    MXK_SDK_CHECK(cv_tuple(attrs, "dilate", p.nd, 1, 1, p.dilate, &p.supported, err));
    MXK_SDK_CHECK(cv_tuple(attrs, "pad", p.nd, 0, 0, p.pad, &p.supported, err));
    if (deconv) {
        MXK_SDK_CHECK(cv_tuple(attrs, "adj", p.nd, 0, 0, p.adj, &p.supported, err));
        MXK_SDK_CHECK(cv_tuple(attrs, "target_shape", p.nd, 0, 0, p.target, &p.supported, err));
        for (int i = 0; i < p.nd; i++)
            p.has_target |= p.target[i] > 0;
    }
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "num_filter", &p.num_filter, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "num_group", &p.num_group, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "no_bias", &p.no_bias, err));
    const char *layout = mxk_sdk_attr_raw(attrs, "layout");
    if (layout != NULL && strcmp(layout, "None") != 0 && strcmp(layout, layouts[p.nd - 1]) != 0)
        p.supported = 0;
    if (p.num_filter < 1 || p.num_group < 1)
        p.supported = 0;
    return dn_param_dup(&p, sizeof p, out, err);
}

mxk_status dn_cv_parse_conv(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    return cv_parse(attrs, 0, out, err);
}

mxk_status dn_cv_parse_deconv(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    return cv_parse(attrs, 1, out, err);
}

/**
 * Output size along axis i for input size x (cpu-blas cv_out_size and
 * dc_pad_adj) and the pad oneDNN takes on both sides; 0 when the operator
 * rejects the size (kernel beyond the padded input, adj not below the stride,
 * an unreachable target_shape, a non-positive output).
 */
static int cv_axis(const dn_cv_param *p, int i, int64_t x, int64_t *out, int64_t *pad) {
    if (x > INT32_MAX || p->stride[i] > INT32_MAX || p->dilate[i] > INT32_MAX ||
        p->kernel[i] > INT32_MAX || p->pad[i] > INT32_MAX || p->target[i] > INT32_MAX)
        return 0;
    const int64_t s = p->stride[i], dk = p->dilate[i] * (p->kernel[i] - 1) + 1;
    *pad = p->pad[i];
    if (!p->deconv) {
        if (x + 2 * p->pad[i] < dk)
            return 0;
        *out = (x + 2 * p->pad[i] - dk) / s + 1;
        return 1;
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
    return (adj == 0 || adj < s) && *out > 0;
}

int dn_cv_geom_of(const dn_cv_param *p, const mxk_shape *data, dn_cv_geom *g) {
    const int nd = p->nd;
    if (data->ndim != nd + 2)
        return 0;
    for (int i = 0; i < data->ndim; i++)
        if (data->dims[i] <= 0)
            return 0;
    const int64_t C = data->dims[1], F = p->num_filter, G = p->num_group;
    if (C % G != 0 || F % G != 0)
        return 0;
    memset(g, 0, sizeof *g);
    g->src_nd = nd + 2;
    g->src[0] = g->dst[0] = data->dims[0];
    g->src[1] = C;
    g->dst[1] = F;
    /* weights: (G, O/G, I/G, k...) or (O, I, k...), O the output channels (F) */
    const int lead = G > 1 ? 1 : 0;
    g->wei_nd = nd + 2 + lead;
    g->wei[0] = G;
    g->wei[lead] = F / G;
    g->wei[lead + 1] = C / G;
    for (int i = 0; i < nd; i++) {
        int64_t o, pad;
        if (!cv_axis(p, i, data->dims[2 + i], &o, &pad))
            return 0;
        g->src[2 + i] = data->dims[2 + i];
        g->dst[2 + i] = o;
        g->wei[lead + 2 + i] = p->kernel[i];
        g->strides[i] = p->stride[i];
        g->dilates[i] = p->dilate[i] - 1;
        g->pad[i] = pad;
    }
    return 1;
}

/**
 * Accepts a supported configuration on float32 data, weight and bias whose
 * shapes are the operator's: weight (F, C/G, k...) for Convolution,
 * (C, F/G, k...) for Deconvolution (an unknown weight or bias shape is taken as
 * inferred), bias (F).
 */
int32_t dn_cv_supports(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                       uint32_t num_in) {
    const dn_cv_param *p = param;
    dn_cv_geom g;
    if (!p->supported || num_in != (p->no_bias ? 2u : 3u) || !dn_cv_geom_of(p, &in_shapes[0], &g))
        return 0;
    for (uint32_t i = 0; i < num_in; i++)
        if (in_types[i] != MXK_FLOAT32)
            return 0;
    const int64_t C = in_shapes[0].dims[1], F = p->num_filter, G = p->num_group;
    int64_t w[2 + DN_CV_MAX_ND] = {p->deconv ? C : F, p->deconv ? F / G : C / G};
    for (int i = 0; i < p->nd; i++)
        w[2 + i] = p->kernel[i];
    mxk_shape ws = mxk_sdk_shape_from(w, p->nd + 2);
    if (in_shapes[1].ndim != 0 && !mxk_sdk_shape_equal(&in_shapes[1], &ws))
        return 0;
    mxk_shape bs = mxk_sdk_shape1(F);
    return p->no_bias || in_shapes[2].ndim == 0 || mxk_sdk_shape_equal(&in_shapes[2], &bs);
}
