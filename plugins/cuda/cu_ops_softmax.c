/*
 * cuda plugin: softmax, log_softmax and SoftmaxActivation kernels (own CUDA
 * kernels, cu_kern_softmax.cu: one block per row, maximum subtracted, double
 * sums).
 *
 * Semantics are the operators' (cpu-blas op_softmax.c; upstream MXNet
 * src/operator/nn/softmax-inl.h, softmax.cu, log_softmax.cu and
 * src/operator/nn/softmax_activation-inl.h, softmax_activation.cu): along
 * `axis` of x / temperature; the output dtype attribute (float16, float32,
 * float64); softmax's use_length (the `length` argument of an integer type
 * masks each row, the rest 0; its gradient is 0); SoftmaxActivation over the
 * last axis (instance) or axis 1 (channel). Data is float32 (the operators infer
 * nothing else). Every request is handled; forward and backward run in place
 * when the operators allow it (no dtype given).
 */
#include "cu_kern_layer.h"
#include "cu_blas_util.h"
#include "cu_layer.h"

/** Parsed attributes (the three operators share them). */
typedef struct cu_sm_param {
    int32_t log;        /**< log_softmax */
    int32_t act;        /**< SoftmaxActivation (mode decides the axis) */
    int32_t channel;    /**< SoftmaxActivation mode=channel */
    int32_t use_length; /**< softmax: the `length` argument masks each row */
    int32_t dtype;      /**< output dtype code, -1: float32 (the input's) */
    int64_t axis;
    double temperature;
} cu_sm_param;

/** Parses the attributes; `log` / `act` select the operator. Errors: the attribute readers'. */
static mxk_status sm_parse_common(const mxk_attrs *attrs, int32_t log, int32_t act, void **out,
                                  mxk_error_sink *err) {
    static const int32_t codes[] = {-1, MXK_FLOAT16, MXK_FLOAT32, MXK_FLOAT64};
    cu_sm_param p = {.log = log, .act = act, .dtype = -1, .axis = -1, .temperature = 1.0};
    if (act) {
        MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "mode", "instance|channel", &p.channel, err));
        return cu_param_dup(&p, sizeof p, out, err);
    }
    int32_t dt = 0;
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "axis", &p.axis, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "dtype", "None|float16|float32|float64", &dt, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "use_length", &p.use_length, err));
    if (mxk_sdk_attr_is_set(attrs, "temperature"))
        MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "temperature", &p.temperature, err));
    p.dtype = codes[dt];
    return cu_param_dup(&p, sizeof p, out, err);
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

/** Accepts float32 data (and any integer length the operator infers). */
static int32_t sm_supports(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                           uint32_t num_in) {
    return num_in >= 1 && in_types[0] == MXK_FLOAT32;
}

/** The operator's name, for messages. */
static const char *sm_name(const cu_sm_param *p) {
    return p->log ? "log_softmax" : p->act ? "SoftmaxActivation" : "softmax";
}

/** The output's dtype. */
static int32_t sm_out_dtype(const cu_sm_param *p) {
    return p->dtype < 0 ? MXK_FLOAT32 : p->dtype;
}

/**
 * The row view of data shape s along the operator's axis, with the output
 * dtype and the length argument (NULL without use_length). Errors:
 * MXK_ERR_SHAPE for an axis out of range, channel mode under 3 dims, or a
 * length of the wrong size or type.
 */
static mxk_status sm_view_of(const cu_sm_param *p, const mxk_shape *s, const mxk_tensor *length,
                             cu_softmax_view *v, mxk_error_sink *err) {
    int64_t axis = p->act ? (p->channel ? 1 : s->ndim - 1) : p->axis;
    if (p->act && p->channel && s->ndim < 3)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "Input need to have a least 3 dimensions when mode=channel");
    if (axis < 0)
        axis += s->ndim;
    if (axis < 0 || axis >= s->ndim)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "attribute 'axis': %lld is out of range for %d "
                             "dimensions",
                             (long long)p->axis, (int)s->ndim);
    v->outer = v->inner = 1;
    for (int64_t i = 0; i < axis; i++)
        v->outer *= (uint64_t)s->dims[i];
    for (int64_t i = axis + 1; i < s->ndim; i++)
        v->inner *= (uint64_t)s->dims[i];
    v->k = (uint64_t)s->dims[axis];
    v->length = NULL;
    v->length_dtype = MXK_INT32;
    v->y_dtype = sm_out_dtype(p);
    v->log = p->log;
    v->temperature = p->temperature;
    if (!p->use_length)
        return MXK_OK;
    if (length == NULL || (length->data == NULL && v->outer * v->inner > 0))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "argument 'length' is missing");
    if ((uint64_t)cu_shape_size(&length->shape) != v->outer * v->inner)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "argument 'length': expected %llu elements",
                             (unsigned long long)(v->outer * v->inner));
    if (length->dtype != MXK_INT32 && length->dtype != MXK_INT64 && length->dtype != MXK_INT8 &&
        length->dtype != MXK_UINT8)
        return mxk_sdk_error(err, MXK_ERR_TYPE,
                             "argument 'length': This operation only support integer types, not %s",
                             mxk_sdk_dtype_name(length->dtype));
    v->length = length->data;
    v->length_dtype = length->dtype;
    return MXK_OK;
}

/** Checks that the output (or its gradient) t has the output dtype. Errors: MXK_ERR_TYPE. */
static mxk_status sm_check_dtype(const cu_sm_param *p, const mxk_tensor *t, const char *what,
                                 mxk_error_sink *err) {
    if (t->dtype != sm_out_dtype(p))
        return mxk_sdk_error(err, MXK_ERR_TYPE, "cuda %s: %s: expected %s, got %s", sm_name(p),
                             what, mxk_sdk_dtype_name(sm_out_dtype(p)),
                             mxk_sdk_dtype_name(t->dtype));
    return MXK_OK;
}

/** y = (log_)softmax(x / T) by the request; y may be x. */
static mxk_status sm_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_sm_param *p = param;
    MXK_SDK_CHECK(cu_enter(ctx, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *xt = args->in_data[0];
    uint64_t n = (uint64_t)cu_shape_size(&xt->shape);
    MXK_SDK_CHECK(cu_check_tensor(xt, n, sm_name(p), "argument 'data'", err));
    MXK_SDK_CHECK(cu_check_tensor(args->out_data[0], n, sm_name(p), "output 'output'", err));
    MXK_SDK_CHECK(sm_check_dtype(p, args->out_data[0], "output 'output'", err));
    cu_softmax_view v;
    MXK_SDK_CHECK(sm_view_of(p, &xt->shape, p->use_length ? args->in_data[1] : NULL, &v, err));
    return cu_check(
        cu_launch_softmax_forward(v, cu_f32(xt), args->out_data[0]->data, req, cu_stream(ctx)),
        "softmax forward", err);
}

/** dx from dy and y by the request (dx may be dy); length's gradient is 0. */
static mxk_status sm_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_sm_param *p = param;
    MXK_SDK_CHECK(cu_enter(ctx, err));
    if (p->use_length && args->req[1] != MXK_REQ_NULL && args->req[1] != MXK_REQ_ADD) {
        const mxk_tensor *gl = args->in_grad[1];
        size_t bytes = (size_t)cu_shape_size(&gl->shape) * mxk_sdk_dtype_size(gl->dtype);
        if (bytes > 0)
            CU_CHECK(cudaMemsetAsync(gl->data, 0, bytes, cu_stream(ctx)), "softmax length gradient",
                     err);
    }
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *yt = args->out_data[0];
    uint64_t n = (uint64_t)cu_shape_size(&yt->shape);
    MXK_SDK_CHECK(cu_check_tensor(yt, n, sm_name(p), "output 'output'", err));
    MXK_SDK_CHECK(cu_check_tensor(args->out_grad[0], n, sm_name(p), "gradient of 'output'", err));
    MXK_SDK_CHECK(sm_check_dtype(p, yt, "output 'output'", err));
    MXK_SDK_CHECK(sm_check_dtype(p, args->out_grad[0], "gradient of 'output'", err));
    MXK_SDK_CHECK(cu_check_tensor(args->in_grad[0], n, sm_name(p), "gradient of 'data'", err));
    cu_softmax_view v;
    MXK_SDK_CHECK(sm_view_of(p, &yt->shape, p->use_length ? args->in_data[1] : NULL, &v, err));
    return cu_check(cu_launch_softmax_backward(v, args->out_grad[0]->data, yt->data,
                                               cu_f32(args->in_grad[0]), req, cu_stream(ctx)),
                    "softmax backward", err);
}

/** Registers the softmax, log_softmax and SoftmaxActivation kernels. */
mxk_status cu_register_softmax(mxk_registrar *reg, mxk_error_sink *err) {
    MXK_SDK_CHECK(
        cu_layer_register(reg, "softmax", sm_parse, sm_supports, sm_forward, sm_backward, err));
    MXK_SDK_CHECK(cu_layer_register(reg, "log_softmax", lsm_parse, sm_supports, sm_forward,
                                    sm_backward, err));
    return cu_layer_register(reg, "SoftmaxActivation", sma_parse, sm_supports, sm_forward,
                             sm_backward, err);
}
