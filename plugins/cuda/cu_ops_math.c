/*
 * cuda plugin: host helpers of the math family (cu_ops_math.h): checks, zero
 * gradients, broadcast strides, reduction plans and registration. Semantics:
 * MXNet src/operator/tensor/elemwise_binary_broadcast_op.h (BinaryBroadcastShapeCompact)
 * and broadcast_reduce_op.h (ReduceAxesComputeImpl).
 */
#include "cu_ops_math.h"

#include <stdlib.h>
#include <string.h>

mxk_status cu_check_f32(const mxk_tensor *t, int64_t count, const char *what, mxk_error_sink *err) {
    if (t == NULL || t->data == NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s: missing", what);
    if (t->dtype != MXK_FLOAT32)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "%s: expected float32, got %s", what,
                             mxk_sdk_dtype_name(t->dtype));
    if (count >= 0 && cu_shape_size(&t->shape) != count)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: expected %lld elements, got %lld", what,
                             (long long)count, (long long)cu_shape_size(&t->shape));
    return MXK_OK;
}

mxk_status cu_bcast_strides(const mxk_shape *s, const mxk_shape *o, int64_t *stride,
                            const char *what, mxk_error_sink *err) {
    if (s->ndim > o->ndim)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: has more dims than the output", what);
    int64_t acc = 1;
    for (int32_t i = o->ndim - 1; i >= 0; i--) {
        int32_t si = i - (o->ndim - s->ndim);
        int64_t d = si >= 0 ? s->dims[si] : 1;
        if (d != 1 && d != o->dims[i]) {
            char a[MXK_SDK_SHAPE_STR_MAX], b[MXK_SDK_SHAPE_STR_MAX];
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: shape %s does not broadcast to %s", what,
                                 mxk_sdk_shape_format(s, a, sizeof a),
                                 mxk_sdk_shape_format(o, b, sizeof b));
        }
        stride[i] = d == 1 ? 0 : acc;
        acc *= d;
    }
    return MXK_OK;
}

void cu_dense_strides(const mxk_shape *s, int64_t *stride) {
    int64_t acc = 1;
    for (int32_t i = s->ndim - 1; i >= 0; i--) {
        stride[i] = acc;
        acc *= s->dims[i];
    }
}

/** Appends axis d of the space (size n, strides of every operand) to index space ix. */
static void plan_push(cu_index *ix, int64_t n, const int64_t stride[CU_MAX_OPERANDS][MXK_MAX_NDIM],
                      int32_t d) {
    ix->dim[ix->ndim] = n;
    for (int k = 0; k < CU_MAX_OPERANDS; k++)
        ix->stride[k][ix->ndim] = stride[k][d];
    ix->ndim++;
}

void cu_reduce_plan_of(const mxk_shape *space, const uint8_t *red,
                       const int64_t stride[CU_MAX_OPERANDS][MXK_MAX_NDIM], cu_reduce_plan *plan) {
    memset(plan, 0, sizeof *plan);
    plan->nout = plan->nred = 1;
    for (int32_t d = 0; d < space->ndim; d++) {
        int64_t n = space->dims[d];
        if (red[d]) {
            plan_push(&plan->red, n, stride, d);
            plan->nred *= (uint64_t)n;
        } else {
            plan_push(&plan->kept, n, stride, d);
            plan->nout *= (uint64_t)n;
        }
    }
}

mxk_status cu_register_math_kernel(mxk_registrar *reg, mxk_op_kernel_def *kdef,
                                   mxk_error_sink *err) {
    kdef->flags |= MXK_KERNEL_SUPPORTS_ADDTO;
    return cu_register_kernel(reg, kdef, err);
}

void cu_math_param_free(void *param) {
    free(param);
}

mxk_status cu_math_param_new(const void *p, size_t size, void **out, mxk_error_sink *err) {
    void *q = malloc(size);
    if (q == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "cuda: out of memory for parameters");
    memcpy(q, p, size);
    *out = q;
    return MXK_OK;
}
