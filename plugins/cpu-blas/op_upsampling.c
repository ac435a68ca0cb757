/*
 * cpu-blas plugin: UpSampling (nearest, bilinear), NCHW.
 *
 * Semantics: MXNet src/operator/nn/upsampling-inl.h, upsampling.cc.
 * nearest: arguments arg0..arg{num_args-1}; the output is (N, C', H0*scale,
 *   W0*scale) with H0, W0 from arg0; input i is repeated by oh / H_i (which must
 *   divide). multi_input_mode concat stacks the channels (C' = sum C_i), sum adds
 *   them (all C_i equal). Backward sums dy over each block; it reads out_grad only
 *   (shapes come from the gradient tensors).
 * bilinear: arguments data and weight whatever num_args says (upstream's
 *   set_num_inputs is 2; its Python front end writes num_args=1 for
 *   UpSampling(data, sample_type='bilinear', ...) and creates the weight
 *   variable itself), num_filter must equal
 *   the channels C; upstream runs a Deconvolution with kernel k = 2*scale -
 *   scale%2, stride scale, pad ceil((scale-1)/2), num_group = num_filter, no bias,
 *   and weight (C, 1, k, k) (usually filled with the bilinear kernel by the
 *   Bilinear initializer). Here that depthwise transposed convolution is computed
 *   directly: y[n,c, h*s-p+i, w*s-p+j] += x[n,c,h,w] W[c,0,i,j]. Backward gives dx
 *   and dW and reads out_grad, data and weight.
 */
#include <string.h>

#include "cb_tensor.h"

/** Parsed attributes of UpSampling. */
typedef struct us_param {
    int64_t scale;
    int64_t num_filter;
    int32_t bilinear; /**< sample_type */
    int32_t sum;      /**< multi_input_mode == sum */
    int64_t num_args; /**< number of inputs (bilinear: 2) */
} us_param;

static const char *const us_bil_args[] = {"data", "weight", NULL};
static const char *const us_outs[] = {"output", NULL};

/** Attribute schema (MXNet 1.9.1 UpSamplingParam). */
static const mxk_attr_def us_attrs[] = {
    MXK_SDK_ATTR("scale", MXK_ATTR_INT, 1, NULL, NULL, "Up sampling scale."),
    MXK_SDK_ATTR("num_filter", MXK_ATTR_INT, 0, "0", NULL,
                 "bilinear: the number of channels (the deconvolution's filters)."),
    MXK_SDK_ATTR("sample_type", MXK_ATTR_ENUM, 1, NULL, "nearest|bilinear", "Up sampling method."),
    MXK_SDK_ATTR("multi_input_mode", MXK_ATTR_ENUM, 0, "concat", "concat|sum",
                 "nearest with several inputs: concatenate channels or sum."),
    MXK_SDK_ATTR("num_args", MXK_ATTR_INT, 1, NULL, NULL,
                 "Number of inputs (bilinear: 2, data and weight)."),
    MXK_SDK_ATTR("workspace", MXK_ATTR_INT, 0, "512", NULL, "Workspace in MB (unused)."),
};

/** Parses and validates the attributes. */
static mxk_status us_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    us_param p;
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "scale", 1, 4096, &p.scale, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "num_filter", 0, INT32_MAX, &p.num_filter, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "sample_type", "nearest|bilinear", &p.bilinear, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "multi_input_mode", "concat|sum", &p.sum, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "num_args", 1, p.bilinear ? INT32_MAX : CBT_MAX_IO,
                                         &p.num_args, err));
    if (p.bilinear) /* upstream's set_num_inputs: always data and weight */
        p.num_args = 2;
    return cbt_param_new(&p, sizeof p, out, err);
}

/** The argument names of bilinear (data, weight); NULL for nearest, whose messages number them. */
static const char *const *us_names(const us_param *p) {
    return p->bilinear ? us_bil_args : NULL;
}

/** Argument names: data, weight (bilinear) or arg0.. (nearest). */
static mxk_status us_list_arguments(const void *param, mxk_name_list *out, mxk_error_sink *err) {
    const us_param *p = param;
    if (!p->bilinear)
        return cbt_list_numbered(out, "arg", p->num_args, err);
    for (int64_t i = 0; i < p->num_args; i++)
        MXK_SDK_CHECK(mxk_sdk_host()->name_list_add(out, us_bil_args[i], err));
    return MXK_OK;
}

/** Bilinear kernel size and pad (upstream's deconvolution). */
static void us_kernel(const us_param *p, int64_t *k, int64_t *pad) {
    *k = 2 * p->scale - p->scale % 2;
    *pad = (p->scale - 1 + 1) / 2; /* ceil((scale - 1) / 2) */
}

/** Shape inference (see the file comment). */
static mxk_status us_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const us_param *p = param;
    char s[MXK_SDK_SHAPE_STR_MAX], what[64];
    if (num_in != (uint32_t)p->num_args || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "UpSampling expects %lld arguments and 1 output, got %u and %u",
                             (long long)p->num_args, (unsigned)num_in, (unsigned)num_out);
    const mxk_shape *d = &in[0];
    if (d->ndim == 0)
        return MXK_OK;
    if (d->ndim != 4)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "argument '%s': UpSampling needs 4-D data, got %s",
                             p->bilinear ? "data" : "arg0", mxk_sdk_shape_format(d, s, sizeof s));
    MXK_SDK_CHECK(mxk_sdk_shapes_check_count(in, num_in, "argument", us_names(p), err));
    int64_t oh, ow, C = d->dims[1];
    MXK_SDK_CHECK(
        mxk_sdk_dim_mul(d->dims[2], p->scale, &oh, "output height (height * scale)", err));
    MXK_SDK_CHECK(mxk_sdk_dim_mul(d->dims[3], p->scale, &ow, "output width (width * scale)", err));
    if (p->bilinear) {
        if (C != 0 && C != p->num_filter)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "argument 'data': bilinear UpSampling needs num_filter (%lld) = "
                                 "channels (%lld)",
                                 (long long)p->num_filter, (long long)C);
        int64_t k, pad;
        us_kernel(p, &k, &pad);
        int64_t wd[4] = {C, 1, k, k};
        mxk_shape w = mxk_sdk_shape_from(wd, 4);
        MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&in[1], &w, "argument", "weight", err));
    } else {
        for (uint32_t i = 1; i < num_in; i++) {
            snprintf(what, sizeof what, "arg%u", (unsigned)i);
            if (in[i].ndim == 0)
                return MXK_OK;
            if (in[i].ndim != 4 || in[i].dims[0] != d->dims[0] ||
                (in[i].dims[2] > 0 && oh % in[i].dims[2] != 0) ||
                (in[i].dims[3] > 0 && ow % in[i].dims[3] != 0) || (p->sum && in[i].dims[1] != C))
                return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                     "argument '%s': shape %s cannot be up-sampled to %lldx%lld "
                                     "beside arg0",
                                     what, mxk_sdk_shape_format(&in[i], s, sizeof s), (long long)oh,
                                     (long long)ow);
            if (!p->sum)
                MXK_SDK_CHECK(mxk_sdk_dim_add(C, in[i].dims[1], &C, "output channels", err));
        }
    }
    int64_t od[4] = {d->dims[0], C, oh, ow};
    mxk_shape y = mxk_sdk_shape_from(od, 4);
    return mxk_sdk_shape_assign_named(&out[0], &y, "output", "output", err);
}

/** All float32. */
static mxk_status us_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in, num_in, us_names(param), out, num_out,
                                      us_outs, aux, num_aux, err);
}

/** nearest: out_grad only; bilinear: out_grad, data and weight. */
static void us_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    const us_param *p = param;
    need_out_grad[0] = 1;
    if (p->bilinear)
        need_in_data[0] = need_in_data[1] = 1;
}

/** Forward: nearest replication or the depthwise transposed convolution. */
static mxk_status us_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const us_param *p = param;
    MXK_SDK_CHECK(cbt_check_forward(args, (uint32_t)p->num_args, 1, us_infer_shape, param, 0, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_shape *ys = &args->out_data[0]->shape;
    const int64_t N = ys->dims[0], CO = ys->dims[1], OH = ys->dims[2], OW = ys->dims[3];
    float *y = cb_f32(args->out_data[0]);
    if (req != MXK_REQ_ADD)
        memset(y, 0, sizeof(float) * (size_t)(N * CO * OH * OW));
    if (p->bilinear) {
        const mxk_shape *d = &args->in_data[0]->shape;
        const int64_t C = d->dims[1], H = d->dims[2], W = d->dims[3];
        int64_t k, pad;
        us_kernel(p, &k, &pad);
        const float *x = cb_f32(args->in_data[0]), *w = cb_f32(args->in_data[1]);
        for (int64_t nc = 0; nc < N * C; nc++) {
            const float *xp = x + nc * H * W, *wp = w + (nc % C) * k * k;
            float *yp = y + nc * OH * OW;
            for (int64_t h = 0; h < H; h++)
                for (int64_t ww = 0; ww < W; ww++) {
                    float v = xp[h * W + ww];
                    for (int64_t i = 0; i < k; i++) {
                        int64_t oh = h * p->scale - pad + i;
                        if (oh < 0 || oh >= OH)
                            continue;
                        for (int64_t j = 0; j < k; j++) {
                            int64_t ow = ww * p->scale - pad + j;
                            if (ow >= 0 && ow < OW)
                                yp[oh * OW + ow] += v * wp[i * k + j];
                        }
                    }
                }
        }
        return MXK_OK;
    }
    int64_t coff = 0;
    for (int64_t a = 0; a < p->num_args; a++) {
        const mxk_shape *d = &args->in_data[a]->shape;
        const int64_t C = d->dims[1], H = d->dims[2], W = d->dims[3];
        const int64_t sh = OH / H, sw = OW / W;
        const float *x = cb_f32(args->in_data[a]);
        for (int64_t n = 0; n < N; n++)
            for (int64_t c = 0; c < C; c++) {
                const float *xp = x + (n * C + c) * H * W;
                float *yp = y + (n * CO + coff + c) * OH * OW;
                for (int64_t oh = 0; oh < OH; oh++)
                    for (int64_t ow = 0; ow < OW; ow++)
                        yp[oh * OW + ow] += xp[(oh / sh) * W + ow / sw];
            }
        if (!p->sum)
            coff += C;
    }
    return MXK_OK;
}

/** Backward (see the file comment). */
static mxk_status us_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const us_param *p = param;
    uint32_t ni = (uint32_t)p->num_args;
    MXK_SDK_CHECK(cb_check_backward_counts(args, ni, 1, 1, err));
    MXK_SDK_CHECK(cb_check_tensor(args->out_grad[0], "gradient of 'output'", err));
    const mxk_shape *ys = &args->out_grad[0]->shape;
    if (ys->ndim != 4)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "gradient of 'output' must be 4-D");
    const int64_t N = ys->dims[0], CO = ys->dims[1], OH = ys->dims[2], OW = ys->dims[3];
    const float *dy = cb_f32(args->out_grad[0]);
    if (p->bilinear) {
        MXK_SDK_CHECK(cb_check_tensor(args->in_data[0], "argument 'data'", err));
        MXK_SDK_CHECK(cb_check_tensor(args->in_data[1], "argument 'weight'", err));
        mxk_shape in[2] = {args->in_data[0]->shape, mxk_sdk_shape_unknown()};
        mxk_shape o = mxk_sdk_shape_unknown();
        MXK_SDK_CHECK(us_infer_shape(p, in, 2, &o, 1, NULL, 0, err));
        if (!mxk_sdk_shape_equal(&o, ys) || !mxk_sdk_shape_equal(&in[1], &args->in_data[1]->shape))
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "UpSampling backward: inconsistent shapes");
        MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], args->req[0], &in[0], "data", err));
        MXK_SDK_CHECK(cb_check_grad(args->in_grad[1], args->req[1], &in[1], "weight", err));
        const int64_t C = in[0].dims[1], H = in[0].dims[2], W = in[0].dims[3];
        int64_t k, pad;
        us_kernel(p, &k, &pad);
        const float *x = cb_f32(args->in_data[0]), *w = cb_f32(args->in_data[1]);
        float *dx = args->req[0] != MXK_REQ_NULL ? cb_f32(args->in_grad[0]) : NULL;
        float *dw = args->req[1] != MXK_REQ_NULL ? cb_f32(args->in_grad[1]) : NULL;
        if (dw != NULL && args->req[1] != MXK_REQ_ADD)
            memset(dw, 0, sizeof(float) * (size_t)(C * k * k));
        for (int64_t nc = 0; nc < N * C; nc++) {
            const float *xp = x + nc * H * W, *wp = w + (nc % C) * k * k;
            const float *gp = dy + nc * OH * OW;
            float *dwp = dw ? dw + (nc % C) * k * k : NULL;
            for (int64_t h = 0; h < H; h++)
                for (int64_t ww = 0; ww < W; ww++) {
                    float acc = 0.0f, v = xp[h * W + ww];
                    for (int64_t i = 0; i < k; i++) {
                        int64_t oh = h * p->scale - pad + i;
                        if (oh < 0 || oh >= OH)
                            continue;
                        for (int64_t j = 0; j < k; j++) {
                            int64_t ow = ww * p->scale - pad + j;
                            if (ow < 0 || ow >= OW)
                                continue;
                            float g = gp[oh * OW + ow];
                            acc += g * wp[i * k + j];
                            if (dwp)
                                dwp[i * k + j] += g * v;
                        }
                    }
                    if (dx)
                        mxk_sdk_assign_f32(&dx[nc * H * W + h * W + ww], acc, args->req[0]);
                }
        }
        return MXK_OK;
    }
    int64_t coff = 0;
    for (uint32_t a = 0; a < ni; a++) {
        const mxk_tensor *g = args->in_grad[a];
        if (g == NULL || g->shape.ndim != 4)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "UpSampling backward: the gradient tensor of 'arg%u' (its shape) "
                                 "is needed",
                                 (unsigned)a);
        const int64_t C = g->shape.dims[1], H = g->shape.dims[2], W = g->shape.dims[3];
        if (g->shape.dims[0] != N || OH % H != 0 || OW % W != 0 || coff + C > CO)
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "UpSampling backward: inconsistent shapes");
        mxk_op_req req = args->req[a];
        if (req != MXK_REQ_NULL) {
            MXK_SDK_CHECK(cb_check_tensor(g, "gradient of an input", err));
            const int64_t sh = OH / H, sw = OW / W;
            float *dx = cb_f32(g);
            for (int64_t n = 0; n < N; n++)
                for (int64_t c = 0; c < C; c++) {
                    const float *gp = dy + (n * CO + coff + c) * OH * OW;
                    float *dp = dx + (n * C + c) * H * W;
                    for (int64_t h = 0; h < H; h++)
                        for (int64_t w = 0; w < W; w++) {
                            float s = 0.0f;
                            for (int64_t i = 0; i < sh; i++)
                                for (int64_t j = 0; j < sw; j++)
                                    s += gp[(h * sh + i) * OW + w * sw + j];
                            mxk_sdk_assign_f32(&dp[h * W + w], s, req);
                        }
                }
        }
        if (!p->sum)
            coff += C;
    }
    return MXK_OK;
}

/** Registers UpSampling and its CPU kernel. */
mxk_status cb_register_upsampling(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_def def;
    mxk_sdk_op_def_init(&def);
    def.name = "UpSampling";
    def.description = "Nearest-neighbour or bilinear (fixed-weight deconvolution) up-sampling.";
    def.attrs = us_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(us_attrs);
    def.outputs = us_outs;
    def.parse_param = us_parse;
    def.free_param = cbt_param_free;
    def.list_arguments = us_list_arguments;
    def.infer_shape = us_infer_shape;
    def.infer_type = us_infer_type;
    def.backward_dependency = us_backward_dependency;
    mxk_op_kernel_def k;
    cb_kernel_init(&k, "UpSampling", us_forward, us_backward);
    return cb_register(reg, &def, &k, err);
}
