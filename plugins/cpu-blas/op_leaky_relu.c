/*
 * cpu-blas plugin: LeakyReLU (leaky, elu, selu, gelu, prelu, rrelu).
 *
 * Semantics: MXNet src/operator/leaky_relu-inl.h, leaky_relu.cc and the element
 * functions of src/operator/mshadow_op.h (xelu, elu, selu, gelu and their grads);
 * alias _npx_leaky_relu:
 *   leaky  y = x > 0 ? x : slope x              dx = dy (y > 0 ? 1 : slope)
 *   elu    y = x > 0 ? x : slope (e^x - 1)      dx = dy (y > 0 ? 1 : y + slope)
 *   selu   y = L (x > 0 ? x : A (e^x - 1))      dx = dy (y > 0 ? L : y + L A)
 *          with L = 1.0507009873554804934, A = 1.6732632423543772848
 *   gelu   y = x (1 + erf(x / sqrt 2)) / 2      dx = dy ((1 + erf(x/sqrt 2)) / 2
 *                                                    + x e^(-x^2/2) / sqrt(2 pi))
 *   prelu  y = x > 0 ? x : gamma[c] x           (argument gamma, (C,) with C = data
 *          dx = dy (x > 0 ? 1 : gamma[c]),       axis 1, or (1,) shared; 1-D data: (1,))
 *          dgamma[c] = sum over x <= 0 of dy x
 *   rrelu  y = x > 0 ? x : s x, s ~ U[lower_bound, upper_bound) per element in
 *          training (random resource), s = (lower + upper) / 2 otherwise; s is kept
 *          in the hidden output `mask` when it is requested (an executor without
 *          gradients does not request it); dx = dy (y > 0 ? 1 : mask)
 * Upstream's selu gradient is L (A + y) for y <= 0, which is not the derivative
 * (L A e^x = y + L A); the derivative is used here. Backward reads out_grad and
 * the output (+ mask), or data (gelu), or data and gamma (prelu). Forward may run
 * in place except for prelu and gelu (whose backward needs x). The element
 * functions are plugins/common/mxk_act.h's, shared with the cuda plugin.
 */
#include "cb_tensor.h"
#include "mxk_act.h"

/** rrelu's slopes drawn per chunk when no mask output is requested. */
#define LR_CHUNK 256

/** Parsed attributes. */
typedef struct lr_param {
    int32_t act; /**< enum mxk_lrelu_type */
    float slope, lower, upper;
} lr_param;

/** Attribute schema (MXNet 1.9.1 LeakyReLUParam). */
static const mxk_attr_def lr_attrs[] = {
    MXK_SDK_ATTR("act_type", MXK_ATTR_ENUM, 0, "leaky", MXK_LR_TYPES,
                 "Activation function to apply."),
    MXK_SDK_ATTR("slope", MXK_ATTR_FLOAT, 0, "0.25", NULL, "Init slope for the activation."),
    MXK_SDK_ATTR("lower_bound", MXK_ATTR_FLOAT, 0, "0.125", NULL, "Lower bound of random slope."),
    MXK_SDK_ATTR("upper_bound", MXK_ATTR_FLOAT, 0, "0.334", NULL, "Upper bound of random slope."),
};

/** Parses the attributes; rrelu needs lower_bound <= upper_bound. */
static mxk_status lr_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    lr_param p;
    double s, l, u;
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "act_type", MXK_LR_TYPES, &p.act, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float_finite(attrs, "slope", &s, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float_finite(attrs, "lower_bound", &l, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float_finite(attrs, "upper_bound", &u, err));
    if (p.act == MXK_LR_RRELU && !(l <= u))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'lower_bound' (%g) must not exceed 'upper_bound' (%g)", l,
                             u);
    p.slope = (float)s;
    p.lower = (float)l;
    p.upper = (float)u;
    return cbt_param_new(&p, sizeof p, out, err);
}

/** Arguments: data (+ gamma for prelu). */
static mxk_status lr_list_arguments(const void *param, mxk_name_list *out, mxk_error_sink *err) {
    const lr_param *p = param;
    MXK_SDK_CHECK(mxk_sdk_host()->name_list_add(out, "data", err));
    return p->act == MXK_LR_PRELU ? mxk_sdk_host()->name_list_add(out, "gamma", err) : MXK_OK;
}

/** Outputs: output (+ mask for rrelu). */
static mxk_status lr_list_outputs(const void *param, mxk_name_list *out, mxk_error_sink *err) {
    const lr_param *p = param;
    MXK_SDK_CHECK(mxk_sdk_host()->name_list_add(out, "output", err));
    return p->act == MXK_LR_RRELU ? mxk_sdk_host()->name_list_add(out, "mask", err) : MXK_OK;
}

/** Outputs (and mask) = data shape; gamma (C,) inferred, (1,) accepted. */
static mxk_status lr_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const lr_param *p = param;
    MXK_SDK_CHECK(mxk_sdk_infer_shape_same(in, 1, NULL, out, num_out, NULL, err));
    if (p->act != MXK_LR_PRELU || in[0].ndim == 0)
        return MXK_OK;
    mxk_shape g = mxk_sdk_shape1(in[0].ndim >= 2 ? in[0].dims[1] : 1);
    if (in[1].ndim == 1 && in[1].dims[0] == 1)
        return MXK_OK;
    return mxk_sdk_shape_assign_named(&in[1], &g, "argument", "gamma", err);
}

/** prelu: out_grad, data, gamma; gelu: out_grad, data; others: out_grad, output (+ mask). */
static void lr_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    const lr_param *p = param;
    need_out_grad[0] = 1;
    if (p->act == MXK_LR_PRELU || p->act == MXK_LR_GELU) {
        need_in_data[0] = 1;
        need_in_data[1] = p->act == MXK_LR_PRELU;
        return;
    }
    need_out_data[0] = 1;
    if (p->act == MXK_LR_RRELU)
        need_out_data[1] = 1;
}

/** Forward in place data -> output, except prelu and gelu. */
static uint32_t lr_forward_inplace(const void *param, mxk_inplace_pair *pairs, uint32_t capacity) {
    int32_t act = ((const lr_param *)param)->act;
    return act == MXK_LR_PRELU || act == MXK_LR_GELU ? 0 : cbt_inplace_00(param, pairs, capacity);
}

/** rrelu requests a random stream for forward. */
static mxk_status lr_forward_resources(const void *param, const mxk_shape *in_shapes,
                                       uint32_t num_in, mxk_resource_request *reqs, uint32_t *num,
                                       mxk_error_sink *err) {
    if (((const lr_param *)param)->act != MXK_LR_RRELU) {
        *num = 0;
        return MXK_OK;
    }
    return cbt_resources_random(param, in_shapes, num_in, reqs, num, err);
}

/** The (outer, C, inner) view of prelu's channel axis and gamma's stride (0: shared). */
static void lr_channels(const mxk_shape *s, const mxk_tensor *gamma, uint64_t *outer, uint64_t *c,
                        uint64_t *inner, uint64_t *gstride) {
    if (s->ndim >= 2)
        cbt_split(s, 1, outer, c, inner);
    else
        *outer = 1, *c = 1, *inner = mxk_sdk_shape_count(s);
    *gstride = mxk_sdk_shape_count(&gamma->shape) == 1 ? 0 : 1;
}

/**
 * rrelu's forward: slopes uniform in [lower, upper) in training (into `mask`, or
 * drawn chunk by chunk when the mask is not requested), (lower + upper) / 2
 * otherwise (also written to a requested mask); y = x > 0 ? x : slope x.
 */
static mxk_status lr_rrelu_forward(const mxk_op_ctx *ctx, const lr_param *p, const float *x,
                                   float *y, mxk_op_req req, float *mask, uint64_t n,
                                   mxk_error_sink *err) {
    mxk_random *rng = cbt_random(ctx);
    if (ctx->is_train && rng == NULL)
        return mxk_sdk_error(err, MXK_ERR_STATE, "rrelu: no random resource granted");
    float buf[LR_CHUNK];
    for (uint64_t i = 0; i < n; i += LR_CHUNK) {
        uint64_t m = n - i < LR_CHUNK ? n - i : LR_CHUNK;
        float *s = mask != NULL ? mask + i : buf;
        if (ctx->is_train)
            mxk_sdk_host()->random_uniform(rng, s, m, p->lower, p->upper);
        else
            mxk_sdk_fill_f32(s, 0.5f * (p->lower + p->upper), (size_t)m, MXK_REQ_WRITE);
        for (uint64_t j = 0; j < m; j++)
            mxk_sdk_assign_f32(&y[i + j], x[i + j] > 0.0f ? x[i + j] : s[j] * x[i + j], req);
    }
    return MXK_OK;
}

/** y by act_type and request (rrelu also writes mask). */
static mxk_status lr_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const lr_param *p = param;
    uint32_t nin = p->act == MXK_LR_PRELU ? 2 : 1, nout = p->act == MXK_LR_RRELU ? 2 : 1;
    MXK_SDK_CHECK(cbt_check_forward(args, nin, nout, lr_infer_shape, param, 0, err));
    const float *x = cb_f32(args->in_data[0]);
    float *y = cb_f32(args->out_data[0]);
    mxk_op_req req = args->req[0];
    uint64_t n = mxk_sdk_shape_count(&args->in_data[0]->shape);
    if (p->act == MXK_LR_PRELU) {
        const mxk_tensor *gt = args->in_data[1];
        uint64_t outer, c, inner, gs;
        lr_channels(&args->in_data[0]->shape, gt, &outer, &c, &inner, &gs);
        const float *g = cb_f32(gt);
        for (uint64_t o = 0; o < outer; o++)
            for (uint64_t j = 0; j < c; j++)
                for (uint64_t i = 0; i < inner; i++) {
                    uint64_t e = (o * c + j) * inner + i;
                    mxk_sdk_assign_f32(&y[e], x[e] > 0.0f ? x[e] : g[j * gs] * x[e], req);
                }
        return MXK_OK;
    }
    if (p->act == MXK_LR_RRELU)
        return lr_rrelu_forward(ctx, p, x, y, req, args->req[1] ? cb_f32(args->out_data[1]) : NULL,
                                n, err);
    for (uint64_t e = 0; e < n; e++) /* reads element e before writing it */
        mxk_sdk_assign_f32(&y[e], mxk_lrelu_f(p->act, p->slope, x[e]), req);
    return MXK_OK;
}

/** prelu backward: dx and dgamma by their requests. */
static mxk_status lr_prelu_backward(const mxk_backward_args *args, mxk_error_sink *err) {
    const mxk_tensor *dyt = args->out_grad[0], *xt = args->in_data[0], *gt = args->in_data[1];
    MXK_SDK_CHECK(cb_check_tensor(dyt, "gradient of 'output'", err));
    MXK_SDK_CHECK(cb_check_tensor(xt, "argument 'data'", err));
    MXK_SDK_CHECK(cb_check_tensor(gt, "argument 'gamma'", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], args->req[0], &xt->shape, "data", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[1], args->req[1], &gt->shape, "gamma", err));
    uint64_t outer, c, inner, gs;
    lr_channels(&xt->shape, gt, &outer, &c, &inner, &gs);
    const float *dy = cb_f32(dyt), *x = cb_f32(xt), *g = cb_f32(gt);
    float *dx = args->req[0] ? cb_f32(args->in_grad[0]) : NULL;
    float *dg = args->req[1] ? cb_f32(args->in_grad[1]) : NULL;
    double acc = 0.0;
    for (uint64_t j = 0; j < c; j++) {
        if (gs)
            acc = 0.0;
        for (uint64_t o = 0; o < outer; o++)
            for (uint64_t i = 0; i < inner; i++) {
                uint64_t e = (o * c + j) * inner + i;
                if (x[e] <= 0.0f)
                    acc += (double)dy[e] * x[e];
                if (dx)
                    mxk_sdk_assign_f32(&dx[e], x[e] > 0.0f ? dy[e] : g[j * gs] * dy[e],
                                       args->req[0]);
            }
        if (dg && gs)
            mxk_sdk_assign_f32(&dg[j], (float)acc, args->req[1]);
    }
    if (dg && !gs)
        mxk_sdk_assign_f32(&dg[0], (float)acc, args->req[1]);
    return MXK_OK;
}

/** dx (=|+=) dy * f'(.) from the output (and mask), or from data for gelu. */
static mxk_status lr_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const lr_param *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, p->act == MXK_LR_PRELU ? 2 : 1,
                                           p->act == MXK_LR_RRELU ? 2 : 1, 1, err));
    if (p->act == MXK_LR_PRELU)
        return lr_prelu_backward(args, err);
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dyt = args->out_grad[0];
    const mxk_tensor *yt = p->act == MXK_LR_GELU ? args->in_data[0] : args->out_data[0];
    MXK_SDK_CHECK(cb_check_tensor(dyt, "gradient of 'output'", err));
    MXK_SDK_CHECK(
        cb_check_tensor(yt, p->act == MXK_LR_GELU ? "argument 'data'" : "output 'output'", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req, &yt->shape, "data", err));
    const float *mask = NULL;
    if (p->act == MXK_LR_RRELU) {
        MXK_SDK_CHECK(cb_check_tensor(args->out_data[1], "output 'mask'", err));
        mask = cb_f32(args->out_data[1]);
    }
    uint64_t n = mxk_sdk_shape_count(&yt->shape);
    const float *dy = cb_f32(dyt), *y = cb_f32(yt);
    float *dx = cb_f32(args->in_grad[0]);
    for (uint64_t e = 0; e < n; e++) { /* y is x for gelu */
        float d = p->act == MXK_LR_RRELU ? (y[e] > 0.0f ? 1.0f : mask[e])
                                         : mxk_lrelu_df(p->act, p->slope, y[e]);
        mxk_sdk_assign_f32(&dx[e], d * dy[e], req);
    }
    return MXK_OK;
}

/** Registers LeakyReLU and its CPU kernel. */
mxk_status cb_register_leaky_relu(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_def def;
    mxk_sdk_op_def_init(&def);
    static const char *const aliases[] = {"_npx_leaky_relu", NULL};
    def.description = "Leaky rectified linear units: leaky, elu, selu, gelu, prelu (learned "
                      "slope), rrelu (random slope).";
    def.aliases = aliases;
    def.attrs = lr_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(lr_attrs);
    def.list_arguments = lr_list_arguments;
    def.list_outputs = lr_list_outputs;
    def.num_visible_outputs = cbt_num_visible_1;
    def.parse_param = lr_parse;
    def.free_param = cbt_param_free;
    def.infer_shape = lr_infer_shape;
    def.infer_type = cbt_infer_type_f32;
    def.backward_dependency = lr_backward_dependency;
    def.forward_resources = lr_forward_resources;
    def.forward_inplace = lr_forward_inplace;
    def.backward_inplace = cbt_inplace_00;
    return cbt_register(reg, &def, "LeakyReLU", lr_forward, lr_backward, 0, err);
}
