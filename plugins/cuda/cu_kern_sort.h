/*
 * cuda plugin: launchers of the ordering kernels (cu_kern_sort.cu) for
 * cu_ops_sort.c: argmax / argmin along an axis, and topk / sort / argsort of rows
 * of at most CU_SORT_MAX elements (a bitonic sort per row in shared memory).
 * Data is float32; index outputs take any mxk dtype.
 */
#ifndef MXK_CU_KERN_SORT_H
#define MXK_CU_KERN_SORT_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Longest row topk / sort / argsort sort on the GPU (its items fill 32 KiB of shared memory). */
#define CU_SORT_MAX 4096

/**
 * y[o * inner + i] (=|+=) the position of the first maximum (minimize = 0) or
 * minimum of x's row (o, ., i) of n elements, as a float (mxk_idx_arg_best).
 */
cudaError_t cu_launch_arg_best(const float *x, float *y, uint64_t outer, uint64_t n, uint64_t inner,
                               int32_t minimize, int add, cudaStream_t stream);

/** What a sort writes (topk's ret_typ, in MXNet's order). */
typedef enum cu_sort_ret {
    CU_SORT_VALUE = 0,   /**< out0 the k values (float32), out1 (may be NULL) their positions */
    CU_SORT_INDICES = 1, /**< out0 the k positions */
    CU_SORT_MASK = 2,    /**< out0 of the data's shape: 1 at the k selected elements, else 0 */
    CU_SORT_BOTH = 3,    /**< as value; out1 visible */
} cu_sort_ret;

/** One sort call: rows (o, ., i) of n (<= CU_SORT_MAX) elements, k selected. */
typedef struct cu_sort_call {
    uint64_t outer, n, inner, k;
    int32_t ascend;
    int32_t ret;            /**< cu_sort_ret */
    void *out0, *out1;      /**< out1 NULL: not written */
    int32_t dtype0, dtype1; /**< mxk dtypes of out0, out1 */
    int32_t add0, add1;     /**< 1: += (ADD requests) */
} cu_sort_call;

/** Sorts every row of x and writes the outputs (mxk_idx_sort_before's order). */
cudaError_t cu_launch_sort(const float *x, const cu_sort_call *c, cudaStream_t stream);

/**
 * topk / sort backward: dx[o, idx[o, j, i], i] += dy[o, j, i] for j < k (dx of
 * rows of n, dy and idx of rows of k; positions within a row are distinct, so no
 * atomics); idx of mxk dtype idx_dtype, positions outside [0, n) skipped.
 */
cudaError_t cu_launch_sort_grad(const float *dy, const void *idx, int32_t idx_dtype, float *dx,
                                uint64_t outer, uint64_t n, uint64_t inner, uint64_t k,
                                cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* MXK_CU_KERN_SORT_H */
