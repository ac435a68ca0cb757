/*
 * cuda plugin: host-side helpers of the layer kernels (cu_layer.h).
 */
#include "cu_layer.h"

mxk_status cu_layer_register(mxk_registrar *reg, const char *op_name,
                             mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *),
                             int32_t (*supports)(const void *, const mxk_shape *, const int32_t *,
                                                 uint32_t),
                             mxk_status (*forward)(const mxk_op_ctx *, const void *, void *,
                                                   const mxk_forward_args *, mxk_error_sink *),
                             mxk_status (*backward)(const mxk_op_ctx *, const void *, void *,
                                                    const mxk_backward_args *, mxk_error_sink *),
                             mxk_error_sink *err) {
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.op_name = op_name;
    k.flags = MXK_KERNEL_SUPPORTS_ADDTO;
    k.parse_param = parse;
    k.free_param = cu_param_free;
    k.supports = supports != NULL ? supports : cu_supports_float32;
    k.forward = forward;
    k.backward = backward;
    return cu_register_kernel(reg, &k, err);
}
