/*
 * cuda plugin: take, pick, Embedding, gather_nd, scatter_nd, one_hot and where on
 * the GPU, for the operators cpu-blas defines (op_index_take.c, op_embedding.c,
 * op_argmax.c, op_index_where.c).
 *
 * Semantics: MXNet src/operator/tensor/indexing_op.h / indexing_op.cu (take,
 * Embedding, gather_nd, scatter_nd, one_hot), broadcast_reduce_op.h (pick) and
 * control_flow_op.h (where). take, pick, Embedding and gather_nd gather blocks of
 * the data addressed by the indices (mxk_index.h, shared with cpu-blas); their
 * gradient scatter-adds out_grad with atomicAdd (repeated indices may sum in
 * another order than the CPU's). Embedding is take along axis 0 of the weight in
 * clip mode. scatter_nd is the inverse gather. Differences from cpu-blas: take's
 * mode raise and the range checks of gather_nd / scatter_nd would need the indices
 * on the host (a synchronisation), so raise is declined and gather_nd / scatter_nd
 * wrap out-of-range indices into the axis (as MXNet's GPU kernels, which do not
 * check them either, but never addressing outside the array); scatter_nd with
 * repeated indices keeps any one of the values (MXNet's GPU kernel likewise).
 */
#include "cu_kern_index.h"
#include "cu_layout.h"
#include "mxk_fill_value.h"
#include "mxk_index.h"
#include "mxk_index_attr.h"

/** Which operator a parameter object of the block-move family belongs to. */
typedef enum tk_kind { TK_TAKE, TK_PICK, TK_GATHER, TK_SCATTER, TK_EMBEDDING } tk_kind;

/** Parsed attributes of take, pick, gather_nd, scatter_nd and Embedding. */
typedef struct cu_tk_param {
    tk_kind kind;
    int64_t axis;
    int32_t mode; /**< mxk_idx_mode */
} cu_tk_param;

/** Fails unless t is present and float32 (the data tensors of these kernels). */
static mxk_status tk_need_f32(const mxk_tensor *t, const char *op, const char *what,
                              mxk_error_sink *err) {
    MXK_SDK_CHECK(cu_need(t, op, what, err));
    if (t->dtype != MXK_FLOAT32)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "%s: %s: expected float32, got %s", op, what,
                             mxk_sdk_dtype_name(t->dtype));
    return MXK_OK;
}

/** The operator's name. */
static const char *tk_name(const cu_tk_param *p) {
    static const char *const names[] = {"take", "pick", "gather_nd", "scatter_nd", "Embedding"};
    return names[p->kind];
}

/**
 * The block-move geometry for big tensor shape `big` and index shape `idx`:
 * take / pick around the axis, Embedding along the weight's rows, gather_nd /
 * scatter_nd over the first idx.dims[0] dims. Errors: MXK_ERR_SHAPE.
 */
static mxk_status tk_geometry(const cu_tk_param *p, const mxk_shape *big, const mxk_shape *idx,
                              cu_take_geom *g, mxk_error_sink *err) {
    memset(g, 0, sizeof *g);
    g->n = (uint64_t)cu_shape_size(idx);
    g->mode = p->mode;
    if (p->kind == TK_GATHER || p->kind == TK_SCATTER) {
        if (idx->ndim < 2 || idx->dims[0] > big->ndim)
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: indices of %d dims address %lld of %d",
                                 tk_name(p), (int)idx->ndim, (long long)idx->dims[0],
                                 (int)big->ndim);
        g->kind = CU_GATHER_ND;
        g->m = (int32_t)idx->dims[0];
        g->nblocks = g->n / (uint64_t)g->m;
        int64_t stride = 1;
        for (int32_t d = big->ndim - 1; d >= g->m; d--)
            stride *= big->dims[d];
        g->len = (uint64_t)stride;
        for (int32_t j = g->m - 1; j >= 0; j--) {
            g->dims[j] = big->dims[j];
            g->strides[j] = stride;
            stride *= big->dims[j];
        }
        return MXK_OK;
    }
    int64_t a = p->axis < 0 ? p->axis + big->ndim : p->axis;
    if (a < 0 || a >= big->ndim)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: axis %lld is out of range for %d dims",
                             tk_name(p), (long long)p->axis, (int)big->ndim);
    uint64_t outer = 1;
    g->inner = 1;
    for (int32_t d = 0; d < a; d++)
        outer *= (uint64_t)big->dims[d];
    for (int32_t d = (int32_t)a + 1; d < big->ndim; d++)
        g->inner *= (uint64_t)big->dims[d];
    g->size = (uint64_t)big->dims[a];
    g->kind = p->kind == TK_PICK ? CU_PICK : CU_TAKE;
    g->nblocks = p->kind == TK_PICK ? outer * g->inner : outer * g->n;
    g->len = p->kind == TK_PICK ? 1 : g->inner;
    return MXK_OK;
}

/** Argument positions: the big tensor (data, weight) and the indices. */
static void tk_args(const cu_tk_param *p, uint32_t *big, uint32_t *idx) {
    *big = p->kind == TK_EMBEDDING ? 1 : 0;
    *idx = p->kind == TK_EMBEDDING ? 0 : 1;
}

/** Queues one block move. */
static mxk_status tk_run(const mxk_op_ctx *ctx, const cu_take_geom *g, const mxk_tensor *it,
                         const mxk_tensor *big, const mxk_tensor *small, int32_t dir, int add,
                         mxk_error_sink *err) {
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(
        cu_launch_take(g, it->data, it->dtype, big->data, small->data, dir, add, cu_stream(ctx)),
        "index block move", err);
    return MXK_OK;
}

/** Clears t unless req is ADD (the start of a scatter). */
static mxk_status tk_clear(const mxk_op_ctx *ctx, const mxk_tensor *t, mxk_op_req req,
                           mxk_error_sink *err) {
    if (req == MXK_REQ_ADD)
        return MXK_OK;
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(cudaMemsetAsync(t->data, 0, (size_t)cu_shape_size(&t->shape) * sizeof(float),
                             cu_stream(ctx)),
             "cudaMemsetAsync", err);
    return MXK_OK;
}

/** Forward: gathers (scatter_nd: scatters into zeros, or adds for ADD). */
static mxk_status tk_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_tk_param *p = param;
    const char *op = tk_name(p);
    uint32_t bi, ii;
    tk_args(p, &bi, &ii);
    if (args->num_in != 2 || args->num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s: expected 2 arguments", op);
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dt = args->in_data[bi], *it = args->in_data[ii], *ot = args->out_data[0];
    MXK_SDK_CHECK(tk_need_f32(dt, op, "the data", err));
    MXK_SDK_CHECK(cu_need(it, op, "the indices", err));
    MXK_SDK_CHECK(tk_need_f32(ot, op, "the output", err));
    cu_take_geom g;
    if (p->kind != TK_SCATTER) {
        MXK_SDK_CHECK(tk_geometry(p, &dt->shape, &it->shape, &g, err));
        return tk_run(ctx, &g, it, dt, ot, CU_TAKE_GATHER, req == MXK_REQ_ADD, err);
    }
    MXK_SDK_CHECK(tk_geometry(p, &ot->shape, &it->shape, &g, err));
    MXK_SDK_CHECK(tk_clear(ctx, ot, req, err));
    return tk_run(ctx, &g, it, ot, dt, CU_TAKE_SCATTER, req == MXK_REQ_ADD, err);
}

/**
 * Backward: the data gradient scatter-added (scatter_nd: gathered), zeros for the
 * indices (take refuses ADD for them, Embedding a data gradient, as MXNet).
 */
static mxk_status tk_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_tk_param *p = param;
    const char *op = tk_name(p);
    uint32_t bi, ii;
    tk_args(p, &bi, &ii);
    if (args->num_in != 2 || args->num_out_grad != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s: expected 2 arguments", op);
    if (p->kind == TK_TAKE && args->req[ii] == MXK_REQ_ADD)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED,
                             "take layer doesn't support gradient of req type kAddTo to index");
    if (p->kind == TK_EMBEDDING && args->req[ii] != MXK_REQ_NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "gradient of 'data' requested: Embedding layer doesn't "
                             "support calculate data gradient");
    MXK_SDK_CHECK(cu_zero_grad(ctx, args->in_grad[ii], args->req[ii], err));
    mxk_op_req req = args->req[bi];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dy = args->out_grad[0], *dx = args->in_grad[bi], *it = args->in_data[ii];
    MXK_SDK_CHECK(tk_need_f32(dy, op, "the output gradient", err));
    MXK_SDK_CHECK(tk_need_f32(dx, op, "the data gradient", err));
    MXK_SDK_CHECK(cu_need(it, op, "the indices", err));
    cu_take_geom g;
    if (p->kind == TK_SCATTER) { /* the gradient of a scatter is a gather */
        MXK_SDK_CHECK(tk_geometry(p, &dy->shape, &it->shape, &g, err));
        return tk_run(ctx, &g, it, dy, dx, CU_TAKE_GATHER, req == MXK_REQ_ADD, err);
    }
    MXK_SDK_CHECK(tk_geometry(p, &dx->shape, &it->shape, &g, err));
    MXK_SDK_CHECK(tk_clear(ctx, dx, req, err));
    return tk_run(ctx, &g, it, dx, dy, CU_TAKE_SCATTER, 1, err);
}

/** parse_param of take: axis, mode (raise is declined: its check needs the host). */
static mxk_status take_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_tk_param p = {.kind = TK_TAKE};
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "axis", &p.axis, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "mode", "raise|wrap|clip", &p.mode, err));
    if (p.mode == MXK_IDX_RAISE)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED,
                             "take: mode 'raise' is not supported on the GPU (its range check "
                             "would synchronise the device); use clip or wrap");
    return cu_param_dup(&p, sizeof p, out, err);
}

/** parse_param of pick: axis (None is refused by the operator), mode wrap|clip. */
static mxk_status pick_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_tk_param p = {.kind = TK_PICK};
    int32_t has_axis = 0, mode = 0;
    MXK_SDK_CHECK(mxk_idx_attr_opt_int(attrs, "axis", &has_axis, &p.axis, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "mode", "wrap|clip", &mode, err));
    if (!has_axis)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "axis=None is not supported by pick yet. Must specify an axis.");
    p.mode = mode == 0 ? MXK_IDX_WRAP : MXK_IDX_CLIP;
    return cu_param_dup(&p, sizeof p, out, err);
}

/** parse_param of gather_nd (no attributes). */
static mxk_status gather_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_tk_param p = {.kind = TK_GATHER};
    return cu_param_dup(&p, sizeof p, out, err);
}

/** parse_param of scatter_nd (the shape comes with the output). */
static mxk_status scatter_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_tk_param p = {.kind = TK_SCATTER};
    return cu_param_dup(&p, sizeof p, out, err);
}

/** parse_param of Embedding: take along axis 0 of the weight, clip mode. */
static mxk_status emb_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_tk_param p = {.kind = TK_EMBEDDING, .axis = 0, .mode = MXK_IDX_CLIP};
    return cu_param_dup(&p, sizeof p, out, err);
}

/** Parsed attributes of one_hot: depth, the on and off bit patterns, output dtype. */
typedef struct cu_oh_param {
    int64_t depth;
    int32_t dtype;
    uint64_t on_bits, off_bits;
} cu_oh_param;

/** parse_param of one_hot: on_value and off_value converted to the output dtype. */
static mxk_status oh_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_oh_param p = {0};
    double on, off;
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "depth", 1, INT64_MAX, &p.depth, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "on_value", &on, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "off_value", &off, err));
    /* the operator's dtype names in mxk_dtype order: the index is the code */
    MXK_SDK_CHECK(mxk_sdk_attr_enum(
        attrs, "dtype", "float32|float64|float16|uint8|int32|int8|int64", &p.dtype, err));
    if (mxk_fill_pattern(p.dtype, on, &p.on_bits) == 0 ||
        mxk_fill_pattern(p.dtype, off, &p.off_bits) == 0)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "one_hot: unsupported dtype");
    return cu_param_dup(&p, sizeof p, out, err);
}

/** one_hot forward: rows of off with on at the index (none for indices outside [0, depth)). */
static mxk_status oh_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_oh_param *p = param;
    if (args->num_in != 1 || args->num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "one_hot: expected 1 argument");
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *x = args->in_data[0], *y = args->out_data[0];
    MXK_SDK_CHECK(tk_need_f32(x, "one_hot", "the indices", err));
    MXK_SDK_CHECK(cu_need(y, "one_hot", "the output", err));
    if (y->dtype != p->dtype)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "one_hot: output: expected %s, got %s",
                             mxk_sdk_dtype_name(p->dtype), mxk_sdk_dtype_name(y->dtype));
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(cu_launch_one_hot(x->data, y->data, y->dtype, (uint64_t)cu_shape_size(&x->shape),
                               p->depth, p->on_bits, p->off_bits, args->req[0] == MXK_REQ_ADD,
                               cu_stream(ctx)),
             "one_hot", err);
    return MXK_OK;
}

/** one_hot backward: no gradient flows (zeros for the indices). */
static mxk_status oh_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    if (args->num_in != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "one_hot: expected 1 argument");
    return cu_zero_grad(ctx, args->in_grad[0], args->req[0], err);
}

/** parse_param of where (no attributes). */
static mxk_status wh_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    int32_t none = 0;
    return cu_param_dup(&none, sizeof none, out, err);
}

/**
 * out (=|+=) cond ? a : b elementwise over `like`'s elements (NULL a or b: 0),
 * the condition either of like's shape or one value per row.
 */
static mxk_status wh_select(const mxk_op_ctx *ctx, const mxk_tensor *cond, const float *a,
                            const float *b, const mxk_tensor *out, mxk_op_req req,
                            mxk_error_sink *err) {
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(tk_need_f32(out, "where", "the output", err));
    uint64_t n = (uint64_t)cu_shape_size(&out->shape), nc = (uint64_t)cu_shape_size(&cond->shape);
    if (nc == 0 || n % nc != 0)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "where: condition does not match the data");
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(cu_launch_where(cond->data, cond->dtype, n / nc, a, b, out->data, n,
                             req == MXK_REQ_ADD, cu_stream(ctx)),
             "where", err);
    return MXK_OK;
}

/** where forward: out (=|+=) condition ? x : y. */
static mxk_status wh_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    if (args->num_in != 3 || args->num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "where: expected 3 arguments");
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(cu_need(args->in_data[0], "where", "the condition", err));
    MXK_SDK_CHECK(tk_need_f32(args->in_data[1], "where", "x", err));
    MXK_SDK_CHECK(tk_need_f32(args->in_data[2], "where", "y", err));
    return wh_select(ctx, args->in_data[0], args->in_data[1]->data, args->in_data[2]->data,
                     args->out_data[0], args->req[0], err);
}

/** where backward: dx = cond ? dy : 0, dy_y = cond ? 0 : dy, zeros for the condition. */
static mxk_status wh_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    if (args->num_in != 3 || args->num_out_grad != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "where: expected 3 arguments");
    MXK_SDK_CHECK(cu_zero_grad(ctx, args->in_grad[0], args->req[0], err));
    if (args->req[1] == MXK_REQ_NULL && args->req[2] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dy = args->out_grad[0], *c = args->in_data[0];
    MXK_SDK_CHECK(tk_need_f32(dy, "where", "the output gradient", err));
    MXK_SDK_CHECK(cu_need(c, "where", "the condition", err));
    MXK_SDK_CHECK(wh_select(ctx, c, dy->data, NULL, args->in_grad[1], args->req[1], err));
    return wh_select(ctx, c, NULL, dy->data, args->in_grad[2], args->req[2], err);
}

mxk_status cu_register_index(mxk_registrar *reg, mxk_error_sink *err) {
    static const struct {
        const char *op;
        mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *);
        cu_forward_fn forward;
        cu_backward_fn backward;
    } ops[] = {
        {"take", take_parse, tk_forward, tk_backward},
        {"pick", pick_parse, tk_forward, tk_backward},
        {"gather_nd", gather_parse, tk_forward, tk_backward},
        {"scatter_nd", scatter_parse, tk_forward, tk_backward},
        {"one_hot", oh_parse, oh_forward, oh_backward},
        {"where", wh_parse, wh_forward, wh_backward},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        MXK_SDK_CHECK(
            cu_register_simple(reg, ops[i].op, ops[i].parse, ops[i].forward, ops[i].backward, err));
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.op_name = "Embedding";
    k.flags = MXK_KERNEL_SUPPORTS_ADDTO;
    k.parse_param = emb_parse;
    k.free_param = cu_param_free;
    k.supports = cu_supports_float32; /* as cpu-blas's Embedding */
    k.forward = tk_forward;
    k.backward = tk_backward;
    return cu_register_kernel(reg, &k, err);
}
