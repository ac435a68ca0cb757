/*
 * cuda plugin: host-side helpers of the layer kernels (cu_layer.h).
 */
#include "cu_layer.h"

#include <stdlib.h>
#include <string.h>

mxk_status cu_layer_param_dup(const void *p, size_t size, void **out, mxk_error_sink *err) {
    void *q = malloc(size);
    if (q == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "cuda: out of memory for a parameter");
    memcpy(q, p, size);
    *out = q;
    return MXK_OK;
}

void cu_layer_param_free(void *p) {
    free(p);
}

mxk_status cu_layer_check_dtype(const mxk_tensor *t, uint64_t n, int32_t dtype, const char *what,
                                mxk_error_sink *err) {
    if (t == NULL || (t->data == NULL && n > 0))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s is missing", what);
    if (t->dtype != dtype)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "%s: expected %s, got %s", what,
                             mxk_sdk_dtype_name(dtype), mxk_sdk_dtype_name(t->dtype));
    if ((uint64_t)cu_shape_size(&t->shape) != n)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: expected %llu elements, got %llu", what,
                             (unsigned long long)n, (unsigned long long)cu_shape_size(&t->shape));
    return MXK_OK;
}

int32_t cu_layer_supports_f32(const void *param, const mxk_shape *in_shapes,
                              const int32_t *in_types, uint32_t num_in) {
    for (uint32_t i = 0; i < num_in; i++)
        if (in_types[i] != MXK_FLOAT32)
            return 0;
    return num_in > 0;
}

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
    k.free_param = cu_layer_param_free;
    k.supports = supports != NULL ? supports : cu_layer_supports_f32;
    k.forward = forward;
    k.backward = backward;
    return cu_register_kernel(reg, &k, err);
}
