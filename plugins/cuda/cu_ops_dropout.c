/*
 * cuda plugin: the GPU kernel of Dropout (defined by cpu-blas, op_dropout.c).
 *
 * Semantics: MXNet src/operator/nn/dropout-inl.h (the mask (u < 1 - p) / (1 - p),
 * variational dropout along `axes`), as cpu-blas computes it: active in training
 * or with mode 'always' when p > 0; the mask goes to the hidden output `mask`,
 * which backward multiplies into out_grad. The uniform draw u_i is the host's
 * (cu_kern_random.cu reproduces host->random_uniform element by element from the
 * same Philox blocks), so one seed gives cpu-blas's mask. With axes the draw (data
 * shape with the shared axes 1) goes to the operator's temp space and is
 * broadcast. Inactive: y = x and the mask is 1. float32 only, as the operator.
 * Forward and backward honour every request (ADD included) and may run in place.
 */
#include <math.h>
#include <stdlib.h>

#include "cu_random.h"
#include "mxk_random_attr.h"

/** Parses p, mode and axes (mxk_dropout_parse, as the operator). */
static mxk_status do_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    mxk_dropout_param p;
    MXK_SDK_CHECK(mxk_dropout_parse(attrs, &p, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

/** Forward (see the file comment). */
static mxk_status do_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const mxk_dropout_param *p = param;
    if (args->num_in != 1 || args->num_out != 2)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "Dropout expects 1 argument and 2 outputs");
    const mxk_op_req *req = args->req;
    const mxk_tensor *xt = args->in_data[0];
    float *y = req[0] != MXK_REQ_NULL ? args->out_data[0]->data : NULL;
    float *m = req[1] != MXK_REQ_NULL ? args->out_data[1]->data : NULL;
    uint64_t n = mxk_sdk_shape_count(&xt->shape);
    if (n == 0)
        return MXK_OK;
    MXK_SDK_CHECK(cu_enter(ctx, err));
    cudaStream_t st = cu_stream(ctx);
    int32_t active = (ctx->is_train || p->always) && p->p > 0.0;
    const float keep = (float)(1.0 - p->p);
    /* p = 1: upstream's mask is {0,1} * (1/0), NaN everywhere (dropout-inl.h); kept so */
    const float scale = keep > 0.0f ? 1.0f / keep : INFINITY;
    mxk_shape s = mxk_dropout_draw_shape(p, &xt->shape); /* the data shape without axes */
    uint64_t ns = mxk_sdk_shape_count(&s);
    cu_philox_pos pos = {0, 0, 0};
    if (active) { /* the blocks cpu-blas's draw consumes, even when nothing is written */
        mxk_random *rng = cu_random_stream(ctx, "Dropout", err);
        if (rng == NULL)
            return MXK_ERR_STATE;
        pos = cu_random_reserve(rng, (ns + 3) / 4);
    }
    if (y == NULL && m == NULL)
        return MXK_OK;
    if (!active || p->axes.ndim == 0) {
        CU_CHECK(cu_launch_dropout_forward(xt->data, y, req[0], m, req[1], n, pos, keep, scale,
                                           active, st),
                 "Dropout kernel", err);
        return MXK_OK;
    }
    void *u = NULL;
    MXK_SDK_CHECK(mxk_sdk_host()->temp_space(ctx, ns * sizeof(float), &u, err));
    CU_CHECK(cu_launch_dropout_draw(u, ns, pos, keep, scale, st), "Dropout draw kernel", err);
    CU_CHECK(cu_launch_dropout_broadcast(xt->data, y, req[0], m, req[1], u, n, xt->shape, s, st),
             "Dropout broadcast kernel", err);
    return MXK_OK;
}

/** Backward: d data = out_grad * mask by the request. */
static mxk_status do_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    if (args->num_in != 1 || args->num_out != 2 || args->num_out_grad < 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "Dropout expects 1 argument and 2 outputs");
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dy = args->out_grad[0], *mk = args->out_data[1];
    if (mk->data == NULL || !mxk_sdk_shape_equal(&mk->shape, &dy->shape))
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "output 'mask' does not match the gradient");
    uint64_t n = mxk_sdk_shape_count(&dy->shape);
    if (n == 0)
        return MXK_OK;
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(cu_launch_dropout_backward(dy->data, mk->data, args->in_grad[0]->data, n, req,
                                        cu_stream(ctx)),
             "Dropout backward kernel", err);
    return MXK_OK;
}

mxk_status cu_register_dropout(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.op_name = "Dropout";
    k.flags = MXK_KERNEL_SUPPORTS_ADDTO;
    k.parse_param = do_parse;
    k.free_param = cu_param_free;
    k.supports = cu_supports_float32;
    k.forward = do_forward;
    k.backward = do_backward;
    return cu_register_kernel(reg, &k, err);
}
