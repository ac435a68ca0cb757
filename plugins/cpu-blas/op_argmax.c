/*
 * cpu-blas plugin: argmax, argmax_channel and one_hot.
 *
 * Semantics: MXNet src/operator/tensor/broadcast_reduce_op_index.cc and
 * broadcast_reduce_op.h (ReduceAxisParam: axis optional (absent: over the
 * flattened input, result (1,)), keepdims; the first maximum wins, NaN counts as
 * the maximum; indices are returned as float32; argmax_channel = argmax over
 * axis 1 without keepdims; an axis outside [-ndim, ndim) is refused with
 * ReduceAxisShape's message) and src/operator/tensor/indexing_op.h (OneHotParam: depth
 * required, on_value 1, off_value 0, dtype float32; output indices.shape +
 * (depth,); indices outside [0, depth) give an all-off row; alias _npx_one_hot). Neither has a
 * gradient: backward writes zeros into a requested input gradient.
 */
#include <math.h>

#include "cb_tensor.h"
#include "mxk_index.h"

/** Parsed attributes of argmax / argmax_channel (one_hot == 0) or one_hot. */
typedef struct am_param {
    int32_t one_hot;
    int32_t has_axis; /**< argmax: axis given (argmax_channel: -1) */
    int64_t axis;
    int32_t keepdims;
    int64_t depth; /**< one_hot */
    double on_value, off_value;
    int32_t dtype;
} am_param;

static const char *const am_args[] = {"data", NULL};
static const char *const oh_args[] = {"indices", NULL};
static const char *const am_outs[] = {"output", NULL};

/** Attribute schema of argmax (ReduceAxisParam). */
static const mxk_attr_def am_attrs[] = {
    MXK_SDK_ATTR("axis", MXK_ATTR_INT, 0, NULL, NULL,
                 "The axis along which to search; absent: the flattened input."),
    MXK_SDK_ATTR("keepdims", MXK_ATTR_BOOL, 0, "False", NULL, "Keep the reduced axis (size 1)."),
};
/** Attribute schema of one_hot (OneHotParam). */
static const mxk_attr_def oh_attrs[] = {
    MXK_SDK_ATTR("depth", MXK_ATTR_INT, 1, NULL, NULL, "Depth of the one-hot dimension."),
    MXK_SDK_ATTR("on_value", MXK_ATTR_FLOAT, 0, "1", NULL, "Value at the index positions."),
    MXK_SDK_ATTR("off_value", MXK_ATTR_FLOAT, 0, "0", NULL, "Value elsewhere."),
    MXK_SDK_ATTR("dtype", MXK_ATTR_ENUM, 0, "float32", CBT_DTYPES, "Output dtype."),
};

/** parse_param of argmax. */
static mxk_status am_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    am_param p = {0};
    p.has_axis = mxk_sdk_attr_is_set(attrs, "axis");
    if (p.has_axis)
        MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "axis", &p.axis, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "keepdims", &p.keepdims, err));
    return cbt_param_new(&p, sizeof p, out, err);
}
/** parse_param of argmax_channel (no attributes: axis 1). */
static mxk_status amc_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    am_param p = {.has_axis = 1, .axis = 1};
    return cbt_param_new(&p, sizeof p, out, err);
}
/** parse_param of one_hot. */
static mxk_status oh_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    am_param p = {.one_hot = 1};
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "depth", 1, INT64_MAX, &p.depth, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "on_value", &p.on_value, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "off_value", &p.off_value, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "dtype", CBT_DTYPES, &p.dtype, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** argmax: input without the axis (or (1,)); one_hot: input + (depth,). */
static mxk_status am_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const am_param *p = param;
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 1 argument");
    if (in[0].ndim == 0)
        return MXK_OK;
    mxk_shape o = in[0];
    if (p->one_hot) {
        if (o.ndim >= MXK_MAX_NDIM)
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "indices: at most %d dims", MXK_MAX_NDIM - 1);
        o.dims[o.ndim++] = p->depth;
    } else if (!p->has_axis) {
        o = mxk_sdk_shape1(1);
        if (p->keepdims)
            for (o.ndim = 0; o.ndim < in[0].ndim; o.ndim++)
                o.dims[o.ndim] = 1;
    } else {
        if (p->axis >= o.ndim || p->axis < -(int64_t)o.ndim)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "attribute 'axis': axis %lld exceeds the input dimension of %d",
                                 (long long)p->axis, (int)o.ndim);
        int32_t a = (int32_t)(p->axis < 0 ? p->axis + o.ndim : p->axis);
        if (p->keepdims) {
            o.dims[a] = 1;
        } else if (o.ndim == 1) {
            o = mxk_sdk_shape1(1);
        } else {
            for (int32_t i = a; i + 1 < o.ndim; i++)
                o.dims[i] = o.dims[i + 1];
            o.dims[--o.ndim] = 0;
        }
    }
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/** float32 input; output float32 (argmax) or dtype (one_hot). */
static mxk_status am_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    const am_param *p = param;
    MXK_SDK_CHECK(mxk_sdk_type_assign(&in[0], MXK_FLOAT32, "argument 0", err));
    return mxk_sdk_type_assign(&out[0], p->one_hot ? p->dtype : MXK_FLOAT32, "output 'output'",
                               err);
}

/** argmax over (outer, k, inner) or one_hot rows, by request. */
static mxk_status am_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const am_param *p = param;
    MXK_SDK_CHECK(cbt_check_forward(args, 1, 1, am_infer_shape, param, 1, err));
    const mxk_tensor *xt = args->in_data[0], *yt = args->out_data[0];
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    if (xt->dtype != MXK_FLOAT32 || yt->dtype != (p->one_hot ? p->dtype : MXK_FLOAT32))
        return mxk_sdk_error(err, MXK_ERR_TYPE, "unexpected dtype (%s -> %s)",
                             mxk_sdk_dtype_name(xt->dtype), mxk_sdk_dtype_name(yt->dtype));
    const float *x = xt->data;
    uint64_t n = mxk_sdk_shape_count(&xt->shape);
    if (p->one_hot) {
        for (uint64_t i = 0; i < n; i++) {
            double v = trunc((double)x[i]); /* (int) of a float index, as MXNet */
            for (int64_t j = 0; j < p->depth; j++)
                cbt_store(yt->data, yt->dtype, i * (uint64_t)p->depth + (uint64_t)j,
                          v == (double)j ? p->on_value : p->off_value, req);
        }
        return MXK_OK;
    }
    uint64_t outer = 1, k = n, inner = 1;
    if (p->has_axis) {
        int32_t a;
        MXK_SDK_CHECK(cbt_axis(p->axis, xt->shape.ndim, "axis", &a, err));
        cbt_split(&xt->shape, a, &outer, &k, &inner);
    }
    float *y = yt->data;
    for (uint64_t o = 0; o < outer; o++)
        for (uint64_t i = 0; i < inner; i++) {
            const float *row = x + o * k * inner + i;
            mxk_sdk_assign_f32(&y[o * inner + i], (float)mxk_idx_arg_best(row, k, inner, 0), req);
        }
    return MXK_OK;
}

/** Zero gradient for the input. */
static mxk_status am_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, 1, 1, err));
    return cbt_zero_grad(args->in_grad[0], args->req[0], "data", err);
}

/** Registers argmax, argmax_channel and one_hot with their CPU kernels. */
mxk_status cb_register_argmax(mxk_registrar *reg, mxk_error_sink *err) {
    static const char *const names[] = {"argmax", "argmax_channel", "one_hot"};
    static const char *const oh_aliases[] = {"_npx_one_hot", NULL};
    mxk_status (*const parse[])(const mxk_attrs *, void **,
                                mxk_error_sink *) = {am_parse, amc_parse, oh_parse};
    for (int i = 0; i < 3; i++) {
        mxk_op_def def;
        mxk_sdk_op_def_init(&def);
        def.description = i == 2 ? "One-hot encoding of indices."
                                 : "Indices of the maximum values along an axis (float32).";
        def.attrs = i == 0 ? am_attrs : i == 2 ? oh_attrs : NULL;
        def.num_attrs = i == 0 ? MXK_SDK_COUNTOF(am_attrs) : i == 2 ? MXK_SDK_COUNTOF(oh_attrs) : 0;
        def.arguments = i == 2 ? oh_args : am_args;
        def.outputs = am_outs;
        def.parse_param = parse[i];
        def.free_param = cbt_param_free;
        def.infer_shape = am_infer_shape;
        def.infer_type = am_infer_type;
        def.backward_dependency = cbt_dep_none;
        def.aliases = i == 2 ? oh_aliases : NULL;
        MXK_SDK_CHECK(cbt_register(reg, &def, names[i], am_forward, am_backward, 1, err));
    }
    return MXK_OK;
}
