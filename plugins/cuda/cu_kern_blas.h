/*
 * cuda plugin: the C declarations of the launchers of cu_kern_blas.cu, the
 * elementwise steps around cuBLAS of FullyConnected (cu_ops_fc.c): the bias
 * broadcast of the forward and the bias gradient's column sums (MXNet
 * src/operator/nn/fully_connected-inl.h, AddBias and AddBiasGrad on gpu). Launchers queue on
 * `stream` and return the launch status; pointers are device memory, sizes element counts.
 */
#ifndef MXK_CU_KERN_BLAS_H
#define MXK_CU_KERN_BLAS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * y[r, c] = b[c] (add = 0) or y[r, c] += b[c] (add = 1) for the rows x cols
 * row-major matrix y.
 */
cudaError_t cu_launch_bias_rows(float *y, const float *b, int64_t rows, int64_t cols, int add,
                                cudaStream_t stream);

/**
 * out[c] = sum over r of x[r, c] (add = 0), or out[c] += that sum (add = 1), for
 * the rows x cols row-major matrix x; each column sums in row order in float,
 * starting from out[c] with add = 1 (cpu-blas's order).
 */
cudaError_t cu_launch_column_sum(float *out, const float *x, int64_t rows, int64_t cols, int add,
                                 cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* MXK_CU_KERN_BLAS_H */
