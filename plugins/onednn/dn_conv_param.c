/*
 * onednn plugin: Convolution and Deconvolution parameters (parsed by
 * plugins/common/mxk_conv_param.h, with the operators' output-size rules),
 * their oneDNN geometry and the kernels' `supports`.
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

/** Parses either operator's attributes (mxk_conv_parse) into a copy owned by the host. */
static mxk_status cv_parse(const mxk_attrs *attrs, int deconv, void **out, mxk_error_sink *err) {
    mxk_conv_param p;
    MXK_SDK_CHECK(mxk_conv_parse(attrs, deconv, &p, err));
    return dn_param_dup(&p, sizeof p, out, err);
}

mxk_status dn_cv_parse_conv(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    return cv_parse(attrs, 0, out, err);
}

mxk_status dn_cv_parse_deconv(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    return cv_parse(attrs, 1, out, err);
}

int dn_cv_geom_of(const mxk_conv_param *p, const mxk_shape *data, dn_cv_geom *g) {
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
        if (!mxk_conv_axis(p, i, data->dims[2 + i], &o, &pad))
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
    const mxk_conv_param *p = param;
    dn_cv_geom g;
    for (uint32_t i = 0; i < num_in; i++)
        if (in_types[i] != MXK_FLOAT32)
            return 0;
    return p->supported && dn_cv_geom_of(p, &in_shapes[0], &g) &&
           mxk_conv_inputs_ok(p, in_shapes, num_in);
}
