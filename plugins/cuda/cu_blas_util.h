/*
 * cuda plugin: helpers of the dense and convolution kernel families (cu_ops_fc.c,
 * cu_ops_dot.c, cu_ops_conv*.c): parameter copies, tensor checks and the
 * row-major GEMM on cuBLAS (cu_blas_util.c).
 *
 * mxk's tensors are row-major; cuBLAS is column-major. A row-major m x n
 * product C = op(A) op(B) is the column-major n x m product C^T = op(B)^T
 * op(A)^T, so cu_gemm calls cuBLAS with the operands (and their sizes)
 * swapped, as MXNet's mshadow::dot does for its row-major Tensor<gpu>
 * (3rdparty/mshadow/mshadow/dot_engine-inl.h, used by
 * src/operator/nn/fully_connected-inl.h and src/operator/tensor/dot-inl.h).
 */
#ifndef MXK_CU_BLAS_UTIL_H
#define MXK_CU_BLAS_UTIL_H

#include "cuda_plugin.h"

/**
 * Checks that tensor t (named `what`, e.g. "the weight") of operator `op` is
 * present with `n` elements. MXK_ERR_INVALID_ARGUMENT "cuda OP: WHAT is missing",
 * MXK_ERR_SHAPE "cuda OP: WHAT has K elements, expected N".
 */
mxk_status cu_check_tensor(const mxk_tensor *t, int64_t n, const char *op, const char *what,
                           mxk_error_sink *err);

/**
 * The call's cuBLAS handle (cu_blas) as a status: MXK_ERR_BACKEND, with err set
 * by cu_blas, when there is none.
 */
mxk_status cu_blas_get(const mxk_op_ctx *ctx, cublasHandle_t *h, mxk_error_sink *err);

/** The call's cuDNN handle (cu_dnn) as a status, as cu_blas_get. */
mxk_status cu_dnn_get(const mxk_op_ctx *ctx, cudnnHandle_t *h, mxk_error_sink *err);

/** One row-major GEMM (or a batch of them) C = alpha op(A) op(B) + beta C. */
typedef struct cu_gemm_args {
    int ta, tb;         /**< op(A) = A^T, op(B) = B^T */
    int64_t m, n, k;    /**< op(A) is m x k, op(B) is k x n, C is m x n */
    const float *a, *b; /**< A stored m x k (k x m with ta), B k x n (n x k with tb) */
    float *c;
    int64_t lda, ldb, ldc; /**< row strides (elements) of the stored matrices */
    float alpha, beta;
    int64_t batch;                        /**< products (1: one GEMM) */
    int64_t stride_a, stride_b, stride_c; /**< elements between consecutive batches */
} cu_gemm_args;

/**
 * Queues g on the handle's stream (cublasSgemm_64, or cublasSgemmStridedBatched_64
 * for a batch). Leading dimensions below 1 (empty matrices) are raised to 1, as
 * cuBLAS requires. Errors: cu_check_blas's, naming `what`.
 */
mxk_status cu_gemm(cublasHandle_t h, const cu_gemm_args *g, const char *what, mxk_error_sink *err);

#endif /* MXK_CU_BLAS_UTIL_H */
