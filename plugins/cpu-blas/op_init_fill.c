/*
 * cpu-blas plugin, init group: the creation operators _zeros, _ones, _full,
 * _arange (no arguments) and zeros_like, ones_like (one argument, whose values
 * are not read).
 *
 * Semantics: MXNet src/operator/tensor/init_op.h and init_op.cc.
 *   _zeros, _ones, _full: attributes shape (default (): unknown), ctx (ignored:
 *     the device is the caller's), dtype (default float32), _full's value
 *     (required; NaN and infinities allowed, as full(-inf) masks use them). In
 *     MXNet's legacy shape mode a 0 in `shape` is an unknown dim that shape
 *     inference fills from the consumers (InitShape: mx.rnn's begin_state is
 *     _zeros with shape (0, num_hidden), the batch size coming from the graph).
 *   _arange: start (required), stop (default None), step (1), repeat (1),
 *     infer_range (False), ctx, dtype (float32). Without stop and infer_range the
 *     range is [0, start) (RangeParamParser). The length is
 *     ceil((stop - start) / step) * repeat; element i is start + (i / repeat) * step
 *     computed in the output dtype (RangeShape, range_fwd). With infer_range and no
 *     stop the length comes from the consumers.
 *   zeros_like, ones_like: output of data's shape and dtype.
 * Every dtype of mxk is supported; MXNet's bool and bfloat16 are refused
 * (MXK_ERR_UNSUPPORTED). No gradient flows (MakeZeroGradNodes): the backward of
 * the *_like operators writes a zero gradient and reads nothing.
 */
#include <math.h>
#include <string.h>

#include "op_init.h"

/** MXNet's dtype enum of InitOpParam (MXNET_ADD_ALL_TYPES_WITH_BOOL), mxk codes first. */
#define FILL_DTYPES CBT_DTYPES "|bool|bfloat16"
/** RangeParam's dtype enum (MXNET_ADD_ALL_TYPES). */
#define RANGE_DTYPES CBT_DTYPES "|bfloat16"

/** Parsed attributes of every operator of this file. */
typedef struct fl_param {
    mxk_shape shape; /**< _zeros/_ones/_full: output shape (0 dims unknown; ndim 0 unknown) */
    int32_t dtype;   /**< output dtype (mxk code) */
    double value;    /**< the fill value (_zeros 0, _ones 1, _full value) */
    double start, step;
    int64_t repeat;
    int32_t has_len; /**< _arange: the length is known from the attributes */
    int64_t len;     /**< _arange: output length when has_len */
} fl_param;

static const char *const fl_no_args[] = {NULL};
static const char *const fl_data_arg[] = {"data", NULL};

/** Attribute schema of _zeros and _ones (InitOpParam). */
static const mxk_attr_def zo_attrs[] = {
    MXK_SDK_ATTR("shape", MXK_ATTR_SHAPE, 0, "()", NULL, "The shape of the output."),
    MXK_SDK_ATTR("ctx", MXK_ATTR_STRING, 0, "", NULL, "Context of the output (ignored)."),
    MXK_SDK_ATTR("dtype", MXK_ATTR_ENUM, 0, "float32", FILL_DTYPES, "Target data type."),
};
/** Attribute schema of _full (InitOpWithScalarParam). */
static const mxk_attr_def full_attrs[] = {
    MXK_SDK_ATTR("shape", MXK_ATTR_SHAPE, 0, "()", NULL, "The shape of the output."),
    MXK_SDK_ATTR("ctx", MXK_ATTR_STRING, 0, "", NULL, "Context of the output (ignored)."),
    MXK_SDK_ATTR("dtype", MXK_ATTR_ENUM, 0, "float32", FILL_DTYPES, "Target data type."),
    MXK_SDK_ATTR("value", MXK_ATTR_FLOAT, 1, NULL, NULL, "Value to fill the output with."),
};
/** Attribute schema of _arange (RangeParam). */
static const mxk_attr_def range_attrs[] = {
    MXK_SDK_ATTR("start", MXK_ATTR_FLOAT, 1, NULL, NULL, "Start of the interval (included)."),
    MXK_SDK_ATTR("stop", MXK_ATTR_STRING, 0, "None", NULL, "End of the interval (excluded)."),
    MXK_SDK_ATTR("step", MXK_ATTR_FLOAT, 0, "1", NULL, "Spacing between values."),
    MXK_SDK_ATTR("repeat", MXK_ATTR_INT, 0, "1", NULL, "Times each element is repeated."),
    MXK_SDK_ATTR("infer_range", MXK_ATTR_BOOL, 0, "False", NULL,
                 "Infer the length from the consumers when stop is not given."),
    MXK_SDK_ATTR("ctx", MXK_ATTR_STRING, 0, "", NULL, "Context of the output (ignored)."),
    MXK_SDK_ATTR("dtype", MXK_ATTR_ENUM, 0, "float32", RANGE_DTYPES, "Target data type."),
};

/** Reads `dtype` (an enum over `values` whose first 7 words are mxk's codes). */
static mxk_status fl_dtype(const mxk_attrs *attrs, const char *values, int32_t *out,
                           mxk_error_sink *err) {
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "dtype", values, out, err));
    if (*out > MXK_INT64)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED, "attribute 'dtype': %s is not supported",
                             mxk_sdk_attr_raw(attrs, "dtype"));
    return MXK_OK;
}

/** Reads `shape` (dims >= 0; 0 is an unknown dim). */
static mxk_status fl_shape(const mxk_attrs *attrs, mxk_shape *out, mxk_error_sink *err) {
    MXK_SDK_CHECK(cbi_attr_tuple_min(attrs, "shape", 0, out, err));
    return mxk_sdk_shape_check_count(out, "attribute 'shape'", err);
}

/** Parses _zeros (value 0) or _ones (value 1). */
static mxk_status fl_parse_const(const mxk_attrs *attrs, double value, void **out,
                                 mxk_error_sink *err) {
    fl_param p = {.value = value};
    MXK_SDK_CHECK(fl_shape(attrs, &p.shape, err));
    MXK_SDK_CHECK(fl_dtype(attrs, FILL_DTYPES, &p.dtype, err));
    return cbt_param_new(&p, sizeof p, out, err);
}
/** parse_param of _zeros. */
static mxk_status zeros_parse(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return fl_parse_const(a, 0.0, o, e);
}
/** parse_param of _ones. */
static mxk_status ones_parse(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return fl_parse_const(a, 1.0, o, e);
}
/** parse_param of _full. */
static mxk_status full_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    double v;
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "value", &v, err));
    return fl_parse_const(attrs, v, out, err);
}

/** parse_param of zeros_like (value 0, dtype from the input). */
static mxk_status zeros_like_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    fl_param p = {.value = 0.0};
    return cbt_param_new(&p, sizeof p, out, err);
}
/** parse_param of ones_like. */
static mxk_status ones_like_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    fl_param p = {.value = 1.0};
    return cbt_param_new(&p, sizeof p, out, err);
}

/**
 * parse_param of _arange: finite start/stop/step, step != 0, repeat >= 1, a
 * non-empty range in the direction of step, and the length (when known) at most
 * 2^60 elements.
 */
static mxk_status range_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    fl_param p = {0};
    int32_t infer = 0;
    double stop = 0.0;
    MXK_SDK_CHECK(mxk_sdk_attr_float_finite(attrs, "start", &p.start, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float_finite(attrs, "step", &p.step, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "repeat", &p.repeat, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "infer_range", &infer, err));
    MXK_SDK_CHECK(fl_dtype(attrs, RANGE_DTYPES, &p.dtype, err));
    const char *raw = mxk_sdk_attr_raw(attrs, "stop");
    p.has_len = raw != NULL && strcmp(raw, "None") != 0;
    if (p.has_len)
        MXK_SDK_CHECK(mxk_sdk_attr_float_finite(attrs, "stop", &stop, err));
    else if (!infer) {
        stop = p.start;
        p.start = 0.0;
        p.has_len = 1;
    }
    if (p.step == 0.0)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "Range does not support step=0, received 0");
    if (p.repeat <= 0)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "Range only supports repeat > 0, received %lld", (long long)p.repeat);
    if (p.has_len) {
        if (p.step > 0 ? !(p.start < stop) : !(p.start > stop))
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "Invalid range (start, stop, step) = (%g,%g,%g)", p.start, stop,
                                 p.step);
        double n = ceil((stop - p.start) / p.step);
        if (!(n <= (double)MXK_SDK_MAX_ELEMS))
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "attribute 'stop': the range has more than %lld elements",
                                 (long long)MXK_SDK_MAX_ELEMS);
        MXK_SDK_CHECK(mxk_sdk_dim_mul((int64_t)n, p.repeat, &p.len, "arange length * repeat", err));
    }
    return cbt_param_new(&p, sizeof p, out, err);
}

/** Output shape of _zeros/_ones/_full: the attribute merged into the output. */
static mxk_status fl_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    if (num_in != 0 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected no arguments");
    return mxk_sdk_shape_assign_named(&out[0], &((const fl_param *)param)->shape, "output",
                                      "output", err);
}

/** Output shape of _arange: (length,) when known from the attributes. */
static mxk_status range_infer_shape(const void *param, mxk_shape *in, uint32_t num_in,
                                    mxk_shape *out, uint32_t num_out, mxk_shape *aux,
                                    uint32_t num_aux, mxk_error_sink *err) {
    const fl_param *p = param;
    if (num_in != 0 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected no arguments");
    mxk_shape s = p->has_len ? mxk_sdk_shape1(p->len) : mxk_sdk_shape1(0);
    return mxk_sdk_shape_assign_named(&out[0], &s, "output", "output", err);
}

/** Output dtype of the operators without arguments: the attribute. */
static mxk_status fl_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    return mxk_sdk_type_assign(&out[0], ((const fl_param *)param)->dtype, "output 'output'", err);
}

/** The *_like operators: output shape = data shape. */
static mxk_status like_infer_shape(const void *param, mxk_shape *in, uint32_t num_in,
                                   mxk_shape *out, uint32_t num_out, mxk_shape *aux,
                                   uint32_t num_aux, mxk_error_sink *err) {
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 1 argument");
    return mxk_sdk_infer_shape_same(in, 1, fl_data_arg, out, 1, NULL, err);
}

/** Fills y (=|+=) with `value` by req in y's dtype. */
static void fl_fill(const mxk_tensor *y, double value, mxk_op_req req) {
    uint64_t n = mxk_sdk_shape_count(&y->shape);
    if (y->dtype == MXK_FLOAT32) {
        mxk_sdk_fill_f32(y->data, cbi_to_f32(value), (size_t)n, req);
        return;
    }
    if (req == MXK_REQ_ADD && value == 0.0)
        return;
    if (y->dtype == MXK_FLOAT16) /* stored through float */
        value = cbi_to_f32(value);
    for (uint64_t i = 0; i < n; i++)
        cbt_store(y->data, y->dtype, i, value, req);
}

/** Forward of _zeros/_ones/_full. */
static mxk_status fl_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cbt_check_forward(args, 0, 1, fl_infer_shape, param, 1, err));
    fl_fill(args->out_data[0], ((const fl_param *)param)->value, args->req[0]);
    return MXK_OK;
}

/** Forward of zeros_like/ones_like (data's values are not read). */
static mxk_status like_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_forward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cbt_check_forward(args, 1, 1, like_infer_shape, param, 1, err));
    fl_fill(args->out_data[0], ((const fl_param *)param)->value, args->req[0]);
    return MXK_OK;
}

/** Backward of zeros_like/ones_like: a zero gradient for data. */
static mxk_status like_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                                const mxk_backward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, 1, 1, err));
    return cbi_zero_grad_of(args, 0, "data", err);
}

/** Forward of _arange: start + (i / repeat) * step in the output dtype. */
static mxk_status range_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                                const mxk_forward_args *args, mxk_error_sink *err) {
    const fl_param *p = param;
    MXK_SDK_CHECK(cbt_check_forward(args, 0, 1, range_infer_shape, param, 1, err));
    const mxk_tensor *y = args->out_data[0];
    mxk_op_req req = args->req[0];
    uint64_t n = mxk_sdk_shape_count(&y->shape), r = (uint64_t)p->repeat;
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    if (y->dtype == MXK_FLOAT32) {
        float s = cbi_to_f32(p->start), d = cbi_to_f32(p->step), *o = y->data;
        for (uint64_t i = 0; i < n; i++)
            mxk_sdk_assign_f32(&o[i], s + (float)(i / r) * d, req);
    } else if (y->dtype == MXK_FLOAT64) {
        for (uint64_t i = 0; i < n; i++)
            cbt_store(y->data, y->dtype, i, p->start + (double)(i / r) * p->step, req);
    } else if (y->dtype == MXK_FLOAT16) { /* stored through float */
        for (uint64_t i = 0; i < n; i++)
            cbt_store(y->data, y->dtype, i, cbi_to_f32(p->start + (double)(i / r) * p->step), req);
    } else {
        /* integer dtypes: start and step are converted first (DType start, step) */
        double s = trunc(p->start), d = trunc(p->step);
        for (uint64_t i = 0; i < n; i++)
            cbt_store(y->data, y->dtype, i, s + (double)(i / r) * d, req);
    }
    return MXK_OK;
}

/** Registers _zeros, _ones, _full, _arange, zeros_like and ones_like. */
mxk_status cb_register_init_fill(mxk_registrar *reg, mxk_error_sink *err) {
    static const char *const full_aliases[] = {"_npi_full", NULL};
    static const char *const zl_aliases[] = {"_sparse_zeros_like", NULL};
    static const cbi_op ops[] = {
        {"_zeros", NULL, "Fills the output with zeros.", zo_attrs, MXK_SDK_COUNTOF(zo_attrs),
         fl_no_args, zeros_parse, fl_infer_shape, fl_infer_type, fl_forward, NULL,
         CBI_OP_NO_GRADIENT},
        {"_ones", NULL, "Fills the output with ones.", zo_attrs, MXK_SDK_COUNTOF(zo_attrs),
         fl_no_args, ones_parse, fl_infer_shape, fl_infer_type, fl_forward, NULL,
         CBI_OP_NO_GRADIENT},
        {"_full", full_aliases, "Fills the output with `value`.", full_attrs,
         MXK_SDK_COUNTOF(full_attrs), fl_no_args, full_parse, fl_infer_shape, fl_infer_type,
         fl_forward, NULL, CBI_OP_NO_GRADIENT},
        {"_arange", NULL, "Evenly spaced values in [start, stop).", range_attrs,
         MXK_SDK_COUNTOF(range_attrs), fl_no_args, range_parse, range_infer_shape, fl_infer_type,
         range_forward, NULL, CBI_OP_NO_GRADIENT},
        {"zeros_like", zl_aliases, "Zeros of the shape and dtype of data.", NULL, 0, fl_data_arg,
         zeros_like_parse, like_infer_shape, cbi_infer_type_same, like_forward, like_backward,
         CBI_OP_NO_GRADIENT},
        {"ones_like", NULL, "Ones of the shape and dtype of data.", NULL, 0, fl_data_arg,
         ones_like_parse, like_infer_shape, cbi_infer_type_same, like_forward, like_backward,
         CBI_OP_NO_GRADIENT},
    };
    return cbi_register_ops(reg, ops, MXK_SDK_COUNTOF(ops), err);
}
