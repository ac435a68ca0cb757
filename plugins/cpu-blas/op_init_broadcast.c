/*
 * cpu-blas plugin, init group: broadcast_to, broadcast_axis (alias
 * broadcast_axes) and broadcast_like.
 *
 * Semantics: MXNet src/operator/tensor/broadcast_reduce_op.h (BroadcastToShape,
 * BroadcastAxesShape, BroadcastLikeShape) and broadcast_reduce_op_value.cc.
 * Input dims of size 1 are repeated to the output's size; the gradient sums the
 * output gradient over the repeated positions (_broadcast_backward) and reads
 * only it; broadcast_like's rhs gives only its shape (gradient zero).
 *   broadcast_to: `shape` of the input's rank; 0 keeps the input's dim.
 *   broadcast_axis: `axis` and `size` of one length; each axis (0 <= axis < ndim,
 *     as MXNet indexes the shape with it) must have size 1.
 *   broadcast_like: without lhs_axes/rhs_axes the output has rhs's shape (ranks
 *     equal, lhs dims 1 or equal); with both, lhs dim lhs_axes[i] (size 1) takes
 *     rhs's dim rhs_axes[i] (negative axes count from the end).
 * Sizes must be >= 1: MXNet's zero-size outputs (size 0) are refused, since 0 is an
 * unknown dimension in mxk's legacy shapes. Forward takes every dtype (output dtype =
 * input dtype; broadcast_like's rhs any), backward float32.
 */
#include "op_init.h"

static const char *const bc_data[] = {"data", NULL};
static const char *const bc_lr[] = {"lhs", "rhs", NULL};

/** Parsed attributes of the three operators. */
typedef struct bc_param {
    cbi_gather_param g; /**< the kernels' view (first member) */
    mxk_shape shape;    /**< broadcast_to: shape; broadcast_axis: axis */
    mxk_shape size;     /**< broadcast_axis: size */
    int32_t has_axes;   /**< broadcast_like: lhs_axes and rhs_axes both given */
    mxk_shape lhs_axes, rhs_axes;
} bc_param;

/* Shape inferences, named in the parameters. */
static mxk_status bt_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err);
static mxk_status ba_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err);
static mxk_status bl_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err);

/** Attribute schema of broadcast_to (BroadcastToParam). */
static const mxk_attr_def bt_attrs[] = {
    MXK_SDK_ATTR("shape", MXK_ATTR_SHAPE, 0, "()", NULL,
                 "The shape of the output; 0 keeps the input's dim."),
};
/** Attribute schema of broadcast_axis (BroadcastAxesParam). */
static const mxk_attr_def ba_attrs[] = {
    MXK_SDK_ATTR("axis", MXK_ATTR_SHAPE, 0, "()", NULL, "The axes to broadcast."),
    MXK_SDK_ATTR("size", MXK_ATTR_SHAPE, 0, "()", NULL, "Target sizes of those axes."),
};
/** Attribute schema of broadcast_like (BroadcastLikeParam). */
static const mxk_attr_def bl_attrs[] = {
    MXK_SDK_ATTR("lhs_axes", MXK_ATTR_STRING, 0, "None", NULL, "Axes of lhs to broadcast."),
    MXK_SDK_ATTR("rhs_axes", MXK_ATTR_STRING, 0, "None", NULL, "Axes of rhs to copy sizes from."),
};

/** parse_param of broadcast_to: dims >= 0. */
static mxk_status bt_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    bc_param p = {.g = {1, bt_infer_shape, NULL, 0.0}};
    MXK_SDK_CHECK(cbi_attr_tuple_min(attrs, "shape", 0, &p.shape, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** parse_param of broadcast_axis: axis and size of one length, sizes >= 1. */
static mxk_status ba_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    bc_param p = {.g = {1, ba_infer_shape, NULL, 0.0}};
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "axis", &p.shape, err));
    MXK_SDK_CHECK(cbi_attr_tuple_min(attrs, "size", 1, &p.size, err));
    if (p.shape.ndim != p.size.ndim)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attributes 'axis' and 'size' must have one length, got %d and %d",
                             (int)p.shape.ndim, (int)p.size.ndim);
    return cbt_param_new(&p, sizeof p, out, err);
}

/** parse_param of broadcast_like: the axes are used only when both are given. */
static mxk_status bl_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    bc_param p = {.g = {2, bl_infer_shape, NULL, 0.0}};
    int32_t hl, hr;
    MXK_SDK_CHECK(cbi_attr_opt_shape(attrs, "lhs_axes", &hl, &p.lhs_axes, err));
    MXK_SDK_CHECK(cbi_attr_opt_shape(attrs, "rhs_axes", &hr, &p.rhs_axes, err));
    p.has_axes = hl && hr;
    if (p.has_axes && p.lhs_axes.ndim != p.rhs_axes.ndim)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "Input_axis and other_axis size does not match");
    if (p.has_axes && p.lhs_axes.ndim == 0)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "Empty axes tuple is not allowed");
    return cbt_param_new(&p, sizeof p, out, err);
}

/** "Array cannot be broadcasted from A to B" (MXK_ERR_SHAPE). */
static mxk_status bc_fail(const mxk_shape *from, const mxk_shape *to, const char *what,
                          mxk_error_sink *err) {
    char a[MXK_SDK_SHAPE_STR_MAX], b[MXK_SDK_SHAPE_STR_MAX];
    return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s %s cannot be broadcasted to %s", what,
                         mxk_sdk_shape_format(from, a, sizeof a),
                         mxk_sdk_shape_format(to, b, sizeof b));
}

/** broadcast_to (BroadcastToShape), from the known input. */
static mxk_status bt_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const bc_param *p = param;
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 1 argument");
    if (!mxk_sdk_shape_is_known(&in[0]))
        return MXK_OK;
    if (in[0].ndim != p->shape.ndim)
        return bc_fail(&in[0], &p->shape, "Operand of shape", err);
    mxk_shape o = p->shape;
    for (int32_t i = 0; i < o.ndim; i++) {
        if (o.dims[i] == 0)
            o.dims[i] = in[0].dims[i];
        else if (in[0].dims[i] != o.dims[i] && in[0].dims[i] != 1)
            return bc_fail(&in[0], &p->shape, "Array of shape", err);
    }
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/** broadcast_axis (BroadcastAxesShape), from the known input. */
static mxk_status ba_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const bc_param *p = param;
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 1 argument");
    if (!mxk_sdk_shape_is_known(&in[0]))
        return MXK_OK;
    mxk_shape o = in[0];
    for (int32_t i = 0; i < p->shape.ndim; i++) {
        int64_t a = p->shape.dims[i];
        if (a < 0 || a >= o.ndim)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "attribute 'axis': index = %lld must be in range [0, %d)",
                                 (long long)a, (int)o.ndim);
        if (o.dims[a] != 1)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "Broadcasting axis must have size 1 (axis %lld has %lld)",
                                 (long long)a, (long long)o.dims[a]);
        o.dims[a] = p->size.dims[i];
    }
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/** Normalises broadcast_like axis `v` of a shape of `ndim` dims; -1 when out of range. */
static int64_t bl_axis(int64_t v, int32_t ndim) {
    int64_t a = v < 0 ? v + ndim : v;
    return a >= 0 && a < ndim ? a : -1;
}

/** broadcast_like (BroadcastLikeShape), from both known inputs. */
static mxk_status bl_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const bc_param *p = param;
    if (num_in != 2 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 2 arguments");
    const mxk_shape *l = &in[0], *r = &in[1];
    if (!mxk_sdk_shape_is_known(l) || !mxk_sdk_shape_is_known(r))
        return MXK_OK;
    mxk_shape o;
    if (!p->has_axes) {
        if (l->ndim != r->ndim)
            return bc_fail(l, r, "Operand of shape", err);
        o = *r;
        for (int32_t i = 0; i < l->ndim; i++)
            if (l->dims[i] != r->dims[i] && l->dims[i] != 1)
                return bc_fail(l, r, "Array of shape", err);
    } else {
        o = *l;
        for (int32_t i = 0; i < p->lhs_axes.ndim; i++) {
            int64_t from = bl_axis(p->lhs_axes.dims[i], l->ndim);
            int64_t to = bl_axis(p->rhs_axes.dims[i], r->ndim);
            if (from < 0)
                return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                     "Invalid dimension specified in lhs_axes: %lld",
                                     (long long)p->lhs_axes.dims[i]);
            if (to < 0)
                return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                     "Invalid dimension specified in rhs_axes: %lld",
                                     (long long)p->rhs_axes.dims[i]);
            if (l->dims[from] != 1)
                return mxk_sdk_error(
                    err, MXK_ERR_SHAPE,
                    "Input axis %lld at dimension %d cannot be broadcasted to %lld",
                    (long long)p->lhs_axes.dims[i], (int)i, (long long)r->dims[to]);
            o.dims[from] = r->dims[to];
        }
    }
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/** Registers broadcast_to, broadcast_axis and broadcast_like. */
mxk_status cb_register_init_broadcast(mxk_registrar *reg, mxk_error_sink *err) {
    static const char *const ba_aliases[] = {"broadcast_axes", NULL};
    static const cbi_op ops[] = {
        {"broadcast_to", NULL, "Broadcasts the input to `shape`.", bt_attrs,
         MXK_SDK_COUNTOF(bt_attrs), bc_data, bt_parse, bt_infer_shape, cbi_infer_type_same,
         cbi_gather_forward, cbi_gather_backward, 0},
        {"broadcast_axis", ba_aliases, "Broadcasts the size-1 axes `axis` to `size`.", ba_attrs,
         MXK_SDK_COUNTOF(ba_attrs), bc_data, ba_parse, ba_infer_shape, cbi_infer_type_same,
         cbi_gather_forward, cbi_gather_backward, 0},
        {"broadcast_like", NULL, "Broadcasts lhs to the shape of rhs (or some of its axes).",
         bl_attrs, MXK_SDK_COUNTOF(bl_attrs), bc_lr, bl_parse, bl_infer_shape, cbi_infer_type_same,
         cbi_gather_forward, cbi_gather_backward, 0},
    };
    return cbi_register_ops(reg, ops, MXK_SDK_COUNTOF(ops), err);
}
