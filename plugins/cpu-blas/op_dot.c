/*
 * cpu-blas plugin: dot and batch_dot.
 *
 * Semantics: MXNet src/operator/tensor/dot-inl.h (DotShape, DotForward_,
 * DotBackward_) and dot.cc. Arguments lhs, rhs;
 * attributes transpose_a, transpose_b (default False).
 *   1-D . 1-D (no transposes): inner product, output shape (1,).
 *   otherwise lhs is viewed as a matrix A: without transpose_a (prod(lhs[:-1]),
 *   lhs[-1]); with it (lhs[0], prod(lhs[1:])) transposed. rhs likewise as B:
 *   without transpose_b (rhs[0], prod(rhs[1:])); with it (prod(rhs[:-1]),
 *   rhs[-1]) transposed. The contracted sizes must agree; the output shape is
 *   lhs's kept dims followed by rhs's kept dims (2-D: the usual (m, n)).
 * out = op(A) op(B) with one sgemm (beta 1 for ADD). Backward (reads out_grad,
 * lhs, rhs): dA and dB by sgemm with the transposes of the chain rule.
 *
 * batch_dot (dot-inl.h BatchDotShape, BatchDotForward_):
 * lhs and rhs of the same ndim N >= 3 with equal leading N-2 (batch) dims; each
 * batch's trailing matrices multiply as dot's 2-D case (transpose_a/b apply to
 * them); output (batch..., m, n). Backward as dot, batch by batch.
 *
 * Aliases: _sparse_dot (dot), _npx_batch_dot (batch_dot). forward_stype (None,
 * default, row_sparse, csr) is accepted for MXNet's JSON;
 * only dense outputs (None, default) are computed.
 */
#include <cblas.h>

#include "op_index.h"

/** Parsed attributes of dot and batch_dot. */
typedef struct dot_param {
    int32_t ta; /**< transpose_a */
    int32_t tb; /**< transpose_b */
} dot_param;

/** forward_stype values (DotParam). */
#define DOT_STYPES "None|default|row_sparse|csr"

static const char *const dot_args[] = {"lhs", "rhs", NULL};
static const char *const dot_outs[] = {"output", NULL};

/** Attribute schema (MXNet 1.9.1 DotParam). */
static const mxk_attr_def dot_attrs[] = {
    MXK_SDK_ATTR("transpose_a", MXK_ATTR_BOOL, 0, "False", NULL,
                 "If true then transpose the first input before dot."),
    MXK_SDK_ATTR("transpose_b", MXK_ATTR_BOOL, 0, "False", NULL,
                 "If true then transpose the second input before dot."),
    MXK_SDK_ATTR("forward_stype", MXK_ATTR_ENUM, 0, "None", DOT_STYPES,
                 "The desired storage type of the forward output given by user."),
};

/** Parses transpose_a, transpose_b. */
static mxk_status dot_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    dot_param p;
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "transpose_a", &p.ta, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "transpose_b", &p.tb, err));
    int32_t stype = 0;
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "forward_stype", DOT_STYPES, &stype, err));
    if (stype > 1)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED,
                             "attribute 'forward_stype': only dense outputs (None, default) are "
                             "supported, got '%s'",
                             mxk_sdk_attr_raw(attrs, "forward_stype"));
    return cbt_param_new(&p, sizeof p, out, err);
}

/**
 * The matrix view of a product: op(A) is m x k, op(B) is k x n; A is stored
 * with leading dimension lda (row-major), B with ldb. `kb` is rhs's contracted
 * size (must equal k). vec: the 1-D . 1-D case.
 */
typedef struct dot_view {
    uint64_t m, k, kb, n;
    int vec;
} dot_view;

/** Computes the view of (lhs, rhs) shapes (both ndim >= 1); products of unknown dims are 0. */
static dot_view dot_view_of(const dot_param *p, const mxk_shape *l, const mxk_shape *r) {
    dot_view v;
    v.vec = l->ndim == 1 && r->ndim == 1;
    if (p->ta) {
        v.k = (uint64_t)l->dims[0];
        v.m = mxk_sdk_shape_prod(l, 1, l->ndim);
    } else {
        v.m = mxk_sdk_shape_prod(l, 0, l->ndim - 1);
        v.k = (uint64_t)l->dims[l->ndim - 1];
    }
    if (p->tb) {
        v.n = mxk_sdk_shape_prod(r, 0, r->ndim - 1);
        v.kb = (uint64_t)r->dims[r->ndim - 1];
    } else {
        v.kb = (uint64_t)r->dims[0];
        v.n = mxk_sdk_shape_prod(r, 1, r->ndim);
    }
    return v;
}

/** Output shape from the inputs (MXNet DotShape); the contracted sizes must agree. */
static mxk_status dot_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                  uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                  mxk_error_sink *err) {
    const dot_param *p = param;
    if (num_in != 2 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "dot expects 2 arguments");
    const mxk_shape *l = &in[0], *r = &in[1];
    if (l->ndim == 0 || r->ndim == 0)
        return MXK_OK;
    char a[MXK_SDK_SHAPE_STR_MAX], b[MXK_SDK_SHAPE_STR_MAX];
    mxk_shape o = mxk_sdk_shape_unknown();
    if (l->ndim == 1 && r->ndim == 1) {
        if (p->ta || p->tb)
            return mxk_sdk_error(
                err, MXK_ERR_SHAPE, "dot: cannot transpose vectors (lhs %s, rhs %s)",
                mxk_sdk_shape_format(l, a, sizeof a), mxk_sdk_shape_format(r, b, sizeof b));
        if (l->dims[0] != 0 && r->dims[0] != 0 && l->dims[0] != r->dims[0])
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "dot shape error: lhs %s X rhs %s",
                                 mxk_sdk_shape_format(l, a, sizeof a),
                                 mxk_sdk_shape_format(r, b, sizeof b));
        o = mxk_sdk_shape1(1);
    } else {
        dot_view v = dot_view_of(p, l, r);
        if (v.k != 0 && v.kb != 0 && v.k != v.kb)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "dot shape error: lhs %s X rhs %s (transpose_a=%d, "
                                 "transpose_b=%d): contracted sizes %llu and %llu differ",
                                 mxk_sdk_shape_format(l, a, sizeof a),
                                 mxk_sdk_shape_format(r, b, sizeof b), (int)p->ta, (int)p->tb,
                                 (unsigned long long)v.k, (unsigned long long)v.kb);
        /* kept dims: lhs without its contracted axis, then rhs without its contracted axis */
        int32_t nd = 0;
        if (l->ndim > 1)
            for (int32_t i = p->ta ? 1 : 0; i < (p->ta ? l->ndim : l->ndim - 1); i++)
                o.dims[nd++] = l->dims[i];
        if (r->ndim > 1)
            for (int32_t i = p->tb ? 0 : 1; i < (p->tb ? r->ndim - 1 : r->ndim); i++) {
                if (nd >= MXK_MAX_NDIM)
                    return mxk_sdk_error(err, MXK_ERR_SHAPE, "dot: output has more than %d dims",
                                         MXK_MAX_NDIM);
                o.dims[nd++] = r->dims[i];
            }
        if (nd == 0) { /* 1-D . 2-D or 2-D . 1-D degenerate to a vector (MXNet: (1,)) */
            o.dims[nd++] = 1;
        }
        o.ndim = nd;
    }
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/** All float32. */
static mxk_status dot_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                 uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in, num_in, dot_args, out, num_out, dot_outs,
                                      aux, num_aux, err);
}

/** Backward reads out_grad, lhs and rhs. */
static void dot_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                    uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                    uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    need_in_data[0] = 1;
    need_in_data[1] = 1;
}

/** BLAS sizes of a view (MXK_ERR_UNSUPPORTED beyond int). */
static mxk_status dot_blas_dims(const dot_view *v, int *m, int *k, int *n, mxk_error_sink *err) {
    MXK_SDK_CHECK(cb_blas_dim(v->m, "dot rows", m, err));
    MXK_SDK_CHECK(cb_blas_dim(v->k, "dot contracted size", k, err));
    return cb_blas_dim(v->n, "dot columns", n, err);
}

/** out (=|+=) op(A) op(B); the 1-D case with sdot. */
static mxk_status dot_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const dot_param *p = param;
    MXK_SDK_CHECK(cb_check_forward(args, 2, 1, dot_args, dot_outs, dot_infer_shape, param, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const float *a = cb_f32(args->in_data[0]), *b = cb_f32(args->in_data[1]);
    float *o = cb_f32(args->out_data[0]);
    dot_view v = dot_view_of(p, &args->in_data[0]->shape, &args->in_data[1]->shape);
    int m, k, n;
    MXK_SDK_CHECK(dot_blas_dims(&v, &m, &k, &n, err));
    if (v.vec) {
        float d = cblas_sdot(k, a, 1, b, 1);
        mxk_sdk_assign_f32(o, d, req);
        return MXK_OK;
    }
    int lda = p->ta ? m : k, ldb = p->tb ? k : n;
    cb_sgemm(ctx, p->ta ? CblasTrans : CblasNoTrans, p->tb ? CblasTrans : CblasNoTrans, m, n, k,
             1.0f, a, lda, b, ldb, mxk_sdk_req_beta(req), o, n);
    return MXK_OK;
}

/**
 * The gradients of one product C = op(A) op(B) (m x k times k x n) by their
 * requests (da / db unused when NULL). With dC (m x n):
 *   A stored m x k (no ta): dA = dC op(B)^T;   stored k x m (ta): dA = op(B) dC^T
 *   B stored k x n (no tb): dB = op(A)^T dC;   stored n x k (tb): dB = dC^T op(A)
 */
static void dot_grad(const mxk_op_ctx *ctx, const dot_param *p, int m, int k, int n,
                     const float *dc, const float *a, const float *b, float *da, float *db,
                     const mxk_op_req *req) {
    int lda = p->ta ? m : k, ldb = p->tb ? k : n;
    if (req[0] != MXK_REQ_NULL) {
        float beta = mxk_sdk_req_beta(req[0]);
        if (!p->ta) /* (m x n) . op(B)^T (n x k) */
            cb_sgemm(ctx, CblasNoTrans, p->tb ? CblasNoTrans : CblasTrans, m, k, n, 1.0f, dc, n, b,
                     ldb, beta, da, k);
        else /* op(B) (k x n) . dC^T (n x m) */
            cb_sgemm(ctx, p->tb ? CblasTrans : CblasNoTrans, CblasTrans, k, m, n, 1.0f, b, ldb, dc,
                     n, beta, da, m);
    }
    if (req[1] != MXK_REQ_NULL) {
        float beta = mxk_sdk_req_beta(req[1]);
        if (!p->tb) /* op(A)^T (k x m) . dC (m x n) */
            cb_sgemm(ctx, p->ta ? CblasNoTrans : CblasTrans, CblasNoTrans, k, n, m, 1.0f, a, lda,
                     dc, n, beta, db, n);
        else /* dC^T (n x m) . op(A) (m x k) */
            cb_sgemm(ctx, CblasTrans, p->ta ? CblasTrans : CblasNoTrans, n, k, m, 1.0f, dc, n, a,
                     lda, beta, db, k);
    }
}

/** The data of in_grad[i], or NULL when that gradient is not requested. */
static float *dot_grad_ptr(const mxk_backward_args *args, int i) {
    return args->req[i] != MXK_REQ_NULL ? cb_f32(args->in_grad[i]) : NULL;
}

/**
 * Common start of dot's and batch_dot's backward: counts, *needed = 0 when neither
 * gradient is requested (nothing else checked); otherwise out_grad, lhs and rhs
 * present, out_grad of the shape `infer` gives for (lhs, rhs), requested gradients
 * of their arguments' sizes.
 */
static mxk_status dot_begin_backward(const mxk_backward_args *args, cb_infer_shape_fn infer,
                                     const void *param, int *needed, mxk_error_sink *err) {
    MXK_SDK_CHECK(cb_check_backward_counts(args, 2, 1, 1, err));
    const mxk_op_req *req = args->req;
    *needed = req[0] != MXK_REQ_NULL || req[1] != MXK_REQ_NULL;
    if (!*needed)
        return MXK_OK;
    MXK_SDK_CHECK(cb_check_tensor(args->out_grad[0], "gradient of 'output'", err));
    MXK_SDK_CHECK(cb_check_tensor(args->in_data[0], "argument 'lhs'", err));
    MXK_SDK_CHECK(cb_check_tensor(args->in_data[1], "argument 'rhs'", err));
    const mxk_shape *ls = &args->in_data[0]->shape, *rs = &args->in_data[1]->shape;
    mxk_shape shapes[2] = {*ls, *rs}, o = mxk_sdk_shape_unknown();
    MXK_SDK_CHECK(infer(param, shapes, 2, &o, 1, NULL, 0, err));
    if (!mxk_sdk_shape_equal(&o, &args->out_grad[0]->shape))
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "gradient of 'output': inconsistent shape");
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req[0], ls, "lhs", err));
    return cb_check_grad(args->in_grad[1], req[1], rs, "rhs", err);
}

/** dA and dB by their requests (dot_grad; the 1-D case by scaling). */
static mxk_status dot_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    const dot_param *p = param;
    int needed;
    MXK_SDK_CHECK(dot_begin_backward(args, dot_infer_shape, param, &needed, err));
    if (!needed)
        return MXK_OK;
    const mxk_op_req *req = args->req;
    dot_view v = dot_view_of(p, &args->in_data[0]->shape, &args->in_data[1]->shape);
    int m, k, n;
    MXK_SDK_CHECK(dot_blas_dims(&v, &m, &k, &n, err));
    const float *dc = cb_f32(args->out_grad[0]);
    const float *a = cb_f32(args->in_data[0]), *b = cb_f32(args->in_data[1]);
    if (v.vec) {
        float g = dc[0];
        if (req[0] != MXK_REQ_NULL)
            mxk_sdk_scale_f32(cb_f32(args->in_grad[0]), b, g, (size_t)k, req[0]);
        if (req[1] != MXK_REQ_NULL)
            mxk_sdk_scale_f32(cb_f32(args->in_grad[1]), a, g, (size_t)k, req[1]);
        return MXK_OK;
    }
    dot_grad(ctx, p, m, k, n, dc, a, b, dot_grad_ptr(args, 0), dot_grad_ptr(args, 1), req);
    return MXK_OK;
}

/** batch_dot: the per-batch view of (lhs, rhs) shapes (ndim >= 3, equal). */
static dot_view bd_view_of(const dot_param *p, const mxk_shape *l, const mxk_shape *r,
                           uint64_t *batch) {
    int32_t nd = l->ndim;
    mxk_shape lm = mxk_sdk_shape2(l->dims[nd - 2], l->dims[nd - 1]);
    mxk_shape rm = mxk_sdk_shape2(r->dims[nd - 2], r->dims[nd - 1]);
    *batch = mxk_sdk_shape_prod(l, 0, nd - 2);
    return dot_view_of(p, &lm, &rm);
}

/** Output shape of batch_dot (BatchDotShape). */
static mxk_status bd_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const dot_param *p = param;
    const mxk_shape *l = &in[0], *r = &in[1];
    if (l->ndim == 0 || r->ndim == 0)
        return MXK_OK;
    char a[MXK_SDK_SHAPE_STR_MAX], b[MXK_SDK_SHAPE_STR_MAX];
    const char *ls = mxk_sdk_shape_format(l, a, sizeof a),
               *rs = mxk_sdk_shape_format(r, b, sizeof b);
    if (l->ndim < 3 || l->ndim != r->ndim)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "batch_dot currently only support N-D*N-D array (N >= 3): %s v.s. %s",
                             ls, rs);
    int32_t nd = l->ndim;
    mxk_shape o = *l;
    for (int32_t i = 0; i < nd - 2; i++) {
        if (l->dims[i] != 0 && r->dims[i] != 0 && l->dims[i] != r->dims[i])
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "batch_dot shape error (the leading batch dimensions must be "
                                 "equal): %s X %s trans_a=%d trans_b=%d",
                                 ls, rs, (int)p->ta, (int)p->tb);
        if (o.dims[i] == 0)
            o.dims[i] = r->dims[i];
    }
    uint64_t batch;
    dot_view v = bd_view_of(p, l, r, &batch);
    if (v.k != 0 && v.kb != 0 && v.k != v.kb)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "batch_dot shape error (shape mismatch): %s X %s trans_a=%d "
                             "trans_b=%d",
                             ls, rs, (int)p->ta, (int)p->tb);
    o.dims[nd - 2] = (int64_t)v.m;
    o.dims[nd - 1] = (int64_t)v.n;
    return mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err);
}

/** batch_dot's work: batches of one call, run in ranges over the kernel's threads. */
typedef struct bd_task {
    const mxk_op_ctx *ctx;
    const dot_param *p;
    dot_view v;
    int m, k, n;
    const float *a, *b, *c; /**< lhs, rhs; out_grad (backward) */
    float *o, *da, *db;     /**< output (forward); gradients (backward, NULL: not wanted) */
    const mxk_op_req *req;  /**< forward: req[0] of the output; backward: of lhs, rhs */
    int backward;
} bd_task;

/** Batches [begin, end) of a batch_dot call: the product, or its gradients (dot_grad). */
static void bd_range(void *arg, int64_t begin, int64_t end) {
    const bd_task *t = arg;
    const dot_param *p = t->p;
    uint64_t mk = t->v.m * t->v.k, kn = t->v.k * t->v.n, mn = t->v.m * t->v.n;
    int lda = p->ta ? t->m : t->k, ldb = p->tb ? t->k : t->n;
    for (uint64_t i = (uint64_t)begin; i < (uint64_t)end; i++) {
        if (t->backward)
            dot_grad(t->ctx, p, t->m, t->k, t->n, t->c + i * mn, t->a + i * mk, t->b + i * kn,
                     t->da ? t->da + i * mk : NULL, t->db ? t->db + i * kn : NULL, t->req);
        else
            cb_sgemm(t->ctx, p->ta ? CblasTrans : CblasNoTrans, p->tb ? CblasTrans : CblasNoTrans,
                     t->m, t->n, t->k, 1.0f, t->a + i * mk, lda, t->b + i * kn, ldb,
                     mxk_sdk_req_beta(t->req[0]), t->o + i * mn, t->n);
    }
}

/**
 * Runs a batch_dot task over `batch` batches, split over the kernel's threads in
 * ranges of at least 2^19 multiply-adds (cb_sgemm's own threshold; each product
 * inside a range runs on that range's thread).
 */
static void bd_run(const bd_task *t, uint64_t batch) {
    double work = (double)t->v.m * (double)t->v.k * (double)t->v.n, min = (double)(1 << 19);
    int64_t grain = work >= min ? 1 : (int64_t)(min / work);
    cb_parallel_for(t->ctx, (int64_t)batch, grain, bd_range, (void *)t);
}

/** out[b] (=|+=) op(A[b]) op(B[b]) for every batch b. */
static mxk_status bd_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const dot_param *p = param;
    MXK_SDK_CHECK(cb_check_forward(args, 2, 1, dot_args, dot_outs, bd_infer_shape, param, err));
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    uint64_t batch;
    bd_task t = {.ctx = ctx, .p = p, .req = args->req};
    t.v = bd_view_of(p, &args->in_data[0]->shape, &args->in_data[1]->shape, &batch);
    MXK_SDK_CHECK(dot_blas_dims(&t.v, &t.m, &t.k, &t.n, err));
    t.a = cb_f32(args->in_data[0]);
    t.b = cb_f32(args->in_data[1]);
    t.o = cb_f32(args->out_data[0]);
    bd_run(&t, batch);
    return MXK_OK;
}

/** dA[b] and dB[b] by their requests, batch by batch (dot_grad). */
static mxk_status bd_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const dot_param *p = param;
    int needed;
    MXK_SDK_CHECK(dot_begin_backward(args, bd_infer_shape, param, &needed, err));
    if (!needed)
        return MXK_OK;
    uint64_t batch;
    bd_task t = {.ctx = ctx, .p = p, .req = args->req, .backward = 1};
    t.v = bd_view_of(p, &args->in_data[0]->shape, &args->in_data[1]->shape, &batch);
    MXK_SDK_CHECK(dot_blas_dims(&t.v, &t.m, &t.k, &t.n, err));
    t.c = cb_f32(args->out_grad[0]);
    t.a = cb_f32(args->in_data[0]);
    t.b = cb_f32(args->in_data[1]);
    t.da = dot_grad_ptr(args, 0);
    t.db = dot_grad_ptr(args, 1);
    bd_run(&t, batch);
    return MXK_OK;
}

/** Registers dot or batch_dot (`batch`) and its CPU kernel. */
static mxk_status dot_register(mxk_registrar *reg, int batch, mxk_error_sink *err) {
    static const char *const bd_aliases[] = {"_npx_batch_dot", NULL};
    static const char *const dot_aliases[] = {"_sparse_dot", NULL};
    mxk_op_def def;
    mxk_sdk_op_def_init(&def);
    def.name = batch ? "batch_dot" : "dot";
    def.description = batch ? "Batchwise dot product."
                            : "Dot product of two arrays (matrix product; inner product of "
                              "vectors).";
    def.attrs = dot_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(dot_attrs);
    def.arguments = dot_args;
    def.outputs = dot_outs;
    def.parse_param = dot_parse;
    def.free_param = cbt_param_free;
    def.infer_shape = batch ? bd_infer_shape : dot_infer_shape;
    def.infer_type = dot_infer_type;
    def.backward_dependency = dot_backward_dependency;
    def.aliases = batch ? bd_aliases : dot_aliases;
    mxk_op_kernel_def k;
    cb_kernel_init(&k, def.name, batch ? bd_forward : dot_forward,
                   batch ? bd_backward : dot_backward);
    return cb_register(reg, &def, &k, err);
}

/** Registers dot and its CPU kernel. */
mxk_status cb_register_dot(mxk_registrar *reg, mxk_error_sink *err) {
    return dot_register(reg, 0, err);
}

/** Registers batch_dot and its CPU kernel (the index group, op_index.h). */
mxk_status cb_register_batch_dot(mxk_registrar *reg, mxk_error_sink *err) {
    return dot_register(reg, 1, err);
}
