/*
 * cpu-blas plugin: the unary math set (abs, ceil, cos, exp, floor, log, round,
 * rsqrt, sign, sin, sqrt, square, tanh, sigmoid, relu, negative, reciprocal,
 * log1p, expm1, log2, log10, erf, softsign), clip and hard_sigmoid.
 *
 * Semantics: MXNet src/operator/tensor/elemwise_unary_op_basic.cc,
 * elemwise_unary_op_trig.cc, elemwise_unary_op_logexp.cc, elemwise_unary_op_pow.cc,
 * elemwise_unary_op.h (HardSigmoidParam: alpha 0.2, beta 0.5), matrix_op.cc and
 * matrix_op-inl.h (clip: a_min, a_max required; x > a_max gives a_max, else
 * x < a_min gives a_min, so a_min > a_max is accepted) and src/operator/mshadow_op.h,
 * each registered once with MXNet's aliases (_sparse_abs, _npx_erf, _npi_clip, ...).
 * One argument `data`, output `output` of its shape. The functions, what each
 * gradient reads (x, y, dy only or nothing) and the gradients are those of
 * plugins/common/mxk_math_unary.h, shared with the GPU kernels.
 * Forward and backward may run in place (0 -> 0).
 */
#include "cb_loops.h"
#include "cb_tensor.h"
#include "mxk_math_unary.h"

/* The vectorised loops of the functions without parameters (plugins/common/mxk_math_unary.h). */
CB_DEFINE_UNARY(un_abs, mxk_un_f(MXK_UN_ABS, x, 0.0f, 0.0f))
CB_DEFINE_UNARY(un_ceil, mxk_un_f(MXK_UN_CEIL, x, 0.0f, 0.0f))
CB_DEFINE_UNARY(un_cos, mxk_un_f(MXK_UN_COS, x, 0.0f, 0.0f))
CB_DEFINE_UNARY(un_exp, mxk_un_f(MXK_UN_EXP, x, 0.0f, 0.0f))
CB_DEFINE_UNARY(un_floor, mxk_un_f(MXK_UN_FLOOR, x, 0.0f, 0.0f))
CB_DEFINE_UNARY(un_log, mxk_un_f(MXK_UN_LOG, x, 0.0f, 0.0f))
CB_DEFINE_UNARY(un_round, mxk_un_f(MXK_UN_ROUND, x, 0.0f, 0.0f))
CB_DEFINE_UNARY(un_rsqrt, mxk_un_f(MXK_UN_RSQRT, x, 0.0f, 0.0f))
CB_DEFINE_UNARY(un_sign, mxk_un_f(MXK_UN_SIGN, x, 0.0f, 0.0f))
CB_DEFINE_UNARY(un_sin, mxk_un_f(MXK_UN_SIN, x, 0.0f, 0.0f))
CB_DEFINE_UNARY(un_sqrt, mxk_un_f(MXK_UN_SQRT, x, 0.0f, 0.0f))
CB_DEFINE_UNARY(un_square, mxk_un_f(MXK_UN_SQUARE, x, 0.0f, 0.0f))
CB_DEFINE_UNARY(un_tanh, mxk_un_f(MXK_UN_TANH, x, 0.0f, 0.0f))
CB_DEFINE_UNARY(un_sigmoid, mxk_un_f(MXK_UN_SIGMOID, x, 0.0f, 0.0f))
CB_DEFINE_UNARY(un_relu, mxk_un_f(MXK_UN_RELU, x, 0.0f, 0.0f))
CB_DEFINE_UNARY(un_negative, mxk_un_f(MXK_UN_NEGATIVE, x, 0.0f, 0.0f))
CB_DEFINE_UNARY(un_reciprocal, mxk_un_f(MXK_UN_RECIPROCAL, x, 0.0f, 0.0f))
CB_DEFINE_UNARY(un_log1p, mxk_un_f(MXK_UN_LOG1P, x, 0.0f, 0.0f))
CB_DEFINE_UNARY(un_expm1, mxk_un_f(MXK_UN_EXPM1, x, 0.0f, 0.0f))
CB_DEFINE_UNARY(un_log2, mxk_un_f(MXK_UN_LOG2, x, 0.0f, 0.0f))
CB_DEFINE_UNARY(un_log10, mxk_un_f(MXK_UN_LOG10, x, 0.0f, 0.0f))
CB_DEFINE_UNARY(un_erf, mxk_un_f(MXK_UN_ERF, x, 0.0f, 0.0f))
CB_DEFINE_UNARY(un_softsign, mxk_un_f(MXK_UN_SOFTSIGN, x, 0.0f, 0.0f))

/* Their gradients: a = dy, b = x or y as mxk_un_dep says (dy again for negative). */
CB_DEFINE_BINARY(ung_abs, mxk_un_grad(MXK_UN_ABS, a, b, 0.0f, 0.0f))
CB_DEFINE_BINARY(ung_cos, mxk_un_grad(MXK_UN_COS, a, b, 0.0f, 0.0f))
CB_DEFINE_BINARY(ung_exp, mxk_un_grad(MXK_UN_EXP, a, b, 0.0f, 0.0f))
CB_DEFINE_BINARY(ung_log, mxk_un_grad(MXK_UN_LOG, a, b, 0.0f, 0.0f))
CB_DEFINE_BINARY(ung_rsqrt, mxk_un_grad(MXK_UN_RSQRT, a, b, 0.0f, 0.0f))
CB_DEFINE_BINARY(ung_sin, mxk_un_grad(MXK_UN_SIN, a, b, 0.0f, 0.0f))
CB_DEFINE_BINARY(ung_sqrt, mxk_un_grad(MXK_UN_SQRT, a, b, 0.0f, 0.0f))
CB_DEFINE_BINARY(ung_square, mxk_un_grad(MXK_UN_SQUARE, a, b, 0.0f, 0.0f))
CB_DEFINE_BINARY(ung_tanh, mxk_un_grad(MXK_UN_TANH, a, b, 0.0f, 0.0f))
CB_DEFINE_BINARY(ung_sigmoid, mxk_un_grad(MXK_UN_SIGMOID, a, b, 0.0f, 0.0f))
CB_DEFINE_BINARY(ung_relu, mxk_un_grad(MXK_UN_RELU, a, b, 0.0f, 0.0f))
CB_DEFINE_BINARY(ung_negative, mxk_un_grad(MXK_UN_NEGATIVE, a, b, 0.0f, 0.0f))
CB_DEFINE_BINARY(ung_reciprocal, mxk_un_grad(MXK_UN_RECIPROCAL, a, b, 0.0f, 0.0f))
CB_DEFINE_BINARY(ung_log1p, mxk_un_grad(MXK_UN_LOG1P, a, b, 0.0f, 0.0f))
CB_DEFINE_BINARY(ung_expm1, mxk_un_grad(MXK_UN_EXPM1, a, b, 0.0f, 0.0f))
CB_DEFINE_BINARY(ung_log2, mxk_un_grad(MXK_UN_LOG2, a, b, 0.0f, 0.0f))
CB_DEFINE_BINARY(ung_log10, mxk_un_grad(MXK_UN_LOG10, a, b, 0.0f, 0.0f))
CB_DEFINE_BINARY(ung_erf, mxk_un_grad(MXK_UN_ERF, a, b, 0.0f, 0.0f))
CB_DEFINE_BINARY(ung_softsign, mxk_un_grad(MXK_UN_SOFTSIGN, a, b, 0.0f, 0.0f))

/** The operators with two real parameters, computed inline (fwd NULL). */
enum un_param_kind { UN_PLAIN, UN_CLIP, UN_HARD_SIGMOID };

/** Static description of one unary operator; also its parameter object. */
typedef struct un_info {
    const char *name;
    void (*fwd)(float *, const float *, float, size_t, mxk_op_req);
    void (*grad)(float *, const float *, const float *, float, size_t, mxk_op_req);
    int32_t code;      /**< enum mxk_un_code */
    const char *alias; /**< MXNet's alias, or NULL */
    int32_t kind;      /**< enum un_param_kind */
    float p0, p1;      /**< clip: a_min, a_max; hard_sigmoid: alpha, beta (a parsed copy) */
} un_info;

static const un_info un_ops[] = {
    {"abs", un_abs, ung_abs, MXK_UN_ABS, "_sparse_abs", UN_PLAIN, 0, 0},
    {"ceil", un_ceil, NULL, MXK_UN_CEIL, "_sparse_ceil", UN_PLAIN, 0, 0},
    {"cos", un_cos, ung_cos, MXK_UN_COS, "_sparse_cos", UN_PLAIN, 0, 0},
    {"exp", un_exp, ung_exp, MXK_UN_EXP, "_sparse_exp", UN_PLAIN, 0, 0},
    {"floor", un_floor, NULL, MXK_UN_FLOOR, "_sparse_floor", UN_PLAIN, 0, 0},
    {"log", un_log, ung_log, MXK_UN_LOG, "_sparse_log", UN_PLAIN, 0, 0},
    {"round", un_round, NULL, MXK_UN_ROUND, "_sparse_round", UN_PLAIN, 0, 0},
    {"rsqrt", un_rsqrt, ung_rsqrt, MXK_UN_RSQRT, "_sparse_rsqrt", UN_PLAIN, 0, 0},
    {"sign", un_sign, NULL, MXK_UN_SIGN, "_sparse_sign", UN_PLAIN, 0, 0},
    {"sin", un_sin, ung_sin, MXK_UN_SIN, "_sparse_sin", UN_PLAIN, 0, 0},
    {"sqrt", un_sqrt, ung_sqrt, MXK_UN_SQRT, "_sparse_sqrt", UN_PLAIN, 0, 0},
    {"square", un_square, ung_square, MXK_UN_SQUARE, "_sparse_square", UN_PLAIN, 0, 0},
    {"tanh", un_tanh, ung_tanh, MXK_UN_TANH, "_sparse_tanh", UN_PLAIN, 0, 0},
    {"sigmoid", un_sigmoid, ung_sigmoid, MXK_UN_SIGMOID, "_sparse_sigmoid", UN_PLAIN, 0, 0},
    {"relu", un_relu, ung_relu, MXK_UN_RELU, "_sparse_relu", UN_PLAIN, 0, 0},
    {"negative", un_negative, ung_negative, MXK_UN_NEGATIVE, "_sparse_negative", UN_PLAIN, 0, 0},
    {"reciprocal", un_reciprocal, ung_reciprocal, MXK_UN_RECIPROCAL, NULL, UN_PLAIN, 0, 0},
    {"log1p", un_log1p, ung_log1p, MXK_UN_LOG1P, "_sparse_log1p", UN_PLAIN, 0, 0},
    {"expm1", un_expm1, ung_expm1, MXK_UN_EXPM1, "_sparse_expm1", UN_PLAIN, 0, 0},
    {"log2", un_log2, ung_log2, MXK_UN_LOG2, "_sparse_log2", UN_PLAIN, 0, 0},
    {"log10", un_log10, ung_log10, MXK_UN_LOG10, "_sparse_log10", UN_PLAIN, 0, 0},
    {"erf", un_erf, ung_erf, MXK_UN_ERF, "_npx_erf", UN_PLAIN, 0, 0},
    {"softsign", un_softsign, ung_softsign, MXK_UN_SOFTSIGN, NULL, UN_PLAIN, 0, 0},
    {"clip", NULL, NULL, MXK_UN_CLIP, "_sparse_clip", UN_CLIP, 0, 0},
    {"hard_sigmoid", NULL, NULL, MXK_UN_HARD_SIGMOID, NULL, UN_HARD_SIGMOID, 0, 0},
};
#define UN_NUM ((int32_t)MXK_SDK_COUNTOF(un_ops))

static const char *const un_args[] = {"data", NULL};
static const char *const un_outs[] = {"output", NULL};

/** Attribute schema of clip (MXNet 1.9.1 ClipParam). */
static const mxk_attr_def clip_attrs[] = {
    MXK_SDK_ATTR("a_min", MXK_ATTR_FLOAT, 1, NULL, NULL, "Minimum value."),
    MXK_SDK_ATTR("a_max", MXK_ATTR_FLOAT, 1, NULL, NULL, "Maximum value."),
};
/** Attribute schema of hard_sigmoid (HardSigmoidParam). */
static const mxk_attr_def hs_attrs[] = {
    MXK_SDK_ATTR("alpha", MXK_ATTR_FLOAT, 0, "0.2", NULL, "Slope of hard sigmoid."),
    MXK_SDK_ATTR("beta", MXK_ATTR_FLOAT, 0, "0.5", NULL, "Bias of hard sigmoid."),
};

/** parse_param of operator i: its static entry, or a copy with clip's / hard_sigmoid's values. */
static mxk_status un_parse_index(int32_t i, const mxk_attrs *attrs, void **out,
                                 mxk_error_sink *err) {
    un_info p = un_ops[i];
    if (p.kind == UN_PLAIN) {
        *out = (void *)&un_ops[i];
        return MXK_OK;
    }
    double v0, v1;
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, p.kind == UN_CLIP ? "a_min" : "alpha", &v0, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, p.kind == UN_CLIP ? "a_max" : "beta", &v1, err));
    p.p0 = (float)v0;
    p.p1 = (float)v1;
    return cbt_param_new(&p, sizeof p, out, err);
}

/* One parse_param per operator (the registrar keeps function pointers only). */
#define UN_PARSE(i)                                                                                \
    static mxk_status un_parse_##i(const mxk_attrs *a, void **o, mxk_error_sink *e) {              \
        return un_parse_index(i, a, o, e);                                                         \
    }
UN_PARSE(0)
UN_PARSE(1)
UN_PARSE(2)
UN_PARSE(3)
UN_PARSE(4)
UN_PARSE(5)
UN_PARSE(6)
UN_PARSE(7)
UN_PARSE(8)
UN_PARSE(9)
UN_PARSE(10)
UN_PARSE(11)
UN_PARSE(12)
UN_PARSE(13)
UN_PARSE(14)
UN_PARSE(15)
UN_PARSE(16)
UN_PARSE(17)
UN_PARSE(18)
UN_PARSE(19)
UN_PARSE(20)
UN_PARSE(21)
UN_PARSE(22)
UN_PARSE(23)
UN_PARSE(24)

/** Frees clip's and hard_sigmoid's parameters (the others are static). */
static void un_free(void *param) {
    const un_info *p = param;
    if (p->kind != UN_PLAIN)
        cbt_param_free(param);
}

/** out_grad plus x or y by the operator's formula (nothing for zero gradients). */
static void un_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    const un_info *p = param;
    int32_t dep = mxk_un_dep(p->code);
    if (dep == MXK_UN_DEP_NONE)
        return;
    need_out_grad[0] = 1;
    need_in_data[0] = dep == MXK_UN_DEP_IN;
    need_out_data[0] = dep == MXK_UN_DEP_OUT;
}

/** y = f(x) by request (in place when output == data). */
static mxk_status un_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const un_info *p = param;
    MXK_SDK_CHECK(cbt_check_forward(args, 1, 1, cbt_infer_shape_same, param, 0, err));
    const float *x = cb_f32(args->in_data[0]);
    float *y = cb_f32(args->out_data[0]);
    size_t n = (size_t)mxk_sdk_shape_count(&args->in_data[0]->shape);
    if (p->fwd != NULL) {
        cb_unary_parallel(ctx, p->fwd, y, x, 0.0f, n, args->req[0]);
        return MXK_OK;
    }
    for (size_t i = 0; i < n; i++) /* reads element i before writing it */
        mxk_sdk_assign_f32(&y[i], mxk_un_f(p->code, x[i], p->p0, p->p1), args->req[0]);
    return MXK_OK;
}

/** dx = dy f'(.) by request (zeros for ceil, floor, round, sign). */
static mxk_status un_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const un_info *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, 1, 1, err));
    mxk_op_req req = args->req[0];
    int32_t dep = mxk_un_dep(p->code);
    if (dep == MXK_UN_DEP_NONE)
        return cbt_zero_grad(args->in_grad[0], req, "data", err);
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dyt = args->out_grad[0];
    const mxk_tensor *rt = dep == MXK_UN_DEP_IN    ? args->in_data[0]
                           : dep == MXK_UN_DEP_OUT ? args->out_data[0]
                                                   : dyt;
    MXK_SDK_CHECK(cb_check_tensor(dyt, "gradient of 'output'", err));
    MXK_SDK_CHECK(cb_check_tensor(rt, dep == MXK_UN_DEP_IN ? "argument 'data'" : "output", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req, &dyt->shape, "data", err));
    if (mxk_sdk_shape_count(&rt->shape) != mxk_sdk_shape_count(&dyt->shape))
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "output gradient and data differ in size");
    size_t n = (size_t)mxk_sdk_shape_count(&dyt->shape);
    const float *dy = cb_f32(dyt), *r = cb_f32(rt);
    float *dx = cb_f32(args->in_grad[0]);
    if (p->grad != NULL) {
        cb_binary_parallel(ctx, p->grad, dx, dy, r, 0.0f, n, req);
        return MXK_OK;
    }
    for (size_t i = 0; i < n; i++) /* reads element i before writing it */
        mxk_sdk_assign_f32(&dx[i], mxk_un_grad(p->code, dy[i], r[i], p->p0, p->p1), req);
    return MXK_OK;
}

/** Registers the unary operators, clip and hard_sigmoid (with MXNet's aliases) and their CPU
 * kernels. */
mxk_status cb_register_unary(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_status (*const parse[])(const mxk_attrs *, void **, mxk_error_sink *) = {
        un_parse_0,  un_parse_1,  un_parse_2,  un_parse_3,  un_parse_4,  un_parse_5,  un_parse_6,
        un_parse_7,  un_parse_8,  un_parse_9,  un_parse_10, un_parse_11, un_parse_12, un_parse_13,
        un_parse_14, un_parse_15, un_parse_16, un_parse_17, un_parse_18, un_parse_19, un_parse_20,
        un_parse_21, un_parse_22, un_parse_23, un_parse_24};
    _Static_assert(MXK_SDK_COUNTOF(parse) == MXK_SDK_COUNTOF(un_ops),
                   "one parse function per unary operator");
    for (int32_t i = 0; i < UN_NUM; i++) {
        const un_info *u = &un_ops[i];
        const char *aliases[] = {u->alias, u->kind == UN_CLIP ? "_npi_clip" : NULL, NULL};
        mxk_op_def def;
        mxk_sdk_op_def_init(&def);
        def.description = u->kind == UN_CLIP ? "Clips the values to [a_min, a_max]."
                          : u->kind == UN_HARD_SIGMOID
                              ? "Hard sigmoid: max(0, min(1, alpha x + beta))."
                              : "Element-wise math function (MXNet's unary set).";
        def.aliases = aliases;
        if (u->kind != UN_PLAIN) {
            def.attrs = u->kind == UN_CLIP ? clip_attrs : hs_attrs;
            def.num_attrs = 2;
        }
        def.arguments = un_args;
        def.outputs = un_outs;
        def.parse_param = parse[i];
        def.free_param = un_free;
        def.infer_shape = cbt_infer_shape_same;
        def.infer_type = cbt_infer_type_f32;
        def.backward_dependency = un_backward_dependency;
        def.forward_inplace = cbt_inplace_00;
        def.backward_inplace = cbt_inplace_00;
        MXK_SDK_CHECK(cbt_register(reg, &def, u->name, un_forward, un_backward, 0, err));
    }
    return MXK_OK;
}
