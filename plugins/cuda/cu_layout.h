/*
 * cuda plugin: host helpers of the data-movement kernels (cu_ops_layout.c,
 * cu_ops_concat.c, cu_ops_broadcast.c): building strided views (cu_kern_layout.h)
 * from shapes, running them by write request, and the checks and registration
 * those kernels share (parameter objects: cu_param_dup of cu_blas_util.h).
 * Semantics of the views: MXNet src/operator/tensor/matrix_op-inl.h and
 * broadcast_reduce_op.h.
 */
#ifndef MXK_CU_LAYOUT_H
#define MXK_CU_LAYOUT_H

#include "cu_blas_util.h"
#include "cu_kern_layout.h"
#include "cuda_plugin.h"

/** An empty view (0 dims: one element at offset 0 of each side). */
void cu_view_init(cu_view *v);

/**
 * Appends an iteration dim of n elements with source and destination strides;
 * dims of 1 element are skipped (they move no offset).
 */
void cu_view_push(cu_view *v, int64_t n, int64_t src, int64_t dst);

/** Row-major element strides of a shape into st[0 .. s->ndim). */
void cu_view_strides(const mxk_shape *s, int64_t *st);

/**
 * The backward of a gather view `f` (source: the input, destination: the
 * output): a sum view whose kept dims are f's dims of nonzero source stride
 * (addressing the input gradient) and whose summed dims are f's dims of source
 * stride 0 (broadcast, tile and repeat positions), reading the output gradient
 * at f's destination offsets. Valid when f reads every input element through one
 * combination of kept indices (every operator here).
 */
void cu_view_grad(const cu_view *f, cu_view *b);

/**
 * dst (=|+=) src over the view by `req` (nothing for NULL; INPLACE as WRITE, the
 * views moving each element once), elements of dst's dtype. Errors:
 * MXK_ERR_TYPE when src's dtype differs, cu_check's.
 */
mxk_status cu_view_copy(const mxk_op_ctx *ctx, const cu_view *v, const mxk_tensor *src,
                        const mxk_tensor *dst, mxk_op_req req, mxk_error_sink *err);

/**
 * Float32 sum view (cu_view_grad) from the output gradient dy into the input
 * gradient dx by `req`; with `zero`, a WRITE first clears dx (views that do not
 * cover it: slice). Errors: MXK_ERR_TYPE for other dtypes, cu_check's.
 */
mxk_status cu_view_sum(const mxk_op_ctx *ctx, const cu_view *v, const mxk_tensor *dy,
                       const mxk_tensor *dx, mxk_op_req req, int zero, mxk_error_sink *err);

/**
 * Checks that a tensor the kernel reads or writes is present: MXK_ERR_INVALID_ARGUMENT
 * "OP: WHAT is missing" otherwise.
 */
mxk_status cu_need(const mxk_tensor *t, const char *op, const char *what, mxk_error_sink *err);

/** Accepts every configuration (the data-movement kernels take any dtype). */
int32_t cu_supports_any(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                        uint32_t num_in);

/** Forward and backward callbacks of a kernel definition. */
typedef mxk_status (*cu_forward_fn)(const mxk_op_ctx *, const void *, void *,
                                    const mxk_forward_args *, mxk_error_sink *);
typedef mxk_status (*cu_backward_fn)(const mxk_op_ctx *, const void *, void *,
                                     const mxk_backward_args *, mxk_error_sink *);

/**
 * Registers a kernel for `op` with parse_param `parse` (cu_param_free frees it),
 * cu_supports_any, the given forward and backward and MXK_KERNEL_SUPPORTS_ADDTO.
 * Several operators may share one parser: `parse` gets no operator name.
 */
mxk_status cu_register_simple(mxk_registrar *reg, const char *op,
                              mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *),
                              cu_forward_fn forward, cu_backward_fn backward, mxk_error_sink *err);

typedef struct cu_gather_param cu_gather_param;

/**
 * Builds the gather view of an operator for input shape `in` and output shape
 * `out` (source: the input, destination: the output, contiguous). Errors:
 * MXK_ERR_SHAPE for shapes the operator cannot relate.
 */
typedef mxk_status (*cu_view_fn)(const cu_gather_param *p, const mxk_shape *in,
                                 const mxk_shape *out, cu_view *f, mxk_error_sink *err);

/**
 * The start of the parameter object of every gather operator (its first member),
 * what cu_gather_forward and cu_gather_backward need.
 */
struct cu_gather_param {
    const char *op;   /**< operator name, for messages */
    cu_view_fn build; /**< the operator's view */
    uint32_t num_in;  /**< arguments; those after the first get a zero gradient */
    int32_t partial;  /**< 1: the output reads part of the input (slice, Crop) */
};

/**
 * Forward of the gather operators: output (=|+=) the view of argument 0, any
 * dtype. `param` starts with a cu_gather_param.
 */
mxk_status cu_gather_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err);

/**
 * Backward of the gather operators (float32; reads out_grad only): the input
 * gradient (=|+=) the sum view (cu_view_grad) of the output gradient, zeroed
 * first for WRITE when the view is partial; the other arguments get zeros.
 */
mxk_status cu_gather_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err);

#endif /* MXK_CU_LAYOUT_H */
