/*
 * cuda plugin: Activation and LeakyReLU kernels (own CUDA kernels,
 * cu_kern_act.cu, on the element functions cpu-blas uses too,
 * plugins/common/mxk_act.h, so both backends compute one formula).
 *
 * Semantics are the operators' (cpu-blas op_activation.c, op_leaky_relu.c;
 * upstream MXNet src/operator/nn/activation-inl.h, activation.cu,
 * src/operator/leaky_relu-inl.h, leaky_relu.cu, src/operator/mshadow_op.h).
 * Every act_type is covered: Activation relu, sigmoid, tanh, softrelu, softsign;
 * LeakyReLU leaky, elu, selu, gelu, prelu (gamma (C,) or (1,) shared; dgamma
 * summed per channel in double) and rrelu (training slopes from the random
 * resource with the host's uniform mapping, so a seed gives cpu-blas's slopes).
 * Data is float32 (the operators infer nothing else). Every request is handled
 * (ADD included); forward and backward may run in place where the operators
 * declare it.
 */
#include "cu_kern_layer.h"
#include "cu_blas_util.h"
#include "cu_layer.h"
#include "cu_random.h"
#include "mxk_act.h"

/** Parsed attributes of either operator (slope and bounds: LeakyReLU only). */
typedef struct cu_act_param {
    int32_t leaky; /**< LeakyReLU (act: enum mxk_lrelu_type), else Activation (enum mxk_act_type) */
    int32_t act;
    float slope, lower, upper;
} cu_act_param;

/** Activation's act_type. Errors: mxk_sdk_attr_enum's. */
static mxk_status act_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_act_param p = {0};
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "act_type", MXK_ACT_TYPES, &p.act, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

/** LeakyReLU's act_type, slope, lower_bound, upper_bound. Errors: the attribute readers'. */
static mxk_status lrelu_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_act_param p = {.leaky = 1};
    double s, l, u;
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "act_type", MXK_LR_TYPES, &p.act, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "slope", &s, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "lower_bound", &l, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "upper_bound", &u, err));
    p.slope = (float)s;
    p.lower = (float)l;
    p.upper = (float)u;
    return cu_param_dup(&p, sizeof p, out, err);
}

/** The operator's name, for messages. */
static const char *act_name(const cu_act_param *p) {
    return p->leaky ? "LeakyReLU" : "Activation";
}

/** The (outer, c, inner) view of prelu's channel axis 1 and gamma's stride (0: shared). */
static void act_prelu_view(const mxk_shape *s, const mxk_tensor *gamma, uint64_t *outer,
                           uint64_t *c, uint64_t *inner, uint64_t *gs) {
    uint64_t n = (uint64_t)cu_shape_size(s);
    *c = s->ndim >= 2 ? (uint64_t)s->dims[1] : 1;
    *outer = s->ndim >= 2 ? (uint64_t)s->dims[0] : 1;
    *inner = *outer * *c > 0 ? n / (*outer * *c) : 0;
    *gs = cu_shape_size(&gamma->shape) == 1 ? 0 : 1;
}

/**
 * rrelu forward: the slopes (drawn in training, whatever is requested, as cpu-blas
 * draws them) applied to y and stored in the mask, each when requested.
 */
static mxk_status act_rrelu_forward(const mxk_op_ctx *ctx, const cu_act_param *p,
                                    const mxk_forward_args *args, uint64_t n, mxk_error_sink *err) {
    float *mask = NULL;
    if (args->num_out > 1 && args->req[1] != MXK_REQ_NULL) {
        MXK_SDK_CHECK(cu_check_tensor(args->out_data[1], n, "LeakyReLU", "output 'mask'", err));
        mask = cu_f32(args->out_data[1]);
    }
    cu_rrelu_draw d = {.train = ctx->is_train, .lower = p->lower, .upper = p->upper};
    if (d.train) {
        mxk_random *rng = cu_random_stream(ctx, "LeakyReLU rrelu", err);
        if (rng == NULL)
            return MXK_ERR_STATE;
        d.pos = cu_random_reserve(rng, (n + 3) / 4);
    }
    float *y = args->req[0] != MXK_REQ_NULL ? cu_f32(args->out_data[0]) : NULL;
    if (y == NULL && mask == NULL)
        return MXK_OK;
    if (y != NULL)
        MXK_SDK_CHECK(cu_check_tensor(args->out_data[0], n, "LeakyReLU", "output 'output'", err));
    return cu_check(cu_launch_rrelu_forward(y, mask, cu_f32(args->in_data[0]), n, d, args->req[0],
                                            cu_stream(ctx)),
                    "rrelu forward", err);
}

/** Forward of both operators by act_type and request. */
static mxk_status act_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_act_param *p = param;
    MXK_SDK_CHECK(cu_enter(ctx, err));
    const mxk_tensor *xt = args->in_data[0];
    uint64_t n = (uint64_t)cu_shape_size(&xt->shape);
    MXK_SDK_CHECK(cu_check_tensor(xt, n, act_name(p), "argument 'data'", err));
    if (p->leaky && p->act == MXK_LR_RRELU)
        return act_rrelu_forward(ctx, p, args, n, err);
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(cu_check_tensor(args->out_data[0], n, act_name(p), "output 'output'", err));
    float *y = cu_f32(args->out_data[0]);
    const float *x = cu_f32(xt);
    cudaStream_t st = cu_stream(ctx);
    if (!p->leaky)
        return cu_check(cu_launch_act_forward(p->act, y, x, n, req, st), "Activation forward", err);
    if (p->act != MXK_LR_PRELU)
        return cu_check(cu_launch_lrelu_forward(p->act, p->slope, y, x, n, req, st),
                        "LeakyReLU forward", err);
    const mxk_tensor *gt = args->in_data[1];
    uint64_t outer, c, inner, gs;
    act_prelu_view(&xt->shape, gt, &outer, &c, &inner, &gs);
    MXK_SDK_CHECK(cu_check_tensor(gt, gs ? c : 1, act_name(p), "argument 'gamma'", err));
    return cu_check(cu_launch_prelu_forward(y, x, cu_f32(gt), c, inner, gs, n, req, st),
                    "prelu forward", err);
}

/** prelu backward: dgamma first (dx may overwrite dy in place), then dx. */
static mxk_status act_prelu_backward(const mxk_op_ctx *ctx, const mxk_backward_args *args,
                                     mxk_error_sink *err) {
    const mxk_tensor *xt = args->in_data[0], *gt = args->in_data[1];
    uint64_t n = (uint64_t)cu_shape_size(&xt->shape), outer, c, inner, gs;
    MXK_SDK_CHECK(cu_check_tensor(xt, n, "LeakyReLU", "argument 'data'", err));
    MXK_SDK_CHECK(cu_check_tensor(args->out_grad[0], n, "LeakyReLU", "gradient of 'output'", err));
    act_prelu_view(&xt->shape, gt, &outer, &c, &inner, &gs);
    MXK_SDK_CHECK(cu_check_tensor(gt, gs ? c : 1, "LeakyReLU", "argument 'gamma'", err));
    const float *dy = cu_f32(args->out_grad[0]), *x = cu_f32(xt), *g = cu_f32(gt);
    cudaStream_t st = cu_stream(ctx);
    if (args->req[1] != MXK_REQ_NULL) {
        MXK_SDK_CHECK(
            cu_check_tensor(args->in_grad[1], gs ? c : 1, "LeakyReLU", "gradient of 'gamma'", err));
        MXK_SDK_CHECK(
            cu_check(cu_launch_prelu_backward_gamma(cu_f32(args->in_grad[1]), dy, x, outer, c,
                                                    inner, gs, args->req[1], st),
                     "prelu gamma backward", err));
    }
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(cu_check_tensor(args->in_grad[0], n, "LeakyReLU", "gradient of 'data'", err));
    return cu_check(cu_launch_prelu_backward_data(cu_f32(args->in_grad[0]), dy, x, g, c, inner, gs,
                                                  n, args->req[0], st),
                    "prelu backward", err);
}

/** Backward of both operators: dx = dy f'(.) from the output (or the input), by request. */
static mxk_status act_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_act_param *p = param;
    MXK_SDK_CHECK(cu_enter(ctx, err));
    if (p->leaky && p->act == MXK_LR_PRELU)
        return act_prelu_backward(ctx, args, err);
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dyt = args->out_grad[0];
    uint64_t n = (uint64_t)cu_shape_size(&dyt->shape);
    int from_input = p->leaky ? p->act == MXK_LR_GELU : p->act == MXK_ACT_SOFTSIGN;
    const mxk_tensor *rt = from_input ? args->in_data[0] : args->out_data[0];
    MXK_SDK_CHECK(cu_check_tensor(dyt, n, act_name(p), "gradient of 'output'", err));
    MXK_SDK_CHECK(cu_check_tensor(rt, n, act_name(p),
                                  from_input ? "argument 'data'" : "output 'output'", err));
    MXK_SDK_CHECK(cu_check_tensor(args->in_grad[0], n, act_name(p), "gradient of 'data'", err));
    float *dx = cu_f32(args->in_grad[0]);
    const float *dy = cu_f32(dyt), *r = cu_f32(rt);
    cudaStream_t st = cu_stream(ctx);
    if (!p->leaky)
        return cu_check(cu_launch_act_backward(p->act, dx, dy, r, n, req, st),
                        "Activation backward", err);
    const float *mask = NULL;
    if (p->act == MXK_LR_RRELU) {
        MXK_SDK_CHECK(cu_check_tensor(args->out_data[1], n, act_name(p), "output 'mask'", err));
        mask = cu_f32(args->out_data[1]);
    }
    return cu_check(cu_launch_lrelu_backward(p->act, p->slope, dx, dy, r, mask, n, req, st),
                    "LeakyReLU backward", err);
}

/** Registers the Activation and LeakyReLU kernels. */
mxk_status cu_register_act(mxk_registrar *reg, mxk_error_sink *err) {
    MXK_SDK_CHECK(
        cu_layer_register(reg, "Activation", act_parse, NULL, act_forward, act_backward, err));
    return cu_layer_register(reg, "LeakyReLU", lrelu_parse, NULL, act_forward, act_backward, err);
}
