/*
 * cpu-blas plugin: registration and kernel-argument checks shared by the
 * operator files.
 *
 * Kernels re-check what they are handed (counts, presence, dtype, device, and
 * shape consistency through the operator's own shape inference) before touching
 * memory, so a wrong call from an imperative front end is an error, not a crash.
 */
#include <limits.h>

#include "cpu_blas.h"

/** Fills a cpu-blas kernel definition (see cpu_blas.h). */
void cb_kernel_init(mxk_op_kernel_def *k, const char *op_name,
                    mxk_status (*forward)(const mxk_op_ctx *, const void *, void *,
                                          const mxk_forward_args *, mxk_error_sink *),
                    mxk_status (*backward)(const mxk_op_ctx *, const void *, void *,
                                           const mxk_backward_args *, mxk_error_sink *)) {
    mxk_sdk_kernel_def_init(k);
    k->op_name = op_name;
    k->dev_type = MXK_DEV_CPU;
    k->backend = CB_BACKEND;
    k->priority = 0;
    k->flags = MXK_KERNEL_SUPPORTS_ADDTO;
    k->supports = cb_supports_f32;
    k->forward = forward;
    k->backward = backward;
}

/** Registers an operator and then its kernel (see cpu_blas.h). */
mxk_status cb_register(mxk_registrar *reg, const mxk_op_def *def, const mxk_op_kernel_def *kdef,
                       mxk_error_sink *err) {
    MXK_SDK_CHECK(reg->register_op(reg, def, err));
    return reg->register_kernel(reg, kdef, err);
}

/** Declines configurations with a known non-float32 input (see cpu_blas.h). */
int32_t cb_supports_f32(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                        uint32_t num_in) {
    if (in_types == NULL)
        return 1;
    for (uint32_t i = 0; i < num_in; i++)
        if (in_types[i] != MXK_FLOAT32 && in_types[i] != MXK_DTYPE_UNKNOWN)
            return 0;
    return 1;
}

/** Checks presence, dtype and device of a tensor (see cpu_blas.h). */
mxk_status cb_check_tensor(const mxk_tensor *t, const char *what, mxk_error_sink *err) {
    if (t == NULL || t->data == NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s: no tensor given", what);
    if (t->dtype != MXK_FLOAT32)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "%s: expected float32, got %s", what,
                             mxk_sdk_dtype_name(t->dtype));
    if (t->dev_type != MXK_DEV_CPU && t->dev_type != MXK_DEV_CPU_PINNED)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "%s: tensor is on device type %d, cpu-blas kernels need CPU memory",
                             what, (int)t->dev_type);
    if (t->shape.ndim < 0 || t->shape.ndim > MXK_MAX_NDIM)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: invalid ndim %d", what, (int)t->shape.ndim);
    return MXK_OK;
}

/** Checks a forward call against the operator's shape inference (see cpu_blas.h). */
mxk_status cb_check_forward(const mxk_forward_args *args, uint32_t num_in, uint32_t num_out,
                            const char *const *arg_names, const char *const *out_names,
                            cb_infer_shape_fn infer, const void *param, mxk_error_sink *err) {
    char what[160];
    if (args->num_in != num_in || args->num_out != num_out)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "expected %u inputs and %u outputs, got %u and %u", (unsigned)num_in,
                             (unsigned)num_out, (unsigned)args->num_in, (unsigned)args->num_out);
    if (num_in > CB_MAX_IO || num_out > CB_MAX_IO)
        return mxk_sdk_error(err, MXK_ERR_INTERNAL, "too many inputs/outputs");
    mxk_shape in_shapes[CB_MAX_IO], out_shapes[CB_MAX_IO];
    for (uint32_t i = 0; i < num_in; i++) {
        mxk_sdk_slot_name(what, sizeof what, "argument", arg_names, i);
        MXK_SDK_CHECK(cb_check_tensor(args->in_data[i], what, err));
        in_shapes[i] = args->in_data[i]->shape;
        if (!mxk_sdk_shape_is_known(&in_shapes[i])) {
            char s[MXK_SDK_SHAPE_STR_MAX];
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: shape %s is not fully known", what,
                                 mxk_sdk_shape_format(&in_shapes[i], s, sizeof s));
        }
    }
    for (uint32_t i = 0; i < num_out; i++) {
        out_shapes[i] = mxk_sdk_shape_unknown();
        if (args->req[i] == MXK_REQ_NULL)
            continue;
        mxk_sdk_slot_name(what, sizeof what, "output", out_names, i);
        MXK_SDK_CHECK(cb_check_tensor(args->out_data[i], what, err));
        out_shapes[i] = args->out_data[i]->shape;
    }
    MXK_SDK_CHECK(infer(param, in_shapes, num_in, out_shapes, num_out, NULL, 0, err));
    for (uint32_t i = 0; i < num_out; i++) {
        if (args->req[i] == MXK_REQ_NULL)
            continue;
        /* inference merged the given shape; a partial result would be an op bug */
        if (!mxk_sdk_shape_equal(&out_shapes[i], &args->out_data[i]->shape))
            return mxk_sdk_error(err, MXK_ERR_INTERNAL, "output %u: inconsistent inference",
                                 (unsigned)i);
    }
    return MXK_OK;
}

/** Checks the tensor counts of a backward call (see cpu_blas.h). */
mxk_status cb_check_backward_counts(const mxk_backward_args *args, uint32_t num_in,
                                    uint32_t num_out, uint32_t num_visible, mxk_error_sink *err) {
    if (args->num_in != num_in || args->num_out != num_out || args->num_out_grad != num_visible)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "backward expected %u inputs, %u outputs and %u output gradients, "
                             "got %u, %u and %u",
                             (unsigned)num_in, (unsigned)num_out, (unsigned)num_visible,
                             (unsigned)args->num_in, (unsigned)args->num_out,
                             (unsigned)args->num_out_grad);
    return MXK_OK;
}

/** Checks a requested gradient tensor (see cpu_blas.h). */
mxk_status cb_check_grad(const mxk_tensor *g, mxk_op_req req, const mxk_shape *expected,
                         const char *name, mxk_error_sink *err) {
    char what[160];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    snprintf(what, sizeof what, "gradient of '%s'", name);
    MXK_SDK_CHECK(cb_check_tensor(g, what, err));
    if (mxk_sdk_shape_count(&g->shape) != mxk_sdk_shape_count(expected)) {
        char e[MXK_SDK_SHAPE_STR_MAX], s[MXK_SDK_SHAPE_STR_MAX];
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: expected %s, got %s", what,
                             mxk_sdk_shape_format(expected, e, sizeof e),
                             mxk_sdk_shape_format(&g->shape, s, sizeof s));
    }
    return MXK_OK;
}

/** Narrows a size to a CBLAS int (see cpu_blas.h). */
mxk_status cb_blas_dim(uint64_t v, const char *what, int *out, mxk_error_sink *err) {
    if (v > (uint64_t)INT_MAX)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED,
                             "%s = %llu exceeds the BLAS index range (%d)", what,
                             (unsigned long long)v, INT_MAX);
    *out = (int)v;
    return MXK_OK;
}

/** Checks the common start of a data/weight[/bias] backward (see cpu_blas.h). */
mxk_status cb_begin_weighted_backward(const mxk_backward_args *args, uint32_t num_in, int *needed,
                                      mxk_error_sink *err) {
    MXK_SDK_CHECK(cb_check_backward_counts(args, num_in, 1, 1, err));
    *needed = 0;
    for (uint32_t i = 0; i < num_in; i++)
        *needed |= args->req[i] != MXK_REQ_NULL;
    if (!*needed)
        return MXK_OK;
    MXK_SDK_CHECK(cb_check_tensor(args->out_grad[0], "gradient of 'output'", err));
    MXK_SDK_CHECK(cb_check_tensor(args->in_data[0], "argument 'data'", err));
    return cb_check_tensor(args->in_data[1], "argument 'weight'", err);
}

/** An element-wise call being split (cb_unary_parallel / cb_binary_parallel). */
typedef struct cb_elemwise_run {
    cb_unary_fn unary;
    cb_binary_fn binary;
    float *out;
    const float *a, *b;
    float s;
    mxk_op_req req;
} cb_elemwise_run;

/** Elements [i0, i1) of an element-wise call. */
static void cb_elemwise_part(void *arg, int64_t i0, int64_t i1) {
    const cb_elemwise_run *r = arg;
    size_t n = (size_t)(i1 - i0);
    if (r->unary)
        r->unary(r->out + i0, r->a + i0, r->s, n, r->req);
    else
        r->binary(r->out + i0, r->a + i0, r->b + i0, r->s, n, r->req);
}

/** Splits a unary loop over threads (see cpu_blas.h). */
void cb_unary_parallel(const mxk_op_ctx *ctx, cb_unary_fn fn, float *out, const float *in, float s,
                       size_t n, mxk_op_req req) {
    cb_elemwise_run r = {fn, NULL, out, in, NULL, s, req};
    cb_parallel_for(ctx, (int64_t)n, CB_ELEMWISE_GRAIN, cb_elemwise_part, &r);
}

/** Splits a binary loop over threads (see cpu_blas.h). */
void cb_binary_parallel(const mxk_op_ctx *ctx, cb_binary_fn fn, float *out, const float *a,
                        const float *b, float s, size_t n, mxk_op_req req) {
    cb_elemwise_run r = {NULL, fn, out, a, b, s, req};
    cb_parallel_for(ctx, (int64_t)n, CB_ELEMWISE_GRAIN, cb_elemwise_part, &r);
}
