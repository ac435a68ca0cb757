/*
 * cuda plugin: launchers of the indexing kernels (cu_kern_index.cu) for
 * cu_ops_index.c and cu_ops_sequence.c: take / pick / Embedding / gather_nd /
 * scatter_nd block moves, one_hot, where and the Sequence* mappings. Index tensors may be of any
 * mxk dtype (values converted to double, as cpu-blas's cbt_load reads them); data is float32.
 */
#ifndef MXK_CU_KERN_INDEX_H
#define MXK_CU_KERN_INDEX_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "mxk_sdk.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How a block move addresses the big tensor (mxk_index.h). */
typedef enum cu_take_kind {
    CU_TAKE = 0,      /**< take / Embedding: blocks of `inner` elements, index b % n */
    CU_PICK = 1,      /**< pick: single elements, index b */
    CU_GATHER_ND = 2, /**< gather_nd / scatter_nd: blocks of `len` elements per index tuple */
} cu_take_kind;

/** What a block move does with the small tensor's elements. */
typedef enum cu_take_dir {
    CU_TAKE_GATHER = 0,  /**< small (=|+=) big (add selects +=) */
    CU_TAKE_SCATTER = 1, /**< big += small (atomicAdd), or big = small when add is 0 */
} cu_take_dir;

/**
 * The geometry of a block move (passed by value): `nblocks` blocks of `len`
 * elements of the small tensor, block b at b * len; take / pick see the big
 * tensor as (outer, size, inner) around the axis with n indices; gather_nd
 * addresses its first m dims (dims, element strides) with index tuples stored
 * component-major (component j of tuple b at j * nblocks + b).
 */
typedef struct cu_take_geom {
    int32_t kind; /**< cu_take_kind */
    int32_t mode; /**< mxk_idx_mode (take / pick) */
    uint64_t nblocks, len, n, size, inner;
    int32_t m;
    int64_t dims[MXK_MAX_NDIM], strides[MXK_MAX_NDIM];
} cu_take_geom;

/**
 * Moves the blocks (see cu_take_dir) between the float32 tensors big and small,
 * addressing them by the indices at idx (dtype idx_dtype). Out-of-range indices
 * never address memory outside big (clipped or wrapped).
 */
cudaError_t cu_launch_take(const cu_take_geom *g, const void *idx, int32_t idx_dtype, float *big,
                           float *small, int32_t dir, int add, cudaStream_t stream);

/**
 * one_hot: out[i * depth + j] (=|+=) (trunc(x[i]) == j ? on : off) for i < n,
 * elements of out_dtype whose bit patterns are on_bits / off_bits (mxk_fill_value.h).
 */
cudaError_t cu_launch_one_hot(const float *x, void *out, int32_t out_dtype, uint64_t n,
                              int64_t depth, uint64_t on_bits, uint64_t off_bits, int add,
                              cudaStream_t stream);

/**
 * where: out[i] (=|+=) (cond[i / per] != 0 ? a[i] : b[i]) for i < n, with a NULL a
 * or b reading 0 (the gradients of x and y). cond of dtype cond_dtype.
 */
cudaError_t cu_launch_where(const void *cond, int32_t cond_dtype, uint64_t per, const float *a,
                            const float *b, float *out, uint64_t n, int add, cudaStream_t stream);

/** The Sequence* mappings (cu_seq_call.kind). */
typedef enum cu_seq_kind {
    CU_SEQ_MASK = 0,      /**< dst = src, steps at or past the length = fill */
    CU_SEQ_REVERSE = 1,   /**< dst step s = src step length - 1 - s (s < length), else s */
    CU_SEQ_LAST = 2,      /**< dst (batch, rest) = src step length - 1 */
    CU_SEQ_LAST_GRAD = 3, /**< dst step length - 1 += src (batch, rest); dst cleared before */
} cu_seq_kind;

/**
 * One Sequence* mapping over data of (seq, batch, rest) (axis 0) or (batch, seq,
 * rest) (axis 1), float32; lengths of dtype len_dtype (NULL: full), clamped to
 * [1 (last) or 0, seq] (mxk_idx_seq_len).
 */
typedef struct cu_seq_call {
    int32_t kind; /**< cu_seq_kind */
    int32_t axis;
    int64_t seq, batch, rest;
    const void *len;
    int32_t len_dtype;
    float fill;
    int add; /**< 1: dst += (ADD requests) */
} cu_seq_call;

/** Runs a Sequence* mapping from src to dst (MASK may run in place). */
cudaError_t cu_launch_sequence(const cu_seq_call *c, const float *src, float *dst,
                               cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* MXK_CU_KERN_INDEX_H */
