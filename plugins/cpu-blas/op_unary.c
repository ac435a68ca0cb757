/*
 * cpu-blas plugin: the unary math set (abs, ceil, cos, exp, floor, log, round,
 * rsqrt, sign, sin, sqrt, square, tanh, sigmoid, relu) and clip.
 *
 * Semantics: MXNet src/operator/tensor/elemwise_unary_op_basic.cc,
 * elemwise_unary_op_trig.cc, elemwise_unary_op_logexp.cc, elemwise_unary_op_pow.cc,
 * matrix_op.cc (clip: a_min, a_max required) and src/operator/mshadow_op.h.
 * One argument `data`, output `output` of its shape. round rounds half away
 * from zero. Gradients (dy times):
 *   abs sign(x); cos -sin x; sin cos x; log 1/x; rsqrt -x^-1.5/2; square 2x;
 *   clip 1 inside [a_min, a_max], else 0       (backward reads x)
 *   exp y; sqrt 1/(2y); tanh 1-y^2; sigmoid y(1-y); relu y > 0   (reads y)
 *   ceil, floor, round, sign: zero gradient     (reads nothing)
 * Forward and backward may run in place (0 -> 0).
 */
#include <math.h>

#include "cb_loops.h"
#include "cb_tensor.h"

/** Which tensor the gradient formula reads. */
enum un_dep { UN_DEP_NONE, UN_DEP_IN, UN_DEP_OUT };

CB_DEFINE_UNARY(un_abs, fabsf(x))
CB_DEFINE_UNARY(un_ceil, ceilf(x))
CB_DEFINE_UNARY(un_cos, cosf(x))
CB_DEFINE_UNARY(un_exp, expf(x))
CB_DEFINE_UNARY(un_floor, floorf(x))
CB_DEFINE_UNARY(un_log, logf(x))
CB_DEFINE_UNARY(un_round, roundf(x))
CB_DEFINE_UNARY(un_rsqrt, 1.0f / sqrtf(x))
CB_DEFINE_UNARY(un_sign, (float)((x > 0.0f) - (x < 0.0f)))
CB_DEFINE_UNARY(un_sin, sinf(x))
CB_DEFINE_UNARY(un_sqrt, sqrtf(x))
CB_DEFINE_UNARY(un_square, (x) * (x))
CB_DEFINE_UNARY(un_tanh, tanhf(x))
CB_DEFINE_UNARY(un_sigmoid, 1.0f / (1.0f + expf(-x)))
CB_DEFINE_UNARY(un_relu, x > 0.0f ? x : 0.0f)

/* Gradients: a = dy, b = x or y (see the file comment). */
CB_DEFINE_BINARY(ung_abs, a *(float)((b > 0.0f) - (b < 0.0f)))
CB_DEFINE_BINARY(ung_cos, -a *sinf(b))
CB_DEFINE_BINARY(ung_exp, (a) * (b))
CB_DEFINE_BINARY(ung_log, a / b)
CB_DEFINE_BINARY(ung_rsqrt, -0.5f * a / (b * sqrtf(b)))
CB_DEFINE_BINARY(ung_sin, a *cosf(b))
CB_DEFINE_BINARY(ung_sqrt, 0.5f * a / b)
CB_DEFINE_BINARY(ung_square, 2.0f * a * b)
CB_DEFINE_BINARY(ung_tanh, a *(1.0f - b * b))
CB_DEFINE_BINARY(ung_sigmoid, a *b *(1.0f - b))
CB_DEFINE_BINARY(ung_relu, b > 0.0f ? a : 0.0f)

/** Static description of one unary operator; also its parameter object. */
typedef struct un_info {
    const char *name;
    void (*fwd)(float *, const float *, float, size_t, mxk_op_req);
    void (*grad)(float *, const float *, const float *, float, size_t, mxk_op_req);
    int32_t dep;        /**< enum un_dep */
    float a_min, a_max; /**< clip only (a parsed copy) */
} un_info;

static const un_info un_ops[] = {
    {"abs", un_abs, ung_abs, UN_DEP_IN, 0, 0},
    {"ceil", un_ceil, NULL, UN_DEP_NONE, 0, 0},
    {"cos", un_cos, ung_cos, UN_DEP_IN, 0, 0},
    {"exp", un_exp, ung_exp, UN_DEP_OUT, 0, 0},
    {"floor", un_floor, NULL, UN_DEP_NONE, 0, 0},
    {"log", un_log, ung_log, UN_DEP_IN, 0, 0},
    {"round", un_round, NULL, UN_DEP_NONE, 0, 0},
    {"rsqrt", un_rsqrt, ung_rsqrt, UN_DEP_IN, 0, 0},
    {"sign", un_sign, NULL, UN_DEP_NONE, 0, 0},
    {"sin", un_sin, ung_sin, UN_DEP_IN, 0, 0},
    {"sqrt", un_sqrt, ung_sqrt, UN_DEP_OUT, 0, 0},
    {"square", un_square, ung_square, UN_DEP_IN, 0, 0},
    {"tanh", un_tanh, ung_tanh, UN_DEP_OUT, 0, 0},
    {"sigmoid", un_sigmoid, ung_sigmoid, UN_DEP_OUT, 0, 0},
    {"relu", un_relu, ung_relu, UN_DEP_OUT, 0, 0},
};
/** Index of clip's pseudo-entry (fwd/grad NULL: handled inline). */
#define UN_CLIP ((int32_t)(sizeof un_ops / sizeof un_ops[0]))

static const char *const un_args[] = {"data", NULL};
static const char *const un_outs[] = {"output", NULL};

/** Attribute schema of clip (MXNet 1.9.1 ClipParam). */
static const mxk_attr_def clip_attrs[] = {
    MXK_SDK_ATTR("a_min", MXK_ATTR_FLOAT, 1, NULL, NULL, "Minimum value."),
    MXK_SDK_ATTR("a_max", MXK_ATTR_FLOAT, 1, NULL, NULL, "Maximum value."),
};

/** parse_param of unary operator i (its static entry) or of clip (i == UN_CLIP). */
static mxk_status un_parse_index(int32_t i, const mxk_attrs *attrs, void **out,
                                 mxk_error_sink *err) {
    un_info p = {0};
    if (i < UN_CLIP) {
        *out = (void *)&un_ops[i];
        return MXK_OK;
    }
    double lo, hi;
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "a_min", &lo, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "a_max", &hi, err));
    if (!(lo <= hi))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'a_min' (%g) must not exceed 'a_max' (%g)", lo, hi);
    p.name = "clip";
    p.dep = UN_DEP_IN;
    p.a_min = (float)lo;
    p.a_max = (float)hi;
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

/** Frees clip's parameter (the others are static). */
static void un_free(void *param) {
    const un_info *p = param;
    if (p->fwd == NULL)
        cbt_param_free(param);
}

/** out_grad plus x or y by the operator's formula (nothing for zero gradients). */
static void un_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    const un_info *p = param;
    if (p->dep == UN_DEP_NONE)
        return;
    need_out_grad[0] = 1;
    if (p->dep == UN_DEP_IN)
        need_in_data[0] = 1;
    else
        need_out_data[0] = 1;
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
    for (size_t i = 0; i < n; i++)
        mxk_sdk_assign_f32(&y[i], fminf(fmaxf(x[i], p->a_min), p->a_max), args->req[0]);
    return MXK_OK;
}

/** dx = dy f'(.) by request (zeros for ceil, floor, round, sign). */
static mxk_status un_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const un_info *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, 1, 1, err));
    mxk_op_req req = args->req[0];
    if (p->dep == UN_DEP_NONE)
        return cbt_zero_grad(args->in_grad[0], req, "data", err);
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dyt = args->out_grad[0];
    const mxk_tensor *rt = p->dep == UN_DEP_IN ? args->in_data[0] : args->out_data[0];
    MXK_SDK_CHECK(cb_check_tensor(dyt, "gradient of 'output'", err));
    MXK_SDK_CHECK(cb_check_tensor(rt, p->dep == UN_DEP_IN ? "argument 'data'" : "output", err));
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
    for (size_t i = 0; i < n; i++) /* clip: reads element i before writing it */
        mxk_sdk_assign_f32(&dx[i], r[i] >= p->a_min && r[i] <= p->a_max ? dy[i] : 0.0f, req);
    return MXK_OK;
}

/** Registers the unary operators and clip with their CPU kernels. */
mxk_status cb_register_unary(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_status (*const parse[])(const mxk_attrs *, void **, mxk_error_sink *) = {
        un_parse_0,  un_parse_1,  un_parse_2,  un_parse_3, un_parse_4,  un_parse_5,
        un_parse_6,  un_parse_7,  un_parse_8,  un_parse_9, un_parse_10, un_parse_11,
        un_parse_12, un_parse_13, un_parse_14, un_parse_15};
    _Static_assert(sizeof parse / sizeof parse[0] == sizeof un_ops / sizeof un_ops[0] + 1,
                   "one parse function per unary operator and clip");
    for (int32_t i = 0; i <= UN_CLIP; i++) {
        mxk_op_def def;
        mxk_sdk_op_def_init(&def);
        def.description = i < UN_CLIP ? "Element-wise math function (MXNet's unary set)."
                                      : "Clips the values to [a_min, a_max].";
        if (i == UN_CLIP) {
            def.attrs = clip_attrs;
            def.num_attrs = MXK_SDK_COUNTOF(clip_attrs);
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
        MXK_SDK_CHECK(cbt_register(reg, &def, i < UN_CLIP ? un_ops[i].name : "clip", un_forward,
                                   un_backward, 0, err));
    }
    return MXK_OK;
}
