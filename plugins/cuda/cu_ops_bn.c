/*
 * cuda plugin: the BatchNorm kernel (own CUDA kernels, cu_kern_bn.cu).
 *
 * Semantics are the operator's (cpu-blas op_batchnorm.c; upstream MXNet
 * src/operator/nn/batch_norm-inl.h, batch_norm.cc, batch_norm.cu and
 * src/operator/nn/cudnn/cudnn_batch_norm-inl.h): eps, momentum, fix_gamma,
 * use_global_stats, output_mean_var, axis (cudnn_off is ignored). cuDNN's
 * batch normalisation is not used: cudnnBatchNormalizationForwardTraining
 * updates the running variance with the unbiased batch variance in the forward,
 * while the operator updates the moving statistics in the training backward
 * from the biased variance, and keeps the inverse standard deviation in its
 * `var` output. Training (is_train and not use_global_stats): batch statistics;
 * otherwise the moving ones. fix_gamma writes 1 into gamma where it differs and
 * gives gamma a 0 gradient. Data, gamma, beta and the aux states are float32.
 * Every request is handled (ADD included).
 */
#include "cu_kern_layer.h"
#include "cu_blas_util.h"
#include "cu_layer.h"

/** Parsed attributes. */
typedef struct cu_bn_param {
    double eps;
    float momentum;
    int32_t fix_gamma, use_global_stats;
    int64_t axis;
} cu_bn_param;

/** Parses eps, momentum, fix_gamma, use_global_stats, axis. Errors: the attribute readers'. */
static mxk_status bn_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_bn_param p;
    double m;
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "eps", &p.eps, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "momentum", &m, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "fix_gamma", &p.fix_gamma, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "use_global_stats", &p.use_global_stats, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "axis", &p.axis, err));
    p.momentum = (float)m;
    return cu_param_dup(&p, sizeof p, out, err);
}

/**
 * The (outer, C, inner) geometry of data shape d and the call's mode. Errors:
 * MXK_ERR_SHAPE for an axis out of range.
 */
static mxk_status bn_geom_of(const cu_bn_param *p, const mxk_op_ctx *ctx, const mxk_shape *d,
                             cu_bn_geom *g, mxk_error_sink *err) {
    int64_t ax = p->axis < 0 ? p->axis + d->ndim : p->axis;
    if (ax < 0 || ax >= d->ndim)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'data': axis %lld is out of range for %d dimensions",
                             (long long)p->axis, (int)d->ndim);
    g->outer = g->inner = 1;
    for (int64_t i = 0; i < ax; i++)
        g->outer *= d->dims[i];
    for (int64_t i = ax + 1; i < d->ndim; i++)
        g->inner *= d->dims[i];
    g->C = d->dims[ax];
    g->eps = p->eps;
    g->momentum = p->momentum;
    g->fix_gamma = p->fix_gamma;
    g->train = ctx->is_train && !p->use_global_stats;
    return MXK_OK;
}

/** Checks the two aux states (moving_mean, moving_var), each (C,). */
static mxk_status bn_check_aux(uint32_t num_aux, const mxk_tensor *const *aux, int64_t C,
                               mxk_error_sink *err) {
    if (num_aux != 2)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "BatchNorm expects 2 aux states");
    MXK_SDK_CHECK(cu_check_tensor(aux[0], C, "BatchNorm", "auxiliary state 'moving_mean'", err));
    return cu_check_tensor(aux[1], C, "BatchNorm", "auxiliary state 'moving_var'", err);
}

/** Output i's pointer (checked to hold n elements), or NULL when its request is NULL. */
static mxk_status bn_out(const mxk_tensor *t, mxk_op_req req, uint64_t n, const char *what,
                         float **p, mxk_error_sink *err) {
    *p = NULL;
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(cu_check_tensor(t, (int64_t)n, "BatchNorm", what, err));
    *p = cu_f32(t);
    return MXK_OK;
}

/** Forward: statistics (batch or moving), y, mean and inverse std by their requests. */
static mxk_status bn_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cu_enter(ctx, err));
    const mxk_tensor *xt = args->in_data[0];
    const uint64_t n = (uint64_t)cu_shape_size(&xt->shape);
    cu_bn_geom g;
    MXK_SDK_CHECK(bn_geom_of(param, ctx, &xt->shape, &g, err));
    const uint64_t C = (uint64_t)g.C;
    MXK_SDK_CHECK(cu_check_tensor(xt, n, "BatchNorm", "argument 'data'", err));
    MXK_SDK_CHECK(cu_check_tensor(args->in_data[1], C, "BatchNorm", "argument 'gamma'", err));
    MXK_SDK_CHECK(cu_check_tensor(args->in_data[2], C, "BatchNorm", "argument 'beta'", err));
    MXK_SDK_CHECK(bn_check_aux(args->num_aux, args->aux, g.C, err));
    const mxk_op_req *req = args->req;
    float *y, *mean, *inv;
    MXK_SDK_CHECK(bn_out(args->out_data[0], req[0], n, "output 'output'", &y, err));
    MXK_SDK_CHECK(bn_out(args->out_data[1], req[1], C, "output 'mean'", &mean, err));
    MXK_SDK_CHECK(bn_out(args->out_data[2], req[2], C, "output 'var'", &inv, err));
    const int32_t rq[3] = {req[0], req[1], req[2]};
    return cu_check(cu_launch_bn_forward(g, cu_f32(xt), cu_f32(args->in_data[1]),
                                         cu_f32(args->in_data[2]), cu_f32(args->aux[0]),
                                         cu_f32(args->aux[1]), y, mean, inv, rq, cu_stream(ctx)),
                    "BatchNorm forward", err);
}

/**
 * Backward: in training the moving-statistics update from the saved mean and
 * inverse std, then dx, dgamma, dbeta by their requests.
 */
static mxk_status bn_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cu_enter(ctx, err));
    const mxk_tensor *xt = args->in_data[0];
    const uint64_t n = (uint64_t)cu_shape_size(&xt->shape);
    cu_bn_geom g;
    MXK_SDK_CHECK(bn_geom_of(param, ctx, &xt->shape, &g, err));
    const uint64_t C = (uint64_t)g.C;
    MXK_SDK_CHECK(bn_check_aux(args->num_aux, args->aux, g.C, err));
    const float *mean = NULL, *inv = NULL;
    if (g.train) {
        MXK_SDK_CHECK(cu_check_tensor(args->out_data[1], C, "BatchNorm", "output 'mean'", err));
        MXK_SDK_CHECK(cu_check_tensor(args->out_data[2], C, "BatchNorm", "output 'var'", err));
        mean = cu_f32(args->out_data[1]);
        inv = cu_f32(args->out_data[2]);
    }
    const mxk_op_req *req = args->req;
    float *dx, *dgamma, *dbeta;
    MXK_SDK_CHECK(bn_out(args->in_grad[0], req[0], n, "gradient of 'data'", &dx, err));
    MXK_SDK_CHECK(bn_out(args->in_grad[1], req[1], C, "gradient of 'gamma'", &dgamma, err));
    MXK_SDK_CHECK(bn_out(args->in_grad[2], req[2], C, "gradient of 'beta'", &dbeta, err));
    const float *x = NULL, *gamma = NULL, *dy = NULL;
    if (dx != NULL || dgamma != NULL || dbeta != NULL) {
        MXK_SDK_CHECK(cu_check_tensor(xt, n, "BatchNorm", "argument 'data'", err));
        MXK_SDK_CHECK(cu_check_tensor(args->in_data[1], C, "BatchNorm", "argument 'gamma'", err));
        MXK_SDK_CHECK(
            cu_check_tensor(args->out_grad[0], n, "BatchNorm", "gradient of 'output'", err));
        x = cu_f32(xt);
        gamma = cu_f32(args->in_data[1]);
        dy = cu_f32(args->out_grad[0]);
    }
    if (!g.train && dy == NULL)
        return MXK_OK;
    const int32_t rq[3] = {req[0], req[1], req[2]};
    return cu_check(cu_launch_bn_backward(g, x, gamma, dy, mean, inv, cu_f32(args->aux[0]),
                                          cu_f32(args->aux[1]), dx, dgamma, dbeta, rq,
                                          cu_stream(ctx)),
                    "BatchNorm backward", err);
}

/** Registers the BatchNorm kernel. */
mxk_status cu_register_bn(mxk_registrar *reg, mxk_error_sink *err) {
    return cu_layer_register(reg, "BatchNorm", bn_parse, NULL, bn_forward, bn_backward, err);
}
