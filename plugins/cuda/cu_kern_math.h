/*
 * cuda plugin: the C declarations of the math family's CUDA C kernels
 * (cu_kern_elemwise.cu, cu_kern_reduce.cu, cu_kern_convert.cu) and the index
 * descriptions they take by value. Every launcher queues its work on `stream`
 * and returns cu_launched(); `add` 1 adds into the output (MXK_REQ_ADD), 0
 * overwrites it (WRITE, INPLACE). Element-wise kernels read element i of every
 * input before writing element i of the output, so an output may alias an input
 * (in-place). Sizes are element counts; pointers are device memory.
 *
 * Semantics: MXNet src/operator/tensor/elemwise_binary_op.h,
 * elemwise_binary_broadcast_op.h, elemwise_unary_op.h, broadcast_reduce_op.h and
 * broadcast_reduce-inl.cuh, with the element functions of plugins/common/mxk_math_*.h.
 */
#ifndef MXK_CU_KERN_MATH_H
#define MXK_CU_KERN_MATH_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "mxk_abi_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most operands of an index description. */
#define CU_MAX_OPERANDS 3

/**
 * A row-major index space of `ndim` dims and the element strides of up to
 * CU_MAX_OPERANDS operands in it (0 on the axes an operand is broadcast along).
 */
typedef struct cu_index {
    int32_t ndim;
    int64_t dim[MXK_MAX_NDIM];
    int64_t stride[CU_MAX_OPERANDS][MXK_MAX_NDIM];
} cu_index;

/**
 * An axis reduction: output element o (row-major over the `kept` space) reduces
 * the elements of the `red` space, operand k's element at offset
 * kept.stride[k].o + red.stride[k].r. nout, nred: the sizes of both spaces.
 */
typedef struct cu_reduce_plan {
    cu_index kept, red;
    uint64_t nout, nred;
} cu_reduce_plan;

/** What a reduction reduces: x, or dy times a binary function's derivative. */
enum cu_reduce_map {
    CU_MAP_X,       /**< operand 0 */
    CU_MAP_BIN_GRAD /**< operand 0 (dy) * mxk_bin_df(code, which, operand 1, operand 2) */
};

/**
 * out[i] (=|+=) mxk_bin_f(code, l[.], r[.]) over the n elements of `ix` (its
 * operands 0, 1: l, r); ix NULL: same-shape operands, offsets i.
 */
cudaError_t cu_launch_binary(int32_t code, const cu_index *ix, const float *l, const float *r,
                             float *out, uint64_t n, int add, cudaStream_t stream);

/**
 * Both gradients of a same-shape binary function: gl[i] (=|+=) dy[i] df/da,
 * gr[i] (=|+=) dy[i] df/db at (l[i], r[i]) (mxk_bin_df); l, r may be NULL for
 * add and sub (read as 0), gl or gr NULL when not wanted.
 */
cudaError_t cu_launch_binary_grad(int32_t code, const float *dy, const float *l, const float *r,
                                  float *gl, int add_l, float *gr, int add_r, uint64_t n,
                                  cudaStream_t stream);

/** y[i] (=|+=) mxk_scalar_f(code, swap, x[i], s). */
cudaError_t cu_launch_scalar(int32_t code, int32_t swap, float s, const float *x, float *y,
                             uint64_t n, int add, cudaStream_t stream);

/**
 * dx[i] (=|+=) dy[i] mxk_scalar_df(code, swap, x[i], y[i], s); x, y may be NULL
 * when the function does not read them (read as 0).
 */
cudaError_t cu_launch_scalar_grad(int32_t code, int32_t swap, float s, const float *dy,
                                  const float *x, const float *y, float *dx, uint64_t n, int add,
                                  cudaStream_t stream);

/** y[i] (=|+=) mxk_un_f(code, x[i], p0, p1). */
cudaError_t cu_launch_unary(int32_t code, float p0, float p1, const float *x, float *y, uint64_t n,
                            int add, cudaStream_t stream);

/** dx[i] (=|+=) mxk_un_grad(code, dy[i], r[i], p0, p1) (r: x, y or dy, as mxk_un_dep says). */
cudaError_t cu_launch_unary_grad(int32_t code, float p0, float p1, const float *dy, const float *r,
                                 float *dx, uint64_t n, int add, cudaStream_t stream);

/**
 * out[o] (=|+=) the reduction `kind` (mxk_red_kind; norm's `ord`) of the values
 * `map` gives for the elements reduced into o (mxk_math_reduce.h, double
 * accumulation). src[k] is operand k (NULL: read as 0); code, which: the binary
 * function and gradient side of CU_MAP_BIN_GRAD.
 */
cudaError_t cu_launch_reduce(const cu_reduce_plan *plan, int32_t map, int32_t kind, int32_t ord,
                             int32_t code, int32_t which, const float *const src[CU_MAX_OPERANDS],
                             float *out, int add, cudaStream_t stream);

/**
 * Backward of a reduction over the n elements of the input space `ix` (operand
 * 0: the output's strides, 0 on reduced axes): dx[i] (=|+=) dy[o] scale
 * mxk_red_dfactor(kind, ord, x[i], y[o]); x and y NULL for sum and mean (factor 1).
 */
cudaError_t cu_launch_reduce_grad(const cu_index *ix, int32_t kind, int32_t ord, float scale,
                                  const float *dy, const float *x, const float *y, float *dx,
                                  uint64_t n, int add, cudaStream_t stream);

/* --- cu_kern_convert.cu: every dtype (mxk_dtype codes), stores as cpu-blas's cbt_store ---- */

/** Most inputs of one add_n launch (cpu-blas's limit on an operator's inputs). */
#define CU_ADD_N_MAX 256

/**
 * y[i] (=|+=) x[i] converted from dtype st to dt as Cast (mxk_math_cast.h):
 * float targets through double, integer targets truncated and wrapped, ADD in
 * the target type. cudaErrorInvalidValue for an unknown dtype.
 */
cudaError_t cu_launch_cast(const void *x, int32_t st, void *y, int32_t dt, uint64_t n, int add,
                           cudaStream_t stream);

/** y[i] += x[i] in dtype (float32 in float, others through double, integers saturating). */
cudaError_t cu_launch_copy_add(const void *x, void *y, int32_t dtype, uint64_t n,
                               cudaStream_t stream);

/**
 * y[i] (=|+=) x[0][i] + ... + x[num-1][i] in input order (float32 in float,
 * others in double); num <= CU_ADD_N_MAX. y may be any of the inputs.
 */
cudaError_t cu_launch_add_n(const void *const *x, uint32_t num, void *y, int32_t dtype, uint64_t n,
                            int add, cudaStream_t stream);

/** y[i] (=|+=) value in y's dtype (float32: (float)value). */
cudaError_t cu_launch_fill_value(void *y, int32_t dtype, double value, uint64_t n, int add,
                                 cudaStream_t stream);

/**
 * y[i] (=|+=) start + (i / repeat) step in y's dtype: float32 in float, float64
 * and float16 in double, integer dtypes from start and step truncated first.
 */
cudaError_t cu_launch_arange(void *y, int32_t dtype, double start, double step, uint64_t repeat,
                             uint64_t n, int add, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* MXK_CU_KERN_MATH_H */
