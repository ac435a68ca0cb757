/*
 * cpu-blas plugin: MakeLoss, make_loss, SVMOutput, softmax_cross_entropy.
 *
 * MakeLoss (MXNet src/operator/make_loss-inl.h): argument data, output `output` =
 * data (in place allowed). Backward ignores out_grad and writes the constant
 *   null: grad_scale;  batch: grad_scale / (size / last dim), upstream's FlatTo2D
 *   rows;  valid: grad_scale / max(1, number of elements > valid_thresh)
 * (valid reads data; the others read nothing).
 * make_loss (src/operator/tensor/elemwise_unary_op_basic.cc, another operator
 * upstream): no attributes, output `loss` = data (in place, an identity), gradient
 * ones_like(data).
 * SVMOutput (src/operator/svm_output-inl.h, svm_output.cc): arguments data (rows
 * of the last dim k), label (data's shape minus the last dim, class indices);
 * output `output` = data. Backward ignores out_grad; for row r with class c =
 * (int)label[r] (none when out of [0, k)), margin M, coefficient C, value s:
 *   L2 (default): class -2C max(M - s, 0);  others 2C max(M + s, 0)
 *   L1 (use_linear): class -C [M > s];      others C [M > -s]
 * by the request (upstream 1.9.1 overwrites even for ADD; not followed); the label
 * gets a zero gradient. It reads the label and the output.
 * softmax_cross_entropy (src/operator/loss_binary_op-inl.h): data (N, K), label
 * (N,), both needed for inference (upstream infers neither); output (1,) =
 * sum_r -log(max(softmax(data_r)[label_r], 1e-8)). Backward: d data = out_grad[0] *
 * (softmax(data) - onehot(label)); a gradient of the label is an error, as
 * upstream. A label outside [0, K) is an error (upstream reads out of bounds).
 */
#include <math.h>
#include <string.h>

#include "cb_tensor.h"
#include "mxk_loss.h"
#include "norm_ops.h"

/* --- MakeLoss / make_loss ------------------------------------------------------ */

/** MakeLoss normalization values, in the order of the enum string. */
enum ml_norm { ML_NULL, ML_BATCH, ML_VALID };
#define ML_NORMS "null|batch|valid"

/** Parsed MakeLoss attributes (make_loss: grad_scale 1, null). */
typedef struct ml_param {
    double grad_scale;
    double valid_thresh;
    int32_t normalization; /**< enum ml_norm */
} ml_param;

static const char *const ml_args[] = {"data", NULL};
static const char *const ml_loss_outs[] = {"loss", NULL};
/** make_loss's alias (MXNET_ADD_SPARSE_OP_ALIAS). */
static const char *const ml_loss_aliases[] = {"_sparse_make_loss", NULL};

/** MakeLoss attributes (MXNet 1.9.1 MakeLossParam). */
static const mxk_attr_def ml_attrs[] = {
    MXK_SDK_ATTR("grad_scale", MXK_ATTR_FLOAT, 0, "1", NULL,
                 "Gradient scale as a supplement to unary and binary operators"),
    MXK_SDK_ATTR("valid_thresh", MXK_ATTR_FLOAT, 0, "0", NULL,
                 "clip each element in the array to 0 when it is less than ``valid_thresh``."),
    MXK_SDK_ATTR("normalization", MXK_ATTR_ENUM, 0, "null", ML_NORMS,
                 "null: no normalisation; batch: divided by the batch size; valid: by the "
                 "number of valid input elements."),
};

/** Parses MakeLoss's attributes (finite values; float32 upstream, rounded to float). */
static mxk_status ml_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    ml_param p;
    float gs = 0.0f, vt = 0.0f;
    MXK_SDK_CHECK(cb_norm_attr_f32(attrs, "grad_scale", &gs, err));
    MXK_SDK_CHECK(cb_norm_attr_f32(attrs, "valid_thresh", &vt, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "normalization", ML_NORMS, &p.normalization, err));
    p.grad_scale = gs;
    p.valid_thresh = vt;
    return cbt_param_new(&p, sizeof p, out, err);
}

/** Backward reads data with normalization 'valid', nothing otherwise (make_loss: nothing). */
static void ml_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    const ml_param *p = param;
    need_in_data[0] = p != NULL && p->normalization == ML_VALID;
}

/** Forward: output = data (nothing to do in place). */
static mxk_status ml_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    return cbt_copy_forward(args, cbt_infer_shape_same, param, err);
}

/** Backward: the constant gradient of the file comment, by the request. */
static mxk_status ml_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const ml_param *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, 1, 1, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *g = args->in_grad[0];
    MXK_SDK_CHECK(cb_check_tensor(g, "gradient of 'data'", err));
    uint64_t n = mxk_sdk_shape_count(&g->shape);
    double v = p != NULL ? p->grad_scale : 1.0;
    if (p != NULL && p->normalization == ML_BATCH && g->shape.ndim > 0) {
        uint64_t last = (uint64_t)g->shape.dims[g->shape.ndim - 1];
        v /= (double)(last > 0 ? n / last : 1);
    } else if (p != NULL && p->normalization == ML_VALID) {
        MXK_SDK_CHECK(cb_check_tensor(args->in_data[0], "argument 'data'", err));
        MXK_SDK_CHECK(cbt_check_grad_like(g, req, args->in_data[0], "data", err));
        const float *x = cb_f32(args->in_data[0]);
        uint64_t cnt = 0;
        for (uint64_t i = 0; i < n; i++)
            cnt += x[i] > p->valid_thresh;
        v /= (double)(cnt > 0 ? cnt : 1);
    }
    mxk_sdk_fill_f32(cb_f32(g), cb_norm_f32(v), (size_t)n, req);
    return MXK_OK;
}

/* --- SVMOutput ------------------------------------------------------------------- */

/** Parsed SVMOutput attributes. */
typedef struct svm_param {
    float margin, coef;
    int32_t use_linear;
} svm_param;

static const char *const two_args[] = {"data", "label", NULL};
static const char *const one_out[] = {"output", NULL};

/** SVMOutput attributes (MXNet 1.9.1 SVMOutputParam). */
static const mxk_attr_def svm_attrs[] = {
    MXK_SDK_ATTR("margin", MXK_ATTR_FLOAT, 0, "1", NULL,
                 "The loss function penalizes outputs that lie outside this margin."),
    MXK_SDK_ATTR("regularization_coefficient", MXK_ATTR_FLOAT, 0, "1", NULL,
                 "Regularization parameter for the SVM."),
    MXK_SDK_ATTR("use_linear", MXK_ATTR_BOOL, 0, "False", NULL,
                 "Whether to use L1-SVM objective. L2-SVM objective is used by default."),
};

/** Parses SVMOutput's attributes (finite). */
static mxk_status svm_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    svm_param p;
    MXK_SDK_CHECK(cb_norm_attr_f32(attrs, "margin", &p.margin, err));
    MXK_SDK_CHECK(cb_norm_attr_f32(attrs, "regularization_coefficient", &p.coef, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "use_linear", &p.use_linear, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** output = data (both ways); label = data's shape minus the last dim (data needs 2+ dims). */
static mxk_status svm_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                  uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                  mxk_error_sink *err) {
    if (num_in != 2 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 2 arguments and 1 output");
    MXK_SDK_CHECK(mxk_sdk_infer_shape_same(in, 1, two_args, out, 1, one_out, err));
    if (in[0].ndim == 0)
        return MXK_OK;
    if (in[0].ndim < 2)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "SVMOutput: argument 'data' needs at least 2 dims (rows, classes), "
                             "got %d",
                             (int)in[0].ndim);
    mxk_shape l = in[0];
    l.ndim--;
    l.dims[l.ndim] = 0;
    return mxk_sdk_shape_assign_named(&in[1], &l, "argument", "label", err);
}

/** Backward reads the label and the output. */
static void svm_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                    uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                    uint8_t *need_out_data) {
    need_in_data[1] = 1;
    need_out_data[0] = 1;
}

/** Forward: output = data. */
static mxk_status svm_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cbt_check_forward(args, 2, 1, svm_infer_shape, param, 0, err));
    const mxk_tensor *x = args->in_data[0];
    if (args->out_data[0]->data != x->data || args->req[0] == MXK_REQ_ADD)
        mxk_sdk_copy_f32(cb_f32(args->out_data[0]), cb_f32(x),
                         (size_t)mxk_sdk_shape_count(&x->shape), args->req[0]);
    return MXK_OK;
}

/** Backward: the hinge gradients of the file comment by the request; label gradient 0. */
static mxk_status svm_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    const svm_param *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, 2, 1, 1, err));
    MXK_SDK_CHECK(cbt_zero_grad(args->in_grad[1], args->req[1], "label", err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *yt = args->out_data[0], *lt = args->in_data[1];
    MXK_SDK_CHECK(cb_check_tensor(yt, "output 'output'", err));
    MXK_SDK_CHECK(cb_check_tensor(lt, "argument 'label'", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req, &yt->shape, "data", err));
    if (yt->shape.ndim < 2)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "output 'output': expected at least 2 dims");
    uint64_t n = mxk_sdk_shape_count(&yt->shape), k = (uint64_t)yt->shape.dims[yt->shape.ndim - 1];
    uint64_t rows = k > 0 ? n / k : 0;
    if (mxk_sdk_shape_count(&lt->shape) != rows)
        return mxk_sdk_error(
            err, MXK_ERR_SHAPE, "argument 'label': expected %llu elements, got %llu",
            (unsigned long long)rows, (unsigned long long)mxk_sdk_shape_count(&lt->shape));
    const float *y = cb_f32(yt), *lab = cb_f32(lt);
    float *g = cb_f32(args->in_grad[0]);
    const float M = p->margin, C = p->coef;
    for (uint64_t r = 0; r < rows; r++) {
        int64_t c = mxk_loss_class(lab[r], k);
        for (uint64_t j = 0; j < k; j++)
            mxk_sdk_assign_f32(
                &g[r * k + j],
                mxk_loss_svm_grad(y[r * k + j], (int64_t)j == c, M, C, p->use_linear), req);
    }
    return MXK_OK;
}

/* --- softmax_cross_entropy ------------------------------------------------------------ */

/** data (N, K) and label (N,), both known; output (1,). Errors as upstream's messages. */
static mxk_status sce_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                  uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                  mxk_error_sink *err) {
    if (num_in != 2 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 2 arguments and 1 output");
    mxk_shape one = mxk_sdk_shape1(1);
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[0], &one, "output", "output", err));
    if (in[0].ndim != 0 && in[0].ndim != 2)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "SoftmaxCrossEntropy only accept 2D data, got %d dims",
                             (int)in[0].ndim);
    if (in[1].ndim != 0 && in[1].ndim != 1)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "SoftmaxCrossEntropy only accept 1D label, got %d dims",
                             (int)in[1].ndim);
    if (in[0].ndim == 2 && in[1].ndim == 1 && in[0].dims[0] != 0 && in[1].dims[0] != 0 &&
        in[0].dims[0] != in[1].dims[0])
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "SoftmaxCrossEntropy: data label shape mismatch: %lld rows, %lld "
                             "labels",
                             (long long)in[0].dims[0], (long long)in[1].dims[0]);
    return MXK_OK;
}

/** Backward reads out_grad, data and label (upstream's ElemwiseGradUseIn). */
static void sce_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                    uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                    uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    need_in_data[0] = 1;
    need_in_data[1] = 1;
}

/**
 * Softmax of row x (k values) into p (doubles); returns the class of `label`, or
 * MXK_ERR_INVALID_ARGUMENT naming the row when it is outside [0, k).
 */
static mxk_status sce_row(const float *x, uint64_t k, float label, uint64_t row, double *p,
                          int64_t *cls, mxk_error_sink *err) {
    *cls = mxk_loss_class(label, k);
    if (*cls < 0)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "softmax_cross_entropy: label %g of row %llu is outside [0, %llu)",
                             (double)label, (unsigned long long)row, (unsigned long long)k);
    float mx = x[0];
    for (uint64_t j = 1; j < k; j++)
        mx = fmaxf(mx, x[j]);
    double s = 0.0;
    for (uint64_t j = 0; j < k; j++)
        s += p[j] = exp((double)x[j] - mx);
    for (uint64_t j = 0; j < k; j++)
        p[j] /= s;
    return MXK_OK;
}

/** Temp space: K doubles (one softmax row), forward and backward. */
static mxk_status sce_resources(const void *param, const mxk_shape *in_shapes, uint32_t num_in,
                                mxk_resource_request *reqs, uint32_t *num, mxk_error_sink *err) {
    uint32_t n = 0;
    uint64_t k = num_in > 0 && in_shapes[0].ndim == 2 ? (uint64_t)in_shapes[0].dims[1] : 0;
    mxk_sdk_resource_add(reqs, *num, &n, MXK_RESOURCE_TEMP_SPACE, (k > 0 ? k : 1) * sizeof(double));
    *num = n;
    return MXK_OK;
}

/** The (N, K) sizes of a checked data tensor and a softmax row of temp space. */
static mxk_status sce_begin(const mxk_op_ctx *ctx, const mxk_tensor *x, const mxk_tensor *l,
                            uint64_t *N, uint64_t *K, double **row, mxk_error_sink *err) {
    MXK_SDK_CHECK(cb_check_tensor(x, "argument 'data'", err));
    MXK_SDK_CHECK(cb_check_tensor(l, "argument 'label'", err));
    mxk_shape in[2] = {x->shape, l->shape}, out = mxk_sdk_shape_unknown();
    MXK_SDK_CHECK(sce_infer_shape(NULL, in, 2, &out, 1, NULL, 0, err));
    if (x->shape.ndim != 2 || l->shape.ndim != 1)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "SoftmaxCrossEntropy: shapes are not known");
    *N = (uint64_t)x->shape.dims[0];
    *K = (uint64_t)x->shape.dims[1];
    void *ws = NULL;
    MXK_SDK_CHECK(mxk_sdk_host()->temp_space(ctx, (*K > 0 ? *K : 1) * sizeof(double), &ws, err));
    *row = ws;
    return MXK_OK;
}

/** Forward: the summed cross entropy into the (1,) output by the request. */
static mxk_status sce_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cbt_check_forward(args, 2, 1, sce_infer_shape, param, 0, err));
    uint64_t N, K;
    double *p;
    MXK_SDK_CHECK(sce_begin(ctx, args->in_data[0], args->in_data[1], &N, &K, &p, err));
    const float *x = cb_f32(args->in_data[0]), *lab = cb_f32(args->in_data[1]);
    double loss = 0.0;
    for (uint64_t r = 0; r < N && K > 0; r++) {
        int64_t c;
        MXK_SDK_CHECK(sce_row(x + r * K, K, lab[r], r, p, &c, err));
        loss -= log(fmax((double)(float)p[c], 1e-8));
    }
    mxk_sdk_assign_f32(cb_f32(args->out_data[0]), cb_norm_f32(loss), args->req[0]);
    return MXK_OK;
}

/** Backward: d data = out_grad[0] (softmax - onehot); a label gradient is refused. */
static mxk_status sce_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cb_check_backward_counts(args, 2, 1, 1, err));
    if (args->req[1] != MXK_REQ_NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "SoftmaxCrossEntropy: Cannot take gradient wrt label");
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    uint64_t N, K;
    double *p;
    MXK_SDK_CHECK(sce_begin(ctx, args->in_data[0], args->in_data[1], &N, &K, &p, err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req, &args->in_data[0]->shape, "data", err));
    MXK_SDK_CHECK(cb_check_tensor(args->out_grad[0], "gradient of 'output'", err));
    if (mxk_sdk_shape_count(&args->out_grad[0]->shape) != 1)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "gradient of 'output': expected (1,)");
    const float *x = cb_f32(args->in_data[0]), *lab = cb_f32(args->in_data[1]);
    const double s = cb_f32(args->out_grad[0])[0];
    float *g = cb_f32(args->in_grad[0]);
    for (uint64_t r = 0; r < N && K > 0; r++) {
        int64_t c;
        MXK_SDK_CHECK(sce_row(x + r * K, K, lab[r], r, p, &c, err));
        for (uint64_t j = 0; j < K; j++)
            mxk_sdk_assign_f32(&g[r * K + j], cb_norm_f32(s * (p[j] - ((int64_t)j == c))), req);
    }
    return MXK_OK;
}

/* --- registration -------------------------------------------------------------------- */

/** Registers MakeLoss, make_loss, SVMOutput and softmax_cross_entropy with CPU kernels. */
mxk_status cb_register_norm_loss(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_def def;
    cbt_def_init(&def, "Makes its input a loss: output = data, gradient a constant.", ml_attrs,
                 MXK_SDK_COUNTOF(ml_attrs), ml_args, ml_parse);
    def.infer_shape = cbt_infer_shape_same;
    def.backward_dependency = ml_backward_dependency;
    def.forward_inplace = cbt_inplace_00;
    MXK_SDK_CHECK(cbt_register(reg, &def, "MakeLoss", ml_forward, ml_backward, 0, err));

    cbt_def_init(&def, "Makes its input a loss: output = data, gradient ones.", NULL, 0, ml_args,
                 NULL);
    def.free_param = NULL;
    def.outputs = ml_loss_outs;
    def.infer_shape = cbt_infer_shape_same;
    def.backward_dependency = ml_backward_dependency;
    def.forward_inplace = cbt_inplace_identity_00;
    def.aliases = ml_loss_aliases;
    MXK_SDK_CHECK(cbt_register(reg, &def, "make_loss", ml_forward, ml_backward, 0, err));

    cbt_def_init(&def, "Identity forward; hinge-loss (L1 or L2 SVM) gradient.", svm_attrs,
                 MXK_SDK_COUNTOF(svm_attrs), two_args, svm_parse);
    def.infer_shape = svm_infer_shape;
    def.backward_dependency = svm_backward_dependency;
    def.forward_inplace = cbt_inplace_00;
    def.backward_inplace = cbt_inplace_loss_grad;
    MXK_SDK_CHECK(cbt_register(reg, &def, "SVMOutput", svm_forward, svm_backward, 0, err));

    cbt_def_init(&def, "Sum over the batch of the cross entropy of softmax(data) and the label.",
                 NULL, 0, two_args, NULL);
    def.free_param = NULL;
    def.infer_shape = sce_infer_shape;
    def.backward_dependency = sce_backward_dependency;
    def.forward_resources = sce_resources;
    def.backward_resources = sce_resources;
    return cbt_register(reg, &def, "softmax_cross_entropy", sce_forward, sce_backward, 0, err);
}
