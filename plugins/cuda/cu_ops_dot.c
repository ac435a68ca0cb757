/*
 * cuda plugin: dot and batch_dot on cuBLAS.
 *
 * Semantics are the operators' (cpu-blas op_dot.c; upstream MXNet
 * src/operator/tensor/dot-inl.h, DotForward_ / DotBackward_ and
 * BatchDotForward_ on Tensor<gpu>). dot views lhs as a matrix A: without
 * transpose_a (prod(lhs[:-1]), lhs[-1]), with it (lhs[0], prod(lhs[1:]))
 * transposed; rhs as B: without transpose_b (rhs[0], prod(rhs[1:])), with it
 * (prod(rhs[:-1]), rhs[-1]) transposed; out = op(A) op(B) is one GEMM (the 1-D
 * . 1-D inner product is its 1 x 1 case). batch_dot multiplies the trailing
 * matrices of each of the leading batch indices with one strided-batched GEMM.
 * Backward (reads out_grad, lhs, rhs), with dC the output gradient:
 *   A stored m x k (no ta): dA = dC op(B)^T;   stored k x m (ta): dA = op(B) dC^T
 *   B stored k x n (no tb): dB = op(A)^T dC;   stored n x k (tb): dB = dC^T op(A)
 * Every request is a GEMM beta (0 for WRITE and INPLACE, 1 for ADD).
 * Accepted: float32 arguments; forward_stype None or default (the operator
 * itself refuses the sparse ones).
 */
#include "cu_blas_util.h"

#include <string.h>

/** Parsed attributes of dot and batch_dot (MXNet 1.9.1 DotParam). */
typedef struct cu_dot_param {
    int32_t ta;    /**< transpose_a */
    int32_t tb;    /**< transpose_b */
    int32_t batch; /**< 1: batch_dot */
} cu_dot_param;

/**
 * The per-product matrix view: op(A) is m x k, op(B) is kb x n (kb must equal
 * k), `batch` products (1 for dot).
 */
typedef struct cu_dot_view {
    int64_t m, k, kb, n, batch;
} cu_dot_view;

/** Parses transpose_a, transpose_b and forward_stype (dense only). */
static mxk_status dot_parse_common(const mxk_attrs *attrs, int batch, void **out,
                                   mxk_error_sink *err) {
    cu_dot_param p = {.batch = batch};
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "transpose_a", &p.ta, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "transpose_b", &p.tb, err));
    const char *stype = mxk_sdk_attr_raw(attrs, "forward_stype");
    if (stype != NULL && strcmp(stype, "None") != 0 && strcmp(stype, "default") != 0)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED,
                             "cuda dot: only dense outputs (forward_stype None, default), got "
                             "'%s'",
                             stype);
    return cu_param_dup(&p, sizeof p, out, err);
}

/** parse_param of dot. */
static mxk_status dot_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    return dot_parse_common(attrs, 0, out, err);
}

/** parse_param of batch_dot. */
static mxk_status bd_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    return dot_parse_common(attrs, 1, out, err);
}

/**
 * The view of (lhs, rhs) shapes, 0 when the operator would reject them (dot:
 * both of at least one axis; batch_dot: both of the same ndim >= 3 with equal
 * batch axes; contracted sizes equal).
 */
static int dot_view_of(const cu_dot_param *p, const mxk_shape *l, const mxk_shape *r,
                       cu_dot_view *v) {
    if (l->ndim < 1 || r->ndim < 1)
        return 0;
    /* batch_dot: the trailing two axes of each, after `lead` batch axes */
    int32_t lead = 0;
    v->batch = 1;
    if (p->batch) {
        if (l->ndim < 3 || l->ndim != r->ndim)
            return 0;
        lead = l->ndim - 2;
        for (int32_t i = 0; i < lead; i++)
            if (l->dims[i] != r->dims[i])
                return 0;
        v->batch = (int64_t)mxk_sdk_shape_prod(l, 0, lead);
    }
    if (p->ta) {
        v->k = l->dims[lead];
        v->m = (int64_t)mxk_sdk_shape_prod(l, lead + 1, l->ndim);
    } else {
        v->m = (int64_t)mxk_sdk_shape_prod(l, lead, l->ndim - 1);
        v->k = l->dims[l->ndim - 1];
    }
    if (p->tb) {
        v->n = (int64_t)mxk_sdk_shape_prod(r, lead, r->ndim - 1);
        v->kb = r->dims[r->ndim - 1];
    } else {
        v->kb = r->dims[lead];
        v->n = (int64_t)mxk_sdk_shape_prod(r, lead + 1, r->ndim);
    }
    return v->k == v->kb;
}

/** Accepts float32 lhs and rhs whose shapes the operator accepts. */
static int32_t dot_supports(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                            uint32_t num_in) {
    cu_dot_view v;
    return num_in == 2 && cu_all_f32(in_types, 2) &&
           dot_view_of(param, &in_shapes[0], &in_shapes[1], &v);
}

/** The name of the operator of p, for messages. */
static const char *dot_name(const cu_dot_param *p) {
    return p->batch ? "batch_dot" : "dot";
}

/**
 * The view of a call's lhs and rhs (present), checking them and the tensor
 * `out` (the output or its gradient, `what`) of batch * m * n elements.
 * Errors: MXK_ERR_SHAPE, cu_check_tensor's.
 */
static mxk_status dot_check(const cu_dot_param *p, const mxk_tensor *lhs, const mxk_tensor *rhs,
                            const mxk_tensor *out, const char *what, cu_dot_view *v,
                            mxk_error_sink *err) {
    if (lhs == NULL || rhs == NULL || lhs->data == NULL || rhs->data == NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "cuda %s: lhs or rhs is missing",
                             dot_name(p));
    if (!dot_view_of(p, &lhs->shape, &rhs->shape, v)) {
        char a[MXK_SDK_SHAPE_STR_MAX], b[MXK_SDK_SHAPE_STR_MAX];
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "cuda %s: shapes lhs %s and rhs %s do not multiply (transpose_a=%d, "
                             "transpose_b=%d)",
                             dot_name(p), mxk_sdk_shape_format(&lhs->shape, a, sizeof a),
                             mxk_sdk_shape_format(&rhs->shape, b, sizeof b), (int)p->ta,
                             (int)p->tb);
    }
    return cu_check_tensor(out, v->batch * v->m * v->n, dot_name(p), what, err);
}

/**
 * A GEMM of the view's batch: sizes m x k times k x n, operands a (row stride
 * lda, batch stride sa), b (ldb, sb), c (ldc = n, sc = m n), beta of `req`.
 */
static cu_gemm_args dot_gemm(const cu_dot_view *v, int ta, int tb, int64_t m, int64_t n, int64_t k,
                             const float *a, int64_t lda, int64_t sa, const float *b, int64_t ldb,
                             int64_t sb, float *c, mxk_op_req req) {
    cu_gemm_args g = {.ta = ta, .tb = tb, .m = m, .n = n, .k = k};
    g.a = a, g.lda = lda, g.stride_a = sa;
    g.b = b, g.ldb = ldb, g.stride_b = sb;
    g.c = c, g.ldc = n, g.stride_c = m * n;
    g.alpha = 1.0f, g.beta = mxk_sdk_req_beta(req);
    g.batch = v->batch;
    return g;
}

/** out (=|+=) op(A) op(B), batch by batch in one call. */
static mxk_status dot_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_dot_param *p = param;
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    cu_dot_view v;
    MXK_SDK_CHECK(
        dot_check(p, args->in_data[0], args->in_data[1], args->out_data[0], "the output", &v, err));
    if (v.batch * v.m * v.n == 0)
        return MXK_OK;
    cublasHandle_t h;
    MXK_SDK_CHECK(cu_blas_get(ctx, &h, err));
    int64_t lda = p->ta ? v.m : v.k, ldb = p->tb ? v.k : v.n;
    cu_gemm_args g =
        dot_gemm(&v, p->ta, p->tb, v.m, v.n, v.k, args->in_data[0]->data, lda, v.m * v.k,
                 args->in_data[1]->data, ldb, v.k * v.n, args->out_data[0]->data, args->req[0]);
    return cu_gemm(h, &g, p->batch ? "batch_dot GEMM" : "dot GEMM", err);
}

/** dA and dB by their requests (the chain rule of the file comment). */
static mxk_status dot_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_dot_param *p = param;
    const mxk_op_req *req = args->req;
    if (req[0] == MXK_REQ_NULL && req[1] == MXK_REQ_NULL)
        return MXK_OK;
    cu_dot_view v;
    MXK_SDK_CHECK(dot_check(p, args->in_data[0], args->in_data[1], args->out_grad[0],
                            "the output gradient", &v, err));
    const int64_t mk = v.m * v.k, kn = v.k * v.n, mn = v.m * v.n;
    if (req[0] != MXK_REQ_NULL)
        MXK_SDK_CHECK(
            cu_check_tensor(args->in_grad[0], v.batch * mk, dot_name(p), "the lhs gradient", err));
    if (req[1] != MXK_REQ_NULL)
        MXK_SDK_CHECK(
            cu_check_tensor(args->in_grad[1], v.batch * kn, dot_name(p), "the rhs gradient", err));
    if (v.batch * mk == 0 && v.batch * kn == 0)
        return MXK_OK;
    cublasHandle_t h;
    MXK_SDK_CHECK(cu_blas_get(ctx, &h, err));
    const float *dc = args->out_grad[0]->data;
    const float *a = args->in_data[0]->data, *b = args->in_data[1]->data;
    int64_t lda = p->ta ? v.m : v.k, ldb = p->tb ? v.k : v.n;
    if (req[0] != MXK_REQ_NULL && v.batch * mk != 0) {
        float *da = args->in_grad[0]->data;
        cu_gemm_args g =
            !p->ta /* (m x n) . op(B)^T (n x k) */
                ? dot_gemm(&v, 0, !p->tb, v.m, v.k, v.n, dc, v.n, mn, b, ldb, kn, da, req[0])
                /* op(B) (k x n) . dC^T (n x m) */
                : dot_gemm(&v, p->tb, 1, v.k, v.m, v.n, b, ldb, kn, dc, v.n, mn, da, req[0]);
        MXK_SDK_CHECK(cu_gemm(h, &g, "dot lhs gradient GEMM", err));
    }
    if (req[1] != MXK_REQ_NULL && v.batch * kn != 0) {
        float *db = args->in_grad[1]->data;
        cu_gemm_args g =
            !p->tb /* op(A)^T (k x m) . dC (m x n) */
                ? dot_gemm(&v, !p->ta, 0, v.k, v.n, v.m, a, lda, mk, dc, v.n, mn, db, req[1])
                /* dC^T (n x m) . op(A) (m x k) */
                : dot_gemm(&v, 1, p->ta, v.n, v.k, v.m, dc, v.n, mn, a, lda, mk, db, req[1]);
        MXK_SDK_CHECK(cu_gemm(h, &g, "dot rhs gradient GEMM", err));
    }
    return MXK_OK;
}

/** Registers the kernel of dot or batch_dot (`batch`); both handle ADD themselves. */
static mxk_status dot_register(mxk_registrar *reg, int batch, mxk_error_sink *err) {
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.op_name = batch ? "batch_dot" : "dot";
    k.flags = MXK_KERNEL_SUPPORTS_ADDTO;
    k.parse_param = batch ? bd_parse : dot_parse;
    k.free_param = cu_param_free;
    k.supports = dot_supports;
    k.forward = dot_forward;
    k.backward = dot_backward;
    k.crosscheck_rtol = 1e-4;
    k.crosscheck_atol = 1e-4;
    return cu_register_kernel(reg, &k, err);
}

/** Registers dot and batch_dot. */
mxk_status cu_register_dot(mxk_registrar *reg, mxk_error_sink *err) {
    MXK_SDK_CHECK(dot_register(reg, 0, err));
    return dot_register(reg, 1, err);
}
