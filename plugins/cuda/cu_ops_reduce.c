/*
 * cuda plugin: GPU kernels of the reductions that cpu-blas defines
 * (op_reduce.c): sum, mean, max, min, prod, nansum and norm, over any set of
 * axes (`axis`, `keepdims`, `exclude`; norm's `ord` 1 or 2), float32 with double
 * accumulation, every request. Forward is the generic axis reduction of
 * cu_kern_reduce.cu; backward broadcasts dy (times the reduction's gradient
 * factor) back over the reduced axes.
 *
 * Semantics: MXNet src/operator/tensor/broadcast_reduce_op.h (ReduceAxesParam,
 * NormParam, ReduceAxesComputeImpl, ReduceAxesBackwardUseInOutImpl),
 * broadcast_reduce-inl.cuh and broadcast_reduce_norm_value.cu, with the
 * element functions of plugins/common/mxk_math_reduce.h.
 */
#include "cu_ops_math.h"
#include "mxk_math_reduce.h"
#include "mxk_reduce_axes.h"

/** A kernel's parameters (the operator's attributes). */
typedef struct cu_red_param {
    mxk_shape axis;   /**< as given (ndim 0: all axes) */
    int32_t exclude;  /**< reduce the complement of axis */
    int32_t kind;     /**< enum mxk_red_kind */
    int32_t ord;      /**< norm: 1 or 2 */
    const char *name; /**< the operator */
} cu_red_param;

/** Parses axis, exclude (not norm) and ord (norm) for reduction `kind`. */
static mxk_status red_parse(const mxk_attrs *attrs, int32_t kind, const char *name, void **out,
                            mxk_error_sink *err) {
    cu_red_param p = {.kind = kind, .ord = 2, .name = name};
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "axis", &p.axis, err));
    if (kind == MXK_RED_NORM) {
        int64_t ord;
        MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "ord", 1, 2, &ord, err));
        p.ord = (int32_t)ord;
    } else {
        MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "exclude", &p.exclude, err));
    }
    return cu_param_dup(&p, sizeof p, out, err);
}

/* One parse_param per operator (the registrar keeps function pointers only). */
#define CU_RED_PARSE(fn, kind, name)                                                               \
    static mxk_status fn(const mxk_attrs *a, void **o, mxk_error_sink *e) {                        \
        return red_parse(a, kind, name, o, e);                                                     \
    }
CU_RED_PARSE(sum_parse, MXK_RED_SUM, "sum")
CU_RED_PARSE(mean_parse, MXK_RED_MEAN, "mean")
CU_RED_PARSE(max_parse, MXK_RED_MAX, "max")
CU_RED_PARSE(min_parse, MXK_RED_MIN, "min")
CU_RED_PARSE(prod_parse, MXK_RED_PROD, "prod")
CU_RED_PARSE(nansum_parse, MXK_RED_NANSUM, "nansum")
CU_RED_PARSE(norm_parse, MXK_RED_NORM, "norm")
#undef CU_RED_PARSE

/** y (=|+=) the reduction of x over the reduced axes. */
static mxk_status red_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_red_param *p = param;
    if (args->num_in != 1 || args->num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s: expected 1 input and 1 output",
                             p->name);
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *x = args->in_data[0], *y = args->out_data[0];
    MXK_SDK_CHECK(cu_check_f32(x, -1, "argument 'data'", err));
    uint8_t red[MXK_MAX_NDIM];
    MXK_SDK_CHECK(mxk_reduce_axes(&p->axis, p->exclude, x->shape.ndim, red, err));
    int64_t stride[CU_MAX_OPERANDS][MXK_MAX_NDIM] = {{0}};
    cu_dense_strides(&x->shape, stride[0]);
    cu_reduce_plan plan;
    cu_reduce_plan_of(&x->shape, red, (const int64_t(*)[MXK_MAX_NDIM])stride, &plan);
    MXK_SDK_CHECK(cu_check_f32(y, (int64_t)plan.nout, "output 'output'", err));
    const float *src[CU_MAX_OPERANDS] = {x->data, NULL, NULL};
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(cu_launch_reduce(&plan, CU_MAP_X, p->kind, p->ord, 0, 0, src, y->data,
                              cu_req_add(args->req[0]), cu_stream(ctx)),
             p->name, err);
    return MXK_OK;
}

/** dx (=|+=) dy (times the gradient factor) broadcast back over the reduced axes. */
static mxk_status red_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_red_param *p = param;
    if (args->num_in != 1 || args->num_out_grad != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "%s backward: expected 1 input and 1 output gradient", p->name);
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *gx = args->in_grad[0], *gy = args->out_grad[0];
    MXK_SDK_CHECK(cu_check_f32(gx, -1, "gradient of 'data'", err));
    const mxk_shape *s = &gx->shape;
    uint8_t red[MXK_MAX_NDIM];
    MXK_SDK_CHECK(mxk_reduce_axes(&p->axis, p->exclude, s->ndim, red, err));
    /* dy's strides in the input's index space: row-major over the kept axes, 0 on reduced */
    cu_index ix = {.ndim = s->ndim};
    int64_t acc = 1;
    for (int32_t d = s->ndim - 1; d >= 0; d--) {
        ix.dim[d] = s->dims[d];
        ix.stride[0][d] = red[d] ? 0 : acc;
        if (!red[d])
            acc *= s->dims[d];
    }
    uint64_t n = (uint64_t)cu_shape_size(s), nred = n / (uint64_t)(acc ? acc : 1);
    MXK_SDK_CHECK(cu_check_f32(gy, acc, "gradient of 'output'", err));
    const float *x = NULL, *y = NULL;
    if (p->kind >= MXK_RED_NANSUM) {
        MXK_SDK_CHECK(cu_check_f32(args->in_data[0], (int64_t)n, "argument 'data'", err));
        MXK_SDK_CHECK(cu_check_f32(args->out_data[0], acc, "output 'output'", err));
        x = args->in_data[0]->data;
        y = args->out_data[0]->data;
    }
    float scale = p->kind == MXK_RED_MEAN ? (float)(1.0 / (double)nred) : 1.0f;
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(cu_launch_reduce_grad(&ix, p->kind, p->ord, scale, gy->data, x, y, gx->data, n,
                                   cu_req_add(args->req[0]), cu_stream(ctx)),
             p->name, err);
    return MXK_OK;
}

/** Registers the GPU kernels of the reductions. */
mxk_status cu_register_reduce(mxk_registrar *reg, mxk_error_sink *err) {
    static const cu_op_entry ops[] = {
        {"sum", sum_parse},   {"mean", mean_parse},     {"max", max_parse},  {"min", min_parse},
        {"prod", prod_parse}, {"nansum", nansum_parse}, {"norm", norm_parse}};
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.flags = MXK_KERNEL_SUPPORTS_ADDTO;
    k.supports = cu_supports_float32;
    k.forward = red_forward;
    k.backward = red_backward;
    return cu_register_each(reg, &k, ops, MXK_SDK_COUNTOF(ops), err);
}
