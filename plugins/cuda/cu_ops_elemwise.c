/*
 * cuda plugin: GPU kernels of the element-wise math operators that cpu-blas
 * defines, from one table: the same-shape binary operators (op_elemwise.c:
 * elemwise_add ... _lesser_equal, _grad_add), the scalar operators
 * (op_elemwise_scalar.c: _plus_scalar ... _lesser_equal_scalar, smooth_l1), the
 * broadcast binary operators (op_broadcast.c: broadcast_add ...
 * broadcast_lesser_equal, any broadcasting up to MXK_MAX_NDIM dims; backward sums
 * over the broadcast axes with the generic reduction) and the unary operators
 * (op_unary.c: abs ... softsign, clip, hard_sigmoid). float32, as the operators;
 * every request, ADD included; in-place safe (element i is read before it is
 * written).
 *
 * Semantics: MXNet src/operator/tensor/elemwise_binary_op.h,
 * elemwise_binary_scalar_op.h, elemwise_binary_broadcast_op.h (and their .cu
 * registrations), elemwise_unary_op.h, src/operator/mshadow_op.h; element
 * functions of plugins/common/mxk_math_binary.h and mxk_math_unary.h.
 */
#include <string.h>

#include "cu_ops_math.h"
#include "mxk_math_binary.h"
#include "mxk_math_reduce.h"
#include "mxk_math_unary.h"

/** The shape forms. */
enum cu_form { CU_SAME, CU_SCALAR, CU_BCAST, CU_UNARY };

/** What a scalar operator's backward reads (cpu-blas's `dep`). */
enum cu_sdep { CU_S_DY, CU_S_X, CU_S_Y, CU_S_NONE };

/**
 * The operators: X(name, form, code, swap, scalar dep). code is an
 * mxk_bin_code, MXK_BIN_SMOOTH_L1 or an mxk_un_code; swap: y = f(s, x).
 */
#define CU_MATH_OPS(X)                                                                             \
    X(elemwise_add, CU_SAME, MXK_BIN_ADD, 0, 0)                                                    \
    X(elemwise_sub, CU_SAME, MXK_BIN_SUB, 0, 0)                                                    \
    X(elemwise_mul, CU_SAME, MXK_BIN_MUL, 0, 0)                                                    \
    X(elemwise_div, CU_SAME, MXK_BIN_DIV, 0, 0)                                                    \
    X(_grad_add, CU_SAME, MXK_BIN_ADD, 0, 0)                                                       \
    X(_power, CU_SAME, MXK_BIN_POW, 0, 0)                                                          \
    X(_maximum, CU_SAME, MXK_BIN_MAX, 0, 0)                                                        \
    X(_minimum, CU_SAME, MXK_BIN_MIN, 0, 0)                                                        \
    X(_hypot, CU_SAME, MXK_BIN_HYPOT, 0, 0)                                                        \
    X(_equal, CU_SAME, MXK_BIN_EQ, 0, 0)                                                           \
    X(_not_equal, CU_SAME, MXK_BIN_NE, 0, 0)                                                       \
    X(_greater, CU_SAME, MXK_BIN_GT, 0, 0)                                                         \
    X(_greater_equal, CU_SAME, MXK_BIN_GE, 0, 0)                                                   \
    X(_lesser, CU_SAME, MXK_BIN_LT, 0, 0)                                                          \
    X(_lesser_equal, CU_SAME, MXK_BIN_LE, 0, 0)                                                    \
    X(_plus_scalar, CU_SCALAR, MXK_BIN_ADD, 0, CU_S_DY)                                            \
    X(_minus_scalar, CU_SCALAR, MXK_BIN_SUB, 0, CU_S_DY)                                           \
    X(_rminus_scalar, CU_SCALAR, MXK_BIN_SUB, 1, CU_S_DY)                                          \
    X(_mul_scalar, CU_SCALAR, MXK_BIN_MUL, 0, CU_S_DY)                                             \
    X(_div_scalar, CU_SCALAR, MXK_BIN_DIV, 0, CU_S_DY)                                             \
    X(_rdiv_scalar, CU_SCALAR, MXK_BIN_DIV, 1, CU_S_X)                                             \
    X(_power_scalar, CU_SCALAR, MXK_BIN_POW, 0, CU_S_X)                                            \
    X(_rpower_scalar, CU_SCALAR, MXK_BIN_POW, 1, CU_S_Y)                                           \
    X(_maximum_scalar, CU_SCALAR, MXK_BIN_MAX, 0, CU_S_X)                                          \
    X(_minimum_scalar, CU_SCALAR, MXK_BIN_MIN, 0, CU_S_X)                                          \
    X(_hypot_scalar, CU_SCALAR, MXK_BIN_HYPOT, 0, CU_S_X)                                          \
    X(_equal_scalar, CU_SCALAR, MXK_BIN_EQ, 0, CU_S_NONE)                                          \
    X(_not_equal_scalar, CU_SCALAR, MXK_BIN_NE, 0, CU_S_NONE)                                      \
    X(_greater_scalar, CU_SCALAR, MXK_BIN_GT, 0, CU_S_NONE)                                        \
    X(_greater_equal_scalar, CU_SCALAR, MXK_BIN_GE, 0, CU_S_NONE)                                  \
    X(_lesser_scalar, CU_SCALAR, MXK_BIN_LT, 0, CU_S_NONE)                                         \
    X(_lesser_equal_scalar, CU_SCALAR, MXK_BIN_LE, 0, CU_S_NONE)                                   \
    X(smooth_l1, CU_SCALAR, MXK_BIN_SMOOTH_L1, 0, CU_S_X)                                          \
    X(broadcast_add, CU_BCAST, MXK_BIN_ADD, 0, 0)                                                  \
    X(broadcast_sub, CU_BCAST, MXK_BIN_SUB, 0, 0)                                                  \
    X(broadcast_mul, CU_BCAST, MXK_BIN_MUL, 0, 0)                                                  \
    X(broadcast_div, CU_BCAST, MXK_BIN_DIV, 0, 0)                                                  \
    X(broadcast_power, CU_BCAST, MXK_BIN_POW, 0, 0)                                                \
    X(broadcast_maximum, CU_BCAST, MXK_BIN_MAX, 0, 0)                                              \
    X(broadcast_minimum, CU_BCAST, MXK_BIN_MIN, 0, 0)                                              \
    X(broadcast_hypot, CU_BCAST, MXK_BIN_HYPOT, 0, 0)                                              \
    X(broadcast_equal, CU_BCAST, MXK_BIN_EQ, 0, 0)                                                 \
    X(broadcast_not_equal, CU_BCAST, MXK_BIN_NE, 0, 0)                                             \
    X(broadcast_greater, CU_BCAST, MXK_BIN_GT, 0, 0)                                               \
    X(broadcast_greater_equal, CU_BCAST, MXK_BIN_GE, 0, 0)                                         \
    X(broadcast_lesser, CU_BCAST, MXK_BIN_LT, 0, 0)                                                \
    X(broadcast_lesser_equal, CU_BCAST, MXK_BIN_LE, 0, 0)                                          \
    X(abs, CU_UNARY, MXK_UN_ABS, 0, 0)                                                             \
    X(ceil, CU_UNARY, MXK_UN_CEIL, 0, 0)                                                           \
    X(cos, CU_UNARY, MXK_UN_COS, 0, 0)                                                             \
    X(exp, CU_UNARY, MXK_UN_EXP, 0, 0)                                                             \
    X(floor, CU_UNARY, MXK_UN_FLOOR, 0, 0)                                                         \
    X(log, CU_UNARY, MXK_UN_LOG, 0, 0)                                                             \
    X(round, CU_UNARY, MXK_UN_ROUND, 0, 0)                                                         \
    X(rsqrt, CU_UNARY, MXK_UN_RSQRT, 0, 0)                                                         \
    X(sign, CU_UNARY, MXK_UN_SIGN, 0, 0)                                                           \
    X(sin, CU_UNARY, MXK_UN_SIN, 0, 0)                                                             \
    X(sqrt, CU_UNARY, MXK_UN_SQRT, 0, 0)                                                           \
    X(square, CU_UNARY, MXK_UN_SQUARE, 0, 0)                                                       \
    X(tanh, CU_UNARY, MXK_UN_TANH, 0, 0)                                                           \
    X(sigmoid, CU_UNARY, MXK_UN_SIGMOID, 0, 0)                                                     \
    X(relu, CU_UNARY, MXK_UN_RELU, 0, 0)                                                           \
    X(negative, CU_UNARY, MXK_UN_NEGATIVE, 0, 0)                                                   \
    X(reciprocal, CU_UNARY, MXK_UN_RECIPROCAL, 0, 0)                                               \
    X(log1p, CU_UNARY, MXK_UN_LOG1P, 0, 0)                                                         \
    X(expm1, CU_UNARY, MXK_UN_EXPM1, 0, 0)                                                         \
    X(log2, CU_UNARY, MXK_UN_LOG2, 0, 0)                                                           \
    X(log10, CU_UNARY, MXK_UN_LOG10, 0, 0)                                                         \
    X(erf, CU_UNARY, MXK_UN_ERF, 0, 0)                                                             \
    X(softsign, CU_UNARY, MXK_UN_SOFTSIGN, 0, 0)                                                   \
    X(clip, CU_UNARY, MXK_UN_CLIP, 0, 0)                                                           \
    X(hard_sigmoid, CU_UNARY, MXK_UN_HARD_SIGMOID, 0, 0)

/** One operator of the table. */
typedef struct cu_math_op {
    const char *name;
    int32_t form; /**< enum cu_form */
    int32_t code, swap;
    int32_t sdep; /**< enum cu_sdep (scalar operators) */
} cu_math_op;

/** Index of each operator in cu_math_ops. */
enum cu_math_index {
#define CU_OP_INDEX(n, form, code, swap, dep) CU_OP_##n,
    CU_MATH_OPS(CU_OP_INDEX)
#undef CU_OP_INDEX
        CU_NUM_OPS
};

/** The operators. */
static const cu_math_op cu_math_ops[] = {
#define CU_OP_ENTRY(n, form, code, swap, dep) {#n, form, code, swap, dep},
    CU_MATH_OPS(CU_OP_ENTRY)
#undef CU_OP_ENTRY
};

/** A kernel's parameters: the operator and its scalar or two real attributes. */
typedef struct cu_math_param {
    const cu_math_op *op;
    float s;      /**< scalar operators: `scalar` */
    float p0, p1; /**< clip: a_min, a_max; hard_sigmoid: alpha, beta */
} cu_math_param;

/** Parses the attributes operator i needs into a new cu_math_param. */
static mxk_status math_parse(int32_t i, const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_math_param p = {.op = &cu_math_ops[i]};
    double a = 0.0, b = 0.0;
    if (p.op->form == CU_SCALAR) {
        MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "scalar", &a, err));
        p.s = (float)a;
    } else if (p.op->form == CU_UNARY && p.op->code >= MXK_UN_CLIP) {
        int clip = p.op->code == MXK_UN_CLIP;
        MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, clip ? "a_min" : "alpha", &a, err));
        MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, clip ? "a_max" : "beta", &b, err));
        p.p0 = (float)a;
        p.p1 = (float)b;
    }
    return cu_param_dup(&p, sizeof p, out, err);
}

/* One parse_param per operator (the registrar keeps function pointers only). */
#define CU_OP_PARSE(n, form, code, swap, dep)                                                      \
    static mxk_status parse_##n(const mxk_attrs *a, void **o, mxk_error_sink *e) {                 \
        return math_parse(CU_OP_##n, a, o, e);                                                     \
    }
CU_MATH_OPS(CU_OP_PARSE)
#undef CU_OP_PARSE

/** Whether a binary gradient reads lhs and rhs (all but add, sub and the comparisons). */
static int reads_inputs(int32_t code) {
    return code != MXK_BIN_ADD && code != MXK_BIN_SUB && !mxk_bin_is_compare(code);
}

/**
 * Forward of the broadcast form: out (=|+=) f(lhs, rhs) over the output's index
 * space (the same-shape kernel when no operand is broadcast).
 */
static mxk_status bcast_forward(const mxk_op_ctx *ctx, const cu_math_op *op,
                                const mxk_forward_args *args, int add, mxk_error_sink *err) {
    const mxk_tensor *l = args->in_data[0], *r = args->in_data[1], *y = args->out_data[0];
    cu_index ix = {.ndim = y->shape.ndim};
    for (int32_t d = 0; d < ix.ndim; d++)
        ix.dim[d] = y->shape.dims[d];
    MXK_SDK_CHECK(cu_bcast_strides(&l->shape, &y->shape, ix.stride[0], "argument 'lhs'", err));
    MXK_SDK_CHECK(cu_bcast_strides(&r->shape, &y->shape, ix.stride[1], "argument 'rhs'", err));
    int same =
        mxk_sdk_shape_equal(&l->shape, &y->shape) && mxk_sdk_shape_equal(&r->shape, &y->shape);
    CU_CHECK(cu_launch_binary(op->code, same ? NULL : &ix, l->data, r->data, y->data,
                              (uint64_t)cu_shape_size(&y->shape), add, cu_stream(ctx)),
             op->name, err);
    return MXK_OK;
}

/** y (=|+=) f(inputs) by the request, for every form. */
static mxk_status math_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_math_param *p = param;
    const cu_math_op *op = p->op;
    uint32_t nin = op->form == CU_SAME || op->form == CU_BCAST ? 2 : 1;
    if (args->num_in != nin || args->num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s: expected %u inputs and 1 output",
                             op->name, nin);
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *y = args->out_data[0];
    int64_t n = cu_shape_size(&y->shape);
    int64_t nx = op->form == CU_BCAST ? -1 : n;
    MXK_SDK_CHECK(cu_check_f32(y, -1, "output 'output'", err));
    MXK_SDK_CHECK(
        cu_check_f32(args->in_data[0], nx, nin == 2 ? "argument 'lhs'" : "argument 'data'", err));
    if (nin == 2)
        MXK_SDK_CHECK(cu_check_f32(args->in_data[1], nx, "argument 'rhs'", err));
    MXK_SDK_CHECK(cu_enter(ctx, err));
    cudaStream_t s = cu_stream(ctx);
    const float *x = args->in_data[0]->data;
    float *out = y->data;
    int add = cu_req_add(req);
    cudaError_t rc;
    switch (op->form) {
    case CU_SAME:
        rc = cu_launch_binary(op->code, NULL, x, args->in_data[1]->data, out, (uint64_t)n, add, s);
        break;
    case CU_BCAST:
        return bcast_forward(ctx, op, args, add, err);
    case CU_SCALAR:
        rc = cu_launch_scalar(op->code, op->swap, p->s, x, out, (uint64_t)n, add, s);
        break;
    default:
        rc = cu_launch_unary(op->code, p->p0, p->p1, x, out, (uint64_t)n, add, s);
        break;
    }
    CU_CHECK(rc, op->name, err);
    return MXK_OK;
}

/** Gradient pointer of input k, NULL when not wanted. */
static float *grad_ptr(const mxk_backward_args *args, uint32_t k) {
    return args->req[k] == MXK_REQ_NULL ? NULL : args->in_grad[k]->data;
}

/** Backward of the same-shape form: both gradients in one pass. */
static mxk_status same_backward(const mxk_op_ctx *ctx, const cu_math_op *op,
                                const mxk_backward_args *args, mxk_error_sink *err) {
    const mxk_tensor *dy = args->out_grad[0];
    MXK_SDK_CHECK(cu_check_f32(dy, -1, "gradient of 'output'", err));
    int64_t n = cu_shape_size(&dy->shape);
    const float *l = NULL, *r = NULL;
    if (reads_inputs(op->code)) {
        MXK_SDK_CHECK(cu_check_f32(args->in_data[0], n, "argument 'lhs'", err));
        MXK_SDK_CHECK(cu_check_f32(args->in_data[1], n, "argument 'rhs'", err));
        l = args->in_data[0]->data;
        r = args->in_data[1]->data;
    }
    for (uint32_t k = 0; k < 2; k++)
        if (args->req[k] != MXK_REQ_NULL)
            MXK_SDK_CHECK(cu_check_f32(args->in_grad[k], n,
                                       k ? "gradient of 'rhs'" : "gradient of 'lhs'", err));
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(cu_launch_binary_grad(op->code, dy->data, l, r, grad_ptr(args, 0),
                                   cu_req_add(args->req[0]), grad_ptr(args, 1),
                                   cu_req_add(args->req[1]), (uint64_t)n, cu_stream(ctx)),
             op->name, err);
    return MXK_OK;
}

/**
 * Backward of the broadcast form for input k: dy df/dk summed over the axes
 * input k is broadcast along (the generic reduction over dy's index space,
 * operands dy, lhs, rhs).
 */
static mxk_status bcast_grad(const mxk_op_ctx *ctx, const cu_math_op *op,
                             const mxk_backward_args *args, uint32_t k, mxk_error_sink *err) {
    static const char *const names[2] = {"gradient of 'lhs'", "gradient of 'rhs'"};
    const mxk_tensor *dy = args->out_grad[0], *g = args->in_grad[k];
    const mxk_shape *o = &dy->shape;
    MXK_SDK_CHECK(cu_check_f32(g, -1, names[k], err));
    int64_t stride[CU_MAX_OPERANDS][MXK_MAX_NDIM];
    const float *src[CU_MAX_OPERANDS] = {dy->data, NULL, NULL};
    cu_dense_strides(o, stride[0]);
    for (uint32_t j = 0; j < 2; j++) {
        if (!reads_inputs(op->code)) {
            memset(stride[1 + j], 0, sizeof stride[1 + j]);
            continue;
        }
        const mxk_tensor *x = args->in_data[j];
        MXK_SDK_CHECK(cu_check_f32(x, -1, j ? "argument 'rhs'" : "argument 'lhs'", err));
        MXK_SDK_CHECK(cu_bcast_strides(&x->shape, o, stride[1 + j],
                                       j ? "argument 'rhs'" : "argument 'lhs'", err));
        src[1 + j] = x->data;
    }
    int64_t gs[MXK_MAX_NDIM];
    MXK_SDK_CHECK(cu_bcast_strides(&g->shape, o, gs, names[k], err));
    uint8_t red[MXK_MAX_NDIM];
    for (int32_t d = 0; d < o->ndim; d++)
        red[d] = gs[d] == 0 && o->dims[d] != 1;
    cu_reduce_plan plan;
    cu_reduce_plan_of(o, red, (const int64_t(*)[MXK_MAX_NDIM])stride, &plan);
    if ((int64_t)plan.nout != cu_shape_size(&g->shape))
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: does not broadcast to the output gradient",
                             names[k]);
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(cu_launch_reduce(&plan, CU_MAP_BIN_GRAD, MXK_RED_SUM, 2, op->code, (int32_t)k, src,
                              g->data, cu_req_add(args->req[k]), cu_stream(ctx)),
             op->name, err);
    return MXK_OK;
}

/** dx of a scalar or unary operator from dy and what its gradient reads. */
static mxk_status unary_backward(const mxk_op_ctx *ctx, const cu_math_param *p,
                                 const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_math_op *op = p->op;
    const mxk_tensor *dy = args->out_grad[0];
    MXK_SDK_CHECK(cu_check_f32(dy, -1, "gradient of 'output'", err));
    int64_t n = cu_shape_size(&dy->shape);
    MXK_SDK_CHECK(cu_check_f32(args->in_grad[0], n, "gradient of 'data'", err));
    int scalar = op->form == CU_SCALAR;
    int32_t dep = scalar ? op->sdep : mxk_un_dep(op->code);
    int reads_x = scalar ? dep == CU_S_X : dep == MXK_UN_DEP_IN;
    int reads_y = scalar ? dep == CU_S_Y : dep == MXK_UN_DEP_OUT;
    const float *r = dy->data;
    if (reads_x || reads_y) {
        const mxk_tensor *t = reads_x ? args->in_data[0] : args->out_data[0];
        MXK_SDK_CHECK(cu_check_f32(t, n, reads_x ? "argument 'data'" : "output 'output'", err));
        r = t->data;
    }
    MXK_SDK_CHECK(cu_enter(ctx, err));
    cudaStream_t s = cu_stream(ctx);
    float *dx = args->in_grad[0]->data;
    int add = cu_req_add(args->req[0]);
    cudaError_t rc =
        scalar ? cu_launch_scalar_grad(op->code, op->swap, p->s, dy->data, reads_x ? r : NULL,
                                       reads_x || reads_y ? r : NULL, dx, (uint64_t)n, add, s)
               : cu_launch_unary_grad(op->code, p->p0, p->p1, dy->data, r, dx, (uint64_t)n, add, s);
    CU_CHECK(rc, op->name, err);
    return MXK_OK;
}

/** Whether the operator's gradient is zero (comparisons; ceil, floor, round, sign). */
static int zero_gradient(const cu_math_op *op) {
    if (op->form == CU_SCALAR)
        return op->sdep == CU_S_NONE;
    if (op->form == CU_UNARY)
        return mxk_un_dep(op->code) == MXK_UN_DEP_NONE;
    return mxk_bin_is_compare(op->code);
}

/** Backward of every form, by the requests. */
static mxk_status math_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                                const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_math_param *p = param;
    const cu_math_op *op = p->op;
    uint32_t nin = op->form == CU_SAME || op->form == CU_BCAST ? 2 : 1;
    if (args->num_in != nin || args->num_out_grad != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "%s backward: expected %u inputs and 1 output gradient", op->name,
                             nin);
    if (zero_gradient(op)) {
        for (uint32_t k = 0; k < nin; k++)
            MXK_SDK_CHECK(cu_zero_grad(ctx, args->in_grad[k], args->req[k], err));
        return MXK_OK;
    }
    int wanted = 0;
    for (uint32_t k = 0; k < nin; k++)
        wanted |= args->req[k] != MXK_REQ_NULL;
    if (!wanted)
        return MXK_OK;
    if (op->form == CU_SAME)
        return same_backward(ctx, op, args, err);
    if (op->form != CU_BCAST)
        return unary_backward(ctx, p, args, err);
    for (uint32_t k = 0; k < 2; k++)
        if (args->req[k] != MXK_REQ_NULL)
            MXK_SDK_CHECK(bcast_grad(ctx, op, args, k, err));
    return MXK_OK;
}

/** Registers the GPU kernels of the element-wise math operators. */
mxk_status cu_register_elemwise(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_status (*const parse[])(const mxk_attrs *, void **, mxk_error_sink *) = {
#define CU_OP_PARSE_PTR(n, form, code, swap, dep) parse_##n,
        CU_MATH_OPS(CU_OP_PARSE_PTR)
#undef CU_OP_PARSE_PTR
    };
    for (int32_t i = 0; i < CU_NUM_OPS; i++) {
        mxk_op_kernel_def k;
        mxk_sdk_kernel_def_init(&k);
        k.op_name = cu_math_ops[i].name;
        k.parse_param = parse[i];
        k.free_param = cu_param_free;
        k.supports = cu_supports_float32;
        k.forward = math_forward;
        k.backward = math_backward;
        MXK_SDK_CHECK(cu_register_math_kernel(reg, &k, err));
    }
    return MXK_OK;
}
