/*
 * cuda plugin: host-side helpers of the layer kernels (cu_ops_act.c,
 * cu_ops_softmax.c, cu_ops_pool.c, cu_ops_bn.c, cu_ops_lrn.c): their parameter
 * objects, tensor checks and registration. Semantics of the write requests:
 * MXNet's OpReqType (include/mxnet/op_attr_types.h).
 */
#ifndef MXK_CU_LAYER_H
#define MXK_CU_LAYER_H

#include "cuda_plugin.h"

/** Allocates a copy of the `size` bytes at p as a kernel's parameter object. */
mxk_status cu_layer_param_dup(const void *p, size_t size, void **out, mxk_error_sink *err);

/** Frees a parameter object of cu_layer_param_dup. */
void cu_layer_param_free(void *p);

/**
 * Checks that tensor t (named `what`, e.g. "argument 'data'") is present (its
 * memory may be NULL when n is 0), of dtype `dtype` and holds n elements.
 * Errors: MXK_ERR_INVALID_ARGUMENT, MXK_ERR_TYPE, MXK_ERR_SHAPE.
 */
mxk_status cu_layer_check_dtype(const mxk_tensor *t, uint64_t n, int32_t dtype, const char *what,
                                mxk_error_sink *err);

/** cu_layer_check_dtype for float32. */
static inline mxk_status cu_layer_check(const mxk_tensor *t, uint64_t n, const char *what,
                                        mxk_error_sink *err) {
    return cu_layer_check_dtype(t, n, MXK_FLOAT32, what, err);
}

/** The float32 elements of a tensor. */
static inline float *cu_f32(const mxk_tensor *t) {
    return (float *)t->data;
}

/** 1 when request `req` accumulates into the output (MXK_REQ_ADD). */
static inline int cu_add(mxk_op_req req) {
    return req == MXK_REQ_ADD;
}

/** Accepts float32 inputs (every one of them; empty ones too). */
int32_t cu_layer_supports_f32(const void *param, const mxk_shape *in_shapes,
                              const int32_t *in_types, uint32_t num_in);

/**
 * Registers a kernel of op_name that parses its attributes with `parse` (its
 * object freed by cu_layer_param_free), accepts what `supports` accepts (NULL:
 * cu_layer_supports_f32) and handles every write request itself
 * (MXK_KERNEL_SUPPORTS_ADDTO).
 */
mxk_status cu_layer_register(mxk_registrar *reg, const char *op_name,
                             mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *),
                             int32_t (*supports)(const void *, const mxk_shape *, const int32_t *,
                                                 uint32_t),
                             mxk_status (*forward)(const mxk_op_ctx *, const void *, void *,
                                                   const mxk_forward_args *, mxk_error_sink *),
                             mxk_status (*backward)(const mxk_op_ctx *, const void *, void *,
                                                    const mxk_backward_args *, mxk_error_sink *),
                             mxk_error_sink *err);

#endif /* MXK_CU_LAYER_H */
