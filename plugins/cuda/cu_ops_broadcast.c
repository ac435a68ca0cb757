/*
 * cuda plugin: broadcast_to, broadcast_axis, broadcast_like, tile and repeat on
 * the GPU, as gather views (cu_layout.h) of the operators cpu-blas defines
 * (op_init_broadcast.c, op_init_tile.c).
 *
 * Semantics: MXNet src/operator/tensor/broadcast_reduce_op.h (BroadcastToShape,
 * BroadcastAxesShape, BroadcastLikeShape: input dims of size 1 repeated to the
 * output's size) and src/operator/tensor/matrix_op-inl.h (TileOpShape: index j
 * reads j % in_dim, the shorter of input shape and reps left-padded with 1s;
 * RepeatOpShape: index j along the axis, or of the flattened input, reads
 * j / repeats). The backward sums the output gradient over the positions that read
 * one input element (MXNet's _broadcast_backward reduce-sum; tile and repeat
 * backward), deterministically, one thread per input element; broadcast_like's
 * rhs gets a zero gradient. Forward takes every dtype, backward float32.
 */
#include "cu_layout.h"
#include "mxk_index_attr.h"

/** Parsed attributes: repeat's repeats and optional axis (the others need none). */
typedef struct cu_bc_param {
    cu_gather_param g;
    int64_t repeats;
    int32_t has_axis;
    int64_t axis;
} cu_bc_param;

/** broadcast_*: same rank, each input dim equal to the output's or 1 (stride 0). */
static mxk_status bc_build(const cu_gather_param *g, const mxk_shape *in, const mxk_shape *out,
                           cu_view *f, mxk_error_sink *err) {
    int64_t is[MXK_MAX_NDIM], os[MXK_MAX_NDIM];
    if (in->ndim != out->ndim)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: output of %d dims for an input of %d dims",
                             g->op, (int)out->ndim, (int)in->ndim);
    cu_view_strides(in, is);
    cu_view_strides(out, os);
    cu_view_init(f);
    for (int32_t d = 0; d < in->ndim; d++) {
        if (in->dims[d] != out->dims[d] && in->dims[d] != 1)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "%s: input dim %d of size %lld cannot broadcast to %lld", g->op,
                                 (int)d, (long long)in->dims[d], (long long)out->dims[d]);
        cu_view_push(f, out->dims[d], in->dims[d] == 1 ? 0 : is[d], os[d]);
    }
    return MXK_OK;
}

/**
 * tile: the input left-padded with 1s to the output's rank; output dim d of
 * reps x in_d elements is the view dims (reps, in_d) reading (0, stride).
 */
static mxk_status tile_build(const cu_gather_param *g, const mxk_shape *in, const mxk_shape *out,
                             cu_view *f, mxk_error_sink *err) {
    int64_t is[MXK_MAX_NDIM], os[MXK_MAX_NDIM];
    int32_t shift = out->ndim - in->ndim;
    if (shift < 0)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "tile: output of %d dims for an input of %d dims",
                             (int)out->ndim, (int)in->ndim);
    cu_view_strides(in, is);
    cu_view_strides(out, os);
    cu_view_init(f);
    for (int32_t d = 0; d < out->ndim; d++) {
        int64_t n = d < shift ? 1 : in->dims[d - shift], s = d < shift ? 0 : is[d - shift];
        /* an empty input dim: an empty output dim, kept (nonzero stride) so that the
         * gradient view is empty too */
        if (n == 0) {
            cu_view_push(f, 0, 1, 1);
            continue;
        }
        if (out->dims[d] % n != 0)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "tile: output dim %d (%lld) is not a multiple "
                                 "of the input's (%lld)",
                                 (int)d, (long long)out->dims[d], (long long)n);
        cu_view_push(f, out->dims[d] / n, 0, n * os[d]);
        cu_view_push(f, n, s, os[d]);
    }
    return MXK_OK;
}

/**
 * repeat: along the axis (or the flattened input), the view dims (in_a, repeats)
 * reading (stride, 0); the other dims copy.
 */
static mxk_status rep_build(const cu_gather_param *g, const mxk_shape *in, const mxk_shape *out,
                            cu_view *f, mxk_error_sink *err) {
    const cu_bc_param *p = (const cu_bc_param *)g;
    cu_view_init(f);
    if (!p->has_axis) {
        int64_t n = cu_shape_size(in);
        if (cu_shape_size(out) != n * p->repeats)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "repeat: output of %lld elements, expected %lld",
                                 (long long)cu_shape_size(out), (long long)(n * p->repeats));
        cu_view_push(f, n, 1, p->repeats);
        cu_view_push(f, p->repeats, 0, 1);
        return MXK_OK;
    }
    int64_t is[MXK_MAX_NDIM], os[MXK_MAX_NDIM];
    int32_t a = (int32_t)(p->axis < 0 ? p->axis + in->ndim : p->axis);
    if (in->ndim != out->ndim || a < 0 || a >= in->ndim || out->dims[a] != in->dims[a] * p->repeats)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "repeat: output shape does not match the input's "
                             "repeated %lld times along axis %lld",
                             (long long)p->repeats, (long long)p->axis);
    cu_view_strides(in, is);
    cu_view_strides(out, os);
    for (int32_t d = 0; d < in->ndim; d++) {
        cu_view_push(f, in->dims[d], is[d], d == a ? p->repeats * os[d] : os[d]);
        if (d == a)
            cu_view_push(f, p->repeats, 0, os[d]);
    }
    return MXK_OK;
}

/** Stores the parameter object with its gather header. */
static mxk_status bc_new(cu_bc_param *p, const char *op, cu_view_fn build, uint32_t num_in,
                         void **out, mxk_error_sink *err) {
    p->g = (cu_gather_param){op, build, num_in, 0};
    return cu_param_dup(p, sizeof *p, out, err);
}

/** parse_param of broadcast_to (the view comes from the shapes). */
static mxk_status bt_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_bc_param p = {0};
    return bc_new(&p, "broadcast_to", bc_build, 1, out, err);
}

/** parse_param of broadcast_axis (the view comes from the shapes). */
static mxk_status ba_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_bc_param p = {0};
    return bc_new(&p, "broadcast_axis", bc_build, 1, out, err);
}

/** parse_param of broadcast_like: lhs and rhs (rhs gives only its shape). */
static mxk_status bl_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_bc_param p = {0};
    return bc_new(&p, "broadcast_like", bc_build, 2, out, err);
}

/** parse_param of tile (reps come with the output shape). */
static mxk_status tile_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_bc_param p = {0};
    return bc_new(&p, "tile", tile_build, 1, out, err);
}

/** parse_param of repeat: repeats (>= 1) and the optional axis. */
static mxk_status rep_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_bc_param p = {0};
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "repeats", &p.repeats, err));
    MXK_SDK_CHECK(mxk_idx_attr_opt_int(attrs, "axis", &p.has_axis, &p.axis, err));
    if (p.repeats < 1)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED, "repeat: repeats must be at least 1");
    return bc_new(&p, "repeat", rep_build, 1, out, err);
}

mxk_status cu_register_broadcast(mxk_registrar *reg, mxk_error_sink *err) {
    static const struct {
        const char *op;
        mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *);
    } ops[] = {{"broadcast_to", bt_parse},
               {"broadcast_axis", ba_parse},
               {"broadcast_like", bl_parse},
               {"tile", tile_parse},
               {"repeat", rep_parse}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        MXK_SDK_CHECK(cu_register_simple(reg, ops[i].op, ops[i].parse, cu_gather_forward,
                                         cu_gather_backward, err));
    return MXK_OK;
}
