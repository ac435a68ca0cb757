/*
 * cuda plugin: transpose, SwapAxis, slice, slice_axis, slice_like, reverse and
 * Crop on the GPU, as gather views (cu_layout.h) of the operators cpu-blas
 * defines (op_transpose.c, op_index_slice.c, op_init_tile.c, op_crop.c).
 *
 * Semantics: MXNet src/operator/tensor/matrix_op-inl.h (TransposeParam,
 * SliceParam / GetIndexRange, SliceAxisParam, SliceLikeParam, ReverseParam),
 * src/operator/swapaxis-inl.h and src/operator/crop-inl.h; the GPU kernels
 * follow their .cu counterparts (one output element per thread). Every output
 * element reads one input element; the backward scatters the output gradient
 * back (zeros elsewhere for slice and Crop) and reads only it. The shapes were
 * validated by the operator's inference, so the views only relate them.
 */
#include "cu_layout.h"
#include "mxk_index.h"
#include "mxk_index_attr.h"

/** The three selections of sl_build. */
enum tr_slice { TR_SLICE, TR_SLICE_AXIS, TR_SLICE_LIKE };

/** Parsed attributes of the operators of this file (only the kind's fields are set). */
typedef struct cu_tr_param {
    cu_gather_param g;
    mxk_shape axes;     /**< transpose axes, reverse axis, slice_like axes */
    int64_t dim1, dim2; /**< SwapAxis */
    int32_t nb, ns;     /**< slice: entries of begin (= end) and step */
    int64_t begin[MXK_MAX_NDIM], end[MXK_MAX_NDIM], step[MXK_MAX_NDIM];
    uint8_t has_begin[MXK_MAX_NDIM], has_end[MXK_MAX_NDIM], has_step[MXK_MAX_NDIM];
    int32_t slice;     /**< enum tr_slice: which selection sl_build makes */
    int64_t axis;      /**< slice_axis */
    int64_t offset[2]; /**< Crop (y, x) */
    int32_t center;    /**< Crop center_crop */
} cu_tr_param;

/** An axis counted from the end when negative (already validated by the operator). */
static int32_t tr_axis(int64_t a, int32_t ndim) {
    return (int32_t)(a < 0 ? a + ndim : a);
}

/** Output dim i reads input dim perm[i]: the view of a permutation. */
static void tr_permute(const mxk_shape *in, const int32_t *perm, cu_view *f) {
    int64_t is[MXK_MAX_NDIM], os[MXK_MAX_NDIM];
    mxk_shape out = *in;
    for (int32_t i = 0; i < in->ndim; i++)
        out.dims[i] = in->dims[perm[i]];
    cu_view_strides(in, is);
    cu_view_strides(&out, os);
    cu_view_init(f);
    for (int32_t i = 0; i < in->ndim; i++)
        cu_view_push(f, out.dims[i], is[perm[i]], os[i]);
}

/** transpose: axes, or () reversing every axis. */
static mxk_status tp_build(const cu_gather_param *g, const mxk_shape *in, const mxk_shape *out,
                           cu_view *f, mxk_error_sink *err) {
    const cu_tr_param *p = (const cu_tr_param *)g;
    int32_t perm[MXK_MAX_NDIM];
    if (p->axes.ndim != 0 && p->axes.ndim != in->ndim)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "transpose: %d axes for an input of %d dims",
                             (int)p->axes.ndim, (int)in->ndim);
    for (int32_t i = 0; i < in->ndim; i++)
        perm[i] = p->axes.ndim == 0 ? in->ndim - 1 - i : (int32_t)p->axes.dims[i];
    tr_permute(in, perm, f);
    return MXK_OK;
}

/** SwapAxis: the identity with dim1 and dim2 exchanged. */
static mxk_status sw_build(const cu_gather_param *g, const mxk_shape *in, const mxk_shape *out,
                           cu_view *f, mxk_error_sink *err) {
    const cu_tr_param *p = (const cu_tr_param *)g;
    int32_t perm[MXK_MAX_NDIM];
    for (int32_t i = 0; i < in->ndim; i++)
        perm[i] = i;
    int32_t a = tr_axis(p->dim1, in->ndim), b = tr_axis(p->dim2, in->ndim);
    perm[a] = b;
    perm[b] = a;
    tr_permute(in, perm, f);
    return MXK_OK;
}

/**
 * A selection: along dim d, output index j reads input index begin[d] + j step[d]
 * (output dims from `out`).
 */
static void tr_select(const mxk_shape *in, const mxk_shape *out, const int64_t *begin,
                      const int64_t *step, cu_view *f) {
    int64_t is[MXK_MAX_NDIM], os[MXK_MAX_NDIM];
    cu_view_strides(in, is);
    cu_view_strides(out, os);
    cu_view_init(f);
    for (int32_t d = 0; d < in->ndim; d++) {
        f->src_off += begin[d] * is[d];
        cu_view_push(f, out->dims[d], step[d] * is[d], os[d]);
    }
}

/** Checks that `out` has in's rank (a selection). */
static mxk_status tr_same_rank(const cu_tr_param *p, const mxk_shape *in, const mxk_shape *out,
                               mxk_error_sink *err) {
    if (in->ndim != out->ndim)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: output of %d dims for an input of %d dims",
                             p->g.op, (int)out->ndim, (int)in->ndim);
    return MXK_OK;
}

/** slice, slice_axis, slice_like: the first index and step per axis. */
static mxk_status sl_build(const cu_gather_param *g, const mxk_shape *in, const mxk_shape *out,
                           cu_view *f, mxk_error_sink *err) {
    const cu_tr_param *p = (const cu_tr_param *)g;
    MXK_SDK_CHECK(tr_same_rank(p, in, out, err));
    int64_t begin[MXK_MAX_NDIM] = {0}, step[MXK_MAX_NDIM];
    for (int32_t d = 0; d < in->ndim; d++)
        step[d] = 1;
    if (p->slice == TR_SLICE)
        for (int32_t d = 0; d < p->nb && d < in->ndim; d++)
            (void)mxk_idx_slice_range(p->has_begin[d], p->begin[d], p->has_end[d], p->end[d],
                                      d < p->ns && p->has_step[d], p->step[d], in->dims[d],
                                      &begin[d], &step[d]);
    else if (p->slice == TR_SLICE_AXIS) { /* begin counted from the end when negative */
        int32_t a = tr_axis(p->axis, in->ndim);
        begin[a] = p->begin[0] < 0 ? p->begin[0] + in->dims[a] : p->begin[0];
    }
    tr_select(in, out, begin, step, f);
    return MXK_OK;
}

/** reverse: along each axis given an odd number of times, index j reads n - 1 - j. */
static mxk_status rev_build(const cu_gather_param *g, const mxk_shape *in, const mxk_shape *out,
                            cu_view *f, mxk_error_sink *err) {
    const cu_tr_param *p = (const cu_tr_param *)g;
    int64_t begin[MXK_MAX_NDIM] = {0}, step[MXK_MAX_NDIM];
    for (int32_t d = 0; d < in->ndim; d++)
        step[d] = 1;
    for (int32_t i = 0; i < p->axes.ndim; i++) {
        int64_t a = p->axes.dims[i];
        if (a < 0 || a >= in->ndim)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "reverse: attribute 'axis': index = %lld must be in range [0, %d)",
                                 (long long)a, (int)in->ndim);
        step[a] = -step[a];
        begin[a] = step[a] < 0 ? in->dims[a] - 1 : 0;
    }
    tr_select(in, in, begin, step, f);
    return MXK_OK;
}

/** Crop: (N, C, th, tw) at (y, x) = offset, or centred; th, tw from the output. */
static mxk_status cr_build(const cu_gather_param *g, const mxk_shape *in, const mxk_shape *out,
                           cu_view *f, mxk_error_sink *err) {
    const cu_tr_param *p = (const cu_tr_param *)g;
    MXK_SDK_CHECK(tr_same_rank(p, in, out, err));
    if (in->ndim != 4)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "Crop: expected 4-D (N, C, H, W) data, got %d dims", (int)in->ndim);
    int64_t begin[MXK_MAX_NDIM] = {0}, step[MXK_MAX_NDIM] = {1, 1, 1, 1};
    for (int32_t i = 0; i < 2; i++) {
        int64_t room = in->dims[2 + i] - out->dims[2 + i];
        begin[2 + i] = p->center ? room / 2 : p->offset[i];
        if (begin[2 + i] < 0 || begin[2 + i] > room)
            return mxk_sdk_error(
                err, MXK_ERR_SHAPE,
                "Crop: crop (%lld x %lld at offset %lld, %lld) exceeds the input "
                "(%lld x %lld)",
                (long long)out->dims[2], (long long)out->dims[3],
                (long long)(p->center ? (in->dims[2] - out->dims[2]) / 2 : p->offset[0]),
                (long long)(p->center ? (in->dims[3] - out->dims[3]) / 2 : p->offset[1]),
                (long long)in->dims[2], (long long)in->dims[3]);
    }
    tr_select(in, out, begin, step, f);
    return MXK_OK;
}

/** Stores the parameter object with its gather header. */
static mxk_status tr_new(cu_tr_param *p, const char *op, cu_view_fn build, uint32_t num_in,
                         int32_t partial, void **out, mxk_error_sink *err) {
    p->g = (cu_gather_param){op, build, num_in, partial};
    return cu_param_dup(p, sizeof *p, out, err);
}

/** parse_param of transpose: axes. */
static mxk_status tp_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_tr_param p = {0};
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "axes", &p.axes, err));
    return tr_new(&p, "transpose", tp_build, 1, 0, out, err);
}

/** parse_param of SwapAxis: dim1, dim2. */
static mxk_status sw_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_tr_param p = {0};
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "dim1", &p.dim1, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "dim2", &p.dim2, err));
    return tr_new(&p, "SwapAxis", sw_build, 1, 0, out, err);
}

/** parse_param of slice: begin, end, step tuples of optional integers. */
static mxk_status sl_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_tr_param p = {0};
    int32_t ne;
    MXK_SDK_CHECK(mxk_idx_attr_opt_tuple(attrs, "begin", &p.nb, p.begin, p.has_begin, err));
    MXK_SDK_CHECK(mxk_idx_attr_opt_tuple(attrs, "end", &ne, p.end, p.has_end, err));
    MXK_SDK_CHECK(mxk_idx_attr_opt_tuple(attrs, "step", &p.ns, p.step, p.has_step, err));
    return tr_new(&p, "slice", sl_build, 1, 1, out, err);
}

/** parse_param of slice_axis: axis, begin (end comes with the output shape). */
static mxk_status sla_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_tr_param p = {0};
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "axis", &p.axis, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "begin", &p.begin[0], err));
    p.slice = TR_SLICE_AXIS;
    return tr_new(&p, "slice_axis", sl_build, 1, 1, out, err);
}

/** parse_param of slice_like: begin 0, step 1 (sizes come with the output shape). */
static mxk_status sll_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_tr_param p = {.slice = TR_SLICE_LIKE};
    return tr_new(&p, "slice_like", sl_build, 2, 1, out, err);
}

/** parse_param of reverse: axis. */
static mxk_status rev_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_tr_param p = {0};
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "axis", &p.axes, err));
    return tr_new(&p, "reverse", rev_build, 1, 0, out, err);
}

/** Reads Crop's (y, x) pair attribute `key`. */
static mxk_status cr_pair(const mxk_attrs *attrs, const char *key, int64_t *v,
                          mxk_error_sink *err) {
    mxk_shape s;
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, key, &s, err));
    if (s.ndim != 2)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute '%s': expected two integers (y, x)", key);
    v[0] = s.dims[0];
    v[1] = s.dims[1];
    return MXK_OK;
}

/** parse_param of Crop: num_args, offset, center_crop (h_w comes with the output shape). */
static mxk_status cr_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_tr_param p = {0};
    int64_t num;
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "num_args", 1, 2, &num, err));
    MXK_SDK_CHECK(cr_pair(attrs, "offset", p.offset, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "center_crop", &p.center, err));
    return tr_new(&p, "Crop", cr_build, (uint32_t)num, 1, out, err);
}

mxk_status cu_register_layout(mxk_registrar *reg, mxk_error_sink *err) {
    static const struct {
        const char *op;
        mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *);
    } ops[] = {{"transpose", tp_parse},   {"SwapAxis", sw_parse},    {"slice", sl_parse},
               {"slice_axis", sla_parse}, {"slice_like", sll_parse}, {"reverse", rev_parse},
               {"Crop", cr_parse}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        MXK_SDK_CHECK(cu_register_simple(reg, ops[i].op, ops[i].parse, cu_gather_forward,
                                         cu_gather_backward, err));
    return MXK_OK;
}
