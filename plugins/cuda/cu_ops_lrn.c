/*
 * cuda plugin: the LRN kernel (own CUDA kernels, cu_kern_lrn.cu).
 *
 * Semantics are the operator's (cpu-blas op_lrn.c; upstream MXNet
 * src/operator/nn/lrn-inl.h, lrn.cu):
 * data (N, C, H, W); outputs output and tmp_norm (the norm knorm + alpha/nsize
 * sum of x^2 over the channel window, which the backward reads). cuDNN's
 * cross-channel LRN (cudnnLRNCrossChannelForward) is not used: it has no
 * tmp_norm output, takes window sizes 1..16 only, and windows an even size
 * asymmetrically (nsize channels, one more ahead) while the operator windows
 * nsize - 1 channels symmetrically. Data is float32. Every request is handled
 * (ADD included).
 */
#include "cu_kern_layer.h"
#include "cu_blas_util.h"
#include "cu_layer.h"

/** Parsed attributes. */
typedef struct cu_lrn_param {
    double alpha, beta, knorm;
    int64_t nsize;
} cu_lrn_param;

/** Parses alpha, beta, knorm, nsize. Errors: the attribute readers'. */
static mxk_status lrn_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_lrn_param p;
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "alpha", &p.alpha, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "beta", &p.beta, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "knorm", &p.knorm, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "nsize", &p.nsize, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

/** The geometry of 4-D data shape d. Errors: MXK_ERR_SHAPE for another rank. */
static mxk_status lrn_geom_of(const cu_lrn_param *p, const mxk_shape *d, cu_lrn_geom *g,
                              mxk_error_sink *err) {
    if (d->ndim != 4)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "argument 'data': LRN needs 4-D data");
    g->N = d->dims[0];
    g->C = d->dims[1];
    g->S = d->dims[2] * d->dims[3];
    g->half = (p->nsize - 1) / 2;
    g->a = (float)(p->alpha / (double)p->nsize);
    g->k = (float)p->knorm;
    g->nbeta = (float)-p->beta;
    g->nbeta1 = (float)(-p->beta - 1.0);
    g->coef = (float)(2.0 * p->beta * p->alpha / (double)p->nsize);
    return MXK_OK;
}

/** Forward: tmp_norm and y by their requests. */
static mxk_status lrn_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cu_enter(ctx, err));
    const mxk_op_req *req = args->req;
    if (req[0] == MXK_REQ_NULL && req[1] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *xt = args->in_data[0];
    const uint64_t n = (uint64_t)cu_shape_size(&xt->shape);
    MXK_SDK_CHECK(cu_check_tensor(xt, n, "LRN", "argument 'data'", err));
    cu_lrn_geom g;
    MXK_SDK_CHECK(lrn_geom_of(param, &xt->shape, &g, err));
    float *out[2] = {NULL, NULL};
    static const char *const names[2] = {"output 'output'", "output 'tmp_norm'"};
    for (int i = 0; i < 2; i++)
        if (req[i] != MXK_REQ_NULL) {
            MXK_SDK_CHECK(cu_check_tensor(args->out_data[i], (int64_t)n, "LRN", names[i], err));
            out[i] = cu_f32(args->out_data[i]);
        }
    const int32_t rq[2] = {req[0], req[1]};
    return cu_check(cu_launch_lrn_forward(g, cu_f32(xt), out[0], out[1], rq, cu_stream(ctx)),
                    "LRN forward", err);
}

/** Backward: dx from dy, data and tmp_norm by the request. */
static mxk_status lrn_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cu_enter(ctx, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *xt = args->in_data[0];
    const uint64_t n = (uint64_t)cu_shape_size(&xt->shape);
    MXK_SDK_CHECK(cu_check_tensor(xt, n, "LRN", "argument 'data'", err));
    MXK_SDK_CHECK(cu_check_tensor(args->out_grad[0], n, "LRN", "gradient of 'output'", err));
    MXK_SDK_CHECK(cu_check_tensor(args->out_data[1], n, "LRN", "output 'tmp_norm'", err));
    MXK_SDK_CHECK(cu_check_tensor(args->in_grad[0], n, "LRN", "gradient of 'data'", err));
    cu_lrn_geom g;
    MXK_SDK_CHECK(lrn_geom_of(param, &xt->shape, &g, err));
    return cu_check(cu_launch_lrn_backward(g, cu_f32(xt), cu_f32(args->out_grad[0]),
                                           cu_f32(args->out_data[1]), cu_f32(args->in_grad[0]), req,
                                           cu_stream(ctx)),
                    "LRN backward", err);
}

/** Registers the LRN kernel. */
mxk_status cu_register_lrn(mxk_registrar *reg, mxk_error_sink *err) {
    return cu_layer_register(reg, "LRN", lrn_parse, NULL, lrn_forward, lrn_backward, err);
}
