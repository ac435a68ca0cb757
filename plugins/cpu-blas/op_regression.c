/*
 * cpu-blas plugin: LinearRegressionOutput, LogisticRegressionOutput,
 * MAERegressionOutput.
 *
 * Semantics: MXNet src/operator/regression_output-inl.h and regression_output.cc
 * Arguments data, label; output
 * `output` of data's shape: identity (Linear, MAE) or sigmoid (Logistic).
 * Label: data's shape, or (N,) for data (N,1) (inferred so when unknown); any
 * label with data's batch size and element count is accepted. Backward ignores
 * out_grad (a loss layer) and writes
 *   d data = grad_scale / m * (y - label)        Linear, Logistic
 *   d data = grad_scale / m * sign(y - label)    MAE
 * with m = label.size / label.shape[0]; the label gets a zero gradient.
 * Backward reads the label and the output; forward may run in place and
 * backward may write d data over the output.
 */
#include "cb_tensor.h"
#include "mxk_loss.h"
#include "norm_ops.h"

/** The three losses. */
enum reg_kind { REG_LINEAR, REG_LOGISTIC, REG_MAE };

/** Parsed attributes. */
typedef struct reg_param {
    int32_t kind; /**< enum reg_kind */
    float grad_scale;
} reg_param;

static const char *const reg_args[] = {"data", "label", NULL};

/** Attribute schema (MXNet 1.9.1 RegressionOutputParam). */
static const mxk_attr_def reg_attrs[] = {
    MXK_SDK_ATTR("grad_scale", MXK_ATTR_FLOAT, 0, "1", NULL,
                 "Scale the gradient by a float factor."),
};

/** Parses grad_scale. */
static mxk_status reg_parse(const mxk_attrs *attrs, int32_t kind, void **out, mxk_error_sink *err) {
    reg_param p = {kind, 0.0f};
    MXK_SDK_CHECK(cb_norm_attr_f32(attrs, "grad_scale", &p.grad_scale, err));
    return cbt_param_new(&p, sizeof p, out, err);
}
/** parse_param of LinearRegressionOutput. */
static mxk_status lin_parse(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return reg_parse(a, REG_LINEAR, o, e);
}
/** parse_param of LogisticRegressionOutput. */
static mxk_status logi_parse(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return reg_parse(a, REG_LOGISTIC, o, e);
}
/** parse_param of MAERegressionOutput. */
static mxk_status mae_parse(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return reg_parse(a, REG_MAE, o, e);
}

/** output = data; label as described in the file comment (RegressionOpShape). */
static mxk_status reg_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                  uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                  mxk_error_sink *err) {
    if (num_in != 2 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 2 arguments and 1 output");
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&in[0], &out[0], "argument", "data", err));
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[0], &in[0], "output", "output", err));
    const mxk_shape *d = &in[0];
    mxk_shape *l = &in[1];
    if (d->ndim == 0 || !mxk_sdk_shape_is_known(d))
        return MXK_OK;
    if (l->ndim == 0) {
        *l = d->ndim == 2 && d->dims[1] == 1 ? mxk_sdk_shape1(d->dims[0]) : *d;
        return MXK_OK;
    }
    if (mxk_sdk_shape_is_known(l) &&
        (l->dims[0] != d->dims[0] || mxk_sdk_shape_count(l) != mxk_sdk_shape_count(d))) {
        char e[MXK_SDK_SHAPE_STR_MAX], g[MXK_SDK_SHAPE_STR_MAX];
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'label': expected %s (or the same batch size and element "
                             "count), got %s",
                             mxk_sdk_shape_format(d, e, sizeof e),
                             mxk_sdk_shape_format(l, g, sizeof g));
    }
    return MXK_OK;
}

/** Backward reads the label and the output. */
static void reg_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                    uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                    uint8_t *need_out_data) {
    need_in_data[1] = 1;
    need_out_data[0] = 1;
}

/** y = x (Linear, MAE) or sigmoid(x) (Logistic) by request. */
static mxk_status reg_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const reg_param *p = param;
    MXK_SDK_CHECK(cbt_check_forward(args, 2, 1, reg_infer_shape, param, 0, err));
    const float *x = cb_f32(args->in_data[0]);
    float *y = cb_f32(args->out_data[0]);
    size_t n = (size_t)mxk_sdk_shape_count(&args->in_data[0]->shape);
    if (p->kind != REG_LOGISTIC) {
        mxk_sdk_copy_f32(y, x, n, args->req[0]);
        return MXK_OK;
    }
    for (size_t i = 0; i < n; i++)
        mxk_sdk_assign_f32(&y[i], mxk_loss_sigmoid(x[i]), args->req[0]);
    return MXK_OK;
}

/** d data = grad_scale/m * (y - label) or its sign; d label = 0. */
static mxk_status reg_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    const reg_param *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, 2, 1, 1, err));
    const mxk_tensor *yt = args->out_data[0], *lt = args->in_data[1];
    MXK_SDK_CHECK(cbt_zero_grad(args->in_grad[1], args->req[1], "label", err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(cb_check_tensor(yt, "output 'output'", err));
    MXK_SDK_CHECK(cb_check_tensor(lt, "argument 'label'", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req, &yt->shape, "data", err));
    uint64_t n = mxk_sdk_shape_count(&yt->shape);
    if (mxk_sdk_shape_count(&lt->shape) != n || lt->shape.ndim < 1)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "label and output differ in size");
    const float scale = p->grad_scale / (float)(n / (uint64_t)lt->shape.dims[0]);
    const float *y = cb_f32(yt), *l = cb_f32(lt);
    float *dx = cb_f32(args->in_grad[0]);
    for (uint64_t i = 0; i < n; i++)
        mxk_sdk_assign_f32(&dx[i], mxk_loss_regression_grad(y[i], l[i], p->kind == REG_MAE, scale),
                           req);
    return MXK_OK;
}

/** Registers one loss. */
static mxk_status reg_register_one(mxk_registrar *reg, const char *name, const char *doc,
                                   mxk_status (*parse)(const mxk_attrs *, void **,
                                                       mxk_error_sink *),
                                   mxk_error_sink *err) {
    mxk_op_def def;
    cbt_def_init(&def, doc, reg_attrs, MXK_SDK_COUNTOF(reg_attrs), reg_args, parse);
    def.infer_shape = reg_infer_shape;
    def.backward_dependency = reg_backward_dependency;
    def.forward_inplace = cbt_inplace_00;
    def.backward_inplace = cbt_inplace_loss_grad;
    return cbt_register(reg, &def, name, reg_forward, reg_backward, 0, err);
}

/** Registers the three regression outputs with their CPU kernels. */
mxk_status cb_register_regression(mxk_registrar *reg, mxk_error_sink *err) {
    MXK_SDK_CHECK(reg_register_one(reg, "LinearRegressionOutput",
                                   "Identity forward; squared-loss gradient (y - label).",
                                   lin_parse, err));
    MXK_SDK_CHECK(reg_register_one(reg, "LogisticRegressionOutput",
                                   "Sigmoid forward; logistic-loss gradient (y - label).",
                                   logi_parse, err));
    return reg_register_one(reg, "MAERegressionOutput",
                            "Identity forward; absolute-loss gradient sign(y - label).", mae_parse,
                            err);
}
