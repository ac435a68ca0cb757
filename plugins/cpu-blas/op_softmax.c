/*
 * cpu-blas plugin: softmax, log_softmax and SoftmaxActivation.
 *
 * Semantics: MXNet src/operator/nn/softmax-inl.h (SoftmaxParam, SoftmaxOpShape,
 * SoftmaxOpType, the length-masked kernels), softmax.cc, log_softmax.cc (aliases
 * _npx_softmax, _npx_log_softmax) and src/operator/nn/softmax_activation-inl.h:
 *   softmax / log_softmax: along `axis` (default -1) of softmax(x / T),
 *     temperature T default 1; `dtype` (float16|float32|float64, default None =
 *     the input's) is the output's dtype; softmax with use_length=True takes a
 *     second argument `length` (the data shape without `axis`; an integer type) and
 *     uses only the first length[i] elements of each row, the others are 0 (a
 *     length outside [0, K] is clipped to it); its gradient is 0.
 *     log_softmax refuses use_length (upstream's type inference fails for it).
 *   SoftmaxActivation mode=instance: over the last axis (upstream flattens the
 *     data to 2-D, (prod of leading dims, last dim)); mode=channel: over axis 1
 *     of data with at least 3 dims.
 * The maximum is subtracted before exponentiation; sums accumulate in double;
 * data is float32. Backward reads out_grad and the output (and length):
 *   softmax      dx = y (dy - sum(dy y)) / T
 *   log_softmax  dx = (dy - exp(y) sum(dy)) / T
 * (SoftmaxActivation instance mode on more than 2 dims: upstream's backward
 * reduces over axis 1, which is not the gradient of its forward; the gradient of
 * the forward is computed here.) Forward may run in place (data -> output) and
 * backward too (out_grad -> in_grad) when no dtype is given.
 */
#include <math.h>

#include "cb_tensor.h"

/** The dtype attribute's values (None: the input's). */
#define SM_DTYPES "None|float16|float32|float64"

/** Parsed attributes (the three operators share them). */
typedef struct sm_param {
    int32_t log;        /**< log_softmax */
    int32_t act;        /**< SoftmaxActivation (mode decides the axis) */
    int32_t channel;    /**< SoftmaxActivation mode=channel */
    int32_t use_length; /**< softmax: the `length` argument masks each row */
    int32_t dtype;      /**< output dtype code, -1: the input's */
    int64_t axis;       /**< softmax / log_softmax axis */
    double temperature;
} sm_param;

static const char *const sm_args[] = {"data", NULL};

/** Attribute schema of softmax / log_softmax (MXNet 1.9.1 SoftmaxParam). */
static const mxk_attr_def sm_attrs[] = {
    MXK_SDK_ATTR("axis", MXK_ATTR_INT, 0, "-1", NULL, "The axis along which to compute softmax."),
    MXK_SDK_ATTR("temperature", MXK_ATTR_FLOAT, 0, NULL, NULL,
                 "Temperature parameter (1 if absent)."),
    MXK_SDK_ATTR("dtype", MXK_ATTR_ENUM, 0, "None", SM_DTYPES,
                 "DType of the output; None: the input's dtype."),
    MXK_SDK_ATTR("use_length", MXK_ATTR_BOOL, 0, "False", NULL,
                 "Whether to use the length input as a mask over the data input."),
};
/** Attribute schema of SoftmaxActivation (SoftmaxActivationParam). */
static const mxk_attr_def sma_attrs[] = {
    MXK_SDK_ATTR("mode", MXK_ATTR_ENUM, 0, "instance", "instance|channel",
                 "instance: softmax over the last axis; channel: over axis 1."),
};

/** Parses the attributes; `log` / `act` select the operator. */
static mxk_status sm_parse_common(const mxk_attrs *attrs, int32_t log, int32_t act, void **out,
                                  mxk_error_sink *err) {
    static const int32_t codes[] = {-1, MXK_FLOAT16, MXK_FLOAT32, MXK_FLOAT64};
    sm_param p = {.log = log, .act = act, .dtype = -1, .axis = -1, .temperature = 1.0};
    if (act) {
        MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "mode", "instance|channel", &p.channel, err));
        return cbt_param_new(&p, sizeof p, out, err);
    }
    int32_t dt = 0;
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "axis", &p.axis, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "dtype", SM_DTYPES, &dt, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "use_length", &p.use_length, err));
    p.dtype = codes[dt];
    if (mxk_sdk_attr_is_set(attrs, "temperature"))
        MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "temperature", &p.temperature, err));
    if (!(isfinite(p.temperature) && p.temperature != 0.0))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'temperature': must be finite and non-zero, got %g",
                             p.temperature);
    if (log && p.use_length)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'use_length': log_softmax takes no length argument");
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

/** Arguments: data (+ length with use_length). */
static mxk_status sm_list_arguments(const void *param, mxk_name_list *out, mxk_error_sink *err) {
    MXK_SDK_CHECK(mxk_sdk_host()->name_list_add(out, "data", err));
    return ((const sm_param *)param)->use_length ? mxk_sdk_host()->name_list_add(out, "length", err)
                                                 : MXK_OK;
}

/** The axis the softmax runs along, for data shape s. */
static mxk_status sm_axis(const sm_param *p, const mxk_shape *s, int32_t *axis,
                          mxk_error_sink *err) {
    if (!p->act)
        return cbt_axis(p->axis, s->ndim, "axis", axis, err);
    if (p->channel && s->ndim < 3)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "Input need to have a least 3 dimensions when mode=channel");
    *axis = p->channel ? 1 : s->ndim - 1;
    return MXK_OK;
}

/** Output = data shape; length = data shape without the axis ((1,) for 1-D data). */
static mxk_status sm_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const sm_param *p = param;
    MXK_SDK_CHECK(cbt_infer_shape_same(param, in, 1, out, num_out, aux, num_aux, err));
    if (in[0].ndim == 0)
        return MXK_OK;
    int32_t axis;
    MXK_SDK_CHECK(sm_axis(p, &in[0], &axis, err));
    if (!p->use_length)
        return MXK_OK;
    mxk_shape l = mxk_sdk_shape1(1);
    if (in[0].ndim > 1) {
        l.ndim = 0;
        for (int32_t i = 0; i < in[0].ndim; i++)
            if (i != axis)
                l.dims[l.ndim++] = in[0].dims[i];
    }
    return mxk_sdk_shape_assign_named(&in[1], &l, "argument", "length", err);
}

/**
 * data float32; output the dtype attribute (else float32); length an integer type
 * (int32 if unknown; upstream refuses others with "This operation only support
 * integer types, not float32").
 */
static mxk_status sm_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    const sm_param *p = param;
    MXK_SDK_CHECK(mxk_sdk_type_assign(&in[0], MXK_FLOAT32, "argument 'data'", err));
    MXK_SDK_CHECK(mxk_sdk_type_assign(&out[0], p->dtype < 0 ? MXK_FLOAT32 : p->dtype,
                                      "output 'output'", err));
    if (!p->use_length)
        return MXK_OK;
    if (in[1] < 0)
        in[1] = MXK_INT32;
    if (in[1] != MXK_INT32 && in[1] != MXK_INT64 && in[1] != MXK_INT8 && in[1] != MXK_UINT8)
        return mxk_sdk_error(err, MXK_ERR_TYPE,
                             "argument 'length': This operation only support integer types, not %s",
                             mxk_sdk_dtype_name(in[1]));
    return MXK_OK;
}

/** Backward reads out_grad and the output (and length). */
static void sm_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    need_out_data[0] = 1;
    if (((const sm_param *)param)->use_length)
        need_in_data[1] = 1;
}

/** In place 0 -> 0 when the output has the data's dtype. */
static uint32_t sm_inplace(const void *param, mxk_inplace_pair *pairs, uint32_t capacity) {
    int32_t dt = ((const sm_param *)param)->dtype;
    return dt < 0 || dt == MXK_FLOAT32 ? cbt_inplace_00(param, pairs, capacity) : 0;
}

/** The (outer, k, inner) view of data shape s and row i's length (k without use_length). */
typedef struct sm_view {
    uint64_t outer, k, inner;
    const mxk_tensor *length; /**< NULL without use_length */
} sm_view;

/** Builds the view of data shape s. */
static mxk_status sm_view_of(const sm_param *p, const mxk_shape *s, const mxk_tensor *length,
                             sm_view *v, mxk_error_sink *err) {
    int32_t axis;
    MXK_SDK_CHECK(sm_axis(p, s, &axis, err));
    cbt_split(s, axis, &v->outer, &v->k, &v->inner);
    v->length = p->use_length ? length : NULL;
    if (v->length != NULL && mxk_sdk_shape_count(&length->shape) != v->outer * v->inner)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "argument 'length': expected %llu elements",
                             (unsigned long long)(v->outer * v->inner));
    return MXK_OK;
}

/** Elements of row `row` used: length[row] clipped to [0, k] (NaN: 0), or k. */
static uint64_t sm_row_len(const sm_view *v, uint64_t row) {
    if (v->length == NULL)
        return v->k;
    double l = cbt_load(v->length->data, v->length->dtype, row);
    if (!(l > 0.0))
        return 0;
    return l >= (double)v->k ? v->k : (uint64_t)l;
}

/** y = (log_)softmax(x / T) along the view by request; y may be x. */
static mxk_status sm_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const sm_param *p = param;
    MXK_SDK_CHECK(cbt_check_forward(args, p->use_length ? 2 : 1, 1, sm_infer_shape, param, 1, err));
    const mxk_tensor *yt = args->out_data[0];
    MXK_SDK_CHECK(cb_check_tensor(args->in_data[0], "argument 'data'", err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    if (yt->dtype != (p->dtype < 0 ? MXK_FLOAT32 : p->dtype))
        return mxk_sdk_error(err, MXK_ERR_TYPE, "output: expected %s, got %s",
                             mxk_sdk_dtype_name(p->dtype < 0 ? MXK_FLOAT32 : p->dtype),
                             mxk_sdk_dtype_name(yt->dtype));
    sm_view v;
    MXK_SDK_CHECK(
        sm_view_of(p, &args->in_data[0]->shape, args->in_data[p->use_length ? 1 : 0], &v, err));
    const float *x = cb_f32(args->in_data[0]);
    const double t = p->temperature;
    for (uint64_t o = 0; o < v.outer; o++) {
        for (uint64_t in = 0; in < v.inner; in++) {
            uint64_t base = o * v.k * v.inner + in, len = sm_row_len(&v, o * v.inner + in);
            double mx = -INFINITY, sum = 0.0;
            for (uint64_t j = 0; j < len; j++)
                mx = fmax(mx, (double)x[base + j * v.inner] / t);
            for (uint64_t j = 0; j < len; j++)
                sum += exp((double)x[base + j * v.inner] / t - mx);
            double lse = mx + log(sum);
            for (uint64_t j = 0; j < v.k; j++) {
                double z = (double)x[base + j * v.inner] / t - lse;
                cbt_store(yt->data, yt->dtype, base + j * v.inner,
                          j >= len ? 0.0 : (p->log ? z : exp(z)), req);
            }
        }
    }
    return MXK_OK;
}

/** dx from dy and y by request (dx may be dy); length's gradient is 0. */
static mxk_status sm_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const sm_param *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, p->use_length ? 2 : 1, 1, 1, err));
    if (p->use_length && args->req[1] != MXK_REQ_NULL) {
        const mxk_tensor *gl = args->in_grad[1];
        MXK_SDK_CHECK(cbt_check_any(gl, "gradient of 'length'", err));
        for (uint64_t i = 0; i < mxk_sdk_shape_count(&gl->shape); i++)
            cbt_store(gl->data, gl->dtype, i, 0.0, args->req[1]);
    }
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dyt = args->out_grad[0], *yt = args->out_data[0];
    MXK_SDK_CHECK(cbt_check_any(dyt, "gradient of 'output'", err));
    MXK_SDK_CHECK(cbt_check_any(yt, "output 'output'", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req, &yt->shape, "data", err));
    if (mxk_sdk_shape_count(&dyt->shape) != mxk_sdk_shape_count(&yt->shape) ||
        dyt->dtype != yt->dtype)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "output gradient and output differ in size or dtype");
    const mxk_tensor *length = p->use_length ? args->in_data[1] : NULL;
    if (length != NULL)
        MXK_SDK_CHECK(cbt_check_any(length, "argument 'length'", err));
    sm_view v;
    MXK_SDK_CHECK(sm_view_of(p, &yt->shape, length, &v, err));
    float *dx = cb_f32(args->in_grad[0]);
    const double t = p->temperature;
    for (uint64_t o = 0; o < v.outer; o++) {
        for (uint64_t in = 0; in < v.inner; in++) {
            uint64_t base = o * v.k * v.inner + in, len = sm_row_len(&v, o * v.inner + in);
            double s = 0.0;
            for (uint64_t j = 0; j < len; j++) {
                uint64_t e = base + j * v.inner;
                double dy = cbt_load(dyt->data, dyt->dtype, e);
                s += p->log ? dy : dy * cbt_load(yt->data, yt->dtype, e);
            }
            for (uint64_t j = 0; j < v.k; j++) {
                uint64_t e = base + j * v.inner;
                double dy = cbt_load(dyt->data, dyt->dtype, e);
                double y = cbt_load(yt->data, yt->dtype, e);
                double g = j >= len ? 0.0 : (p->log ? dy - exp(y) * s : y * (dy - s));
                mxk_sdk_assign_f32(&dx[e], (float)(g / t), req);
            }
        }
    }
    return MXK_OK;
}

/** Registers one of the three operators. */
static mxk_status sm_register_one(mxk_registrar *reg, const char *name, const char *alias,
                                  const char *doc, const mxk_attr_def *attrs, uint32_t num_attrs,
                                  mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *),
                                  mxk_error_sink *err) {
    const char *aliases[] = {alias, NULL};
    mxk_op_def def;
    cbt_def_init(&def, doc, attrs, num_attrs, sm_args, parse);
    def.aliases = aliases;
    def.arguments = NULL;
    def.list_arguments = sm_list_arguments;
    def.infer_shape = sm_infer_shape;
    def.infer_type = sm_infer_type;
    def.backward_dependency = sm_backward_dependency;
    def.forward_inplace = sm_inplace;
    def.backward_inplace = sm_inplace;
    return cbt_register(reg, &def, name, sm_forward, sm_backward, 1, err);
}

/** Registers softmax, log_softmax and SoftmaxActivation (with MXNet's aliases) and their CPU
 * kernels. */
mxk_status cb_register_softmax(mxk_registrar *reg, mxk_error_sink *err) {
    MXK_SDK_CHECK(sm_register_one(reg, "softmax", "_npx_softmax",
                                  "Softmax along an axis: exp(x/T) / sum exp(x/T).", sm_attrs,
                                  MXK_SDK_COUNTOF(sm_attrs), sm_parse, err));
    MXK_SDK_CHECK(sm_register_one(reg, "log_softmax", "_npx_log_softmax",
                                  "Log of the softmax along an axis.", sm_attrs,
                                  MXK_SDK_COUNTOF(sm_attrs), lsm_parse, err));
    return sm_register_one(reg, "SoftmaxActivation", NULL,
                           "Softmax over the last axis (mode=instance) or over channels, axis 1 "
                           "(mode=channel).",
                           sma_attrs, MXK_SDK_COUNTOF(sma_attrs), sma_parse, err);
}
