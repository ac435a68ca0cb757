/*
 * cpu-blas plugin, init group: operators that keep the elements and change only
 * the shape (_copy, expand_dims, squeeze, reshape_like) or describe it
 * (shape_array, size_array).
 *
 * Semantics: MXNet src/operator/tensor/elemwise_unary_op_basic.cc (_copy, alias
 * identity; reshape_like; shape_array, size_array) and matrix_op.cc /
 * matrix_op-inl.h (ExpandDimShape, SqueezeShape).
 *   _copy: output = data (FInplaceIdentity), backward copies the gradient.
 *   expand_dims: inserts a dim of size 1 at `axis` in [-ndim-1, ndim]; shape
 *     inference runs both ways (in-place identity, both directions).
 *   squeeze: drops the size-1 dims (`axis` None) or the given ones (each must
 *     have size 1, no duplicates); all dims dropped gives (1,).
 *   reshape_like: lhs reshaped to lhs[:lhs_begin] + rhs[rhs_begin:rhs_end] +
 *     lhs[lhs_end:] (ranges default to all dims, negative counts from the end);
 *     the sizes must agree. rhs's values are not read, its gradient is zero.
 *   shape_array, size_array: int64 outputs (ndim,) and (1,) with data's dims and
 *     element count; no gradient (zeros).
 * The copies work for every dtype (output dtype = input dtype); their backward
 * reads only the output gradient.
 */
#include "op_init.h"

static const char *const sh_data[] = {"data", NULL};
static const char *const sh_lr[] = {"lhs", "rhs", NULL};

/** Parsed attributes of every operator of this file. */
typedef struct sh_param {
    int64_t axis;     /**< expand_dims */
    int32_t has_axes; /**< squeeze: axis given */
    mxk_shape axes;   /**< squeeze: the axes */
    int32_t has[4];   /**< reshape_like: lhs_begin, lhs_end, rhs_begin, rhs_end given */
    int64_t range[4]; /**< reshape_like: their values */
} sh_param;

/** Attribute schema of expand_dims (ExpandDimParam). */
static const mxk_attr_def ed_attrs[] = {
    MXK_SDK_ATTR("axis", MXK_ATTR_INT, 1, NULL, NULL,
                 "Position of the new axis, in [-ndim-1, ndim]."),
};
/** Attribute schema of squeeze (SqueezeParam). */
static const mxk_attr_def sq_attrs[] = {
    MXK_SDK_ATTR("axis", MXK_ATTR_STRING, 0, "None", NULL,
                 "The size-1 axes to remove (None: all of them)."),
};
/** reshape_like's range attribute names, in sh_param.range order. */
static const char *const rl_keys[] = {"lhs_begin", "lhs_end", "rhs_begin", "rhs_end"};
/** Attribute schema of reshape_like (ReshapeLikeParam). */
static const mxk_attr_def rl_attrs[] = {
    MXK_SDK_ATTR("lhs_begin", MXK_ATTR_STRING, 0, "None", NULL, "First lhs dim to reshape."),
    MXK_SDK_ATTR("lhs_end", MXK_ATTR_STRING, 0, "None", NULL, "End of the lhs dims to reshape."),
    MXK_SDK_ATTR("rhs_begin", MXK_ATTR_STRING, 0, "None", NULL, "First rhs dim to copy."),
    MXK_SDK_ATTR("rhs_end", MXK_ATTR_STRING, 0, "None", NULL, "End of the rhs dims to copy."),
};

/** parse_param of the operators without attributes. */
static mxk_status sh_parse_none(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    sh_param p = {0};
    return cbt_param_new(&p, sizeof p, out, err);
}
/** parse_param of expand_dims. */
static mxk_status ed_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    sh_param p = {0};
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "axis", &p.axis, err));
    return cbt_param_new(&p, sizeof p, out, err);
}
/** parse_param of squeeze. */
static mxk_status sq_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    sh_param p = {0};
    MXK_SDK_CHECK(cbi_attr_opt_shape(attrs, "axis", &p.has_axes, &p.axes, err));
    return cbt_param_new(&p, sizeof p, out, err);
}
/** parse_param of reshape_like. */
static mxk_status rl_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    sh_param p = {0};
    for (int i = 0; i < 4; i++)
        MXK_SDK_CHECK(cbi_attr_opt_int(attrs, rl_keys[i], &p.has[i], &p.range[i], err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** _copy: output shape = data shape (both ways). */
static mxk_status cp_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 1 argument");
    return mxk_sdk_infer_shape_same(in, 1, sh_data, out, 1, NULL, err);
}

/** expand_dims (ExpandDimShape): forwards and, from a known output rank, backwards. */
static mxk_status ed_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const sh_param *p = param;
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 1 argument");
    if (in[0].ndim == 0 && out[0].ndim == 0)
        return MXK_OK;
    int32_t indim = in[0].ndim > 0 ? in[0].ndim : out[0].ndim - 1;
    int64_t axis = p->axis < 0 ? p->axis + indim + 1 : p->axis;
    if (axis < 0 || axis > indim)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "axis must be in the range [%d, %d] (%lld provided)", -(int)indim,
                             (int)indim, (long long)p->axis);
    if (indim + 1 > MXK_MAX_NDIM)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED, "the output would have %d dims (at most %d)",
                             (int)indim + 1, MXK_MAX_NDIM);
    mxk_shape o = mxk_sdk_shape_unknown(), i = mxk_sdk_shape_unknown();
    o.ndim = indim + 1;
    i.ndim = indim;
    for (int32_t d = 0; d < indim; d++) {
        o.dims[d < axis ? d : d + 1] = in[0].ndim > 0 ? in[0].dims[d] : 0;
        i.dims[d] = out[0].ndim > 0 ? out[0].dims[d < axis ? d : d + 1] : 0;
    }
    o.dims[axis] = 1;
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err));
    return mxk_sdk_shape_assign_named(&in[0], &i, "argument", "data", err);
}

/** squeeze (SqueezeShape): from the known input only. */
static mxk_status sq_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const sh_param *p = param;
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 1 argument");
    const mxk_shape *d = &in[0];
    if (!mxk_sdk_shape_is_known(d))
        return MXK_OK;
    int drop[MXK_MAX_NDIM] = {0};
    if (p->has_axes) {
        for (int32_t k = 0; k < p->axes.ndim; k++) {
            int64_t a = p->axes.dims[k];
            if (a < 0)
                a += d->ndim;
            if (a < 0 || a >= d->ndim)
                return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                     "axis %lld is out of bounds for array of dimension %d",
                                     (long long)p->axes.dims[k], (int)d->ndim);
            if (d->dims[a] != 1)
                return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                     "cannot select an axis to squeeze out which has size=%lld "
                                     "not equal to one",
                                     (long long)d->dims[a]);
            if (drop[a])
                return mxk_sdk_error(err, MXK_ERR_SHAPE, "duplicate value in axis");
            drop[a] = 1;
        }
    } else {
        for (int32_t k = 0; k < d->ndim; k++)
            drop[k] = d->dims[k] == 1;
    }
    mxk_shape o = mxk_sdk_shape_unknown();
    for (int32_t k = 0; k < d->ndim; k++)
        if (!drop[k])
            o.dims[o.ndim++] = d->dims[k];
    if (o.ndim == 0)
        o = mxk_sdk_shape1(1);
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/**
 * A reshape_like range [begin, end) over `ndim` dims (ReshapeLikeRangeCanonicalize):
 * defaults 0 and ndim, negative values count from the end. Errors name `side`.
 */
static mxk_status rl_range(const sh_param *p, int side, int32_t ndim, int32_t *b, int32_t *e,
                           mxk_error_sink *err) {
    const char *name = side ? "rhs" : "lhs";
    int64_t begin = p->has[2 * side] ? p->range[2 * side] : 0;
    int64_t end = p->has[2 * side + 1] ? p->range[2 * side + 1] : ndim;
    if (begin < 0)
        begin += ndim;
    if (end < 0)
        end += ndim;
    if (end > ndim)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "Invalid end for %s_end=%lld as dimension number is %d", name,
                             (long long)p->range[2 * side + 1], (int)ndim);
    if (!(begin < end) || begin < 0)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "Invalid begin, end, get %s_begin=%lld, %s_end=%lld", name,
                             (long long)begin, name, (long long)end);
    *b = (int32_t)begin;
    *e = (int32_t)end;
    return MXK_OK;
}

/** reshape_like (ReshapeLikeShapeCompute): needs both shapes known. */
static mxk_status rl_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const sh_param *p = param;
    if (num_in != 2 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 2 arguments");
    if (!mxk_sdk_shape_is_known(&in[0]) || !mxk_sdk_shape_is_known(&in[1]))
        return MXK_OK;
    int32_t lb, le, rb, re;
    MXK_SDK_CHECK(rl_range(p, 0, in[0].ndim, &lb, &le, err));
    MXK_SDK_CHECK(rl_range(p, 1, in[1].ndim, &rb, &re, err));
    int32_t rank = in[0].ndim + (re - rb) - (le - lb);
    if (rank > MXK_MAX_NDIM)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED, "the output would have %d dims (at most %d)",
                             (int)rank, MXK_MAX_NDIM);
    mxk_shape o = mxk_sdk_shape_unknown();
    for (int32_t d = 0; d < lb; d++)
        o.dims[o.ndim++] = in[0].dims[d];
    for (int32_t d = rb; d < re; d++)
        o.dims[o.ndim++] = in[1].dims[d];
    for (int32_t d = le; d < in[0].ndim; d++)
        o.dims[o.ndim++] = in[0].dims[d];
    MXK_SDK_CHECK(mxk_sdk_shapes_check_count(in, 2, "argument", sh_lr, err));
    MXK_SDK_CHECK(mxk_sdk_shape_check_count(&o, "output 'output'", err));
    if (mxk_sdk_shape_count(&o) != mxk_sdk_shape_count(&in[0])) {
        char a[MXK_SDK_SHAPE_STR_MAX], b[MXK_SDK_SHAPE_STR_MAX];
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "Cannot reshape lhs with shape %s to new shape %s because they have "
                             "different size.",
                             mxk_sdk_shape_format(&in[0], a, sizeof a),
                             mxk_sdk_shape_format(&o, b, sizeof b));
    }
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/** shape_array: (ndim,) once the rank is known. */
static mxk_status sa_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 1 argument");
    if (in[0].ndim == 0)
        return MXK_OK;
    mxk_shape o = mxk_sdk_shape1(in[0].ndim);
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/** size_array: (1,). */
static mxk_status za_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 1 argument");
    mxk_shape o = mxk_sdk_shape1(1);
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/** shape_array / size_array: int64 output, data of any dtype. */
static mxk_status sa_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    return mxk_sdk_type_assign(&out[0], MXK_INT64, "output 'output'", err);
}

/** Forward of _copy. */
static mxk_status cp_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    return cbi_copy_forward(args, 1, cp_infer_shape, param, err);
}
/** Forward of expand_dims. */
static mxk_status ed_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    return cbi_copy_forward(args, 1, ed_infer_shape, param, err);
}
/** Forward of squeeze. */
static mxk_status sq_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    return cbi_copy_forward(args, 1, sq_infer_shape, param, err);
}
/** Forward of reshape_like. */
static mxk_status rl_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    return cbi_copy_forward(args, 2, rl_infer_shape, param, err);
}

/** Forward of shape_array: the dims of data as int64. */
static mxk_status sa_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cbt_check_forward(args, 1, 1, sa_infer_shape, param, 1, err));
    const mxk_tensor *x = args->in_data[0], *y = args->out_data[0];
    for (int32_t d = 0; d < x->shape.ndim && args->req[0] != MXK_REQ_NULL; d++)
        cbt_store(y->data, y->dtype, (uint64_t)d, (double)x->shape.dims[d], args->req[0]);
    return MXK_OK;
}

/** Forward of size_array: the element count of data as int64. */
static mxk_status za_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cbt_check_forward(args, 1, 1, za_infer_shape, param, 1, err));
    const mxk_tensor *y = args->out_data[0];
    cbt_store(y->data, y->dtype, 0, (double)mxk_sdk_shape_count(&args->in_data[0]->shape),
              args->req[0]);
    return MXK_OK;
}

/** Backward of shape_array / size_array: a zero gradient. */
static mxk_status sa_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, 1, 1, err));
    return cbi_zero_grad_of(args, 0, "data", err);
}

/** Registers _copy, expand_dims, squeeze, reshape_like, shape_array and size_array. */
mxk_status cb_register_init_shape(mxk_registrar *reg, mxk_error_sink *err) {
    static const char *const copy_aliases[] = {"identity", NULL};
    static const char *const ed_aliases[] = {"_npi_expand_dims", NULL};
    static const char *const rl_aliases[] = {"_npx_reshape_like", NULL};
    static const char *const sa_aliases[] = {"_npx_shape_array", NULL};
    static const cbi_op ops[] = {
        {"_copy", copy_aliases, "Returns a copy of the input.", NULL, 0, sh_data, sh_parse_none,
         cp_infer_shape, cbi_infer_type_same, cp_forward, cbi_copy_backward, CBI_OP_INPLACE},
        {"expand_dims", ed_aliases, "Inserts a new axis of size 1 at `axis`.", ed_attrs,
         MXK_SDK_COUNTOF(ed_attrs), sh_data, ed_parse, ed_infer_shape, cbi_infer_type_same,
         ed_forward, cbi_copy_backward, CBI_OP_INPLACE},
        {"squeeze", NULL, "Removes single-dimensional axes.", sq_attrs, MXK_SDK_COUNTOF(sq_attrs),
         sh_data, sq_parse, sq_infer_shape, cbi_infer_type_same, sq_forward, cbi_copy_backward, 0},
        {"reshape_like", rl_aliases, "Reshapes lhs (or some of its dims) like rhs.", rl_attrs,
         MXK_SDK_COUNTOF(rl_attrs), sh_lr, rl_parse, rl_infer_shape, cbi_infer_type_same,
         rl_forward, cbi_copy_backward, CBI_OP_INPLACE},
        {"shape_array", sa_aliases, "The shape of data as a 1-D int64 array.", NULL, 0, sh_data,
         sh_parse_none, sa_infer_shape, sa_infer_type, sa_forward, sa_backward, CBI_OP_NO_GRADIENT},
        {"size_array", NULL, "The element count of data as a 1-D int64 array.", NULL, 0, sh_data,
         sh_parse_none, za_infer_shape, sa_infer_type, za_forward, sa_backward, CBI_OP_NO_GRADIENT},
    };
    return cbi_register_ops(reg, ops, MXK_SDK_COUNTOF(ops), err);
}
