/*
 * cuda plugin: _contrib_box_nms on the GPU (own CUDA kernels,
 * cu_kern_vision_nms.cu), for the operator cpu-blas defines (op_vision_nms.c).
 *
 * Semantics are the operator's (upstream MXNet
 * src/operator/contrib/bounding_box-inl.h, bounding_box.cu): float32 data; the
 * forward writes both outputs (without MXK_KERNEL_SUPPORTS_ADDTO the executor
 * turns an ADD into a WRITE to a temporary and a sum), one thread block per
 * batch element, its scratch in the operator's temp space; the backward copies
 * each output row's gradient to its recorded input row (other rows 0).
 */
#include "cu_blas_util.h"
#include "cu_kern_vision.h"
#include "cu_layer.h"

/** parse_param: the attributes, as cpu-blas reads them. */
static mxk_status nms_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_nms_geom g = {0};
    double d;
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "overlap_thresh", &d, err));
    g.overlap_thresh = (float)d;
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "valid_thresh", &d, err));
    g.valid_thresh = (float)d;
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "topk", &g.topk, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "coord_start", &g.coord_start, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "score_index", &g.score_index, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "id_index", &g.id_index, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "background_id", &g.background_id, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "force_suppress", &g.force_suppress, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "in_format", "corner|center", &g.in_format, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "out_format", "corner|center", &g.out_format, err));
    return cu_param_dup(&g, sizeof g, out, err);
}

/** Forward: see the file comment. */
static mxk_status nms_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    static const char op[] = "_contrib_box_nms";
    MXK_SDK_CHECK(cu_enter(ctx, err));
    const mxk_tensor *xt = args->in_data[0];
    const mxk_shape *s = &xt->shape;
    if (s->ndim < 2)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "cuda %s: data has fewer than 2 dims", op);
    cu_nms_geom g = *(const cu_nms_geom *)param;
    const int64_t total = cu_shape_size(s) / (s->dims[s->ndim - 1] > 0 ? s->dims[s->ndim - 1] : 1);
    g.w = s->dims[s->ndim - 1];
    g.n = s->dims[s->ndim - 2];
    g.nb = g.n > 0 ? total / g.n : 0;
    g.topk = g.topk < 0 ? g.n : (g.topk < g.n ? g.topk : g.n);
    MXK_SDK_CHECK(cu_check_tensor(xt, total * g.w, op, "argument 'data'", err));
    MXK_SDK_CHECK(cu_check_tensor(args->out_data[0], total * g.w, op, "output 'output0'", err));
    MXK_SDK_CHECK(cu_check_tensor(args->out_data[1], total, op, "output 'output1'", err));
    void *scratch = NULL;
    const uint64_t bytes = cu_nms_scratch_bytes(&g);
    if (g.topk >= 1)
        MXK_SDK_CHECK(mxk_sdk_host()->temp_space(ctx, bytes > 0 ? bytes : 16, &scratch, err));
    return cu_check(cu_launch_nms(&g, cu_f32(xt), cu_f32(args->out_data[0]),
                                  cu_f32(args->out_data[1]), scratch, cu_stream(ctx)),
                    "box_nms forward", err);
}

/** Backward: each output row's gradient to its recorded input row, by request. */
static mxk_status nms_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    static const char op[] = "_contrib_box_nms";
    MXK_SDK_CHECK(cu_enter(ctx, err));
    const mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dyt = args->out_grad[0], *rt = args->out_data[1], *dxt = args->in_grad[0];
    const int64_t n = cu_shape_size(&dyt->shape), total = cu_shape_size(&rt->shape);
    const int64_t w = dyt->shape.ndim > 0 ? dyt->shape.dims[dyt->shape.ndim - 1] : 0;
    MXK_SDK_CHECK(cu_check_tensor(dyt, n, op, "gradient of 'output0'", err));
    MXK_SDK_CHECK(cu_check_tensor(rt, total, op, "output 'output1'", err));
    if (total * w != n)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "cuda %s: output 'output1' does not match the gradient", op);
    MXK_SDK_CHECK(cu_check_tensor(dxt, n, op, "gradient of 'data'", err));
    if (req != MXK_REQ_ADD)
        CU_CHECK(cudaMemsetAsync(dxt->data, 0, (size_t)n * sizeof(float), cu_stream(ctx)),
                 "box_nms backward", err);
    return cu_check(
        cu_launch_nms_grad(cu_f32(dyt), cu_f32(rt), total, w, cu_f32(dxt), cu_stream(ctx)),
        "box_nms backward", err);
}

/** Registers the box_nms kernel. */
mxk_status cu_register_vision_nms(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.op_name = "_contrib_box_nms";
    k.parse_param = nms_parse;
    k.free_param = cu_param_free;
    k.supports = cu_supports_float32;
    k.forward = nms_forward;
    k.backward = nms_backward;
    return cu_register_kernel(reg, &k, err);
}
