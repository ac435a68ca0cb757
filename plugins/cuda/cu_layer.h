/*
 * cuda plugin: host-side helpers of the layer kernels (cu_ops_act.c,
 * cu_ops_softmax.c, cu_ops_pool.c, cu_ops_bn.c, cu_ops_lrn.c): float32 access and
 * registration (their parameter objects are cuda_plugin.h's cu_param_dup, their
 * tensor checks cu_blas_util.h's cu_check_tensor).
 */
#ifndef MXK_CU_LAYER_H
#define MXK_CU_LAYER_H

#include "cuda_plugin.h"

/** The float32 elements of a tensor. */
static inline float *cu_f32(const mxk_tensor *t) {
    return (float *)t->data;
}

/**
 * Registers a kernel of op_name that parses its attributes with `parse` (its
 * object freed by cu_param_free), accepts what `supports` accepts (NULL:
 * cu_supports_float32) and handles every write request itself
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
