/*
 * cpu-blas plugin: element-wise binary operators on arrays of one shape:
 * elemwise_add, elemwise_sub, elemwise_mul, elemwise_div, _grad_add, _power,
 * _maximum, _minimum, _hypot and the comparisons _equal, _not_equal, _greater,
 * _greater_equal, _lesser, _lesser_equal.
 *
 * Semantics: MXNet src/operator/tensor/elemwise_binary_op_basic.cc,
 * elemwise_binary_op_extended.cc and elemwise_binary_op_logic.cc, each registered
 * once under its MXNet name with MXNet's aliases (_plus / _add / _Plus for
 * elemwise_add, _Power for _power, _Equal for _equal, ...). Arguments lhs, rhs of
 * the same shape; output `output` of that shape; the element functions are those
 * of plugins/common/mxk_math_binary.h (comparisons give 1 or 0). Gradients: add (dy, dy), sub
 * (dy, -dy), mul (dy*rhs, dy*lhs), div (dy/rhs, -dy*lhs/rhs^2), power, maximum,
 * minimum, hypot as mxk_bin_df; comparisons zero. add and sub read only out_grad,
 * comparisons nothing, the others out_grad, lhs and rhs. _grad_add is
 * elemwise_add under the name MXNet's gradient aggregation uses (upstream
 * registers no gradient for it; mxk differentiates it as elemwise_add). Forward
 * may run in place (lhs or rhs -> output); backward may write either gradient over
 * out_grad (the other one is computed first).
 */
#include "cb_loops.h"
#include "cb_tensor.h"
#include "mxk_math_binary.h"

/** Static description of one operator; its parameter object. */
typedef struct ew_info {
    const char *name;
    int32_t code; /**< enum mxk_bin_code */
    const char *const *aliases;
    const char *doc;
} ew_info;

static const char *const ew_add_aliases[] = {"_add", "_plus", "_Plus", "_sparse_elemwise_add",
                                             NULL};
static const char *const ew_sub_aliases[] = {"_sub", "_minus", "_Minus", "_sparse_elemwise_sub",
                                             NULL};
static const char *const ew_mul_aliases[] = {"_mul", "_Mul", "_sparse_elemwise_mul", NULL};
static const char *const ew_div_aliases[] = {"_div", "_Div", "_sparse_elemwise_div", NULL};
#define EW_ALIAS(var, name) static const char *const var[] = {name, NULL};
EW_ALIAS(ew_pow_aliases, "_Power")
EW_ALIAS(ew_max_aliases, "_Maximum")
EW_ALIAS(ew_min_aliases, "_Minimum")
EW_ALIAS(ew_hypot_aliases, "_Hypot")
EW_ALIAS(ew_eq_aliases, "_Equal")
EW_ALIAS(ew_ne_aliases, "_Not_Equal")
EW_ALIAS(ew_gt_aliases, "_Greater")
EW_ALIAS(ew_ge_aliases, "_Greater_Equal")
EW_ALIAS(ew_lt_aliases, "_Lesser")
EW_ALIAS(ew_le_aliases, "_Lesser_Equal")

/** The operators, in registration order. */
static const ew_info ew_ops[] = {
    {"elemwise_add", MXK_BIN_ADD, ew_add_aliases, "Element-wise sum: lhs + rhs."},
    {"elemwise_sub", MXK_BIN_SUB, ew_sub_aliases, "Element-wise difference: lhs - rhs."},
    {"elemwise_mul", MXK_BIN_MUL, ew_mul_aliases, "Element-wise product: lhs * rhs."},
    {"elemwise_div", MXK_BIN_DIV, ew_div_aliases, "Element-wise quotient: lhs / rhs."},
    {"_grad_add", MXK_BIN_ADD, NULL, "Element-wise sum of gradients: lhs + rhs."},
    {"_power", MXK_BIN_POW, ew_pow_aliases, "Element-wise power: lhs ^ rhs."},
    {"_maximum", MXK_BIN_MAX, ew_max_aliases, "Element-wise maximum of lhs and rhs."},
    {"_minimum", MXK_BIN_MIN, ew_min_aliases, "Element-wise minimum of lhs and rhs."},
    {"_hypot", MXK_BIN_HYPOT, ew_hypot_aliases, "Element-wise sqrt(lhs^2 + rhs^2)."},
    {"_equal", MXK_BIN_EQ, ew_eq_aliases, "1 where lhs == rhs, else 0."},
    {"_not_equal", MXK_BIN_NE, ew_ne_aliases, "1 where lhs != rhs, else 0."},
    {"_greater", MXK_BIN_GT, ew_gt_aliases, "1 where lhs > rhs, else 0."},
    {"_greater_equal", MXK_BIN_GE, ew_ge_aliases, "1 where lhs >= rhs, else 0."},
    {"_lesser", MXK_BIN_LT, ew_lt_aliases, "1 where lhs < rhs, else 0."},
    {"_lesser_equal", MXK_BIN_LE, ew_le_aliases, "1 where lhs <= rhs, else 0."},
};
#define EW_NUM ((int)MXK_SDK_COUNTOF(ew_ops))

static const char *const ew_args[] = {"lhs", "rhs", NULL};
static const char *const ew_outs[] = {"output", NULL};

/* One parse_param per operator (its static ew_info; no attributes). */
#define EW_PARSE(i)                                                                                \
    static mxk_status ew_parse_##i(const mxk_attrs *a, void **o, mxk_error_sink *e) {              \
        *o = (void *)&ew_ops[i];                                                                   \
        return MXK_OK;                                                                             \
    }
EW_PARSE(0)
EW_PARSE(1)
EW_PARSE(2)
EW_PARSE(3)
EW_PARSE(4)
EW_PARSE(5)
EW_PARSE(6)
EW_PARSE(7)
EW_PARSE(8)
EW_PARSE(9)
EW_PARSE(10)
EW_PARSE(11)
EW_PARSE(12)
EW_PARSE(13)
EW_PARSE(14)

/** The parameter objects are static: nothing to free. */
static void ew_free(void *param) {}

/** lhs, rhs and output share one shape (merged in every direction). */
static mxk_status ew_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    if (num_in != 2 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "binary operator expects 2 arguments and 1 output");
    return mxk_sdk_infer_shape_same(in, num_in, ew_args, out, num_out, ew_outs, err);
}

/** All float32. */
static mxk_status ew_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in, num_in, ew_args, out, num_out, ew_outs, aux,
                                      num_aux, err);
}

/** Whether the gradients read lhs and rhs (all but add, sub and the comparisons). */
static int ew_reads_inputs(int32_t code) {
    return code != MXK_BIN_ADD && code != MXK_BIN_SUB && !mxk_bin_is_compare(code);
}

/** out_grad unless a comparison; lhs and rhs as ew_reads_inputs. */
static void ew_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    const ew_info *p = param;
    if (mxk_bin_is_compare(p->code))
        return;
    need_out_grad[0] = 1;
    if (ew_reads_inputs(p->code)) {
        need_in_data[0] = 1;
        need_in_data[1] = 1;
    }
}

/** Forward in-place lhs -> output and rhs -> output. */
static uint32_t ew_forward_inplace(const void *param, mxk_inplace_pair *pairs, uint32_t capacity) {
    uint32_t n = 0;
    mxk_sdk_inplace_add(pairs, capacity, &n, 0, 0, 0);
    mxk_sdk_inplace_add(pairs, capacity, &n, 1, 0, 0);
    return n;
}

/** Backward in-place out_grad -> in_grad[lhs] (identity for add, sub) and -> in_grad[rhs]. */
static uint32_t ew_backward_inplace(const void *param, mxk_inplace_pair *pairs, uint32_t capacity) {
    const ew_info *p = param;
    uint32_t n = 0;
    if (mxk_bin_is_compare(p->code))
        return 0;
    mxk_sdk_inplace_add(pairs, capacity, &n, 0, 0,
                        p->code == MXK_BIN_ADD || p->code == MXK_BIN_SUB);
    mxk_sdk_inplace_add(pairs, capacity, &n, 0, 1, p->code == MXK_BIN_ADD);
    return n;
}

CB_DEFINE_BINARY(ew_add, a + b)
CB_DEFINE_BINARY(ew_sub, a - b)
CB_DEFINE_BINARY(ew_mul, (a) * (b))
CB_DEFINE_BINARY(ew_div, a / b)

/** out = f(lhs, rhs) by the request for the codes without a vectorised loop (out may alias). */
static void ew_generic(int32_t code, float *o, const float *a, const float *b, size_t n,
                       mxk_op_req req) {
    for (size_t i = 0; i < n; i++)
        mxk_sdk_assign_f32(&o[i], mxk_bin_f(code, a[i], b[i]), req);
}

/** out = lhs op rhs by the request (out may be lhs or rhs). */
static mxk_status ew_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const ew_info *p = param;
    MXK_SDK_CHECK(cb_check_forward(args, 2, 1, ew_args, ew_outs, ew_infer_shape, param, err));
    const float *a = cb_f32(args->in_data[0]), *b = cb_f32(args->in_data[1]);
    float *o = cb_f32(args->out_data[0]);
    size_t n = (size_t)mxk_sdk_shape_count(&args->in_data[0]->shape);
    mxk_op_req req = args->req[0];
    static const cb_binary_fn fns[] = {[MXK_BIN_ADD] = ew_add,
                                       [MXK_BIN_SUB] = ew_sub,
                                       [MXK_BIN_MUL] = ew_mul,
                                       [MXK_BIN_DIV] = ew_div};
    if (p->code <= MXK_BIN_DIV)
        cb_binary_parallel(ctx, fns[p->code], o, a, b, 0.0f, n, req);
    else if (req != MXK_REQ_NULL)
        ew_generic(p->code, o, a, b, n, req);
    return MXK_OK;
}

/* Gradient of rhs for elemwise_div: -dy * lhs / rhs^2 (o may equal dy). */
static void ew_div_rgrad_r(float *restrict o, const float *restrict dy, const float *restrict l,
                           const float *restrict r, size_t n, int add) {
    if (add) {
        for (size_t i = 0; i < n; i++)
            o[i] += -dy[i] * l[i] / (r[i] * r[i]);
    } else {
        for (size_t i = 0; i < n; i++)
            o[i] = -dy[i] * l[i] / (r[i] * r[i]);
    }
}

/** ew_div_rgrad_r for any aliasing of o with the inputs (reads element i before writing it). */
static void ew_div_rgrad(float *o, const float *dy, const float *l, const float *r, size_t n,
                         mxk_op_req req) {
    if (req == MXK_REQ_NULL)
        return;
    int add = req == MXK_REQ_ADD;
    if (o != dy && o != l && o != r) {
        ew_div_rgrad_r(o, dy, l, r, n, add);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        float v = -dy[i] * l[i] / (r[i] * r[i]);
        o[i] = add ? o[i] + v : v;
    }
}

/** Writes the gradient of input `which` (0 lhs, 1 rhs). */
static void ew_grad(int32_t code, int which, float *g, const float *dy, const float *l,
                    const float *r, size_t n, mxk_op_req req) {
    switch (code) {
    case MXK_BIN_ADD:
        mxk_sdk_copy_f32(g, dy, n, req);
        break;
    case MXK_BIN_SUB:
        mxk_sdk_scale_f32(g, dy, which == 0 ? 1.0f : -1.0f, n, req);
        break;
    case MXK_BIN_MUL:
        ew_mul(g, dy, which == 0 ? r : l, 0.0f, n, req);
        break;
    case MXK_BIN_DIV:
        if (which == 0)
            ew_div(g, dy, r, 0.0f, n, req);
        else
            ew_div_rgrad(g, dy, l, r, n, req);
        break;
    default:
        for (size_t i = 0; i < n; i++)
            mxk_sdk_assign_f32(&g[i], dy[i] * mxk_bin_df(code, which, l[i], r[i]), req);
        break;
    }
}

/** Both gradients by their requests; one that shares memory with out_grad is written last. */
static mxk_status ew_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const ew_info *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, 2, 1, 1, err));
    const mxk_op_req *req = args->req;
    if (mxk_bin_is_compare(p->code)) {
        MXK_SDK_CHECK(cbt_zero_grad(args->in_grad[0], req[0], "lhs", err));
        return cbt_zero_grad(args->in_grad[1], req[1], "rhs", err);
    }
    if (req[0] == MXK_REQ_NULL && req[1] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dyt = args->out_grad[0];
    MXK_SDK_CHECK(cb_check_tensor(dyt, "gradient of 'output'", err));
    const float *l = NULL, *r = NULL;
    if (ew_reads_inputs(p->code)) {
        MXK_SDK_CHECK(cb_check_tensor(args->in_data[0], "argument 'lhs'", err));
        MXK_SDK_CHECK(cb_check_tensor(args->in_data[1], "argument 'rhs'", err));
        if (mxk_sdk_shape_count(&args->in_data[0]->shape) != mxk_sdk_shape_count(&dyt->shape) ||
            mxk_sdk_shape_count(&args->in_data[1]->shape) != mxk_sdk_shape_count(&dyt->shape))
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "lhs, rhs and output gradient differ in size");
        l = cb_f32(args->in_data[0]);
        r = cb_f32(args->in_data[1]);
    }
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req[0], &dyt->shape, "lhs", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[1], req[1], &dyt->shape, "rhs", err));
    const float *dy = cb_f32(dyt);
    size_t n = (size_t)mxk_sdk_shape_count(&dyt->shape);
    int first = req[0] != MXK_REQ_NULL && args->in_grad[0]->data == dyt->data ? 1 : 0;
    for (int k = 0; k < 2; k++) {
        int which = k == 0 ? first : 1 - first;
        if (req[which] != MXK_REQ_NULL)
            ew_grad(p->code, which, cb_f32(args->in_grad[which]), dy, l, r, n, req[which]);
    }
    return MXK_OK;
}

/** Registers the element-wise binary operators (with MXNet's aliases) and their CPU kernels. */
mxk_status cb_register_elemwise(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_status (*const parse[])(const mxk_attrs *, void **, mxk_error_sink *) = {
        ew_parse_0,  ew_parse_1,  ew_parse_2,  ew_parse_3,  ew_parse_4,
        ew_parse_5,  ew_parse_6,  ew_parse_7,  ew_parse_8,  ew_parse_9,
        ew_parse_10, ew_parse_11, ew_parse_12, ew_parse_13, ew_parse_14};
    _Static_assert(MXK_SDK_COUNTOF(parse) == MXK_SDK_COUNTOF(ew_ops),
                   "one parse function per element-wise operator");
    for (int i = 0; i < EW_NUM; i++) {
        mxk_op_def def;
        mxk_sdk_op_def_init(&def);
        def.description = ew_ops[i].doc;
        def.aliases = ew_ops[i].aliases;
        def.arguments = ew_args;
        def.outputs = ew_outs;
        def.parse_param = parse[i];
        def.free_param = ew_free;
        def.infer_shape = ew_infer_shape;
        def.infer_type = ew_infer_type;
        def.backward_dependency = ew_backward_dependency;
        def.forward_inplace = ew_forward_inplace;
        def.backward_inplace = ew_backward_inplace;
        MXK_SDK_CHECK(cbt_register(reg, &def, ew_ops[i].name, ew_forward, ew_backward, 0, err));
    }
    return MXK_OK;
}
