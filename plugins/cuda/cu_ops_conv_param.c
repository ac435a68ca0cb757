/*
 * cuda plugin: Convolution and Deconvolution parameters (parsed by
 * plugins/common/mxk_conv_param.h, which holds the operators' output-size
 * rules), their cuDNN geometry and the kernels' `supports`.
 *
 * Semantics: cpu-blas op_convolution.c (upstream MXNet
 * src/operator/nn/convolution-inl.h, deconvolution-inl.h; the cuDNN mapping of
 * src/operator/nn/cudnn/cudnn_convolution-inl.h and cudnn_deconvolution-inl.h).
 * cuDNN takes both operators with the same pad on both sides: its output-size
 * rule divides with the floor, so the convolution's dropped rows and the
 * deconvolution's adj rows (adj < stride) both pass its descriptor check, as in
 * upstream's cudnn_deconvolution-inl.h. 1-D runs as 2-D (cuDNN's descriptors
 * have at least four dims) with a leading spatial axis of 1.
 * Declined (the operator's error, or the next backend): what mxk_conv_parse
 * marks unsupported, cudnn_off=True (MXNet's non-cuDNN GPU path is not
 * provided), non-float32 data, empty tensors, tensors of more than INT32_MAX
 * elements and every shape the operator rejects.
 */
#include "cu_blas_util.h"
#include "cu_conv.h"

#include <string.h>

/** Parses either operator's attributes (mxk_conv_parse) into a copy owned by the host. */
static mxk_status cv_parse(const mxk_attrs *attrs, int deconv, void **out, mxk_error_sink *err) {
    mxk_conv_param p;
    MXK_SDK_CHECK(mxk_conv_parse(attrs, deconv, &p, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

mxk_status cu_cv_parse_conv(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    return cv_parse(attrs, 0, out, err);
}

mxk_status cu_cv_parse_deconv(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    return cv_parse(attrs, 1, out, err);
}

/** The product of the n dims d (each below 2^31), or -1 above INT32_MAX. */
static int64_t cv_count(const int *d, int n) {
    int64_t c = 1;
    for (int i = 0; i < n; i++) {
        c *= d[i];
        if (c > INT32_MAX)
            return -1;
    }
    return c;
}

int cu_cv_geom_of(const mxk_conv_param *p, const mxk_shape *data, cu_cv_geom *g) {
    const int nd = p->nd;
    if (data->ndim != nd + 2)
        return 0;
    for (int i = 0; i < data->ndim; i++)
        if (data->dims[i] <= 0 || data->dims[i] > INT32_MAX)
            return 0;
    const int64_t C = data->dims[1], F = p->num_filter, G = p->num_group;
    if (C % G != 0 || F % G != 0)
        return 0;
    memset(g, 0, sizeof *g);
    /* 1-D runs as 2-D: a leading spatial axis of size 1, pad 0, stride 1, dilation 1 */
    const int lead = nd == 1 ? 1 : 0;
    g->nb_dims = nd + 2 + lead;
    int *x = p->deconv ? g->fs : g->img, *y = p->deconv ? g->img : g->fs;
    x[0] = y[0] = (int)data->dims[0];
    x[1] = (int)C;
    y[1] = (int)F;
    /* filter: (filter-side channels, image-side channels / G, k...) = either weight */
    g->filt[0] = g->fs[1];
    g->filt[1] = g->img[1] / (int)G;
    for (int i = 0; i < lead; i++) {
        x[2 + i] = y[2 + i] = g->filt[2 + i] = 1;
        g->stride[i] = g->dilate[i] = 1;
    }
    for (int i = 0; i < nd; i++) {
        int64_t o, pad;
        if (!mxk_conv_axis(p, i, data->dims[2 + i], &o, &pad))
            return 0;
        x[2 + lead + i] = (int)data->dims[2 + i];
        y[2 + lead + i] = (int)o;
        g->filt[2 + lead + i] = (int)p->kernel[i];
        g->pad[lead + i] = (int)pad;
        g->stride[lead + i] = (int)p->stride[i];
        g->dilate[lead + i] = (int)p->dilate[i];
    }
    g->img_count = cv_count(g->img, g->nb_dims);
    g->fs_count = cv_count(g->fs, g->nb_dims);
    g->filt_count = cv_count(g->filt, g->nb_dims);
    g->groups = (int)G;
    g->bias_channels = (int)F;
    return g->img_count > 0 && g->fs_count > 0 && g->filt_count > 0;
}

/**
 * Accepts a supported configuration on float32 data, weight and bias whose
 * shapes are the operator's: weight (F, C/G, k...) for Convolution,
 * (C, F/G, k...) for Deconvolution (an unknown weight or bias shape is taken as
 * inferred), bias (F).
 */
int32_t cu_cv_supports(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                       uint32_t num_in) {
    const mxk_conv_param *p = param;
    cu_cv_geom g;
    return p->supported && !p->cudnn_off && cu_all_f32(in_types, num_in) &&
           cu_cv_geom_of(p, &in_shapes[0], &g) && mxk_conv_inputs_ok(p, in_shapes, num_in);
}
