/*
 * cpu-blas plugin: Convolution and Deconvolution (1-D, 2-D and 3-D; NCW, NCHW,
 * NCDHW).
 *
 * Semantics: MXNet src/operator/nn/convolution-inl.h, convolution.cc,
 * deconvolution-inl.h, deconvolution.cc. With nd spatial axes (the length of
 * `kernel`):
 *   Convolution:   data (N, C, x...), weight (F, C/G, k...), bias (F,);
 *                  output (N, F, o...), o = floor((x + 2p - d(k-1) - 1)/s) + 1.
 *   Deconvolution: data (N, C, x...), weight (C, F/G, k...), bias (F,) (no_bias
 *                  defaults to True); output (N, F, o...),
 *                  o = s(x-1) + d(k-1) + 1 - 2p + adj (pads and adj derived from
 *                  target_shape when it is given; 3-D: no dilation, as upstream).
 * stride, dilate, pad and adj have nd values too (default 1, 1, 0, 0).
 *
 * Every call works on three spatial axes (d, h, w): 1-D and 2-D are the 3-D
 * computation with leading axes of size 1 (cb_spatial.h), so the 2-D path keeps
 * its inner loops and gains only trivial outer ones.
 *
 * Both are computed with im2col / col2im and one sgemm per group over a chunk of
 * `nb` images at once: the column buffer is (C*kd*kh*kw, nb*P) and the
 * filter-side buffer (K, nb*P), P the spatial size of the filter side. nb is the
 * largest count whose buffers fit in `workspace` MB (at least 1, at most N); both
 * buffers come from the temp-space resource, whose size forward_resources /
 * backward_resources request, so nothing is allocated per call.
 *
 * The two operators share one geometry: an "image side" (channels Ci, Di x Hi x
 * Wi, where im2col reads and col2im writes) and a "filter side" (K channels,
 * Do x Ho x Wo), with the weight (K, Ci/G, kd, kh, kw) in both. Convolution:
 * image = data, filter side = output. Deconvolution: image = output, filter
 * side = data. Hence
 *   conv forward  == deconv backward-data  (col = im2col(img); fs_g = W_g col_g)
 *   conv bwd-data == deconv forward        (col_g = W_g^T fs_g; img += col2im(col))
 *   dW_g = fs_g col_g^T with col = im2col(image side) in both.
 * Backward reads out_grad, data and weight (not the output).
 */
#include <cblas.h>
#include <limits.h>
#include <string.h>

#include "cb_spatial.h"
#include "cb_tensor.h"

/** Parsed attributes of Convolution / Deconvolution; per-axis arrays are (d, h, w) (cb_spatial.h).
 */
typedef struct cv_param {
    int32_t deconv;             /**< 1: Deconvolution */
    int32_t nd;                 /**< spatial axes: 1, 2 or 3 */
    int64_t kernel[CB_SP_AXES]; /**< kernel size */
    int64_t stride[CB_SP_AXES];
    int64_t dilate[CB_SP_AXES];
    int64_t pad[CB_SP_AXES];    /**< Deconvolution: unless target_shape is set */
    int64_t adj[CB_SP_AXES];    /**< Deconvolution output adjustment */
    int64_t target[CB_SP_AXES]; /**< Deconvolution target_shape */
    int32_t has_target;         /**< target_shape has a non-zero value */
    int64_t num_filter;         /**< F */
    int64_t num_group;          /**< G */
    int64_t workspace_mb;       /**< workspace limit, MB */
    int32_t no_bias;            /**< 1: no bias argument */
} cv_param;

static const char *const cv_args[] = {"data", "weight", "bias", NULL};
static const char *const cv_outs[] = {"output", NULL};

/** Layout values of MXNet's schema; cpu-blas computes the channel-first one of the kernel's rank.
 */
#define CV_LAYOUTS "None|NCW|NCHW|NCDHW|NHWC|NDHWC"

/** Convolution schema (MXNet 1.9.1 ConvolutionParam). */
static const mxk_attr_def conv_attrs[] = {
    MXK_SDK_ATTR("kernel", MXK_ATTR_SHAPE, 1, NULL, NULL,
                 "Convolution kernel size: (w,), (h, w) or (d, h, w)."),
    MXK_SDK_ATTR("stride", MXK_ATTR_SHAPE, 0, "()", NULL, "Stride per axis; default 1."),
    MXK_SDK_ATTR("dilate", MXK_ATTR_SHAPE, 0, "()", NULL, "Dilation per axis; default 1."),
    MXK_SDK_ATTR("pad", MXK_ATTR_SHAPE, 0, "()", NULL, "Zero padding per axis; default 0."),
    MXK_SDK_ATTR("num_filter", MXK_ATTR_INT, 1, NULL, NULL, "Number of output channels."),
    MXK_SDK_ATTR("num_group", MXK_ATTR_INT, 0, "1", NULL, "Number of groups."),
    MXK_SDK_ATTR("workspace", MXK_ATTR_INT, 0, "1024", NULL,
                 "Maximum temporary workspace in MB (limits the images per GEMM)."),
    MXK_SDK_ATTR("no_bias", MXK_ATTR_BOOL, 0, "False", NULL, "Whether to disable the bias."),
    MXK_SDK_ATTR("cudnn_tune", MXK_ATTR_ENUM, 0, "None", "None|off|limited_workspace|fastest",
                 "cuDNN algorithm choice (ignored on CPU)."),
    MXK_SDK_ATTR("cudnn_off", MXK_ATTR_BOOL, 0, "False", NULL, "Turn off cuDNN (ignored)."),
    MXK_SDK_ATTR("layout", MXK_ATTR_ENUM, 0, "None", CV_LAYOUTS,
                 "Data layout; cpu-blas computes NCW, NCHW and NCDHW."),
};

/** Deconvolution schema (MXNet 1.9.1 DeconvolutionParam). */
static const mxk_attr_def deconv_attrs[] = {
    MXK_SDK_ATTR("kernel", MXK_ATTR_SHAPE, 1, NULL, NULL,
                 "Deconvolution kernel size: (w,), (h, w) or (d, h, w)."),
    MXK_SDK_ATTR("stride", MXK_ATTR_SHAPE, 0, "()", NULL, "Stride per axis; default 1."),
    MXK_SDK_ATTR("dilate", MXK_ATTR_SHAPE, 0, "()", NULL, "Dilation per axis; default 1."),
    MXK_SDK_ATTR("pad", MXK_ATTR_SHAPE, 0, "()", NULL, "Padding per axis; default 0."),
    MXK_SDK_ATTR("adj", MXK_ATTR_SHAPE, 0, "()", NULL, "Output adjustment per axis; default 0."),
    MXK_SDK_ATTR("target_shape", MXK_ATTR_SHAPE, 0, "()", NULL,
                 "Output spatial shape; pads and adj are derived from it."),
    MXK_SDK_ATTR("num_filter", MXK_ATTR_INT, 1, NULL, NULL, "Number of output channels."),
    MXK_SDK_ATTR("num_group", MXK_ATTR_INT, 0, "1", NULL, "Number of groups."),
    MXK_SDK_ATTR("workspace", MXK_ATTR_INT, 0, "512", NULL, "Maximum temporary workspace in MB."),
    MXK_SDK_ATTR("no_bias", MXK_ATTR_BOOL, 0, "True", NULL, "Whether to disable the bias."),
    MXK_SDK_ATTR("cudnn_tune", MXK_ATTR_ENUM, 0, "None", "None|off|limited_workspace|fastest",
                 "cuDNN algorithm choice (ignored on CPU)."),
    MXK_SDK_ATTR("cudnn_off", MXK_ATTR_BOOL, 0, "False", NULL, "Turn off cuDNN (ignored)."),
    MXK_SDK_ATTR("layout", MXK_ATTR_ENUM, 0, "None", CV_LAYOUTS,
                 "Data layout; cpu-blas computes NCW, NCHW and NCDHW."),
};

/**
 * Checks the layout attribute for a kernel of nd axes: absent, "None" or the
 * channel-first layout of that rank (NCW, NCHW, NCDHW). MXK_ERR_UNSUPPORTED
 * otherwise: MXNet's CPU operators compute channel-first layouts only
 * (channel-last is GPU-only, src/operator/nn/convolution-inl.h; on CPU upstream
 * fails in MKLDNN).
 */
static mxk_status cv_layout(const mxk_attrs *attrs, int nd, mxk_error_sink *err) {
    static const char *const names[CB_SP_AXES] = {"NCW", "NCHW", "NCDHW"};
    const char *raw = mxk_sdk_attr_raw(attrs, "layout");
    if (raw == NULL || strcmp(raw, "None") == 0 || strcmp(raw, names[nd - 1]) == 0)
        return MXK_OK;
    return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED,
                         "attribute 'layout': cpu-blas computes %s only for a %d-D kernel "
                         "(channel-first), got '%s'",
                         names[nd - 1], nd, raw);
}

/** Parses the attributes of either operator (deconv selects the schema's extras). */
static mxk_status cv_parse_common(const mxk_attrs *attrs, int deconv, void **out,
                                  mxk_error_sink *err) {
    cv_param p;
    memset(&p, 0, sizeof p);
    p.deconv = deconv;
    mxk_shape k;
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "kernel", &k, err));
    if (k.ndim < 1 || k.ndim > CB_SP_AXES)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED,
                             "attribute 'kernel': %dD %s not supported (kernel needs 1, 2 or 3 "
                             "values)",
                             (int)k.ndim, deconv ? "deconvolution" : "convolution");
    p.nd = (int32_t)k.ndim;
    MXK_SDK_CHECK(cb_sp_tuple(attrs, "kernel", "Kernel", p.nd, 1, 1, p.kernel, err));
    MXK_SDK_CHECK(cb_sp_tuple(attrs, "stride", "Stride", p.nd, 1, 1, p.stride, err));
    MXK_SDK_CHECK(cb_sp_tuple(attrs, "dilate", "Dilate", p.nd, 1, 1, p.dilate, err));
    MXK_SDK_CHECK(cb_sp_tuple(attrs, "pad", "Padding", p.nd, 0, 0, p.pad, err));
    if (deconv) {
        MXK_SDK_CHECK(cb_sp_tuple(attrs, "adj", "Adjustment", p.nd, 0, 0, p.adj, err));
        MXK_SDK_CHECK(
            cb_sp_tuple(attrs, "target_shape", "Target shape", p.nd, 0, 0, p.target, err));
        for (int i = 0; i < CB_SP_AXES; i++) {
            p.has_target |= p.target[i] > 0;
            if (p.dilate[i] != 1 && p.nd == 3)
                return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                     "attribute 'dilate': Dilate is not supported in 3d "
                                     "deconvolution");
        }
        for (int i = 0; i < CB_SP_AXES && !p.has_target; i++)
            if (p.adj[i] >= p.stride[i] && p.adj[i] > 0)
                return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                     "attribute 'adj': adj must be smaller than stride, got %lld "
                                     ">= %lld",
                                     (long long)p.adj[i], (long long)p.stride[i]);
    }
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "num_filter", 1, INT32_MAX, &p.num_filter, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "num_group", 1, INT32_MAX, &p.num_group, err));
    MXK_SDK_CHECK(
        mxk_sdk_attr_int_range(attrs, "workspace", 0, INT64_C(1) << 40, &p.workspace_mb, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "no_bias", &p.no_bias, err));
    MXK_SDK_CHECK(cv_layout(attrs, p.nd, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** parse_param of Convolution. */
static mxk_status conv_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    return cv_parse_common(attrs, 0, out, err);
}

/** parse_param of Deconvolution. */
static mxk_status deconv_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    return cv_parse_common(attrs, 1, out, err);
}

/** Argument count: 2 with no_bias, else 3. */
static uint32_t cv_num_args(const cv_param *p) {
    return p->no_bias ? 2u : 3u;
}

/** Argument names: data, weight[, bias]. */
static mxk_status cv_list_arguments(const void *param, mxk_name_list *out, mxk_error_sink *err) {
    const cv_param *p = param;
    for (uint32_t i = 0; i < cv_num_args(p); i++)
        MXK_SDK_CHECK(mxk_sdk_host()->name_list_add(out, cv_args[i], err));
    return MXK_OK;
}

/** The dilated kernel extent along axis i, d(k-1) + 1 (at most 2^62: both factors < 2^31). */
static int64_t cv_dilated(const cv_param *p, int i) {
    return p->dilate[i] * (p->kernel[i] - 1) + 1;
}

/**
 * Deconvolution's pad and adj along axis i (of the three) for data spatial size
 * x >= 1 (MXNet DeconvolutionParam::InferPad): with target_shape, total =
 * s(x-1) + dk - target is split into pad = ceil(total/2) and adj = total % 2.
 * MXK_ERR_SHAPE "too big target shape" when total < 0, and mxk_sdk_dim_mul's
 * message when s(x-1) + dk is too large.
 */
static mxk_status dc_pad_adj(const cv_param *p, int i, int64_t x, int64_t *pad, int64_t *adj,
                             mxk_error_sink *err) {
    if (p->has_target) {
        int64_t span;
        MXK_SDK_CHECK(
            mxk_sdk_dim_mul(p->stride[i], x - 1, &span, "stride * (input size - 1)", err));
        int64_t total = span + cv_dilated(p, i) - p->target[i];
        if (total < 0)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "too big target shape: %lld along spatial axis %d, at most "
                                 "%lld",
                                 (long long)p->target[i], i - (CB_SP_AXES - p->nd),
                                 (long long)(span + cv_dilated(p, i)));
        *adj = total % 2;
        *pad = (total + 1) / 2;
    } else {
        *pad = p->pad[i];
        *adj = p->adj[i];
    }
    return MXK_OK;
}

/**
 * Output size along spatial axis i (of the three) for input size x >= 1, in
 * checked arithmetic (no value can overflow: attributes are below 2^31, x at
 * most MXK_SDK_MAX_ELEMS). Convolution: (x + 2p - dk)/s + 1; Deconvolution:
 * s(x-1) + dk - 2p + adj. Errors (MXK_ERR_SHAPE): the dilated kernel larger than
 * the padded input ("kernel size exceed input", MXNet's check); a derived adj
 * not below the stride; a non-positive Deconvolution output; a size over
 * MXK_SDK_MAX_ELEMS ("Convolution: input + 2 * pad: ... is too large").
 */
static mxk_status cv_out_size(const cv_param *p, int i, int64_t x, int64_t *out,
                              mxk_error_sink *err) {
    int64_t dk = cv_dilated(p, i), twice_pad, size;
    int axis = i - (CB_SP_AXES - p->nd);
    if (!p->deconv) {
        MXK_SDK_CHECK(mxk_sdk_dim_mul(2, p->pad[i], &twice_pad, "2 * pad", err));
        MXK_SDK_CHECK(mxk_sdk_dim_add(x, twice_pad, &size, "input + 2 * pad", err));
        if (dk > size)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "kernel size exceed input: dilated kernel %lld > input %lld + "
                                 "2 * pad %lld along spatial axis %d",
                                 (long long)dk, (long long)x, (long long)p->pad[i], axis);
        *out = (size - dk) / p->stride[i] + 1;
        return MXK_OK;
    }
    int64_t pad, adj, span;
    MXK_SDK_CHECK(dc_pad_adj(p, i, x, &pad, &adj, err));
    if (adj >= p->stride[i] && adj > 0)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "adj must be smaller than stride: target_shape gives adj %lld with "
                             "stride %lld along spatial axis %d",
                             (long long)adj, (long long)p->stride[i], axis);
    MXK_SDK_CHECK(mxk_sdk_dim_mul(p->stride[i], x - 1, &span, "stride * (input size - 1)", err));
    MXK_SDK_CHECK(mxk_sdk_dim_add(span, dk + adj, &size, "output size", err));
    size -= 2 * pad; /* pad < 2^62 from the attribute, or total/2 + 1 above */
    if (size <= 0 || pad < 0)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "Deconvolution: output size %lld along spatial axis %d is not "
                             "positive (pad %lld)",
                             (long long)size, axis, (long long)pad);
    if (p->has_target && p->target[i] > 0 && size != p->target[i])
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "target_shape[%d] was not reasonable, please set it carefully: "
                             "%lld, the output is %lld",
                             axis, (long long)p->target[i], (long long)size);
    *out = size;
    return MXK_OK;
}

/**
 * Shape inference for both operators: data must have nd + 2 axes (N, C, x...);
 * weight and bias follow from data and the attributes; output from the size
 * rules. Errors name the argument (groups must divide channels and filters;
 * kernel larger than the padded input; a non-positive output size).
 */
static mxk_status cv_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    static const char *const layouts[CB_SP_AXES] = {"batch-num_filter-x", "batch-num_filter-y-x",
                                                    "batch-num_filter-depth-y-x"};
    const cv_param *p = param;
    const char *op = p->deconv ? "Deconvolution" : "Convolution";
    if (num_in != cv_num_args(p) || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "%s expects %u arguments and 1 output, got %u and %u", op,
                             (unsigned)cv_num_args(p), (unsigned)num_in, (unsigned)num_out);
    mxk_shape *d = &in[0];
    const int nd = p->nd, lead = CB_SP_AXES - nd;
    if (d->ndim == 0)
        return MXK_OK;
    if (d->ndim != nd + 2) {
        char s[MXK_SDK_SHAPE_STR_MAX];
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'data': Input data should be %dD in %s (a %d-D kernel), "
                             "got %s",
                             nd + 2, layouts[nd - 1], nd, mxk_sdk_shape_format(d, s, sizeof s));
    }
    MXK_SDK_CHECK(mxk_sdk_shapes_check_count(in, num_in, "argument", cv_args, err));
    int64_t C = d->dims[1], F = p->num_filter, G = p->num_group;
    if (C > 0 && C % G != 0)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'data': input num_filter must divide group size: %lld "
                             "input channels, num_group %lld",
                             (long long)C, (long long)G);
    if (F % G != 0)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "output num_filter must divide group size: num_filter %lld, "
                             "num_group %lld",
                             (long long)F, (long long)G);
    int64_t wd[2 + CB_SP_AXES];
    if (!p->deconv) {
        wd[0] = F, wd[1] = C > 0 ? C / G : 0;
    } else {
        wd[0] = C, wd[1] = F / G;
    }
    for (int i = 0; i < nd; i++)
        wd[2 + i] = p->kernel[lead + i];
    mxk_shape w = mxk_sdk_shape_from(wd, nd + 2);
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&in[1], &w, "argument", "weight", err));
    if (!p->no_bias) {
        mxk_shape b = mxk_sdk_shape1(F);
        MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&in[2], &b, "argument", "bias", err));
    }
    int64_t od[2 + CB_SP_AXES] = {d->dims[0], F, 0, 0, 0};
    for (int i = 0; i < nd; i++)
        if (d->dims[2 + i] > 0)
            MXK_SDK_CHECK(cv_out_size(p, lead + i, d->dims[2 + i], &od[2 + i], err));
    mxk_shape y = mxk_sdk_shape_from(od, nd + 2);
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[0], &y, "output", "output", err));
    if (d->dims[0] == 0 && out[0].dims[0] > 0) /* batch backwards from the output */
        d->dims[0] = out[0].dims[0];
    return MXK_OK;
}

/** All float32. */
static mxk_status cv_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in, num_in, cv_args, out, num_out, cv_outs, aux,
                                      num_aux, err);
}

/** Backward reads out_grad, data and weight. */
static void cv_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    need_in_data[0] = 1;
    need_in_data[1] = 1;
}

/** The shared geometry (see the file comment); 1-D and 2-D have leading axes of size 1. */
typedef struct cv_geom {
    int64_t N;          /**< batch */
    int64_t Ci;         /**< image-side channels */
    int64_t Di, Hi, Wi; /**< image-side spatial size */
    int64_t K;          /**< filter-side channels */
    int64_t Do, Ho, Wo; /**< filter-side spatial size */
    int64_t kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw;
    int64_t G;         /**< groups */
    int64_t S;         /**< image-side spatial size Di*Hi*Wi */
    int64_t P;         /**< filter-side spatial size Do*Ho*Wo */
    int64_t nb;        /**< images per chunk */
    int64_t per_image; /**< workspace bytes per image: (Ci*kd*kh*kw + K) * P floats */
} cv_geom;

/**
 * The geometry from the data shape (known, nd + 2 axes); nb from the workspace
 * limit. Errors: those of cv_infer_shape, MXK_ERR_SHAPE for sizes over
 * MXK_SDK_MAX_ELEMS, MXK_ERR_UNSUPPORTED for a GEMM dimension over INT_MAX.
 */
static mxk_status cv_geom_of(const cv_param *p, const mxk_shape *d, cv_geom *g,
                             mxk_error_sink *err) {
    if (d->ndim != p->nd + 2 || !mxk_sdk_shape_is_known(d))
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "argument 'data': expected a known %d-D shape",
                             p->nd + 2);
    mxk_shape in[3] = {*d, mxk_sdk_shape_unknown(), mxk_sdk_shape_unknown()};
    mxk_shape out = mxk_sdk_shape_unknown();
    MXK_SDK_CHECK(cv_infer_shape(p, in, cv_num_args(p), &out, 1, NULL, 0, err));
    /* spatial sizes of data and output on three axes */
    int64_t xs[CB_SP_AXES] = {1, 1, 1}, ys[CB_SP_AXES] = {1, 1, 1}, pad[CB_SP_AXES] = {0, 0, 0};
    const int lead = CB_SP_AXES - p->nd;
    for (int i = 0; i < p->nd; i++)
        xs[lead + i] = d->dims[2 + i], ys[lead + i] = out.dims[2 + i];
    for (int i = 0; i < CB_SP_AXES; i++) {
        int64_t adj;
        if (p->deconv && i >= lead)
            MXK_SDK_CHECK(dc_pad_adj(p, i, xs[i], &pad[i], &adj, err));
        else
            pad[i] = p->pad[i];
    }
    const int64_t *img = p->deconv ? ys : xs, *fsd = p->deconv ? xs : ys;
    g->N = d->dims[0];
    g->Ci = p->deconv ? p->num_filter : d->dims[1];
    g->K = p->deconv ? d->dims[1] : p->num_filter;
    g->Di = img[0], g->Hi = img[1], g->Wi = img[2];
    g->Do = fsd[0], g->Ho = fsd[1], g->Wo = fsd[2];
    g->kd = p->kernel[0], g->kh = p->kernel[1], g->kw = p->kernel[2];
    g->sd = p->stride[0], g->sh = p->stride[1], g->sw = p->stride[2];
    g->dd = p->dilate[0], g->dh = p->dilate[1], g->dw = p->dilate[2];
    g->pd = pad[0], g->ph = pad[1], g->pw = pad[2];
    g->G = p->num_group;
    /* column rows, spatial sizes and the workspace per image, checked */
    int64_t rows, per;
    MXK_SDK_CHECK(mxk_sdk_dim_mul(g->Ci, p->kernel[0] * p->kernel[1] * p->kernel[2], &rows,
                                  "column rows (channels * kernel)", err));
    MXK_SDK_CHECK(mxk_sdk_dim_mul(g->Do, g->Ho, &g->P, "filter-side spatial size", err));
    MXK_SDK_CHECK(mxk_sdk_dim_mul(g->P, g->Wo, &g->P, "filter-side spatial size", err));
    MXK_SDK_CHECK(mxk_sdk_dim_mul(g->Di, g->Hi, &g->S, "image-side spatial size", err));
    MXK_SDK_CHECK(mxk_sdk_dim_mul(g->S, g->Wi, &g->S, "image-side spatial size", err));
    MXK_SDK_CHECK(mxk_sdk_dim_add(rows, g->K, &per, "workspace rows", err));
    MXK_SDK_CHECK(mxk_sdk_dim_mul(per, g->P, &per, "workspace elements per image", err));
    MXK_SDK_CHECK(
        mxk_sdk_dim_mul(per, sizeof(float), &g->per_image, "workspace bytes per image", err));
    uint64_t limit = (uint64_t)p->workspace_mb << 20;
    uint64_t nb = limit / (uint64_t)g->per_image;
    if (nb < 1)
        nb = 1;
    if (nb > (uint64_t)g->N)
        nb = (uint64_t)g->N;
    g->nb = (int64_t)nb;
    /* every GEMM dimension must fit a CBLAS int */
    uint64_t cols = nb * (uint64_t)g->P; /* nb * per_image <= max(limit, per_image) */
    int tmp;
    MXK_SDK_CHECK(cb_blas_dim(rows, "column rows", &tmp, err));
    MXK_SDK_CHECK(cb_blas_dim(cols, "column width", &tmp, err));
    return MXK_OK;
}

/** Temp-space request for either phase: nb images of buffers. */
static mxk_status cv_resources(const void *param, const mxk_shape *in_shapes, uint32_t num_in,
                               mxk_resource_request *reqs, uint32_t *num, mxk_error_sink *err) {
    uint32_t cap = *num, n = 0;
    *num = 0;
    if (num_in < 1 || !mxk_sdk_shape_is_known(&in_shapes[0]))
        return MXK_OK;
    cv_geom g;
    MXK_SDK_CHECK(cv_geom_of(param, &in_shapes[0], &g, err));
    mxk_sdk_resource_add(reqs, cap, &n, MXK_RESOURCE_TEMP_SPACE, (uint64_t)(g.per_image * g.nb));
    *num = n;
    return MXK_OK;
}

/**
 * dst[0..n) = src[0..n): short rows (LeNet's are 8 and 24 floats) as fixed-size
 * 8-float copies, which compile to vector moves, instead of a libc memcpy call
 * per row.
 */
static inline void cv_copy_row(float *restrict dst, const float *restrict src, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        memcpy(dst + i, src + i, 8 * sizeof(float));
    for (; i < n; i++)
        dst[i] = src[i];
}

/** dst[0..n) += src[0..n) (contiguous; vectorisable). */
static inline void cv_add_row(float *restrict dst, const float *restrict src, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        dst[i] += src[i];
}

/**
 * The output columns [*lo, *hi) whose input column ow*sw + off_w lies inside
 * [0, Wi) for kernel column kj, and that offset (off_w = kj*dw - pw).
 */
static inline int64_t cv_w_range(const cv_geom *g, int64_t kj, int64_t *lo, int64_t *hi) {
    const int64_t off_w = kj * g->dw - g->pw;
    *lo = off_w >= 0 ? 0 : (-off_w + g->sw - 1) / g->sw;
    *hi = g->Wi - off_w <= 0 ? 0 : (g->Wi - off_w - 1) / g->sw + 1;
    if (*hi > g->Wo)
        *hi = g->Wo;
    if (*lo > *hi)
        *lo = *hi;
    return off_w;
}

/** The image-side depth of output depth od for kernel tap kz; -1: in the padding. */
static inline int64_t cv_src_depth(const cv_geom *g, int64_t od, int64_t kz) {
    int64_t id = od * g->sd + kz * g->dd - g->pd;
    return id < 0 || id >= g->Di ? -1 : id;
}

/**
 * im2col of one (h, w) plane: the Ho x Wo block dst of kernel taps (ki, kj)
 * from image plane src (Hi x Wi); off_w, lo, hi from cv_w_range.
 */
static inline void cv_im2col_plane(const cv_geom *g, int64_t ki, int64_t off_w, int64_t lo,
                                   int64_t hi, const float *src, float *dst) {
    const int64_t Wo = g->Wo;
    for (int64_t oh = 0; oh < g->Ho; oh++, dst += Wo) {
        int64_t ih = oh * g->sh + ki * g->dh - g->ph;
        if (ih < 0 || ih >= g->Hi) {
            memset(dst, 0, sizeof(float) * (size_t)Wo);
            continue;
        }
        const float *s = src + ih * g->Wi + off_w;
        for (int64_t ow = 0; ow < lo; ow++)
            dst[ow] = 0.0f;
        if (g->sw == 1)
            cv_copy_row(dst + lo, s + lo, hi - lo);
        else
            for (int64_t ow = lo; ow < hi; ow++)
                dst[ow] = s[ow * g->sw];
        for (int64_t ow = hi; ow < Wo; ow++)
            dst[ow] = 0.0f;
    }
}

/** col2im of one (h, w) plane: image plane dst += the Ho x Wo block src (cv_im2col_plane's
 * adjoint). */
static inline void cv_col2im_plane(const cv_geom *g, int64_t ki, int64_t off_w, int64_t lo,
                                   int64_t hi, const float *src, float *dst) {
    for (int64_t oh = 0; oh < g->Ho; oh++, src += g->Wo) {
        int64_t ih = oh * g->sh + ki * g->dh - g->ph;
        if (ih < 0 || ih >= g->Hi)
            continue;
        float *d = dst + ih * g->Wi + off_w;
        if (g->sw == 1)
            cv_add_row(d + lo, src + lo, hi - lo);
        else
            for (int64_t ow = lo; ow < hi; ow++)
                d[ow * g->sw] += src[ow];
    }
}

/**
 * im2col of images [n0, n1) of a chunk (img: the chunk's first image, each
 * Ci x S) into their columns of col (Ci*kd*kh*kw rows of `ld` = nb*P columns,
 * image n at columns [n*P, (n+1)*P)); positions in the padding are 0.
 */
static void cv_im2col(const cv_geom *g, int64_t ld, int64_t n0, int64_t n1, const float *img,
                      float *col) {
    const int64_t HWi = g->Hi * g->Wi, HWo = g->Ho * g->Wo;
    for (int64_t c = 0; c < g->Ci; c++)
        for (int64_t kz = 0; kz < g->kd; kz++)
            for (int64_t ki = 0; ki < g->kh; ki++)
                for (int64_t kj = 0; kj < g->kw; kj++) {
                    float *row = col + (((c * g->kd + kz) * g->kh + ki) * g->kw + kj) * ld;
                    int64_t lo, hi;
                    const int64_t off_w = cv_w_range(g, kj, &lo, &hi);
                    for (int64_t n = n0; n < n1; n++) {
                        const float *src = img + (n * g->Ci + c) * g->S;
                        float *dst = row + n * g->P;
                        for (int64_t od = 0; od < g->Do; od++, dst += HWo) {
                            int64_t id = cv_src_depth(g, od, kz);
                            if (id < 0)
                                memset(dst, 0, sizeof(float) * (size_t)HWo);
                            else
                                cv_im2col_plane(g, ki, off_w, lo, hi, src + id * HWi, dst);
                        }
                    }
                }
}

/** col2im of images [n0, n1): img += their columns (the adjoint of cv_im2col). */
static void cv_col2im(const cv_geom *g, int64_t ld, int64_t n0, int64_t n1, const float *col,
                      float *img) {
    const int64_t HWi = g->Hi * g->Wi, HWo = g->Ho * g->Wo;
    for (int64_t c = 0; c < g->Ci; c++)
        for (int64_t kz = 0; kz < g->kd; kz++)
            for (int64_t ki = 0; ki < g->kh; ki++)
                for (int64_t kj = 0; kj < g->kw; kj++) {
                    const float *row = col + (((c * g->kd + kz) * g->kh + ki) * g->kw + kj) * ld;
                    int64_t lo, hi;
                    const int64_t off_w = cv_w_range(g, kj, &lo, &hi);
                    for (int64_t n = n0; n < n1; n++) {
                        float *dst = img + (n * g->Ci + c) * g->S;
                        const float *src = row + n * g->P;
                        for (int64_t od = 0; od < g->Do; od++, src += HWo) {
                            int64_t id = cv_src_depth(g, od, kz);
                            if (id >= 0)
                                cv_col2im_plane(g, ki, off_w, lo, hi, src, dst + id * HWi);
                        }
                    }
                }
}

/** Gathers images [n0, n1) of a filter-side tensor (n, K, P) into buf (K rows of `ld`). */
static void cv_gather(const cv_geom *g, int64_t ld, int64_t n0, int64_t n1, const float *t,
                      float *buf) {
    const int64_t P = g->P;
    for (int64_t n = n0; n < n1; n++)
        for (int64_t k = 0; k < g->K; k++)
            memcpy(buf + k * ld + n * P, t + (n * g->K + k) * P, sizeof(float) * (size_t)P);
}

/**
 * Scatters images [n0, n1) of buf (K rows of `ld`) into t (n, K, P) by `req`,
 * adding bias[k] when bias != NULL.
 */
static void cv_scatter(const cv_geom *g, int64_t ld, int64_t n0, int64_t n1, const float *buf,
                       const float *bias, float *t, mxk_op_req req) {
    const int64_t P = g->P;
    for (int64_t n = n0; n < n1; n++)
        for (int64_t k = 0; k < g->K; k++) {
            const float *s = buf + k * ld + n * P;
            float *d = t + (n * g->K + k) * P;
            float b = bias ? bias[k] : 0.0f;
            if (req == MXK_REQ_ADD)
                for (int64_t i = 0; i < P; i++)
                    d[i] += s[i] + b;
            else
                for (int64_t i = 0; i < P; i++)
                    d[i] = s[i] + b;
        }
}

/** Sizes of one group's GEMM operands. */
typedef struct cv_gemm {
    int Kg;   /**< filter-side channels per group */
    int CKg;  /**< column rows per group: (Ci/G)*kd*kh*kw */
    int cols; /**< nb*P: the leading dimension of both buffers */
} cv_gemm;

/** fs_g = W_g col_g for every group, over columns [c0, c1) (fs: K x cols). */
static void cv_gemm_fwd(const cv_geom *g, const cv_gemm *m, const float *w, const float *col,
                        float *fs, int c0, int c1) {
    for (int64_t gi = 0; gi < g->G; gi++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m->Kg, c1 - c0, m->CKg, 1.0f,
                    w + gi * m->Kg * m->CKg, m->CKg, col + gi * m->CKg * m->cols + c0, m->cols,
                    0.0f, fs + gi * m->Kg * m->cols + c0, m->cols);
}

/** col_g = W_g^T fs_g for every group, over columns [c0, c1). */
static void cv_gemm_data(const cv_geom *g, const cv_gemm *m, const float *w, const float *fs,
                         float *col, int c0, int c1) {
    for (int64_t gi = 0; gi < g->G; gi++)
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m->CKg, c1 - c0, m->Kg, 1.0f,
                    w + gi * m->Kg * m->CKg, m->CKg, fs + gi * m->Kg * m->cols + c0, m->cols, 0.0f,
                    col + gi * m->CKg * m->cols + c0, m->cols);
}

/** Workspace pointers for a chunk of nb images. */
static mxk_status cv_workspace(const mxk_op_ctx *ctx, const cv_geom *g, float **col, float **fs,
                               mxk_error_sink *err) {
    void *ws = NULL;
    uint64_t bytes = (uint64_t)(g->per_image * g->nb);
    MXK_SDK_CHECK(mxk_sdk_host()->temp_space(ctx, bytes, &ws, err));
    *col = ws;
    *fs = *col + g->Ci * g->kd * g->kh * g->kw * g->nb * g->P;
    return MXK_OK;
}

/** Sums of an (N, C, S) tensor over n and s into out[C] by req. */
static void cv_channel_sum(const float *t, int64_t N, int64_t C, int64_t S, float *out,
                           mxk_op_req req) {
    for (int64_t c = 0; c < C; c++) {
        double acc = 0.0;
        for (int64_t n = 0; n < N; n++) {
            const float *s = t + (n * C + c) * S;
            /* eight partial sums: independent chains the compiler can keep in
             * one vector register (a single running sum is latency-bound) */
            float lane[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
            int64_t i = 0;
            for (; i + 8 <= S; i += 8)
                for (int j = 0; j < 8; j++)
                    lane[j] += s[i + j];
            float part = 0.0f;
            for (; i < S; i++)
                part += s[i];
            part += ((lane[0] + lane[4]) + (lane[1] + lane[5])) +
                    ((lane[2] + lane[6]) + (lane[3] + lane[7]));
            acc += part;
        }
        mxk_sdk_assign_f32(&out[c], (float)acc, req);
    }
}

/** The GEMM sizes of a chunk of nb images. */
static cv_gemm cv_gemm_of(const cv_geom *g, int64_t nb) {
    cv_gemm m;
    m.Kg = (int)(g->K / g->G);
    m.CKg = (int)(g->Ci / g->G * g->kd * g->kh * g->kw);
    m.cols = (int)(nb * g->P);
    return m;
}

/**
 * One chunk of images being computed: the images of a chunk are split over the
 * kernel's threads (cb_parallel_for), each thread filling and reading only its
 * images' columns of the shared buffers.
 */
typedef struct cv_chunk {
    const cv_param *p;
    const cv_geom *g;
    cv_gemm m;
    float *col, *fs;   /**< workspace: column and filter-side buffers */
    const float *w;    /**< weight */
    const float *bias; /**< bias or NULL */
    const float *img;  /**< forward: x (conv); backward: the image side im2col reads */
    const float *fsrc; /**< filter-side input: x (deconv forward) or the dW operand */
    float *out;        /**< forward: y; backward: dx (NULL: not requested) */
    mxk_op_req req;    /**< request of `out` */
    int need_col;      /**< backward: im2col of `img` is needed */
} cv_chunk;

/** Forward of images [n0, n1) of a chunk. */
static void cv_forward_part(void *arg, int64_t n0, int64_t n1) {
    const cv_chunk *c = arg;
    const cv_geom *g = c->g;
    const int64_t P = g->P, ld = c->m.cols;
    if (!c->p->deconv) {
        /* y = W im2col(x) + b */
        cv_im2col(g, ld, n0, n1, c->img, c->col);
        cv_gemm_fwd(g, &c->m, c->w, c->col, c->fs, (int)(n0 * P), (int)(n1 * P));
        cv_scatter(g, ld, n0, n1, c->fs, c->bias, c->out, c->req);
        return;
    }
    /* y = b (or +=), then y += col2im(W^T x) */
    cv_gather(g, ld, n0, n1, c->fsrc, c->fs);
    cv_gemm_data(g, &c->m, c->w, c->fs, c->col, (int)(n0 * P), (int)(n1 * P));
    const int64_t S = g->S;
    for (int64_t n = n0; n < n1; n++)
        for (int64_t ch = 0; ch < g->Ci; ch++)
            mxk_sdk_fill_f32(c->out + (n * g->Ci + ch) * S, c->bias ? c->bias[ch] : 0.0f, (size_t)S,
                             c->req == MXK_REQ_ADD ? MXK_REQ_ADD : MXK_REQ_WRITE);
    cv_col2im(g, ld, n0, n1, c->col, c->out);
}

/** Backward, first pass over images [n0, n1): their columns and filter-side operand. */
static void cv_backward_gather_part(void *arg, int64_t n0, int64_t n1) {
    const cv_chunk *c = arg;
    if (c->need_col)
        cv_im2col(c->g, c->m.cols, n0, n1, c->img, c->col);
    cv_gather(c->g, c->m.cols, n0, n1, c->fsrc, c->fs);
}

/** Backward, data gradient of images [n0, n1) (after dW has read the columns). */
static void cv_backward_data_part(void *arg, int64_t n0, int64_t n1) {
    const cv_chunk *c = arg;
    const cv_geom *g = c->g;
    const int64_t P = g->P, ld = c->m.cols;
    if (!c->p->deconv) {
        /* dx = col2im(W^T dy) */
        cv_gemm_data(g, &c->m, c->w, c->fs, c->col, (int)(n0 * P), (int)(n1 * P));
        const int64_t img = g->Ci * g->S;
        if (c->req != MXK_REQ_ADD)
            memset(c->out + n0 * img, 0, sizeof(float) * (size_t)((n1 - n0) * img));
        cv_col2im(g, ld, n0, n1, c->col, c->out);
    } else {
        /* dx = W im2col(dy), into the filter-side buffer then scattered */
        cv_gemm_fwd(g, &c->m, c->w, c->col, c->fs, (int)(n0 * P), (int)(n1 * P));
        cv_scatter(g, ld, n0, n1, c->fs, NULL, c->out, c->req);
    }
}

/**
 * Forward of both operators, chunk by chunk, the images of each chunk split over
 * the kernel's threads. Convolution: im2col(x), one GEMM per group, scatter into
 * y with the bias fused. Deconvolution: gather x, one GEMM per group into
 * columns, then y = bias (or +=) and col2im accumulates.
 */
static mxk_status cv_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const cv_param *p = param;
    MXK_SDK_CHECK(
        cb_check_forward(args, cv_num_args(p), 1, cv_args, cv_outs, cv_infer_shape, param, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    cv_geom g;
    MXK_SDK_CHECK(cv_geom_of(p, &args->in_data[0]->shape, &g, err));
    cv_chunk c = {.p = p, .g = &g, .req = req};
    MXK_SDK_CHECK(cv_workspace(ctx, &g, &c.col, &c.fs, err));
    const float *x = cb_f32(args->in_data[0]);
    float *y = cb_f32(args->out_data[0]);
    c.w = cb_f32(args->in_data[1]);
    c.bias = p->no_bias ? NULL : cb_f32(args->in_data[2]);
    const int64_t img = g.Ci * g.S, fsz = g.K * g.P;
    for (int64_t n0 = 0; n0 < g.N; n0 += g.nb) {
        int64_t nb = g.N - n0 < g.nb ? g.N - n0 : g.nb;
        c.m = cv_gemm_of(&g, nb);
        c.img = p->deconv ? NULL : x + n0 * img;
        c.fsrc = p->deconv ? x + n0 * fsz : NULL;
        c.out = p->deconv ? y + n0 * img : y + n0 * fsz;
        cb_parallel_for(ctx, nb, 1, cv_forward_part, &c);
    }
    return MXK_OK;
}

/**
 * Backward of both operators, chunk by chunk: the columns and the filter-side
 * operand of each chunk's images (split over threads), dW over all chunks (one
 * threaded GEMM per group; the first chunk with the request's beta, the rest
 * accumulating), db as channel sums of dy, and the data gradient (split over
 * threads; Convolution: col2im of W^T dy; Deconvolution: GEMM of im2col(dy)).
 */
static mxk_status cv_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const cv_param *p = param;
    uint32_t ni = cv_num_args(p);
    const mxk_op_req *req = args->req;
    int need_any;
    MXK_SDK_CHECK(cb_begin_weighted_backward(args, ni, &need_any, err));
    if (!need_any)
        return MXK_OK;
    mxk_shape in[3] = {args->in_data[0]->shape, mxk_sdk_shape_unknown(), mxk_sdk_shape_unknown()};
    mxk_shape ys = mxk_sdk_shape_unknown();
    MXK_SDK_CHECK(cv_infer_shape(p, in, ni, &ys, 1, NULL, 0, err));
    if (!mxk_sdk_shape_equal(&in[1], &args->in_data[1]->shape) ||
        !mxk_sdk_shape_equal(&ys, &args->out_grad[0]->shape)) {
        char a[MXK_SDK_SHAPE_STR_MAX], b[MXK_SDK_SHAPE_STR_MAX];
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "inconsistent backward shapes: weight %s, out_grad %s",
                             mxk_sdk_shape_format(&args->in_data[1]->shape, a, sizeof a),
                             mxk_sdk_shape_format(&args->out_grad[0]->shape, b, sizeof b));
    }
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req[0], &in[0], "data", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[1], req[1], &in[1], "weight", err));
    if (!p->no_bias)
        MXK_SDK_CHECK(cb_check_grad(args->in_grad[2], req[2], &in[2], "bias", err));
    cv_geom g;
    MXK_SDK_CHECK(cv_geom_of(p, &in[0], &g, err));
    cv_chunk c = {.p = p, .g = &g, .req = req[0]};
    MXK_SDK_CHECK(cv_workspace(ctx, &g, &c.col, &c.fs, err));
    const float *x = cb_f32(args->in_data[0]);
    const float *dy = cb_f32(args->out_grad[0]);
    c.w = cb_f32(args->in_data[1]);
    float *dx = req[0] != MXK_REQ_NULL ? cb_f32(args->in_grad[0]) : NULL;
    float *dw = req[1] != MXK_REQ_NULL ? cb_f32(args->in_grad[1]) : NULL;
    /* image side / filter side of the two operators */
    const float *img_src = p->deconv ? dy : x; /* what im2col reads for dW */
    const float *fs_src = p->deconv ? x : dy;  /* filter-side operand of dW */
    const int64_t img = g.Ci * g.S, fsz = g.K * g.P;
    c.need_col = dw != NULL || (p->deconv && dx != NULL);

    if (!p->no_bias && req[2] != MXK_REQ_NULL) {
        if (!p->deconv)
            cv_channel_sum(dy, g.N, g.K, g.P, cb_f32(args->in_grad[2]), req[2]);
        else
            cv_channel_sum(dy, g.N, g.Ci, g.S, cb_f32(args->in_grad[2]), req[2]);
    }
    for (int64_t n0 = 0; n0 < g.N; n0 += g.nb) {
        int64_t nb = g.N - n0 < g.nb ? g.N - n0 : g.nb;
        c.m = cv_gemm_of(&g, nb);
        c.img = img_src + n0 * img;
        c.fsrc = fs_src + n0 * fsz;
        cb_parallel_for(ctx, nb, 1, cv_backward_gather_part, &c);
        if (dw != NULL) {
            /* dW_g (=|+=) fs_g col_g^T for every group */
            float beta = n0 == 0 ? mxk_sdk_req_beta(req[1]) : 1.0f;
            for (int64_t gi = 0; gi < g.G; gi++)
                cb_sgemm(ctx, CblasNoTrans, CblasTrans, c.m.Kg, c.m.CKg, c.m.cols, 1.0f,
                         c.fs + gi * c.m.Kg * c.m.cols, c.m.cols, c.col + gi * c.m.CKg * c.m.cols,
                         c.m.cols, beta, dw + gi * c.m.Kg * c.m.CKg, c.m.CKg);
        }
        if (dx == NULL)
            continue;
        c.out = p->deconv ? dx + n0 * fsz : dx + n0 * img;
        cb_parallel_for(ctx, nb, 1, cv_backward_data_part, &c);
    }
    return MXK_OK;
}

/** Fills the definition shared by both operators. */
static void cv_def_init(mxk_op_def *def) {
    mxk_sdk_op_def_init(def);
    def->outputs = cv_outs;
    def->free_param = cbt_param_free;
    def->list_arguments = cv_list_arguments;
    def->infer_shape = cv_infer_shape;
    def->infer_type = cv_infer_type;
    def->backward_dependency = cv_backward_dependency;
    def->forward_resources = cv_resources;
    def->backward_resources = cv_resources;
}

/** Registers Convolution and Deconvolution with their CPU kernels. */
mxk_status cb_register_convolution(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_def def;
    mxk_op_kernel_def k;
    cv_def_init(&def);
    static const char *const conv_aliases[] = {"_npx_convolution", NULL};
    static const char *const deconv_aliases[] = {"_npx_deconvolution", NULL};
    def.name = "Convolution";
    def.aliases = conv_aliases;
    def.description = "1-D, 2-D or 3-D convolution (cross-correlation) over NCW, NCHW or NCDHW "
                      "data, with groups, stride, dilation and padding.";
    def.attrs = conv_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(conv_attrs);
    def.parse_param = conv_parse;
    cb_kernel_init(&k, "Convolution", cv_forward, cv_backward);
    MXK_SDK_CHECK(cb_register(reg, &def, &k, err));

    cv_def_init(&def);
    def.name = "Deconvolution";
    def.aliases = deconv_aliases;
    def.description = "1-D, 2-D or 3-D transposed convolution over NCW, NCHW or NCDHW data (the "
                      "adjoint of Convolution).";
    def.attrs = deconv_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(deconv_attrs);
    def.parse_param = deconv_parse;
    cb_kernel_init(&k, "Deconvolution", cv_forward, cv_backward);
    return cb_register(reg, &def, &k, err);
}
