/*
 * onednn plugin: softmax, log_softmax and SoftmaxOutput kernels on oneDNN's
 * softmax v2 primitive (oneDNN 2.x, dnnl_softmax_v2_forward_desc_init /
 * dnnl_softmax_v2_backward_desc_init, algorithms dnnl_softmax_accurate and
 * dnnl_softmax_log).
 *
 * Semantics are the operators' (cpu-blas op_softmax.c and op_softmax_output.c;
 * upstream MXNet src/operator/nn/softmax-inl.h, log_softmax.cc,
 * src/operator/softmax_output-inl.h); the mapping follows MXNet 1.9.1's
 * src/operator/nn/mkldnn/mkldnn_softmax.cc, mkldnn_log_softmax.cc and
 * mkldnn_softmax_output.cc. Every tensor is viewed as (outer, k, inner) around
 * the softmax axis ((outer, k) when inner is 1), float32, plain layout.
 *   softmax / log_softmax: along `axis` (negative counts from the end);
 *     backward from the output: softmax dx = y (dy - sum(dy y)), log_softmax
 *     dx = dy - exp(y) sum(dy) (oneDNN's backward). Forward and backward may run
 *     in place (the backward copies dy first when dx is the same array).
 *     Declined: temperature other than 1, use_length, dtype other than
 *     None / float32, and an axis with elements after it (inner > 1: oneDNN
 *     2.x has only reference code there, see sm_implemented).
 *   SoftmaxOutput: forward the softmax over axis 1 of (N, size/N) (default),
 *     the last axis (preserve_shape) or axis 1 of (n, k, rest) (multi_output);
 *     backward by a plain loop as cpu-blas: probability labels (the data's
 *     shape) give (y - label) grad_scale; class labels y - onehot (with
 *     smooth_alpha: 1 - a for the class, a/(k-1) elsewhere; not in
 *     multi_output), 0 for ignored rows with use_ignore, scaled by grad_scale /
 *     (1, the label count, or the non-ignored count; multi_output's null also
 *     by rest); labels outside [0, k) select no class; the label's gradient is 0.
 *     Declined: out_grad=True, data of more than 2 dims in the default mode
 *     (upstream's flat label view), class labels of another count than the rows,
 *     multi_output with more than 2 dims (inner > 1, as for softmax).
 * Every request is WRITE or INPLACE (the host emulates ADD); NULL writes nothing.
 */
#include "dn_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/** softmax / log_softmax attributes as this kernel needs them. Owned by the host; read only. */
typedef struct dn_sm_param {
    int32_t log;       /**< log_softmax */
    int32_t supported; /**< 0: declined (temperature, use_length, dtype) */
    int64_t axis;
} dn_sm_param;

/** SoftmaxOutput attributes (MXNet 1.9.1 SoftmaxOutputParam). Owned by the host; read only. */
typedef struct dn_smo_param {
    double grad_scale, ignore_label, smooth_alpha;
    int32_t multi_output, use_ignore, preserve_shape, out_grad;
    int32_t normalization; /**< 0 null, 1 batch, 2 valid */
} dn_smo_param;

/** The (outer, k, inner) view of a tensor around the softmax axis. */
typedef struct dn_sm_view {
    int64_t outer, k, inner;
} dn_sm_view;

/**
 * Per-node state: the view, its descriptor, the forward primitive descriptor
 * (the backward's hint) and primitives (the backward made at first use). Used by
 * one call at a time.
 */
typedef struct dn_sm_state {
    dn_sm_view v;
    int64_t n; /**< elements */
    dnnl_alg_kind_t alg;
    dnnl_memory_desc_t md;
    dnnl_primitive_desc_t fwd_pd;
    dnnl_primitive_t fwd, bwd;
} dn_sm_state;

/**
 * softmax / log_softmax attributes (MXNet 1.9.1 SoftmaxParam; `log` selects the
 * operator). Errors: the mxk_sdk_attr_* readers'; MXK_ERR_OUT_OF_MEMORY.
 */
static mxk_status sm_parse_common(const mxk_attrs *attrs, int32_t log, void **out,
                                  mxk_error_sink *err) {
    dn_sm_param p = {.log = log};
    int32_t dtype = 0, use_length = 0;
    double t = 1.0;
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "axis", &p.axis, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "dtype", "None|float16|float32|float64", &dtype, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "use_length", &use_length, err));
    if (mxk_sdk_attr_is_set(attrs, "temperature"))
        MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "temperature", &t, err));
    p.supported = t == 1.0 && !use_length && (dtype == 0 || dtype == 2);
    return dn_param_dup(&p, sizeof p, out, err);
}

/** parse_param of softmax. */
static mxk_status sm_parse(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return sm_parse_common(a, 0, o, e);
}

/** parse_param of log_softmax. */
static mxk_status lsm_parse(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return sm_parse_common(a, 1, o, e);
}

/**
 * SoftmaxOutput's attributes. Errors: the mxk_sdk_attr_* readers';
 * MXK_ERR_OUT_OF_MEMORY.
 */
static mxk_status smo_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    dn_smo_param p;
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "grad_scale", &p.grad_scale, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "ignore_label", &p.ignore_label, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "smooth_alpha", &p.smooth_alpha, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "multi_output", &p.multi_output, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "use_ignore", &p.use_ignore, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "preserve_shape", &p.preserve_shape, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "out_grad", &p.out_grad, err));
    MXK_SDK_CHECK(
        mxk_sdk_attr_enum(attrs, "normalization", "null|batch|valid", &p.normalization, err));
    return dn_param_dup(&p, sizeof p, out, err);
}

/** The view of shape s around axis `axis` (in range). */
static dn_sm_view sm_view_at(const mxk_shape *s, int32_t axis) {
    dn_sm_view v = {1, s->dims[axis], 1};
    for (int32_t i = 0; i < axis; i++)
        v.outer *= s->dims[i];
    for (int32_t i = axis + 1; i < s->ndim; i++)
        v.inner *= s->dims[i];
    return v;
}

/**
 * The view of softmax / log_softmax over data shape s; 0 when declined (the
 * configuration, the axis out of range, empty data).
 */
static int sm_view(const dn_sm_param *p, const mxk_shape *s, dn_sm_view *v) {
    int64_t axis = p->axis < 0 ? p->axis + s->ndim : p->axis;
    if (!p->supported || axis < 0 || axis >= s->ndim || dn_shape_size(s) < 1)
        return 0;
    *v = sm_view_at(s, (int32_t)axis);
    return 1;
}

/**
 * The view of SoftmaxOutput's softmax over data shape s (see the file comment);
 * 0 when declined.
 */
static int smo_view(const dn_smo_param *p, const mxk_shape *s, dn_sm_view *v) {
    if (p->out_grad || s->ndim < 2 || dn_shape_size(s) < 1 ||
        (s->ndim > 2 && !p->multi_output && !p->preserve_shape))
        return 0;
    *v = sm_view_at(s, p->multi_output ? 1 : s->ndim - 1);
    return 1;
}

/**
 * Makes the forward primitive descriptor of algorithm `alg` over view v (its
 * descriptor into md). Errors: dn_md_plain's, dn_check's.
 */
static mxk_status sm_fwd_pd(dnnl_alg_kind_t alg, const dn_sm_view *v, dnnl_memory_desc_t *md,
                            dnnl_primitive_desc_t *pd, mxk_error_sink *err) {
    const dnnl_dim_t dims[3] = {v->outer, v->k, v->inner};
    dnnl_softmax_v2_desc_t d;
    MXK_SDK_CHECK(dn_md_plain(md, v->inner == 1 ? 2 : 3, dims, err));
    DN_CHECK(dnnl_softmax_v2_forward_desc_init(&d, dnnl_forward_training, alg, md, md, 1),
             "softmax forward descriptor", err);
    DN_CHECK(dn_pd_create(pd, &d, NULL), "softmax forward primitive descriptor", err);
    return MXK_OK;
}

/**
 * Makes the backward primitive descriptor of algorithm alg over md, with forward
 * descriptor fwd_pd as hint. Errors: dn_check's.
 */
static mxk_status sm_bwd_pd(dnnl_alg_kind_t alg, const dnnl_memory_desc_t *md,
                            const_dnnl_primitive_desc_t fwd_pd, dnnl_primitive_desc_t *pd,
                            mxk_error_sink *err) {
    dnnl_softmax_v2_desc_t d;
    DN_CHECK(dnnl_softmax_v2_backward_desc_init(&d, alg, md, md, md, 1),
             "softmax backward descriptor", err);
    DN_CHECK(dn_pd_create(pd, &d, fwd_pd), "softmax backward primitive descriptor", err);
    return MXK_OK;
}

/**
 * 1 when oneDNN has JIT forward and backward implementations of algorithm alg
 * over view v. oneDNN 2.x has them for the innermost axis only; its reference
 * code for the others ran 9x slower than cpu-blas (softmax over axis 1 of
 * (32,64,28,28): 440 ms against 51 ms), so those are declined.
 */
static int sm_implemented(dnnl_alg_kind_t alg, const dn_sm_view *v) {
    dnnl_memory_desc_t md;
    dnnl_primitive_desc_t fwd = NULL, bwd = NULL;
    int ok = sm_fwd_pd(alg, v, &md, &fwd, NULL) == MXK_OK && !dn_pd_is_ref(fwd) &&
             sm_bwd_pd(alg, &md, fwd, &bwd, NULL) == MXK_OK && !dn_pd_is_ref(bwd);
    dnnl_primitive_desc_destroy(bwd);
    dnnl_primitive_desc_destroy(fwd);
    return ok;
}

/** Accepts a supported softmax / log_softmax configuration on float32 data. */
static int32_t sm_supports(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                           uint32_t num_in) {
    const dn_sm_param *p = param;
    dn_sm_view v;
    return num_in == 1 && in_types[0] == MXK_FLOAT32 && sm_view(p, &in_shapes[0], &v) &&
           sm_implemented(p->log ? dnnl_softmax_log : dnnl_softmax_accurate, &v);
}

/**
 * Accepts a supported SoftmaxOutput configuration on float32 data and label,
 * the label of the data's shape (probabilities) or of one class per row.
 */
static int32_t smo_supports(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                            uint32_t num_in) {
    dn_sm_view v;
    if (num_in != 2 || in_types[0] != MXK_FLOAT32 || in_types[1] != MXK_FLOAT32 ||
        !smo_view(param, &in_shapes[0], &v))
        return 0;
    int64_t nlab = dn_shape_size(&in_shapes[1]);
    return (mxk_sdk_shape_equal(&in_shapes[0], &in_shapes[1]) || nlab == v.outer * v.inner) &&
           sm_implemented(dnnl_softmax_accurate, &v);
}

/** Frees a state of sm_state_new (NULL allowed). */
static void sm_destroy_state(void *state) {
    dn_sm_state *s = state;
    if (s == NULL)
        return;
    dnnl_primitive_destroy(s->bwd);
    dnnl_primitive_destroy(s->fwd);
    dnnl_primitive_desc_destroy(s->fwd_pd);
    free(s);
}

/**
 * Creates a state for algorithm alg over view v (the forward primitive).
 * Errors: MXK_ERR_UNSUPPORTED "oneDNN softmax: configuration not supported for
 * this shape" when `ok` is 0, MXK_ERR_OUT_OF_MEMORY, sm_fwd_pd's, dn_primitive's.
 */
static mxk_status sm_state_new(int ok, dnnl_alg_kind_t alg, const dn_sm_view *v, void **state,
                               mxk_error_sink *err) {
    if (!ok)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED,
                             "oneDNN softmax: configuration not supported for this shape");
    dn_sm_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "oneDNN softmax: out of memory");
    s->v = *v;
    s->n = v->outer * v->k * v->inner;
    s->alg = alg;
    mxk_status rc = sm_fwd_pd(alg, v, &s->md, &s->fwd_pd, err);
    if (rc == MXK_OK)
        rc = dn_primitive(&s->fwd, s->fwd_pd, "softmax forward primitive", err);
    if (rc != MXK_OK) {
        sm_destroy_state(s);
        return rc;
    }
    *state = s;
    return MXK_OK;
}

/** create_state of softmax / log_softmax. Errors: sm_state_new's. */
static mxk_status sm_create_state(const void *param, int32_t dev_type, int32_t dev_id,
                                  const mxk_shape *in_shapes, const int32_t *in_types,
                                  uint32_t num_in, void **state, mxk_error_sink *err) {
    const dn_sm_param *p = param;
    dn_sm_view v;
    return sm_state_new(num_in == 1 && sm_view(p, &in_shapes[0], &v),
                        p->log ? dnnl_softmax_log : dnnl_softmax_accurate, &v, state, err);
}

/** create_state of SoftmaxOutput. Errors: sm_state_new's. */
static mxk_status smo_create_state(const void *param, int32_t dev_type, int32_t dev_id,
                                   const mxk_shape *in_shapes, const int32_t *in_types,
                                   uint32_t num_in, void **state, mxk_error_sink *err) {
    dn_sm_view v;
    return sm_state_new(num_in == 2 && smo_view(param, &in_shapes[0], &v), dnnl_softmax_accurate,
                        &v, state, err);
}

/**
 * Forward of both kernels: y = softmax (or log-softmax) of x (WRITE or
 * INPLACE; nothing for NULL). Errors: dn_check_tensor's, dn_execute's.
 */
static mxk_status sm_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    dn_sm_state *s = state;
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(dn_check_tensor(args->in_data[0], s->n, "softmax", "argument 'data'", err));
    MXK_SDK_CHECK(dn_check_tensor(args->out_data[0], s->n, "softmax", "output 'output'", err));
    dn_arg a[] = {{DNNL_ARG_SRC, &s->md, args->in_data[0]->data},
                  {DNNL_ARG_DST, &s->md, args->out_data[0]->data}};
    return dn_execute(ctx, s->fwd, 2, a, err);
}

/** Makes the backward primitive (once), with the forward's as hint. Errors: dn_check's. */
static mxk_status sm_make_bwd(dn_sm_state *s, mxk_error_sink *err) {
    if (s->bwd != NULL)
        return MXK_OK;
    dnnl_primitive_desc_t pd = NULL;
    MXK_SDK_CHECK(sm_bwd_pd(s->alg, &s->md, s->fwd_pd, &pd, err));
    mxk_status rc = dn_primitive(&s->bwd, pd, "softmax backward primitive", err);
    dnnl_primitive_desc_destroy(pd);
    return rc;
}

/**
 * Backward of softmax / log_softmax: dx from dy and y (WRITE or INPLACE; dy
 * copied to scratch first when dx is the same array). Errors:
 * dn_check_tensor's, dn_scratch's, dn_check's, dn_execute's.
 */
static mxk_status sm_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    dn_sm_state *s = state;
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(dn_check_tensor(args->out_grad[0], s->n, "softmax", "gradient of 'output'", err));
    MXK_SDK_CHECK(dn_check_tensor(args->out_data[0], s->n, "softmax", "output 'output'", err));
    MXK_SDK_CHECK(dn_check_tensor(args->in_grad[0], s->n, "softmax", "gradient of 'data'", err));
    MXK_SDK_CHECK(sm_make_bwd(s, err));
    void *dy = args->out_grad[0]->data, *dx = args->in_grad[0]->data;
    if (dx == dy) {
        size_t bytes = (size_t)s->n * sizeof(float);
        if ((dy = dn_scratch(0, bytes, err)) == NULL)
            return MXK_ERR_OUT_OF_MEMORY;
        memcpy(dy, dx, bytes);
    }
    dn_arg a[] = {{DNNL_ARG_DST, &s->md, args->out_data[0]->data},
                  {DNNL_ARG_DIFF_DST, &s->md, dy},
                  {DNNL_ARG_DIFF_SRC, &s->md, dx}};
    return dn_execute(ctx, s->bwd, 3, a, err);
}

/** Class index of a float label (truncated toward zero); -1 (no class) outside [0, k) or NaN. */
static int64_t smo_class(float label, int64_t k) {
    if (!(label > -1.0f && label < (float)k))
        return -1;
    return (int64_t)label;
}

/** 1 when a label equals ignore_label after both are truncated to integers (as upstream). */
static int smo_ignored(float label, double ignore) {
    if (!(label > -2147483648.0f && label < 2147483648.0f))
        return 0;
    return (int64_t)label == (int64_t)ignore;
}

/**
 * The factor of class-label gradients: grad_scale / the normalisation count
 * (null 1, or rest in multi_output; batch the label count; valid the labels
 * not equal to ignore_label, at least 1).
 */
static float smo_scale(const dn_smo_param *p, const dn_sm_view *v, const float *lab, int64_t n) {
    double div = 1.0;
    if (p->normalization == 1) {
        div = (double)n;
    } else if (p->normalization == 2) {
        int64_t cnt = 0;
        for (int64_t i = 0; i < n; i++)
            cnt += !smo_ignored(lab[i], p->ignore_label);
        div = cnt == 0 ? 1.0 : (double)cnt;
    } else if (p->multi_output) {
        div = (double)v->inner;
    }
    return (float)(p->grad_scale / div);
}

/**
 * Backward of SoftmaxOutput (see the file comment): the data's gradient from the
 * output and the label, element by element (in place when it is the output's
 * array); the label's gradient 0. Errors: dn_check_tensor's.
 */
static mxk_status smo_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    const dn_smo_param *p = param;
    const dn_sm_state *s = state;
    const dn_sm_view *v = &s->v;
    const mxk_op_req *req = args->req;
    if (req[1] != MXK_REQ_NULL) {
        const mxk_tensor *gl = args->in_grad[1];
        MXK_SDK_CHECK(
            dn_check_tensor(gl, dn_shape_size(&gl->shape), "softmax", "gradient of 'label'", err));
        memset(gl->data, 0, (size_t)dn_shape_size(&gl->shape) * sizeof(float));
    }
    if (req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *lt = args->in_data[1];
    MXK_SDK_CHECK(dn_check_tensor(args->out_data[0], s->n, "softmax", "output 'output'", err));
    MXK_SDK_CHECK(dn_check_tensor(args->in_grad[0], s->n, "softmax", "gradient of 'data'", err));
    MXK_SDK_CHECK(
        dn_check_tensor(lt, dn_shape_size(&lt->shape), "softmax", "argument 'label'", err));
    const float *y = args->out_data[0]->data, *lab = lt->data;
    float *g = args->in_grad[0]->data;
    const int64_t nlab = dn_shape_size(&lt->shape);
    if (mxk_sdk_shape_equal(&lt->shape, &args->out_data[0]->shape)) { /* probabilities */
        const float sc = (float)p->grad_scale;
        for (int64_t i = 0; i < s->n; i++)
            g[i] = (y[i] - lab[i]) * sc;
        return MXK_OK;
    }
    if (nlab != v->outer * v->inner)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "oneDNN softmax: argument 'label' has %lld elements, expected %lld",
                             (long long)nlab, (long long)(v->outer * v->inner));
    const float scale = smo_scale(p, v, lab, nlab);
    const float a = p->multi_output ? 0.0f : (float)p->smooth_alpha;
    const float off = v->k > 1 ? a / (float)(v->k - 1) : 0.0f;
    for (int64_t o = 0; o < v->outer; o++)
        for (int64_t r = 0; r < v->inner; r++) {
            const int64_t li = o * v->inner + r, base = o * v->k * v->inner + r;
            const int ignore = p->use_ignore && smo_ignored(lab[li], p->ignore_label);
            const int64_t cls = smo_class(lab[li], v->k);
            for (int64_t j = 0; j < v->k; j++) {
                const int64_t i = base + j * v->inner;
                const float t = j == cls ? 1.0f - a : off;
                g[i] = ignore ? 0.0f : (y[i] - t) * scale;
            }
        }
    return MXK_OK;
}

/**
 * One kernel of this file: operator, callbacks that differ, and the cross-check
 * atol (rtol is 1e-5 for all: exp and the row sums in float32 where cpu-blas
 * sums in double, a few ulps apart).
 */
typedef struct dn_sm_kernel {
    const char *op;
    mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *);
    int32_t (*supports)(const void *, const mxk_shape *, const int32_t *, uint32_t);
    mxk_status (*create)(const void *, int32_t, int32_t, const mxk_shape *, const int32_t *,
                         uint32_t, void **, mxk_error_sink *);
    mxk_status (*backward)(const mxk_op_ctx *, const void *, void *, const mxk_backward_args *,
                           mxk_error_sink *);
    double atol;
} dn_sm_kernel;

/** Registers the softmax, log_softmax and SoftmaxOutput kernels (onednn.h). Errors:
 * dn_register_kernel's. */
mxk_status dn_register_softmax(mxk_registrar *reg, mxk_error_sink *err) {
    /* probabilities in [0, 1]: 1e-6 absolute; log-probabilities near 0 (log of a p
     * close to 1) differ by a few 1e-6 absolute (measured up to 3.8e-6) */
    static const dn_sm_kernel kernels[] = {
        {"softmax", sm_parse, sm_supports, sm_create_state, sm_backward, 1e-6},
        {"log_softmax", lsm_parse, sm_supports, sm_create_state, sm_backward, 1e-5},
        {"SoftmaxOutput", smo_parse, smo_supports, smo_create_state, smo_backward, 1e-6},
    };
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
        mxk_op_kernel_def k;
        mxk_sdk_kernel_def_init(&k);
        k.op_name = kernels[i].op;
        k.parse_param = kernels[i].parse;
        k.free_param = dn_param_free;
        k.supports = kernels[i].supports;
        k.create_state = kernels[i].create;
        k.destroy_state = sm_destroy_state;
        k.forward = sm_forward;
        k.backward = kernels[i].backward;
        k.crosscheck_rtol = 1e-5;
        k.crosscheck_atol = kernels[i].atol;
        MXK_SDK_CHECK(dn_register_kernel(reg, &k, err));
    }
    return MXK_OK;
}
