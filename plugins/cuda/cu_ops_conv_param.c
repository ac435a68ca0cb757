/*
 * cuda plugin: Convolution and Deconvolution attributes, their cuDNN geometry
 * and the kernels' `supports`.
 *
 * Semantics: cpu-blas op_convolution.c (upstream MXNet
 * src/operator/nn/convolution-inl.h, deconvolution-inl.h; the cuDNN mapping of
 * src/operator/nn/cudnn/cudnn_convolution-inl.h and cudnn_deconvolution-inl.h).
 * Output sizes, with dk = dilate (k - 1) + 1:
 *   Convolution    o = floor((x + 2 pad - dk) / stride) + 1
 *   Deconvolution  o = stride (x - 1) + dk - 2 pad + adj, with pad and adj from
 *                  target_shape when it is given (total = stride (x - 1) + dk -
 *                  target: pad = ceil(total / 2), adj = total % 2;
 *                  DeconvolutionParam::InferPad)
 * cuDNN takes both with the same pad on both sides: its output-size rule
 * divides with the floor, so the convolution's dropped rows and the
 * deconvolution's adj rows (adj < stride) both pass its descriptor check, as in
 * upstream's cudnn_deconvolution-inl.h.
 * Declined (the operator's error, or the next backend): cudnn_off=True (MXNet's
 * non-cuDNN GPU path is not provided), layouts other than unset/None and the
 * channel-first one of the kernel's rank (NCW, NCHW, NCDHW), tuples whose
 * length differs from the kernel's, non-float32 data, empty tensors, tensors
 * of more than INT32_MAX elements and every shape the operator rejects.
 */
#include "cu_blas_util.h"
#include "cu_conv.h"

#include <string.h>

/**
 * Reads the tuple attribute `key` into v[0..nd): `dflt` everywhere when it is
 * empty; clears *ok when its length is neither 0 nor nd or a value is below
 * `min` or above INT32_MAX. Errors: mxk_sdk_attr_shape's.
 */
static mxk_status cv_tuple(const mxk_attrs *attrs, const char *key, int nd, int64_t dflt,
                           int64_t min, int64_t *v, int32_t *ok, mxk_error_sink *err) {
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

/** cudnn_tune's value (CU_CV_TUNE_UNSET for None or absent). */
static int32_t cv_tune(const mxk_attrs *attrs) {
    const char *t = mxk_sdk_attr_raw(attrs, "cudnn_tune");
    if (t == NULL || strcmp(t, "None") == 0)
        return CU_CV_TUNE_UNSET;
    if (strcmp(t, "off") == 0)
        return CU_CV_TUNE_OFF;
    return strcmp(t, "fastest") == 0 ? CU_CV_TUNE_FASTEST : CU_CV_TUNE_LIMITED;
}

/**
 * Parses either operator's attributes (MXNet 1.9.1 ConvolutionParam /
 * DeconvolutionParam, defaults filled by the operator's schema); what cuDNN
 * cannot run here is parsed as unsupported rather than refused. Errors:
 * mxk_sdk_attr_*'s, cu_param_dup's.
 */
static mxk_status cv_parse(const mxk_attrs *attrs, int deconv, void **out, mxk_error_sink *err) {
    static const char *const layouts[CU_CV_MAX_ND] = {"NCW", "NCHW", "NCDHW"};
    cu_cv_param p;
    memset(&p, 0, sizeof p);
    p.deconv = deconv;
    mxk_shape k;
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "kernel", &k, err));
    p.nd = k.ndim >= 1 && k.ndim <= CU_CV_MAX_ND ? k.ndim : 1;
    p.supported = k.ndim == p.nd;
    MXK_SDK_CHECK(cv_tuple(attrs, "kernel", p.nd, 1, 1, p.kernel, &p.supported, err));
    MXK_SDK_CHECK(cv_tuple(attrs, "stride", p.nd, 1, 1, p.stride, &p.supported, err));
    MXK_SDK_CHECK(cv_tuple(attrs, "dilate", p.nd, 1, 1, p.dilate, &p.supported, err));
    MXK_SDK_CHECK(cv_tuple(attrs, "pad", p.nd, 0, 0, p.pad, &p.supported, err));
    if (deconv) {
        MXK_SDK_CHECK(cv_tuple(attrs, "adj", p.nd, 0, 0, p.adj, &p.supported, err));
        MXK_SDK_CHECK(cv_tuple(attrs, "target_shape", p.nd, 0, 0, p.target, &p.supported, err));
        for (int i = 0; i < p.nd; i++) {
            p.has_target |= p.target[i] > 0;
            if (p.nd == 3 && p.dilate[i] != 1) /* cpu-blas refuses it */
                p.supported = 0;
        }
    }
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "num_filter", &p.num_filter, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "num_group", &p.num_group, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "workspace", &p.workspace_mb, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "no_bias", &p.no_bias, err));
    int32_t cudnn_off = 0;
    if (mxk_sdk_attr_is_set(attrs, "cudnn_off"))
        MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "cudnn_off", &cudnn_off, err));
    p.tune = cv_tune(attrs);
    const char *layout = mxk_sdk_attr_raw(attrs, "layout");
    if (layout != NULL && strcmp(layout, "None") != 0 && strcmp(layout, layouts[p.nd - 1]) != 0)
        p.supported = 0;
    if (cudnn_off || p.num_filter < 1 || p.num_filter > INT32_MAX || p.num_group < 1 ||
        p.num_group > INT32_MAX || p.workspace_mb < 0)
        p.supported = 0;
    return cu_param_dup(&p, sizeof p, out, err);
}

mxk_status cu_cv_parse_conv(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    return cv_parse(attrs, 0, out, err);
}

mxk_status cu_cv_parse_deconv(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    return cv_parse(attrs, 1, out, err);
}

/**
 * Output size along axis i for input size x (cpu-blas cv_out_size and
 * dc_pad_adj) and the pad cuDNN takes on both sides; 0 when the operator
 * rejects the size (kernel beyond the padded input, adj not below the stride,
 * an unreachable target_shape, a non-positive output) or it exceeds INT32_MAX.
 * Every attribute is below 2^31 and x below 2^31, so nothing overflows.
 */
static int cv_axis(const cu_cv_param *p, int i, int64_t x, int64_t *out, int64_t *pad) {
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

int cu_cv_geom_of(const cu_cv_param *p, const mxk_shape *data, cu_cv_geom *g) {
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
        if (!cv_axis(p, i, data->dims[2 + i], &o, &pad))
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
    const cu_cv_param *p = param;
    cu_cv_geom g;
    if (!p->supported || num_in != (p->no_bias ? 2u : 3u) || !cu_all_f32(in_types, num_in) ||
        !cu_cv_geom_of(p, &in_shapes[0], &g))
        return 0;
    const int64_t C = in_shapes[0].dims[1], F = p->num_filter, G = p->num_group;
    int64_t w[2 + CU_CV_MAX_ND] = {p->deconv ? C : F, p->deconv ? F / G : C / G};
    for (int i = 0; i < p->nd; i++)
        w[2 + i] = p->kernel[i];
    mxk_shape ws = mxk_sdk_shape_from(w, p->nd + 2);
    if (in_shapes[1].ndim != 0 && !mxk_sdk_shape_equal(&in_shapes[1], &ws))
        return 0;
    mxk_shape bs = mxk_sdk_shape1(F);
    return p->no_bias || in_shapes[2].ndim == 0 || mxk_sdk_shape_equal(&in_shapes[2], &bs);
}
