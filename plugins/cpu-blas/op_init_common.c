/*
 * cpu-blas plugin, init group: attribute helpers, dtype-generic copies and stock
 * callbacks shared by the op_init_*.c files; see op_init.h.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "op_init.h"

/** Reads an `int or None` attribute (see op_init.h). */
mxk_status cbi_attr_opt_int(const mxk_attrs *attrs, const char *key, int32_t *has, int64_t *value,
                            mxk_error_sink *err) {
    const char *raw = mxk_sdk_attr_raw(attrs, key);
    *has = 0;
    *value = 0;
    if (raw == NULL || strcmp(raw, "None") == 0)
        return MXK_OK;
    if (!mxk_sdk_parse_int64(raw, value))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute '%s': expected an integer or None, got '%s'", key, raw);
    *has = 1;
    return MXK_OK;
}

/** Reads a `Shape or None` attribute (see op_init.h). */
mxk_status cbi_attr_opt_shape(const mxk_attrs *attrs, const char *key, int32_t *has,
                              mxk_shape *value, mxk_error_sink *err) {
    const char *raw = mxk_sdk_attr_raw(attrs, key);
    *has = 0;
    *value = mxk_sdk_shape_unknown();
    if (raw == NULL || strcmp(raw, "None") == 0)
        return MXK_OK;
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, key, value, err));
    *has = 1;
    return MXK_OK;
}

/** Reads a tuple with a lower bound (see op_init.h). */
mxk_status cbi_attr_tuple_min(const mxk_attrs *attrs, const char *key, int64_t lo, mxk_shape *value,
                              mxk_error_sink *err) {
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, key, value, err));
    for (int32_t i = 0; i < value->ndim; i++)
        if (value->dims[i] < lo)
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "attribute '%s': values must be >= %lld, got %lld", key,
                                 (long long)lo, (long long)value->dims[i]);
    return MXK_OK;
}

/** Zero gradient of input i (see op_init.h). */
mxk_status cbi_zero_grad_of(const mxk_backward_args *args, uint32_t i, const char *name,
                            mxk_error_sink *err) {
    if (i >= args->num_in)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "backward: no input %u", (unsigned)i);
    return cbt_zero_grad(args->in_grad[i], args->req[i], name, err);
}

/** No gradient flows through (see op_init.h). */
int32_t cbi_no_gradient(const void *param) {
    return 1;
}

/** Copies src into dst by req, any dtype (see op_init.h). */
void cbi_copy(const mxk_tensor *dst, const mxk_tensor *src, mxk_op_req req) {
    uint64_t n = mxk_sdk_shape_count(&dst->shape);
    if (req == MXK_REQ_NULL || (dst->data == src->data && req != MXK_REQ_ADD))
        return;
    if (dst->dtype == MXK_FLOAT32) {
        mxk_sdk_copy_f32(dst->data, src->data, (size_t)n, req);
    } else if (req != MXK_REQ_ADD) {
        memcpy(dst->data, src->data, (size_t)n * mxk_sdk_dtype_size(dst->dtype));
    } else {
        for (uint64_t i = 0; i < n; i++)
            cbt_store(dst->data, dst->dtype, i, cbt_load(src->data, src->dtype, i), req);
    }
}

/** Output dtype = argument 0's (see op_init.h). */
mxk_status cbi_infer_type_same(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                               uint32_t num_out, int32_t *aux, uint32_t num_aux,
                               mxk_error_sink *err) {
    int32_t d = in[0] != MXK_DTYPE_UNKNOWN ? in[0] : out[0];
    MXK_SDK_CHECK(mxk_sdk_type_assign(&in[0], d, "argument 0", err));
    return mxk_sdk_type_assign(&out[0], d, "output 'output'", err);
}

/** Saturating double -> float (see op_init.h). */
float cbi_to_f32(double v) {
    if (v > FLT_MAX)
        return INFINITY;
    if (v < -FLT_MAX)
        return -INFINITY;
    return (float)v;
}
