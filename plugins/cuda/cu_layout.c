/*
 * cuda plugin: host helpers of the data-movement kernels (see cu_layout.h):
 * strided views from shapes, their launch by write request, parameter objects and
 * registration. Upstream: MXNet src/operator/tensor/matrix_op-inl.h,
 * broadcast_reduce_op.h.
 */
#include "cu_layout.h"

#include <string.h>

void cu_view_init(cu_view *v) {
    memset(v, 0, sizeof *v);
}

void cu_view_push(cu_view *v, int64_t n, int64_t src, int64_t dst) {
    if (n == 1)
        return;
    int32_t d = v->ndim + v->nred;
    v->dims[d] = n;
    v->src[d] = src;
    v->dst[d] = dst;
    v->ndim++;
}

void cu_view_strides(const mxk_shape *s, int64_t *st) {
    int64_t acc = 1;
    for (int32_t d = s->ndim - 1; d >= 0; d--) {
        st[d] = acc;
        acc *= s->dims[d];
    }
}

void cu_view_grad(const cu_view *f, cu_view *b) {
    cu_view_init(b);
    b->src_off = f->dst_off;
    b->dst_off = f->src_off;
    for (int32_t d = 0; d < f->ndim; d++)
        if (f->src[d] != 0)
            cu_view_push(b, f->dims[d], f->dst[d], f->src[d]);
    for (int32_t d = 0; d < f->ndim; d++) {
        if (f->src[d] != 0)
            continue;
        int32_t k = b->ndim + b->nred++;
        b->dims[k] = f->dims[d];
        b->src[k] = f->dst[d];
        b->dst[k] = 0;
    }
}

mxk_status cu_view_copy(const mxk_op_ctx *ctx, const cu_view *v, const mxk_tensor *src,
                        const mxk_tensor *dst, mxk_op_req req, mxk_error_sink *err) {
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    if (src->dtype != dst->dtype)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "output: expected %s, got %s",
                             mxk_sdk_dtype_name(src->dtype), mxk_sdk_dtype_name(dst->dtype));
    MXK_SDK_CHECK(cu_enter(ctx, err));
    CU_CHECK(cu_launch_view_copy(v, src->data, dst->data, dst->dtype, req == MXK_REQ_ADD,
                                 cu_stream(ctx)),
             "strided copy", err);
    return MXK_OK;
}

mxk_status cu_view_sum(const mxk_op_ctx *ctx, const cu_view *v, const mxk_tensor *dy,
                       const mxk_tensor *dx, mxk_op_req req, int zero, mxk_error_sink *err) {
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    if (dy->dtype != MXK_FLOAT32 || dx->dtype != MXK_FLOAT32)
        return mxk_sdk_error(err, MXK_ERR_TYPE, "gradients: expected float32, got %s and %s",
                             mxk_sdk_dtype_name(dy->dtype), mxk_sdk_dtype_name(dx->dtype));
    MXK_SDK_CHECK(cu_enter(ctx, err));
    if (zero && req != MXK_REQ_ADD)
        CU_CHECK(cudaMemsetAsync(dx->data, 0, (size_t)cu_shape_size(&dx->shape) * sizeof(float),
                                 cu_stream(ctx)),
                 "cudaMemsetAsync", err);
    CU_CHECK(cu_launch_view_sum(v, dy->data, dx->data, req == MXK_REQ_ADD, cu_stream(ctx)),
             "strided sum", err);
    return MXK_OK;
}

mxk_status cu_need(const mxk_tensor *t, const char *op, const char *what, mxk_error_sink *err) {
    if (t == NULL || t->data == NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s: %s is missing", op, what);
    return MXK_OK;
}

int32_t cu_supports_any(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                        uint32_t num_in) {
    return 1;
}

mxk_status cu_register_simple(mxk_registrar *reg, const char *op,
                              mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *),
                              cu_forward_fn forward, cu_backward_fn backward, mxk_error_sink *err) {
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.op_name = op;
    k.flags = MXK_KERNEL_SUPPORTS_ADDTO;
    k.parse_param = parse;
    k.free_param = cu_param_free;
    k.supports = cu_supports_any;
    k.forward = forward;
    k.backward = backward;
    return cu_register_kernel(reg, &k, err);
}

mxk_status cu_gather_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_gather_param *p = param;
    if (args->num_in != p->num_in || args->num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s: expected %u inputs and 1 output",
                             p->op, (unsigned)p->num_in);
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *x = args->in_data[0], *y = args->out_data[0];
    MXK_SDK_CHECK(cu_need(x, p->op, "the input", err));
    MXK_SDK_CHECK(cu_need(y, p->op, "the output", err));
    cu_view f;
    MXK_SDK_CHECK(p->build(p, &x->shape, &y->shape, &f, err));
    return cu_view_copy(ctx, &f, x, y, args->req[0], err);
}

mxk_status cu_gather_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_gather_param *p = param;
    if (args->num_in != p->num_in || args->num_out_grad != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "%s: expected %u inputs and 1 output",
                             p->op, (unsigned)p->num_in);
    for (uint32_t i = 1; i < p->num_in; i++)
        MXK_SDK_CHECK(cu_zero_grad(ctx, args->in_grad[i], args->req[i], err));
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dy = args->out_grad[0], *dx = args->in_grad[0];
    MXK_SDK_CHECK(cu_need(dy, p->op, "the output gradient", err));
    MXK_SDK_CHECK(cu_need(dx, p->op, "the input gradient", err));
    cu_view f, b;
    MXK_SDK_CHECK(p->build(p, &dx->shape, &dy->shape, &f, err));
    cu_view_grad(&f, &b);
    return cu_view_sum(ctx, &b, dy, dx, args->req[0], p->partial, err);
}
