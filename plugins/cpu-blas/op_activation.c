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
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cb_loops.h"
#include "cb_tensor.h"

/** act_type values, in the order of the enum string. */
enum act_type { ACT_RELU, ACT_SIGMOID, ACT_TANH, ACT_SOFTRELU, ACT_SOFTSIGN };
#define ACT_TYPES "relu|sigmoid|tanh|softrelu|softsign"

/** Parsed attributes of Activation. */
typedef struct act_param {
    int32_t act; /**< enum act_type */
} act_param;

static const char *const act_args[] = {"data", NULL};
static const char *const act_outs[] = {"output", NULL};

/** Attribute schema (MXNet 1.9.1 ActivationParam). */
static const mxk_attr_def act_attrs[] = {
    MXK_SDK_ATTR("act_type", MXK_ATTR_ENUM, 1, NULL, ACT_TYPES,
                 "Activation function to be applied."),
};

/** Parses act_type. */
static mxk_status act_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    act_param p = {0};
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "act_type", ACT_TYPES, &p.act, err));
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
    if (p->act == ACT_SOFTSIGN)
        need_in_data[0] = 1;
    else
        need_out_data[0] = 1;
}

/**
 * tanh of a float, branch-free so that the loops calling it vectorise (libm's
 * tanhf is a scalar call and dominated LeNet's forward pass). Cephes' tanhf
 * method, both branches computed and one selected: |x| < 0.625 an odd
 * polynomial x + x^3 P(x^2); otherwise 1 - 2 / (e^(2|x|) + 1) with e^t from
 * Cephes' expf (t = n ln2 + r, |r| <= ln2/2, a degree-6 polynomial in r, 2^n
 * from the exponent bits). |x| is clamped to 10 first, where tanh rounds to 1
 * in float32, so e^t cannot overflow and n is in [0, 29]. The sign is copied
 * back; NaN propagates. Accurate to a few float32 ulps (tested against double
 * tanh in tests/cpu_blas).
 */
static inline float act_tanh_f(float x) {
    /* no float compares and no branches: under -ftrapping-math GCC would sink
     * each branch's arithmetic into a conditional block it cannot if-convert
     * (the division may trap), and the loop would stay scalar */
    uint32_t ux, ua;
    memcpy(&ux, &x, sizeof ux);
    ua = ux & UINT32_C(0x7FFFFFFF);
    const uint32_t ten = UINT32_C(0x41200000); /* 10.0f; NaN patterns are larger */
    const uint32_t uc = ua < ten ? ua : ten;
    float a;
    memcpy(&a, &uc, sizeof a);
    /* large branch: e^(2a) */
    const float t = a + a;
    const float magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    const float rn = t * 1.44269504088896341f + magic;
    const float n = rn - magic;
    uint32_t nb;
    memcpy(&nb, &rn, sizeof nb);
    float r = t - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    const float r2 = r * r;
    float e = 1.9875691500e-4f;
    e = e * r + 1.3981999507e-3f;
    e = e * r + 8.3334519073e-3f;
    e = e * r + 4.1665795894e-2f;
    e = e * r + 1.6666665459e-1f;
    e = e * r + 5.0000001201e-1f;
    e = e * r2 + r + 1.0f;
    const uint32_t sb = ((nb - UINT32_C(0x4B400000)) + 127u) << 23; /* 2^n */
    float scale;
    memcpy(&scale, &sb, sizeof scale);
    e *= scale;
    const float big = 1.0f - 2.0f / (e + 1.0f);
    /* small branch */
    const float z = a * a;
    float q = -5.70498872745e-3f;
    q = q * z + 2.06390887954e-2f;
    q = q * z - 5.37397155531e-2f;
    q = q * z + 1.33314422036e-1f;
    q = q * z - 3.33332819422e-1f;
    const float small = q * z * a + a;
    /* select by masks; the sign of x copied back; NaN returned as is */
    uint32_t us, ub;
    memcpy(&us, &small, sizeof us);
    memcpy(&ub, &big, sizeof ub);
    const uint32_t sm = UINT32_C(0) - (uint32_t)(ua < UINT32_C(0x3F200000)); /* 0.625f */
    uint32_t uy = ((us & sm) | (ub & ~sm)) | (ux & UINT32_C(0x80000000));
    const uint32_t nan = UINT32_C(0) - (uint32_t)(ua > UINT32_C(0x7F800000));
    uy = (ux & nan) | (uy & ~nan);
    float y;
    memcpy(&y, &uy, sizeof y);
    return y;
}

CB_DEFINE_UNARY(act_relu, x > 0.0f ? x : 0.0f)
CB_DEFINE_UNARY(act_sigmoid, 1.0f / (1.0f + expf(-x)))
CB_DEFINE_UNARY(act_softrelu, x > 20.0f ? x : log1pf(expf(x)))
CB_DEFINE_UNARY(act_softsign, x / (1.0f + fabsf(x)))

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
            o[i] += act_tanh_f(p[i]);
    else
        for (size_t i = 0; i < n; i++)
            o[i] = act_tanh_f(p[i]);
}

/** o[i] = tanh(o[i]) (add = 0) or o[i] += tanh(o[i]) (add = 1), in place. */
ACT_CLONES static void act_tanh_inplace(float *o, size_t n, int add) {
    if (add)
        for (size_t i = 0; i < n; i++)
            o[i] += act_tanh_f(o[i]);
    else
        for (size_t i = 0; i < n; i++)
            o[i] = act_tanh_f(o[i]);
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
CB_DEFINE_BINARY(act_relu_grad, b > 0.0f ? a : 0.0f)
CB_DEFINE_BINARY(act_sigmoid_grad, (a * b) * (1.0f - b))
CB_DEFINE_BINARY(act_tanh_grad, (a) * (1.0f - b * b))
CB_DEFINE_BINARY(act_softrelu_grad, a * -expm1f(-b))
CB_DEFINE_BINARY(act_softsign_grad, a / ((1.0f + fabsf(b)) * (1.0f + fabsf(b))))

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
    case ACT_RELU:
        fn = act_relu;
        break;
    case ACT_SIGMOID:
        fn = act_sigmoid;
        break;
    case ACT_TANH:
        fn = act_tanh;
        break;
    case ACT_SOFTRELU:
        fn = act_softrelu;
        break;
    case ACT_SOFTSIGN:
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
    const mxk_tensor *ref = p->act == ACT_SOFTSIGN ? args->in_data[0] : args->out_data[0];
    MXK_SDK_CHECK(cb_check_tensor(dy, "gradient of 'output'", err));
    MXK_SDK_CHECK(
        cb_check_tensor(ref, p->act == ACT_SOFTSIGN ? "argument 'data'" : "output 'output'", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req, &dy->shape, "data", err));
    if (mxk_sdk_shape_count(&ref->shape) != mxk_sdk_shape_count(&dy->shape))
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "output gradient and %s differ in size",
                             p->act == ACT_SOFTSIGN ? "data" : "output");
    size_t n = (size_t)mxk_sdk_shape_count(&dy->shape);
    float *dx = cb_f32(args->in_grad[0]);
    const float *g = cb_f32(dy), *r = cb_f32(ref);
    cb_binary_fn fn;
    switch (p->act) {
    case ACT_RELU:
        fn = act_relu_grad;
        break;
    case ACT_SIGMOID:
        fn = act_sigmoid_grad;
        break;
    case ACT_TANH:
        fn = act_tanh_grad;
        break;
    case ACT_SOFTRELU:
        fn = act_softrelu_grad;
        break;
    case ACT_SOFTSIGN:
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
