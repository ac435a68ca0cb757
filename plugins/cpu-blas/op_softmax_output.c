/*
 * cpu-blas plugin: SoftmaxOutput (softmax forward, cross-entropy gradient backward).
 *
 * Semantics: MXNet src/operator/softmax_output-inl.h, softmax_output.cc and
 * mshadow's SoftmaxGrad (3rdparty/mshadow/mshadow/tensor_cpu-inl.h).
 * Arguments data, label; output `output`
 * (data's shape). The softmax runs over groups of `k` elements of stride
 * `inner`, `outer` groups of them:
 *   default        data viewed as (N, size/N): outer N, k size/N, inner 1;
 *                  label (N,) (inference's default: data shape minus its last axis)
 *   preserve_shape over the last axis: outer size/last, k last, inner 1;
 *                  label = data shape minus the last axis
 *   multi_output   over axis 1 of (n, k, rest): outer n, inner rest;
 *                  label (n, rest), also accepted (n, rest dims...) or (n, 1, rest dims...)
 * A label of data's shape holds probabilities: grad = (y - label) * grad_scale.
 * Otherwise labels are class indices (float, truncated to int): grad = y - onehot,
 * or with smooth_alpha a (not in multi_output mode, which upstream does not
 * smooth): y - (1 - a) for the class and y - a/(k-1) elsewhere;
 * rows whose label equals ignore_label get 0 when use_ignore. The result is
 * scaled by grad_scale / valid_cnt (normalization: null 1, batch = number of
 * labels, valid = labels != ignore_label, at least 1; multi_output divides null
 * by `rest` too). The incoming out_grad is ignored: with out_grad=True the
 * gradient is multiplied by the OUTPUT y, as upstream 1.9.1 does (its
 * SoftmaxOutputGradCompute passes the output as out_grad; the documented
 * "multiplies with the output gradient" is not what it computes). The label gets
 * a zero gradient.
 * Labels outside [0, k) select no class (as mshadow's loops do).
 * Data of more than 2 dims in the default mode: softmax over (N, size/N) rows
 * with the label (N, d1..) of inference, of which row i uses element i (the
 * first N, as upstream's flat 1-D label view); batch/valid count all labels.
 */
#include <math.h>
#include <string.h>

#include "cb_tensor.h"
#include "mxk_loss.h"
#include "norm_ops.h"

/** normalization values, in the order of the enum string. */
enum smo_norm { SMO_NULL, SMO_BATCH, SMO_VALID };
#define SMO_NORMS "null|batch|valid"

/** Parsed attributes of SoftmaxOutput. */
typedef struct smo_param {
    double grad_scale;
    double ignore_label;
    int32_t multi_output;
    int32_t use_ignore;
    int32_t preserve_shape;
    int32_t normalization; /**< enum smo_norm */
    int32_t out_grad;
    double smooth_alpha;
} smo_param;

static const char *const smo_args[] = {"data", "label", NULL};
static const char *const smo_outs[] = {"output", NULL};
/** Upstream's add_alias names (softmax_output.cc). */
static const char *const smo_aliases[] = {"Softmax", NULL};

/** Attribute schema (MXNet 1.9.1 SoftmaxOutputParam). */
static const mxk_attr_def smo_attrs[] = {
    MXK_SDK_ATTR("grad_scale", MXK_ATTR_FLOAT, 0, "1", NULL,
                 "Scales the gradient by a float factor."),
    MXK_SDK_ATTR("ignore_label", MXK_ATTR_FLOAT, 0, "-1", NULL,
                 "The instances whose labels == ignore_label are ignored during backward, if "
                 "use_ignore is set to true."),
    MXK_SDK_ATTR("multi_output", MXK_ATTR_BOOL, 0, "False", NULL,
                 "If true, the softmax is computed along axis 1."),
    MXK_SDK_ATTR("use_ignore", MXK_ATTR_BOOL, 0, "False", NULL,
                 "If true, the ignore_label value does not contribute to the gradient."),
    MXK_SDK_ATTR("preserve_shape", MXK_ATTR_BOOL, 0, "False", NULL,
                 "If true, the softmax is computed along the last axis."),
    MXK_SDK_ATTR("normalization", MXK_ATTR_ENUM, 0, "null", SMO_NORMS, "Normalizes the gradient."),
    MXK_SDK_ATTR("out_grad", MXK_ATTR_BOOL, 0, "False", NULL,
                 "Multiplies the gradient with the output gradient element-wise."),
    MXK_SDK_ATTR("smooth_alpha", MXK_ATTR_FLOAT, 0, "0", NULL,
                 "Label smoothing: the true class gets 1 - alpha, the others alpha/(k-1)."),
};

/** Parses the attributes; smooth_alpha must be in [0, 1] (upstream's bound). */
static mxk_status smo_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    smo_param p;
    float gs = 0.0f;
    MXK_SDK_CHECK(cb_norm_attr_f32(attrs, "grad_scale", &gs, err));
    p.grad_scale = gs;
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "ignore_label", &p.ignore_label, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "multi_output", &p.multi_output, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "use_ignore", &p.use_ignore, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "preserve_shape", &p.preserve_shape, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "normalization", SMO_NORMS, &p.normalization, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "out_grad", &p.out_grad, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "smooth_alpha", &p.smooth_alpha, err));
    if (!(p.smooth_alpha >= 0.0 && p.smooth_alpha <= 1.0))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'smooth_alpha': must be in [0, 1], got %g", p.smooth_alpha);
    if (!(fabs(p.ignore_label) < 2147483648.0))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'ignore_label': must be a finite value in the int32 range, "
                             "got %g",
                             p.ignore_label);
    return cbt_param_new(&p, sizeof p, out, err);
}

/** Reports a label shape that fits none of the accepted forms. */
static mxk_status smo_label_error(const mxk_shape *a, const mxk_shape *b, const mxk_shape *got,
                                  mxk_error_sink *err) {
    char e1[MXK_SDK_SHAPE_STR_MAX], e2[MXK_SDK_SHAPE_STR_MAX], g[MXK_SDK_SHAPE_STR_MAX];
    return mxk_sdk_error(err, MXK_ERR_SHAPE, "argument 'label': expected %s or %s, got %s",
                         mxk_sdk_shape_format(a, e1, sizeof e1),
                         mxk_sdk_shape_format(b, e2, sizeof e2),
                         mxk_sdk_shape_format(got, g, sizeof g));
}

/**
 * Shape inference: output = data (both directions); label: data's shape
 * (probabilities) or the index-label shapes of the mode (see the file comment).
 * data needs at least 2 dims (batch first).
 */
static mxk_status smo_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                  uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                  mxk_error_sink *err) {
    const smo_param *p = param;
    if (num_in != 2 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "SoftmaxOutput expects 2 arguments and 1 output");
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&in[0], &out[0], "argument", "data", err));
    mxk_shape *d = &in[0], *l = &in[1];
    if (d->ndim == 0)
        return MXK_OK;
    if (d->ndim < 2) {
        char s[MXK_SDK_SHAPE_STR_MAX];
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'data': expected at least 2 dims (batch first), got %s",
                             mxk_sdk_shape_format(d, s, sizeof s));
    }
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[0], d, "output", "output", err));
    if (l->ndim == d->ndim && mxk_sdk_shape_merge(l, d, l))
        return MXK_OK; /* probabilities (or multi_output's (n,1,rest) form) */
    if (p->multi_output) {
        int64_t rest = (int64_t)mxk_sdk_shape_prod(d, 2, d->ndim);
        mxk_shape l1 = mxk_sdk_shape2(d->dims[0], rest);
        mxk_shape l2 = mxk_sdk_shape_unknown(), l3 = *d;
        l2.ndim = d->ndim - 1;
        l2.dims[0] = d->dims[0];
        for (int32_t i = 2; i < d->ndim; i++)
            l2.dims[i - 1] = d->dims[i];
        l3.dims[1] = 1;
        if (mxk_sdk_shape_merge(l, &l1, l) || mxk_sdk_shape_merge(l, &l2, l) ||
            mxk_sdk_shape_merge(l, &l3, l))
            return MXK_OK;
        return smo_label_error(&l1, &l2, l, err);
    }
    mxk_shape ls = *d;
    ls.ndim = d->ndim - 1;
    ls.dims[ls.ndim] = 0;
    if (mxk_sdk_shape_merge(l, &ls, l))
        return MXK_OK;
    return smo_label_error(&ls, d, l, err);
}

/** All float32 (labels are float32 too, as in MXNet's uniform-type rule). */
static mxk_status smo_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                 uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in, num_in, smo_args, out, num_out, smo_outs,
                                      aux, num_aux, err);
}

/** Backward reads the label and the output (never out_grad, see the file comment). */
static void smo_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                    uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                    uint8_t *need_out_data) {
    need_in_data[1] = 1;
    need_out_data[0] = 1;
}

/** The (outer, k, inner) view of the softmax over a data shape. */
typedef struct smo_view {
    size_t outer, k, inner;
} smo_view;

/** Computes the view of data shape `d` (at least 2 dims) for the mode. */
static smo_view smo_view_of(const smo_param *p, const mxk_shape *d) {
    smo_view v;
    size_t total = (size_t)mxk_sdk_shape_count(d);
    if (p->multi_output) {
        v.outer = (size_t)d->dims[0];
        v.k = (size_t)d->dims[1];
        v.inner = total / v.outer / v.k;
    } else if (p->preserve_shape) {
        v.k = (size_t)d->dims[d->ndim - 1];
        v.outer = total / v.k;
        v.inner = 1;
    } else {
        v.outer = (size_t)d->dims[0];
        v.k = total / v.outer;
        v.inner = 1;
    }
    return v;
}

/** Softmax of each group into y by the request; y may equal x (three passes, each reads i before
 * writing i). */
static mxk_status smo_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const smo_param *p = param;
    MXK_SDK_CHECK(cb_check_forward(args, 2, 1, smo_args, smo_outs, smo_infer_shape, param, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    smo_view v = smo_view_of(p, &args->in_data[0]->shape);
    const float *x = cb_f32(args->in_data[0]);
    float *y = cb_f32(args->out_data[0]);
    for (size_t o = 0; o < v.outer; o++) {
        for (size_t r = 0; r < v.inner; r++) {
            size_t base = o * v.k * v.inner + r, st = v.inner;
            float mx = x[base];
            for (size_t j = 1; j < v.k; j++)
                mx = fmaxf(mx, x[base + j * st]);
            double sum = 0.0;
            for (size_t j = 0; j < v.k; j++)
                sum += (double)expf(x[base + j * st] - mx);
            float inv = (float)(1.0 / sum);
            for (size_t j = 0; j < v.k; j++)
                mxk_sdk_assign_f32(&y[base + j * st], expf(x[base + j * st] - mx) * inv, req);
        }
    }
    return MXK_OK;
}

/**
 * Gradient of the data by the request (in place when in_grad == output):
 * probability labels or class labels (see the file comment). The label's
 * gradient, when requested, is zero.
 */
static mxk_status smo_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    const smo_param *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, 2, 1, 1, err));
    const mxk_op_req *req = args->req;
    const mxk_tensor *yt = args->out_data[0], *lt = args->in_data[1];
    if (req[1] != MXK_REQ_NULL) {
        MXK_SDK_CHECK(cb_check_tensor(args->in_grad[1], "gradient of 'label'", err));
        mxk_sdk_fill_f32(cb_f32(args->in_grad[1]), 0.0f,
                         (size_t)mxk_sdk_shape_count(&args->in_grad[1]->shape), req[1]);
    }
    if (req[0] == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(cb_check_tensor(yt, "output 'output'", err));
    MXK_SDK_CHECK(cb_check_tensor(lt, "argument 'label'", err));
    if (yt->shape.ndim < 2 || !mxk_sdk_shape_is_known(&yt->shape))
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "output 'output': expected at least 2 dims");
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req[0], &yt->shape, "data", err));
    const float *y = cb_f32(yt), *lab = cb_f32(lt);
    const float *dy = p->out_grad ? y : NULL; /* upstream's factor (see the file comment) */
    float *g = cb_f32(args->in_grad[0]);
    mxk_op_req rq = req[0];
    size_t total = (size_t)mxk_sdk_shape_count(&yt->shape);

    if (mxk_sdk_shape_equal(&lt->shape, &yt->shape)) { /* probability labels */
        float s = (float)p->grad_scale;
        for (size_t i = 0; i < total; i++) {
            float v = (y[i] - lab[i]) * s;
            mxk_sdk_assign_f32(&g[i], dy ? v * dy[i] : v, rq);
        }
        return MXK_OK;
    }

    smo_view v = smo_view_of(p, &yt->shape);
    size_t nlab = v.outer * v.inner, ncount = (size_t)mxk_sdk_shape_count(&lt->shape);
    if (ncount < nlab) {
        char a[MXK_SDK_SHAPE_STR_MAX], b[MXK_SDK_SHAPE_STR_MAX];
        return mxk_sdk_error(
            err, MXK_ERR_SHAPE,
            "argument 'label': %s has %llu elements but data %s has %llu softmax "
            "rows",
            mxk_sdk_shape_format(&lt->shape, a, sizeof a), (unsigned long long)ncount,
            mxk_sdk_shape_format(&yt->shape, b, sizeof b), (unsigned long long)nlab);
    }
    double valid = 1.0;
    if (p->normalization == SMO_BATCH) {
        valid = (double)ncount;
    } else if (p->normalization == SMO_VALID) {
        size_t cnt = 0;
        for (size_t i = 0; i < ncount; i++)
            cnt += !mxk_loss_ignored(lab[i], p->ignore_label);
        valid = cnt == 0 ? 1.0 : (double)cnt;
    }
    double div = valid;
    if (p->multi_output && p->normalization == SMO_NULL)
        div = (double)v.inner;
    float scale = cb_norm_f32(p->grad_scale / div);
    float a = p->multi_output ? 0.0f : (float)p->smooth_alpha;
    float off = v.k > 1 ? a / (float)(v.k - 1) : 0.0f; /* smoothing of the other classes */
    for (size_t o = 0; o < v.outer; o++) {
        for (size_t r = 0; r < v.inner; r++) {
            size_t li = o * v.inner + r, base = o * v.k * v.inner + r, st = v.inner;
            int ignore = p->use_ignore && mxk_loss_ignored(lab[li], p->ignore_label);
            int64_t cls = mxk_loss_class(lab[li], v.k);
            for (size_t j = 0; j < v.k; j++) {
                size_t i = base + j * st;
                float val = mxk_loss_softmax_grad(y[i], (int64_t)j == cls, ignore, a, off, scale);
                mxk_sdk_assign_f32(&g[i], dy ? val * dy[i] : val, rq);
            }
        }
    }
    return MXK_OK;
}

/** Registers SoftmaxOutput and its CPU kernel. */
mxk_status cb_register_softmax_output(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_def def;
    mxk_sdk_op_def_init(&def);
    def.name = "SoftmaxOutput";
    def.description = "Softmax forward; backward is the cross-entropy gradient w.r.t. the input.";
    def.attrs = smo_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(smo_attrs);
    def.arguments = smo_args;
    def.outputs = smo_outs;
    def.parse_param = smo_parse;
    def.free_param = cbt_param_free;
    def.infer_shape = smo_infer_shape;
    def.infer_type = smo_infer_type;
    def.backward_dependency = smo_backward_dependency;
    def.forward_inplace = cbt_inplace_00;
    def.backward_inplace = cbt_inplace_loss_grad;
    def.aliases = smo_aliases;
    mxk_op_kernel_def k;
    cb_kernel_init(&k, "SoftmaxOutput", smo_forward, smo_backward);
    return cb_register(reg, &def, &k, err);
}
