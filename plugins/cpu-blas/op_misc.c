/*
 * cpu-blas plugin: BlockGrad and _copyto.
 *
 * BlockGrad (MXNet src/operator/tensor/elemwise_unary_op_basic.cc, alias
 * stop_gradient): forward identity, backward writes a zero gradient (by request:
 * WRITE zeroes, ADD leaves the gradient as it is). _copyto (MXNet's NDArray copy,
 * src/ndarray/ndarray_function.cc): forward copy, backward passes out_grad
 * through. BlockGrad declares no_gradient, so graph gradients stop there. One argument `data`,
 * output `output` of its shape; in-place identities; backward reads only out_grad (_copyto) or
 * nothing (BlockGrad).
 */
#include "cb_tensor.h"

static const char *const mi_args[] = {"data", NULL};
static const char *const mi_outs[] = {"output", NULL};
static const char *const bg_aliases[] = {"stop_gradient", NULL};

/** Output shape = data shape (both directions). */
static mxk_status mi_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 1 argument and 1 output");
    return mxk_sdk_infer_shape_same(in, num_in, mi_args, out, num_out, mi_outs, err);
}

/** All float32. */
static mxk_status mi_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in, num_in, mi_args, out, num_out, mi_outs, aux,
                                      num_aux, err);
}

/** BlockGrad has no gradient: graph gradients stop at it (its backward still writes zeros). */
static int32_t bg_no_gradient(const void *param) {
    return 1;
}

/** Copies data to output by the request (both operators). */
static mxk_status mi_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    return cbt_copy_forward(args, mi_infer_shape, param, err);
}

/** BlockGrad: zero gradient by the request. */
static mxk_status bg_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, 1, 1, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(cb_check_tensor(args->in_grad[0], "gradient of 'data'", err));
    mxk_sdk_fill_f32(cb_f32(args->in_grad[0]), 0.0f,
                     (size_t)mxk_sdk_shape_count(&args->in_grad[0]->shape), req);
    return MXK_OK;
}

/** Registers BlockGrad and _copyto with their CPU kernels. */
mxk_status cb_register_misc(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_def def;
    mxk_op_kernel_def k;

    mxk_sdk_op_def_init(&def);
    def.name = "BlockGrad";
    def.description = "Identity in forward; stops the gradient (zero) in backward.";
    def.arguments = mi_args;
    def.outputs = mi_outs;
    def.infer_shape = mi_infer_shape;
    def.infer_type = mi_infer_type;
    def.backward_dependency = cbt_dep_none;
    def.forward_inplace = cbt_inplace_identity_00;
    def.no_gradient = bg_no_gradient;
    def.aliases = bg_aliases;
    cb_kernel_init(&k, "BlockGrad", mi_forward, bg_backward);
    MXK_SDK_CHECK(cb_register(reg, &def, &k, err));

    mxk_sdk_op_def_init(&def);
    def.name = "_copyto";
    def.description = "Copies the input to the output.";
    def.arguments = mi_args;
    def.outputs = mi_outs;
    def.infer_shape = mi_infer_shape;
    def.infer_type = mi_infer_type;
    def.backward_dependency = cbt_dep_out_grad;
    def.forward_inplace = cbt_inplace_identity_00;
    def.backward_inplace = cbt_inplace_identity_00;
    cb_kernel_init(&k, "_copyto", mi_forward, cbt_copy_backward);
    return cb_register(reg, &def, &k, err);
}
