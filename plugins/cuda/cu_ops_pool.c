/*
 * cuda plugin: the Pooling kernel (own CUDA kernels, cu_kern_pool.cu).
 *
 * Semantics are the operator's (cpu-blas op_pooling.c; upstream MXNet
 * src/operator/nn/pooling-inl.h, pooling.cu, pool.cuh and
 * src/operator/nn/cudnn/cudnn_pooling-inl.h): max, avg (count_include_pad),
 * sum and lp (p 1..3) pooling, 1-D, 2-D and 3-D, pooling_convention valid, full
 * and same, global_pool, channel-first and channel-last layouts. cuDNN's pooling
 * is not used: it has no full convention, sum or lp pooling, and its max
 * backward routes ties by its own order, while the operator routes each window's
 * gradient to the first element (row-major) equal to the output; the own
 * kernels cover every configuration and agree with cpu-blas's float sums.
 * The output sizes are the bound output's (the operator infers them). Every
 * request is handled (ADD included).
 */
#include <string.h>

#include "cu_kern_layer.h"
#include "cu_blas_util.h"
#include "cu_layer.h"
#include "mxk_pool.h"

/** Spatial axes of the three-axis view (d, h, w). */
#define CU_POOL_AXES 3

/** Parsed attributes; per-axis arrays are aligned to the last axes of (d, h, w). */
typedef struct cu_pool_param {
    int32_t type;        /**< enum mxk_pool_type */
    int32_t global;      /**< global_pool */
    int32_t include_pad; /**< count_include_pad */
    int32_t last;        /**< channel-last layout (NWC, NHWC, NDHWC) */
    int64_t p_value;     /**< lp: 1, 2 or 3 */
    int64_t kernel[CU_POOL_AXES], stride[CU_POOL_AXES], pad[CU_POOL_AXES];
} cu_pool_param;

/**
 * Reads the tuple attribute `key` of nd values into out[3 - nd .. 3); absent or
 * "()" leaves `dflt` (the leading axes keep it too).
 */
static mxk_status pool_tuple(const mxk_attrs *attrs, const char *key, int nd, int64_t dflt,
                             int64_t out[CU_POOL_AXES], mxk_error_sink *err) {
    for (int i = 0; i < CU_POOL_AXES; i++)
        out[i] = dflt;
    mxk_shape s = mxk_sdk_shape_unknown();
    if (mxk_sdk_attr_is_set(attrs, key))
        MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, key, &s, err));
    if (s.ndim == 0)
        return MXK_OK;
    if (s.ndim != nd)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "attribute '%s': expected %d values",
                             key, nd);
    for (int i = 0; i < nd; i++)
        out[CU_POOL_AXES - nd + i] = s.dims[i];
    return MXK_OK;
}

/** Parses Pooling's attributes (validated by the operator). Errors: the attribute readers'. */
static mxk_status pool_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_pool_param p;
    memset(&p, 0, sizeof p);
    int32_t conv = 0, layout = 0;
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "pool_type", "max|avg|sum|lp", &p.type, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "global_pool", &p.global, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "pooling_convention", "valid|full|same", &conv, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "count_include_pad", &p.include_pad, err));
    MXK_SDK_CHECK(
        mxk_sdk_attr_enum(attrs, "layout", "None|NCW|NCHW|NCDHW|NWC|NHWC|NDHWC", &layout, err));
    p.last = layout > CU_POOL_AXES;
    if (p.type == MXK_POOL_LP)
        MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "p_value", &p.p_value, err));
    mxk_shape k = mxk_sdk_shape_unknown();
    if (mxk_sdk_attr_is_set(attrs, "kernel"))
        MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "kernel", &k, err));
    if (k.ndim > CU_POOL_AXES)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "attribute 'kernel': too long");
    if (k.ndim > 0) { /* global_pool without kernel ignores stride and pad */
        MXK_SDK_CHECK(pool_tuple(attrs, "kernel", k.ndim, 1, p.kernel, err));
        MXK_SDK_CHECK(pool_tuple(attrs, "stride", k.ndim, 1, p.stride, err));
        if (conv != 2) /* same: pad 0, the only value the operator accepts */
            MXK_SDK_CHECK(pool_tuple(attrs, "pad", k.ndim, 0, p.pad, err));
    }
    return cu_param_dup(&p, sizeof p, out, err);
}

/**
 * The three-axis geometry of data shape d and output shape o (3 to 5 axes,
 * one spatial layout; the output's spatial sizes as the operator inferred them).
 * Errors: MXK_ERR_SHAPE when the ranks differ or are out of range.
 */
static mxk_status pool_geom_of(const cu_pool_param *p, const mxk_shape *d, const mxk_shape *o,
                               cu_pool_geom *g, mxk_error_sink *err) {
    if (d->ndim < 3 || d->ndim > 5 || o->ndim != d->ndim)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "Pooling: data and output need one rank of 3 to 5 dimensions");
    const int nd = d->ndim - 2, lead = CU_POOL_AXES - nd, first = p->last ? 1 : 2;
    int64_t x[CU_POOL_AXES] = {1, 1, 1}, y[CU_POOL_AXES] = {1, 1, 1};
    for (int i = 0; i < nd; i++) {
        x[lead + i] = d->dims[first + i];
        y[lead + i] = o->dims[first + i];
    }
    int64_t k[CU_POOL_AXES], s[CU_POOL_AXES], pd[CU_POOL_AXES];
    for (int i = 0; i < CU_POOL_AXES; i++) {
        k[i] = p->global ? x[i] : p->kernel[i];
        s[i] = p->global ? 1 : p->stride[i];
        pd[i] = p->global ? 0 : p->pad[i];
    }
    g->N = d->dims[0];
    g->C = d->dims[p->last ? nd + 1 : 1];
    g->es = p->last ? g->C : 1;
    g->D = x[0], g->H = x[1], g->W = x[2];
    g->OD = y[0], g->OH = y[1], g->OW = y[2];
    g->kd = k[0], g->kh = k[1], g->kw = k[2];
    g->sd = s[0], g->sh = s[1], g->sw = s[2];
    g->pd = pd[0], g->ph = pd[1], g->pw = pd[2];
    g->type = p->type;
    g->include_pad = p->include_pad;
    g->p_value = p->p_value;
    return MXK_OK;
}

/** Forward: every output the reduction of its window, by the request. */
static mxk_status pool_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_forward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cu_enter(ctx, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *xt = args->in_data[0], *yt = args->out_data[0];
    MXK_SDK_CHECK(
        cu_check_tensor(xt, cu_shape_size(&xt->shape), "Pooling", "argument 'data'", err));
    MXK_SDK_CHECK(
        cu_check_tensor(yt, cu_shape_size(&yt->shape), "Pooling", "output 'output'", err));
    cu_pool_geom g;
    MXK_SDK_CHECK(pool_geom_of(param, &xt->shape, &yt->shape, &g, err));
    return cu_check(cu_launch_pool_forward(g, cu_f32(xt), cu_f32(yt), req, cu_stream(ctx)),
                    "Pooling forward", err);
}

/** Backward: every input the gradients routed to it, by the request. */
static mxk_status pool_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                                const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_pool_param *p = param;
    MXK_SDK_CHECK(cu_enter(ctx, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dyt = args->out_grad[0], *dxt = args->in_grad[0];
    const uint64_t n = (uint64_t)cu_shape_size(&dxt->shape),
                   on = (uint64_t)cu_shape_size(&dyt->shape);
    MXK_SDK_CHECK(cu_check_tensor(dyt, on, "Pooling", "gradient of 'output'", err));
    MXK_SDK_CHECK(cu_check_tensor(dxt, n, "Pooling", "gradient of 'data'", err));
    const float *x = NULL, *y = NULL;
    if (p->type == MXK_POOL_MAX || p->type == MXK_POOL_LP) {
        MXK_SDK_CHECK(cu_check_tensor(args->in_data[0], n, "Pooling", "argument 'data'", err));
        MXK_SDK_CHECK(cu_check_tensor(args->out_data[0], on, "Pooling", "output 'output'", err));
        x = cu_f32(args->in_data[0]);
        y = cu_f32(args->out_data[0]);
    }
    cu_pool_geom g;
    MXK_SDK_CHECK(pool_geom_of(p, &dxt->shape, &dyt->shape, &g, err));
    return cu_check(cu_launch_pool_backward(g, x, y, cu_f32(dyt), cu_f32(dxt), req, cu_stream(ctx)),
                    "Pooling backward", err);
}

/** Registers the Pooling kernel. */
mxk_status cu_register_pool(mxk_registrar *reg, mxk_error_sink *err) {
    return cu_layer_register(reg, "Pooling", pool_parse, NULL, pool_forward, pool_backward, err);
}
