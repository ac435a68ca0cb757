/*
 * cuda plugin: GPU kernels of LinearRegressionOutput, LogisticRegressionOutput,
 * MAERegressionOutput (defined by cpu-blas, op_regression.c) and SVMOutput
 * (op_norm_loss.c).
 *
 * Semantics: MXNet src/operator/regression_output-inl.h (regression_output.cu) and
 * src/operator/svm_output-inl.h (svm_output.cu), as cpu-blas computes them:
 * forward identity (Linear, MAE, SVMOutput) or sigmoid (Logistic); backward
 * ignores out_grad and writes grad_scale / m (y - label) (MAE: its sign; m =
 * label.size / label.shape[0]) or the L1/L2 hinge gradient
 * (plugins/common/mxk_loss.h); the label gets a zero gradient. float32 only, as
 * the operators; every request is honoured (ADD included); forward may run in
 * place and backward may write over the output.
 */
#include <stdlib.h>

#include "cu_kern_loss.h"
#include "cuda_plugin.h"

/** The operators of this file. */
enum cu_reg_op { CU_REG_LINEAR, CU_REG_LOGISTIC, CU_REG_MAE, CU_REG_SVM };

/** The kernel's parameters. */
typedef struct cu_reg_param {
    int32_t op;         /**< enum cu_reg_op */
    float grad_scale;   /**< regression outputs */
    float margin, coef; /**< SVMOutput */
    int32_t use_linear; /**< SVMOutput */
} cu_reg_param;

/** Parses the attributes of operator `op`. */
static mxk_status reg_parse(const mxk_attrs *attrs, int32_t op, void **out, mxk_error_sink *err) {
    cu_reg_param p = {.op = op};
    if (op == CU_REG_SVM) {
        MXK_SDK_CHECK(cu_attr_float32(attrs, "margin", &p.margin, err));
        MXK_SDK_CHECK(cu_attr_float32(attrs, "regularization_coefficient", &p.coef, err));
        MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "use_linear", &p.use_linear, err));
    } else {
        MXK_SDK_CHECK(cu_attr_float32(attrs, "grad_scale", &p.grad_scale, err));
    }
    return cu_param_dup(&p, sizeof p, out, err);
}

/* One parse_param per operator. */
CU_PARSE_AS(lin_parse, reg_parse, CU_REG_LINEAR)
CU_PARSE_AS(logi_parse, reg_parse, CU_REG_LOGISTIC)
CU_PARSE_AS(mae_parse, reg_parse, CU_REG_MAE)
CU_PARSE_AS(svm_parse, reg_parse, CU_REG_SVM)

/** Forward: y = x (nothing to do in place) or sigmoid(x), by the request. */
static mxk_status reg_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_reg_param *p = param;
    if (args->num_in != 2 || args->num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 2 arguments and 1 output");
    const mxk_tensor *x = args->in_data[0];
    float *y = args->out_data[0]->data;
    mxk_op_req req = args->req[0];
    uint64_t n = mxk_sdk_shape_count(&x->shape);
    int logistic = p->op == CU_REG_LOGISTIC;
    if (req == MXK_REQ_NULL || n == 0 || (!logistic && y == x->data && req != MXK_REQ_ADD))
        return MXK_OK;
    MXK_SDK_CHECK(cu_enter(ctx, err));
    cudaError_t rc = logistic
                         ? cu_launch_sigmoid(x->data, y, req, n, cu_stream(ctx))
                         : cu_launch_loss_diff(x->data, NULL, 1.0f, 0, y, req, n, cu_stream(ctx));
    CU_CHECK(rc, "loss forward kernel", err);
    return MXK_OK;
}

/** Backward: the gradient of the file comment by the request; the label's is zero. */
static mxk_status reg_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_reg_param *p = param;
    if (args->num_in != 2 || args->num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 2 arguments and 1 output");
    MXK_SDK_CHECK(cu_enter(ctx, err));
    cudaStream_t st = cu_stream(ctx);
    const mxk_tensor *lg = args->in_grad[1];
    if (args->req[1] == MXK_REQ_WRITE || args->req[1] == MXK_REQ_INPLACE)
        CU_CHECK(cudaMemsetAsync(lg->data, 0, mxk_sdk_shape_count(&lg->shape) * sizeof(float), st),
                 "cudaMemsetAsync", err);
    mxk_op_req req = args->req[0];
    const mxk_tensor *yt = args->out_data[0], *lt = args->in_data[1];
    uint64_t n = mxk_sdk_shape_count(&yt->shape), nl = mxk_sdk_shape_count(&lt->shape);
    if (req == MXK_REQ_NULL || n == 0)
        return MXK_OK;
    float *g = args->in_grad[0]->data;
    cudaError_t rc;
    if (p->op == CU_REG_SVM) {
        uint64_t k = yt->shape.ndim >= 2 ? (uint64_t)yt->shape.dims[yt->shape.ndim - 1] : 0;
        if (k == 0 || nl != n / k)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "argument 'label': expected %llu elements, got %llu",
                                 (unsigned long long)(k ? n / k : 0), (unsigned long long)nl);
        rc = cu_launch_svm_grad(yt->data, lt->data, g, req, n / k, k, p->margin, p->coef,
                                p->use_linear, st);
    } else {
        if (nl != n || lt->shape.ndim < 1)
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "label and output differ in size");
        float scale = p->grad_scale / (float)(n / (uint64_t)lt->shape.dims[0]);
        rc = cu_launch_regression_grad(yt->data, lt->data, g, req, n, scale, p->op == CU_REG_MAE,
                                       st);
    }
    CU_CHECK(rc, "loss gradient kernel", err);
    return MXK_OK;
}

mxk_status cu_register_regression(mxk_registrar *reg, mxk_error_sink *err) {
    static const cu_op_entry ops[] = {{"LinearRegressionOutput", lin_parse},
                                      {"LogisticRegressionOutput", logi_parse},
                                      {"MAERegressionOutput", mae_parse},
                                      {"SVMOutput", svm_parse}};
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.flags = MXK_KERNEL_SUPPORTS_ADDTO;
    k.supports = cu_supports_float32;
    k.forward = reg_forward;
    k.backward = reg_backward;
    return cu_register_each(reg, &k, ops, MXK_SDK_COUNTOF(ops), err);
}
