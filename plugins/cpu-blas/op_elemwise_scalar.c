/*
 * cpu-blas plugin: element-wise operators with a scalar: _plus_scalar,
 * _minus_scalar, _rminus_scalar, _mul_scalar, _div_scalar, _rdiv_scalar.
 *
 * Semantics: MXNet src/operator/tensor/elemwise_binary_scalar_op_basic.cc
 * (digest operators-kvstore-module.md §2.2). One argument `data`, output
 * `output` of its shape, attribute `scalar` (real, required) and `is_int`
 * (bool, default True; MXNet 1.9.1 uses it for integer dtypes only, so float32
 * kernels accept and ignore it). y = x + s, x - s, s - x, x * s, x / s, s / x.
 * Gradients dy, dy, -dy, s*dy, dy/s, -s*dy/x^2; only _rdiv_scalar reads its
 * input. Forward in-place data -> output, backward out_grad -> in_grad.
 */

#include "cb_loops.h"
#include "cb_tensor.h"

/** The six operations. */
enum sc_code { SC_PLUS, SC_MINUS, SC_RMINUS, SC_MUL, SC_DIV, SC_RDIV };

/** Parsed parameters of a scalar operator. */
typedef struct sc_param {
    int32_t code; /**< enum sc_code, fixed by the operator's parse function */
    float scalar; /**< the scalar, rounded to float32 as the computation uses it */
} sc_param;

static const char *const sc_args[] = {"data", NULL};
static const char *const sc_outs[] = {"output", NULL};

/** Attribute schema. */
static const mxk_attr_def sc_attrs[] = {
    MXK_SDK_ATTR("scalar", MXK_ATTR_FLOAT, 1, NULL, NULL, "Scalar input value."),
    MXK_SDK_ATTR("is_int", MXK_ATTR_BOOL, 0, "True", NULL,
                 "Whether the scalar is an integer (used for integer dtypes only)."),
};

/** Parses `scalar` into a new sc_param of operation `code`. */
static mxk_status sc_parse(int32_t code, const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    double s;
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "scalar", &s, err));
    sc_param p = {.code = code, .scalar = (float)s};
    return cbt_param_new(&p, sizeof p, out, err);
}

/** parse_param of _plus_scalar. */
static mxk_status sc_parse_plus(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return sc_parse(SC_PLUS, a, o, e);
}
/** parse_param of _minus_scalar. */
static mxk_status sc_parse_minus(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return sc_parse(SC_MINUS, a, o, e);
}
/** parse_param of _rminus_scalar. */
static mxk_status sc_parse_rminus(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return sc_parse(SC_RMINUS, a, o, e);
}
/** parse_param of _mul_scalar. */
static mxk_status sc_parse_mul(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return sc_parse(SC_MUL, a, o, e);
}
/** parse_param of _div_scalar. */
static mxk_status sc_parse_div(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return sc_parse(SC_DIV, a, o, e);
}
/** parse_param of _rdiv_scalar. */
static mxk_status sc_parse_rdiv(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return sc_parse(SC_RDIV, a, o, e);
}

/** Output shape = data shape (both directions). */
static mxk_status sc_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "scalar operator expects 1 argument and 1 output");
    return mxk_sdk_infer_shape_same(in, num_in, sc_args, out, num_out, sc_outs, err);
}

/** All float32. */
static mxk_status sc_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in, num_in, sc_args, out, num_out, sc_outs, aux,
                                      num_aux, err);
}

/** out_grad; plus the input for _rdiv_scalar. */
static void sc_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    const sc_param *p = param;
    need_out_grad[0] = 1;
    if (p->code == SC_RDIV)
        need_in_data[0] = 1;
}

/** Backward in-place out_grad -> in_grad (identity for _plus_scalar and _minus_scalar). */
static uint32_t sc_backward_inplace(const void *param, mxk_inplace_pair *pairs, uint32_t capacity) {
    const sc_param *p = param;
    uint32_t n = 0;
    mxk_sdk_inplace_add(pairs, capacity, &n, 0, 0, p->code == SC_PLUS || p->code == SC_MINUS);
    return n;
}

CB_DEFINE_UNARY(sc_plus, x + s)
CB_DEFINE_UNARY(sc_minus, x - s)
CB_DEFINE_UNARY(sc_rminus, s - x)
CB_DEFINE_UNARY(sc_mul, (x) * (s))
CB_DEFINE_UNARY(sc_div, x / s)
CB_DEFINE_UNARY(sc_rdiv, s / x)
/* gradient of _rdiv_scalar: a = dy, b = x */
CB_DEFINE_BINARY(sc_rdiv_grad, -(a) * (s / (b * b)))

/** y = f(x, s) by the request (in place when output == data). */
static mxk_status sc_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const sc_param *p = param;
    MXK_SDK_CHECK(cb_check_forward(args, 1, 1, sc_args, sc_outs, sc_infer_shape, param, err));
    const float *x = cb_f32(args->in_data[0]);
    float *y = cb_f32(args->out_data[0]);
    size_t n = (size_t)mxk_sdk_shape_count(&args->in_data[0]->shape);
    mxk_op_req req = args->req[0];
    float s = p->scalar;
    static const cb_unary_fn fns[] = {
        [SC_PLUS] = sc_plus, [SC_MINUS] = sc_minus, [SC_RMINUS] = sc_rminus,
        [SC_MUL] = sc_mul,   [SC_DIV] = sc_div,     [SC_RDIV] = sc_rdiv};
    cb_unary_parallel(ctx, fns[p->code], y, x, s, n, req);
    return MXK_OK;
}

/** dx from dy (and x for _rdiv_scalar) by the request (in place when in_grad == out_grad). */
static mxk_status sc_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const sc_param *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, 1, 1, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dyt = args->out_grad[0];
    MXK_SDK_CHECK(cb_check_tensor(dyt, "gradient of 'output'", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req, &dyt->shape, "data", err));
    const float *dy = cb_f32(dyt);
    float *dx = cb_f32(args->in_grad[0]);
    size_t n = (size_t)mxk_sdk_shape_count(&dyt->shape);
    float s = p->scalar;
    switch (p->code) {
    case SC_PLUS:
    case SC_MINUS:
        mxk_sdk_copy_f32(dx, dy, n, req);
        break;
    case SC_RMINUS:
        mxk_sdk_scale_f32(dx, dy, -1.0f, n, req);
        break;
    case SC_MUL:
        mxk_sdk_scale_f32(dx, dy, s, n, req);
        break;
    case SC_DIV:
        sc_div(dx, dy, s, n, req);
        break;
    default:
        MXK_SDK_CHECK(cb_check_tensor(args->in_data[0], "argument 'data'", err));
        if (mxk_sdk_shape_count(&args->in_data[0]->shape) != n)
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "data and output gradient differ in size");
        sc_rdiv_grad(dx, dy, cb_f32(args->in_data[0]), s, n, req);
        break;
    }
    return MXK_OK;
}

/** Registers the six scalar operators with their CPU kernels. */
mxk_status cb_register_elemwise_scalar(mxk_registrar *reg, mxk_error_sink *err) {
    static const struct {
        const char *name;
        mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *);
        const char *doc;
    } ops[] = {
        {"_plus_scalar", sc_parse_plus, "y = x + scalar"},
        {"_minus_scalar", sc_parse_minus, "y = x - scalar"},
        {"_rminus_scalar", sc_parse_rminus, "y = scalar - x"},
        {"_mul_scalar", sc_parse_mul, "y = x * scalar"},
        {"_div_scalar", sc_parse_div, "y = x / scalar"},
        {"_rdiv_scalar", sc_parse_rdiv, "y = scalar / x"},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        mxk_op_def def;
        mxk_sdk_op_def_init(&def);
        def.name = ops[i].name;
        def.description = ops[i].doc;
        def.attrs = sc_attrs;
        def.num_attrs = MXK_SDK_COUNTOF(sc_attrs);
        def.arguments = sc_args;
        def.outputs = sc_outs;
        def.parse_param = ops[i].parse;
        def.free_param = cbt_param_free;
        def.infer_shape = sc_infer_shape;
        def.infer_type = sc_infer_type;
        def.backward_dependency = sc_backward_dependency;
        def.forward_inplace = cbt_inplace_00;
        def.backward_inplace = sc_backward_inplace;
        mxk_op_kernel_def k;
        cb_kernel_init(&k, ops[i].name, sc_forward, sc_backward);
        MXK_SDK_CHECK(cb_register(reg, &def, &k, err));
    }
    return MXK_OK;
}
