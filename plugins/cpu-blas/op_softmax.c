/*
 * cpu-blas plugin: softmax, log_softmax and SoftmaxActivation.
 *
 * Semantics: MXNet src/operator/nn/softmax-inl.h, softmax.cc, log_softmax.cc
 * (axis default -1, temperature T default 1: y = softmax(x / T)) and
 * src/operator/nn/softmax_activation-inl.h (mode instance: over all non-batch
 * elements of (N, ...); channel: over axis 1 of (N, C, ...)). The maximum is
 * subtracted before exponentiation; sums accumulate in double. Backward reads
 * out_grad and the output:
 *   softmax      dx = y (dy - sum(dy y)) / T
 *   log_softmax  dx = (dy - exp(y) sum(dy)) / T
 * Forward may run in place (data -> output); backward too (out_grad -> in_grad).
 */
#include <math.h>

#include "cb_tensor.h"

/** Parsed attributes (the three operators share them). */
typedef struct sm_param {
    int32_t log;     /**< log_softmax */
    int32_t act;     /**< SoftmaxActivation (mode decides the axis) */
    int32_t channel; /**< SoftmaxActivation mode=channel */
    int64_t axis;    /**< softmax / log_softmax axis */
    double temperature;
} sm_param;

static const char *const sm_args[] = {"data", NULL};

/** Attribute schema of softmax / log_softmax (MXNet 1.9.1 SoftmaxParam). */
static const mxk_attr_def sm_attrs[] = {
    MXK_SDK_ATTR("axis", MXK_ATTR_INT, 0, "-1", NULL, "The axis along which to compute softmax."),
    MXK_SDK_ATTR("temperature", MXK_ATTR_FLOAT, 0, NULL, NULL,
                 "Temperature parameter (1 if absent)."),
};
/** Attribute schema of SoftmaxActivation (SoftmaxActivationParam). */
static const mxk_attr_def sma_attrs[] = {
    MXK_SDK_ATTR("mode", MXK_ATTR_ENUM, 0, "instance", "instance|channel",
                 "instance: softmax over each instance; channel: over axis 1."),
};

/** Parses the attributes; `log` / `act` select the operator. */
static mxk_status sm_parse_common(const mxk_attrs *attrs, int32_t log, int32_t act, void **out,
                                  mxk_error_sink *err) {
    sm_param p = {.log = log, .act = act, .axis = -1, .temperature = 1.0};
    if (act) {
        MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "mode", "instance|channel", &p.channel, err));
    } else {
        MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "axis", &p.axis, err));
        if (mxk_sdk_attr_is_set(attrs, "temperature"))
            MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "temperature", &p.temperature, err));
        if (!(isfinite(p.temperature) && p.temperature != 0.0))
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "attribute 'temperature': must be finite and non-zero, got %g",
                                 p.temperature);
    }
    return cbt_param_new(&p, sizeof p, out, err);
}
/** parse_param of softmax. */
static mxk_status sm_parse(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return sm_parse_common(a, 0, 0, o, e);
}
/** parse_param of log_softmax. */
static mxk_status lsm_parse(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return sm_parse_common(a, 1, 0, o, e);
}
/** parse_param of SoftmaxActivation. */
static mxk_status sma_parse(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return sm_parse_common(a, 0, 1, o, e);
}

/** The (outer, k, inner) view the softmax runs over, for data shape s. */
static mxk_status sm_view(const sm_param *p, const mxk_shape *s, uint64_t *outer, uint64_t *k,
                          uint64_t *inner, mxk_error_sink *err) {
    if (p->act) {
        if (p->channel && s->ndim < 2)
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "mode=channel needs at least 2 dims");
        *outer = (uint64_t)s->dims[0];
        *k = p->channel ? (uint64_t)s->dims[1] : mxk_sdk_shape_prod(s, 1, s->ndim);
        *inner = p->channel ? mxk_sdk_shape_prod(s, 2, s->ndim) : 1;
        return MXK_OK;
    }
    int32_t a;
    MXK_SDK_CHECK(cbt_axis(p->axis, s->ndim, "axis", &a, err));
    cbt_split(s, a, outer, k, inner);
    return MXK_OK;
}

/** Output = data shape; checks the axis. */
static mxk_status sm_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    MXK_SDK_CHECK(cbt_infer_shape_same(param, in, num_in, out, num_out, aux, num_aux, err));
    if (in[0].ndim == 0)
        return MXK_OK;
    uint64_t o, k, i;
    return sm_view(param, &in[0], &o, &k, &i, err);
}

/** Backward reads out_grad and the output. */
static void sm_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    need_out_data[0] = 1;
}

/** y = (log_)softmax(x / T) along the view by request; y may be x. */
static mxk_status sm_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const sm_param *p = param;
    MXK_SDK_CHECK(cbt_check_forward(args, 1, 1, sm_infer_shape, param, 0, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    uint64_t outer, k, inner;
    MXK_SDK_CHECK(sm_view(p, &args->in_data[0]->shape, &outer, &k, &inner, err));
    const float *x = cb_f32(args->in_data[0]);
    float *y = cb_f32(args->out_data[0]);
    const double t = p->temperature;
    for (uint64_t o = 0; o < outer; o++) {
        for (uint64_t in = 0; in < inner; in++) {
            uint64_t base = o * k * inner + in;
            double mx = -INFINITY, sum = 0.0;
            for (uint64_t j = 0; j < k; j++)
                mx = fmax(mx, (double)x[base + j * inner] / t);
            for (uint64_t j = 0; j < k; j++)
                sum += exp((double)x[base + j * inner] / t - mx);
            double lse = mx + log(sum);
            for (uint64_t j = 0; j < k; j++) {
                double z = (double)x[base + j * inner] / t - lse;
                mxk_sdk_assign_f32(&y[base + j * inner], (float)(p->log ? z : exp(z)), req);
            }
        }
    }
    return MXK_OK;
}

/** dx from dy and y by request; dx may be dy. */
static mxk_status sm_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const sm_param *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, 1, 1, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dyt = args->out_grad[0], *yt = args->out_data[0];
    MXK_SDK_CHECK(cb_check_tensor(dyt, "gradient of 'output'", err));
    MXK_SDK_CHECK(cb_check_tensor(yt, "output 'output'", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req, &yt->shape, "data", err));
    if (mxk_sdk_shape_count(&dyt->shape) != mxk_sdk_shape_count(&yt->shape))
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "output gradient and output differ in size");
    uint64_t outer, k, inner;
    MXK_SDK_CHECK(sm_view(p, &yt->shape, &outer, &k, &inner, err));
    const float *dy = cb_f32(dyt), *y = cb_f32(yt);
    float *dx = cb_f32(args->in_grad[0]);
    const double t = p->temperature;
    for (uint64_t o = 0; o < outer; o++) {
        for (uint64_t in = 0; in < inner; in++) {
            uint64_t base = o * k * inner + in;
            double s = 0.0;
            for (uint64_t j = 0; j < k; j++)
                s += p->log ? (double)dy[base + j * inner]
                            : (double)dy[base + j * inner] * y[base + j * inner];
            for (uint64_t j = 0; j < k; j++) {
                uint64_t e = base + j * inner;
                double g = p->log ? (dy[e] - exp((double)y[e]) * s) : y[e] * (dy[e] - s);
                mxk_sdk_assign_f32(&dx[e], (float)(g / t), req);
            }
        }
    }
    return MXK_OK;
}

/** Registers one of the three operators. */
static mxk_status sm_register_one(mxk_registrar *reg, const char *name, const char *doc,
                                  const mxk_attr_def *attrs, uint32_t num_attrs,
                                  mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *),
                                  mxk_error_sink *err) {
    mxk_op_def def;
    cbt_def_init(&def, doc, attrs, num_attrs, sm_args, parse);
    def.infer_shape = sm_infer_shape;
    def.backward_dependency = sm_backward_dependency;
    def.forward_inplace = cbt_inplace_00;
    def.backward_inplace = cbt_inplace_00;
    return cbt_register(reg, &def, name, sm_forward, sm_backward, 0, err);
}

/** Registers softmax, log_softmax and SoftmaxActivation with their CPU kernels. */
mxk_status cb_register_softmax(mxk_registrar *reg, mxk_error_sink *err) {
    MXK_SDK_CHECK(sm_register_one(reg, "softmax", "Softmax along an axis: exp(x/T) / sum exp(x/T).",
                                  sm_attrs, MXK_SDK_COUNTOF(sm_attrs), sm_parse, err));
    MXK_SDK_CHECK(sm_register_one(reg, "log_softmax", "Log of the softmax along an axis.", sm_attrs,
                                  MXK_SDK_COUNTOF(sm_attrs), lsm_parse, err));
    return sm_register_one(reg, "SoftmaxActivation",
                           "Softmax over each instance (mode=instance) or over channels, axis 1 "
                           "(mode=channel).",
                           sma_attrs, MXK_SDK_COUNTOF(sma_attrs), sma_parse, err);
}
