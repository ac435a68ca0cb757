/*
 * cpu-blas plugin: slice (alias crop), slice_axis and slice_like.
 *
 * Semantics: MXNet src/operator/tensor/matrix_op-inl.h (SliceParam, GetIndexRange,
 * SetSliceOpOutputDimSize, SliceAxisParam, GetSliceAxisParams, SliceLikeParam,
 * SliceLikeShape) and matrix_op.cc (registration). Each operator selects, per axis,
 * the elements begin, begin + step, ... (count given by the output shape):
 *   slice:      begin/end/step tuples of optional integers over the leading axes
 *               (None: the whole axis in the step's direction; negative values count
 *               from the end; out-of-range bounds are clipped, as Python slices);
 *   slice_axis: one axis, begin, end (None: the axis size), step 1;
 *   slice_like: begin 0, step 1, and the size of `shape_like` on `axes` (default all).
 * The gradient scatters out_grad back into a zero (WRITE) or the existing (ADD) input
 * gradient; slice_like's `shape_like` gets a zero gradient. Backward reads out_grad
 * only. Differences: an empty output (begin == end) is refused, since mxk shapes
 * have no zero dims.
 */
#include <string.h>

#include "op_index.h"

/** Which of the three operators a parameter object belongs to. */
typedef enum sl_kind { SL_SLICE, SL_AXIS, SL_LIKE } sl_kind;

/** Parsed attributes of slice / slice_axis / slice_like. */
typedef struct sl_param {
    sl_kind kind;
    int32_t nb, ne, ns; /**< slice: entries of begin, end, step */
    int64_t begin[MXK_MAX_NDIM], end[MXK_MAX_NDIM], step[MXK_MAX_NDIM];
    uint8_t has_begin[MXK_MAX_NDIM], has_end[MXK_MAX_NDIM], has_step[MXK_MAX_NDIM];
    int64_t axis;  /**< slice_axis */
    int32_t naxes; /**< slice_like: entries of axes (0: all) */
    int64_t axes[MXK_MAX_NDIM];
} sl_param;

/** The selection computed from the shapes: start and step per axis, output shape. */
typedef struct sl_range {
    int64_t begin[MXK_MAX_NDIM], step[MXK_MAX_NDIM];
    mxk_shape out;
} sl_range;

static const char *const sl_args[] = {"data", NULL};
static const char *const sll_args[] = {"data", "shape_like", NULL};
static const char *const sl_aliases[] = {"_sparse_slice", "crop", "_npx_slice", "_npi_slice", NULL};

/** Attribute schema of slice (SliceParam). */
static const mxk_attr_def sl_attrs[] = {
    MXK_SDK_ATTR("begin", MXK_ATTR_STRING, 1, NULL, NULL,
                 "Starting indices for the slice operation, supports negative indices."),
    MXK_SDK_ATTR("end", MXK_ATTR_STRING, 1, NULL, NULL,
                 "Ending indices for the slice operation, supports negative indices."),
    MXK_SDK_ATTR("step", MXK_ATTR_STRING, 0, "()", NULL, "Step for the slice operation."),
};
/** Attribute schema of slice_axis (SliceAxisParam). */
static const mxk_attr_def sla_attrs[] = {
    MXK_SDK_ATTR("axis", MXK_ATTR_INT, 1, NULL, NULL,
                 "Axis along which to be sliced, supports negative indexes."),
    MXK_SDK_ATTR("begin", MXK_ATTR_INT, 1, NULL, NULL,
                 "The beginning index along the axis to be sliced, supports negative indexes."),
    MXK_SDK_ATTR("end", MXK_ATTR_STRING, 1, NULL, NULL,
                 "The ending index along the axis to be sliced, supports negative indexes."),
};
/** Attribute schema of slice_like (SliceLikeParam). */
static const mxk_attr_def sll_attrs[] = {
    MXK_SDK_ATTR("axes", MXK_ATTR_SHAPE, 0, "()", NULL,
                 "List of axes on which input data will be sliced according to the "
                 "corresponding size of the second input. By default will slice on all axes."),
};

/** parse_param of slice: the three tuples; their lengths must agree. */
static mxk_status sl_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    sl_param p = {.kind = SL_SLICE};
    MXK_SDK_CHECK(mxk_idx_attr_opt_tuple(attrs, "begin", &p.nb, p.begin, p.has_begin, err));
    MXK_SDK_CHECK(mxk_idx_attr_opt_tuple(attrs, "end", &p.ne, p.end, p.has_end, err));
    MXK_SDK_CHECK(mxk_idx_attr_opt_tuple(attrs, "step", &p.ns, p.step, p.has_step, err));
    if (p.nb != p.ne)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "begin and end must have the same length (%d and %d)", (int)p.nb,
                             (int)p.ne);
    if (p.ns > 0 && p.ns != p.nb)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "step and begin must have the same length (%d and %d)", (int)p.ns,
                             (int)p.nb);
    for (int32_t i = 0; i < p.ns; i++)
        if (p.has_step[i] && p.step[i] == 0)
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "slice op step[%d] cannot be 0",
                                 (int)i);
    return cbt_param_new(&p, sizeof p, out, err);
}

/** parse_param of slice_axis. */
static mxk_status sla_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    sl_param p = {.kind = SL_AXIS, .nb = 1, .ne = 1};
    int32_t has_end;
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "axis", &p.axis, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "begin", &p.begin[0], err));
    MXK_SDK_CHECK(mxk_idx_attr_opt_int(attrs, "end", &has_end, &p.end[0], err));
    p.has_begin[0] = 1;
    p.has_end[0] = (uint8_t)has_end;
    return cbt_param_new(&p, sizeof p, out, err);
}

/** parse_param of slice_like. */
static mxk_status sll_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    sl_param p = {.kind = SL_LIKE};
    mxk_shape axes;
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "axes", &axes, err));
    p.naxes = axes.ndim;
    for (int32_t i = 0; i < axes.ndim; i++)
        p.axes[i] = axes.dims[i];
    return cbt_param_new(&p, sizeof p, out, err);
}

/** Formats an optional value ("None" or the number) into buf. */
static const char *sl_opt_str(int has, int64_t v, char *buf, size_t len) {
    if (has)
        snprintf(buf, len, "%lld", (long long)v);
    else
        snprintf(buf, len, "None");
    return buf;
}

/**
 * slice on axis i of size len > 0 (mxk_idx_slice_range): start and step into r,
 * the output size into r->out.dims[i] (0 when empty).
 */
static void sl_axis_range(const sl_param *p, int32_t i, int64_t len, sl_range *r) {
    r->out.dims[i] = mxk_idx_slice_range(p->has_begin[i], p->begin[i], p->has_end[i], p->end[i],
                                         i < p->ns && p->has_step[i], p->step[i], len, &r->begin[i],
                                         &r->step[i]);
}

/** slice_axis (GetSliceAxisParams), for a known axis size. */
static mxk_status sla_range(const sl_param *p, const mxk_shape *in, sl_range *r,
                            mxk_error_sink *err) {
    int64_t a = p->axis < 0 ? p->axis + in->ndim : p->axis;
    if (a < 0 || a >= in->ndim)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "Transformed axis must be smaller than the source ndim "
                             "and larger than zero! Recieved axis=%lld, src_ndim=%d, transformed "
                             "axis=%lld",
                             (long long)p->axis, (int)in->ndim, (long long)a);
    int64_t size = in->dims[a];
    if (size == 0) { /* unknown axis size: unknown output size */
        r->out.dims[a] = 0;
        return MXK_OK;
    }
    int64_t b = p->begin[0] < 0 ? p->begin[0] + size : p->begin[0];
    int64_t e = !p->has_end[0] ? size : (p->end[0] < 0 ? p->end[0] + size : p->end[0]);
    char eb[32];
    if (e > size)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "Invalid end for end=%lld as axis_size is %lld",
                             (long long)e, (long long)size);
    if (b >= e || e < 0)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "Invalid begin, end, get begin=%lld, "
                             "end=%s (axis size %lld)",
                             (long long)p->begin[0],
                             sl_opt_str(p->has_end[0], p->end[0], eb, sizeof eb), (long long)size);
    if (b < 0)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "Invalid begin for begin=%lld (axis size %lld)",
                             (long long)p->begin[0], (long long)size);
    r->begin[a] = b;
    r->out.dims[a] = e - b;
    return MXK_OK;
}

/** slice_like (SliceLikeShape): the sizes of `like` on the chosen axes. */
static mxk_status sll_range(const sl_param *p, const mxk_shape *in, const mxk_shape *like,
                            sl_range *r, mxk_error_sink *err) {
    if (p->naxes == 0 && in->ndim != like->ndim)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "By default slice_axis performs slice on all axes, but "
                             "ndim mismatch for inputs: %d vs. %d",
                             (int)in->ndim, (int)like->ndim);
    int32_t n = p->naxes == 0 ? in->ndim : p->naxes;
    for (int32_t i = 0; i < n; i++) {
        int64_t a = p->naxes == 0 ? i : p->axes[i];
        if (a < 0)
            a += in->ndim;
        if (a < 0)
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "Slice axis: %lld too small",
                                 (long long)p->axes[i]);
        if (a >= in->ndim || a >= like->ndim)
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "Slice axis: %lld exceeds %s input: %d",
                                 (long long)a, a >= in->ndim ? "first" : "second",
                                 (int)(a >= in->ndim ? in->ndim : like->ndim));
        if (in->dims[a] != 0 && in->dims[a] < like->dims[a])
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "Slice axis %lld with size %lld exceeds limit of "
                                 "input with size %lld",
                                 (long long)a, (long long)like->dims[a], (long long)in->dims[a]);
        r->out.dims[a] = like->dims[a];
    }
    return MXK_OK;
}

/**
 * The selection for data shape `in` (and slice_like's `like`): r->out has the
 * output shape (unknown dims 0). Errors: MXK_ERR_SHAPE with MXNet's reasons.
 */
static mxk_status sl_ranges(const sl_param *p, const mxk_shape *in, const mxk_shape *like,
                            sl_range *r, mxk_error_sink *err) {
    r->out = *in;
    for (int32_t i = 0; i < MXK_MAX_NDIM; i++) {
        r->begin[i] = 0;
        r->step[i] = 1;
    }
    if (p->kind == SL_AXIS)
        return sla_range(p, in, r, err);
    if (p->kind == SL_LIKE)
        return sll_range(p, in, like, r, err);
    if (p->nb > in->ndim)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "Slicing axis exceeds data dimensions (%d entries in begin for "
                             "an input of %d dims)",
                             (int)p->nb, (int)in->ndim);
    for (int32_t i = 0; i < p->nb; i++) {
        if (in->dims[i] == 0)
            continue; /* unknown stays unknown */
        sl_axis_range(p, i, in->dims[i], r);
        if (r->out.dims[i] == 0) {
            char b[32], e[32];
            return mxk_sdk_error(
                err, MXK_ERR_SHAPE,
                "the output is empty along axis %d (begin %s, end %s, step %lld, size "
                "%lld); mxk shapes have no zero dims",
                (int)i, sl_opt_str(p->has_begin[i], p->begin[i], b, sizeof b),
                sl_opt_str(p->has_end[i], p->end[i], e, sizeof e), (long long)r->step[i],
                (long long)in->dims[i]);
        }
    }
    return MXK_OK;
}

/** infer_shape: the output from data (and shape_like). */
static mxk_status sl_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const sl_param *p = param;
    if (in[0].ndim == 0 || (p->kind == SL_LIKE && in[1].ndim == 0))
        return MXK_OK;
    sl_range r;
    MXK_SDK_CHECK(sl_ranges(p, &in[0], p->kind == SL_LIKE ? &in[1] : NULL, &r, err));
    return mxk_sdk_shape_assign_named(&out[0], &r.out, "output", "output", err);
}

/** infer_type: data and output float32; slice_like's shape_like any dtype (float32 default). */
static mxk_status sl_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    MXK_SDK_CHECK(mxk_sdk_type_assign(&in[0], MXK_FLOAT32, "argument 'data'", err));
    if (num_in > 1 && in[1] < 0)
        in[1] = MXK_FLOAT32;
    return mxk_sdk_type_assign(&out[0], MXK_FLOAT32, "output 'output'", err);
}

/**
 * Walks the selection: for every output element o (row-major over r->out), the
 * data element at begin + index * step; dense (=|+=) by `req` into sel, or, with
 * `scatter`, sel added into dense.
 */
static void sl_walk(const sl_range *r, const mxk_shape *in, float *dense, float *sel, int scatter,
                    mxk_op_req req) {
    int32_t nd = in->ndim;
    int64_t stride[MXK_MAX_NDIM], idx[MXK_MAX_NDIM] = {0}, base = 0, acc = 1;
    for (int32_t d = nd - 1; d >= 0; d--) {
        stride[d] = acc;
        acc *= in->dims[d];
        base += r->begin[d] * stride[d];
    }
    int64_t inner = r->out.dims[nd - 1], st = r->step[nd - 1] * stride[nd - 1];
    uint64_t rows = mxk_sdk_shape_count(&r->out) / (uint64_t)inner;
    for (uint64_t row = 0; row < rows; row++) {
        int64_t off = base;
        for (int32_t d = 0; d + 1 < nd; d++)
            off += idx[d] * r->step[d] * stride[d];
        float *o = sel + row * (uint64_t)inner;
        if (st == 1 && scatter) /* a contiguous row */
            mxk_sdk_copy_f32(dense + off, o, (size_t)inner, MXK_REQ_ADD);
        else if (st == 1)
            mxk_sdk_copy_f32(o, dense + off, (size_t)inner, req);
        else
            for (int64_t j = 0; j < inner; j++) {
                if (scatter)
                    dense[off + j * st] += o[j];
                else
                    mxk_sdk_assign_f32(&o[j], dense[off + j * st], req);
            }
        for (int32_t d = nd - 2; d >= 0; d--) { /* next output row */
            if (++idx[d] < r->out.dims[d])
                break;
            idx[d] = 0;
        }
    }
}

/** Forward: copies the selection. */
static mxk_status sl_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const sl_param *p = param;
    uint32_t n = p->kind == SL_LIKE ? 2 : 1;
    MXK_SDK_CHECK(cbt_check_forward(args, n, 1, sl_infer_shape, param, 1, err));
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(cb_check_tensor(args->in_data[0], "argument 'data'", err));
    MXK_SDK_CHECK(cb_check_tensor(args->out_data[0], "output 'output'", err));
    sl_range r;
    const mxk_shape *in = &args->in_data[0]->shape;
    MXK_SDK_CHECK(sl_ranges(p, in, n == 2 ? &args->in_data[1]->shape : NULL, &r, err));
    sl_walk(&r, in, cb_f32(args->in_data[0]), cb_f32(args->out_data[0]), 0, args->req[0]);
    return MXK_OK;
}

/** Backward: out_grad scattered into the data gradient; zero for shape_like. */
static mxk_status sl_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const sl_param *p = param;
    const mxk_tensor *dy, *dx;
    MXK_SDK_CHECK(
        cb_idx_begin_backward(args, p->kind == SL_LIKE ? 2 : 1, "shape_like", &dy, &dx, err));
    if (dx == NULL)
        return MXK_OK;
    mxk_op_req req = args->req[0];
    /* slice_like: out_grad has shape_like's sizes on the sliced axes (begin 0, step 1) */
    sl_range r;
    MXK_SDK_CHECK(sl_ranges(p, &dx->shape, &dy->shape, &r, err));
    if (!mxk_sdk_shape_equal(&r.out, &dy->shape))
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "gradient of 'output': inconsistent shape");
    if (req != MXK_REQ_ADD)
        memset(dx->data, 0, (size_t)mxk_sdk_shape_count(&dx->shape) * sizeof(float));
    sl_walk(&r, &dx->shape, cb_f32(dx), cb_f32(dy), 1, req);
    return MXK_OK;
}

/** Registers slice, slice_axis and slice_like with their CPU kernels. */
mxk_status cb_register_index_slice(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_def def;
    cbt_def_init(&def, "Slices a region of the array (begin/end/step per axis).", sl_attrs,
                 MXK_SDK_COUNTOF(sl_attrs), sl_args, sl_parse);
    def.infer_shape = sl_infer_shape;
    def.infer_type = sl_infer_type;
    def.backward_dependency = cbt_dep_out_grad;
    def.aliases = sl_aliases;
    MXK_SDK_CHECK(cbt_register(reg, &def, "slice", sl_forward, sl_backward, 1, err));
    def.description = "Slices along a given axis (begin, end).";
    def.attrs = sla_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(sla_attrs);
    def.parse_param = sla_parse;
    def.aliases = NULL;
    MXK_SDK_CHECK(cbt_register(reg, &def, "slice_axis", sl_forward, sl_backward, 1, err));
    def.description = "Slices data like the shape of shape_like on the given axes.";
    def.attrs = sll_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(sll_attrs);
    def.arguments = sll_args;
    def.parse_param = sll_parse;
    return cbt_register(reg, &def, "slice_like", sl_forward, sl_backward, 1, err);
}
