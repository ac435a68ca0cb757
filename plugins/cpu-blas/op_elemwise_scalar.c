/*
 * cpu-blas plugin: element-wise operators with a scalar: _plus_scalar,
 * _minus_scalar, _rminus_scalar, _mul_scalar, _div_scalar, _rdiv_scalar,
 * _power_scalar, _rpower_scalar, _maximum_scalar, _minimum_scalar, _hypot_scalar,
 * the comparisons _equal_scalar ... _lesser_equal_scalar, and smooth_l1.
 *
 * Semantics: MXNet src/operator/tensor/elemwise_binary_scalar_op_basic.cc,
 * elemwise_binary_scalar_op_extended.cc, elemwise_binary_scalar_op_logic.cc and
 * elemwise_binary_scalar_op.h (NumpyBinaryScalarParam), each registered once under
 * its MXNet name with MXNet's aliases (_PlusScalar, _RPowerScalar, ...). One
 * argument `data`, output `output` of its shape, attributes `scalar` (real,
 * default 1) and `is_int` (bool, default True; MXNet 1.9.1 uses it for integer
 * dtypes only, so float32 kernels accept and ignore it). y = f(x, s), or f(s, x)
 * for the r-forms, with the element functions of plugins/common/mxk_math_binary.h; smooth_l1 with
 * sigma = s: 0.5 (s x)^2 for |x| <= 1/s^2, else |x| - 0.5/s^2 (mshadow_op.h
 * smooth_l1_loss). Gradients dy f'(.): plus, minus, rminus, mul, div read only
 * dy; _rpower_scalar reads the output (dy y log s); comparisons are zero and read
 * nothing; the others read x. Forward in-place data -> output, backward out_grad
 * -> in_grad (an identity for _plus_scalar and _minus_scalar).
 */
#include "cb_loops.h"
#include "cb_tensor.h"
#include "mxk_math_binary.h"

/** Static description of one operator. */
typedef struct sc_info {
    const char *name;
    int32_t code; /**< enum mxk_bin_code, or MXK_BIN_SMOOTH_L1 */
    int32_t swap; /**< 1: y = f(scalar, x) */
    int32_t dep;  /**< what backward reads: 0 dy only, 1 dy and x, 2 dy and y, 3 nothing */
    const char *alias, *alias2;
} sc_info;

/** The operators, in registration order. */
static const sc_info sc_ops[] = {
    {"_plus_scalar", MXK_BIN_ADD, 0, 0, "_PlusScalar", NULL},
    {"_minus_scalar", MXK_BIN_SUB, 0, 0, "_MinusScalar", NULL},
    {"_rminus_scalar", MXK_BIN_SUB, 1, 0, "_RMinusScalar", NULL},
    {"_mul_scalar", MXK_BIN_MUL, 0, 0, "_MulScalar", NULL},
    {"_div_scalar", MXK_BIN_DIV, 0, 0, "_DivScalar", NULL},
    {"_rdiv_scalar", MXK_BIN_DIV, 1, 1, "_RDivScalar", NULL},
    {"_power_scalar", MXK_BIN_POW, 0, 1, "_PowerScalar", NULL},
    {"_rpower_scalar", MXK_BIN_POW, 1, 2, "_RPowerScalar", NULL},
    {"_maximum_scalar", MXK_BIN_MAX, 0, 1, "_MaximumScalar", "_npi_maximum_scalar"},
    {"_minimum_scalar", MXK_BIN_MIN, 0, 1, "_MinimumScalar", "_npi_minimum_scalar"},
    {"_hypot_scalar", MXK_BIN_HYPOT, 0, 1, "_HypotScalar", "_npi_hypot_scalar"},
    {"_equal_scalar", MXK_BIN_EQ, 0, 3, "_EqualScalar", NULL},
    {"_not_equal_scalar", MXK_BIN_NE, 0, 3, "_NotEqualScalar", NULL},
    {"_greater_scalar", MXK_BIN_GT, 0, 3, "_GreaterScalar", NULL},
    {"_greater_equal_scalar", MXK_BIN_GE, 0, 3, "_GreaterEqualScalar", NULL},
    {"_lesser_scalar", MXK_BIN_LT, 0, 3, "_LesserScalar", NULL},
    {"_lesser_equal_scalar", MXK_BIN_LE, 0, 3, "_LesserEqualScalar", NULL},
    {"smooth_l1", MXK_BIN_SMOOTH_L1, 0, 1, "_npx_smooth_l1", NULL},
};

/** Parsed parameters of a scalar operator. */
typedef struct sc_param {
    const sc_info *op; /**< fixed by the operator's parse function */
    float scalar;      /**< the scalar, rounded to float32 as the computation uses it */
} sc_param;

static const char *const sc_args[] = {"data", NULL};
static const char *const sc_outs[] = {"output", NULL};

/** Attribute schema (NumpyBinaryScalarParam). */
static const mxk_attr_def sc_attrs[] = {
    MXK_SDK_ATTR("scalar", MXK_ATTR_FLOAT, 0, "1", NULL, "Scalar input value."),
    MXK_SDK_ATTR("is_int", MXK_ATTR_BOOL, 0, "True", NULL,
                 "Whether the scalar is an integer (used for integer dtypes only)."),
};

/** Parses `scalar` into a new sc_param of operator `i`. */
static mxk_status sc_parse(int i, const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    double s;
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "scalar", &s, err));
    sc_param p = {.op = &sc_ops[i], .scalar = (float)s};
    return cbt_param_new(&p, sizeof p, out, err);
}

/* One parse_param per operator (the registrar keeps function pointers only). */
#define SC_PARSE(i)                                                                                \
    static mxk_status sc_parse_##i(const mxk_attrs *a, void **o, mxk_error_sink *e) {              \
        return sc_parse(i, a, o, e);                                                               \
    }
SC_PARSE(0)
SC_PARSE(1)
SC_PARSE(2)
SC_PARSE(3)
SC_PARSE(4)
SC_PARSE(5)
SC_PARSE(6)
SC_PARSE(7)
SC_PARSE(8)
SC_PARSE(9)
SC_PARSE(10)
SC_PARSE(11)
SC_PARSE(12)
SC_PARSE(13)
SC_PARSE(14)
SC_PARSE(15)
SC_PARSE(16)
SC_PARSE(17)

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

/** out_grad (unless a comparison) and x or y by the operator's `dep`. */
static void sc_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    const sc_info *op = ((const sc_param *)param)->op;
    if (op->dep == 3)
        return;
    need_out_grad[0] = 1;
    need_in_data[0] = op->dep == 1;
    need_out_data[0] = op->dep == 2;
}

/** Backward in-place out_grad -> in_grad (identity for _plus_scalar and _minus_scalar). */
static uint32_t sc_backward_inplace(const void *param, mxk_inplace_pair *pairs, uint32_t capacity) {
    const sc_info *op = ((const sc_param *)param)->op;
    uint32_t n = 0;
    if (op->dep != 3)
        mxk_sdk_inplace_add(pairs, capacity, &n, 0, 0,
                            !op->swap && (op->code == MXK_BIN_ADD || op->code == MXK_BIN_SUB));
    return n;
}

CB_DEFINE_UNARY(sc_plus, x + s)
CB_DEFINE_UNARY(sc_minus, x - s)
CB_DEFINE_UNARY(sc_rminus, s - x)
CB_DEFINE_UNARY(sc_mul, (x) * (s))
CB_DEFINE_UNARY(sc_div, x / s)
CB_DEFINE_UNARY(sc_rdiv, s / x)

/** y = f(x, s) by the request (in place when output == data). */
static mxk_status sc_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const sc_param *p = param;
    const sc_info *op = p->op;
    MXK_SDK_CHECK(cb_check_forward(args, 1, 1, sc_args, sc_outs, sc_infer_shape, param, err));
    const float *x = cb_f32(args->in_data[0]);
    float *y = cb_f32(args->out_data[0]);
    size_t n = (size_t)mxk_sdk_shape_count(&args->in_data[0]->shape);
    mxk_op_req req = args->req[0];
    float s = p->scalar;
    cb_unary_fn fn = NULL;
    if (op->code == MXK_BIN_ADD)
        fn = sc_plus;
    else if (op->code == MXK_BIN_SUB)
        fn = op->swap ? sc_rminus : sc_minus;
    else if (op->code == MXK_BIN_MUL)
        fn = sc_mul;
    else if (op->code == MXK_BIN_DIV)
        fn = op->swap ? sc_rdiv : sc_div;
    if (fn != NULL) {
        cb_unary_parallel(ctx, fn, y, x, s, n, req);
        return MXK_OK;
    }
    if (req != MXK_REQ_NULL)
        for (size_t i = 0; i < n; i++) /* reads element i before writing it */
            mxk_sdk_assign_f32(&y[i], mxk_scalar_f(op->code, op->swap, x[i], s), req);
    return MXK_OK;
}

/** dx from dy (and x or y) by the request (in place when in_grad == out_grad). */
static mxk_status sc_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const sc_param *p = param;
    const sc_info *op = p->op;
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, 1, 1, err));
    mxk_op_req req = args->req[0];
    if (op->dep == 3)
        return cbt_zero_grad(args->in_grad[0], req, "data", err);
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dyt = args->out_grad[0];
    MXK_SDK_CHECK(cb_check_tensor(dyt, "gradient of 'output'", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req, &dyt->shape, "data", err));
    const float *dy = cb_f32(dyt);
    float *dx = cb_f32(args->in_grad[0]);
    size_t n = (size_t)mxk_sdk_shape_count(&dyt->shape);
    float s = p->scalar;
    if (op->dep == 0) { /* plus, minus, rminus, mul: dy times a constant; div: dy / s */
        if (op->code == MXK_BIN_DIV)
            sc_div(dx, dy, s, n, req);
        else
            mxk_sdk_scale_f32(dx, dy, op->code == MXK_BIN_MUL ? s : (op->swap ? -1.0f : 1.0f), n,
                              req);
        return MXK_OK;
    }
    const mxk_tensor *rt = op->dep == 1 ? args->in_data[0] : args->out_data[0];
    MXK_SDK_CHECK(cb_check_tensor(rt, op->dep == 1 ? "argument 'data'" : "output 'output'", err));
    if (mxk_sdk_shape_count(&rt->shape) != n)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s and output gradient differ in size",
                             op->dep == 1 ? "data" : "output");
    const float *r = cb_f32(rt);
    for (size_t i = 0; i < n; i++) /* reads element i before writing it */
        mxk_sdk_assign_f32(
            &dx[i], dy[i] * mxk_scalar_df(op->code, op->swap, op->dep == 1 ? r[i] : 0.0f, r[i], s),
            req);
    return MXK_OK;
}

/** Registers the scalar operators (with MXNet's aliases) and their CPU kernels. */
mxk_status cb_register_elemwise_scalar(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_status (*const parse[])(const mxk_attrs *, void **, mxk_error_sink *) = {
        sc_parse_0,  sc_parse_1,  sc_parse_2,  sc_parse_3,  sc_parse_4,  sc_parse_5,
        sc_parse_6,  sc_parse_7,  sc_parse_8,  sc_parse_9,  sc_parse_10, sc_parse_11,
        sc_parse_12, sc_parse_13, sc_parse_14, sc_parse_15, sc_parse_16, sc_parse_17};
    _Static_assert(MXK_SDK_COUNTOF(parse) == MXK_SDK_COUNTOF(sc_ops),
                   "one parse function per scalar operator");
    for (uint32_t i = 0; i < MXK_SDK_COUNTOF(sc_ops); i++) {
        const char *aliases[] = {sc_ops[i].alias, sc_ops[i].alias2, NULL};
        mxk_op_def def;
        mxk_sdk_op_def_init(&def);
        def.description = "Element-wise operation of the data and a scalar.";
        def.aliases = aliases;
        def.attrs = sc_attrs;
        def.num_attrs = MXK_SDK_COUNTOF(sc_attrs);
        def.arguments = sc_args;
        def.outputs = sc_outs;
        def.parse_param = parse[i];
        def.free_param = cbt_param_free;
        def.infer_shape = sc_infer_shape;
        def.infer_type = sc_infer_type;
        def.backward_dependency = sc_backward_dependency;
        def.forward_inplace = cbt_inplace_00;
        def.backward_inplace = sc_backward_inplace;
        MXK_SDK_CHECK(cbt_register(reg, &def, sc_ops[i].name, sc_forward, sc_backward, 0, err));
    }
    return MXK_OK;
}
