/*
 * cuda plugin: helpers of the dense and convolution kernel families (see
 * cu_blas_util.h): parameter copies, tensor checks, the row-major GEMM.
 * Upstream: 3rdparty/mshadow/mshadow/dot_engine-inl.h (BLASEngine<gpu, float>::gemm and
 * batched_gemm), which MXNet's src/operator/nn/fully_connected-inl.h and
 * src/operator/tensor/dot-inl.h reach through mshadow::dot.
 */
#include "cu_blas_util.h"

#include <stdlib.h>
#include <string.h>

mxk_status cu_check_tensor(const mxk_tensor *t, int64_t n, const char *op, const char *what,
                           mxk_error_sink *err) {
    if (t == NULL || (t->data == NULL && n > 0))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "cuda %s: %s is missing", op, what);
    if (cu_shape_size(&t->shape) != n)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "cuda %s: %s has %lld elements, expected %lld", op,
                             what, (long long)cu_shape_size(&t->shape), (long long)n);
    return MXK_OK;
}

mxk_status cu_blas_get(const mxk_op_ctx *ctx, cublasHandle_t *h, mxk_error_sink *err) {
    *h = cu_blas(ctx, err);
    return *h != NULL ? MXK_OK : MXK_ERR_BACKEND;
}

mxk_status cu_dnn_get(const mxk_op_ctx *ctx, cudnnHandle_t *h, mxk_error_sink *err) {
    *h = cu_dnn(ctx, err);
    return *h != NULL ? MXK_OK : MXK_ERR_BACKEND;
}

/** A leading dimension cuBLAS accepts: at least 1. */
static int64_t gemm_ld(int64_t ld) {
    return ld < 1 ? 1 : ld;
}

mxk_status cu_gemm(cublasHandle_t h, const cu_gemm_args *g, const char *what, mxk_error_sink *err) {
    /* column-major C^T (n x m) = op(B)^T (n x k) op(A)^T (k x m) */
    cublasOperation_t ob = g->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t oa = g->ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    int64_t lda = gemm_ld(g->lda), ldb = gemm_ld(g->ldb), ldc = gemm_ld(g->ldc);
    if (g->batch == 1) {
        CU_CHECK_BLAS(cublasSgemm_64(h, ob, oa, g->n, g->m, g->k, &g->alpha, g->b, ldb, g->a, lda,
                                     &g->beta, g->c, ldc),
                      what, err);
        return MXK_OK;
    }
    CU_CHECK_BLAS(cublasSgemmStridedBatched_64(h, ob, oa, g->n, g->m, g->k, &g->alpha, g->b, ldb,
                                               g->stride_b, g->a, lda, g->stride_a, &g->beta, g->c,
                                               ldc, g->stride_c, g->batch),
                  what, err);
    return MXK_OK;
}
