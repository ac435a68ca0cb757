/*
 * cpu-blas plugin: Activation.
 *
 * Semantics: MXNet src/operator/nn/activation.cc (alias _npx_activation) and
 * src/operator/mshadow_op.h. One argument `data`, output
 * `output` of the same shape; act_type (required) one of
 *   relu      y = x > 0 ? x : 0              dy/dx from y: y > 0
 *   sigmoid   y = 1 / (1 + e^-x)             from y: y (1 - y)
 *   tanh      y = tanh x                     from y: 1 - y^2
 *   softrelu  y = log(1 + e^x), x for x > 20 from y: 1 - e^-y
 *   softsign  y = x / (1 + |x|)              from x: 1 / (1 + |x|)^2
 * Backward reads out_grad and the output (softsign: the input instead), so
 * forward may run in place (data -> output) and backward too (out_grad -> in_grad).
 * The element functions are plugins/common/mxk_act.h's, shared with the cuda plugin.
 */
#include <stdint.h>

#include "cb_loops.h"
#include "cb_tensor.h"
#include "mxk_act.h"

/** Parsed attributes of Activation. */
typedef struct act_param {
    int32_t act; /**< enum mxk_act_type */
} act_param;

static const char *const act_args[] = {"data", NULL};
static const char *const act_outs[] = {"output", NULL};

/** Attribute schema (MXNet 1.9.1 ActivationParam). */
static const mxk_attr_def act_attrs[] = {
    MXK_SDK_ATTR("act_type", MXK_ATTR_ENUM, 1, NULL, MXK_ACT_TYPES,
                 "Activation function to be applied."),
};

/** Parses act_type. */
static mxk_status act_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    act_param p = {0};
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "act_type", MXK_ACT_TYPES, &p.act, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** Output shape = data shape (both directions). */
static mxk_status act_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                  uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                  mxk_error_sink *err) {
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "Activation expects 1 argument");
    return mxk_sdk_infer_shape_same(in, num_in, act_args, out, num_out, act_outs, err);
}

/** All float32. */
static mxk_status act_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                 uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in, num_in, act_args, out, num_out, act_outs,
                                      aux, num_aux, err);
}

/** out_grad plus the output (relu, sigmoid, tanh, softrelu) or the input (softsign). */
static void act_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                    uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                    uint8_t *need_out_data) {
    const act_param *p = param;
    need_out_grad[0] = 1;
    if (p->act == MXK_ACT_SOFTSIGN)
        need_in_data[0] = 1;
    else
        need_out_data[0] = 1;
}

CB_DEFINE_UNARY(act_relu, mxk_act_relu(x))
CB_DEFINE_UNARY(act_sigmoid, mxk_act_sigmoid(x))
CB_DEFINE_UNARY(act_softrelu, mxk_act_softrelu(x))
CB_DEFINE_UNARY(act_softsign, mxk_act_softsign(x))

/*
 * The tanh loops get an AVX2 clone beside the baseline one where GCC / clang
 * can dispatch on the CPU at load time (ifunc): the same operations in the same
 * order (no FMA), so both clones give identical results, twice as wide.
 */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute) && defined(__linux__)
#if __has_attribute(target_clones)
#define ACT_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef ACT_CLONES
#define ACT_CLONES
#endif

/** o[i] = tanh(p[i]) (add = 0) or o[i] += tanh(p[i]) (add = 1), disjoint arrays. */
ACT_CLONES static void act_tanh_rows(float *restrict o, const float *restrict p, size_t n,
                                     int add) {
    if (add)
        for (size_t i = 0; i < n; i++)
            o[i] += mxk_act_tanh(p[i]);
    else
        for (size_t i = 0; i < n; i++)
            o[i] = mxk_act_tanh(p[i]);
}

/** o[i] = tanh(o[i]) (add = 0) or o[i] += tanh(o[i]) (add = 1), in place. */
ACT_CLONES static void act_tanh_inplace(float *o, size_t n, int add) {
    if (add)
        for (size_t i = 0; i < n; i++)
            o[i] += mxk_act_tanh(o[i]);
    else
        for (size_t i = 0; i < n; i++)
            o[i] = mxk_act_tanh(o[i]);
}

/** y = tanh(x) by the request (in place when out == in), as CB_DEFINE_UNARY's loops. */
static void act_tanh(float *out, const float *in, float s, size_t n, mxk_op_req req) {
    (void)s;
    if (req == MXK_REQ_NULL)
        return;
    if (out == in)
        act_tanh_inplace(out, n, req == MXK_REQ_ADD);
    else
        act_tanh_rows(out, in, n, req == MXK_REQ_ADD);
}

/* Gradients: a = out_grad, b = output (input for softsign). */
CB_DEFINE_BINARY(act_relu_grad, mxk_act_relu_grad(a, b))
CB_DEFINE_BINARY(act_sigmoid_grad, mxk_act_sigmoid_grad(a, b))
CB_DEFINE_BINARY(act_tanh_grad, mxk_act_tanh_grad(a, b))
CB_DEFINE_BINARY(act_softrelu_grad, mxk_act_softrelu_grad(a, b))
CB_DEFINE_BINARY(act_softsign_grad, mxk_act_softsign_grad(a, b))

/** y = f(x) by the request (in place when output == data). */
static mxk_status act_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const act_param *p = param;
    MXK_SDK_CHECK(cb_check_forward(args, 1, 1, act_args, act_outs, act_infer_shape, param, err));
    const float *x = cb_f32(args->in_data[0]);
    float *y = cb_f32(args->out_data[0]);
    size_t n = (size_t)mxk_sdk_shape_count(&args->in_data[0]->shape);
    mxk_op_req req = args->req[0];
    cb_unary_fn fn;
    switch (p->act) {
    case MXK_ACT_RELU:
        fn = act_relu;
        break;
    case MXK_ACT_SIGMOID:
        fn = act_sigmoid;
        break;
    case MXK_ACT_TANH:
        fn = act_tanh;
        break;
    case MXK_ACT_SOFTRELU:
        fn = act_softrelu;
        break;
    case MXK_ACT_SOFTSIGN:
        fn = act_softsign;
        break;
    default:
        return mxk_sdk_error(err, MXK_ERR_INTERNAL, "invalid act_type %d", (int)p->act);
    }
    cb_unary_parallel(ctx, fn, y, x, 0.0f, n, req);
    return MXK_OK;
}

/** dx = dy * f'(.) by the request (in place when in_grad == out_grad). */
static mxk_status act_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    const act_param *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, 1, 1, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dy = args->out_grad[0];
    const mxk_tensor *ref = p->act == MXK_ACT_SOFTSIGN ? args->in_data[0] : args->out_data[0];
    MXK_SDK_CHECK(cb_check_tensor(dy, "gradient of 'output'", err));
    MXK_SDK_CHECK(cb_check_tensor(
        ref, p->act == MXK_ACT_SOFTSIGN ? "argument 'data'" : "output 'output'", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req, &dy->shape, "data", err));
    if (mxk_sdk_shape_count(&ref->shape) != mxk_sdk_shape_count(&dy->shape))
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "output gradient and %s differ in size",
                             p->act == MXK_ACT_SOFTSIGN ? "data" : "output");
    size_t n = (size_t)mxk_sdk_shape_count(&dy->shape);
    float *dx = cb_f32(args->in_grad[0]);
    const float *g = cb_f32(dy), *r = cb_f32(ref);
    cb_binary_fn fn;
    switch (p->act) {
    case MXK_ACT_RELU:
        fn = act_relu_grad;
        break;
    case MXK_ACT_SIGMOID:
        fn = act_sigmoid_grad;
        break;
    case MXK_ACT_TANH:
        fn = act_tanh_grad;
        break;
    case MXK_ACT_SOFTRELU:
        fn = act_softrelu_grad;
        break;
    case MXK_ACT_SOFTSIGN:
        fn = act_softsign_grad;
        break;
    default:
        return mxk_sdk_error(err, MXK_ERR_INTERNAL, "invalid act_type %d", (int)p->act);
    }
    cb_binary_parallel(ctx, fn, dx, g, r, 0.0f, n, req);
    return MXK_OK;
}

/** Registers Activation and its CPU kernel. */
mxk_status cb_register_activation(mxk_registrar *reg, mxk_error_sink *err) {
    static const char *const aliases[] = {"_npx_activation", NULL};
    mxk_op_def def;
    mxk_sdk_op_def_init(&def);
    def.name = "Activation";
    def.aliases = aliases;
    def.description = "Applies an activation function element-wise (relu, sigmoid, tanh, "
                      "softrelu, softsign).";
    def.attrs = act_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(act_attrs);
    def.arguments = act_args;
    def.outputs = act_outs;
    def.parse_param = act_parse;
    def.free_param = cbt_param_free;
    def.infer_shape = act_infer_shape;
    def.infer_type = act_infer_type;
    def.backward_dependency = act_backward_dependency;
    def.forward_inplace = cbt_inplace_00;
    def.backward_inplace = cbt_inplace_00;
    mxk_op_kernel_def k;
    cb_kernel_init(&k, "Activation", act_forward, act_backward);
    return cb_register(reg, &def, &k, err);
}
