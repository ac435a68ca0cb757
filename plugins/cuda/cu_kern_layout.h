/*
 * cuda plugin: the strided views of the data-movement operators (transpose,
 * slice, Concat, broadcast, tile, repeat, reverse, ...) and the launchers of
 * their CUDA C kernels (cu_kern_layout.cu), callable from the C11 host sources.
 *
 * A view walks an iteration space of up to CU_VIEW_MAX_DIMS dims in row-major
 * order and addresses, for each index, one source and one destination element
 * through per-dim element strides (0: repeated, negative: reversed) from a base
 * offset. MXNet computes these operators with per-element index arithmetic in
 * the same way (src/operator/tensor/matrix_op-inl.h transpose, slice, tile,
 * repeat, reverse kernels; broadcast_reduce_op.h broadcast kernel): an output dim
 * of n = a * b elements that reads index j % b (tile) or j / b (repeat) is two
 * view dims (a, b) with source strides (0, s) or (s, 0). The backward of such a
 * gather is a sum view: its leading `ndim` dims address the input gradient once
 * each and the trailing `nred` dims are summed (the output positions that read
 * one input element), in a fixed order per element, without atomics.
 */
#ifndef MXK_CU_KERN_LAYOUT_H
#define MXK_CU_KERN_LAYOUT_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "mxk_sdk.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most dims of a view: every operator dim split in two (tile, repeat). */
#define CU_VIEW_MAX_DIMS 16

/**
 * A strided view (see the file comment). Copy views use dims [0, ndim); sum views
 * iterate [0, ndim) and sum [ndim, ndim + nred) (their dst strides unused).
 * Passed to the kernels by value.
 */
typedef struct cu_view {
    int32_t ndim;
    int32_t nred;
    int64_t dims[CU_VIEW_MAX_DIMS];
    int64_t src[CU_VIEW_MAX_DIMS]; /**< source element strides */
    int64_t dst[CU_VIEW_MAX_DIMS]; /**< destination element strides */
    int64_t src_off;               /**< source element offset of index 0 */
    int64_t dst_off;               /**< destination element offset of index 0 */
} cu_view;

/**
 * dst[map] = src[map] (add = 0) or dst[map] += src[map] (add = 1) over the view,
 * for elements of mxk dtype `dtype` (any; WRITE copies bits). Destination
 * positions must be distinct; src and dst must not overlap unless the view maps
 * every position onto itself. cudaErrorInvalidValue for an unknown dtype.
 */
cudaError_t cu_launch_view_copy(const cu_view *v, const void *src, void *dst, int32_t dtype,
                                int add, cudaStream_t stream);

/**
 * Float32 sum view: for each index of the leading v->ndim dims, the sum of src
 * over the trailing v->nred dims, stored into dst (add = 0) or added (add = 1).
 * Long sums (at least 256 elements) over few outputs run one block per output,
 * the others one thread per output; both add in a fixed order (deterministic).
 */
cudaError_t cu_launch_view_sum(const cu_view *v, const float *src, float *dst, int add,
                               cudaStream_t stream);

/**
 * Pad's geometry (passed by value): output dim d of out_dims[d] elements reads
 * input index mxk_idx_pad_pos(j, before[d], in_dims[d], mode) (mxk_index.h).
 */
typedef struct cu_pad_geom {
    int32_t ndim;
    int32_t mode; /**< mxk_pad_mode */
    int64_t out_dims[MXK_MAX_NDIM], in_dims[MXK_MAX_NDIM], before[MXK_MAX_NDIM];
} cu_pad_geom;

/**
 * Pad forward: out (=|+=) the padded input (constant positions: the element whose
 * bit pattern is fill_bits), elements of mxk dtype `dtype`.
 */
cudaError_t cu_launch_pad(const cu_pad_geom *g, const void *in, void *out, int32_t dtype,
                          uint64_t fill_bits, int add, cudaStream_t stream);

/** Pad backward: dx[source of e] += dy[e] for every output position e reading the input. */
cudaError_t cu_launch_pad_grad(const cu_pad_geom *g, const float *dy, float *dx,
                               cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* MXK_CU_KERN_LAYOUT_H */
