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

/** Copies n elements by req, any dtype (see op_init.h). */
void cbi_copy_n(void *dst, const void *src, int32_t dtype, uint64_t n, mxk_op_req req) {
    if (req == MXK_REQ_NULL || (dst == src && req != MXK_REQ_ADD))
        return;
    if (dtype == MXK_FLOAT32) {
        mxk_sdk_copy_f32(dst, src, (size_t)n, req);
    } else if (req != MXK_REQ_ADD) {
        memcpy(dst, src, (size_t)n * mxk_sdk_dtype_size(dtype));
    } else {
        for (uint64_t i = 0; i < n; i++)
            cbt_store(dst, dtype, i, cbt_load(src, dtype, i), req);
    }
}

/** Copies a tensor (see op_init.h). */
void cbi_copy(const mxk_tensor *dst, const mxk_tensor *src, mxk_op_req req) {
    cbi_copy_n(dst->data, src->data, dst->dtype, mxk_sdk_shape_count(&dst->shape), req);
}

/** Every argument and output of one dtype, any (see op_init.h). */
mxk_status cbi_infer_type_all(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                              uint32_t num_out, int32_t *aux, uint32_t num_aux,
                              mxk_error_sink *err) {
    int32_t d = MXK_DTYPE_UNKNOWN;
    for (uint32_t i = 0; i < num_in + num_out && d == MXK_DTYPE_UNKNOWN; i++)
        d = i < num_in ? in[i] : out[i - num_in];
    return mxk_sdk_infer_type_uniform(d, in, num_in, NULL, out, num_out, NULL, aux, num_aux, err);
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

/** Checks a forward call whose slots share one dtype (see op_init.h). */
mxk_status cbi_check_forward_same(const mxk_forward_args *args, uint32_t num_in, uint32_t num_out,
                                  cb_infer_shape_fn infer, const void *param, mxk_error_sink *err) {
    MXK_SDK_CHECK(cbt_check_forward(args, num_in, num_out, infer, param, 1, err));
    int32_t d = args->in_data[0]->dtype;
    for (uint32_t i = 0; i < num_in + num_out; i++) {
        const mxk_tensor *t = i < num_in ? args->in_data[i] : args->out_data[i - num_in];
        if ((i < num_in || args->req[i - num_in] != MXK_REQ_NULL) && t->dtype != d)
            return mxk_sdk_error(err, MXK_ERR_TYPE, "%s %u: expected %s, got %s",
                                 i < num_in ? "argument" : "output",
                                 (unsigned)(i < num_in ? i : i - num_in), mxk_sdk_dtype_name(d),
                                 mxk_sdk_dtype_name(t->dtype));
    }
    return MXK_OK;
}

/** Copy forward of any dtype (see op_init.h). */
mxk_status cbi_copy_forward(const mxk_forward_args *args, uint32_t num_in, cb_infer_shape_fn infer,
                            const void *param, mxk_error_sink *err) {
    MXK_SDK_CHECK(cbt_check_forward(args, num_in, 1, infer, param, 1, err));
    const mxk_tensor *x = args->in_data[0], *y = args->out_data[0];
    if (args->req[0] != MXK_REQ_NULL && x->dtype != y->dtype)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "output: expected %s, got %s",
                             mxk_sdk_dtype_name(x->dtype), mxk_sdk_dtype_name(y->dtype));
    cbi_copy(y, x, args->req[0]);
    return MXK_OK;
}

/** Copy backward of any dtype (see op_init.h). */
mxk_status cbi_copy_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_backward_args *args, mxk_error_sink *err) {
    if (args->num_in < 1 || args->num_in > 2)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "backward: expected 1 or 2 inputs");
    MXK_SDK_CHECK(cb_check_backward_counts(args, args->num_in, 1, 1, err));
    if (args->num_in == 2)
        MXK_SDK_CHECK(cbi_zero_grad_of(args, 1, "rhs", err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dy = args->out_grad[0], *g = args->in_grad[0];
    MXK_SDK_CHECK(cbt_check_any(dy, "gradient of 'output'", err));
    MXK_SDK_CHECK(cbt_check_any(g, "input gradient", err));
    if (g->dtype != dy->dtype || mxk_sdk_shape_count(&g->shape) != mxk_sdk_shape_count(&dy->shape))
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "input gradient: does not match the output gradient's size and dtype");
    cbi_copy(g, dy, req);
    return MXK_OK;
}

/** Registers a table of operators (see op_init.h). */
mxk_status cbi_register_ops(mxk_registrar *reg, const cbi_op *ops, size_t n, mxk_error_sink *err) {
    for (size_t i = 0; i < n; i++) {
        const cbi_op *o = &ops[i];
        mxk_op_def def;
        cbt_def_init(&def, o->doc, o->attrs, o->num_attrs, o->arguments, o->parse);
        def.aliases = o->aliases;
        def.infer_shape = o->infer_shape;
        def.infer_type = o->infer_type;
        def.backward_dependency = o->flags & CBI_OP_NO_GRADIENT ? cbt_dep_none : cbt_dep_out_grad;
        if (o->flags & CBI_OP_NO_GRADIENT)
            def.no_gradient = cbi_no_gradient;
        if (o->flags & CBI_OP_INPLACE) {
            def.forward_inplace = cbt_inplace_identity_00;
            def.backward_inplace = cbt_inplace_identity_00;
        }
        MXK_SDK_CHECK(cbt_register(reg, &def, o->name, o->forward, o->backward, 1, err));
    }
    return MXK_OK;
}
