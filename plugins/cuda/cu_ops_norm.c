/*
 * cuda plugin: GPU kernels of LayerNorm, InstanceNorm, GroupNorm and
 * L2Normalization, operators cpu-blas defines (op_norm_moments.c, op_norm_l2.c:
 * arguments, outputs, statistics, backward dependencies, in-place options).
 *
 * Semantics: MXNet src/operator/nn/layer_norm-inl.h, src/operator/instance_norm-inl.h,
 * src/operator/nn/group_norm-inl.h, src/operator/l2_normalization-inl.h (and their
 * .cu files: one reduction per normalised group). Each kernel parses the
 * attributes it needs (parse_param) and views data as (outer, K, inner) exactly as
 * cpu-blas does; the GPU code is in cu_kern_norm.cu, the shared element formulas in
 * plugins/common/mxk_norm.h. Statistics: LayerNorm and GroupNorm output mean and
 * std = sqrt(var + eps), InstanceNorm mean and var, L2Normalization the norm.
 *
 * Requests: every output and gradient honours NULL, WRITE, INPLACE and ADD
 * (MXK_KERNEL_SUPPORTS_ADDTO). Declined: dtypes other than float32 (cpu-blas's
 * kernels are float32 only too). Sums are float32 on the GPU (cpu-blas sums in
 * double), so results agree to float32 rounding of the reductions.
 */
#include <stdlib.h>

#include "cu_kern_norm.h"
#include "cuda_plugin.h"
#include "mxk_norm.h"

/** The attributes a kernel reads (those an operator does not have keep their zero). */
typedef struct cu_norm_param {
    int32_t kind;   /**< enum mxk_norm_kind */
    int32_t l2mode; /**< enum mxk_norm_l2_mode (L2Normalization) */
    float eps;
    int64_t axis;   /**< LayerNorm */
    int64_t groups; /**< GroupNorm num_groups */
} cu_norm_param;

/**
 * Parses the attributes of `kind` (validated by the operator's schema and
 * parse_param already; read again here as this kernel's own object). Errors:
 * the mxk_sdk_attr_* readers', MXK_ERR_OUT_OF_MEMORY.
 */
static mxk_status cu_norm_parse(const mxk_attrs *attrs, int32_t kind, void **out,
                                mxk_error_sink *err) {
    cu_norm_param p = {.kind = kind};
    double eps;
    MXK_SDK_CHECK(mxk_sdk_attr_float_finite(attrs, "eps", &eps, err));
    p.eps = (float)eps;
    if (kind == MXK_NORM_LAYER)
        MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "axis", &p.axis, err));
    if (kind == MXK_NORM_GROUP)
        MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "num_groups", 1, INT32_MAX, &p.groups, err));
    if (kind == MXK_NORM_L2)
        MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "mode", "channel|instance|spatial", &p.l2mode, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

/* One parse_param per operator. */
CU_PARSE_AS(cu_ln_parse, cu_norm_parse, MXK_NORM_LAYER)
CU_PARSE_AS(cu_in_parse, cu_norm_parse, MXK_NORM_INSTANCE)
CU_PARSE_AS(cu_gn_parse, cu_norm_parse, MXK_NORM_GROUP)
CU_PARSE_AS(cu_l2_parse, cu_norm_parse, MXK_NORM_L2)

/**
 * The (outer, K, inner) view of a data shape for the operator (mxk_norm.h, as
 * cpu-blas) and the number of statistics (groups). Errors (MXK_ERR_SHAPE), as
 * cpu-blas: LayerNorm's axis out of range, fewer than 3 dims (InstanceNorm,
 * GroupNorm, L2Normalization channel / spatial), channels not divisible by num_groups.
 */
static mxk_status cu_norm_view_of(const cu_norm_param *p, const mxk_shape *d, cu_norm_view *v,
                                  mxk_error_sink *err) {
    mxk_norm_view w;
    if (p->kind == MXK_NORM_L2)
        MXK_SDK_CHECK(mxk_norm_l2_view(p->l2mode, d, &w, err));
    else
        MXK_SDK_CHECK(mxk_norm_moments_view(p->kind, p->axis, p->groups, d, &w, err));
    *v = (cu_norm_view){.outer = w.outer,
                        .K = w.K,
                        .inner = w.inner,
                        .P = w.P,
                        .per_k = p->kind == MXK_NORM_LAYER,
                        .is_var = p->kind == MXK_NORM_INSTANCE,
                        .eps = p->eps};
    return MXK_OK;
}

/**
 * Checks that `t` is a float32 tensor of n elements on the GPU (its data present).
 * Errors: MXK_ERR_INVALID_ARGUMENT, MXK_ERR_SHAPE "WHAT: expected N elements, got M".
 */
static mxk_status cu_norm_check(const mxk_tensor *t, uint64_t n, const char *what,
                                mxk_error_sink *err) {
    if (t == NULL || t->data == NULL || t->dtype != MXK_FLOAT32)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s: expected a float32 array", what);
    if (mxk_sdk_shape_count(&t->shape) != n)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: expected %llu elements, got %llu", what,
                             (unsigned long long)n,
                             (unsigned long long)mxk_sdk_shape_count(&t->shape));
    return MXK_OK;
}

/**
 * The device pointer of output or gradient i under request req: NULL for
 * MXK_REQ_NULL; otherwise the tensor after cu_norm_check (n elements).
 */
static mxk_status cu_norm_out(const mxk_tensor *t, mxk_op_req req, uint64_t n, const char *what,
                              float **out, mxk_error_sink *err) {
    *out = NULL;
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(cu_norm_check(t, n, what, err));
    *out = t->data;
    return MXK_OK;
}

/** The data view of a call after checking the data argument. */
static mxk_status cu_norm_data(const cu_norm_param *p, const mxk_tensor *x, cu_norm_view *v,
                               uint64_t *n, mxk_error_sink *err) {
    if (x == NULL || x->data == NULL || x->dtype != MXK_FLOAT32)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "argument 'data': expected a float32 array");
    MXK_SDK_CHECK(cu_norm_view_of(p, &x->shape, v, err));
    *n = mxk_sdk_shape_count(&x->shape);
    return MXK_OK;
}

/** Name of the second statistic: var (InstanceNorm) or std. */
static const char *cu_norm_stat_name(const cu_norm_param *p) {
    return p->kind == MXK_NORM_INSTANCE ? "output 'var'" : "output 'std'";
}

/** Moments forward: output, mean and std / var by their requests. */
static mxk_status cu_moments_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                                     const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_norm_param *p = param;
    const mxk_op_req *req = args->req;
    if (args->num_in != 3 || args->num_out != 3)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 3 arguments and 3 outputs");
    cu_norm_view v;
    uint64_t n;
    MXK_SDK_CHECK(cu_norm_data(p, args->in_data[0], &v, &n, err));
    MXK_SDK_CHECK(cu_norm_check(args->in_data[1], v.P, "argument 'gamma'", err));
    MXK_SDK_CHECK(cu_norm_check(args->in_data[2], v.P, "argument 'beta'", err));
    float *y, *mean, *stat;
    uint64_t ng = v.outer * v.inner;
    MXK_SDK_CHECK(cu_norm_out(args->out_data[0], req[0], n, "output 'output'", &y, err));
    MXK_SDK_CHECK(cu_norm_out(args->out_data[1], req[1], ng, "output 'mean'", &mean, err));
    MXK_SDK_CHECK(cu_norm_out(args->out_data[2], req[2], ng, cu_norm_stat_name(p), &stat, err));
    if (n == 0 || (y == NULL && mean == NULL && stat == NULL))
        return MXK_OK;
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(cu_launch_norm_moments_forward(&v, args->in_data[0]->data, args->in_data[1]->data,
                                            args->in_data[2]->data, y, req[0] == MXK_REQ_ADD, mean,
                                            req[1] == MXK_REQ_ADD, stat, req[2] == MXK_REQ_ADD,
                                            cu_stream(ctx)),
             "norm forward", err);
    return MXK_OK;
}

/**
 * Moments backward: dx (one block per group) and dgamma / dbeta (one block per
 * parameter) by their requests, from out_grad[0], data, gamma and the statistics.
 */
static mxk_status cu_moments_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                                      const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_norm_param *p = param;
    const mxk_op_req *req = args->req;
    if (args->num_in != 3 || args->num_out != 3 || args->num_out_grad < 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 3 arguments and 3 outputs");
    if (req[0] == MXK_REQ_NULL && req[1] == MXK_REQ_NULL && req[2] == MXK_REQ_NULL)
        return MXK_OK;
    cu_norm_view v;
    uint64_t n;
    MXK_SDK_CHECK(cu_norm_data(p, args->in_data[0], &v, &n, err));
    uint64_t ng = v.outer * v.inner;
    MXK_SDK_CHECK(cu_norm_check(args->out_grad[0], n, "gradient of 'output'", err));
    MXK_SDK_CHECK(cu_norm_check(args->in_data[1], v.P, "argument 'gamma'", err));
    MXK_SDK_CHECK(cu_norm_check(args->out_data[1], ng, "output 'mean'", err));
    MXK_SDK_CHECK(cu_norm_check(args->out_data[2], ng, cu_norm_stat_name(p), err));
    float *dx, *dg, *db;
    MXK_SDK_CHECK(cu_norm_out(args->in_grad[0], req[0], n, "gradient of 'data'", &dx, err));
    MXK_SDK_CHECK(cu_norm_out(args->in_grad[1], req[1], v.P, "gradient of 'gamma'", &dg, err));
    MXK_SDK_CHECK(cu_norm_out(args->in_grad[2], req[2], v.P, "gradient of 'beta'", &db, err));
    const float *x = args->in_data[0]->data, *dy = args->out_grad[0]->data;
    const float *mean = args->out_data[1]->data, *stat = args->out_data[2]->data;
    MXK_SDK_CHECK(cu_enter(ctx, err));
    if (dx != NULL && n > 0)
        CU_CHECK(cu_launch_norm_moments_backward_data(&v, x, args->in_data[1]->data, dy, mean, stat,
                                                      dx, req[0] == MXK_REQ_ADD, cu_stream(ctx)),
                 "norm backward (data)", err);
    if ((dg != NULL || db != NULL) && v.P > 0)
        CU_CHECK(cu_launch_norm_moments_backward_param(&v, x, dy, mean, stat, dg,
                                                       req[1] == MXK_REQ_ADD, db,
                                                       req[2] == MXK_REQ_ADD, cu_stream(ctx)),
                 "norm backward (gamma, beta)", err);
    return MXK_OK;
}

/** L2Normalization forward: output and norm by their requests. */
static mxk_status cu_l2_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                                const mxk_forward_args *args, mxk_error_sink *err) {
    const mxk_op_req *req = args->req;
    if (args->num_in != 1 || args->num_out != 2)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 1 argument and 2 outputs");
    cu_norm_view v;
    uint64_t n;
    MXK_SDK_CHECK(cu_norm_data(param, args->in_data[0], &v, &n, err));
    float *y, *norm;
    MXK_SDK_CHECK(cu_norm_out(args->out_data[0], req[0], n, "output 'output'", &y, err));
    MXK_SDK_CHECK(
        cu_norm_out(args->out_data[1], req[1], v.outer * v.inner, "output 'norm'", &norm, err));
    if (n == 0 || (y == NULL && norm == NULL))
        return MXK_OK;
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(cu_launch_norm_l2_forward(v.outer, v.K, v.inner, v.eps, args->in_data[0]->data, y,
                                       req[0] == MXK_REQ_ADD, norm, req[1] == MXK_REQ_ADD,
                                       cu_stream(ctx)),
             "L2Normalization forward", err);
    return MXK_OK;
}

/** L2Normalization backward: dx from out_grad, the output and the norm (dx may be dy). */
static mxk_status cu_l2_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                                 const mxk_backward_args *args, mxk_error_sink *err) {
    if (args->num_in != 1 || args->num_out != 2 || args->num_out_grad < 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 1 argument and 2 outputs");
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    cu_norm_view v;
    uint64_t n;
    const mxk_tensor *yt = args->out_data[0];
    MXK_SDK_CHECK(cu_norm_data(param, yt, &v, &n, err));
    MXK_SDK_CHECK(cu_norm_check(args->out_grad[0], n, "gradient of 'output'", err));
    MXK_SDK_CHECK(cu_norm_check(args->out_data[1], v.outer * v.inner, "output 'norm'", err));
    float *dx;
    MXK_SDK_CHECK(cu_norm_out(args->in_grad[0], req, n, "gradient of 'data'", &dx, err));
    if (n == 0)
        return MXK_OK;
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(cu_launch_norm_l2_backward(v.outer, v.K, v.inner, yt->data, args->out_data[1]->data,
                                        args->out_grad[0]->data, dx, req == MXK_REQ_ADD,
                                        cu_stream(ctx)),
             "L2Normalization backward", err);
    return MXK_OK;
}

/** Registers the GPU kernels of LayerNorm, InstanceNorm, GroupNorm and L2Normalization. */
mxk_status cu_register_norm(mxk_registrar *reg, mxk_error_sink *err) {
    static const cu_op_entry moments[] = {
        {"LayerNorm", cu_ln_parse}, {"InstanceNorm", cu_in_parse}, {"GroupNorm", cu_gn_parse}};
    static const cu_op_entry l2[] = {{"L2Normalization", cu_l2_parse}};
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.flags = MXK_KERNEL_SUPPORTS_ADDTO;
    k.supports = cu_supports_float32;
    k.forward = cu_moments_forward;
    k.backward = cu_moments_backward;
    MXK_SDK_CHECK(cu_register_each(reg, &k, moments, MXK_SDK_COUNTOF(moments), err));
    k.forward = cu_l2_forward;
    k.backward = cu_l2_backward;
    return cu_register_each(reg, &k, l2, MXK_SDK_COUNTOF(l2), err);
}
