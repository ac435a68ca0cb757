/*
 * cpu-blas plugin: LRN (local response normalisation across channels).
 *
 * Semantics: MXNet src/operator/nn/lrn-inl.h, lrn.cc. Data (N, C, H, W);
 * outputs output and tmp_norm (visible 1), both of the data shape. n = nsize,
 * window [c - h, c + h] with h = (n-1)/2, clipped to the channels:
 *   norm = knorm + (alpha / n) * sum_window x^2;   y = x * norm^-beta.
 * Backward: dx = dy norm^-beta - (2 beta alpha / n) x sum_window(dy x norm^(-beta-1)).
 * It reads out_grad, data and tmp_norm; one image of dy x norm^(-beta-1) is kept
 * in temp space (backward_resources).
 * An even nsize is accepted as MXNet's CPU (MKLDNN) LRN accepts it: the window
 * then has n - 1 channels while the scale stays alpha / n (its reference path,
 * lrn-inl.h, refuses even sizes: "LRN only supports odd values for local_size").
 */
#include <math.h>
#include <string.h>

#include "cb_tensor.h"

/** Parsed attributes of LRN. */
typedef struct lrn_param {
    double alpha, beta, knorm;
    int64_t nsize;
} lrn_param;

static const char *const lrn_args[] = {"data", NULL};
static const char *const lrn_outs[] = {"output", "tmp_norm", NULL};

/** Attribute schema (MXNet 1.9.1 LRNParam). */
static const mxk_attr_def lrn_attrs[] = {
    MXK_SDK_ATTR("alpha", MXK_ATTR_FLOAT, 0, "0.0001", NULL, "Variance scaling."),
    MXK_SDK_ATTR("beta", MXK_ATTR_FLOAT, 0, "0.75", NULL, "Power."),
    MXK_SDK_ATTR("knorm", MXK_ATTR_FLOAT, 0, "2", NULL, "Offset k."),
    MXK_SDK_ATTR("nsize", MXK_ATTR_INT, 1, NULL, NULL, "Channels in the window."),
};

/** Parses the attributes; nsize must be >= 1. */
static mxk_status lrn_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    lrn_param p;
    MXK_SDK_CHECK(mxk_sdk_attr_float_finite(attrs, "alpha", &p.alpha, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float_finite(attrs, "beta", &p.beta, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float_finite(attrs, "knorm", &p.knorm, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "nsize", 1, INT32_MAX, &p.nsize, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** Both outputs have the (4-D) data shape. */
static mxk_status lrn_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                  uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                  mxk_error_sink *err) {
    if (num_in != 1 || num_out != 2)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "LRN expects 1 argument and 2 outputs");
    MXK_SDK_CHECK(mxk_sdk_infer_shape_same(in, 1, lrn_args, out, 2, lrn_outs, err));
    if (in[0].ndim != 0 && in[0].ndim != 4) {
        char s[MXK_SDK_SHAPE_STR_MAX];
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "argument 'data': LRN needs 4-D data, got %s",
                             mxk_sdk_shape_format(&in[0], s, sizeof s));
    }
    return MXK_OK;
}

/** All float32. */
static mxk_status lrn_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                 uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in, num_in, lrn_args, out, num_out, lrn_outs,
                                      aux, num_aux, err);
}

/** Backward reads out_grad, data and tmp_norm. */
static void lrn_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                    uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                    uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    need_in_data[0] = 1;
    need_out_data[1] = 1;
}

/** Backward temp space: one image (C*H*W floats). */
static mxk_status lrn_bwd_resources(const void *param, const mxk_shape *in_shapes, uint32_t num_in,
                                    mxk_resource_request *reqs, uint32_t *num,
                                    mxk_error_sink *err) {
    uint32_t cap = *num, n = 0;
    if (num_in == 1 && in_shapes[0].ndim == 4 && mxk_sdk_shape_is_known(&in_shapes[0]))
        mxk_sdk_resource_add(reqs, cap, &n, MXK_RESOURCE_TEMP_SPACE,
                             mxk_sdk_shape_prod(&in_shapes[0], 1, 4) * sizeof(float));
    *num = n;
    return MXK_OK;
}

/**
 * Forward: the norm of each (n, c) row is accumulated in tmp_norm (or, when
 * tmp_norm is not requested, in the output, then turned into y in place).
 */
static mxk_status lrn_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const lrn_param *p = param;
    MXK_SDK_CHECK(cb_check_forward(args, 1, 2, lrn_args, lrn_outs, lrn_infer_shape, param, err));
    const mxk_op_req *req = args->req;
    if (req[0] == MXK_REQ_NULL && req[1] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_shape *d = &args->in_data[0]->shape;
    const int64_t N = d->dims[0], C = d->dims[1], S = d->dims[2] * d->dims[3];
    const int64_t half = (p->nsize - 1) / 2;
    const float a = (float)(p->alpha / (double)p->nsize), k = (float)p->knorm;
    const float *x = cb_f32(args->in_data[0]);
    float *y = req[0] != MXK_REQ_NULL ? cb_f32(args->out_data[0]) : NULL;
    float *tn = req[1] != MXK_REQ_NULL ? cb_f32(args->out_data[1]) : NULL;
    int y_is_scratch = tn == NULL && req[0] != MXK_REQ_ADD;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            const int64_t off = (n * C + c) * S;
            int64_t c0 = c - half < 0 ? 0 : c - half, c1 = c + half >= C ? C - 1 : c + half;
            if (tn != NULL || y_is_scratch) {
                float *acc = tn != NULL ? tn + off : y + off;
                int add = tn != NULL && req[1] == MXK_REQ_ADD;
                /* the norm must be exact even when tmp_norm is accumulated: use y as
                 * scratch only when tmp_norm is written, else compute per element */
                if (!add) {
                    for (int64_t i = 0; i < S; i++)
                        acc[i] = 0.0f;
                    for (int64_t cc = c0; cc <= c1; cc++) {
                        const float *xp = x + (n * C + cc) * S;
                        for (int64_t i = 0; i < S; i++)
                            acc[i] += xp[i] * xp[i];
                    }
                    for (int64_t i = 0; i < S; i++)
                        acc[i] = k + a * acc[i];
                    if (y != NULL) {
                        const float *xp = x + off;
                        float *yp = y + off;
                        float nb = (float)-p->beta;
                        if (req[0] == MXK_REQ_ADD)
                            for (int64_t i = 0; i < S; i++)
                                yp[i] += xp[i] * powf(acc[i], nb);
                        else
                            for (int64_t i = 0; i < S; i++)
                                yp[i] = xp[i] * powf(acc[i], nb);
                    }
                    continue;
                }
            }
            /* general path (ADD on tmp_norm, or ADD on y without tmp_norm) */
            for (int64_t i = 0; i < S; i++) {
                float s = 0.0f;
                for (int64_t cc = c0; cc <= c1; cc++) {
                    float v = x[(n * C + cc) * S + i];
                    s += v * v;
                }
                float nm = k + a * s;
                if (tn != NULL)
                    mxk_sdk_assign_f32(&tn[off + i], nm, req[1]);
                if (y != NULL)
                    mxk_sdk_assign_f32(&y[off + i], x[off + i] * powf(nm, (float)-p->beta), req[0]);
            }
        }
    return MXK_OK;
}

/** Backward (see the file comment). */
static mxk_status lrn_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    const lrn_param *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, 1, 2, 1, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(cb_check_tensor(args->out_grad[0], "gradient of 'output'", err));
    MXK_SDK_CHECK(cb_check_tensor(args->in_data[0], "argument 'data'", err));
    MXK_SDK_CHECK(cb_check_tensor(args->out_data[1], "output 'tmp_norm'", err));
    const mxk_shape *d = &args->in_data[0]->shape;
    if (d->ndim != 4 || !mxk_sdk_shape_equal(&args->out_grad[0]->shape, d) ||
        !mxk_sdk_shape_equal(&args->out_data[1]->shape, d))
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "LRN backward: data, out_grad and tmp_norm "
                             "must have one 4-D shape");
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req, d, "data", err));
    const int64_t N = d->dims[0], C = d->dims[1], S = d->dims[2] * d->dims[3];
    const int64_t half = (p->nsize - 1) / 2;
    void *ws = NULL;
    MXK_SDK_CHECK(mxk_sdk_host()->temp_space(ctx, (uint64_t)(C * S) * sizeof(float), &ws, err));
    float *r = ws;
    const float *x = cb_f32(args->in_data[0]), *dy = cb_f32(args->out_grad[0]),
                *nm = cb_f32(args->out_data[1]);
    float *dx = cb_f32(args->in_grad[0]);
    const float nb = (float)-p->beta, nb1 = (float)(-p->beta - 1.0);
    const float coef = (float)(2.0 * p->beta * p->alpha / (double)p->nsize);
    for (int64_t n = 0; n < N; n++) {
        const int64_t base = n * C * S;
        for (int64_t i = 0; i < C * S; i++)
            r[i] = dy[base + i] * x[base + i] * powf(nm[base + i], nb1);
        for (int64_t c = 0; c < C; c++) {
            int64_t c0 = c - half < 0 ? 0 : c - half, c1 = c + half >= C ? C - 1 : c + half;
            const int64_t off = base + c * S;
            for (int64_t i = 0; i < S; i++) {
                float s = 0.0f;
                for (int64_t cc = c0; cc <= c1; cc++)
                    s += r[cc * S + i];
                float g = dy[off + i] * powf(nm[off + i], nb) - coef * x[off + i] * s;
                mxk_sdk_assign_f32(&dx[off + i], g, req);
            }
        }
    }
    return MXK_OK;
}

/** Registers LRN and its CPU kernel. */
mxk_status cb_register_lrn(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_def def;
    mxk_sdk_op_def_init(&def);
    def.name = "LRN";
    def.description = "Local response normalisation across channels.";
    def.attrs = lrn_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(lrn_attrs);
    def.arguments = lrn_args;
    def.outputs = lrn_outs;
    def.parse_param = lrn_parse;
    def.free_param = cbt_param_free;
    def.num_visible_outputs = cbt_num_visible_1;
    def.infer_shape = lrn_infer_shape;
    def.infer_type = lrn_infer_type;
    def.backward_dependency = lrn_backward_dependency;
    def.backward_resources = lrn_bwd_resources;
    mxk_op_kernel_def k;
    cb_kernel_init(&k, "LRN", lrn_forward, lrn_backward);
    return cb_register(reg, &def, &k, err);
}
