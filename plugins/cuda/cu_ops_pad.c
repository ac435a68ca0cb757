/*
 * cuda plugin: Pad and UpSampling (nearest) on the GPU, for the operators cpu-blas
 * defines (op_init_pad.c, op_upsampling.c).
 *
 * Semantics: MXNet src/operator/pad-inl.h / pad.cu (modes constant, edge, reflect
 * over 4-D or 5-D data; the source index per dim is mxk_index.h's, shared with
 * cpu-blas; the gradient adds each output gradient element onto the input element
 * it read, with atomicAdd where several read one) and
 * src/operator/nn/upsampling-inl.h (nearest: input i repeated by OH / H_i along H
 * and OW / W_i along W into its channel block (multi_input_mode concat) or into
 * all channels (sum); as gather views, the gradient a deterministic block sum;
 * bilinear: data and weight, the depthwise transposed convolution of
 * cu_kern_upsample.h, float32). Pad's forward takes every dtype, the rest float32.
 */
#include "cu_kern_upsample.h"
#include "cu_layout.h"
#include "mxk_fill_value.h"
#include "mxk_index.h"
#include "mxk_index_attr.h"

/** Most pad_width values (2 per dim of a 5-D input). */
#define PD_MAX_WIDTHS 10

/** Parsed attributes of Pad. */
typedef struct cu_pd_param {
    int32_t mode; /**< mxk_pad_mode */
    int32_t nwidth;
    int64_t width[PD_MAX_WIDTHS];
    double value; /**< constant_value */
} cu_pd_param;

/** Pad's geometry for input shape `in`, output shape `out`. */
static mxk_status pd_geom(const cu_pd_param *p, const mxk_shape *in, const mxk_shape *out,
                          cu_pad_geom *g, mxk_error_sink *err) {
    if (in->ndim != out->ndim || p->nwidth != 2 * in->ndim)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "Pad: Input shape vs padding spec mismatch: %d dims need %d widths, "
                             "got %d",
                             (int)in->ndim, 2 * (int)in->ndim, (int)p->nwidth);
    g->ndim = in->ndim;
    g->mode = p->mode;
    for (int32_t d = 0; d < in->ndim; d++) {
        g->out_dims[d] = out->dims[d];
        g->in_dims[d] = in->dims[d];
        g->before[d] = p->width[2 * d];
        if (out->dims[d] != in->dims[d] + p->width[2 * d] + p->width[2 * d + 1])
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "Pad: output dim %d does not match the "
                                 "padding",
                                 (int)d);
    }
    return MXK_OK;
}

/** Pad forward: out (=|+=) the padded input. */
static mxk_status pd_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_pd_param *p = param;
    if (args->num_in != 1 || args->num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "Pad: expected 1 argument");
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *x = args->in_data[0], *y = args->out_data[0];
    MXK_SDK_CHECK(cu_need(x, "Pad", "the input", err));
    MXK_SDK_CHECK(cu_need(y, "Pad", "the output", err));
    if (x->dtype != y->dtype)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "Pad: output: expected %s, got %s",
                             mxk_sdk_dtype_name(x->dtype), mxk_sdk_dtype_name(y->dtype));
    cu_pad_geom g;
    uint64_t fill = 0;
    MXK_SDK_CHECK(pd_geom(p, &x->shape, &y->shape, &g, err));
    if (mxk_fill_pattern(x->dtype, p->value, &fill) == 0)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "Pad: unsupported dtype %s",
                             mxk_sdk_dtype_name(x->dtype));
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(cu_launch_pad(&g, x->data, y->data, x->dtype, fill, args->req[0] == MXK_REQ_ADD,
                           cu_stream(ctx)),
             "Pad", err);
    return MXK_OK;
}

/** Pad backward: the output gradient summed onto the input positions read. */
static mxk_status pd_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_pd_param *p = param;
    if (args->num_in != 1 || args->num_out_grad != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "Pad: expected 1 argument");
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dy = args->out_grad[0], *dx = args->in_grad[0];
    MXK_SDK_CHECK(cu_need(dy, "Pad", "the output gradient", err));
    MXK_SDK_CHECK(cu_need(dx, "Pad", "the input gradient", err));
    if (dy->dtype != MXK_FLOAT32 || dx->dtype != MXK_FLOAT32)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "Pad: gradients: expected float32");
    cu_pad_geom g;
    MXK_SDK_CHECK(pd_geom(p, &dx->shape, &dy->shape, &g, err));
    MXK_SDK_CHECK(cu_enter(ctx, err));
    if (req != MXK_REQ_ADD)
        CU_CHECK(cudaMemsetAsync(dx->data, 0, (size_t)cu_shape_size(&dx->shape) * sizeof(float),
                                 cu_stream(ctx)),
                 "cudaMemsetAsync", err);
    CU_CHECK(cu_launch_pad_grad(&g, dy->data, dx->data, cu_stream(ctx)), "Pad backward", err);
    return MXK_OK;
}

/** parse_param of Pad: mode, pad_width, constant_value. */
static mxk_status pd_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_pd_param p = {0};
    const char *raw;
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "mode", "constant|edge|reflect", &p.mode, err));
    MXK_SDK_CHECK(mxk_sdk_attr_string(attrs, "pad_width", &raw, err));
    MXK_SDK_CHECK(mxk_idx_attr_widths("pad_width", raw, PD_MAX_WIDTHS, &p.nwidth, p.width, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "constant_value", &p.value, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

/** Parsed attributes of UpSampling. */
typedef struct cu_us_param {
    int64_t num_args; /**< bilinear: 2 (data, weight) */
    int32_t sum;      /**< nearest: multi_input_mode sum */
    int32_t bilinear; /**< sample_type */
    int64_t scale;
} cu_us_param;

/** The bilinear geometry of data shape d (N, C, H, W); MXK_ERR_SHAPE unless 4-D. */
static mxk_status us_bilinear_geom(const cu_us_param *p, const mxk_shape *d, cu_bilinear_geom *g,
                                   mxk_error_sink *err) {
    if (d->ndim != 4)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "UpSampling: needs 4-D data, got %d dims",
                             (int)d->ndim);
    *g = (cu_bilinear_geom){.n = d->dims[0],
                            .c = d->dims[1],
                            .h = d->dims[2],
                            .w = d->dims[3],
                            .scale = p->scale,
                            .k = 2 * p->scale - p->scale % 2,
                            .pad = p->scale / 2}; /* ceil((scale - 1) / 2) */
    return MXK_OK;
}

/** Fails unless t is present and float32. */
static mxk_status us_need_f32(const mxk_tensor *t, const char *what, mxk_error_sink *err) {
    MXK_SDK_CHECK(cu_need(t, "UpSampling", what, err));
    if (t->dtype != MXK_FLOAT32)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "UpSampling: %s: expected float32, got %s", what,
                             mxk_sdk_dtype_name(t->dtype));
    return MXK_OK;
}

/** bilinear forward: y (=|+=) the transposed convolution of data with weight. */
static mxk_status us_bilinear_forward(const mxk_op_ctx *ctx, const cu_us_param *p,
                                      const mxk_forward_args *args, mxk_error_sink *err) {
    const mxk_tensor *x = args->in_data[0], *w = args->in_data[1], *y = args->out_data[0];
    MXK_SDK_CHECK(us_need_f32(x, "data", err));
    MXK_SDK_CHECK(us_need_f32(w, "weight", err));
    MXK_SDK_CHECK(us_need_f32(y, "the output", err));
    cu_bilinear_geom g;
    MXK_SDK_CHECK(us_bilinear_geom(p, &x->shape, &g, err));
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(cu_launch_bilinear(&g, x->data, w->data, y->data, args->req[0] == MXK_REQ_ADD,
                                cu_stream(ctx)),
             "UpSampling bilinear", err);
    return MXK_OK;
}

/** bilinear backward: the data and weight gradients by their requests. */
static mxk_status us_bilinear_backward(const mxk_op_ctx *ctx, const cu_us_param *p,
                                       const mxk_backward_args *args, mxk_error_sink *err) {
    const mxk_tensor *dy = args->out_grad[0], *x = args->in_data[0], *w = args->in_data[1];
    MXK_SDK_CHECK(us_need_f32(dy, "the output gradient", err));
    MXK_SDK_CHECK(us_need_f32(x, "data", err));
    MXK_SDK_CHECK(us_need_f32(w, "weight", err));
    cu_bilinear_geom g;
    MXK_SDK_CHECK(us_bilinear_geom(p, &x->shape, &g, err));
    MXK_SDK_CHECK(cu_enter(ctx, err));
    if (args->req[0] != MXK_REQ_NULL) {
        MXK_SDK_CHECK(us_need_f32(args->in_grad[0], "the data gradient", err));
        CU_CHECK(cu_launch_bilinear_dx(&g, dy->data, w->data, args->in_grad[0]->data,
                                       args->req[0] == MXK_REQ_ADD, cu_stream(ctx)),
                 "UpSampling bilinear data gradient", err);
    }
    if (args->req[1] != MXK_REQ_NULL) {
        MXK_SDK_CHECK(us_need_f32(args->in_grad[1], "the weight gradient", err));
        CU_CHECK(cu_launch_bilinear_dw(&g, dy->data, x->data, args->in_grad[1]->data,
                                       args->req[1] == MXK_REQ_ADD, cu_stream(ctx)),
                 "UpSampling bilinear weight gradient", err);
    }
    return MXK_OK;
}

/**
 * The view of input `a` (N, C, H, W) into the output (N, CO, OH, OW) at channel
 * offset coff: dims (N, C, H, OH / H, W, OW / W) reading (.., 0, 1, 0).
 */
static mxk_status us_view(const mxk_shape *in, const mxk_shape *out, int64_t coff, cu_view *v,
                          mxk_error_sink *err) {
    if (in->ndim != 4 || out->ndim != 4 || in->dims[0] != out->dims[0] ||
        out->dims[2] % in->dims[2] != 0 || out->dims[3] % in->dims[3] != 0 ||
        coff + in->dims[1] > out->dims[1])
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "UpSampling: inconsistent shapes");
    int64_t C = in->dims[1], H = in->dims[2], W = in->dims[3];
    int64_t CO = out->dims[1], OH = out->dims[2], OW = out->dims[3];
    int64_t sh = OH / H, sw = OW / W;
    cu_view_init(v);
    v->dst_off = coff * OH * OW;
    cu_view_push(v, in->dims[0], C * H * W, CO * OH * OW);
    cu_view_push(v, C, H * W, OH * OW);
    cu_view_push(v, H, W, sh * OW);
    cu_view_push(v, sh, 0, OW);
    cu_view_push(v, W, 1, sw);
    cu_view_push(v, sw, 0, 1);
    return MXK_OK;
}

/**
 * UpSampling forward: nearest repeats each input into its channel block (concat)
 * or adds it (sum); bilinear convolves.
 */
static mxk_status us_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_us_param *p = param;
    if (args->num_in != (uint32_t)p->num_args || args->num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "UpSampling: expected %lld arguments",
                             (long long)p->num_args);
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    if (p->bilinear)
        return us_bilinear_forward(ctx, p, args, err);
    const mxk_tensor *y = args->out_data[0];
    MXK_SDK_CHECK(cu_need(y, "UpSampling", "the output", err));
    int64_t coff = 0;
    for (uint32_t a = 0; a < args->num_in; a++) {
        const mxk_tensor *x = args->in_data[a];
        cu_view v;
        MXK_SDK_CHECK(cu_need(x, "UpSampling", "an input", err));
        MXK_SDK_CHECK(us_view(&x->shape, &y->shape, coff, &v, err));
        /* sum: the inputs after the first add onto it */
        MXK_SDK_CHECK(cu_view_copy(ctx, &v, x, y, p->sum && a > 0 ? MXK_REQ_ADD : req, err));
        if (!p->sum)
            coff += x->shape.dims[1];
    }
    return MXK_OK;
}

/**
 * UpSampling backward: nearest sums each input's blocks of the output gradient;
 * bilinear gives the data and weight gradients.
 */
static mxk_status us_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_us_param *p = param;
    if (args->num_in != (uint32_t)p->num_args || args->num_out_grad != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "UpSampling: expected %lld arguments",
                             (long long)p->num_args);
    if (p->bilinear)
        return us_bilinear_backward(ctx, p, args, err);
    const mxk_tensor *dy = args->out_grad[0];
    MXK_SDK_CHECK(cu_need(dy, "UpSampling", "the output gradient", err));
    int64_t coff = 0;
    for (uint32_t a = 0; a < args->num_in; a++) {
        const mxk_tensor *g = args->in_grad[a];
        if (g == NULL)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "UpSampling backward: the gradient tensor of 'arg%u' (its shape) "
                                 "is needed",
                                 (unsigned)a);
        if (args->req[a] != MXK_REQ_NULL) {
            cu_view f, b;
            MXK_SDK_CHECK(cu_need(g, "UpSampling", "an input gradient", err));
            MXK_SDK_CHECK(us_view(&g->shape, &dy->shape, coff, &f, err));
            cu_view_grad(&f, &b);
            MXK_SDK_CHECK(cu_view_sum(ctx, &b, dy, g, args->req[a], 0, err));
        }
        if (!p->sum)
            coff += g->shape.dims[1];
    }
    return MXK_OK;
}

/** parse_param of UpSampling: sample_type, scale, multi_input_mode, num_args. */
static mxk_status us_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_us_param p = {0};
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "sample_type", "nearest|bilinear", &p.bilinear, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "scale", &p.scale, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "multi_input_mode", "concat|sum", &p.sum, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "num_args", &p.num_args, err));
    if (p.bilinear) /* upstream's set_num_inputs: always data and weight */
        p.num_args = 2;
    return cu_param_dup(&p, sizeof p, out, err);
}

mxk_status cu_register_pad(mxk_registrar *reg, mxk_error_sink *err) {
    MXK_SDK_CHECK(cu_register_simple(reg, "Pad", pd_parse, pd_forward, pd_backward, err));
    return cu_register_simple(reg, "UpSampling", us_parse, us_forward, us_backward, err);
}
