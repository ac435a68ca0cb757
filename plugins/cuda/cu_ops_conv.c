/*
 * cuda plugin: Convolution and Deconvolution (1-D, 2-D, 3-D; NCW, NCHW, NCDHW;
 * groups, dilation, bias) on cuDNN: forward, backward and registration.
 *
 * Semantics are the operators' (cpu-blas op_convolution.c; upstream MXNet
 * src/operator/nn/convolution-inl.h, deconvolution-inl.h); the calls follow
 * src/operator/nn/cudnn/cudnn_convolution-inl.h and cudnn_deconvolution-inl.h
 * (see cu_conv.h for the image-side / filter-side roles):
 *   Convolution   y = conv(x, W) (+ b)        Deconvolution  y = conv^T(W, x) (+ b)
 *   backward      dW = backward filter (image side, filter side)
 *                 db = backward bias of dy (the output side's channels)
 *                 dx = backward data (Convolution) or forward (Deconvolution) of dy
 * Requests are cuDNN betas (0 for WRITE and INPLACE, 1 for ADD); the bias is
 * added after the convolution (cudnnAddTensor with beta 1), so ADD adds both.
 * Backward reads out_grad, data and weight (not the output).
 */
#include "cu_blas_util.h"
#include "cu_conv.h"

/** Number of arguments: 2 with no_bias, else 3. */
static uint32_t cv_num_args(const mxk_conv_param *p) {
    return p->no_bias ? 2u : 3u;
}

/** Elements of the output (cuDNN's image side for Deconvolution, filter side for Convolution). */
static int64_t cv_out_count(const mxk_conv_param *p, const cu_cv_state *s) {
    return p->deconv ? s->g.img_count : s->g.fs_count;
}

/** The output side's tensor descriptor. */
static cudnnTensorDescriptor_t cv_out_desc(const mxk_conv_param *p, const cu_cv_state *s) {
    return p->deconv ? s->img_d : s->fs_d;
}

/**
 * Checks a call's data, weight and (when `bias`: the forward's, as the backward
 * does not read it and gets no bias memory) bias against the state's geometry.
 * Errors: cu_check_tensor's.
 */
static mxk_status cv_check_inputs(const mxk_conv_param *p, const cu_cv_state *s,
                                  const mxk_tensor *const *in, int bias, mxk_error_sink *err) {
    MXK_SDK_CHECK(
        cu_check_tensor(in[0], p->deconv ? s->g.fs_count : s->g.img_count, s->op, "the data", err));
    MXK_SDK_CHECK(cu_check_tensor(in[1], s->g.filt_count, s->op, "the weight", err));
    if (bias)
        MXK_SDK_CHECK(cu_check_tensor(in[2], s->g.bias_channels, s->op, "the bias", err));
    return MXK_OK;
}

/** y (=|+=) the convolution (Deconvolution: its transpose) of x and W, plus b. */
static mxk_status cv_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const mxk_conv_param *p = param;
    cu_cv_state *s = state;
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(cv_check_inputs(p, s, args->in_data, !p->no_bias, err));
    MXK_SDK_CHECK(cu_check_tensor(args->out_data[0], cv_out_count(p, s), s->op, "the output", err));
    cudnnHandle_t h;
    MXK_SDK_CHECK(cu_dnn_get(ctx, &h, err));
    const void *x = args->in_data[0]->data, *w = args->in_data[1]->data;
    void *y = args->out_data[0]->data;
    cu_cv_task t = {.dir = p->deconv ? CU_CV_BWD_DATA : CU_CV_FWD,
                    .in0 = p->deconv ? w : x,
                    .in1 = p->deconv ? x : w,
                    .out = y,
                    .beta = mxk_sdk_req_beta(req)};
    MXK_SDK_CHECK(cu_cv_execute(ctx, h, s, &t, 1, err));
    if (p->no_bias)
        return MXK_OK;
    const float one = 1.0f;
    CU_CHECK_DNN(
        cudnnAddTensor(h, &one, s->bias_d, args->in_data[2]->data, &one, cv_out_desc(p, s), y),
        "cudnnAddTensor (bias)", err);
    return MXK_OK;
}

/** Checks the requested gradients of a backward call. Errors: cu_check_tensor's. */
static mxk_status cv_check_grads(const mxk_conv_param *p, const cu_cv_state *s,
                                 const mxk_backward_args *args, mxk_error_sink *err) {
    static const char *const names[] = {"the data gradient", "the weight gradient",
                                        "the bias gradient"};
    const int64_t sizes[] = {p->deconv ? s->g.fs_count : s->g.img_count, s->g.filt_count,
                             s->g.bias_channels};
    for (uint32_t i = 0; i < cv_num_args(p); i++)
        if (args->req[i] != MXK_REQ_NULL)
            MXK_SDK_CHECK(cu_check_tensor(args->in_grad[i], sizes[i], s->op, names[i], err));
    return MXK_OK;
}

/** dW, then dx (one cuDNN pass over the requested directions), then db, each by its request. */
static mxk_status cv_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const mxk_conv_param *p = param;
    cu_cv_state *s = state;
    const mxk_op_req *req = args->req;
    int want_b = !p->no_bias && req[2] != MXK_REQ_NULL;
    if (req[0] == MXK_REQ_NULL && req[1] == MXK_REQ_NULL && !want_b)
        return MXK_OK;
    MXK_SDK_CHECK(cv_check_inputs(p, s, args->in_data, 0, err));
    MXK_SDK_CHECK(
        cu_check_tensor(args->out_grad[0], cv_out_count(p, s), s->op, "the output gradient", err));
    MXK_SDK_CHECK(cv_check_grads(p, s, args, err));
    cudnnHandle_t h;
    MXK_SDK_CHECK(cu_dnn_get(ctx, &h, err));
    const void *x = args->in_data[0]->data, *w = args->in_data[1]->data;
    const void *dy = args->out_grad[0]->data;
    cu_cv_task tasks[2];
    int n = 0;
    if (req[1] != MXK_REQ_NULL) /* backward filter (image side, filter side) */
        tasks[n++] = (cu_cv_task){.dir = CU_CV_BWD_FILTER,
                                  .in0 = p->deconv ? dy : x,
                                  .in1 = p->deconv ? x : dy,
                                  .out = args->in_grad[1]->data,
                                  .beta = mxk_sdk_req_beta(req[1])};
    if (req[0] != MXK_REQ_NULL) /* Convolution: backward data; Deconvolution: forward */
        tasks[n++] = (cu_cv_task){.dir = p->deconv ? CU_CV_FWD : CU_CV_BWD_DATA,
                                  .in0 = p->deconv ? dy : w,
                                  .in1 = p->deconv ? w : dy,
                                  .out = args->in_grad[0]->data,
                                  .beta = mxk_sdk_req_beta(req[0])};
    if (n > 0)
        MXK_SDK_CHECK(cu_cv_execute(ctx, h, s, tasks, n, err));
    if (!want_b)
        return MXK_OK;
    const float one = 1.0f, beta = mxk_sdk_req_beta(req[2]);
    CU_CHECK_DNN(cudnnConvolutionBackwardBias(h, &one, cv_out_desc(p, s), dy, &beta, s->bias_d,
                                              args->in_grad[2]->data),
                 "cudnnConvolutionBackwardBias", err);
    return MXK_OK;
}

/**
 * Registers the kernel of Convolution or Deconvolution (`deconv`); both handle
 * ADD themselves. Tolerance against cpu-blas: cuDNN's algorithms (implicit
 * GEMM, FFT, Winograd) sum in other orders and transforms than im2col + GEMM.
 */
static mxk_status cv_register(mxk_registrar *reg, int deconv, mxk_error_sink *err) {
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.op_name = deconv ? "Deconvolution" : "Convolution";
    k.flags = MXK_KERNEL_SUPPORTS_ADDTO;
    k.parse_param = deconv ? cu_cv_parse_deconv : cu_cv_parse_conv;
    k.free_param = cu_param_free;
    k.supports = cu_cv_supports;
    k.create_state = cu_cv_create_state;
    k.destroy_state = cu_cv_destroy_state;
    k.forward = cv_forward;
    k.backward = cv_backward;
    k.crosscheck_rtol = 1e-3;
    k.crosscheck_atol = 1e-4;
    return cu_register_kernel(reg, &k, err);
}

/** Registers Convolution and Deconvolution. */
mxk_status cu_register_conv(mxk_registrar *reg, mxk_error_sink *err) {
    MXK_SDK_CHECK(cv_register(reg, 0, err));
    return cv_register(reg, 1, err);
}
