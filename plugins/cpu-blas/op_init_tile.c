/*
 * cpu-blas plugin, init group: tile, repeat and reverse (alias flip).
 *
 * Semantics: MXNet src/operator/tensor/matrix_op-inl.h and matrix_op.cc
 * (TileOpShape, RepeatOpShape, GetRepeatParams, ReverseOpForward).
 *   tile: `reps` (required); the output has max(ndim, len(reps)) dims, the
 *     shorter of input shape and reps left-padded with 1s; dim i is in_i * reps_i
 *     and index j reads j % in_i. Empty reps: a copy.
 *   repeat: `repeats` (required), `axis` (None: the flattened input, output
 *     (size * repeats,)); index j along the axis reads j / repeats.
 *   reverse: `axis` (required tuple, each in [0, ndim) as MXNet indexes the shape
 *     with it; an axis given twice is reversed twice); index j reads n - 1 - j.
 * Backward sums the output gradient onto the positions read (reads only it).
 * Counts must be >= 1: MXNet's zero-size outputs (reps or repeats 0) are refused,
 * 0 being an unknown dimension in mxk's legacy shapes. Forward takes every dtype
 * (output dtype = input dtype), backward float32.
 */
#include "op_init.h"

static const char *const tl_data[] = {"data", NULL};

/** Parsed attributes of the three operators. */
typedef struct tl_param {
    cbi_gather_param g; /**< the kernels' view (first member) */
    mxk_shape axes;     /**< tile: reps; reverse: axis */
    int64_t repeats;    /**< repeat */
    int32_t has_axis;
    int64_t axis; /**< repeat: axis when has_axis */
} tl_param;

/* Shape inferences and index maps, named in the parameters. */
static mxk_status tile_infer_shape(const void *param, mxk_shape *in, uint32_t num_in,
                                   mxk_shape *out, uint32_t num_out, mxk_shape *aux,
                                   uint32_t num_aux, mxk_error_sink *err);
static mxk_status rep_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                  uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                  mxk_error_sink *err);
static mxk_status rev_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                  uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                  mxk_error_sink *err);
static void tile_map(const void *param, cbi_map *m);
static void rep_map(const void *param, cbi_map *m);
static void rev_map(const void *param, cbi_map *m);

/** Attribute schema of tile (TileParam). */
static const mxk_attr_def tile_attrs[] = {
    MXK_SDK_ATTR("reps", MXK_ATTR_SHAPE, 1, NULL, NULL, "Repetitions of each dim."),
};
/** Attribute schema of repeat (RepeatParam). */
static const mxk_attr_def rep_attrs[] = {
    MXK_SDK_ATTR("repeats", MXK_ATTR_INT, 1, NULL, NULL, "Repetitions of each element."),
    MXK_SDK_ATTR("axis", MXK_ATTR_STRING, 0, "None", NULL,
                 "The axis to repeat along (None: the flattened input)."),
};
/** Attribute schema of reverse (ReverseParam). */
static const mxk_attr_def rev_attrs[] = {
    MXK_SDK_ATTR("axis", MXK_ATTR_SHAPE, 1, NULL, NULL, "The axes to reverse."),
};

/** parse_param of tile: reps >= 1. */
static mxk_status tile_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    tl_param p = {.g = {1, tile_infer_shape, tile_map, 0.0}};
    MXK_SDK_CHECK(cbi_attr_tuple_min(attrs, "reps", 1, &p.axes, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** parse_param of repeat: repeats >= 1. */
static mxk_status rep_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    tl_param p = {.g = {1, rep_infer_shape, rep_map, 0.0}};
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "repeats", &p.repeats, err));
    MXK_SDK_CHECK(cbi_attr_opt_int(attrs, "axis", &p.has_axis, &p.axis, err));
    if (p.repeats < 0)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "repeats cannot be a negative number");
    if (p.repeats == 0)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED,
                             "attribute 'repeats': 0 (an empty output) is not supported");
    return cbt_param_new(&p, sizeof p, out, err);
}

/** parse_param of reverse. */
static mxk_status rev_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    tl_param p = {.g = {1, rev_infer_shape, rev_map, 0.0}};
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "axis", &p.axes, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** tile (TileOpShape), from the known input. */
static mxk_status tile_infer_shape(const void *param, mxk_shape *in, uint32_t num_in,
                                   mxk_shape *out, uint32_t num_out, mxk_shape *aux,
                                   uint32_t num_aux, mxk_error_sink *err) {
    const tl_param *p = param;
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 1 argument");
    const mxk_shape *d = &in[0];
    if (!mxk_sdk_shape_is_known(d))
        return MXK_OK;
    MXK_SDK_CHECK(mxk_sdk_shapes_check_count(in, 1, "argument", tl_data, err));
    int32_t nd = d->ndim > p->axes.ndim ? d->ndim : p->axes.ndim;
    if (nd > MXK_MAX_NDIM)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED, "the output would have %d dims (at most %d)",
                             (int)nd, MXK_MAX_NDIM);
    mxk_shape o = mxk_sdk_shape_unknown();
    o.ndim = nd;
    for (int32_t i = 0; i < nd; i++) {
        int32_t a = i - (nd - d->ndim), r = i - (nd - p->axes.ndim);
        int64_t x = a >= 0 ? d->dims[a] : 1, k = r >= 0 ? p->axes.dims[r] : 1;
        MXK_SDK_CHECK(mxk_sdk_dim_mul(x, k, &o.dims[i], "output dim", err));
    }
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/** repeat (RepeatOpShape), from the known input. */
static mxk_status rep_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                  uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                  mxk_error_sink *err) {
    const tl_param *p = param;
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 1 argument");
    const mxk_shape *d = &in[0];
    if (!mxk_sdk_shape_is_known(d))
        return MXK_OK;
    MXK_SDK_CHECK(mxk_sdk_shapes_check_count(in, 1, "argument", tl_data, err));
    mxk_shape o;
    if (p->has_axis) {
        int64_t a = p->axis < 0 ? p->axis + d->ndim : p->axis;
        if (a < 0 || a >= d->ndim)
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "axis = %lld out of bounds",
                                 (long long)p->axis);
        o = *d;
        MXK_SDK_CHECK(mxk_sdk_dim_mul(d->dims[a], p->repeats, &o.dims[a], "output dim", err));
    } else {
        int64_t n;
        MXK_SDK_CHECK(
            mxk_sdk_dim_mul((int64_t)mxk_sdk_shape_count(d), p->repeats, &n, "output size", err));
        o = mxk_sdk_shape1(n);
    }
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/** reverse: same shape; every axis within [0, ndim). */
static mxk_status rev_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                  uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                  mxk_error_sink *err) {
    const tl_param *p = param;
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 1 argument");
    MXK_SDK_CHECK(mxk_sdk_infer_shape_same(in, 1, tl_data, out, 1, NULL, err));
    for (int32_t i = 0; i < p->axes.ndim && in[0].ndim > 0; i++)
        if (p->axes.dims[i] < 0 || p->axes.dims[i] >= in[0].ndim)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "attribute 'axis': index = %lld must be in range [0, %d)",
                                 (long long)p->axes.dims[i], (int)in[0].ndim);
    return MXK_OK;
}

/** tile's map: j reads j % in_dim. */
static void tile_map(const void *param, cbi_map *m) {
    for (int32_t d = 0; d < m->ndim; d++)
        for (int64_t j = 0; j < m->out_dims[d]; j++)
            m->tab[d][j] = j % m->in_dims[d];
}

/** repeat's map: along the axis (the only dim when flattened) j reads j / repeats. */
static void rep_map(const void *param, cbi_map *m) {
    const tl_param *p = param;
    int32_t a = 0;
    if (p->has_axis)
        a = (int32_t)(p->axis < 0 ? p->axis + m->ndim : p->axis);
    for (int64_t j = 0; j < m->out_dims[a]; j++)
        m->tab[a][j] = j / p->repeats;
}

/** reverse's map: along each axis given an odd number of times, j reads n - 1 - j. */
static void rev_map(const void *param, cbi_map *m) {
    const tl_param *p = param;
    for (int32_t i = 0; i < p->axes.ndim; i++) {
        int64_t a = p->axes.dims[i], n = m->out_dims[a];
        for (int64_t j = 0; j < n; j++)
            m->tab[a][j] = n - 1 - m->tab[a][j];
    }
}

/** Registers tile, repeat and reverse. */
mxk_status cb_register_init_tile(mxk_registrar *reg, mxk_error_sink *err) {
    static const char *const tile_aliases[] = {"_npi_tile", NULL};
    static const char *const rep_aliases[] = {"_np_repeat", NULL};
    static const char *const rev_aliases[] = {"flip", NULL};
    static const cbi_op ops[] = {
        {"tile", tile_aliases, "Repeats the whole array `reps` times along each dim.", tile_attrs,
         MXK_SDK_COUNTOF(tile_attrs), tl_data, tile_parse, tile_infer_shape, cbi_infer_type_same,
         cbi_gather_forward, cbi_gather_backward, 0},
        {"repeat", rep_aliases, "Repeats each element `repeats` times.", rep_attrs,
         MXK_SDK_COUNTOF(rep_attrs), tl_data, rep_parse, rep_infer_shape, cbi_infer_type_same,
         cbi_gather_forward, cbi_gather_backward, 0},
        {"reverse", rev_aliases, "Reverses the order of elements along `axis`.", rev_attrs,
         MXK_SDK_COUNTOF(rev_attrs), tl_data, rev_parse, rev_infer_shape, cbi_infer_type_same,
         cbi_gather_forward, cbi_gather_backward, 0},
    };
    return cbi_register_ops(reg, ops, MXK_SDK_COUNTOF(ops), err);
}
