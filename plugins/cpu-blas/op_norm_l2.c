/*
 * cpu-blas plugin: L2Normalization.
 *
 * Semantics: MXNet src/operator/l2_normalization-inl.h. Argument data; outputs
 * output (data's shape) and norm (hidden). Data is viewed as (outer, K, inner) and
 * each (o, i) is a group of K elements of stride inner:
 *   instance  (N, rest...):     outer N, K = rest, inner 1;   norm (N,)
 *   channel   (N, C, rest...):  outer N, K = C, inner = rest; norm (N, 1, rest...)
 *   spatial   (N, C, rest...):  outer N*C, K = rest, inner 1; norm (N, C)
 * (channel and spatial need at least 3 dims). norm = sqrt(sum x^2 + eps) and
 * y = x / norm over each group. Backward, per group:
 *   dx = (dy - y sum(dy y)) / norm
 * reading out_grad, output and norm; dx may share memory with out_grad (upstream's
 * BackwardInplaceOption).
 */
#include <math.h>

#include "cb_tensor.h"
#include "mxk_norm.h"
#include "norm_ops.h"

/** The modes, in the order of enum mxk_norm_l2_mode. */
#define L2_MODES "channel|instance|spatial"

/** Parsed attributes. */
typedef struct l2_param {
    double eps; /**< float32 in upstream: the value rounded to float */
    int32_t mode;
} l2_param;

static const char *const l2_args[] = {"data", NULL};
static const char *const l2_outs[] = {"output", "norm", NULL};

/** Attribute schema (MXNet 1.9.1 L2NormalizationParam). */
static const mxk_attr_def l2_attrs[] = {
    MXK_SDK_ATTR("eps", MXK_ATTR_FLOAT, 0, "1e-10", NULL,
                 "A small constant for numerical stability."),
    MXK_SDK_ATTR("mode", MXK_ATTR_ENUM, 0, "instance", L2_MODES,
                 "Specify the dimension along which to compute L2 norm."),
};

/** Parses eps (finite, >= 0) and mode. */
static mxk_status l2_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    l2_param p;
    float eps = 0.0f;
    MXK_SDK_CHECK(cb_norm_attr_f32(attrs, "eps", &eps, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "mode", L2_MODES, &p.mode, err));
    if (!(eps >= 0.0f))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "attribute 'eps': must be >= 0, got %g",
                             (double)eps);
    p.eps = eps;
    return cbt_param_new(&p, sizeof p, out, err);
}

/** The (outer, K, inner) view of a data shape and the norm's shape (mxk_norm_l2_view);
 * MXK_ERR_SHAPE for a shape not fully known or fewer than 3 dims in channel / spatial mode. */
static mxk_status l2_view(const l2_param *p, const mxk_shape *d, uint64_t *outer, uint64_t *K,
                          uint64_t *inner, mxk_shape *norm, mxk_error_sink *err) {
    if (!mxk_sdk_shape_is_known(d)) {
        char b[MXK_SDK_SHAPE_STR_MAX];
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "L2Normalization: shape %s is not fully known",
                             mxk_sdk_shape_format(d, b, sizeof b));
    }
    mxk_norm_view v;
    MXK_SDK_CHECK(mxk_norm_l2_view(p->mode, d, &v, err));
    *outer = v.outer, *K = v.K, *inner = v.inner;
    *norm = v.stat;
    return MXK_OK;
}

/** Shape inference: output = data (both ways), norm by the mode. */
static mxk_status l2_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    if (num_in != 1 || num_out != 2)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 1 argument and 2 outputs");
    MXK_SDK_CHECK(mxk_sdk_infer_shape_same(in, 1, l2_args, out, 1, l2_outs, err));
    if (!mxk_sdk_shape_is_known(&in[0]))
        return MXK_OK;
    uint64_t o, k, i;
    mxk_shape norm;
    MXK_SDK_CHECK(l2_view(param, &in[0], &o, &k, &i, &norm, err));
    return mxk_sdk_shape_assign_named(&out[1], &norm, "output", "norm", err);
}

/** Backward reads out_grad, the output and the norm. */
static void l2_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    need_out_data[0] = 1;
    need_out_data[1] = 1;
}

/** Forward: the norm of every group, then y = x / norm. */
static mxk_status l2_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const l2_param *p = param;
    MXK_SDK_CHECK(cb_check_forward(args, 1, 2, l2_args, l2_outs, l2_infer_shape, param, err));
    uint64_t outer, K, inner;
    mxk_shape ns;
    MXK_SDK_CHECK(l2_view(p, &args->in_data[0]->shape, &outer, &K, &inner, &ns, err));
    const mxk_op_req *req = args->req;
    const float *x = cb_f32(args->in_data[0]);
    float *y = req[0] != MXK_REQ_NULL ? cb_f32(args->out_data[0]) : NULL;
    float *nrm = req[1] != MXK_REQ_NULL ? cb_f32(args->out_data[1]) : NULL;
    for (uint64_t o = 0; o < outer; o++)
        for (uint64_t i = 0; i < inner; i++) {
            const float *xp = x + o * K * inner + i;
            double s = 0.0;
            for (uint64_t k = 0; k < K; k++)
                s += (double)xp[k * inner] * xp[k * inner];
            float n = cb_norm_f32(sqrt(s + p->eps));
            if (nrm != NULL)
                mxk_sdk_assign_f32(&nrm[o * inner + i], n, req[1]);
            if (y != NULL)
                for (uint64_t k = 0; k < K; k++)
                    mxk_sdk_assign_f32(&y[o * K * inner + i + k * inner], xp[k * inner] / n,
                                       req[0]);
        }
    return MXK_OK;
}

/** Backward: dx = (dy - y sum(dy y)) / norm by the request (dx may be dy). */
static mxk_status l2_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const l2_param *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, 2, 1, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *yt = args->out_data[0], *nt = args->out_data[1], *gt = args->out_grad[0];
    MXK_SDK_CHECK(cb_check_tensor(yt, "output 'output'", err));
    MXK_SDK_CHECK(cb_check_tensor(nt, "output 'norm'", err));
    MXK_SDK_CHECK(cb_check_tensor(gt, "gradient of 'output'", err));
    uint64_t outer, K, inner;
    mxk_shape ns;
    MXK_SDK_CHECK(l2_view(p, &yt->shape, &outer, &K, &inner, &ns, err));
    if (!mxk_sdk_shape_equal(&gt->shape, &yt->shape) ||
        mxk_sdk_shape_count(&nt->shape) != mxk_sdk_shape_count(&ns))
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "gradient of 'output' or output 'norm' does not match the output");
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req, &yt->shape, "data", err));
    const float *y = cb_f32(yt), *nrm = cb_f32(nt), *dy = cb_f32(gt);
    float *dx = cb_f32(args->in_grad[0]);
    for (uint64_t o = 0; o < outer; o++)
        for (uint64_t i = 0; i < inner; i++) {
            uint64_t base = o * K * inner + i;
            double s = 0.0;
            for (uint64_t k = 0; k < K; k++)
                s += (double)dy[base + k * inner] * y[base + k * inner];
            double n = nrm[o * inner + i];
            for (uint64_t k = 0; k < K; k++) {
                uint64_t e = base + k * inner;
                mxk_sdk_assign_f32(&dx[e], cb_norm_f32(mxk_norm_l2_dx(dy[e], y[e], s, n)), req);
            }
        }
    return MXK_OK;
}

/** Registers L2Normalization and its CPU kernel. */
mxk_status cb_register_norm_l2(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_def def;
    cbt_def_init(&def, "Normalises each instance, channel or spatial position by its L2 norm.",
                 l2_attrs, MXK_SDK_COUNTOF(l2_attrs), l2_args, l2_parse);
    def.outputs = l2_outs;
    def.num_visible_outputs = cbt_num_visible_1;
    def.infer_shape = l2_infer_shape;
    def.backward_dependency = l2_backward_dependency;
    def.backward_inplace = cbt_inplace_00;
    return cbt_register(reg, &def, "L2Normalization", l2_forward, l2_backward, 0, err);
}
