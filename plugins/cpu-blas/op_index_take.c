/*
 * cpu-blas plugin: take, pick, gather_nd and scatter_nd.
 *
 * Semantics: MXNet src/operator/tensor/indexing_op.h / indexing_op.cc (TakeParam,
 * TakeOpShape, TakeOpForward, TakeOpBackward; GatherNDShape, gather_nd,
 * GatherNDForwardCPU; ScatterNDParam, ScatterNDShape, ScatterNDForward) and
 * broadcast_reduce_op.h / broadcast_reduce_op_index.cc (PickParam, PickOpShape,
 * PickOpForward, PickOpBackward).
 *   take(a, indices, axis, mode):   out = a[..., indices, ...] along `axis`; shape
 *       a.shape[:axis] + indices.shape + a.shape[axis+1:]; mode clip (default) clips
 *       indices to the axis, wrap wraps them, raise refuses indices outside [0, size).
 *   pick(data, index, axis, keepdims, mode): out[i] = data[i with axis = index[i]];
 *       `index` has data's shape without the axis (or with it of size 1); clip/wrap.
 *   gather_nd(data, indices): indices (M, Y...) address data's first M axes; out
 *       (Y..., data.shape[M:]); indices in [-size, size) (negative from the end).
 *   scatter_nd(data, indices, shape): the inverse, into zeros of `shape`.
 * Indices may be of any dtype (float32 values are truncated, as MXNet's casts).
 * Gradients: take/pick/gather_nd scatter-add out_grad into the data gradient,
 * scatter_nd gathers it; the index input gets zeros (MXNet's zeros_like nodes; take
 * refuses an ADD request for it, as MXNet). Backward reads out_grad and the indices.
 * Differences: scatter_nd refuses indices outside [-size, size) and wraps negative
 * ones as gather_nd does (MXNet writes outside its output there); gather_nd's
 * gradient wraps negative indices as its forward does (MXNet's scatters them
 * before the gradient array).
 */
#include <math.h>
#include <string.h>

#include "op_index.h"

/** Which operator a parameter object belongs to. */
typedef enum tk_kind { TK_TAKE, TK_PICK, TK_GATHER, TK_SCATTER } tk_kind;

/** Parsed attributes. */
typedef struct tk_param {
    tk_kind kind;
    int32_t has_axis; /**< pick: axis not None */
    int64_t axis;
    int32_t keepdims;
    mxk_idx_mode mode;
    mxk_shape shape; /**< scatter_nd: output shape */
} tk_param;

static const char *const take_args[] = {"a", "indices", NULL};
static const char *const pick_args[] = {"data", "index", NULL};
static const char *const nd_args[] = {"data", "indices", NULL};
static const char *const take_aliases[] = {"_npi_take", NULL};
static const char *const pick_aliases[] = {"choose_element_0index", "_npx_pick", NULL};
static const char *const gather_aliases[] = {"_npi_gather_nd", "_npx_gather_nd", NULL};

/** Attribute schema of take (TakeParam). */
static const mxk_attr_def take_attrs[] = {
    MXK_SDK_ATTR("axis", MXK_ATTR_INT, 0, "0", NULL,
                 "The axis of input array to be taken. For input tensor of rank r, it could be "
                 "in the range of [-r, r-1]"),
    MXK_SDK_ATTR("mode", MXK_ATTR_ENUM, 0, "clip", "raise|wrap|clip",
                 "Specify how out-of-bound indices bahave."),
};
/** Attribute schema of pick (PickParam). */
static const mxk_attr_def pick_attrs[] = {
    MXK_SDK_ATTR("axis", MXK_ATTR_STRING, 0, "-1", NULL,
                 "int or None. The axis to picking the elements."),
    MXK_SDK_ATTR("keepdims", MXK_ATTR_BOOL, 0, "False", NULL,
                 "If true, the axis where we pick the elements is left in the result as "
                 "dimension with size one."),
    MXK_SDK_ATTR("mode", MXK_ATTR_ENUM, 0, "clip", "wrap|clip",
                 "Specify how out-of-bound indices behave."),
};
/** Attribute schema of scatter_nd (ScatterNDParam). */
static const mxk_attr_def scatter_attrs[] = {
    MXK_SDK_ATTR("shape", MXK_ATTR_SHAPE, 1, NULL, NULL, "Shape of output."),
};

/** parse_param of take. */
static mxk_status take_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    tk_param p = {.kind = TK_TAKE};
    int32_t mode = 0;
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "axis", &p.axis, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "mode", "raise|wrap|clip", &mode, err));
    p.mode = (mxk_idx_mode)mode;
    return cbt_param_new(&p, sizeof p, out, err);
}

/** parse_param of pick (enum order wrap|clip). */
static mxk_status pick_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    tk_param p = {.kind = TK_PICK};
    int32_t mode = 0;
    MXK_SDK_CHECK(mxk_idx_attr_opt_int(attrs, "axis", &p.has_axis, &p.axis, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "keepdims", &p.keepdims, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "mode", "wrap|clip", &mode, err));
    p.mode = mode == 0 ? MXK_IDX_WRAP : MXK_IDX_CLIP;
    return cbt_param_new(&p, sizeof p, out, err);
}

/** parse_param of gather_nd (no attributes). */
static mxk_status gather_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    tk_param p = {.kind = TK_GATHER};
    return cbt_param_new(&p, sizeof p, out, err);
}

/** parse_param of scatter_nd: a known output shape. */
static mxk_status scatter_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    tk_param p = {.kind = TK_SCATTER};
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "shape", &p.shape, err));
    if (!mxk_sdk_shape_is_known(&p.shape))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'shape' must have positive dims");
    MXK_SDK_CHECK(mxk_sdk_shape_check_count(&p.shape, "attribute 'shape'", err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** take: a.shape[:axis] + indices.shape + a.shape[axis+1:]. */
static mxk_status take_shape(const tk_param *p, const mxk_shape *a, const mxk_shape *idx,
                             mxk_shape *o, mxk_error_sink *err) {
    if (p->axis < -a->ndim || p->axis >= a->ndim)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "Axis should be in the range of [-r, r-1] where r is the rank "
                             "of input tensor (axis %lld, rank %d)",
                             (long long)p->axis, (int)a->ndim);
    int32_t ax = (int32_t)(p->axis < 0 ? p->axis + a->ndim : p->axis);
    if (idx->ndim + a->ndim - 1 > MXK_MAX_NDIM)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "the output would have more than %d dims",
                             MXK_MAX_NDIM);
    *o = mxk_sdk_shape_unknown();
    for (int32_t i = 0; i < ax; i++)
        o->dims[o->ndim++] = a->dims[i];
    for (int32_t i = 0; i < idx->ndim; i++)
        o->dims[o->ndim++] = idx->dims[i];
    for (int32_t i = ax + 1; i < a->ndim; i++)
        o->dims[o->ndim++] = a->dims[i];
    return MXK_OK;
}

/** pick (ReduceAxisShapeImpl): data without the axis (keepdims: of size 1); 1-D: (1,). */
static mxk_status pick_shape(const tk_param *p, const mxk_shape *d, int keep, mxk_shape *o,
                             mxk_error_sink *err) {
    if (!p->has_axis)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "axis=None is not supported by pick yet. Must specify an axis.");
    int32_t ax;
    MXK_SDK_CHECK(cbt_axis(p->axis, d->ndim, "axis", &ax, err));
    *o = *d;
    if (d->ndim == 1) {
        *o = mxk_sdk_shape1(1);
    } else if (keep) {
        o->dims[ax] = 1;
    } else {
        for (int32_t i = ax; i + 1 < d->ndim; i++)
            o->dims[i] = d->dims[i + 1];
        o->dims[--o->ndim] = 0;
    }
    return MXK_OK;
}

/** gather_nd / scatter_nd: checks of the index shape against `big` (data / output). */
static mxk_status nd_check(const char *op, const mxk_shape *big, const mxk_shape *idx,
                           mxk_error_sink *err) {
    if (idx->ndim < 2)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "%s requires index tensor to have at least 2 dimensions", op);
    if (idx->dims[0] > big->ndim)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: Number of indices exceeds %s dimension", op,
                             strcmp(op, "gather_nd") == 0 ? "data" : "output");
    if (idx->ndim - 1 + big->ndim - idx->dims[0] > MXK_MAX_NDIM)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: more than %d dims", op, MXK_MAX_NDIM);
    return MXK_OK;
}

/** gather_nd's output / scatter_nd's data shape: idx.shape[1:] + big.shape[M:]. */
static mxk_shape nd_small_shape(const mxk_shape *big, const mxk_shape *idx) {
    mxk_shape o = mxk_sdk_shape_unknown();
    for (int32_t i = 1; i < idx->ndim; i++)
        o.dims[o.ndim++] = idx->dims[i];
    for (int32_t i = (int32_t)idx->dims[0]; i < big->ndim; i++)
        o.dims[o.ndim++] = big->dims[i];
    return o;
}

/** infer_shape of the four operators. */
static mxk_status tk_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const tk_param *p = param;
    mxk_shape o;
    char a[MXK_SDK_SHAPE_STR_MAX], b[MXK_SDK_SHAPE_STR_MAX], c[MXK_SDK_SHAPE_STR_MAX];
    switch (p->kind) {
    case TK_TAKE:
        if (in[0].ndim == 0 || in[1].ndim == 0)
            return MXK_OK;
        MXK_SDK_CHECK(take_shape(p, &in[0], &in[1], &o, err));
        break;
    case TK_PICK:
        if (in[0].ndim == 0)
            return MXK_OK;
        MXK_SDK_CHECK(pick_shape(p, &in[0], p->keepdims, &o, err));
        if (in[1].ndim != 0) {
            mxk_shape is;
            MXK_SDK_CHECK(pick_shape(p, &in[0], in[1].ndim == in[0].ndim, &is, err));
            MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&in[1], &is, "argument", "index", err));
        }
        break;
    case TK_GATHER:
        if (in[0].ndim == 0 || in[1].ndim == 0)
            return MXK_OK;
        MXK_SDK_CHECK(nd_check("gather_nd", &in[0], &in[1], err));
        o = nd_small_shape(&in[0], &in[1]);
        break;
    default: /* TK_SCATTER */
        o = p->shape;
        if (in[0].ndim != 0 && in[1].ndim != 0) {
            MXK_SDK_CHECK(nd_check("scatter_nd", &o, &in[1], err));
            mxk_shape d = nd_small_shape(&o, &in[1]);
            if (!mxk_sdk_shape_merge(&d, &in[0], NULL))
                return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                     "Invalid data, indices, and output shape combination for "
                                     "scatter_nd: %s, %s, %s",
                                     mxk_sdk_shape_format(&in[0], a, sizeof a),
                                     mxk_sdk_shape_format(&in[1], b, sizeof b),
                                     mxk_sdk_shape_format(&o, c, sizeof c));
        }
        break;
    }
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/** infer_type: data and output float32; the indices any dtype (float32 when unknown). */
static mxk_status tk_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    MXK_SDK_CHECK(mxk_sdk_type_assign(&in[0], MXK_FLOAT32, "argument 0", err));
    if (in[1] < 0)
        in[1] = MXK_FLOAT32;
    return mxk_sdk_type_assign(&out[0], MXK_FLOAT32, "output 'output'", err);
}

/** Backward reads out_grad and the indices. */
static void tk_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                          uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                          uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    need_in_data[1] = 1;
}

/**
 * The layout of one call: the data (take, pick, gather_nd) or output (scatter_nd)
 * viewed as (outer, size, inner) around the indexed axis (take, pick), or the
 * gather/scatter geometry (M leading axes addressed, N index tuples of K elements).
 */
typedef struct tk_geom {
    uint64_t outer, size, inner, n;
    int64_t m, k, dims[MXK_MAX_NDIM], strides[MXK_MAX_NDIM];
} tk_geom;

/** Geometry of a call with data/output shape `big` and index tensor shape `idx`. */
static mxk_status tk_geometry(const tk_param *p, const mxk_shape *big, const mxk_shape *idx,
                              tk_geom *g, mxk_error_sink *err) {
    memset(g, 0, sizeof *g);
    g->n = mxk_sdk_shape_count(idx);
    if (p->kind == TK_TAKE || p->kind == TK_PICK) {
        int32_t ax;
        MXK_SDK_CHECK(cbt_axis(p->axis, big->ndim, "axis", &ax, err));
        cbt_split(big, ax, &g->outer, &g->size, &g->inner);
        return MXK_OK;
    }
    g->m = idx->dims[0];
    g->n /= (uint64_t)g->m;
    g->k = (int64_t)mxk_sdk_shape_prod(big, (int32_t)g->m, big->ndim);
    int64_t stride = g->k;
    for (int64_t j = g->m - 1; j >= 0; j--) {
        g->dims[j] = big->dims[j];
        g->strides[j] = stride;
        stride *= big->dims[j];
    }
    return MXK_OK;
}

/** take with mode raise: every index in [0, size). */
static mxk_status take_check_raise(const mxk_tensor *it, uint64_t size, mxk_error_sink *err) {
    uint64_t n = mxk_sdk_shape_count(&it->shape);
    for (uint64_t i = 0; i < n; i++) {
        double v = cbt_load(it->data, it->dtype, i);
        if (!(v >= 0 && v <= (double)size - 1)) /* compared in the index dtype, as MXNet */
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "take operator contains indices out of bound (index %g, axis "
                                 "size %llu)",
                                 v, (unsigned long long)size);
    }
    return MXK_OK;
}

/** gather_nd / scatter_nd: every index of tuple component j in [-dims[j], dims[j] - 1]. */
static mxk_status nd_check_bounds(const tk_geom *g, const mxk_tensor *it, mxk_error_sink *err) {
    for (int64_t j = 0; j < g->m; j++)
        for (uint64_t i = 0; i < g->n; i++) {
            double v = cbt_load(it->data, it->dtype, (uint64_t)j * g->n + i);
            if (!(v >= -(double)g->dims[j] && v <= (double)g->dims[j] - 1))
                return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                     "IndexError: index %g is out of bounds for axis %lld with "
                                     "size %lld",
                                     v, (long long)j, (long long)g->dims[j]);
        }
    return MXK_OK;
}

/**
 * Element offset in the big tensor of index tuple i (bounds checked before): each
 * index v addresses (int)(v + size) % size, as MXNet's gather_nd kernel (mxk_idx_nd_pos).
 */
static uint64_t nd_offset(const tk_geom *g, const mxk_tensor *it, uint64_t i) {
    uint64_t off = 0;
    for (int64_t j = 0; j < g->m; j++) {
        double v = cbt_load(it->data, it->dtype, (uint64_t)j * g->n + i);
        off += (uint64_t)(g->strides[j] * mxk_idx_nd_pos(v, g->dims[j]));
    }
    return off;
}

/**
 * The mapping shared by forward and backward, in blocks of contiguous elements:
 * block b of the small tensor (take/pick/gather_nd output, scatter_nd data) starts
 * at b * len and is the block of the big tensor (take/pick/gather_nd data,
 * scatter_nd output) at the returned offset. take: a row of `inner` elements per
 * (outer, index); pick: single elements; gather_nd/scatter_nd: K elements per tuple.
 */
static uint64_t tk_block(const tk_param *p, const tk_geom *g, const mxk_tensor *it, uint64_t b) {
    if (p->kind == TK_GATHER || p->kind == TK_SCATTER)
        return nd_offset(g, it, b);
    int32_t pick = p->kind == TK_PICK;
    double v = cbt_load(it->data, it->dtype, mxk_idx_take_index(pick, b, g->n));
    return mxk_idx_take_offset(pick, b, g->n, g->size, g->inner, v, p->mode);
}

/**
 * Runs the mapping: `gather`: small (=|+=) big by `req`; otherwise big = small
 * (`add` 0) or big += small (`add` 1), block by block.
 */
static void tk_map(const tk_param *p, const tk_geom *g, const mxk_tensor *it, float *big,
                   float *small, int gather, mxk_op_req req, int add) {
    uint64_t nb = p->kind == TK_TAKE   ? g->outer * g->n
                  : p->kind == TK_PICK ? g->outer * g->inner
                                       : g->n;
    size_t len = p->kind == TK_TAKE ? (size_t)g->inner : p->kind == TK_PICK ? 1 : (size_t)g->k;
    for (uint64_t b = 0; b < nb; b++) {
        float *bp = big + tk_block(p, g, it, b), *sp = small + b * len;
        if (gather)
            mxk_sdk_copy_f32(sp, bp, len, req);
        else
            mxk_sdk_copy_f32(bp, sp, len, add ? MXK_REQ_ADD : MXK_REQ_WRITE);
    }
}

/** Checks of an index tensor before use; `big` is the data (or scatter_nd output). */
static mxk_status tk_check_indices(const tk_param *p, const tk_geom *g, const mxk_tensor *it,
                                   mxk_error_sink *err) {
    if (p->kind == TK_TAKE && p->mode == MXK_IDX_RAISE)
        return take_check_raise(it, g->size, err);
    if (p->kind == TK_GATHER || p->kind == TK_SCATTER)
        return nd_check_bounds(g, it, err);
    return MXK_OK;
}

/** Forward of the four operators. */
static mxk_status tk_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const tk_param *p = param;
    MXK_SDK_CHECK(cbt_check_forward(args, 2, 1, tk_infer_shape, param, 1, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dt = args->in_data[0], *it = args->in_data[1], *ot = args->out_data[0];
    MXK_SDK_CHECK(cb_check_tensor(dt, "argument 0", err));
    MXK_SDK_CHECK(cb_check_tensor(ot, "output 'output'", err));
    int scatter = p->kind == TK_SCATTER;
    tk_geom g;
    MXK_SDK_CHECK(tk_geometry(p, scatter ? &ot->shape : &dt->shape, &it->shape, &g, err));
    MXK_SDK_CHECK(tk_check_indices(p, &g, it, err));
    if (!scatter) {
        tk_map(p, &g, it, cb_f32(dt), cb_f32(ot), 1, req, 0);
        return MXK_OK;
    }
    if (req != MXK_REQ_ADD)
        memset(ot->data, 0, (size_t)mxk_sdk_shape_count(&ot->shape) * sizeof(float));
    tk_map(p, &g, it, cb_f32(ot), cb_f32(dt), 0, req, req == MXK_REQ_ADD);
    return MXK_OK;
}

/** Backward: the data gradient through the mapping, zeros for the indices. */
static mxk_status tk_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const tk_param *p = param;
    const char *iname = p->kind == TK_PICK ? "index" : "indices";
    if (p->kind == TK_TAKE && args->num_in == 2 && args->req[1] == MXK_REQ_ADD)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED,
                             "take layer doesn't support gradient of req type kAddTo to index");
    const mxk_tensor *dy, *dx, *it = args->num_in == 2 ? args->in_data[1] : NULL;
    MXK_SDK_CHECK(cb_idx_begin_backward(args, 2, iname, &dy, &dx, err));
    if (dx == NULL)
        return MXK_OK;
    mxk_op_req req = args->req[0];
    MXK_SDK_CHECK(cbt_check_any(it, iname, err));
    mxk_shape in_shapes[2] = {dx->shape, it->shape}, o = mxk_sdk_shape_unknown();
    MXK_SDK_CHECK(tk_infer_shape(param, in_shapes, 2, &o, 1, NULL, 0, err));
    if (!mxk_sdk_shape_equal(&o, &dy->shape))
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "gradient of 'output': inconsistent shape");
    int scatter = p->kind == TK_SCATTER;
    tk_geom g;
    MXK_SDK_CHECK(tk_geometry(p, scatter ? &dy->shape : &dx->shape, &it->shape, &g, err));
    MXK_SDK_CHECK(tk_check_indices(p, &g, it, err));
    if (scatter) { /* the gradient of a scatter is a gather */
        tk_map(p, &g, it, cb_f32(dy), cb_f32(dx), 1, req, 0);
        return MXK_OK;
    }
    if (req != MXK_REQ_ADD)
        memset(dx->data, 0, (size_t)mxk_sdk_shape_count(&dx->shape) * sizeof(float));
    tk_map(p, &g, it, cb_f32(dx), cb_f32(dy), 0, req, 1);
    return MXK_OK;
}

/** Registers take, pick, gather_nd and scatter_nd with their CPU kernels. */
mxk_status cb_register_index_take(mxk_registrar *reg, mxk_error_sink *err) {
    static const struct {
        const char *name, *doc;
        const mxk_attr_def *attrs;
        uint32_t num_attrs;
        const char *const *args, *const *aliases;
        mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *);
    } ops[] = {
        {"take", "Takes elements from an input array along the given axis.", take_attrs,
         MXK_SDK_COUNTOF(take_attrs), take_args, take_aliases, take_parse},
        {"pick",
         "Picks elements from an input array according to the input indices along the "
         "given axis.",
         pick_attrs, MXK_SDK_COUNTOF(pick_attrs), pick_args, pick_aliases, pick_parse},
        {"gather_nd", "Gather elements or slices from data into a tensor shaped by indices.", NULL,
         0, nd_args, gather_aliases, gather_parse},
        {"scatter_nd", "Scatters data into a new tensor according to indices.", scatter_attrs,
         MXK_SDK_COUNTOF(scatter_attrs), nd_args, NULL, scatter_parse},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        mxk_op_def def;
        cbt_def_init(&def, ops[i].doc, ops[i].attrs, ops[i].num_attrs, ops[i].args, ops[i].parse);
        def.infer_shape = tk_infer_shape;
        def.infer_type = tk_infer_type;
        def.backward_dependency = tk_dependency;
        def.aliases = ops[i].aliases;
        MXK_SDK_CHECK(cbt_register(reg, &def, ops[i].name, tk_forward, tk_backward, 1, err));
    }
    return MXK_OK;
}
