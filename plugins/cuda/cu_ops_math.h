/*
 * cuda plugin: host helpers shared by the math family's kernels (cu_ops_elemwise.c,
 * cu_ops_reduce.c, cu_ops_copy.c): write requests, tensor checks, zero gradients,
 * broadcast strides and reduction plans (the index descriptions of cu_kern_math.h).
 *
 * Semantics: MXNet src/operator/tensor/elemwise_binary_broadcast_op.h
 * (BinaryBroadcastShapeCompact) and broadcast_reduce_op.h (ReduceAxesComputeImpl).
 */
#ifndef MXK_CU_OPS_MATH_H
#define MXK_CU_OPS_MATH_H

#include "cu_kern_math.h"
#include "cuda_plugin.h"

/** 1 when the request adds into the output (MXK_REQ_ADD), 0 for WRITE and INPLACE. */
static inline int cu_req_add(mxk_op_req req) {
    return req == MXK_REQ_ADD;
}

/**
 * Checks that `t` is present and float32 and has `count` elements (count < 0:
 * any); MXK_ERR_INVALID_ARGUMENT / MXK_ERR_TYPE / MXK_ERR_SHAPE naming `what`.
 */
mxk_status cu_check_f32(const mxk_tensor *t, int64_t count, const char *what, mxk_error_sink *err);

/**
 * Strides of an operand of shape s in the row-major space of shape o (right
 * aligned; 0 where s has dim 1 or no dim). MXK_ERR_SHAPE naming `what` when a dim
 * of s is neither 1 nor o's.
 */
mxk_status cu_bcast_strides(const mxk_shape *s, const mxk_shape *o, int64_t *stride,
                            const char *what, mxk_error_sink *err);

/** Row-major strides of shape s. */
void cu_dense_strides(const mxk_shape *s, int64_t *stride);

/**
 * Splits the space of shape `space`, with operand strides `stride`, into the
 * kept axes (red[d] 0, the output's row-major order) and the reduced axes of a
 * reduction plan.
 */
void cu_reduce_plan_of(const mxk_shape *space, const uint8_t *red,
                       const int64_t stride[CU_MAX_OPERANDS][MXK_MAX_NDIM], cu_reduce_plan *plan);

/** Registers `kdef` with MXK_KERNEL_SUPPORTS_ADDTO (the math kernels add themselves). */
mxk_status cu_register_math_kernel(mxk_registrar *reg, mxk_op_kernel_def *kdef,
                                   mxk_error_sink *err);

/** Frees a parameter object of the math family (malloc'ed). */
void cu_math_param_free(void *param);

/** Allocates a copy of the `size` bytes at p as a parameter object; MXK_ERR_OUT_OF_MEMORY. */
mxk_status cu_math_param_new(const void *p, size_t size, void **out, mxk_error_sink *err);

#endif /* MXK_CU_OPS_MATH_H */
